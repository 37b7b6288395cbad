"""Gradescope (Otter-Grader) and GitHub Classroom builds, and the grading they run (docs/instructors.md).

Fast parts, with no notebook run by Otter: what `make otter` and `make classroom`
write, every Otter test file run by Otter's own test runner on the reference
answer, the stubs and every wrong answer of the catalogue, and the Classroom
command on chapter 02's three kinds of submission. `otter run` on whole chapters
is tests/test_otter_run.py.
"""

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import exercise_answers as answers
import nbformat
import pytest
import yaml
from support import skip_or_fail
from test_wrong_variants import CATALOGUE

import d2lmini.grading as grading
from tools import autograders, editions

REPO = Path(__file__).resolve().parent.parent
CHAPTERS = sorted(path for path in (REPO / "notebooks").glob("0*.ipynb"))
WITH_EXERCISES = [path for path in CHAPTERS if not path.name.startswith("00")]
CHECK_OF = {answers.check_name(check): check for check in answers.public_checks()}


def require_otter():
    """Skip (fail under CI) without Otter-Grader, which `make test` installs (the `grading` extra)."""
    try:
        import otter  # noqa: F401
    except ImportError:
        skip_or_fail("otter-grader missing: run `make install-test`")


@pytest.fixture(scope="module")
def otter_build(tmp_path_factory):
    require_otter()
    out = tmp_path_factory.mktemp("otter")
    return out, autograders.build_otter(CHAPTERS, out)


@pytest.fixture(scope="module")
def classroom_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("classroom")
    return out, autograders.build_classroom(CHAPTERS, out)


def graded(path):
    return editions.graded_exercises(nbformat.read(path, as_version=4), path.name)


# ---- the exercises, from the tags ----

def test_every_check_is_graded_once_with_nbgraders_points():
    found = [exercise for path in CHAPTERS for exercise in graded(path)]
    assert sorted(exercise.check for exercise in found) == sorted(CHECK_OF)
    assert {exercise.points for exercise in found} == {editions.CHECK_POINTS}
    for exercise in found:  # the label is the exercise's number, which the reference answers record
        check = CHECK_OF[exercise.check]
        assert exercise.label == f"Exercise {answers.REFERENCE[check].exercise}"
    assert [e.answer for e in graded(REPO / "notebooks" / "02_masked_softmax.ipynb")] == [
        "masked_mean", "self_attention_weights", "local_causal_mask"]


@pytest.mark.parametrize("source, message", [
    ("ch02.check_masked_mean(masked_mean)\nprint(1)", "must be one call"),
    ("ch02.check_masked_mean(other)", "must be one call, chNN.check_name(masked_mean)"),
    ("check_masked_mean(masked_mean)", "must be one call"),
    ("ch02.check_masked_mean(masked_mean, 3)", "must be one call"),
])
def test_a_check_cell_that_is_not_one_call_on_the_answer_is_refused(source, message):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("### Exercise 2.1"),
        nbformat.v4.new_code_cell("def masked_mean(v):\n    ### BEGIN SOLUTION\n    return v\n    ### END SOLUTION",
                                  metadata={"tags": ["exercise"]}),
        nbformat.v4.new_code_cell(source, metadata={"tags": ["check"]})])
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        editions.graded_exercises(nb, "ch.ipynb")
    assert "ch.ipynb, cell 2" in str(error.value)


# ---- d2lmini.grading ----

def test_grade_names_each_outcome_with_the_checks_own_words():
    right = answers.REFERENCE[CHECK_OF["ch02.check_masked_mean"]].answer
    result = grading.grade("ch02.check_masked_mean", "f", {"f": right})
    assert result.passed and result.feedback.startswith("✓ Exercise 2.1: correct.")

    def stub(values, valid_lens):
        raise NotImplementedError("Exercise 2.1 is not done yet")

    result = grading.grade("ch02.check_masked_mean", "f", {"f": stub})
    assert (result.status, result.feedback) == (grading.NOT_ATTEMPTED, "Exercise 2.1 · not attempted yet: "
                                                "complete `stub` above, run that cell, then this one.")
    result = grading.grade("ch02.check_masked_mean", "masked_mean", {})
    assert result.status == grading.NOT_ATTEMPTED and "`masked_mean` is not defined" in result.feedback

    def broken(values, valid_lens):
        return values.no_such_method()

    result = grading.grade("ch02.check_masked_mean", "f", {"f": broken})
    assert result.status == grading.ERROR
    assert re.fullmatch(r"`f` raised an error \(broken, line \d+\): AttributeError: .*no_such_method.*",
                        result.feedback)


