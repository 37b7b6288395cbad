"""`otter run`, Otter-Grader's own local runner (no Docker), on each chapter's autograder zip (docs/instructors.md).

Two runs per chapter, each executing a whole notebook as Gradescope would:

- the instructor notebook (the solution edition), into which one appended cell
  also puts every catalogued wrong answer of every exercise, each under a name
  of its own (``masked_mean__wrong_0``, ...); the zip it is graded with is the
  chapter's, plus one test per wrong answer, written by the same
  ``otter_test`` as the real ones. Every real test gets its points, every
  wrong answer's test 0, with feedback that names the mistake;
- the student notebook of `make otter`, stubs and all: 0 points, each test saying
  "not attempted yet".

Each chapter's two runs take two to three minutes on the 2-core machine, so `make test` runs chapter 02's
alone (every chapter's tests are also run by Otter's test runner in tests/test_autograders.py, without a
notebook's execution); ATTN_OTTER_ALL=1 runs every chapter (22 minutes there, at a load average of 5 to 8).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import nbformat
import pytest
from test_autograders import CHECK_OF, REPO, WITH_EXERCISES, graded, require_otter, wrong_answers_cell
from test_wrong_variants import CATALOGUE

from tools import autograders

RUN = WITH_EXERCISES if os.environ.get("ATTN_OTTER_ALL") else [path for path in WITH_EXERCISES
                                                                if path.stem.startswith("02_")]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    require_otter()
    out = tmp_path_factory.mktemp("otter-run")
    autograders.build_otter(RUN, out)
    return out


def otter_run(zip_path, notebook, out):
    """``otter run`` on one notebook; the results Gradescope would show, by test name."""
    out.mkdir()
    run = subprocess.run([sys.executable, "-m", "otter", "run", "--no-logo", "-a", str(zip_path), "-o", str(out),
                          str(notebook)], capture_output=True, text=True, timeout=540)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    tests = {test["name"]: test for test in results["tests"]}
    assert "Autograder Failed" not in tests, tests
    summary = tests.pop("Public Tests")  # Otter's summary of every test, before the tests themselves
    assert summary["visibility"] == "visible"
    for test in tests.values():
        assert test["visibility"] == "visible", test  # every test is public: the learner sees its feedback
    return tests


@pytest.mark.parametrize("path", RUN, ids=lambda path: path.stem[:2])
def test_otter_run_grades_the_solution_full_wrong_answers_and_stubs_zero(built, path, tmp_path):
    folder, exercises = built / path.stem, graded(path)

    # The solution edition, with every catalogued wrong answer beside the right ones.
    wrong = []  # (test's exercise, the variant's regex)
    for exercise in exercises:
        for index, (name, (_, pattern)) in enumerate(CATALOGUE[CHECK_OF[exercise.check]].variants.items()):
            wrong.append((exercise._replace(label=f"{exercise.label} · {name}",
                                            answer=f"{exercise.answer}__wrong_{index}"), pattern, index))
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(wrong_answers_cell(
        [(test.answer, test.check, index) for test, _, index in wrong])))
    solution = tmp_path / "solution" / path.name
    solution.parent.mkdir()
    nbformat.write(nb, solution)
    zip_path = tmp_path / "with-wrong-answers.zip"
    shutil.copy(folder / "autograder.zip", zip_path)
    with zipfile.ZipFile(zip_path, "a") as zf:
        for number, (test, _, _) in enumerate(wrong):
            zf.writestr(f"tests/wrong_{number}.py", autograders.otter_test(test))
    results = otter_run(zip_path, solution, tmp_path / "solution-results")
    assert len(results) == len(exercises) + len(wrong)
    for exercise in exercises:
        result = results[exercise.label]
        assert result["score"] == result["max_score"] == exercise.points, result["output"]
        assert f"{exercise.label}: the check passed." in result["output"]
    for test, pattern, _ in wrong:
        result = results[test.label]
        assert result["score"] == 0 and result["max_score"] == test.points, f"{test.label}: full marks"
        assert re.search(pattern, result["output"]), f"{test.label}: {pattern!r} not in\n{result['output']}"

    # The student edition as `make otter` hands it out.
    results = otter_run(folder / "autograder.zip", folder / path.name, tmp_path / "student-results")
    assert set(results) == {exercise.label for exercise in exercises}
    for exercise in exercises:
        result = results[exercise.label]
        assert result["score"] == 0 and result["max_score"] == exercise.points
        number = exercise.label.split()[-1]
        assert re.search(rf"Exercise {re.escape(number)} · not attempted yet: complete `{exercise.answer}` above",
                         result["output"]), result["output"]


def test_the_otter_run_and_the_catalogue_agree_on_what_a_chapter_holds():
    """Every catalogued check is a chapter's exercise, so the runs above leave no wrong answer out."""
    assert {CHECK_OF[e.check] for path in WITH_EXERCISES for e in graded(path)} == set(CATALOGUE)
    assert (REPO / "notebooks" / "00_start_here.ipynb").exists() and not graded(REPO / "notebooks" /
                                                                                "00_start_here.ipynb")
