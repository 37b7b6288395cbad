"""The published learner edition (tools/learner_repo.py, `make learner-repo`) and nbgitpuller's merge rules.

The repository holds what a learner gets at stable paths, no answer, and grows
by one commit per build, never needing a force-push. The merge rules that
docs/hub.md documents are checked here with nbgitpuller's own GitPuller, on
plain files, case by case; tests/test_hub_class.py runs the class cycle
through a real hub.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from course_repo import commit, new_course, pull
from leak_search import leaks

from tools import class_hub, learner_repo
from tools.editions import tags

REPO = Path(__file__).resolve().parent.parent

CHAPTERS = learner_repo.chapter_sources()
TRANSLATED = learner_repo.translated_sources()


def git(folder, *args):
    return learner_repo.git(folder, *args)


def commits(folder):
    return git(folder, "rev-list", "HEAD").split()


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    out = tmp_path_factory.mktemp("published") / "attention-notebooks"
    learner_repo.build_learner_repo(CHAPTERS + TRANSLATED, out)
    return out


def test_every_chapter_is_at_its_stable_path_on_the_learner_branch(published):
    assert git(published, "rev-parse", "--abbrev-ref", "HEAD") == "learner"
    tracked = set(git(published, "ls-files").splitlines())
    assert {path.name for path in CHAPTERS} <= tracked
    assert {"d2lmini/__init__.py", "requirements.txt", "requirements-model.txt", "binder/requirements.txt",
            "binder/postBuild", "binder/runtime.txt", "binder/overrides.json", "README.md",
            "my-work/README.md"} <= tracked
    assert not any("__pycache__" in path or path.endswith(".pyc") for path in tracked)
    # The Portuguese chapters in pt/, where their Colab badges point (tools/colab.py).
    assert len(TRANSLATED) == len(CHAPTERS) and {f"pt/{path.name}" for path in TRANSLATED} <= tracked


def test_every_notebook_of_the_edition_imports_d2lmini_from_its_own_folder_on_binder(published):
    # postBuild puts the repository's root on the path, for pt/ and my-work/ as for the root.
    command = next(line for line in (published / "binder" / "postBuild").read_text().splitlines()
                   if line.startswith("echo "))
    site = published.parent / "site-packages"
    site.mkdir()
    subprocess.run(["bash", "-c", command.replace("$(python -c 'import sysconfig; print(sysconfig.get_paths()"
                                                  "[\"purelib\"])')", str(site))],
                   cwd=published, check=True)
    assert (site / "attention-notebooks.pth").read_text().strip() == str(published)
    for folder in ("pt", "my-work"):
        found = subprocess.run([sys.executable, "-S", "-c", "import site, sys; site.addsitedir(sys.argv[1]); "
                                "import importlib.util; print(importlib.util.find_spec('d2lmini').origin)", str(site)],
                               cwd=published / folder, capture_output=True, text=True, check=True,
                               env={name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
                               ).stdout.strip()
        assert found == str(published / "d2lmini" / "__init__.py")


def test_the_chapters_are_the_learner_edition_with_no_answer(published):
    for path in CHAPTERS:
        expected = learner_repo.learner_notebook(nbformat.read(path, as_version=4), path.name)
        assert nbformat.read(published / path.name, as_version=4) == expected
    assert leaks(published, {path.name: path for path in CHAPTERS}) == []


def test_the_environment_pins_torch_and_the_model_and_adds_what_a_hub_needs(published):
    assert (published / "requirements.txt").read_text() == (REPO / "requirements.txt").read_text()
    assert (published / "requirements-model.txt").read_text() == (REPO / "requirements-model.txt").read_text()
    binder = (published / "binder" / "requirements.txt").read_text()
    assert "torch==2.13.0+cpu" in binder and "nbgitpuller>=1.2" in binder and "jupyterhub>=5" in binder
    assert (published / "binder" / "postBuild").stat().st_mode & 0o111


def test_a_rebuild_adds_one_commit_only_when_something_changed(tmp_path):
    out = tmp_path / "repo"
    first = learner_repo.build_learner_repo(CHAPTERS[:2], out)
    assert learner_repo.build_learner_repo(CHAPTERS[:2], out) is None
    second = learner_repo.build_learner_repo(CHAPTERS[:3], out)
    assert commits(out) == [second, first]
    assert git(out, "rev-parse", "HEAD~1") == first


def test_from_starts_on_top_of_the_published_branch(published, tmp_path):
    out = tmp_path / "fresh-checkout"
    head = commits(published)[0]
    new = learner_repo.build_learner_repo(CHAPTERS[:1], out, source=published)
    assert commits(out)[1:] == commits(published) and commits(out)[0] == new
    assert git(out, "rev-parse", "HEAD~1") == head


def test_from_refuses_a_history_that_would_need_a_force_push(published, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    learner_repo.build_learner_repo(CHAPTERS[:1], elsewhere)
    with pytest.raises(ValueError, match=r"--from .*not an ancestor or descendant.*force-push"):
        learner_repo.build_learner_repo(CHAPTERS[:1], elsewhere, source=published)


@pytest.mark.parametrize("case, expected", [
    ("not-a-notebook", r"notebooks: expected existing \.ipynb files, got '.*README\.md'"),
    ("non-git-folder", r"--out .* exists and is not a git repository"),
    ("uncommitted", r"--out .* has uncommitted changes"),
    ("missing-branch", r"--from .*: could not clone its branch 'learner'"),
])
def test_bad_input_is_refused_with_the_argument_and_what_was_expected(case, expected, tmp_path):
    out, notebooks, source = tmp_path / "out", CHAPTERS[:1], None
    if case == "not-a-notebook":
        notebooks = [REPO / "README.md"]
    elif case == "non-git-folder":
        out.mkdir()
        (out / "work.txt").write_text("someone's file")
    elif case == "uncommitted":
        learner_repo.build_learner_repo(CHAPTERS[:1], out)
        (out / "README.md").write_text("edited by hand")
    else:
        source = tmp_path / "empty"
        source.mkdir()
        git(source, "init", "--quiet", "--initial-branch", "main")
    with pytest.raises(ValueError, match=expected):
        learner_repo.build_learner_repo(notebooks, out, source=source)
    if case == "non-git-folder":
        assert (out / "work.txt").read_text() == "someone's file"


def test_the_command_line_reports_the_new_commit_and_an_unchanged_edition(tmp_path, capsys):
    out = tmp_path / "repo"
    learner_repo.main(["--out", str(out), str(CHAPTERS[0])])
    learner_repo.main(["--out", str(out), str(CHAPTERS[0])])
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith(f"{out}: branch learner at ") and printed[1].endswith("already current")


def test_the_nbgitpuller_link_opens_a_chapter_in_the_repositorys_folder():
    link = class_hub.nbgitpuller_link("http://127.0.0.1:8000/", "https://github.com/org/attention-notebooks")
    assert link == ("http://127.0.0.1:8000/hub/user-redirect/git-pull?repo=https%3A%2F%2Fgithub.com%2Forg%2F"
                    "attention-notebooks&branch=learner&urlpath=lab%2Ftree%2Fattention-notebooks%2F"
                    "00_start_here.ipynb")


@pytest.mark.parametrize("kwargs, expected", [
    ({"password": "short"}, r"password: expected a password of at least 8 characters, got 5 characters"),
    ({"admin_password": "x" * 20}, r"admin_password: expected a password of at least 32 characters, got 20"),
    ({"port": 70000}, r"port: expected an integer from 1 to 65535, got 70000"),
])
def test_the_hub_refuses_weak_passwords_and_bad_ports_before_starting(kwargs, expected, tmp_path):
    with pytest.raises(ValueError, match=expected):
        class_hub.Hub(tmp_path, **{"port": 8000, **kwargs})
    assert not (tmp_path / "jupyterhub.log").exists()


# nbgitpuller's rules, one case each: the course's repository, a learner's clone, one update.

CHAPTER = "".join(f"line {i}\n" for i in range(1, 13))


def test_merge_rule_a_learners_edit_and_a_course_change_elsewhere_in_the_file_both_stay(tmp_path):
    course = new_course(tmp_path, {"ch.txt": CHAPTER})
    clone = tmp_path / "home" / "course"
    pull(course, clone)
    (clone / "ch.txt").write_text(CHAPTER.replace("line 10\n", "my answer\n"))
    commit(course, {"ch.txt": CHAPTER.replace("line 2\n", "line 2, corrected\n")})
    pull(course, clone)
    assert (clone / "ch.txt").read_text() == CHAPTER.replace("line 10\n", "my answer\n").replace(
        "line 2\n", "line 2, corrected\n")


def test_merge_rule_on_the_same_lines_the_learners_lines_win_and_the_course_fix_is_dropped(tmp_path):
    course = new_course(tmp_path, {"ch.txt": CHAPTER})
    clone = tmp_path / "home" / "course"
    pull(course, clone)
    (clone / "ch.txt").write_text(CHAPTER.replace("line 6\n", "my answer\n"))
    commit(course, {"ch.txt": CHAPTER.replace("line 6\n", "line 6, corrected\n").replace("line 1\n", "title\n")})
    pull(course, clone)
    assert (clone / "ch.txt").read_text() == CHAPTER.replace("line 6\n", "my answer\n").replace("line 1\n", "title\n")


def test_merge_rule_an_untracked_file_in_the_way_of_a_new_one_is_renamed_with_a_message(tmp_path):
    course = new_course(tmp_path, {"ch.txt": CHAPTER})
    clone = tmp_path / "home" / "course"
    pull(course, clone)
    (clone / "10_new.txt").write_text("mine")
    (clone / "my-work").mkdir()
    (clone / "my-work" / "notes.txt").write_text("my notes")
    commit(course, {"10_new.txt": "the course's"})
    output = pull(course, clone)
    renamed = list(clone.glob("10_new__*.txt"))
    assert [path.read_text() for path in renamed] == ["mine"] and f"Renamed {clone / '10_new.txt'}" in output
    assert (clone / "10_new.txt").read_text() == "the course's"
    assert (clone / "my-work" / "notes.txt").read_text() == "my notes"


def test_merge_rule_a_deleted_file_comes_back_and_an_edited_one_the_course_deleted_stays(tmp_path):
    course = new_course(tmp_path, {"a.txt": "a\n", "b.txt": "b\n"})
    clone = tmp_path / "home" / "course"
    pull(course, clone)
    (clone / "a.txt").unlink()
    (clone / "b.txt").write_text("my b\n")
    subprocess.run(["git", "rm", "--quiet", "b.txt"], cwd=course, check=True)
    commit(course, {"c.txt": "c\n"})
    pull(course, clone)
    assert (clone / "a.txt").read_text() == "a\n"
    assert (clone / "b.txt").read_text() == "my b\n"


# The same rules on a real chapter: a learner answered Exercise 2.1 wrong, ran its check and saved.

LEARNER_LINE = "    return values.mean(1)  # padding included\n"


def _chapter_02():
    return learner_repo.learner_notebook(nbformat.read(REPO / "notebooks" / "02_masked_softmax.ipynb", as_version=4))


def _exercise(nb):
    return next(i for i, cell in enumerate(nb.cells) if "exercise" in tags(cell))


def _learner_answers(nb):
    index = _exercise(nb)
    lines = nb.cells[index].source.splitlines(keepends=True)
    stub = next(i for i, line in enumerate(lines) if "# YOUR CODE HERE" in line)
    nb.cells[index].source = "".join(lines[:stub] + [LEARNER_LINE] + lines[stub + 2:])
    nb.cells[index + 1].execution_count = 7
    nb.cells[index + 1].outputs = [nbformat.v4.new_output("error", ename="ExerciseError", evalue="not yet",
                                                          traceback=["✗ Exercise 2.1: not yet."])]


def _insert_a_cell_after_the_exercise(nb):
    """Each update returns a text, and whether the text is there (True) or gone (False) once it arrived."""
    nb.cells.insert(_exercise(nb) + 1, nbformat.v4.new_markdown_cell("A new hint from the course."))
    return "A new hint from the course.", True


def _delete_the_cell_before_the_exercise(nb):
    deleted = nb.cells.pop(_exercise(nb) - 1)
    return deleted.source, False


def _fix_the_check_cell(nb):
    nb.cells[_exercise(nb) + 1].source += "  # the course's fix"
    return "# the course's fix", True


def _reword_the_docstring(nb):
    cell = nb.cells[_exercise(nb)]
    cell.source = cell.source.replace('"""Mean', '"""The mean')
    return '"""The mean', True


