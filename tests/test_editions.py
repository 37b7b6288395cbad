"""Instructor tooling (tools/editions.py): nbgrader metadata, student build, solution key.

The builds run on a fixture chapter that follows the exercise convention
(tests/fixtures/exercise_chapter.py, with its checks in fixture_checks.py)
and on every notebooks/*.ipynb, so each chapter is covered once it lands.
"""

import copy
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
from jupytext.cli import jupytext as jupytext_cli
from leak_search import CHAPTERS, FIXTURE, FIXTURES, leaks, public_text, read, solution_lines
from nbclient import NotebookClient
from support import tagged

from tools import editions

REPO = Path(__file__).resolve().parent.parent

TOOL = REPO / "tools" / "editions.py"
NAMES = [FIXTURE] + [path.name for path in CHAPTERS]
STUB_ERROR = "is not done yet: replace this raise with your code for"
NOT_ATTEMPTED = re.compile(r"ExerciseNotAttempted: Exercise \d+\.\d+ · not attempted yet: complete `\w+` above, "
                           r"run that cell, then this one\.")


def code_cell(source, *tags):
    return nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {})


def notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


# ---------------------------------------------------------------- stubs, by hand

def test_a_solution_region_becomes_a_stub_indented_like_its_markers():
    source = ('def kernel(u):\n'
              '    """Doc."""\n'
              '    ### BEGIN SOLUTION\n'
              '    inside = u.abs() < 1\n'
              '    return inside * (1 - u ** 2)\n'
              '    ### END SOLUTION\n')
    assert editions.strip_solutions(source, "Exercise 1.1", "cell") == (
        'def kernel(u):\n'
        '    """Doc."""\n'
        '    # YOUR CODE HERE\n'
        '    raise NotImplementedError("Exercise 1.1 is not done yet: replace this raise with your '
        'code for kernel()")\n')


def test_each_region_gets_its_own_stub_naming_the_method_it_sits_in():
    source = ("class Pool:\n"
              "    def forward(self, x):\n"
              "        y = x + 1\n"
              "        ### BEGIN SOLUTION\n"
              "        return y * 2\n"
              "        ### END SOLUTION\n"
              "\n"
              "def scale(d):\n"
              "    ### BEGIN SOLUTION\n"
              "    return d ** -0.5\n"
              "    ### END SOLUTION")
    lines = editions.strip_solutions(source, "Exercise 5.2", "cell").splitlines()
    assert lines[2:5] == ["        y = x + 1", "        # YOUR CODE HERE",
                          '        raise NotImplementedError("Exercise 5.2 is not done yet: replace this '
                          'raise with your code for Pool.forward()")']
    assert lines[-1] == ('    raise NotImplementedError("Exercise 5.2 is not done yet: replace this raise '
                         'with your code for scale()")')
    assert "return y * 2" not in lines and "    return d ** -0.5" not in lines


@pytest.mark.parametrize("source, message", [
    ("def f(x):\n    ### BEGIN SOLUTION\n    return x\n", r"line 2: '### BEGIN SOLUTION' is never closed"),
    ("def f(x):\n    return x\n    ### END SOLUTION\n", r"line 3: '### END SOLUTION' without a '### BEGIN"),
    ("def f(x):\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n",
     r"line 3: a second '### BEGIN SOLUTION' opens before the one on line 2 is closed"),
    ("### BEGIN SOLUTION\nanswer = 42\n### END SOLUTION\n", r"line 1: a solution region must sit inside a function"),
    ("def f(x):\n    return x\n", r"has no '### BEGIN SOLUTION' region"),
    ("def f(x):\n### BEGIN SOLUTION\n    return x\n### END SOLUTION\n",
     r"without its solution the cell does not parse .*indent each marker like the body"),
    ("def f(x):\n    ### BEGIN SOLUTION\n    return x +\n    ### END SOLUTION\n", r"line 3 does not parse"),
])
def test_a_malformed_exercise_cell_is_refused_with_its_place_and_the_fix(source, message):
    with pytest.raises(ValueError, match=r"ch\.ipynb, cell 4.*" + message):
        editions.strip_solutions(source, "Exercise 1.1", "ch.ipynb, cell 4")


