import pytest
import torch

from d2lmini.exercises import ExerciseError, expect_close, passed


def test_passed_prints_one_line(capsys):
    passed("Exercise 1", "well done")
    assert capsys.readouterr().out == "✓ Exercise 1: correct. well done\n"


def test_wrong_type_is_named():
    with pytest.raises(ExerciseError, match="expected: a torch.Tensor") as info:
        expect_close([1.0], torch.ones(1), "Ex", "hint text")
    assert "received: list [1.0]" in str(info.value) and "hint: return a tensor" in str(info.value)


def test_wrong_shape_reports_both_shapes():
    with pytest.raises(ExerciseError, match=r"expected: shape \(2, 3\)") as info:
        expect_close(torch.ones(3, 2), torch.ones(2, 3), "Ex", "transpose?")
    assert "received: shape (3, 2)" in str(info.value) and "hint: transpose?" in str(info.value)


def test_wrong_values_show_the_values():
    with pytest.raises(ExerciseError, match=r"received: tensor of shape \(2,\), dtype torch.float32: \[1, 3\]"):
        expect_close(torch.tensor([1.0, 3.0]), torch.tensor([1.0, 2.0]), "Ex", "h")


def test_unexpected_nan_is_called_out():
    with pytest.raises(ExerciseError, match="expected: no NaN values"):
        expect_close(torch.tensor([float("nan")]), torch.tensor([0.0]), "Ex", "h")


def test_a_right_answer_passes_silently():
    expect_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]), "Ex", "h")
