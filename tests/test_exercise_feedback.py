import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
import torch
from exercise_answers import CHAPTERS, WRONG_ANSWERS, failure, the_check

from d2lmini.exercises import (
    ExerciseError,
    ExerciseNotAttempted,
    ch01,
    ch02,
    ch06,
    check,
    expect_close,
    hint,
    outcome,
    passed,
)
from d2lmini.exercises._feedback import LearnerCodeError
from d2lmini.i18n import set_language
from tools import editions

REPO = Path(__file__).resolve().parent.parent


def test_passed_prints_one_line(capsys):
    passed("Exercise 1", "well done")
    assert capsys.readouterr().out == "✓ Exercise 1: correct. well done\n"


def test_outcome_returns_what_a_check_said_as_data_and_prints_nothing(capsys):
    def stub(u):
        raise NotImplementedError("Exercise 1.1 is not done yet")

    def broken(u):
        return u.no_such_method()

    right = outcome(ch01.check_triangular, lambda u: torch.clamp(1 - u.abs(), min=0))
    assert right.status == "passed" and right.message.startswith("✓ Exercise 1.1: correct.")
    assert outcome(ch01.check_triangular, stub) == (
        "not attempted", "Exercise 1.1 · not attempted yet: complete `stub` above, run that cell, then this one.")
    assert outcome(ch01.check_triangular, lambda u: 1 - u.abs()) == (
        "mistake", "some of your values are negative: outside |u| < 1 the kernel is 0")
    assert outcome(ch01.check_triangular, broken) == (
        "error", "AttributeError: 'Tensor' object has no attribute 'no_such_method'")
    assert capsys.readouterr().out == ""
    set_language("pt_BR")
    try:
        said = outcome(ch01.check_triangular, lambda u: 1 - u.abs())
    finally:
        set_language("en")
    assert said.status == "mistake" and "negativ" in said.message and "outside" not in said.message


def test_wrong_type_is_named():
    with pytest.raises(ExerciseError, match="expected: a torch.Tensor") as info:
        expect_close([1.0], torch.ones(1), "Ex", "hint text")
    assert "received: list [1.0]" in str(info.value) and "hint: return a tensor" in str(info.value)


def test_wrong_shape_reports_both_shapes():
    with pytest.raises(ExerciseError, match=r"expected: shape \(2, 3\)") as info:
        expect_close(torch.ones(3, 2), torch.ones(2, 3), "Ex", "transpose?")
    assert "received: shape (3, 2)" in str(info.value) and "hint: transpose?" in str(info.value)


def test_wrong_values_show_the_values():
    with pytest.raises(ExerciseError, match=r"received: shape \(2,\): \[1, 3\]"):
        expect_close(torch.tensor([1.0, 3.0]), torch.tensor([1.0, 2.0]), "Ex", "h")


def test_wrong_values_show_the_first_row_that_differs_not_the_first_values():
    expected = torch.zeros(3, 2, 4)
    received = expected.clone()
    received[1, 1, 2] = 0.5  # the first six values of both are zeros
    with pytest.raises(ExerciseError) as info:
        expect_close(received, expected, "Ex", "h")
    assert info.value.lines()[1:3] == ["  expected: shape (3, 2, 4), row [1, 1]: [0, 0, 0, 0]",
                                       "  received: shape (3, 2, 4), row [1, 1]: [0, 0, 0.5, 0]"]


def test_a_differing_row_names_its_examples_valid_length():
    received = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    expected = torch.tensor([[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]])
    with pytest.raises(ExerciseError) as info:
        expect_close(received, expected, "Ex", "h", valid_lens=torch.tensor([2, 1, 0]))
    assert info.value.lines()[1:3] == ["  expected: shape (3, 2), example 2 (valid length 0): [0, 0]",
                                       "  received: shape (3, 2), example 2 (valid length 0): [5, 6]"]


