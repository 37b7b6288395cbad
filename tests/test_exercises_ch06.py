"""The checks of notebook 06 accept right answers and explain typical wrong ones."""

import pytest
import torch

from d2lmini.exercises import ExerciseError, ch06


# ---- 6.1 the bytes of the score matrix ----

def score_bytes(batch_size, num_heads, num_tokens, dtype):
    return batch_size * num_heads * num_tokens ** 2 * dtype.itemsize


def test_score_bytes_accepts_the_formula(capsys):
    ch06.check_score_bytes(score_bytes)
    assert capsys.readouterr().out == (
        "✓ Exercise 6.1 · The bytes of the score matrix: correct. "
        "At 4,096 tokens, batch 8 and 12 heads that is 6.0 GiB in float32.\n")


@pytest.mark.parametrize("wrong,hint", [
    (lambda b, h, n, dtype: b * n ** 2 * dtype.itemsize, "multiply by num_heads"),
    (lambda b, h, n, dtype: b * h * n * dtype.itemsize, "num_tokens ** 2, not num_tokens"),
    (lambda b, h, n, dtype: b * h * n ** 2 * 4, "use dtype.itemsize"),
    (lambda b, h, n, dtype: float(b * h * n ** 2 * dtype.itemsize), "return a whole number"),
    (lambda b, h, n, dtype: 2 * b * h * n ** 2 * dtype.itemsize, "dtype.itemsize bytes"),
])
def test_score_bytes_explains_typical_mistakes(wrong, hint):
    with pytest.raises(ExerciseError) as info:
        ch06.check_score_bytes(wrong)
    assert hint in str(info.value) and "6.1" in str(info.value)


def test_a_students_stub_fails_with_its_own_error():
    def stub(*args):
        raise NotImplementedError

    for check in (ch06.check_score_bytes, ch06.check_causal_mask, ch06.check_lengths_to_mask):
        with pytest.raises(NotImplementedError):
            check(stub)


# ---- 6.2 a causal mask for SDPA ----

def causal_mask(num_queries, num_keys):
    return torch.ones(num_queries, num_keys, dtype=torch.bool).tril()


def test_causal_mask_accepts_the_lower_triangle(capsys):
    ch06.check_causal_mask(causal_mask)
    assert capsys.readouterr().out == "✓ Exercise 6.2 · A causal mask for SDPA: correct.\n"


@pytest.mark.parametrize("wrong,hint", [
    (lambda q, k: torch.ones(q, k, dtype=torch.bool).triu(1), "nn.MultiheadAttention's convention"),
    (lambda q, k: torch.ones(q, k, dtype=torch.bool).tril(k - q), "top-left"),
    (lambda q, k: torch.ones(q, k).tril(), "boolean"),
    (lambda q, k: torch.ones(q, k, dtype=torch.bool).tril(-1), "keys 0..i"),
])
def test_causal_mask_explains_typical_mistakes(wrong, hint):
    with pytest.raises(ExerciseError) as info:
        ch06.check_causal_mask(wrong)
    assert hint in str(info.value) and "6.2" in str(info.value)


# ---- 6.3 valid_lens as an SDPA mask ----

def lengths_to_mask(valid_lens, num_keys):
    column = valid_lens[:, None, None] if valid_lens.dim() == 1 else valid_lens[:, :, None]
    return torch.arange(num_keys) < column


def test_lengths_to_mask_accepts_a_broadcast_comparison(capsys):
    ch06.check_lengths_to_mask(lengths_to_mask)
    assert capsys.readouterr().out == "✓ Exercise 6.3 · valid_lens as an SDPA mask: correct.\n"


def copied_per_query(valid_lens, num_keys):
    lens = valid_lens[:, None].expand(-1, 4) if valid_lens.dim() == 1 else valid_lens
    return torch.arange(num_keys) < lens[..., None]  # (batch, queries, keys) even for 1-D lengths


@pytest.mark.parametrize("wrong,hint", [
    (lambda lens, k: torch.arange(k) <= (lens[:, None, None] if lens.dim() == 1 else lens[..., None]),
     "use <, not <="),
    (lambda lens, k: torch.arange(k) >= (lens[:, None, None] if lens.dim() == 1 else lens[..., None]),
     "True where a query may attend"),
    (copied_per_query, "keep a query axis of size 1"),
    (lambda lens, k: (torch.arange(k) < lens[:, None]).float(), "already boolean"),
])
def test_lengths_to_mask_explains_typical_mistakes(wrong, hint):
    with pytest.raises(ExerciseError) as info:
        ch06.check_lengths_to_mask(wrong)
    assert hint in str(info.value) and "6.3" in str(info.value)