def test_markers_outside_an_exercise_cell_are_refused():
    nb = notebook(nbformat.v4.new_markdown_cell("Answers go between ### BEGIN SOLUTION and the end."))
    with pytest.raises(ValueError, match=r"ch.ipynb, cell 0: solution markers outside a cell tagged 'exercise'"):
        editions.student_notebook(nb, "ch.ipynb")
    with pytest.raises(ValueError, match="solution markers outside"):
        editions.add_nbgrader_metadata(nb, "ch.ipynb")


def test_a_check_cell_needs_an_exercise_before_it():
    with pytest.raises(ValueError, match=r"cell 0: a 'check' cell must be a code cell after an exercise cell"):
        editions.add_nbgrader_metadata(notebook(code_cell("check_it()", "check")), "ch.ipynb")


# ---------------------------------------------------------------- nbgrader metadata

def test_nbgrader_metadata_follows_the_tags():
    nb = notebook(
        code_cell("import math"),
        code_cell("def kernel(u):\n    ### BEGIN SOLUTION\n    return u\n    ### END SOLUTION", "exercise"),
        code_cell("ch01.check_kernel(kernel)", "check"),
        code_cell("ch01.check_kernel_again(kernel)", "check"),
        code_cell("print(1)", "nbval-ignore-output"),
    )
    nb.cells[4].metadata["nbgrader"] = {"grade": True}  # stale: the tag is gone
    editions.add_nbgrader_metadata(nb)
    common = {"schema_version": 3, "task": False}
    assert [cell.metadata.get("nbgrader") for cell in nb.cells] == [
        None,
        {**common, "grade": False, "solution": True, "locked": False, "grade_id": "kernel"},
        {**common, "grade": True, "solution": False, "locked": True, "points": 1, "grade_id": "kernel_check"},
        {**common, "grade": True, "solution": False, "locked": True, "points": 1, "grade_id": "kernel_check_2"},
        None,
    ]
    assert editions.add_nbgrader_metadata(copy.deepcopy(nb)) == nb  # a second run changes nothing