def test_a_long_row_is_shown_from_just_before_its_first_difference():
    expected = torch.arange(20.0)
    received = expected.clone()
    received[12] = -1.0
    with pytest.raises(ExerciseError) as info:
        expect_close(received, expected, "Ex", "h")
    assert info.value.lines()[2] == ("  received: shape (20,), from column 10: "
                                     "[..., 10, 11, -1, 13, 14, 15, 16, 17, ...]")
    received = expected.clone()
    received[19] = -1.0  # at the end, the window stops at the last column
    with pytest.raises(ExerciseError) as info:
        expect_close(received, expected, "Ex", "h")
    assert info.value.lines()[2] == "  received: shape (20,), from column 12: [..., 12, 13, 14, 15, 16, 17, 18, -1]"


def test_a_check_may_name_the_row_in_its_own_terms():
    with pytest.raises(ExerciseError) as info:
        expect_close(torch.eye(2)[None].flip(-1), torch.eye(2)[None], "Ex", "h",
                     name_row=lambda index: f"case {index[0]}, row {index[1]}")
    # no shape: a named row belongs to the check's own stack of cases, not to a tensor the learner built
    assert info.value.lines()[1] == "  expected: case 0, row 0: [1, 0]"


def test_a_wrong_number_shows_both_numbers():
    with pytest.raises(ExerciseError) as info:
        expect_close(torch.tensor(1.5), torch.tensor(2.0), "Ex", "h")
    assert info.value.lines()[1:3] == ["  expected: shape (): [2]", "  received: shape (): [1.5]"]


def test_unexpected_nan_is_called_out():
    with pytest.raises(ExerciseError, match="expected: no NaN values"):
        expect_close(torch.tensor([float("nan")]), torch.tensor([0.0]), "Ex", "h")


def test_a_right_answer_passes_silently():
    expect_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]), "Ex", "h")


# ---------------------------------------------------------------- what a learner sees

def test_every_check_has_a_wrong_answer_here():
    checks = {f"{module}.{name}" for module, chapter in CHAPTERS.items() for name in vars(chapter)
              if name.startswith("check_")}
    assert sorted(WRONG_ANSWERS) == sorted(checks)


@pytest.mark.parametrize("name", sorted(WRONG_ANSWERS))
def test_a_wrong_answer_renders_as_a_short_block_without_code(name):
    error = failure(name, WRONG_ANSWERS[name])
    lines = error._render_traceback_()
    assert 4 <= len(lines) <= 8
    assert lines[0].startswith(f"✗ Exercise {name[3]}.") and lines[0].endswith(": not yet.")
    assert [line.split(":")[0] for line in lines[1:4]] == ["  expected", "  received", "  hint"]
    assert lines == str(error).splitlines()  # plain Python shows the same block
    assert not any(word in line for line in lines for word in ("d2lmini", ".py", "File ", "Traceback", "line "))
    if len(error.hints) > 1:
        assert lines[4] == (f"  That was hint 1 of {len(error.hints)}. "
                            f"For the next, run {name.split('.')[0]}.hint() in a new cell.")


def test_two_masks_are_shown_row_under_row_in_a_short_block():
    lines = failure("ch06.check_left_padded_mask", WRONG_ANSWERS["ch06.check_left_padded_mask"]).lines()
    assert len(lines) == 5
    expected, received = lines[1].split(": ")[-1], lines[2].split(": ")[-1]
    assert expected == "000000 000000 000000 000100 000110 000111"
    assert received == "100000 110000 111000 111100 111110 111111"
    assert lines[1].index(expected) == lines[2].index(received)


def test_a_long_field_is_cut_to_one_line():
    error = ExerciseError("Ex", "a list", "list " + repr(list(range(1000))), "h")
    assert len(error.lines()) == 4 and len(error.lines()[2]) < 220 and error.lines()[2].endswith("…")


