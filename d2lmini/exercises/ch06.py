"""Checks for the exercises of notebook 06 · Efficient attention."""

import torch
import torch.nn.functional as F

from ..attention import DotProductAttention, MultiHeadAttention
from ..masking import attention_mask
from ._feedback import expect, expect_close, passed
from ._support import seeded

BYTES = "Exercise 6.1 · The bytes of the score matrix"
CAUSAL = "Exercise 6.2 · A causal mask for SDPA"
LENGTHS = "Exercise 6.3 · valid_lens as an SDPA mask"


def _sdpa_agrees(mask, attention, batch, num_queries, num_keys, exercise, hint, valid_lens=None):
    """SDPA with the learner's boolean ``mask`` must give what d2lmini's ``attention`` gives."""
    with seeded(60):
        queries, keys = torch.randn(batch, num_queries, 4), torch.randn(batch, num_keys, 4)
        values = torch.randn(batch, num_keys, 3)
    expect_close(F.scaled_dot_product_attention(queries, keys, values, attn_mask=mask),
                 attention(queries, keys, values, valid_lens), exercise, hint)


def check_score_bytes(score_bytes):
    """``score_bytes(batch_size, num_heads, num_tokens, dtype)``: bytes of the explicit weights."""
    for batch, heads, tokens, dtype in ((2, 4, 16, torch.float32), (1, 3, 10, torch.float16),
                                        (3, 1, 7, torch.float64)):
        with seeded(61):
            mha = MultiHeadAttention(2 * heads, heads, 0.0, query_size=2 * heads, key_size=2 * heads,
                                     value_size=2 * heads).to(dtype)
            X = torch.randn(batch, tokens, 2 * heads, dtype=dtype)
            mha(X, X, X)
        weights = mha.attention_weights  # (batch, heads, tokens, tokens): what the explicit path keeps
        expected = weights.nelement() * weights.element_size()
        received = score_bytes(batch, heads, tokens, dtype)
        call = f"score_bytes({batch}, {heads}, {tokens}, {dtype})"
        expect(isinstance(received, int) and not isinstance(received, bool), BYTES,
               f"an int for {call}", f"{type(received).__name__} {received!r}",
               "return a whole number of bytes, e.g. with int(...)")
        itemsize = weights.element_size()
        if received == batch * tokens * tokens * itemsize and heads > 1:
            hint = "every head has its own (tokens, tokens) matrix: multiply by num_heads"
        elif received == batch * heads * tokens * itemsize:
            hint = "there is one score per (query, key) pair: num_tokens ** 2, not num_tokens"
        elif received == batch * heads * tokens * tokens * 4 and itemsize != 4:
            hint = f"{dtype} takes {itemsize} bytes per number, not 4: use dtype.itemsize"
        else:
            hint = "batch_size * num_heads * num_tokens**2 numbers, each dtype.itemsize bytes"
        expect(received == expected, BYTES, f"{expected} for {call}", f"{received}", hint)
    passed(BYTES, f"At 4,096 tokens, batch 8 and 12 heads that is "
                  f"{score_bytes(8, 12, 4096, torch.float32) / 2**30:.1f} GiB in float32.")


def check_causal_mask(causal_mask):
    """``causal_mask(num_queries, num_keys)``: boolean, True where a query may attend."""
    for num_queries, num_keys in ((4, 4), (3, 5), (5, 3)):
        received = causal_mask(num_queries, num_keys)
        call = f"causal_mask({num_queries}, {num_keys})"
        expect(isinstance(received, torch.Tensor) and received.dtype == torch.bool, CAUSAL,
               f"a boolean tensor from {call}",
               f"{type(received).__name__}" + (f" of dtype {received.dtype}"
                                               if isinstance(received, torch.Tensor) else ""),
               "SDPA reads a boolean attn_mask as 'may attend'; build it with torch.ones(..., dtype=torch.bool)")
        expected = torch.ones(num_queries, num_keys, dtype=torch.bool).tril()
        if received.shape == expected.shape and torch.equal(received, ~expected):
            hint = ("this is True where attention is forbidden, nn.MultiheadAttention's convention; "
                    "SDPA's boolean mask is True where a query MAY attend")
        elif received.shape == expected.shape and torch.equal(
                received, torch.ones(num_queries, num_keys, dtype=torch.bool).tril(num_keys - num_queries)):
            hint = ("query i lines up with key i (top-left), as SDPA's is_causal does, "
                    "not with the last key")
        else:
            hint = "query i may attend to keys 0..i: the lower triangle, torch.tril"
        expect_close(received.float(), expected.float(), CAUSAL, hint)
        # The mask must make SDPA do what is_causal does.
        _sdpa_agrees(received, DotProductAttention(0.0, causal=True), 2, num_queries, num_keys, CAUSAL, hint)
    passed(CAUSAL)


def check_lengths_to_mask(lengths_to_mask):
    """``lengths_to_mask(valid_lens, num_keys)``: a broadcastable boolean attn_mask."""
    cases = (torch.tensor([2, 5, 1]), torch.tensor([[1, 2, 3, 4], [4, 4, 1, 2], [5, 5, 5, 5]]))
    for valid_lens in cases:
        num_queries, num_keys = 4, 5
        received = lengths_to_mask(valid_lens, num_keys)
        expected = attention_mask(valid_lens, len(valid_lens), num_queries, num_keys)  # (batch, 1 or queries, keys)
        call = f"lengths_to_mask of {valid_lens.dim()}-D lengths {tuple(valid_lens.shape)}"
        expect(isinstance(received, torch.Tensor) and received.dtype == torch.bool, LENGTHS,
               f"a boolean tensor from {call}", f"{type(received).__name__}" + (
                   f" of dtype {received.dtype}" if isinstance(received, torch.Tensor) else ""),
               "compare key positions with the lengths: the result of < is already boolean")
        if valid_lens.dim() == 1 and received.dim() == 3 and received.shape[1] == num_queries:
            shape_hint = ("a 1-D valid_lens is the same for every query: keep a query axis of size 1 "
                          "(valid_lens[:, None, None]) and let SDPA broadcast, instead of a copy per query")
        else:
            shape_hint = ("(batch, 1, keys) for 1-D lengths, (batch, queries, keys) for 2-D: "
                          "compare torch.arange(num_keys) with the lengths by broadcasting")
        expect(received.shape == expected.shape, LENGTHS, f"shape {tuple(expected.shape)} for {call}",
               f"shape {tuple(received.shape)}", shape_hint)
        if torch.equal(received, attention_mask(valid_lens + 1, len(valid_lens), num_queries, num_keys)):
            hint = "key j is valid when j < valid_len (positions start at 0): use <, not <="
        elif torch.equal(received, ~expected):
            hint = "SDPA's boolean mask is True where a query may attend, i.e. on the valid keys"
        else:
            hint = "key j of example b is valid when j < valid_lens[b] (or valid_lens[b, i] for query i)"
        expect_close(received.float(), expected.float(), LENGTHS, hint)
        _sdpa_agrees(received, DotProductAttention(0.0), 3, num_queries, num_keys, LENGTHS, hint, valid_lens)
    passed(LENGTHS)