@pytest.mark.parametrize("path", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_every_chapter_carries_the_nbgrader_metadata_of_its_tags(path):
    stored = read(path)
    expected = editions.add_nbgrader_metadata(copy.deepcopy(stored), path.name)
    assert [c.metadata.get("nbgrader") for c in stored.cells] == \
        [c.metadata.get("nbgrader") for c in expected.cells], f"{path.name}: run make notebooks"
    assert "nbgrader" not in path.with_suffix(".py").read_text(), "nbgrader metadata belongs in the .ipynb only"


def test_jupytext_keeps_nbgrader_metadata_in_the_ipynb_and_out_of_the_py(tmp_path):
    source = tmp_path / "ch.py"
    source.write_text((FIXTURES / "exercise_chapter.py").read_text().replace(
        '"""max(1 - u**2, 0), elementwise."""', '"""max(1 - u**2, 0), elementwise (edited)."""'))
    nb = editions.add_nbgrader_metadata(jupytext.read(FIXTURES / "exercise_chapter.py"))
    nbformat.write(nb, tmp_path / "ch.ipynb")
    assert jupytext_cli(["--quiet", "--update", "--to", "ipynb", str(source)]) == 0
    updated = read(tmp_path / "ch.ipynb")
    assert "(edited)" in updated.cells[tagged(updated, "exercise")[0][0]].source
    assert [c.metadata.get("nbgrader") for c in updated.cells] == [c.metadata.get("nbgrader") for c in nb.cells]
    assert "nbgrader" not in jupytext.writes(updated, fmt="py:percent")


# ---------------------------------------------------------------- the student build

def _fingerprint():
    """Hashes of every file in notebooks/, and git's view of them."""
    files = {p.relative_to(REPO).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted((REPO / "notebooks").rglob("*")) if p.is_file()}
    status = subprocess.run(["git", "status", "--porcelain", "--", "notebooks"], cwd=REPO,
                            capture_output=True, text=True)
    return files, status.stdout


@pytest.fixture(scope="session")
def sources(tmp_path_factory):
    """Instructor notebooks by file name: the fixture, built as make notebooks builds one, and every chapter."""
    folder = tmp_path_factory.mktemp("instructor")
    nb = editions.add_nbgrader_metadata(jupytext.read(FIXTURES / "exercise_chapter.py"), FIXTURE)
    nbformat.write(nb, folder / FIXTURE)
    shutil.copy(FIXTURES / "fixture_checks.py", folder)
    return {FIXTURE: folder / FIXTURE, **{path.name: path for path in CHAPTERS}}


@pytest.fixture(scope="session")
def build(sources, tmp_path_factory):
    """Run the student build as `make student` does; record notebooks/ before and after."""
    out = tmp_path_factory.mktemp("build") / "student"
    before = _fingerprint()
    subprocess.run([sys.executable, str(TOOL), "student", "--out", str(out), *map(str, sources.values())],
                   check=True, cwd=REPO)
    after = _fingerprint()
    shutil.copy(FIXTURES / "fixture_checks.py", out)  # the fixture's stand-in for d2lmini.exercises.chNN
    return {"out": out, "before": before, "after": after}


def test_the_build_leaves_the_instructor_sources_unchanged(build):
    assert build["after"] == build["before"]


def test_the_build_writes_one_notebook_per_chapter_with_what_they_need_to_run(build):
    out = build["out"]
    assert sorted(path.name for path in out.glob("*.ipynb")) == sorted(NAMES)
    package = sorted(p.relative_to(REPO / "d2lmini") for p in (REPO / "d2lmini").rglob("*.py"))
    assert sorted(p.relative_to(out / "d2lmini") for p in (out / "d2lmini").rglob("*.py")) == package
    assert all((out / "d2lmini" / p).read_bytes() == (REPO / "d2lmini" / p).read_bytes() for p in package)
    assert (out / "requirements.txt").read_text() == (REPO / "requirements.txt").read_text()
    assert "import d2lmini" in (out / "README.md").read_text()


def test_the_build_refuses_to_write_over_its_sources(sources):
    with pytest.raises(ValueError, match="holds the notebooks being read"):
        editions.build_student([sources[FIXTURE]], sources[FIXTURE].parent)


def test_the_command_line_reports_a_broken_notebook_in_one_line(tmp_path):
    nb = notebook(code_cell("def f(x):\n    ### BEGIN SOLUTION\n    return x\n", "exercise"))
    nbformat.write(nb, tmp_path / "broken.ipynb")
    with pytest.raises(SystemExit) as exit_:  # sys.exit with a message: printed to stderr, status 1
        editions.main(["student", "--out", str(tmp_path / "out"), str(tmp_path / "broken.ipynb")])
    assert exit_.value.code == ("error: broken.ipynb, cell 0, line 2: '### BEGIN SOLUTION' is never closed "
                                "by '### END SOLUTION'")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", NAMES)
def test_a_student_notebook_has_stubs_and_no_outputs_pairing_or_grading_metadata(build, sources, name):
    original, student = read(sources[name]), read(build["out"] / name)
    assert "jupytext" not in student.metadata and "widgets" not in student.metadata
    assert len(student.cells) == len(original.cells)
    for index, (before, after) in enumerate(zip(original.cells, student.cells)):
        assert "nbgrader" not in after.metadata and after.metadata.get("tags") == before.metadata.get("tags")
        if after.cell_type == "code":
            assert after.outputs == [] and after.execution_count is None
        if "exercise" in editions.tags(after):
            regions = editions.solution_regions(before.source, name)
            assert after.source.count(editions.STUB_COMMENT) == len(regions), f"cell {index}"
            assert after.source.count("raise NotImplementedError(") == len(regions), f"cell {index}"
        else:
            assert after.source == before.source, f"cell {index} changed but is no exercise"
    assert "SOLUTION" not in json.dumps(student)


def test_the_fixture_has_solution_lines_a_leak_search_can_find(sources):
    public = public_text(sources)
    regions = list(solution_lines(read(sources[FIXTURE])))
    assert len(regions) == 4
    assert all(any(line not in public for line in region) for region in regions)


def test_no_solution_text_leaks_into_the_student_build(build, sources):
    assert leaks(build["out"], sources) == []


def test_the_leak_search_finds_a_solution_line_pasted_into_a_markdown_cell(build, sources, tmp_path):
    leaky = read(build["out"] / FIXTURE)
    leaky.cells[0].source += "\n    return torch.where(inside, 1 - u * u, torch.zeros_like(u))"
    nbformat.write(leaky, tmp_path / FIXTURE)
    assert leaks(tmp_path, sources) == [(FIXTURE, "return torch.where(inside, 1 - u * u, torch.zeros_like(u))")]


def _fill_stubs(student_source, instructor_source):
    """Put the instructor's solution regions back in place of the student stubs."""
    answer_lines = instructor_source.splitlines()
    answers = [answer_lines[begin : end + 1]
               for begin, end in editions.solution_regions(instructor_source, "")]
    lines, filled = student_source.splitlines(), []
    while lines:
        if lines[0].strip() == editions.STUB_COMMENT and len(lines) > 1 and STUB_ERROR in lines[1]:
            filled += answers.pop(0)
            lines = lines[2:]
        else:
            filled.append(lines.pop(0))
    assert answers == [], "more solution regions than stubs"
    return "\n".join(filled) + ("\n" if student_source.endswith("\n") else "")


def _errors(cell):
    return [f"{out.ename}: {out.evalue}" for out in cell.outputs if out.output_type == "error"]


def _tracebacks(cell):
    return [out.traceback for out in cell.outputs if out.output_type == "error"]


def _stdout(cell):
    return "".join(out.text for out in cell.outputs if out.output_type == "stream" and out.name == "stdout")


def _run_student_notebook(student_path, instructor_path):
    """Run a student notebook cell by cell, errors allowed; return (problems, number of checks).

    Each check must fail, saying in one line that the exercise is not attempted,
    every other cell must succeed. Right after each failing check comes the
    round trip: the exercise cell with its reference answers put back (it must
    equal the instructor's cell), then the check again, which must pass; then
    the stub again, so the rest of the notebook runs as a learner's would.
    """
    student, original = read(student_path), read(instructor_path)
    client = NotebookClient(student, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(student_path.parent)}})
    problems, checks, exercise = [], 0, None
    with client.setup_kernel():
        for index, cell in enumerate(student.cells):
            if cell.cell_type != "code":
                continue
            client.execute_cell(cell, index)
            errors = _errors(cell)
            if "check" not in editions.tags(cell):
                if errors:
                    problems.append(f"cell {index} should run but raised {errors}")
                if "exercise" in editions.tags(cell):
                    exercise = index
                continue
            checks += 1
            if len(errors) != 1 or not NOT_ATTEMPTED.fullmatch(errors[0]) or len(_tracebacks(cell)[0]) != 1:
                problems.append(f"check cell {index} should fail with a one-line ExerciseNotAttempted, got "
                                f"{errors} shown as {_tracebacks(cell)}")
            filled = nbformat.v4.new_code_cell(_fill_stubs(student.cells[exercise].source,
                                                           original.cells[exercise].source))
            if filled.source != original.cells[exercise].source:
                problems.append(f"cell {exercise} with its answers back differs from the instructor's")
            check_again, stub_again = copy.deepcopy(cell), copy.deepcopy(student.cells[exercise])
            for step in (filled, check_again, stub_again):
                client.execute_cell(step, index)
            if _errors(filled) or _errors(check_again) or not _stdout(check_again).startswith("✓"):
                problems.append(f"check cell {index} should pass with the reference answer, got "
                                f"{_errors(filled) + _errors(check_again) or _stdout(check_again)!r}")
    return problems, checks


