"""Checks for the exercises of notebook 06 · Efficient attention.

The two masks asked for here are ones d2lmini does not build (its causal mask
lines query i up with key i, and its valid lengths pad on the right), so their
references live in this module, private.
"""

import math

import torch
import torch.nn.functional as F

from ..attention import DotProductAttention, MultiHeadAttention
from ..i18n import N_, _
from ._feedback import check, expect_close, passed, require
from ._feedback import hint as hint  # an error asks the learner to run ch06.hint()
from ._support import expect_mask, hint_for, mask_rows, seeded

LONGEST = N_("Exercise 6.1 · The longest sequence that fits")
DECODE = N_("Exercise 6.2 · A causal mask for cached decoding")
LEFT = N_("Exercise 6.3 · Left padding for batched generation")


def _expect_bool_tensor(received, exercise, call):
    require(isinstance(received, torch.Tensor) and received.dtype == torch.bool, exercise,
            _("a boolean tensor from {call}").format(call=call),
            _("{type} of dtype {dtype}").format(type=type(received).__name__, dtype=received.dtype)
            if isinstance(received, torch.Tensor) else f"{type(received).__name__}",
            (_("SDPA adds a float attn_mask to the scores, so 1.0 and 0.0 would hide nothing"),
             _("return the booleans of a comparison, True where a query may attend")))


def _random_qkv(seed, batch, num_queries, num_keys):
    """Queries, keys and values of size 4, 4 and 3, from the check's own seed."""
    with seeded(seed):
        return torch.randn(batch, num_queries, 4), torch.randn(batch, num_keys, 4), torch.randn(batch, num_keys, 3)


# Exercise 6.1

def _max_tokens(batch, heads, itemsize, budget):
    """The largest n with batch · heads · n² · itemsize ≤ budget, in whole numbers: no float rounding."""
    return math.isqrt(budget // (batch * heads * itemsize))


def _max_tokens_hint(received, batch, heads, dtype, budget):
    """The hint for a wrong ``max_tokens``: the typical mistakes, each named, then the general one."""
    itemsize = dtype.itemsize
    mistakes = {
        budget // (batch * heads * itemsize): (
            _("that is how many scores fit, and S holds num_tokens² of them for each head of each example"),
            _("the tokens grow as the square root of the scores: find the largest n whose n² scores fit")),
        _max_tokens(batch, heads, itemsize, budget) + 1: (
            _("one token too many: that length needs more bytes than the budget"),
            _("round down: the answer is the largest length that fits, not the nearest one")),
        _max_tokens(batch, 1, itemsize, budget): (
            _("every head has its own (tokens, tokens) matrix: the budget holds num_heads of them per example"),
            _("there is one score matrix per head of each example")),
        _max_tokens(batch, heads, 4, budget): (
            _("{dtype} takes {itemsize} bytes per number, not 4: use dtype.itemsize").format(
                dtype=dtype, itemsize=itemsize),),
    }
    return mistakes.get(received, (
        _("S takes batch_size · num_heads · num_tokens² · dtype.itemsize bytes: find the largest num_tokens for "
          "which that is at most the budget"),
        _("solve for num_tokens, then make sure the length you return fits and one token more does not")))


