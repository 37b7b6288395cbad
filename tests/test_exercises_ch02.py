"""Chapter 02's checks accept right answers and explain typical wrong ones."""

import pytest
import torch

import d2lmini as d2l
from d2lmini.exercises import ExerciseError, ch02


def from_mask_right(X, mask):
    return torch.softmax(X.masked_fill(~mask, float("-inf")), dim=-1).nan_to_num(nan=0.0)


def causal_mask_right(num_steps):
    return torch.arange(num_steps)[None, :] < torch.arange(1, num_steps + 1)[:, None]


def masked_mean_right(values, valid_lens):
    scores = torch.zeros(values.shape[0], 1, values.shape[1])
    return (d2l.masked_softmax(scores, valid_lens) @ values).squeeze(1)


def not_implemented(*args):
    raise NotImplementedError


# Exercise 2.1

def test_from_mask_accepts_the_reference(capsys):
    ch02.check_masked_softmax_from_mask(from_mask_right)
    assert capsys.readouterr().out == (
        "✓ Exercise 2.1: correct. Any pattern of allowed keys works, and a row with none gets zeros.\n"
    )


def test_from_mask_accepts_where_and_explicit_zeroing():
    def with_where(X, mask):
        weights = torch.softmax(torch.where(mask, X, torch.tensor(float("-inf"))), dim=-1)
        return torch.where(mask.any(dim=-1, keepdim=True), weights, torch.zeros(()))

    ch02.check_masked_softmax_from_mask(with_where)


def test_from_mask_without_nan_clean_up_is_told_about_empty_rows():
    def leaves_nan(X, mask):
        return torch.softmax(X.masked_fill(~mask, float("-inf")), dim=-1)

    with pytest.raises(ExerciseError, match="expected: no NaN values") as info:
        ch02.check_masked_softmax_from_mask(leaves_nan)
    assert "0/0 = NaN: set such rows to zero" in str(info.value)


def test_from_mask_with_the_classic_fill_is_told_to_use_minus_inf():
    def classic(X, mask):
        return torch.softmax(X.masked_fill(~mask, -1e6), dim=-1)

    with pytest.raises(ExerciseError, match=r"fill with float\('-inf'\) rather than -1e6") as info:
        ch02.check_masked_softmax_from_mask(classic)
    assert "Exercise 2.1 (a (2, 3, 5) mask with one all-False row)" in str(info.value)


def test_from_mask_with_the_mask_inverted_is_told_what_true_means():
    def inverted(X, mask):
        return from_mask_right(X, ~mask)

    with pytest.raises(ExerciseError, match="True means 'may attend'"):
        ch02.check_masked_softmax_from_mask(inverted)


def test_from_mask_that_writes_into_x_is_caught():
    def in_place(X, mask):
        return torch.softmax(X.masked_fill_(~mask, float("-inf")), dim=-1).nan_to_num(nan=0.0)

    with pytest.raises(ExerciseError, match="X was modified in place"):
        ch02.check_masked_softmax_from_mask(in_place)


def test_from_mask_that_ignores_broadcasting_fails_on_the_second_case():
    def first_query_only(X, mask):
        return from_mask_right(X, mask[:, :1, :].expand_as(X))

    with pytest.raises(ExerciseError, match=r"Exercise 2.1 \(a \(2, 3, 5\) mask"):
        ch02.check_masked_softmax_from_mask(first_query_only)


def test_from_mask_stub_error_passes_through():
    with pytest.raises(NotImplementedError):
        ch02.check_masked_softmax_from_mask(not_implemented)


# Exercise 2.2

def test_causal_mask_accepts_the_reference(capsys):
    ch02.check_causal_mask(causal_mask_right)
    assert capsys.readouterr().out.startswith("✓ Exercise 2.2: correct.")


def test_causal_mask_accepts_tril():
    ch02.check_causal_mask(lambda n: torch.ones(n, n, dtype=torch.bool).tril())


def test_causal_mask_without_the_diagonal_is_told_about_i_plus_one():
    def strict(num_steps):
        return torch.arange(num_steps)[None, :] < torch.arange(num_steps)[:, None]

    with pytest.raises(ExerciseError, match=r"its valid length is i \+ 1, not i") as info:
        ch02.check_causal_mask(strict)
    assert "expected: for num_steps=4:\n    1000\n    1100\n    1110\n    1111\n" in str(info.value)
    assert "received: for num_steps=4:\n    0000\n    1000\n    1100\n    1110\n" in str(info.value)


