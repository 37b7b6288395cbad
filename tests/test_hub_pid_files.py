"""The hub signals only its own processes (tools/hub_processes.py, docs/hub.md "When something breaks").

A hub killed outright leaves pid files and its database behind; once the system
reuses those pids, the processes that have them are strangers. Here real
bystander processes, which note every signal they receive, take those pids'
place: one whose command line could be the hub's but that started after the
file was written (a reused pid), and one older than the file with another
command line. `make hub-stop` and a new hub's start must leave them alone. The
rest is what `make hub` does when make itself is told to stop, and its exit
status when it refuses to start.
"""

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from tools import learner_repo
from tools.class_hub import CONFIG, DATABASE, HUB_PID_FILE, PID_FILE, PROXY, PROXY_PID_FILE, Hub, recorded
from tools.hub_client import Learner
from tools.hub_processes import (
    MAKE_STOPS_ON,
    ParentWatch,
    caught_signals,
    forget_server_pids,
    recorded_process,
    running,
)
from tools.local_servers import free_port, wait_until

REPO = Path(__file__).resolve().parent.parent
PASSWORD = "pid-files-password"
LINK = r"/hub/user-redirect/git-pull\?"
# What a bystander notes: every signal a hub or hub-stop could send it, but SIGKILL, which ends it.
NOTED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
BYSTANDER = textwrap.dedent(f"""
    import signal, sys, time
    def note(number, frame):
        with open(sys.argv[1], "a") as log:
            log.write(signal.Signals(number).name + "\\n")
    for number in {[int(number) for number in NOTED]}:
        signal.signal(number, note)
    print("ready", flush=True)
    while True:
        time.sleep(60)
""")


class Bystander:
    """A process that is none of the hub's: it runs ``arguments`` after its script, in ``folder``, and notes signals."""

    def __init__(self, tmp_path, arguments, folder):
        script = tmp_path / "bystander.py"
        script.write_text(BYSTANDER)
        self.log = tmp_path / f"signals-{len(list(tmp_path.glob('signals-*')))}.txt"
        self.log.touch()
        self.popen = subprocess.Popen([sys.executable, str(script), str(self.log), *map(str, arguments)],
                                      cwd=folder, stdout=subprocess.PIPE, text=True)
        assert self.popen.stdout.readline() == "ready\n"  # its handlers are in place
        self.pid = self.popen.pid
        self.started = psutil.Process(self.pid).create_time()

    def record_in(self, pid_file, before=False):
        """Write this pid into ``pid_file``; ``before``: dated before this process started (its pid reused)."""
        pid_file.write_text(f"{self.pid}\n")
        if before:
            os.utime(pid_file, (self.started - 5, self.started - 5))
        else:
            assert pid_file.stat().st_mtime >= self.started

    def untouched(self):
        """Still running, and no signal noted (signal 0, which only asks whether a pid exists, is not one)."""
        return self.popen.poll() is None and self.log.read_text() == ""

    def end(self):
        self.popen.kill()
        self.popen.wait()
        self.popen.stdout.close()


@pytest.fixture
def bystanders(tmp_path):
    started = []

    def start(arguments, folder):
        started.append(Bystander(tmp_path, arguments, folder))
        return started[-1]

    yield start
    for bystander in started:
        bystander.end()


# ---- recorded_process: the one test of a pid file ----

def test_a_pid_file_counts_when_its_process_has_the_command_line_the_folder_and_is_older_than_the_file(
        tmp_path, bystanders):
    state = tmp_path / "state"
    state.mkdir()
    hub_like = bystanders(["-f", CONFIG], state)  # JupyterHub's arguments, in the state folder
    pid_file = state / HUB_PID_FILE
    hub_like.record_in(pid_file)
    assert recorded_process(pid_file, ["-f", CONFIG], state).pid == hub_like.pid
    assert recorded(state, HUB_PID_FILE).pid == hub_like.pid
    # Each condition alone turns it away:
    hub_like.record_in(pid_file, before=True)  # the file is older than the process: a reused pid
    assert recorded_process(pid_file, ["-f", CONFIG], state) is None
    hub_like.record_in(pid_file)
    assert recorded_process(pid_file, ["-f", CONFIG], tmp_path) is None  # another folder
    assert recorded_process(pid_file, ["-f", "/elsewhere/hub/jupyterhub_config.py"], state) is None
    assert recorded_process(pid_file, ["-f", str(CONFIG)[:-3]], state) is None  # a part of an argument is not it
    assert recorded_process(pid_file, [CONFIG, "-f"], state) is None  # nor the arguments out of order
    assert hub_like.untouched()