def test_the_fixture_student_notebook_runs_through_with_only_its_checks_failing_until_the_answers_return(
        build, sources):
    """The round trip in a real kernel, on the fixture chapter. Every chapter's learner
    edition (whose code is the student build's) runs in tests/test_binder.py, and every
    chapter's reference answers pass their checks under nbval (the next two tests)."""
    problems, checks = _run_student_notebook(build["out"] / FIXTURE, sources[FIXTURE])
    assert problems == [], "\n".join(problems)
    assert checks == len(tagged(read(sources[FIXTURE]), "check")) == 3


@pytest.mark.parametrize("name", NAMES)
def test_each_stub_with_its_answers_put_back_is_the_instructor_cell(build, sources, name):
    student, original = read(build["out"] / name), read(sources[name])
    for index, cell in tagged(student, "exercise"):
        assert _fill_stubs(cell.source, original.cells[index].source) == original.cells[index].source, index


@pytest.mark.parametrize("path", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_every_check_of_a_stored_chapter_passed_with_the_reference_answer(path):
    """The stored outputs are a fresh run's (strict nbval compares them): each check printed its ✓."""
    for index, cell in tagged(read(path), "check"):
        assert _errors(cell) == [] and _stdout(cell).startswith("✓"), f"{path.name}, cell {index}"


# ---------------------------------------------------------------- the solution key

def test_the_solution_key_is_executed_with_every_check_passing(sources, tmp_path):
    shutil.copy(FIXTURES / "fixture_checks.py", tmp_path)
    written = editions.build_solutions([sources[FIXTURE]], tmp_path)
    assert [path.name for path in written] == [FIXTURE, FIXTURE.replace(".ipynb", ".html")]
    key = read(tmp_path / FIXTURE)
    assert "jupytext" not in key.metadata
    assert [_stdout(cell) for _, cell in tagged(key, "check")] == [
        "✓ Exercise 9.1: correct. Zero outside |u| < 1, a parabola inside.\n",
        "✓ Exercise 9.2: correct. Padding keys get exactly zero weight.\n",
        "✓ Exercise 9.3: correct. Your attention equals d2lmini.DotProductAttention.\n",
    ]
    html = (tmp_path / FIXTURE.replace(".ipynb", ".html")).read_text()
    assert "Exercise 9.3: correct." in html and "BEGIN SOLUTION" in html


# ---------------------------------------------------------------- nbgrader itself

def test_nbgrader_generate_assignment_releases_every_notebook_without_solutions(sources, tmp_path):
    pytest.importorskip("nbgrader", reason="nbgrader comes with the test extra: pip install -e '.[test]'")
    from nbgrader.api import Gradebook

    assignment = tmp_path / "source" / "attention"
    assignment.mkdir(parents=True)
    for path in [*sources.values(), FIXTURES / "fixture_checks.py"]:
        shutil.copy(path, assignment)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", "attention",
                             f"--CourseDirectory.root={tmp_path}"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr

    release = tmp_path / "release" / "attention"
    assert sorted(path.name for path in release.glob("*.ipynb")) == sorted(NAMES)
    assert leaks(release, sources) == []
    total_checks = 0
    for name in NAMES:
        released = read(release / name)
        assert "SOLUTION" not in json.dumps(released)
        for _, cell in tagged(released, "exercise"):
            assert "# YOUR CODE HERE\n" in cell.source and "raise NotImplementedError()" in cell.source
        for _, cell in tagged(released, "check"):
            assert cell.metadata.nbgrader["locked"] and len(cell.metadata.nbgrader["checksum"]) == 32
        total_checks += len(tagged(released, "check"))
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        assert gradebook.find_assignment("attention").max_score == total_checks


def test_a_stub_speaks_the_language_of_its_exercise_label():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n"
    assert editions.strip_solutions(source, "Exercício 2.1", "cell").splitlines()[2] == (
        '    raise NotImplementedError("Exercício 2.1 ainda não foi feito: troque este raise pelo seu código '
        'para f()")')
    assert "is not done yet" in editions.strip_solutions(source, "Exercise 2.1", "cell")


def test_every_exercise_of_a_translated_chapter_finds_its_label():
    for path in sorted((REPO / "notebooks" / "pt").glob("[0-9][0-9]_*.ipynb")):
        student = editions.student_notebook(read(path), path.name)
        stubs = [line for cell in student.cells for line in cell.source.splitlines() if "NotImplementedError(" in line]
        assert all("Exercício" in line and "ainda não foi feito" in line for line in stubs), path.name
