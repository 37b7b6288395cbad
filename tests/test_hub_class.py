"""A class on one hub, end to end: a real JupyterHub, real kernels, real nbgitpuller (docs/hub.md).

Three learners log in to the hub that `make hub` runs (tools/class_hub.py), follow
the nbgitpuller link to the content repository that `make learner-repo` writes
(tools/learner_repo.py), run chapter 02 in a kernel of their own server and
save it with an exercise edited. Ana answers Exercise 2.1 right, Ben wrong
(and keeps a notebook of his own under the name of the chapter the update
will add, and notes in my-work/), Chloé answers it right and deletes chapter
00. The instructor publishes an update (a sentence in chapter 02's opening,
a new chapter) as one new commit; each learner follows the link again, and
Ben and Ana run the first code cell of chapter 02 (the setup cell), where Ben
reads that his notebook was kept under a new name.

Everything runs on 127.0.0.1, with every wait bounded.
"""

import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from d2lmini.updates import renamed_by_update
from tools import learner_repo
from tools.class_hub import Hub, nbgitpuller_link
from tools.editions import tags
from tools.hub_client import Learner
from tools.local_servers import free_port

pytestmark = pytest.mark.usefixtures("hub_installed")  # skips, or fails under CI, without the hub

REPO = Path(__file__).resolve().parent.parent

CHAPTER = "02_masked_softmax.ipynb"
NEW_CHAPTER = "10_class_update.ipynb"
UPDATE_SENTENCE = "This chapter was updated for the class during the hub test."
PASSWORD = "class-password"
FOLDER = "attention-notebooks"  # the content repository's name, so the learners' folder
WRONG_MEAN = "    return values.mean(1)  # every step, padding included\n"
BENS_NOTEBOOK_TEXT = "Ben's own notebook, started before the course added a chapter of this name."
BENS_NOTES = "Ben's notes: masked_mean needs the lengths.\n"



def exercise_cells(nb):
    return [i for i, cell in enumerate(nb.cells) if "exercise" in tags(cell)]


def check_cells(nb):
    return [i for i, cell in enumerate(nb.cells) if "check" in tags(cell)]


def answered(stub_source, body):
    """The stub of Exercise 2.1 with its two stub lines replaced by ``body``."""
    lines = stub_source.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "# YOUR CODE HERE" in line)
    return "".join(lines[:start] + [body] + lines[start + 2:])


def instructor_answer():
    """Exercise 2.1's reference answer, taken from the instructor notebook."""
    source = nbformat.read(REPO / "notebooks" / CHAPTER, as_version=4).cells
    cell = next(c for c in source if "exercise" in tags(c))
    lines = cell.source.splitlines(keepends=True)
    begin = next(i for i, line in enumerate(lines) if "BEGIN SOLUTION" in line)
    end = next(i for i, line in enumerate(lines) if "END SOLUTION" in line)
    return "".join(lines[begin + 1:end])


def files_under(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(folder).parts}


def run_setup_cell(learner):
    """Run the chapter's first code cell (tagged colab-setup) in a new kernel; return (outputs, error name)."""
    path = f"{FOLDER}/{CHAPTER}"
    setup = next(cell for cell in learner.notebook(path).cells if "colab-setup" in tags(cell))
    kernel = learner.kernel(path)
    try:
        outputs, _, error = kernel.execute(setup.source)
    finally:
        kernel.close()
    return outputs, error