def test_hint_shows_the_next_step_for_the_last_failed_check(capsys):
    error = failure("ch02.check_local_causal_mask", lambda n, window: torch.eye(n, dtype=torch.bool))
    assert len(error.hints) == 2 and error.lines()[3] == f"  hint: {error.hints[0]}"
    hint()
    assert capsys.readouterr().out == f"Exercise 2.3 · hint 2 of 2 (the last): {error.hints[1]}\n"
    hint()  # no step beyond the last: it is shown again
    assert capsys.readouterr().out == f"Exercise 2.3 · hint 2 of 2 (the last): {error.hints[1]}\n"
    assert ch02.hint is hint  # the check cell's module offers it, as the block says


def test_hint_after_a_passing_check_has_nothing_to_add(capsys):
    failure("ch02.check_local_causal_mask", lambda n, window: torch.eye(n, dtype=torch.bool))
    ch06.check_decode_mask(lambda nq, nk: torch.arange(nk)[None, :] <= torch.arange(nk - nq, nk)[:, None])
    capsys.readouterr()
    hint()
    assert capsys.readouterr().out.startswith("No hint to give: the last check you ran did not fail")


def test_every_step_of_a_hint_is_given_once_then_the_last_again(capsys):
    error = failure("ch05.check_einsum_multihead", WRONG_ANSWERS["ch05.check_einsum_multihead"])
    assert len(error.hints) == 3
    for _ in range(4):
        hint()
    shown = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in shown] == [
        "Exercise 5.5 · multi-head attention with einsum · hint 2 of 3",
        "Exercise 5.5 · multi-head attention with einsum · hint 3 of 3 (the last)",
        "Exercise 5.5 · multi-head attention with einsum · hint 3 of 3 (the last)",
        "Exercise 5.5 · multi-head attention with einsum · hint 3 of 3 (the last)"]


# ---------------------------------------------------------------- the stub, and the learner's own errors

def exercises_and_checks():
    """(notebook cell source, its function's name, its check) for every exercise of every chapter."""
    found = []
    for path in sorted((REPO / "notebooks").glob("0[1-9]_*.py")):
        cells = jupytext.read(path).cells
        for index, cell in enumerate(cells):
            if "check" in editions.tags(cell):
                call = next(node for node in ast.walk(ast.parse(cell.source)) if isinstance(node, ast.Call))
                source = next(c.source for c in reversed(cells[:index]) if "exercise" in editions.tags(c))
                found.append((source, call.args[0].id, f"{call.func.value.id}.{call.func.attr}"))
    return found


EXERCISES = exercises_and_checks()


@pytest.mark.parametrize("source, function, name", EXERCISES, ids=[name for _, _, name in EXERCISES])
@pytest.mark.parametrize("stub", ["student build", "nbgrader"])
def test_an_unattempted_stub_gets_one_line_saying_what_to_do(source, function, name, stub):
    student = editions.strip_solutions(source, "Exercise 0.0", name)
    if stub == "nbgrader":  # nbgrader's release replaces each answer by a bare raise
        student = student.replace('raise NotImplementedError("Exercise 0.0', 'raise NotImplementedError() #')
    namespace = {"torch": torch, "nn": torch.nn}  # as the chapters import them
    exec(student, namespace)
    with pytest.raises(ExerciseNotAttempted) as info:
        the_check(name)(namespace[function])
    [line] = info.value._render_traceback_()
    assert re.fullmatch(rf"Exercise {name[3]}\.\d · not attempted yet: complete `{function}` above, run that "
                        r"cell, then this one\.", line), line
    assert isinstance(info.value, NotImplementedError)  # still a failure for nbgrader, as the stub's was


def test_the_exercise_list_covers_every_check():
    assert sorted(name for _, _, name in EXERCISES) == sorted(WRONG_ANSWERS)


def test_a_not_implemented_error_raised_deeper_in_the_learners_code_shows_their_frames():
    def helper(u):
        raise NotImplementedError("helper is unfinished")

    def triangular_kernel(u):
        return helper(u)

    with pytest.raises(LearnerCodeError) as info:
        ch01.check_triangular(triangular_kernel)
    assert info.value.python_error == "NotImplementedError: helper is unfinished"
    assert [frame.split(", in ")[-1].split()[0] for frame in info.value.frames] == ["triangular_kernel", "helper"]