def test_a_pid_file_without_a_live_process_of_that_pid_counts_for_nothing(tmp_path, bystanders):
    pid_file = tmp_path / "some.pid"
    assert recorded_process(pid_file, ["x"], tmp_path) is None  # no file
    for text in ("", "not a pid\n", "-1\n"):
        pid_file.write_text(text)
        assert recorded_process(pid_file, ["x"], tmp_path) is None, text
    gone = bystanders(["x"], tmp_path)
    gone.record_in(pid_file)
    assert recorded_process(pid_file, ["x"], tmp_path).pid == gone.pid
    gone.popen.kill()  # ended, not yet reaped: a zombie
    wait_until(lambda: psutil.Process(gone.pid).status() == psutil.STATUS_ZOMBIE, 10, "no zombie")
    assert recorded_process(pid_file, ["x"], tmp_path) is None
    gone.popen.wait()
    assert recorded_process(pid_file, ["x"], tmp_path) is None


# ---- make hub-stop and a hub's start, with strangers in every pid file and in the database ----

def plant(state, tmp_path, bystanders, reused):
    """A bystander in each of the hub's pid files and in the learner's server state; returns them.

    ``reused``: each has the command line and folder of the process its file
    names, but started after the file was written. Otherwise each is older
    than its file but has another command line, one that holds "jupyterhub".
    """
    other = ["jupyterhub", "-f", "/elsewhere/hub/jupyterhub_config.py"]
    planted = {PID_FILE: bystanders(["-m", "tools.class_hub"] if reused else other, REPO),
               HUB_PID_FILE: bystanders(["-f", CONFIG] if reused else other, state),
               PROXY_PID_FILE: bystanders([PROXY] if reused else other, state)}
    for name, bystander in planted.items():
        bystander.record_in(state / name, before=reused)
    server = bystanders(["jupyterhub-singleuser"], state)
    with sqlite3.connect(state / DATABASE) as database:
        changed = database.execute("UPDATE spawners SET state = ? WHERE server_id IS NOT NULL",
                                   (json.dumps({"pid": server.pid, "kept": "yes"}),)).rowcount
    assert changed == 1  # the learner's server, which the database still lists as running
    planted["server"] = server
    return planted


def server_states(state):
    """The spawners' states the hub's database holds (only the learner's has one)."""
    with sqlite3.connect(state / DATABASE) as database:
        return [json.loads(text) for (text,) in database.execute("SELECT state FROM spawners") if text]


def test_hub_stop_and_a_new_hub_leave_processes_that_took_a_killed_hubs_pids_alone(tmp_path, bystanders):
    state = tmp_path / "hub"
    hub = Hub(state, free_port(), PASSWORD).wait_ready()
    try:
        Learner(hub.url, "kim", PASSWORD).login().start()
        hub.process.kill()  # as the instructor's: the hub's pid files and its database stay behind
        hub.process.wait()
    finally:
        hub.stop()
    assert {PROXY_PID_FILE, HUB_PID_FILE} <= {path.name for path in state.iterdir()}

    for reused in (True, False):
        planted = plant(state, tmp_path, bystanders, reused)
        stop = subprocess.run([sys.executable, "-m", "tools.class_hub", "--stop", "--state", str(state)],
                              cwd=REPO, capture_output=True, text=True, timeout=120)
        assert stop.stdout.strip() == f"No hub started from {state} is running.", stop
        assert [name for name, bystander in planted.items() if not bystander.untouched()] == []
        assert not (state / PROXY_PID_FILE).exists()
        assert [spawner for spawner in server_states(state) if spawner] == [{"kept": "yes"}]  # the pid alone went

    planted = plant(state, tmp_path, bystanders, reused=True)
    hub = Hub(state, free_port(), PASSWORD).wait_ready()
    try:
        learner = Learner(hub.url, "kim", PASSWORD).login().start()
        assert learner.api.get(f"{hub.url}/hub/api/users/kim", timeout=30).json()["servers"][""]["ready"]
    finally:
        hub.stop()
    log = hub.log_path.read_text()
    assert "Found proxy pid file" not in log
    # The old server found stopped at once, by its missing pid: not polled, waited for (120 s) and then stopped.
    assert "appears to have stopped while the Hub was down" in log and "does not appear to be running" not in log
    assert [name for name, bystander in planted.items() if not bystander.untouched()] == []


def test_forget_server_pids_makes_no_database_where_there_is_none(tmp_path):
    assert forget_server_pids(tmp_path / DATABASE) == []
    assert not (tmp_path / DATABASE).exists()  # none made


# ---- make hub, when make is told to stop, and when it refuses ----