def take_a_chapter(learner, link, body, actions):
    """Log in, follow the link, run chapter 02 with Exercise 2.1's body edited, save, then the extra actions."""
    learner.login().start()
    first = learner.follow(link)
    path = f"{FOLDER}/{CHAPTER}"
    nb = learner.notebook(path)
    exercise = exercise_cells(nb)[0]
    nb.cells[exercise].source = answered(nb.cells[exercise].source, body)
    kernel = learner.kernel(path)
    try:
        errors = kernel.run(nb)
    finally:
        kernel.close()
    learner.save(path, nb)
    actions(learner)
    return {"first": first, "errors": errors, "nb": nb, "exercise": exercise}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The whole cycle, once: what each learner saw and what is on the hub's disk afterwards."""
    root = tmp_path_factory.mktemp("hub-class")
    content = root / FOLDER
    chapters = learner_repo.chapter_sources()
    first_commit = learner_repo.build_learner_repo(chapters, content)
    hub = Hub(root / "hub", free_port(), PASSWORD, max_servers=3).wait_ready()  # ana, ben and chloe at once
    link = nbgitpuller_link(hub.url, content, path=CHAPTER)
    learners = {name: Learner(hub.url, name, PASSWORD) for name in ("ana", "ben", "chloe")}

    def bens_extras(learner):
        own = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(BENS_NOTEBOOK_TEXT)])
        learner.save(f"{FOLDER}/{NEW_CHAPTER}", own)
        learner.save(f"{FOLDER}/my-work/notes.md", text=BENS_NOTES)

    plans = {"ana": (instructor_answer(), lambda learner: None), "ben": (WRONG_MEAN, bens_extras),
             "chloe": (instructor_answer(), lambda learner: learner.delete(f"{FOLDER}/00_start_here.ipynb"))}
    try:
        with ThreadPoolExecutor(len(learners)) as pool:
            futures = {name: pool.submit(take_a_chapter, learners[name], link, *plans[name]) for name in learners}
            before = {name: future.result() for name, future in futures.items()}
        homes = {name: root / "hub" / "home" / name / FOLDER for name in learners}
        on_disk_before = {name: files_under(home) for name, home in homes.items()}

        # The instructor's update: a sentence in chapter 02's opening cell, and a new chapter.
        updated = root / "updated-sources"
        updated.mkdir()
        for path in chapters:
            shutil.copy(path, updated / path.name)
        nb = nbformat.read(updated / CHAPTER, as_version=4)
        nb.cells[0].source += "\n\n" + UPDATE_SENTENCE
        nbformat.write(nb, updated / CHAPTER)
        shutil.copy(updated / "00_start_here.ipynb", updated / NEW_CHAPTER)
        second_commit = learner_repo.build_learner_repo(sorted(updated.glob("*.ipynb")), content)

        with ThreadPoolExecutor(len(learners)) as pool:
            again = dict(zip(learners, pool.map(lambda learner: learner.follow(link), learners.values())))
        with ThreadPoolExecutor(2) as pool:
            setup_cells = dict(zip(("ana", "ben"), pool.map(run_setup_cell, (learners["ana"], learners["ben"]))))
        yield {"content": content, "commits": (first_commit, second_commit), "before": before, "again": again,
               "homes": homes, "on_disk_before": on_disk_before, "hub": hub, "setup_cells": setup_cells}
    finally:
        hub.stop()


def published(course, name):
    return nbformat.reads(subprocess.run(["git", "show", f"HEAD:{name}"], cwd=course["content"], check=True,
                                         capture_output=True, text=True).stdout, as_version=4)


def test_each_learner_logs_in_follows_the_link_and_gets_every_chapter(course):
    expected = {path.name for path in learner_repo.chapter_sources()}
    for name, seen in course["before"].items():
        phase, output = seen["first"]
        assert phase == "finished", output
        assert expected <= set(course["on_disk_before"][name]) | {"00_start_here.ipynb"}
        assert "d2lmini/__init__.py" in course["on_disk_before"][name]


def test_each_learner_runs_chapter_02_in_a_real_kernel_and_only_unfinished_checks_fail(course):
    for name, seen in course["before"].items():
        nb, errors = seen["nb"], dict(course["before"][name]["errors"])
        checks = check_cells(nb)
        assert set(errors) <= set(checks), (name, errors)
        first_check = checks[0]
        text = "".join(out.get("text", "") for out in nb.cells[first_check].outputs)
        if name == "ben":
            assert errors[first_check] == "ExerciseError"
        else:
            assert first_check not in errors and "✓ Exercise 2.1" in text, (name, nb.cells[first_check].outputs)
        assert all(errors[index] == "ExerciseNotAttempted" for index in checks[1:]), (name, errors)


