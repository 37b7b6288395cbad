"""Chapter 02's checks accept right answers and explain typical wrong ones."""

import pytest
import torch

import d2lmini as d2l
from d2lmini.exercises import ExerciseError, ExerciseNotAttempted, ch02


def is_real(scores, valid_lens):
    return torch.arange(scores.shape[1]) < valid_lens[:, None]  # (batch, steps)


def padded_queries_right(scores, valid_lens):
    return d2l.masked_softmax(scores, torch.where(is_real(scores, valid_lens), valid_lens[:, None], 0))


def local_causal_mask_right(num_steps, window):
    steps = torch.arange(num_steps)
    return (steps[None, :] <= steps[:, None]) & (steps[None, :] > steps[:, None] - window)


def masked_mean_right(values, valid_lens):
    scores = torch.zeros(values.shape[0], 1, values.shape[1])
    return (d2l.masked_softmax(scores, valid_lens) @ values).squeeze(1)


def not_implemented(*args):
    raise NotImplementedError


NOT_ATTEMPTED = "not attempted yet: complete `not_implemented` above"


# Exercise 2.2

def test_padded_queries_accepts_the_reference(capsys):
    ch02.check_padded_queries(padded_queries_right)
    assert capsys.readouterr().out == (
        "✓ Exercise 2.2: correct. The real queries ignore the padding, and the 11 padded queries of "
        "this batch (an empty example among them) get all-zero rows.\n"
    )


def test_padded_queries_accepts_a_mask_on_both_axes_with_explicit_zeroing():
    def both_axes(scores, valid_lens):
        real = is_real(scores, valid_lens)
        allowed = real[:, :, None] & real[:, None, :]  # (batch, queries, keys)
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        return torch.where(allowed.any(dim=-1, keepdim=True), weights, torch.zeros(()))

    ch02.check_padded_queries(both_axes)


def test_padded_queries_masking_keys_only_is_told_the_padded_queries_still_attend():
    with pytest.raises(ExerciseError, match="the padded queries still attend") as info:
        ch02.check_padded_queries(lambda scores, valid_lens: d2l.masked_softmax(scores, valid_lens))
    assert "expected: tensor of shape (4, 5, 5), dtype torch.float32: [1, 0, 0, 0, 0, 0, ...]" in str(info.value)
    assert "received: tensor of shape (4, 5, 5), dtype torch.float32: [1, 0, 0, 0, 0, 1, ...]" in str(info.value)


@pytest.mark.parametrize("axes", ["both", "keys"])
def test_padded_queries_masking_the_weights_after_the_softmax_is_explained(axes):
    def after(scores, valid_lens):
        real = is_real(scores, valid_lens)
        keep = real[:, None, :] & (real[:, :, None] if axes == "both" else True)
        return torch.softmax(scores, dim=-1) * keep

    with pytest.raises(ExerciseError, match="you masked the weights after the softmax"):
        ch02.check_padded_queries(after)


@pytest.mark.parametrize("fill", [-1e6, torch.finfo(torch.float32).min])
def test_padded_queries_with_uniform_padded_rows_are_told_they_must_be_zero(fill):
    def finite_fill(scores, valid_lens):
        real = is_real(scores, valid_lens)
        return torch.softmax(scores.masked_fill(~(real[:, :, None] & real[:, None, :]), fill), dim=-1)

    with pytest.raises(ExerciseError, match="a padded query's row is uniform") as info:
        ch02.check_padded_queries(finite_fill)
    assert "[1, 0, 0, 0, 0, 0.2, ...]" in str(info.value)


def test_padded_queries_with_nan_rows_are_told_to_zero_them():
    def leaves_nan(scores, valid_lens):
        real = is_real(scores, valid_lens)
        allowed = real[:, :, None] & real[:, None, :]
        return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)

    with pytest.raises(ExerciseError, match="expected: no NaN values") as info:
        ch02.check_padded_queries(leaves_nan)
    assert "softmax(-inf, ..., -inf) = 0/0 = NaN" in str(info.value)