@check(LONGEST)
def check_max_tokens(max_tokens):
    """``max_tokens(batch_size, num_heads, dtype, budget_bytes)``: the longest sequence whose scores fit."""
    cases = []
    for batch, heads, tokens, dtype in ((2, 4, 16, torch.float32), (1, 3, 10, torch.float16),
                                        (3, 1, 7, torch.float64)):
        with seeded(61):
            mha = MultiHeadAttention(2 * heads, heads, 0.0, query_size=2 * heads, key_size=2 * heads,
                                     value_size=2 * heads).to(dtype)
            X = torch.randn(batch, tokens, 2 * heads, dtype=dtype)
            mha(X, X, X)
        weights = mha.attention_weights  # (batch, heads, tokens, tokens): what the explicit path keeps
        fits = weights.nelement() * weights.element_size()  # measured, exactly `tokens` tokens' worth
        cases += [(batch, heads, dtype, fits, tokens), (batch, heads, dtype, fits - 1, tokens - 1),
                  (batch, heads, dtype, fits + fits // 2, _max_tokens(batch, heads, dtype.itemsize, fits + fits // 2))]
    cases.append((8, 12, torch.bfloat16, 80 * 2**30, _max_tokens(8, 12, 2, 80 * 2**30)))  # a GPU-sized budget
    for batch, heads, dtype, budget, expected in cases:
        call = f"max_tokens({batch}, {heads}, {dtype}, {budget})"
        received = max_tokens(batch, heads, dtype, budget)
        require(isinstance(received, int) and not isinstance(received, bool), LONGEST,
                _("an int for {call}").format(call=call), f"{type(received).__name__} {received!r}",
                (_("return a whole number of tokens, an int"), _("int(...) turns a float into one, rounding down")))
        require(received == expected, LONGEST, _("{expected} for {call}").format(expected=expected, call=call),
                f"{received}", _max_tokens_hint(received, batch, heads, dtype, budget))
    one, two = max_tokens(8, 12, torch.float32, 80 * 2**30), max_tokens(8, 12, torch.float32, 160 * 2**30)
    passed(LONGEST, _("In 80 GiB, batch 8 and 12 heads, float32 scores fit {one:,} tokens; twice the memory fits "
                      "{two:,}, only √2 times as many.").format(one=one, two=two))


# Exercise 6.2

def _decode_reference(num_queries, num_keys):
    """New query i is the token at position num_keys - num_queries + i: it sees keys up to there."""
    positions = torch.arange(num_keys - num_queries, num_keys)[:, None]  # (queries, 1)
    return torch.arange(num_keys)[None, :] <= positions  # (queries, keys)


_DECODE_HINT = (N_("new query i is the token at position num_keys - num_queries + i"),
                N_("True for keys 0 up to that position, False after it: compare the key positions, a row, with "
                   "the new queries' positions, a column"))


def _decode_hint():
    """Exercise 6.2's general hint, in the learner's language."""
    return tuple(_(step) for step in _DECODE_HINT)


def _decode_mistakes(num_queries, num_keys):
    """The typical wrong masks of Exercise 6.2, each with its hint."""
    cached = num_keys - num_queries
    everything = torch.ones(num_queries, num_keys, dtype=torch.bool)
    return [
        (~_decode_reference(num_queries, num_keys),
         (_("this is True where attention is forbidden, nn.MultiheadAttention's convention"),
          _("SDPA's boolean mask is True where a query MAY attend"))),
        (everything.tril(),
         (_("this lines query i up with key i (top-left), as SDPA's is_causal does"),
          _("in decoding the {num_queries} new queries are the LAST {num_queries} of {num_keys} tokens: query i "
            "is token {cached} + i, so its row ends {cached} columns further right (see the diagonal argument "
            "of torch.tril)").format(num_queries=num_queries, num_keys=num_keys, cached=cached))),
        (everything.tril(cached - 1),
         (_("a new token may attend to itself"),
          _("its own key is already in the cache, so key num_keys - num_queries + i is True for query i"))),
        (everything.tril(cached + 1),
         (_("each query sees one key too many, a token from its future"),
          _("query i's last key is num_keys - num_queries + i"))),
        (everything.triu(cached),
         (_("your mask is flipped: it keeps each query's future and hides its past"),
          _("query i may see the keys up to its own position, on and below the shifted diagonal: torch.tril, "
            "not torch.triu"))),
        (everything, (_("every key is visible, the new tokens' future ones too: that is right only for a "
                        "single new token"),
                      _("query i may see keys 0 .. num_keys - num_queries + i"))),
    ]


@check(DECODE)
def check_decode_mask(decode_mask):
    """``decode_mask(num_queries, num_keys)``: the new queries are the last of num_keys tokens."""
    for num_queries, num_keys in ((3, 7), (1, 5), (4, 4)):
        call = f"decode_mask({num_queries}, {num_keys})"
        received = decode_mask(num_queries, num_keys)
        _expect_bool_tensor(received, DECODE, call)
        expect_mask(received, _decode_reference(num_queries, num_keys), DECODE, call,
                    _("one row per NEW query and one column per key, the cached keys included: "
                      "(num_queries, num_keys)"),
                    _decode_hint(), _decode_mistakes(num_queries, num_keys))
        # All num_keys tokens under ordinary causal attention: the new tokens are its last rows.
        queries, keys, values = _random_qkv(62, 2, num_keys, num_keys)
        full = DotProductAttention(0.0, causal=True)(queries, keys, values)  # (2, keys, 3)
        output = F.scaled_dot_product_attention(queries[:, -num_queries:], keys, values, attn_mask=received.cpu())
        expect_close(output, full[:, -num_queries:].detach(), DECODE, _decode_hint())
    passed(DECODE, _("SDPA with your mask gives the new tokens the outputs that causal attention over all "
                     "the tokens gives them. One new token (1 query, 5 keys) needs no mask at all, and with "
                     "as many queries as keys the mask is is_causal's."))


# Exercise 6.3

def _left_padded_reference(valid_lens, num_steps):
    """Causal, and only the last valid_lens[b] positions of example b are real keys."""
    steps = torch.arange(num_steps)
    causal = steps[None, :] <= steps[:, None]  # (queries, keys)
    real = steps[None, :] >= num_steps - valid_lens[:, None]  # (batch, keys)
    return causal & real[:, None, :]  # (batch, queries, keys)


def _left_padded_hint(received, valid_lens, num_steps):
    expected = _left_padded_reference(valid_lens, num_steps)
    steps = torch.arange(num_steps)
    causal = steps[None, :] <= steps[:, None]  # (queries, keys)
    first_real = (num_steps - valid_lens)[:, None, None]  # (batch, 1, 1)
    real_query = steps[None, :, None] >= first_real  # (batch, queries, 1)
    mistakes = [
        (~expected, (_("this is True where attention is forbidden, nn.MultiheadAttention's convention"),
                     _("SDPA's boolean mask is True where a query MAY attend"))),
        (causal & (steps < valid_lens[:, None, None]),
         (_("this puts the padding on the right (keys j < valid_lens[b])"),
          _("here it is on the LEFT: the real keys of example b are its last valid_lens[b] positions, "
            "j ≥ num_steps - valid_lens[b]"))),
        ((steps >= first_real).expand_as(expected),
         (_("the future is visible: a token may attend to keys j ≤ i only"),
          _("combine the padding mask with the causal one"))),
        (causal.expand_as(expected),
         (_("the padding gets weight"),
          _("a real token must ignore the first num_steps - valid_lens[b] positions of example b"))),
        (causal & (steps > first_real),
         (_("one real key is missing"),
          _("example b's first real token sits at position num_steps - valid_lens[b], and that key is True"))),
        (causal & (steps >= first_real - 1),
         (_("one padding key is visible"), _("keys before position num_steps - valid_lens[b] are padding"))),
        (expected & ~torch.eye(num_steps, dtype=torch.bool),
         (_("the diagonal is missing: a token may attend to itself"),)),
    ]
    default = (_("query i of example b may attend to key j when j ≤ i and j ≥ num_steps - valid_lens[b]"),
               _("build a (steps, steps) causal mask and a (batch, 1, steps) padding mask, and combine them with &"))
    if torch.equal(received & real_query, expected):  # right, but for the padded queries' rows
        default = (_("the rows of the padded queries (i < num_steps - valid_lens[b]) must be all False"),
                   _("a padding token attends to nothing"))
    return hint_for(received, default, mistakes)


@check(LEFT)
def check_left_padded_mask(left_padded_mask):
    """``left_padded_mask(valid_lens, num_steps)``: causal, with the padding on the left."""
    valid_lens, num_steps = torch.tensor([3, 6, 1, 5]), 6
    call = f"left_padded_mask(torch.tensor({valid_lens.tolist()}), {num_steps})"
    received = left_padded_mask(valid_lens.clone(), num_steps)
    _expect_bool_tensor(received, LEFT, call)
    expected = _left_padded_reference(valid_lens, num_steps)
    if received.dim() == 3 and received.shape[1] == 1:
        shape_hint = _("the causal part gives each query a row of its own: a (batch, 1, num_steps) mask "
                       "can only hide padding")
    else:
        shape_hint = _("one (queries, keys) mask per example: (batch, num_steps, num_steps)")
    require(received.shape == expected.shape, LEFT,
            _("shape {shape} from {call}").format(shape=tuple(expected.shape), call=call),
            _("shape {shape}").format(shape=tuple(received.shape)), shape_hint)
    received = received.cpu()
    hint = _left_padded_hint(received, valid_lens, num_steps)
    for b, length in enumerate(valid_lens.tolist()):
        example = _("example {b} (valid length {length}) of {call}:").format(b=b, length=length, call=call)
        require(torch.equal(received[b], expected[b]), LEFT,
                _("for {example}{rows}").format(example=example, rows=mask_rows(expected[b])),
                _("for {example}{rows}").format(example=example, rows=mask_rows(received[b])), hint)
    # The real tokens must get the outputs of their sequence run alone, without padding.
    queries, keys, values = _random_qkv(63, len(valid_lens), num_steps, num_steps)  # padding holds noise too
    output = F.scaled_dot_product_attention(queries, keys, values, attn_mask=received)  # (batch, steps, 3)
    causal = DotProductAttention(0.0, causal=True)
    for b, length in enumerate(valid_lens.tolist()):
        alone = causal(queries[b:b + 1, -length:], keys[b:b + 1, -length:], values[b:b + 1, -length:])
        expect_close(output[b, -length:], alone[0].detach(),
                     _("{exercise} (example {b})").format(exercise=_(LEFT), b=b), hint)
    passed(LEFT, _("Every real token gets the output of its sequence run alone, without padding, and "
                   "a padding token has no key to attend to."))