def test_an_error_in_the_learners_code_shows_their_lines_and_none_of_the_checks():
    def triangular_kernel(u):
        return u @ torch.ones(3)  # the learner's mistake: a matrix product of mismatched shapes

    with pytest.raises(LearnerCodeError) as info:
        ch01.check_triangular(triangular_kernel)
    shown = "\n".join(info.value._render_traceback_())
    # The check's lines compute the expected answer: none of them, nor its file, may be shown.
    assert "d2lmini" not in shown and "expected = " not in shown
    assert "in triangular_kernel" in shown and "return u @ torch.ones(3)" in shown
    assert info.value.python_error.startswith("RuntimeError: ")
    assert "raised in your triangular_kernel" in info.value.received
    # hint() has something to say after it, as after any failed check
    assert info.value.help_call == "ch01.hint()" and len(info.value.hints) == 2


def test_what_the_check_cannot_use_is_said_without_the_checks_lines():
    class Odd:  # neither a tensor nor a number: the check's own arithmetic on it fails
        def __getattr__(self, name):
            raise AttributeError(name)

    with pytest.raises(ExerciseError) as info:
        ch01.check_triangular(lambda u: Odd())
    shown = "\n".join(info.value._render_traceback_())
    assert "d2lmini" not in shown and "File " not in shown


def test_a_class_whose_method_is_the_stub_is_not_attempted():
    @check("Exercise 9.9 · a class")
    def check_module(Module):
        return Module()(1)

    class Attention:
        def __call__(self, x):
            raise NotImplementedError()

    with pytest.raises(ExerciseNotAttempted, match=r"^Exercise 9.9 · not attempted yet: complete `Attention`"):
        check_module(Attention)


# ---------------------------------------------------------------- IPython, Jupyter and nbgrader

SESSION = '''
import torch
from d2lmini.exercises import ch02
def wrong(n, window):
    return torch.ones(n, n, dtype=torch.bool).tril()
def stub(n, window):
    raise NotImplementedError()
def broken(n, window):
    return torch.ones(n, n) @ torch.ones(n + 1)
'''


def test_ipython_shows_the_rendered_lines_in_place_of_a_traceback():
    script = f'''
import json
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance(colors="nocolor")
shell.run_cell({SESSION!r})
shown = {{}}
for name in ("wrong", "stub", "broken"):
    captured = shell.run_cell(f"ch02.check_local_causal_mask({{name}})", store_history=True)
    shown[name] = type(captured.error_in_exec).__name__
print("RESULTS" + json.dumps(shown))
'''
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120)
    out, results = result.stdout.rsplit("RESULTS", 1)
    assert json.loads(results) == {"wrong": "ExerciseError", "stub": "ExerciseNotAttempted",
                                  "broken": "LearnerCodeError"}
    block = failure("ch02.check_local_causal_mask", WRONG_ANSWERS["ch02.check_local_causal_mask"]).lines()
    stub_line = "Exercise 2.3 · not attempted yet: complete `stub` above, run that cell, then this one."
    assert out.startswith("\n".join(block) + "\n" + stub_line + "\n")
    learner_error = out.split(stub_line + "\n", 1)[1]
    # the learner's own line, and no line of the check's (they hold the answer)
    assert "broken" in learner_error and "@ torch.ones(n + 1)" in learner_error
    assert "raised in your broken" in learner_error and "d2lmini" not in learner_error


