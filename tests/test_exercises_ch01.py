"""Chapter 01's checks accept right answers and explain typical wrong ones."""

import pytest
import torch
from exercise_answers import best_sigma_right, block_out_loss_hiding, block_out_loss_right, triangular_right

import d2lmini as d2l
from d2lmini.exercises import ExerciseError, ch01

# Exercise 1.1

def test_triangular_accepts_the_reference(capsys):
    ch01.check_triangular(triangular_right)
    assert capsys.readouterr().out == (
        "✓ Exercise 1.1: correct. k(0) = 1, k(±0.5) = 0.5, and k(u) = 0 for |u| ≥ 1. In "
        "d2l.nadaraya_watson at σ = 0.5 it fits a toy data set about as well as the two other window "
        "kernels (validation MSE: triangular 0.303, Epanechnikov 0.314, boxcar 0.322), while its own error "
        "moves more with the width (0.215 at σ = 1, 0.560 at σ = 2): the width matters more than the "
        "shape.\n"
    )


def test_triangular_accepts_an_equivalent_formula():
    ch01.check_triangular(lambda u: torch.where(u.abs() < 1, 1 - u.abs(), torch.zeros_like(u)))


def test_triangular_answered_with_epanechnikov_is_told_the_difference():
    with pytest.raises(ExerciseError, match=r"that is the Epanechnikov kernel, the parabola") as info:
        ch01.check_triangular(d2l.epanechnikov)
    assert "k(0.5) = 0.5, not 0.75" in info.value.hints[1]


def test_triangular_without_clamp_is_told_its_values_go_negative():
    with pytest.raises(ExerciseError, match=r"some of your values are negative") as info:
        ch01.check_triangular(lambda u: 1 - u.abs())
    assert "expected: shape (2, 17), row [0]: [0, 0, 0, 0, 0, 0.25, 0.5, 0.75, ...]" in str(info.value)
    assert "received: shape (2, 17), row [0]: [-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, ...]" in str(info.value)


def test_triangular_boxcar_instead_gets_the_values_then_the_formula_as_hints():
    with pytest.raises(ExerciseError, match=r"hint: compare your values with the expected ones") as info:
        ch01.check_triangular(d2l.boxcar)
    assert info.value.hints[1].startswith("k(u) = max(1 - |u|, 0)")


def test_triangular_that_returns_a_list_is_told_to_return_a_tensor():
    with pytest.raises(ExerciseError, match="expected: a torch.Tensor"):
        ch01.check_triangular(lambda u: triangular_right(u).tolist())


def test_triangular_that_writes_into_u_is_caught():
    def in_place(u):
        return u.abs_().neg_().add_(1).clamp_(min=0)

    with pytest.raises(ExerciseError, match="u was modified in place"):
        ch01.check_triangular(in_place)


# Exercise 1.2

def test_best_sigma_accepts_the_reference(capsys):
    ch01.check_best_sigma(best_sigma_right)
    assert capsys.readouterr().out == (
        "✓ Exercise 1.2: correct. On two data sets the best widths are σ = 0.4 and σ = 0.05.\n"
    )


def test_best_sigma_accepts_a_tensor_answer():
    ch01.check_best_sigma(lambda *args: torch.tensor(best_sigma_right(*args)))


def test_best_sigma_chosen_by_training_error_is_explained():
    def by_training_error(x_train, y_train, x_val, y_val, sigmas):
        return best_sigma_right(x_train, y_train, x_train, y_train, sigmas)

    with pytest.raises(ExerciseError, match="the width the training error picks") as info:
        ch01.check_best_sigma(by_training_error)
    assert "expected: σ = 0.4" in str(info.value) and "received: σ = 0.02" in str(info.value)


def test_best_sigma_constant_answer_fails_on_the_second_data_set():
    with pytest.raises(ExerciseError, match="expected: σ = 0.05"):
        ch01.check_best_sigma(lambda *args: 0.4)


# Exercise 1.3

def test_block_out_loss_accepts_the_reference(capsys):
    ch01.check_block_out_loss(block_out_loss_right)
    assert capsys.readouterr().out == (
        "✓ Exercise 1.3: correct. With every point taken twice, the width with the lowest loss on a grid "
        "from 0.01 to 3.16 is σ = 0.01 for m = 0 (loss 0.003): each x_i copies its twin's target. For m = 1 "
        "it is σ = 0.16 (loss 0.100); on the data without copies, leave-one-out picks σ = 0.16.\n"
    )


def test_block_out_loss_accepts_a_masked_softmax_and_a_python_float():
    masked = block_out_loss_hiding(lambda offsets, m: offsets.abs() <= m)
    ch01.check_block_out_loss(lambda *args: masked(*args).item())


def test_block_out_loss_keeping_the_own_key_is_explained():
    with pytest.raises(ExerciseError, match="each query x_i still sees its own key x_i") as info:
        ch01.check_block_out_loss(block_out_loss_hiding(lambda offsets, m: offsets != offsets))
    assert "at σ = 0.3, m = 2" in str(info.value)


def test_block_out_loss_that_ignores_m_is_told_it_is_leave_one_out():
    def leave_one_out(x, y, sigma, m):
        keys, values = d2l.leave_one_out(x, y)
        return ((d2l.nadaraya_watson(x, keys, values, "gaussian", sigma)[0] - y) ** 2).mean()

    with pytest.raises(ExerciseError, match="that is the leave-one-out loss: with m = 2") as info:
        ch01.check_block_out_loss(leave_one_out)
    assert "expected: a loss of 0.5195 at σ = 0.3, m = 2" in str(info.value)


@pytest.mark.parametrize("hidden, message", [
    (lambda offsets, m: offsets.abs() < m, "you hid one neighbour too few on each side: with m = 2"),
    (lambda offsets, m: offsets.abs() <= m + 1, "one neighbour too many on each side: with m = 2 the block"),
    (lambda offsets, m: (offsets >= 0) & (offsets <= m), "you hid the neighbours on one side of x_i only"),
])
def test_block_out_loss_with_the_wrong_block_is_told_which(hidden, message):
    with pytest.raises(ExerciseError, match=message):
        ch01.check_block_out_loss(block_out_loss_hiding(hidden))


def test_block_out_loss_by_distance_is_told_m_counts_positions():
    def by_distance(x, y, sigma, m):
        return block_out_loss_hiding(lambda offsets, m: (x[:, None] - x[None, :]).abs() <= m)(x, y, sigma, m)

    with pytest.raises(ExerciseError, match="m counts positions in the sorted x, not a distance"):
        ch01.check_block_out_loss(by_distance)
