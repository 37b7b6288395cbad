"""Faults on a running class hub, each a real process killed or a real resource exhausted (docs/hub.md,
"When something breaks").

One hub serves every test here (tools/class_hub.py's Hub): one learner's
server at a time, so that a second learner meets the limit, and a proxy
check every second instead of JupyterHub's five. Each test stops its
learner's server at the end. The hub killed outright, and `make hub` started
twice, are in tests/test_make_hub.py.
"""

import os
import shutil
import subprocess
import time
from pathlib import Path

import nbformat
import psutil
import pytest
import requests
from support import skip_or_fail

from tools import learner_repo
from tools.class_hub import Hub, nbgitpuller_link
from tools.hub_client import HubError, Learner
from tools.local_servers import free_port, wait_until

pytestmark = pytest.mark.usefixtures("hub_installed")  # skips, or fails under CI, without the hub

REPO = Path(__file__).resolve().parent.parent


PASSWORD = "faults-password"
MAX_SERVERS = 1
FOLDER = "attention-notebooks"
CHAPTER = f"{FOLDER}/00_start_here.ipynb"
UPDATE_SENTENCE = "Updated while a learner had unsaved edits open."
TYPED = "What the learner typed and had not saved when the update came."


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("hub-faults")
    content = root / FOLDER
    learner_repo.build_learner_repo(learner_repo.chapter_sources()[:1], content)
    hub = Hub(root / "hub", free_port(), PASSWORD, max_servers=MAX_SERVERS, proxy_check=1).wait_ready()
    hub.content = content
    try:
        yield hub
    finally:
        hub.stop()


@pytest.fixture
def learner(hub, request):
    """A learner named after the test's first word after "test_", logged in; their server is stopped afterwards."""
    learner = Learner(hub.url, request.node.name.split("_")[1], PASSWORD).login()
    yield learner
    learner.stop()


def hub_processes(hub, marker):
    return [process for process in psutil.Process(hub.process.pid).children(recursive=True)
            if marker in " ".join(process.cmdline())]


def test_proxy_killed_the_hub_starts_it_again_and_the_learner_reconnects_to_the_same_kernel(hub, learner):
    learner.start()
    kernel = learner.kernel("work.ipynb")
    assert kernel.execute("answer = 42")[2] is None
    (proxy,) = hub_processes(hub, "configurable-http-proxy")
    killed = time.monotonic()
    proxy.kill()
    def answered():
        try:
            return learner.api.get(f"{learner.server}/api/status", timeout=5).ok
        except requests.ConnectionError:
            return False

    wait_until(answered, 60, "the learner's server did not answer through a new proxy")
    back_after = time.monotonic() - killed
    (new_proxy,) = hub_processes(hub, "configurable-http-proxy")
    assert new_proxy.pid != proxy.pid
    print(f"proxy killed: the learner's server answered again after {back_after:.1f} s "
          f"(proxy check every 1 s)")
    again = learner.kernel("work.ipynb")  # a new websocket, as JupyterLab opens when it reconnects
    try:
        outputs, _, error = again.execute("print(answer)")
        printed = "".join(output["text"] for output in outputs if output["output_type"] == "stream")  # maybe in parts
        assert error is None and printed == "42\n"  # the kernel, and its variables, lived through it
    finally:
        again.close()


def test_kernel_killed_mid_cell_the_learner_sees_it_restart_and_the_file_is_intact(hub, learner):
    learner.start()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import time\nfor step in range(600):\n    print(step, flush=True)\n    time.sleep(0.1)")])
    learner.save("long.ipynb", nb)
    saved = (hub.state / "home" / "kernel" / "long.ipynb").read_bytes()
    kernel = learner.kernel("long.ipynb")
    assert kernel.execute("before = 1")[2] is None
    running = kernel.send("execute_request", {"code": nb.cells[0].source, "silent": False, "store_history": True,
                                              "user_expressions": {}, "allow_stdin": False})
    next(msg for msg in kernel.replies(running) if msg["header"]["msg_type"] == "stream")  # the cell has started
    (process,) = [p for p in hub_processes(hub, "ipykernel_launcher") if kernel.id in " ".join(p.cmdline())]
    process.kill()
    assert kernel.next_status({"restarting", "dead"}) == "restarting"
    outputs, _, error = kernel.execute("before")
    assert error == "NameError"  # a fresh kernel: the learner runs the notebook's cells again
    assert kernel.execute("1 + 1")[0][0]["data"]["text/plain"] == "2"
    kernel.close()
    assert (hub.state / "home" / "kernel" / "long.ipynb").read_bytes() == saved


