"""The checks of notebook 06 accept right answers and explain typical wrong ones."""

import pytest
import torch

from d2lmini.exercises import ExerciseError, ExerciseNotAttempted, ch06

# ---- 6.1 the bytes of the score matrix ----

def score_bytes(batch_size, num_heads, num_tokens, dtype):
    return batch_size * num_heads * num_tokens ** 2 * dtype.itemsize


def test_score_bytes_accepts_the_formula(capsys):
    ch06.check_score_bytes(score_bytes)
    assert capsys.readouterr().out == (
        "✓ Exercise 6.1 · The bytes of the score matrix: correct. "
        "At 4,096 tokens, batch 8 and 12 heads that is 6.0 GiB in float32.\n")


@pytest.mark.parametrize("wrong,hint", [
    (lambda b, h, n, dtype: 2 * b * h * n ** 2 * dtype.itemsize, "count the numbers of the score tensor"),
])
def test_score_bytes_explains_typical_mistakes(wrong, hint):
    with pytest.raises(ExerciseError) as info:
        ch06.check_score_bytes(wrong)
    assert hint in str(info.value) and "6.1" in str(info.value)


def test_a_students_stub_is_reported_as_not_attempted():
    def stub(*args):
        raise NotImplementedError

    for check in (ch06.check_score_bytes, ch06.check_decode_mask, ch06.check_left_padded_mask):
        with pytest.raises(ExerciseNotAttempted, match="not attempted yet: complete `stub` above"):
            check(stub)


# ---- 6.2 a causal mask for cached decoding ----

def decode_mask(num_queries, num_keys):
    return torch.arange(num_keys)[None, :] <= torch.arange(num_keys - num_queries, num_keys)[:, None]


def test_decode_mask_accepts_a_comparison_of_positions(capsys):
    ch06.check_decode_mask(decode_mask)
    assert capsys.readouterr().out == (
        "✓ Exercise 6.2 · A causal mask for cached decoding: correct. SDPA with your mask gives the new "
        "tokens the outputs that causal attention over all the tokens gives them. One new token (1 query, "
        "5 keys) needs no mask at all, and with as many queries as keys the mask is is_causal's.\n")


def test_decode_mask_accepts_tril_with_the_offset():
    ch06.check_decode_mask(lambda q, k: torch.ones(q, k, dtype=torch.bool).tril(k - q))


def test_decode_mask_shows_both_masks_row_under_row():
    with pytest.raises(ExerciseError) as info:
        ch06.check_decode_mask(lambda q, k: torch.ones(q, k, dtype=torch.bool).tril())
    lines = str(info.value).splitlines()
    assert lines[1] == "  expected: from decode_mask(3, 7): 1111100 1111110 1111111"
    assert lines[2] == "  received: from decode_mask(3, 7): 1000000 1100000 1110000"


@pytest.mark.parametrize("wrong,hint", [
    (lambda q, k: torch.ones(q, k, dtype=torch.bool).triu(), "new query i is the token at position"),
], ids=["other"])
def test_decode_mask_explains_typical_mistakes(wrong, hint):
    with pytest.raises(ExerciseError) as info:
        ch06.check_decode_mask(wrong)
    assert hint in str(info.value) and "6.2" in str(info.value)


# ---- 6.3 left padding for batched generation ----

def causal(num_steps):
    steps = torch.arange(num_steps)
    return steps[None, :] <= steps[:, None]  # (queries, keys)


def first_real(valid_lens, num_steps):
    return (num_steps - valid_lens)[:, None, None]  # (batch, 1, 1)


def left_padded_mask(valid_lens, num_steps):
    return causal(num_steps) & (torch.arange(num_steps) >= first_real(valid_lens, num_steps))


def test_left_padded_mask_accepts_a_causal_and_a_padding_mask_combined(capsys):
    ch06.check_left_padded_mask(left_padded_mask)
    assert capsys.readouterr().out == (
        "✓ Exercise 6.3 · Left padding for batched generation: correct. Every real token gets the output "
        "of its sequence run alone, without padding, and a padding token has no key to attend to.\n")


def test_left_padded_mask_accepts_masking_the_padded_queries_as_well():
    def both_axes(valid_lens, num_steps):
        real = torch.arange(num_steps) >= num_steps - valid_lens[:, None]  # (batch, steps)
        return causal(num_steps) & real[:, :, None] & real[:, None, :]

    ch06.check_left_padded_mask(both_axes)


def test_left_padded_mask_shows_the_first_example_that_differs():
    def wrong_for_long_sequences(valid_lens, num_steps):
        mask = left_padded_mask(valid_lens, num_steps)
        mask[valid_lens == 6] = causal(num_steps).T
        return mask

    with pytest.raises(ExerciseError) as info:
        ch06.check_left_padded_mask(wrong_for_long_sequences)
    assert ("expected: for example 1 (valid length 6) of left_padded_mask(torch.tensor([3, 6, 1, 5]), 6): "
            "100000 110000 111000 111100 111110 111111") in str(info.value)
    assert "received: for example 1 (valid length 6)" in str(info.value)


@pytest.mark.parametrize("wrong,hint", [
    (lambda lens, n: left_padded_mask(lens, n) | torch.eye(n, dtype=torch.bool),
     "the rows of the padded queries (i < num_steps - valid_lens[b]) must be all False"),
    (lambda lens, n: left_padded_mask(lens, n).transpose(1, 2), "query i of example b may attend to key j when "
                                                                "j ≤ i and j ≥ num_steps - valid_lens[b]"),
], ids=["padded queries attend", "other"])
def test_left_padded_mask_explains_typical_mistakes(wrong, hint):
    with pytest.raises(ExerciseError) as info:
        ch06.check_left_padded_mask(wrong)
    assert hint in str(info.value) and "6.3" in str(info.value)
