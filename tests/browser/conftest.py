"""One JupyterLab server and one headless Chromium, shared by every browser test.

The browser is Debian's `chromium` package, driven by Playwright (whose own
browser download does not work on these machines). Without it the tests are
skipped with a loud message, except under CI=true, where they fail.
"""

import json
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat
import pytest
from support import made_once, page_assets, skip_or_fail

from tools import build_site
from tools.local_servers import free_port, wait_for_answer

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1400, "height": 1000}
SERVER_START_TIMEOUT = 90  # seconds

REPO = Path(__file__).resolve().parents[2]
SELFTEST_SOURCES = sorted(Path(__file__).resolve().parent.glob("*_fixture.py"))
SCREENSHOTS = REPO / "build" / "screenshots"
INSTALL_HINT = (
    "install Debian's Chromium: run `make test` as root (it runs apt-get for you), "
    "or `sudo apt-get update && sudo apt-get install -y chromium`"
)

# Filled in during the session, printed at its end.
REPORTS = []
SKIPPED = []


def _why_no_browser():
    if not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} is missing"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is missing (make install installs it)"
    return None


WHY_NO_BROWSER = _why_no_browser()


@dataclass
class LabServer:
    url: str
    token: str
    root: Path
    pid: int
    log: Path

    def api(self, endpoint, method="GET"):
        request = urllib.request.Request(
            f"{self.url}/api/{endpoint}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def answers(self):
        try:
            return self.api("status") is not None
        except OSError:
            return False

    def shut_down_kernels(self):
        for session in self.api("sessions"):
            self.api(f"sessions/{session['id']}", method="DELETE")


def _prepare_root(root):
    """The chapters as stored and the self-test notebooks, with every execution count removed.

    A chapter keeps its stored outputs, so a test first sees what a learner
    sees on opening it; every prompt starts as [ ], so an execution count in
    the page can only come from this run. Working on copies keeps the
    repository's files untouched when the page saves.
    """
    (root / "notebooks").mkdir(parents=True)
    for source in sorted((REPO / "notebooks").glob("*.ipynb")):
        notebook = nbformat.read(source, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                cell.execution_count = None
                for output in cell.outputs:
                    if output.output_type == "execute_result":
                        output.execution_count = None
        nbformat.write(notebook, root / "notebooks" / source.name)
    for data in (REPO / "notebooks").iterdir():  # files a chapter reads, if any
        if data.is_dir() and not data.name.startswith("."):
            shutil.copytree(data, root / "notebooks" / data.name)
    (root / "selftest").mkdir()
    for source in SELFTEST_SOURCES:
        jupytext.write(jupytext.read(source), root / "selftest" / f"{source.stem}.ipynb")


def _write_settings(settings_dir):
    """Turn off the news and update notifications, which would cover the page."""
    plugin = settings_dir / "@jupyterlab" / "apputils-extension"
    plugin.mkdir(parents=True)
    (plugin / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )


def require_chromium():
    """Skip the test when Chromium or Playwright is missing; fail under CI=true."""
    if WHY_NO_BROWSER:
        message = f"browser tests need Chromium: {WHY_NO_BROWSER}; {INSTALL_HINT}"
        SKIPPED.append(message)
        skip_or_fail(message)


def _stop(process):
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            # An idle server stops in about 2 s. After a full session it can hang after
            # "Shutting down 11 extensions" until killed: do not wait 20 s for that.
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    """JupyterLab from this environment, on 127.0.0.1, a free port and a token."""
    require_chromium()
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "root"
    _prepare_root(root)
    config = base / "config"
    _write_settings(config / "lab" / "user-settings")
    env = {
        **os.environ,
        # Nothing from the user's own Jupyter set-up (settings, kernels, extensions).
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_DATA_DIR": str(base / "data"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
    }
    token = secrets.token_hex(16)
    port = free_port()
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",  # a taken port fails instead of moving silently
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={config / 'lab' / 'user-settings'}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
    ]  # fmt: skip
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = base / "server.log"
    with open(log, "w") as log_file:
        # Started directly (no shell), so process.pid is the server's own PID.
        process = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, env=env, cwd=root)
    server = LabServer(f"http://127.0.0.1:{port}", token, root, process.pid, log)
    try:
        wait_for_answer(process, server.answers, SERVER_START_TIMEOUT, "JupyterLab", log)
        yield server
    finally:
        _stop(process)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(log, SCREENSHOTS / "jupyter-server.log")


@pytest.fixture(scope="session")
def chromium():
    """One Chromium for the session, with no server of its own (lecture mode starts Voila)."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def browser(lab_server, chromium):
    """The session's Chromium, once JupyterLab is up."""
    return chromium


@pytest.fixture(scope="session")
def browser_context(browser):
    """One context, so every page after the first loads Lab from the cache."""
    return browser.new_context(viewport=VIEWPORT)