def test_the_update_is_one_new_commit_on_the_published_history(course):
    first, second = course["commits"]
    assert first and second and first != second
    content = course["content"]
    assert subprocess.run(["git", "merge-base", "--is-ancestor", first, second], cwd=content).returncode == 0
    assert subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=content, capture_output=True,
                          text=True).stdout.strip() == "2"


def test_every_learner_follows_the_link_again_and_gets_the_update(course):
    for name, (phase, output) in course["again"].items():
        assert phase == "finished", (name, output)
        home = course["homes"][name]
        chapter = nbformat.read(home / CHAPTER, as_version=4)
        nbformat.validate(chapter)
        assert UPDATE_SENTENCE in chapter.cells[0].source, name
    assert (course["homes"]["ana"] / NEW_CHAPTER).read_bytes() == (course["content"] / NEW_CHAPTER).read_bytes()


def test_every_learners_edited_exercise_and_its_outputs_survive_the_update(course):
    for name, seen in course["before"].items():
        chapter = nbformat.read(course["homes"][name] / CHAPTER, as_version=4)
        index = seen["exercise"]
        assert chapter.cells[index].source == seen["nb"].cells[index].source, name
        check = check_cells(chapter)[0]
        assert chapter.cells[check].outputs == seen["nb"].cells[check].outputs, name


def test_a_learners_file_in_the_way_of_a_new_chapter_is_renamed_with_a_message(course):
    home, (_, output) = course["homes"]["ben"], course["again"]["ben"]
    renamed = sorted(home.glob("10_class_update__*.ipynb"))
    assert len(renamed) == 1, sorted(p.name for p in home.iterdir())
    assert BENS_NOTEBOOK_TEXT in renamed[0].read_text()
    assert f"Renamed {home / NEW_CHAPTER} to {renamed[0]}" in output
    assert (home / "my-work" / "notes.md").read_text() == BENS_NOTES


def test_the_learner_whose_file_was_renamed_reads_it_in_the_chapters_first_cell(course):
    home = course["homes"]["ben"]
    (renamed,) = home.glob("10_class_update__*.ipynb")
    outputs, error = course["setup_cells"]["ben"]
    assert error is None and [output.output_type for output in outputs] == ["stream"]
    text = "".join(output.text for output in outputs)
    assert text.startswith(f"Your file {NEW_CHAPTER} was kept as {renamed.name} when the course added its own "
                           f"{NEW_CHAPTER} (update of "), text
    assert text == "".join(found.notice() + "\n" for found in renamed_by_update(home))


def test_a_learner_with_no_renamed_file_sees_nothing_in_the_first_cell(course):
    assert course["setup_cells"]["ana"] == ([], None)


def test_a_deleted_notebook_comes_back(course):
    home = course["homes"]["chloe"]
    assert "00_start_here.ipynb" not in course["on_disk_before"]["chloe"]
    assert nbformat.read(home / "00_start_here.ipynb", as_version=4) == published(course, "00_start_here.ipynb")


def test_no_file_a_learner_had_is_lost(course):
    """Every file each learner had before the update is still there with the same bytes, or a message names it."""
    for name, before in course["on_disk_before"].items():
        home, (_, output) = course["homes"][name], course["again"][name]
        after = files_under(home)
        for path, data in before.items():
            if path == CHAPTER:
                continue  # merged with the update: checked cell by cell above
            if path == NEW_CHAPTER and name == "ben":
                assert "Renamed" in output  # and its bytes are in the renamed file, checked above
                continue
            assert after.get(path) == data, (name, path)
