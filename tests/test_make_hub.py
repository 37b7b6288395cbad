"""`make hub`'s command (tools/class_hub.py): a hub a person can log in to, its link, Ctrl+C, and idle culling.

And what happens when it is ended some other way (SIGTERM, SIGKILL, the hub
itself killed), started twice, or started on a port another program holds:
every process it started ends with it, and nothing it prints is unchecked.
"""

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest
import requests

from tools import learner_repo
from tools.class_hub import REFUSED, Hub, HubRunning, class_size, running_hub
from tools.hub_client import Learner
from tools.hub_processes import running
from tools.local_servers import free_port, wait_until

pytestmark = pytest.mark.usefixtures("hub_installed")  # skips, or fails under CI, without the hub

REPO = Path(__file__).resolve().parent.parent

PASSWORD = "try-the-hub"
HUB_COMMAND = [sys.executable, "-m", "tools.class_hub"]  # `make hub`'s, run from the repository root
LINK = r"/hub/user-redirect/git-pull\?"

def lines_until(process, pattern, timeout=120):
    """Lines the process prints, up to the first matching ``pattern``; fails after ``timeout`` s."""
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    seen = []

    def matched():
        try:
            seen.append(lines.get(timeout=1))
        except queue.Empty:
            assert process.poll() is None, f"the hub command exited with {process.returncode}: {''.join(seen)}"
            return False
        return re.search(pattern, seen[-1])

    try:
        wait_until(matched, timeout, f"no line matching {pattern!r}", every=0)
    except TimeoutError as error:
        raise AssertionError(f"{error}: {''.join(seen)}") from None
    return "".join(seen)


def servers_under(state):
    """Single-user servers whose home is under ``state``: the processes Ctrl+C must end."""
    found = []
    for process in psutil.process_iter(["cmdline", "cwd"]):
        try:
            if "jupyterhub-singleuser" in " ".join(process.info["cmdline"] or []) and \
                    str(state) in (process.info["cwd"] or ""):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def test_make_hub_prints_a_hub_to_log_in_to_and_a_link_to_chapter_00_and_ctrl_c_stops_everything(tmp_path):
    content = tmp_path / "attention-notebooks"
    learner_repo.build_learner_repo(learner_repo.chapter_sources()[:1], content)
    state, port = tmp_path / "hub", free_port()
    process = subprocess.Popen(HUB_COMMAND + ["--repo", str(content),
                                "--port", str(port), "--state", str(state)], text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, cwd=REPO, env={**os.environ,
                                                              "ATTN_HUB_PASSWORD": PASSWORD})
    try:
        printed = lines_until(process, r"/hub/user-redirect/git-pull\?")
        assert f"JupyterHub is running at http://127.0.0.1:{port}/" in printed
        assert f"any user name, password {PASSWORD}" in printed
        link = re.search(r"(http://127\.0\.0\.1:\d+/hub/user-redirect/git-pull\?\S+)", printed).group(1)
        assert "urlpath=lab%2Ftree%2Fattention-notebooks%2F00_start_here.ipynb" in link
        learner = Learner(f"http://127.0.0.1:{port}", "dana", PASSWORD).login().start()
        phase, output = learner.follow(link)
        assert phase == "finished", output
        assert learner.exists("attention-notebooks/00_start_here.ipynb")
        assert len(servers_under(state)) == 1
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(60)
    assert servers_under(state) == []
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/hub/api/", timeout=5)


def test_the_idle_culler_stops_a_server_nobody_uses(tmp_path):
    hub = Hub(tmp_path / "hub", free_port(), PASSWORD, cull_timeout=5, cull_every=2).wait_ready()
    try:
        learner = Learner(hub.url, "eve", PASSWORD).login().start()
        wait_until(lambda: not learner.api.get(f"{hub.url}/hub/api/users/eve", timeout=30).json()["servers"], 90,
                   "the idle culler did not stop eve's idle server", every=1)
        assert "Culling server eve" in hub.log_path.read_text()
    finally:
        hub.stop()


@pytest.fixture(scope="module")
def content(tmp_path_factory):
    """A content repository with chapter 00, for the commands started below."""
    folder = tmp_path_factory.mktemp("content") / "attention-notebooks"
    learner_repo.build_learner_repo(learner_repo.chapter_sources()[:1], folder)
    return folder


def make_hub(content, state, port):
    """`make hub`'s command, as a process printing to a pipe."""
    return subprocess.Popen(HUB_COMMAND + ["--repo", str(content),
                             "--port", str(port), "--state", str(state)], text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, cwd=REPO, env={**os.environ, "ATTN_HUB_PASSWORD": PASSWORD})


def started_by(process):
    """``process`` (a pid) and every process under it: the hub, proxy, culler, servers and kernels."""
    root = psutil.Process(process)
    return [root, *root.children(recursive=True)]


def still_running(processes, timeout=30):
    """Those of ``processes`` that have not ended ``timeout`` s from now, with their command lines."""
    alive = [process for process in psutil.wait_procs(processes, timeout=timeout)[1] if running(process)]
    return [" ".join(process.cmdline()) for process in alive]


def kinds(processes):
    """Which of the hub's parts are among ``processes`` (command lines checked, so a test cannot pass on none)."""
    names = {"jupyterhub -f": "hub", "configurable-http-proxy": "proxy", "jupyterhub_idle_culler": "culler",
             "jupyterhub-singleuser": "server", "ipykernel_launcher": "kernel"}
    return {kind for process in processes for marker, kind in names.items() if marker in " ".join(process.cmdline())}


