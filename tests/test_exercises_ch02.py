"""Chapter 02's checks accept right answers and explain typical wrong ones."""

import pytest
import torch
from exercise_answers import is_real, local_causal_mask_right, masked_mean_right, padded_queries_right

import d2lmini as d2l
from d2lmini.exercises import ExerciseError, ch02

# Exercise 2.2

def real_pairs(scores, valid_lens):
    """(batch, queries, keys): True where a real query meets a real key."""
    real = is_real(scores, valid_lens)
    return real[:, :, None] & real[:, None, :]


def test_padded_queries_accepts_the_reference(capsys):
    ch02.check_padded_queries(padded_queries_right)
    assert capsys.readouterr().out == (
        "✓ Exercise 2.2: correct. The real queries ignore the padding, and the 11 padded queries of "
        "this batch (an empty example among them) get all-zero rows.\n"
    )


def test_padded_queries_accepts_a_mask_on_both_axes_with_explicit_zeroing():
    def both_axes(scores, valid_lens):
        allowed = real_pairs(scores, valid_lens)
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        return torch.where(allowed.any(dim=-1, keepdim=True), weights, torch.zeros(()))

    ch02.check_padded_queries(both_axes)


def test_padded_queries_masking_keys_only_is_told_the_padded_queries_still_attend():
    with pytest.raises(ExerciseError, match="the padded queries still attend") as info:
        ch02.check_padded_queries(lambda scores, valid_lens: d2l.masked_softmax(scores, valid_lens))
    # The first example's first row is right: the error shows its second, a padded query's, with its length.
    assert "expected: shape (4, 5, 5), example 0, query 1 (valid length 1): [0, 0, 0, 0, 0]" in str(info.value)
    assert "received: shape (4, 5, 5), example 0, query 1 (valid length 1): [1, 0, 0, 0, 0]" in str(info.value)


UNIFORM_ROWS = (r"(?s)received: .*example 0, query 1 \(valid length 1\): \[0\.2, 0\.2, 0\.2, 0\.2, 0\.2\]"
                r".*a padded query's row is uniform")


@pytest.mark.parametrize("wrong, message", [
    (lambda scores, lens: torch.softmax(scores, dim=-1) * real_pairs(scores, lens),
     "you masked the weights after the softmax"),
    (lambda scores, lens: torch.softmax(scores, dim=-1) * is_real(scores, lens)[:, None, :],
     "you masked the weights after the softmax"),
    (lambda scores, lens: torch.softmax(scores.masked_fill(~real_pairs(scores, lens), -1e6), dim=-1), UNIFORM_ROWS),
    (lambda scores, lens: torch.softmax(scores.masked_fill(~real_pairs(scores, lens), torch.finfo(torch.float32).min),
                                        dim=-1), UNIFORM_ROWS),
], ids=["after the softmax, both axes", "after the softmax, keys only", "fill -1e6", "fill the dtype's minimum"])
def test_padded_queries_masked_after_the_softmax_or_with_a_finite_fill_are_explained(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        ch02.check_padded_queries(wrong)


def test_padded_queries_with_nan_rows_are_told_to_zero_them():
    def leaves_nan(scores, valid_lens):
        return torch.softmax(scores.masked_fill(~real_pairs(scores, valid_lens), float("-inf")), dim=-1)

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


# Exercise 2.1

def test_masked_mean_over_every_step_is_told_padding_counts():
    with pytest.raises(ExerciseError, match="padding included") as info:
        ch02.check_masked_mean(lambda values, valid_lens: values.mean(dim=1))
    assert "expected: shape (4, 3), example 0 (valid length 2): [" in str(info.value)


def test_masked_mean_dividing_by_zero_is_told_about_the_empty_example():
    def sum_over_length(values, valid_lens):
        keep = torch.arange(values.shape[1]) < valid_lens[:, None]  # (batch, steps)
        return (values * keep[..., None]).sum(dim=1) / valid_lens[:, None]

    with pytest.raises(ExerciseError, match="expected: no NaN values") as info:
        ch02.check_masked_mean(sum_over_length)
    assert "example of length 0 gives 0/0 = NaN" in str(info.value)


def test_masked_mean_with_other_wrong_values_gets_the_general_hint():
    with pytest.raises(ExerciseError, match=r"hint: the mean of the first valid_lens\[b\] steps is a weighted"):
        ch02.check_masked_mean(lambda values, valid_lens: 2 * masked_mean_right(values, valid_lens))


def test_masked_mean_returning_one_number_is_told_the_shape():
    with pytest.raises(ExerciseError, match=r"expected: shape \(4, 3\)") as info:
        ch02.check_masked_mean(lambda values, valid_lens: values.mean())
    assert "hint: return one mean vector per example: shape (batch, dim)" in str(info.value)