@pytest.mark.parametrize("check, answer, message", [
    ("ch02.masked_mean", "f",
     "check must name a chapter check such as 'ch02.check_masked_mean', got 'ch02.masked_mean'"),
    ("ch02.check_nothing", "f", "check 'ch02.check_nothing' names no check of d2lmini.exercises.ch02"),
    ("ch02.check_masked_mean", "f()", "answer must be the name of the learner's function or class"),
])
def test_grade_refuses_a_check_or_answer_it_cannot_run(check, answer, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        grading.grade(check, answer, {})


# ---- Otter-Grader ----

def otter_results(test_path, env):
    """Run one test file with Otter's own runner on ``env``: (score, message of its one case)."""
    from otter.test_files import create_test_file

    test = create_test_file(str(test_path), None)  # a file, not notebook metadata: no config needed
    test.run(env)
    (case,) = test.test_case_results
    return test.score, case.message


def test_the_otter_build_holds_one_test_per_exercise_and_a_zip_otter_generate_made(otter_build):
    out, folders = otter_build
    assert [folder.name for folder in folders] == [path.stem for path in WITH_EXERCISES]
    for folder, path in zip(folders, WITH_EXERCISES):
        student = nbformat.read(folder / path.name, as_version=4)
        assert "BEGIN SOLUTION" not in nbformat.writes(student)
        expected = {f"tests/{autograders._identifier(e.label)}.py" for e in graded(path)}
        with zipfile.ZipFile(folder / "autograder.zip") as zf:
            names = set(zf.namelist())
            assert {name for name in names if name.startswith("tests/")} == expected
            assert {"run_autograder", "setup.sh", "environment.yml", "otter_config.json",
                    "files/d2lmini/grading.py", "files/d2lmini/exercises/ch02.py",
                    "files/d2lmini/locale/pt_BR/LC_MESSAGES/d2lmini.mo"} <= names
            assert not any("__pycache__" in name for name in names)
            environment = yaml.safe_load(zf.read("environment.yml"))
            assert json.loads(zf.read("otter_config.json")) == {"lang": "python", "show_all_public": True}
        pip = environment["dependencies"][-1]["pip"]
        assert "--extra-index-url https://download.pytorch.org/whl/cpu" in pip and "torch==2.13.0+cpu" in pip
        assert {"numpy>=1.26", "matplotlib>=3.8", "seaborn>=0.13"} <= set(pip)
        assert "otter-grader[grading,plugins]==7.0.0" in pip


@pytest.mark.parametrize("path", WITH_EXERCISES, ids=lambda path: path.stem[:2])
def test_otters_runner_gives_full_marks_to_the_answers_and_none_to_stubs_or_wrong_answers(otter_build, path):
    """Every test file of the chapter, run by Otter on the reference answer, a stub and every catalogued mistake."""
    out, _ = otter_build
    for exercise in graded(path):
        test_path = out / path.stem / "tests" / f"{autograders._identifier(exercise.label)}.py"
        check = CHECK_OF[exercise.check]
        score, message = otter_results(test_path, {exercise.answer: answers.REFERENCE[check].answer})
        assert score == exercise.points, message

        def stub(*args, **kwargs):
            raise NotImplementedError("not done yet")

        score, message = otter_results(test_path, {exercise.answer: stub})
        assert score == 0 and f"{exercise.label} · not attempted yet" in message
        score, message = otter_results(test_path, {})
        assert score == 0 and f"`{exercise.answer}` is not defined" in message
        for name, (wrong, pattern) in CATALOGUE[check].variants.items():
            score, message = otter_results(test_path, {exercise.answer: wrong})
            assert score == 0, f"{exercise.label}, {name}: full marks for a wrong answer"
            assert f"✗ {exercise.label}" in message and "not yet." in message and re.search(pattern, message), (
                f"{exercise.label}, {name}: {pattern!r} not in\n{message}")


# ---- GitHub Classroom ----

def test_each_classroom_template_has_the_notebook_the_package_and_a_valid_workflow(classroom_build):
    out, folders = classroom_build
    assert [folder.name for folder in folders] == [path.stem for path in WITH_EXERCISES]
    for folder, path in zip(folders, WITH_EXERCISES):
        assert "BEGIN SOLUTION" not in (folder / path.name).read_text()
        assert (folder / "d2lmini" / "grading.py").is_file()
        requirements = (folder / "requirements.txt").read_text().splitlines()
        assert "torch==2.13.0+cpu" in requirements and "nbclient>=0.10" in requirements
        workflow = yaml.safe_load((folder / ".github" / "workflows" / "classroom.yml").read_text())
        assert set(workflow) == {"name", "on", "permissions", "jobs"}  # "on" stays a key, not YAML 1.1's True
        assert "push" in workflow["on"]
        assert workflow["permissions"]["checks"] == "write"
        (job,) = workflow["jobs"].values()
        steps = job["steps"]
        assert steps[0]["uses"].startswith("actions/checkout@")
        tests = [step for step in steps if step.get("uses", "").startswith("education/autograding-command-grader@")]
        exercises = graded(path)
        assert len(tests) == len(exercises)
        for step, exercise in zip(tests, exercises):
            assert step["with"]["test-name"] == step["name"] == exercise.label
            assert step["with"]["max-score"] == exercise.points
            assert step["with"]["command"] == (
                f"python -m d2lmini.grading {path.name} {exercise.check} {exercise.answer}")
            assert isinstance(step["with"]["timeout"], int) and 0 < step["with"]["timeout"] <= 60
        reporter = steps[-1]
        assert reporter["uses"].startswith("education/autograding-grading-reporter@")
        ids = [step["id"] for step in tests]
        assert reporter["with"]["runners"] == ",".join(ids) and len(set(ids)) == len(ids)
        assert reporter["env"] == {f"{i.upper()}_RESULTS": f"${{{{steps.{i}.outputs.result}}}}" for i in ids}


def submission(kind, folder):
    """Chapter 02 as a learner pushes it: the student notebook, answered right, left as stubs, or answered wrong.

    A wrong answer is the catalogue's first variant of each exercise, put in by a cell appended to the notebook.
    """
    path = REPO / "notebooks" / "02_masked_softmax.ipynb"
    if kind == "right":
        nb = nbformat.read(path, as_version=4)
    else:
        nb = nbformat.read(folder / path.name, as_version=4)
    if kind == "wrong":
        nb.cells.append(nbformat.v4.new_code_cell(wrong_answers_cell([(e.answer, e.check, 0) for e in graded(path)])))
    target = folder / f"{kind}.ipynb"
    nbformat.write(nb, target)
    return target


def wrong_answers_cell(bindings):
    """A code cell's source that binds each ``(name, check, index)``'s name to that variant of the check's catalogue.

    The notebook's kernel imports the catalogue from tests/, so that a wrong answer is written in one place.
    """
    lines = ["import sys", f"sys.path.insert(0, {str(REPO / 'tests')!r})",
             "from test_wrong_variants import CATALOGUE as _CATALOGUE",
             "from exercise_answers import public_checks as _checks, check_name as _name",
             "_VARIANTS = {_name(c): list(_CATALOGUE[c].variants.values()) for c in _checks()}"]
    lines += [f"{name} = _VARIANTS[{check!r}][{index}][0]" for name, check, index in bindings]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("kind", ["right", "stub", "wrong"])
def test_the_classroom_command_exits_0_iff_the_check_passes_and_prints_its_feedback(classroom_build, kind,
                                                                                     monkeypatch, capsys):
    out, _ = classroom_build
    folder = out / "02_masked_softmax"
    notebook = submission(kind, folder)
    exercise = graded(REPO / "notebooks" / "02_masked_softmax.ipynb")[2]  # 2.3, a mask: no picture, one text
    command = [notebook.name, exercise.check, exercise.answer]
    if kind == "stub":  # in this process, as the coverage of d2lmini counts it; the others as GitHub runs them
        monkeypatch.chdir(folder)
        returncode, stdout = grading._main(command), capsys.readouterr().out
    else:
        run = subprocess.run([sys.executable, "-m", "d2lmini.grading", *command], cwd=folder,
                             capture_output=True, text=True, timeout=300)
        returncode, stdout = run.returncode, run.stdout + run.stderr
    if kind == "right":
        assert returncode == 0, stdout
        assert stdout.startswith("✓ Exercise 2.3: correct.")
    elif kind == "stub":
        assert returncode == 1
        assert stdout.strip() == ("Exercise 2.3 · not attempted yet: complete `local_causal_mask` above, "
                                  "run that cell, then this one.")
    else:
        assert returncode == 1
        pattern = next(iter(CATALOGUE[CHECK_OF[exercise.check]].variants.values()))[1]
        assert stdout.startswith("✗ Exercise 2.3: not yet.") and re.search(pattern, stdout), stdout


@pytest.mark.parametrize("arguments, message", [
    (["missing.ipynb", "ch02.check_masked_mean", "masked_mean"], "notebook: no file missing.ipynb"),
    (["missing.ipynb", "masked_mean", "masked_mean"], "check must name a chapter check"),
    (["missing.ipynb", "ch02.check_masked_mean", "masked mean"], "answer must be the name of the learner's"),
])
def test_the_classroom_command_refuses_a_bad_argument_before_running_anything(arguments, message, tmp_path,
                                                                               monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        grading._main(arguments)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_grade_notebook_says_so_when_the_grading_cell_gives_no_result(tmp_path, monkeypatch):
    """A kernel that cannot import d2lmini (a submission without it beside) is an error, not a grade of 0."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import sys\nsys.modules['d2lmini'] = None")])
    nbformat.write(nb, tmp_path / "broken.ipynb")
    with pytest.raises(RuntimeError, match=r"broken.ipynb gave no result; the grading cell showed: "
                       r"ModuleNotFoundError: No module named 'd2lmini.grading'"):
        grading.grade_notebook(tmp_path / "broken.ipynb", [("ch02.check_masked_mean", "masked_mean")])