def test_padded_queries_that_write_into_the_scores_are_caught():
    def in_place(scores, valid_lens):
        real = is_real(scores, valid_lens)
        scores.masked_fill_(~real[:, None, :], float("-inf"))
        return padded_queries_right(scores, valid_lens)

    with pytest.raises(ExerciseError, match="scores was modified in place"):
        ch02.check_padded_queries(in_place)


def test_padded_queries_with_other_wrong_values_get_the_general_hint():
    with pytest.raises(ExerciseError, match="a padded query's row is all zeros") as info:
        ch02.check_padded_queries(lambda scores, valid_lens: 0.5 * padded_queries_right(scores, valid_lens))
    assert "d2l.masked_softmax also takes 2-D valid lengths" in info.value.hints[1]


def test_padded_queries_stub_is_reported_as_not_attempted():
    with pytest.raises(ExerciseNotAttempted, match=NOT_ATTEMPTED):
        ch02.check_padded_queries(not_implemented)


# Exercise 2.3

def test_local_causal_mask_accepts_the_reference(capsys):
    ch02.check_local_causal_mask(local_causal_mask_right)
    assert capsys.readouterr().out == (
        "✓ Exercise 2.3: correct. Each query sees at most `window` keys: at 1,024 steps a window of 128 "
        "keeps 122,944 of the causal mask's 524,800 entries (23%).\n"
    )


def test_local_causal_mask_accepts_a_band_of_tril_and_triu():
    ch02.check_local_causal_mask(lambda n, w: torch.ones(n, n, dtype=torch.bool).tril().triu(1 - w))


def test_local_causal_mask_shows_both_masks_row_under_row():
    with pytest.raises(ExerciseError) as info:
        ch02.check_local_causal_mask(lambda n, w: local_causal_mask_right(n, w + 1))
    lines = str(info.value).splitlines()
    assert lines[1] == "  expected: from local_causal_mask(6, 3): 100000 110000 111000 011100 001110 000111"
    assert lines[2] == "  received: from local_causal_mask(6, 3): 100000 110000 111000 111100 011110 001111"


@pytest.mark.parametrize("wrong, hint", [
    (lambda n, w: torch.eye(n, dtype=torch.bool), "query i may attend to key j when i - window < j <= i"),
], ids=["other"])
def test_local_causal_mask_names_each_typical_mistake(wrong, hint):
    with pytest.raises(ExerciseError, match="Exercise 2.3") as info:
        ch02.check_local_causal_mask(wrong)
    assert f"hint: {hint}" in str(info.value)


def test_local_causal_mask_of_the_wrong_shape_is_reported():
    with pytest.raises(ExerciseError, match=r"expected: shape \(6, 6\) from local_causal_mask\(6, 3\)"):
        ch02.check_local_causal_mask(lambda n, w: local_causal_mask_right(n + 1, w))


def test_local_causal_mask_returning_a_list_is_told_to_return_a_tensor():
    with pytest.raises(ExerciseError, match="expected: a torch.Tensor"):
        ch02.check_local_causal_mask(lambda n, w: local_causal_mask_right(n, w).tolist())


def test_local_causal_mask_stub_is_reported_as_not_attempted():
    with pytest.raises(ExerciseNotAttempted, match=NOT_ATTEMPTED):
        ch02.check_local_causal_mask(not_implemented)


# Exercise 2.1

def test_masked_mean_accepts_the_reference(capsys):
    ch02.check_masked_mean(masked_mean_right)
    assert capsys.readouterr().out.startswith("✓ Exercise 2.1: correct.")


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


def test_masked_mean_stub_is_reported_as_not_attempted():
    with pytest.raises(ExerciseNotAttempted, match=NOT_ATTEMPTED):
        ch02.check_masked_mean(not_implemented)


def test_masked_mean_with_other_wrong_values_gets_the_general_hint():
    with pytest.raises(ExerciseError, match=r"hint: the mean of the first valid_lens\[b\] steps is a weighted"):
        ch02.check_masked_mean(lambda values, valid_lens: 2 * masked_mean_right(values, valid_lens))


def test_masked_mean_returning_one_number_is_told_the_shape():
    with pytest.raises(ExerciseError, match=r"expected: shape \(4, 3\)") as info:
        ch02.check_masked_mean(lambda values, valid_lens: values.mean())
    assert "hint: return one mean vector per example: shape (batch, dim)" in str(info.value)
