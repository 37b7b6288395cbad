"""The checks of notebook 06 accept right answers and explain typical wrong ones."""

import math

import pytest
import torch
from exercise_answers import causal, decode_mask, left_padded_mask, max_tokens

from d2lmini.exercises import ExerciseError, ch06

# ---- what each check says ----

@pytest.mark.parametrize("check, answer, line", [
    (ch06.check_max_tokens, max_tokens,
     "✓ Exercise 6.1 · The longest sequence that fits: correct. "
     "In 80 GiB, batch 8 and 12 heads, float32 scores fit 14,956 tokens; twice the memory fits 21,151, only √2 "
     "times as many."),
    (ch06.check_decode_mask, decode_mask,
     "✓ Exercise 6.2 · A causal mask for cached decoding: correct. SDPA with your mask gives the new "
     "tokens the outputs that causal attention over all the tokens gives them. One new token (1 query, "
     "5 keys) needs no mask at all, and with as many queries as keys the mask is is_causal's."),
    (ch06.check_left_padded_mask, left_padded_mask,
     "✓ Exercise 6.3 · Left padding for batched generation: correct. Every real token gets the output "
     "of its sequence run alone, without padding, and a padding token has no key to attend to."),
], ids=["6.1", "6.2", "6.3"])
def test_each_success_line_in_full(check, answer, line, capsys):
    check(answer)
    assert capsys.readouterr().out == line + "\n"


@pytest.mark.parametrize("check, wrong, exercise, hint", [
    (ch06.check_max_tokens, lambda b, h, dtype, budget: 1, "6.1",
     "S takes batch_size · num_heads · num_tokens² · dtype.itemsize bytes"),
    (ch06.check_decode_mask, lambda q, k: torch.ones(q, k, dtype=torch.bool).triu(), "6.2",
     "new query i is the token at position"),
    (ch06.check_left_padded_mask, lambda lens, n: left_padded_mask(lens, n) | torch.eye(n, dtype=torch.bool), "6.3",
     "the rows of the padded queries (i < num_steps - valid_lens[b]) must be all False"),
    (ch06.check_left_padded_mask, lambda lens, n: left_padded_mask(lens, n).transpose(1, 2), "6.3",
     "query i of example b may attend to key j when j ≤ i and j ≥ num_steps - valid_lens[b]"),
], ids=["6.1 other", "6.2 other", "6.3 padded queries attend", "6.3 other"])
def test_each_error_names_its_exercise_and_the_mistake(check, wrong, exercise, hint):
    with pytest.raises(ExerciseError) as info:
        check(wrong)
    assert hint in str(info.value) and exercise in str(info.value)


# ---- 6.2 a causal mask for cached decoding ----

def test_decode_mask_accepts_tril_with_the_offset():
    ch06.check_decode_mask(lambda q, k: torch.ones(q, k, dtype=torch.bool).tril(k - q))


def test_decode_mask_shows_both_masks_row_under_row():
    with pytest.raises(ExerciseError) as info:
        ch06.check_decode_mask(lambda q, k: torch.ones(q, k, dtype=torch.bool).tril())
    lines = str(info.value).splitlines()
    assert lines[1] == "  expected: from decode_mask(3, 7): 1111100 1111110 1111111"
    assert lines[2] == "  received: from decode_mask(3, 7): 1000000 1100000 1110000"


# ---- 6.3 left padding for batched generation ----

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


def test_max_tokens_accepts_a_float_square_root_rounded_down(capsys):
    ch06.check_max_tokens(lambda b, h, dtype, budget: int(math.sqrt(budget / (b * h * dtype.itemsize))))
    assert capsys.readouterr().out.startswith("✓ Exercise 6.1")


def test_max_tokens_is_asked_exactly_at_the_budget_and_one_byte_under_it():
    # 2 examples, 4 heads, 16 tokens of float32: 8,192 bytes hold 16 tokens, and 8,191 only 15.
    with pytest.raises(ExerciseError, match=r"(?s)expected: 15 for max_tokens\(2, 4, torch.float32, 8191\).*"
                                            r"received: 16.*one token too many"):
        ch06.check_max_tokens(lambda b, h, dtype, budget: 16 if budget == 8191 else max_tokens(b, h, dtype, budget))
