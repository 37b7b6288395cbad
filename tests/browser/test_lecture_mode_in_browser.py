"""Lecture mode (`make present CHAPTER=04`) in a real browser: Voilà serves chapter 04 with
the command line that tools/present.py builds, the page shows prose and a live explorer but
no code and no exercise, a slider moves the heatmap, and without the token the page is refused."""

import os
import secrets
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from jupyter_ui import NotebookDriver

from tools import present
from tools.local_servers import free_port, wait_for_answer

REPO = Path(__file__).resolve().parents[2]
CHAPTER = REPO / "notebooks" / "04_scaled_dot_product.ipynb"
VIEWPORT = {"width": 1400, "height": 1000}  # as the JupyterLab tests' (conftest.py)
SERVER_START_TIMEOUT = 90  # seconds
RENDER_TIMEOUT = 90  # seconds: Voilà runs the whole chapter before the explorer shows; a few on a quiet machine
# Lines of chapter 04's code: none may be on the page.
CODE = ("from d2lmini.widgets import explore_dot_product", "explorer = explore_dot_product()", "torch.manual_seed",
        "BEGIN SOLUTION", "def distance_as_dot_product", "ch04.check_")




class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _status(url):
    """The HTTP status of ``url``, redirects not followed; None while nothing answers."""
    try:
        with urllib.request.build_opener(_NoRedirect).open(url, timeout=10) as response:
            return response.status, response.headers.get("Location", "")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location", "")
    except OSError:
        return None, ""


@pytest.fixture(scope="module")
def lecture_server(chromium, screenshots, tmp_path_factory):
    """Voilà on chapter 04's lecture copy, exactly as `make present` starts it, on a free port."""
    base = tmp_path_factory.mktemp("present")
    lecture = present.write_lecture(CHAPTER, base / "lecture")
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_TOKEN": token,  # what --Voila.auto_token=True picks up instead of generating one
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
    }
    log = base / "voila.log"
    with open(log, "w") as log_file:
        process = subprocess.Popen(present.voila_command(lecture, port), stdout=log_file, stderr=subprocess.STDOUT,
                                   env=env, cwd=REPO)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_for_answer(process, lambda: _status(url)[0] is not None, SERVER_START_TIMEOUT, "Voilà", log)
        yield url, token
    finally:
        process.terminate()  # Voila shuts its kernel down and exits
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        (screenshots / "voila-server.log").write_text(log.read_text())


def test_without_the_token_the_lecture_is_refused(lecture_server):
    url, token = lecture_server
    for attempt in (url, f"{url}?token={'0' * len(token)}"):
        status, location = _status(attempt)
        assert status in (302, 403), f"{attempt} answered {status}, not a refusal"
        if status == 302:
            assert location.startswith("/login"), location
    with urllib.request.urlopen(url, timeout=10) as response:  # follows the redirect to the login form
        body = response.read().decode()
    assert "Scaled dot-product" not in body and "token" in body.lower()


def test_the_lecture_shows_prose_and_a_live_explorer_but_no_code(chromium, lecture_server, screenshots):
    url, token = lecture_server
    context = chromium.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        page.goto(f"{url}?token={token}")
        driver = NotebookDriver(page, server=None, path=CHAPTER.name)
        explorer = page.locator(".jp-OutputArea-output").filter(has=page.locator(".noUi-handle")).filter(
            has=page.locator("img")).first
        explorer.wait_for(timeout=RENDER_TIMEOUT * 1000)
        text = page.locator("body").text_content()
        assert "04 · Scaled dot-product attention" in text  # the chapter's title
        assert "## Explore" not in text and "Explore" in text  # the markdown is rendered, not shown as source
        assert [line for line in CODE if line in text] == []
        assert page.locator(".jp-CodeCell .jp-InputArea").count() == 0
        assert "Exercise 4.1" not in text
        assert driver.page_errors() == []
        (explorer_,) = driver.explorers()
        moves = driver.move_sliders(explorer_, "keyboard")
        assert moves, "the explorer has no slider"
        assert all(move.image_changed for move in moves), moves
        page.screenshot(path=screenshots / "present-04.png")
    except Exception:
        page.screenshot(path=screenshots / "FAILED-present-04.png")
        raise
    finally:
        context.close()