@pytest.fixture
def page(request, browser_context, lab_server):
    """A fresh page per notebook; its kernels are shut down afterwards.

    When the test fails, the page is saved as FAILED-<test>.png for a person to look at.
    """
    page = browser_context.new_page()
    yield page
    if getattr(request.node, "failed_in_call", False):
        name = re.sub(r"[^\w.-]+", "_", request.node.name)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / f"FAILED-{name}.png")
    page.close()  # without running beforeunload, so an unsaved notebook cannot block it
    lab_server.shut_down_kernels()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call" and report.failed:
        item.failed_in_call = True
    return report


SITE_HUB = "https://hub.example.edu"  # the JupyterHub address the tests' site is built with


@dataclass
class BuiltSite:
    folder: Path
    seconds: float  # how long its build took


def explorer_assets(tmp_path_factory):
    """Each book's folder ("en", "pt") -> the run's explorers' page assets in the book's language
    (``support.page_assets``), for ``build_site.build``: every build of a run takes the explorers' data
    from them, made once, since it depends neither on the edition nor on the hub."""
    return {book.folder: page_assets(tmp_path_factory, book.language) for book in build_site.BOOKS}


def _build_site(out, assets):
    """Build the learner edition's site with a hub button into ``out``, with a proxy that answers
    nothing, so that a build that needed the network fails; return the seconds it took."""
    with pytest.MonkeyPatch.context() as patch:
        for variable in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            patch.setenv(variable, "http://127.0.0.1:9")  # the discard port: nothing answers
        patch.delenv("NO_PROXY", raising=False)
        patch.delenv("no_proxy", raising=False)
        return build_site.build(out, hub_url=SITE_HUB, explorer_assets=assets)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The web site, built once per run for every test file that reads it (test_site.py,
    test_site_a11y.py), which pytest-xdist may run on different workers (``support.made_once``), from
    the run's explorers' assets (``explorer_assets``)."""
    assets = explorer_assets(tmp_path_factory)  # made first: their own lock is not taken inside the site's
    folder, seconds = made_once(tmp_path_factory, "site", lambda out: _build_site(out, assets))
    return BuiltSite(folder, seconds)


@pytest.fixture(scope="session")
def screenshots():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for stale in SCREENSHOTS.glob("FAILED-*.png"):
        stale.unlink()
    return SCREENSHOTS


@pytest.fixture(scope="session")
def reports():
    """What each browser test saw, for the summary at the end of the session."""
    return REPORTS


def _summary_line(report):
    moves = report.slider_moves
    if report.explorers:
        changed = sum(move.image_changed for move in moves)
        sliders = f"{len(report.explorers)} explorer(s), {changed}/{len(moves)} slider moves changed the heatmap"
    else:
        sliders = "no slider"
    latency = ""
    if report.key_to_image_ms:
        latency = f"; key to image median {statistics.median(report.key_to_image_ms):.0f} ms"
    return (
        f"{report.ui:9} {report.path:40} {report.code_cells:3} code cells run, "
        f"{len(report.error_outputs)} errors, {sliders}{latency}; {sum(report.seconds.values()):.1f} s "
        f"({', '.join(f'{phase} {seconds:.1f}' for phase, seconds in report.seconds.items())})"
    )


def _explorer_lines(report):
    """One line per explorer: its median key press to new image, and each keyboard move's."""
    lines = []
    for number, moves in enumerate(report.explorer_key_to_image_ms):
        if not moves:
            continue
        each = ", ".join(f"{label} {ms:.0f}" for label, ms in moves)
        lines.append(f"  {report.ui} {report.path} explorer {number}: key to image median "
                     f"{statistics.median(ms for _, ms in moves):.0f} ms ({each})")
    return lines


def pytest_terminal_summary(terminalreporter):
    if SKIPPED:
        terminalreporter.write_sep("!", "BROWSER TESTS SKIPPED", red=True, bold=True)
        terminalreporter.write_line(f"No notebook was opened in a real browser: {WHY_NO_BROWSER}.")
        terminalreporter.write_line(f"To run them, {INSTALL_HINT}.")
    if not REPORTS:
        return
    lines = [_summary_line(report) for report in REPORTS]
    lines += [line for report in REPORTS for line in _explorer_lines(report)]
    latencies = [ms for report in REPORTS for ms in report.key_to_image_ms]
    if latencies:
        lines.append(f"key press to new image, all keyboard moves: median {statistics.median(latencies):.0f} ms, "
                     f"max {max(latencies):.0f} ms over {len(latencies)} moves; load average "
                     f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    # Under pytest-xdist each worker reports the browser tests it ran, in a file of its own.
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    (SCREENSHOTS / (f"summary-{worker}.txt" if worker else "summary.txt")).write_text("\n".join(lines) + "\n")
    terminalreporter.write_sep("=", "notebooks checked in a real browser")
    for line in lines:
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"screenshots: {SCREENSHOTS}")