def run_make(*arguments, env=(), **popen):
    """make, with settings of its own (under `make test`, the outer make's would reach it), in the background.

    A shell that runs a test in the background makes it ignore SIGINT, and a
    make that starts ignoring it never catches it: make gets the signals'
    default actions back, as in a terminal.
    """
    inherited = {name: value for name, value in os.environ.items() if name not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return subprocess.Popen(["make", "--no-print-directory", *arguments], text=True, start_new_session=True,
                            env={**inherited, "PYTHONPATH": str(REPO), **dict(env)},
                            preexec_fn=lambda: [signal.signal(sent, signal.SIG_DFL) for sent in MAKE_STOPS_ON],
                            **popen)


@pytest.fixture
def make_installed():
    if shutil.which("make") is None:
        pytest.skip("make is not installed")


@pytest.mark.usefixtures("make_installed")
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGHUP, signal.SIGKILL], ids=lambda sent: sent.name)
def test_a_command_under_make_notices_when_make_alone_is_told_to_stop_or_killed(tmp_path, sent):
    """ParentWatch under a real make, with a recipe that only watches (no hub): every stopping signal, quickly."""
    reason_file = tmp_path / "reason.txt"
    (tmp_path / "watch.py").write_text(textwrap.dedent(f"""
        import time
        from tools.hub_processes import ParentWatch
        watch = ParentWatch()
        print("watching", watch.make, flush=True)
        while not (reason := watch.ended()):
            time.sleep(0.05)
        open({str(reason_file)!r}, "w").write(reason)
    """))
    (tmp_path / "Makefile").write_text(f"watch:\n\t@exec {sys.executable} watch.py\n")
    make = run_make("-s", "watch", cwd=tmp_path, stdout=subprocess.PIPE)
    assert make.stdout.readline() == "watching True\n"
    (command,) = psutil.Process(make.pid).children()
    assert signal.SIGINT in caught_signals(make.pid)
    os.kill(make.pid, sent)  # make alone, not its process group
    make.wait(30)
    wait_until(lambda: not running(command), 30, "the recipe's command did not end")
    if sent == signal.SIGKILL:
        assert reason_file.read_text() == f"the process that started it (pid {make.pid}) has ended"
    else:
        assert reason_file.read_text() == f"make (pid {make.pid}) got {sent.name}"
        assert make.returncode == -sent  # make ended by that signal, once its command had ended


def test_parent_watch_says_nothing_while_its_parent_runs_on():
    watch = ParentWatch()  # pytest's: not make, and running
    assert not watch.make and watch.ended() is None


@pytest.fixture(scope="module")
def content(tmp_path_factory):
    folder = tmp_path_factory.mktemp("content") / "attention-notebooks"
    learner_repo.build_learner_repo(learner_repo.chapter_sources()[:1], folder)
    return folder


# install-hub and learner-repo counted as done: the test runs the hub's own recipe, not the set-up.
MAKE_HUB = ["-o", "install-hub", "-o", "learner-repo", "hub"]


@pytest.mark.usefixtures("make_installed", "hub_installed")
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGKILL], ids=lambda sent: sent.name)
def test_make_hub_stops_the_hub_when_make_alone_gets_sigint_or_is_killed(tmp_path, content, sent):
    state, port = tmp_path / "hub", free_port()
    make = run_make(*MAKE_HUB, f"HUB_PORT={port}", f"HUB_STATE={state}", f"LEARNER_REPO={content}", cwd=REPO,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={"ATTN_HUB_PASSWORD": PASSWORD})
    try:
        printed = ""
        while "Press Ctrl+C" not in printed:  # the last line it prints once the hub runs
            line = make.stdout.readline()
            assert line, f"make hub ended: {printed}"
            printed += line
        assert re.search(LINK, printed) and f"from another terminal: make hub-stop HUB_STATE={state}." in printed
        (command,) = psutil.Process(make.pid).children()  # exec: the tool is make's own child
        everything = [command, *command.children(recursive=True)]
        assert len(everything) >= 3  # the hub, its proxy and its idle culler
        os.kill(make.pid, sent)  # make alone, not its process group
        wait_until(lambda: not any(running(process) for process in everything), 60,
                   f"the hub outlived make's {sent.name}")
        make.wait(30)
        printed += make.stdout.read()
    finally:
        make.kill()
        subprocess.run([sys.executable, "-m", "tools.class_hub", "--stop", "--state", str(state)], cwd=REPO,
                       capture_output=True, timeout=120)
    reason = f"make (pid {make.pid}) got SIGINT" if sent == signal.SIGINT else "the process that started it"
    assert f"Stopping the hub: {reason}" in printed, printed
    assert make.returncode == -sent


@pytest.mark.usefixtures("make_installed", "hub_installed")
def test_make_hub_exits_2_when_it_refuses_to_start(tmp_path, content):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        make = run_make(*MAKE_HUB, f"HUB_PORT={port}", f"HUB_STATE={tmp_path / 'hub'}", f"LEARNER_REPO={content}",
                        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out, _ = make.communicate(timeout=120)
    assert make.returncode == 2 and f"error: port {port} is in use" in out, out
    assert re.search(r"make: \*\*\* \[Makefile:\d+: hub\] Error 2", out), out