def test_nbgrader_gives_no_point_to_a_wrong_answer_or_a_stub(tmp_path):
    pytest.importorskip("nbgrader", reason="nbgrader comes with the test extra: pip install -e '.[test]'")
    from nbclient import NotebookClient
    from nbgrader.utils import determine_grade

    grade = {"grade": True, "solution": False, "locked": True, "points": 1, "schema_version": 3, "task": False}
    checks = [nbformat.v4.new_code_cell(f"ch02.check_local_causal_mask({name})",
                                        metadata={"nbgrader": {**grade, "grade_id": name}})
              for name in ("wrong", "stub", "right")]
    right = "def right(n, window):\n    return ch02._local_causal(n, window)\n"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SESSION + right), *checks])
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(REPO)}}).execute()
    assert [determine_grade(cell)[0] for cell in checks] == [0, 0, 1]
    errors = [[out for out in cell.outputs if out.output_type == "error"] for cell in checks]
    shown = [(e[0].ename, len(e[0].traceback)) for e in errors[:2]]
    assert shown == [("ExerciseError", 5), ("ExerciseNotAttempted", 1)]
    assert errors[2] == [] and "d2lmini" not in json.dumps([e[0].traceback for e in errors[:2]])


# ---------------------------------------------------------------- the picture of wrong weights

def test_the_picture_holds_the_first_differing_example_beside_the_expected_one_on_one_scale():
    from d2lmini.exercises._feedback import weights_figure
    from d2lmini.plotting import CMAP

    expected = torch.softmax(torch.randn(3, 4, 5), -1)
    received = expected.clone()
    received[1] = 0.2  # examples 0 and 2 are right
    figure = weights_figure(received, expected)
    panels = [ax for ax in figure.axes if ax.images and ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["yours (example 1)", "expected (example 1)"]
    assert [(ax.get_ylabel(), ax.get_xlabel()) for ax in panels] == [("queries", "keys")] * 2
    images = [ax.images[0] for ax in panels]
    assert torch.equal(torch.as_tensor(images[0].get_array().data), received[1])
    assert torch.equal(torch.as_tensor(images[1].get_array().data), expected[1])
    assert images[0].norm is images[1].norm and (images[0].norm.vmin, images[0].norm.vmax) == (0, 1)
    assert all(image.get_cmap().name == CMAP for image in images)
    assert len(figure.axes) == 3  # the two panels and one colorbar
    assert type(figure.canvas).__name__ == "FigureCanvasAgg"


def test_the_picture_is_a_small_png_and_leaves_no_figure_open():
    """What keeps it cheap: one small figure, closed once encoded (its drawing time is a benchmark's
    figure, 62 ms in benchmarks/README.md, not a test's)."""
    import matplotlib.pyplot as plt

    from d2lmini.exercises._feedback import weights_png

    before = plt.get_fignums()
    png = weights_png(torch.rand(2, 5, 5), torch.rand(2, 5, 5))
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) < 40_000  # about 12 kB
    assert plt.get_fignums() == before


def test_only_a_wrong_weight_matrix_shows_a_picture_and_then_the_error_in_a_kernel():
    pytest.importorskip("nbgrader", reason="nbgrader comes with the test extra: pip install -e '.[test]'")
    from nbclient import NotebookClient
    from nbgrader.utils import determine_grade

    grade = {"grade": True, "solution": False, "locked": True, "points": 1, "schema_version": 3, "task": False}
    setup = SESSION + "from d2lmini.exercises import ch04\nuniform = lambda queries, keys: torch.full((2, 5, 5), 0.2)\n"
    checks = [nbformat.v4.new_code_cell(code, metadata={"nbgrader": {**grade, "grade_id": f"check{i}"}})
              for i, code in enumerate(["ch04.check_fixed_causal_weights(uniform)",
                                        "ch02.check_local_causal_mask(wrong)"])]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(setup), *checks])
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(REPO)}}).execute()
    weights, mask = ([(out.output_type, sorted(out.get("data", {}))) for out in cell.outputs] for cell in checks)
    assert weights == [("display_data", ["image/png", "text/plain"]), ("error", [])]
    assert mask == [("error", [])]
    assert [determine_grade(cell)[0] for cell in checks] == [0, 0]
    assert len(checks[0].outputs[1].traceback) <= 5