def test_causal_mask_transposed_is_told_rows_are_queries():
    with pytest.raises(ExerciseError, match="rows are queries and columns are keys") as info:
        ch02.check_causal_mask(lambda n: causal_mask_right(n).T)
    assert "received: for num_steps=4:\n    1111\n    0111\n    0011\n    0001" in str(info.value)


def test_causal_mask_inverted_is_told_the_sdpa_convention():
    with pytest.raises(ExerciseError, match="True should mark the keys a query MAY attend to"):
        ch02.check_causal_mask(lambda n: ~causal_mask_right(n))


def test_causal_mask_as_floats_is_told_to_return_booleans():
    with pytest.raises(ExerciseError, match="return a boolean mask") as info:
        ch02.check_causal_mask(lambda n: causal_mask_right(n).float())
    assert "received: dtype torch.float32" in str(info.value)


def test_causal_mask_of_the_wrong_shape_is_reported():
    with pytest.raises(ExerciseError, match=r"expected: shape \(4, 4\) for num_steps=4"):
        ch02.check_causal_mask(lambda n: causal_mask_right(n + 1))


def test_causal_mask_stub_error_passes_through():
    with pytest.raises(NotImplementedError):
        ch02.check_causal_mask(not_implemented)


# Exercise 2.3

def test_masked_mean_accepts_the_reference(capsys):
    ch02.check_masked_mean(masked_mean_right)
    assert capsys.readouterr().out.startswith("✓ Exercise 2.3: correct.")


def test_masked_mean_over_every_step_is_told_padding_counts():
    with pytest.raises(ExerciseError, match="padding included") as info:
        ch02.check_masked_mean(lambda values, valid_lens: values.mean(dim=1))
    assert "expected: tensor of shape (4, 3)" in str(info.value)


def test_masked_mean_dividing_by_zero_is_told_about_the_empty_example():
    def sum_over_length(values, valid_lens):
        keep = torch.arange(values.shape[1]) < valid_lens[:, None]  # (batch, steps)
        return (values * keep[..., None]).sum(dim=1) / valid_lens[:, None]

    with pytest.raises(ExerciseError, match="expected: no NaN values") as info:
        ch02.check_masked_mean(sum_over_length)
    assert "example of length 0 gives 0/0 = NaN" in str(info.value)


def test_masked_mean_that_keeps_the_query_axis_is_told_to_squeeze():
    def unsqueezed(values, valid_lens):
        return masked_mean_right(values, valid_lens)[:, None, :]

    with pytest.raises(ExerciseError, match=r"\.squeeze\(1\) turns \(batch, 1, dim\) into \(batch, dim\)"):
        ch02.check_masked_mean(unsqueezed)


def test_masked_mean_stub_error_passes_through():
    with pytest.raises(NotImplementedError):
        ch02.check_masked_mean(not_implemented)


def test_from_mask_of_the_wrong_shape_is_told_to_keep_the_shape_of_x():
    with pytest.raises(ExerciseError, match="hint: return the weights, a tensor with the shape of X"):
        ch02.check_masked_softmax_from_mask(lambda X, mask: from_mask_right(X, mask)[:, 0])


def test_causal_mask_of_another_pattern_gets_the_general_hint():
    with pytest.raises(ExerciseError, match="query i has valid length i \\+ 1"):
        ch02.check_causal_mask(lambda n: torch.eye(n, dtype=torch.bool))


def test_masked_mean_with_other_wrong_values_gets_the_general_hint():
    with pytest.raises(ExerciseError, match=r"hint: weights = d2l.masked_softmax\(zeros of shape"):
        ch02.check_masked_mean(lambda values, valid_lens: 2 * masked_mean_right(values, valid_lens))


def test_masked_mean_returning_one_number_is_told_the_shape():
    with pytest.raises(ExerciseError, match=r"expected: shape \(4, 3\)") as info:
        ch02.check_masked_mean(lambda values, valid_lens: values.mean())
    assert "hint: return one mean vector per example: shape (batch, dim)" in str(info.value)