def learner_at_work(url, name):
    """A learner with a server and a kernel that has run a cell: every kind of process the hub starts."""
    learner = Learner(url, name, PASSWORD).login().start()
    kernel = learner.kernel("work.ipynb")
    assert kernel.execute("answer = 42")[2] is None
    return learner, kernel


def test_sigterm_to_make_hubs_command_ends_every_process_it_started(tmp_path, content):
    port = free_port()
    process = make_hub(content, tmp_path / "hub", port)
    try:
        lines_until(process, LINK)
        learner_at_work(f"http://127.0.0.1:{port}", "fay")
        everything = started_by(process.pid)
        assert kinds(everything) == {"hub", "proxy", "culler", "server", "kernel"}
    finally:
        process.terminate()
        process.wait(60)
    assert process.returncode == 143
    assert still_running(everything) == []
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/hub/api/", timeout=5)


def test_after_make_hub_is_killed_nothing_is_left_and_the_next_make_hub_serves_the_learner_again(tmp_path, content):
    """SIGKILL (an out-of-memory kill, a closed terminal): the command gets no chance to clean up."""
    state, port = tmp_path / "hub", free_port()
    url = f"http://127.0.0.1:{port}"
    first = make_hub(content, state, port)
    try:
        lines_until(first, LINK)
        learner, _ = learner_at_work(url, "gil")
        learner.save("notes.txt", text="saved before the crash\n")
        unsaved = "typed while the hub was down\n"
        everything = started_by(first.pid)
        assert kinds(everything) == {"hub", "proxy", "culler", "server", "kernel"}
        first.kill()
        first.wait(60)
        assert still_running(everything) == []
        assert running_hub(state) == []
        with pytest.raises(requests.ConnectionError):
            requests.get(f"{url}/hub/api/", timeout=5)
    finally:
        first.kill()
    second = make_hub(content, state, port)
    try:
        printed = lines_until(second, LINK)
        assert f"password {PASSWORD}" in printed
        learner.start()  # the token and the learner's home outlived the crash; a new server starts
        assert learner.contents("notes.txt")["content"] == "saved before the crash\n"
        learner.save("notes.txt", text="saved before the crash\n" + unsaved)
        assert (state / "home" / "gil" / "notes.txt").read_text() == "saved before the crash\n" + unsaved
    finally:
        second.send_signal(signal.SIGINT)
        second.wait(60)


def test_a_second_make_hub_is_refused_with_how_to_stop_the_first_and_hub_stop_stops_it(tmp_path, content):
    state, port = tmp_path / "hub", free_port()
    first = make_hub(content, state, port)
    try:
        lines_until(first, LINK)
        for other_port in (port, free_port()):  # the same state folder, on its port or on another
            second = make_hub(content, state, other_port)
            out, _ = second.communicate(timeout=60)
            assert second.returncode == REFUSED, out
            assert "is still running" in out and "make hub-stop" in out and "JupyterHub is running" not in out, out
        Learner(f"http://127.0.0.1:{port}", "hal", PASSWORD).login()  # the first hub is untouched
        everything = started_by(first.pid)
        stop = subprocess.run(HUB_COMMAND + ["--stop", "--state", str(state)],
                              cwd=REPO, capture_output=True, text=True, timeout=120)
        assert stop.returncode == 0 and f"Stopped the hub started from {state} (pid {first.pid}" in stop.stdout
        assert still_running(everything) == []
        first.wait(30)
        again = subprocess.run(HUB_COMMAND + ["--stop", "--state", str(state)],
                               cwd=REPO, capture_output=True, text=True, timeout=60)
        assert again.stdout.strip() == f"No hub started from {state} is running."
    finally:
        first.kill()


def test_a_port_another_program_holds_is_refused_before_a_hub_starts(tmp_path, content):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(HubRunning, match=rf"port {port} is in use \(pid {os.getpid()}: .*HUB_PORT=8010"):
            Hub(tmp_path / "hub", port, PASSWORD)
        result = make_hub(content, tmp_path / "hub", port)
        out, _ = result.communicate(timeout=60)
    assert result.returncode == REFUSED, out
    assert f"error: port {port} is in use" in out and "JupyterHub is running" not in out


def test_the_proxy_culler_and_servers_end_by_themselves_when_the_hub_process_is_killed(tmp_path):
    hub = Hub(tmp_path / "hub", free_port(), PASSWORD).wait_ready()
    try:
        learner_at_work(hub.url, "ivy")
        started = started_by(hub.process.pid)[1:]
        assert kinds(started) == {"proxy", "culler", "server", "kernel"}
        hub.process.kill()  # SIGKILL: the hub cleans up nothing; Linux signals its children (die_with_parent)
        hub.process.wait()
        assert still_running(started) == []
    finally:
        hub.stop()


def test_the_server_limit_is_the_capacity_tables_learners_to_plan_for():
    """docs/instructors.md: 2 cores and 8 GB plan for 10 learners, 8 and 32 GB for 40, 32 and 128 GB for 100."""
    assert [class_size(2, 8e9), class_size(8, 32e9), class_size(32, 128e9)] == [10, 40, 100]
    assert class_size(1, 1e9) == 1  # a machine below the table still lets one learner in
