"""nbgrader through the hub: release, fetch, submit, collect, autograde, feedback (docs/hub.md).

The instructor logs in to the hub as its admin and runs nbgrader in a kernel
of their own server, on chapter 02 as it stands in notebooks/ (its nbgrader
metadata comes from `tools/editions.py nbgrader-metadata`). Three learners
log in, fetch the assignment in kernels of their servers, answer its three
exercises in the notebook (wrong, not at all, right) through the contents
API, and submit. The instructor collects, autogrades, and releases
feedback, which each learner fetches. The exchange is a folder every
server can reach, as on The Littlest JupyterHub.
"""

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from tools.class_hub import ADMIN, Hub
from tools.editions import tags
from tools.hub_client import Learner
from tools.local_servers import free_port

pytestmark = pytest.mark.usefixtures("hub_installed")  # skips, or fails under CI, without the hub

REPO = Path(__file__).resolve().parent.parent

CHAPTER = "02_masked_softmax.ipynb"
ASSIGNMENT, COURSE = "ch02", "attention"
PASSWORD, ADMIN_PASSWORD = "class-password", "instructor-password-of-32-characters"
WRONG = "return None  # not the answer\n"
PLANS = {"ana": "wrong", "ben": "blank", "chloe": "right"}



def nbgrader(kernel, *args, exchange, student=False):
    """Run an nbgrader command in ``kernel`` (the server's own environment); return its output.

    A learner's command names the student by the hub's user name: on this
    hub every server runs as one system user, whose name nbgrader would take.
    """
    command = [sys.executable, "-m", "nbgrader", *args, f"--Exchange.root={exchange}",
               f"--CourseDirectory.course_id={COURSE}"]
    student_id = ' + ["--CourseDirectory.student_id=" + os.environ["JUPYTERHUB_USER"]]' if student else ""
    code = (f"import os, subprocess\nresult = subprocess.run({command!r}{student_id}, capture_output=True, "
            "text=True)\nprint(result.returncode)\nprint(result.stdout + result.stderr)")
    outputs, _, error = kernel.execute(code)
    text = "".join(output.get("text", "") for output in outputs)
    assert error is None and text.startswith("0\n"), f"nbgrader {args[0]} failed: {text}"
    return text


def solutions():
    """Each exercise's reference answer, from the instructor notebook, by exercise index."""
    nb = nbformat.read(REPO / "notebooks" / CHAPTER, as_version=4)
    bodies = []
    for cell in nb.cells:
        if "exercise" in tags(cell):
            lines = cell.source.splitlines(keepends=True)
            begin = next(i for i, line in enumerate(lines) if "BEGIN SOLUTION" in line)
            end = next(i for i, line in enumerate(lines) if "END SOLUTION" in line)
            bodies.append("".join(lines[begin + 1:end]))
    return bodies


def answer(nb, plan):
    """Replace each released stub (nbgrader's two lines) by the plan's answer."""
    bodies = solutions()
    exercises = [cell for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("solution")]
    assert len(exercises) == len(bodies) == 3
    for cell, body in zip(exercises, bodies):
        lines = cell.source.splitlines(keepends=True)
        stub = next(i for i, line in enumerate(lines) if "# YOUR CODE HERE" in line)
        assert "raise NotImplementedError()" in lines[stub + 1]
        indent = lines[stub][: len(lines[stub]) - len(lines[stub].lstrip())]
        if plan != "blank":
            lines[stub:stub + 2] = [body] if plan == "right" else [indent + WRONG]
        cell.source = "".join(lines)
    return nb


@pytest.fixture(scope="module")
def cycle(tmp_path_factory):
    root = tmp_path_factory.mktemp("hub-nbgrader")
    exchange = root / "exchange"
    exchange.mkdir(mode=0o777)
    hub = Hub(root / "hub", free_port(), PASSWORD, ADMIN_PASSWORD, max_servers=len(PLANS) + 1).wait_ready()
    try:
        teacher = Learner(hub.url, ADMIN, ADMIN_PASSWORD).login().start()
        source = nbformat.read(REPO / "notebooks" / CHAPTER, as_version=4)
        for folder in ("course", "course/source", f"course/source/{ASSIGNMENT}"):
            teacher.mkdir(folder)
        teacher.save(f"course/source/{ASSIGNMENT}/{CHAPTER}", source)
        desk = teacher.kernel("course/desk.ipynb")
        for step in ("generate_assignment", "release_assignment"):
            nbgrader(desk, step, ASSIGNMENT, exchange=exchange)

        def take(name):
            learner = Learner(hub.url, name, PASSWORD).login().start()
            kernel = learner.kernel("desk.ipynb")
            try:
                nbgrader(kernel, "fetch_assignment", ASSIGNMENT, exchange=exchange, student=True)
                path = f"{ASSIGNMENT}/{CHAPTER}"
                learner.save(path, answer(learner.notebook(path), PLANS[name]))
                nbgrader(kernel, "submit", ASSIGNMENT, exchange=exchange, student=True)
            finally:
                kernel.close()
            return learner

        with ThreadPoolExecutor(len(PLANS)) as pool:
            learners = dict(zip(PLANS, pool.map(take, PLANS)))
        for step in ("collect", "autograde", "generate_feedback", "release_feedback"):
            nbgrader(desk, step, ASSIGNMENT, exchange=exchange)
        outputs, _, _ = desk.execute(
            "import json\nfrom nbgrader.api import Gradebook\n"
            "with Gradebook('sqlite:///gradebook.db') as gradebook:\n"
            f"    submissions = gradebook.assignment_submissions({ASSIGNMENT!r})\n"
            "    scores = {s.student.id: [s.score, s.max_score] for s in submissions}\n"
            "print(json.dumps(scores))")
        scores = json.loads("".join(output.get("text", "") for output in outputs))
        desk.close()

        def fetch_feedback(name):
            kernel = learners[name].kernel("desk.ipynb")
            try:
                nbgrader(kernel, "fetch_feedback", ASSIGNMENT, exchange=exchange, student=True)
            finally:
                kernel.close()
            return sorted((root / "hub" / "home" / name / ASSIGNMENT / "feedback").rglob("*.html"))

        with ThreadPoolExecutor(len(PLANS)) as pool:
            feedback = dict(zip(PLANS, pool.map(fetch_feedback, PLANS)))
        yield {"scores": scores, "feedback": feedback, "root": root}
    finally:
        hub.stop()


def test_the_release_holds_stubs_and_no_answer(cycle):
    release = cycle["root"] / "hub" / "home" / ADMIN / "course" / "release" / ASSIGNMENT / CHAPTER
    text = release.read_text()
    assert "BEGIN SOLUTION" not in text and text.count("raise NotImplementedError()") == 3
    assert all(body.strip().splitlines()[0].strip() not in text for body in solutions())


def test_wrong_blank_and_right_submissions_get_0_0_and_full_marks(cycle):
    assert cycle["scores"] == {"ana": [0.0, 3.0], "ben": [0.0, 3.0], "chloe": [3.0, 3.0]}


def test_every_learner_fetches_feedback_that_shows_their_score(cycle):
    for name, expected in (("ana", "Score: 0.0 / 3.0"), ("ben", "Score: 0.0 / 3.0"), ("chloe", "Score: 3.0 / 3.0")):
        pages = cycle["feedback"][name]
        assert [page.name for page in pages] == [CHAPTER.replace(".ipynb", ".html")], name
        assert expected in pages[0].read_text(), name
