"""`make hub`'s command (tools/class_hub.py): a hub a person can log in to, its link, Ctrl+C, and idle culling."""

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
import requests
from hub_support import _hub_installed  # noqa: F401 (skips, or fails under CI, without the hub)

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import learner_repo  # noqa: E402
from class_hub import Hub, _running, free_port  # noqa: E402
from hub_client import Learner  # noqa: E402

PASSWORD = "try-the-hub"



def lines_until(process, pattern, timeout=120):
    """Lines the process prints, up to the first matching ``pattern``; fails after ``timeout`` s."""
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    seen, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            seen.append(lines.get(timeout=1))
        except queue.Empty:
            assert process.poll() is None, f"the hub command exited with {process.returncode}: {''.join(seen)}"
            continue
        if re.search(pattern, seen[-1]):
            return "".join(seen)
    raise AssertionError(f"no line matching {pattern!r} within {timeout} s: {''.join(seen)}")


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
    process = subprocess.Popen([sys.executable, str(REPO / "tools" / "class_hub.py"), "--repo", str(content),
                                "--port", str(port), "--state", str(state)], text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, env={**os.environ,
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
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            model = learner.api.get(f"{hub.url}/hub/api/users/eve", timeout=30).json()
            if not model["servers"]:
                break
            time.sleep(1)
        assert model["servers"] == {}, "the idle culler did not stop eve's idle server within 90 s"
        assert "Culling server eve" in hub.log_path.read_text()
    finally:
        hub.stop()


def test_killing_make_hubs_command_stops_the_hub_too(tmp_path):
    content = tmp_path / "attention-notebooks"
    learner_repo.build_learner_repo(learner_repo.chapter_sources()[:1], content)
    port = free_port()
    process = subprocess.Popen([sys.executable, str(REPO / "tools" / "class_hub.py"), "--repo", str(content),
                                "--port", str(port), "--state", str(tmp_path / "hub")], text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        lines_until(process, r"/hub/user-redirect/git-pull\?")
        hub = [child for child in psutil.Process(process.pid).children() if "jupyterhub" in " ".join(child.cmdline())]
        assert len(hub) == 1
    finally:
        process.terminate()
        process.wait(60)
    hub[0].wait(30)
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/hub/api/", timeout=5)


def test_stop_ends_the_proxy_and_the_culler_even_after_the_hub_died_without_stopping_them(tmp_path):
    hub = Hub(tmp_path / "hub", free_port(), PASSWORD).wait_ready()
    started = psutil.Process(hub.process.pid).children(recursive=True)
    commands = [" ".join(process.cmdline()) for process in started]
    assert any("configurable-http-proxy" in command for command in commands), commands
    assert any("jupyterhub_idle_culler" in command for command in commands), commands
    hub.process.kill()  # SIGKILL: the hub gets no chance to stop them, and they are out of its process group
    hub.process.wait()
    hub.stop()
    assert [process for process in started if _running(process)] == []