@pytest.fixture
def small_home(hub):
    """A 64 KiB tmpfs mounted at the home of learner "disk", in a folder "small"; unmounted afterwards."""
    folder = hub.state / "home" / "disk" / "small"
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not shutil.which("mount") or "tmpfs" not in Path("/proc/filesystems").read_text():
        pytest.skip("a full home needs a small tmpfs: mount(8), tmpfs and root (not present here)")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        message = f"mounting a tmpfs was refused: {mounted.stderr.strip()}"
        skip_or_fail(f"{message} (CI runs as root, with mount and tmpfs)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], check=True)


def fill(folder, leave):
    """Fill the file system of ``folder`` until ``leave`` bytes (whole pages) are free."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        os.ftruncate(fd, max(0, os.fstat(fd).st_size - leave))
    finally:
        os.close(fd)
    return filler


def test_disk_full_the_save_fails_visibly_and_the_saved_file_stays_whole(hub, learner, small_home):
    learner.start()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    learner.save("small/work.ipynb", nb)
    learner.save("small/notes.md", text="first notes\n")
    before = {name: (small_home / name).read_bytes() for name in ("work.ipynb", "notes.md")}
    filler = fill(small_home, leave=4096)  # room for a small file, not for the longer versions below
    nb.cells[0].source = "x = 1\n" * 400  # about 6 KB, under Python's 8 KB write buffer
    with pytest.raises(HubError, match=r"saving small/work.ipynb: HTTP 500 .*No space left on device"):
        learner.save("small/work.ipynb", nb)
    with pytest.raises(HubError, match=r"saving small/notes.md: HTTP 500 .*No space left on device"):
        learner.save("small/notes.md", text="longer notes\n" * 500)
    assert {name: (small_home / name).read_bytes() for name in before} == before
    assert sorted(path.name for path in small_home.iterdir()) == [".ipynb_checkpoints", "filler", "notes.md",
                                                                   "work.ipynb"]
    filler.unlink()  # space freed: the same save now goes through
    learner.save("small/work.ipynb", nb)
    assert nbformat.read(small_home / "work.ipynb", as_version=4).cells[0].source == nb.cells[0].source


def test_update_while_a_learner_has_unsaved_edits_keeps_what_they_typed(hub, learner):
    link = nbgitpuller_link(hub.url, hub.content)
    learner.start()
    assert learner.follow(link)[0] == "finished"
    opened = learner.contents(CHAPTER)  # what JupyterLab holds: the notebook and the time it was read
    nb = nbformat.from_dict(opened["content"])
    nb.cells.append(nbformat.v4.new_markdown_cell(TYPED))  # typed, not saved

    sources = hub.content.parent / "update"
    sources.mkdir()
    shutil.copy(learner_repo.chapter_sources()[0], sources)
    update = nbformat.read(sources / "00_start_here.ipynb", as_version=4)
    update.cells[0].source += "\n\n" + UPDATE_SENTENCE
    nbformat.write(update, sources / "00_start_here.ipynb")
    learner_repo.build_learner_repo(sorted(sources.glob("*.ipynb")), hub.content)

    assert learner.follow(link)[0] == "finished"
    on_disk = learner.contents(CHAPTER)
    assert UPDATE_SENTENCE in on_disk["content"]["cells"][0]["source"]  # the update arrived on disk
    assert on_disk["last_modified"] != opened["last_modified"]  # so JupyterLab asks before it saves over it
    learner.save(CHAPTER, nb)  # the learner chooses Overwrite
    saved = learner.notebook(CHAPTER)
    assert saved.cells[-1].source == TYPED
    assert UPDATE_SENTENCE not in saved.cells[0].source  # their copy predates the update


def test_class_full_one_learner_more_is_told_at_once_and_gets_a_server_when_one_stops(hub, learner):
    others = [Learner(hub.url, name, PASSWORD).login().start() for name in ("first", "second")[:MAX_SERVERS]]
    try:
        response = learner.api.post(f"{hub.url}/hub/api/users/{learner.name}/server", timeout=30)
        assert response.status_code == 429
        assert response.json()["message"] == "Active user limit exceeded. Try again in a few minutes."
        page = learner.browser.get(nbgitpuller_link(hub.url, hub.content), timeout=30)  # the class link
        assert page.status_code == 429 and "Active user limit exceeded. Try again in a few minutes." in page.text
        others[0].stop()
        learner.start()
    finally:
        for other in others:
            other.stop()