def _reword_the_stub(nb):
    cell = nb.cells[_exercise(nb)]
    cell.source = cell.source.replace("is not done yet", "is not finished yet")
    return "is not finished yet", True


def _rerun_the_check_cell(nb):
    check = nb.cells[_exercise(nb) + 1]
    check.execution_count = 3
    check.outputs = [nbformat.v4.new_output("stream", name="stdout", text="the course's own run\n")]
    return "the course's own run", True


@pytest.mark.parametrize("update, arrives", [
    (_insert_a_cell_after_the_exercise, True),
    (_delete_the_cell_before_the_exercise, True),
    (_fix_the_check_cell, True),  # the learner's saved outputs of that cell are other lines
    (_reword_the_docstring, False),  # the line just above the learner's: theirs wins
    (_reword_the_stub, False),  # the learner's own lines
    (_rerun_the_check_cell, False),  # the learner's saved outputs win
])
def test_merge_rule_on_a_chapter_the_learners_answer_stays_and_the_notebook_stays_valid(update, arrives, tmp_path):
    original = _chapter_02()
    text = lambda nb: nbformat.writes(nb) + "\n"  # noqa: E731
    course = new_course(tmp_path, {"ch02.ipynb": text(original)})
    clone = tmp_path / "home" / "course"
    pull(course, clone)
    learners = _chapter_02()
    _learner_answers(learners)
    (clone / "ch02.ipynb").write_text(text(learners))
    updated = _chapter_02()
    marker, present_once_arrived = update(updated)
    commit(course, {"ch02.ipynb": text(updated)})
    pull(course, clone)

    merged = nbformat.read(clone / "ch02.ipynb", as_version=4)
    nbformat.validate(merged)
    index = _exercise(merged)
    assert LEARNER_LINE in merged.cells[index].source
    check = next(cell for cell in merged.cells[index:] if "check" in tags(cell))
    assert check.outputs == learners.cells[_exercise(learners) + 1].outputs
    assert len(merged.cells) == len(updated.cells)
    present = any(marker in cell.source or marker in json.dumps(cell.get("outputs", [])) for cell in merged.cells)
    assert present is (present_once_arrived if arrives else not present_once_arrived)
