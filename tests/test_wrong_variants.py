"""The wrong-variant catalogue: every check names each typical mistake in words of its own.

For each public check of every chapter module, ``CATALOGUE`` holds known-wrong
variants of the reference answer, each with a pattern its error must show, and
one wrong answer the check has no words for. Every variant must fail with an
``ExerciseError`` whose first hint differs from that fallback's (the check's
generic hint) and from the first hint of every other variant of the check.
The variants are built from the reference answers in ``exercise_answers.py``
and live here only. docs/instructors.md says how to add one.
"""

import itertools
import math
import re
from typing import NamedTuple

import exercise_answers as answers
import pytest
import torch
import torch.nn.functional as F

import d2lmini as d2l
from d2lmini import exercises
from d2lmini.exercises import ExerciseError


class Entry(NamedTuple):
    unrecognised: object  # a wrong answer with no hint of its own: it gets the check's generic hint
    variants: dict  # name -> (wrong answer, regex the error's text must match)


# ---- chapter 01 ----

def _worst_sigma(x_train, y_train, x_val, y_val, sigmas):
    errors = [((d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", s)[0] - y_val) ** 2).mean()
              for s in sigmas]
    return sigmas[int(torch.stack(errors).argmax())]


def _block_out_per_point(x, y, sigma, m):
    keep = [(torch.arange(len(x)) - i).abs() > m for i in range(len(x))]
    return torch.cat([d2l.nadaraya_watson(x[i:i + 1], x[k], y[k], "gaussian", sigma)[0]
                      for i, k in enumerate(keep)]) - y


def _block_out_loss_sliced(x, y, sigma, m):
    predictions = []
    for i in range(len(x)):
        keys, values = torch.cat([x[:i - m], x[i + m + 1:]]), torch.cat([y[:i - m], y[i + m + 1:]])
        predictions.append(d2l.nadaraya_watson(x[i:i + 1], keys, values, "gaussian", sigma)[0])
    return ((torch.cat(predictions) - y) ** 2).mean()


# ---- chapter 02 ----

def _masked_mean_filled(values, valid_lens):
    """Exercise 2.1 with the chapter's own masked softmax, which fills with -1e6: an empty row is uniform."""
    real = torch.arange(values.shape[1]) < valid_lens[:, None]  # (batch, steps)
    weights = torch.softmax(torch.zeros(real.shape).masked_fill(~real, -1e6), dim=-1)
    return (weights[:, None] @ values).squeeze(1)


def _window_with_and(num_steps, window):
    """Exercise 2.3 with Python's `and`, which asks each mask for a single True or False."""
    steps = torch.arange(num_steps)
    return (steps[None, :] <= steps[:, None]) and (steps[None, :] > steps[:, None] - window)


# ---- chapter 04 ----

def _prefix_rows(queries, keys, values, prefix=1):
    """Exercise 4.5 with the prefix's rows (its queries) allowed every key, instead of its columns."""
    n = queries.shape[1]
    scores = queries @ keys.transpose(1, 2) / math.sqrt(queries.shape[2])
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    allowed[:prefix] = True
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1) @ values


def _causal(mask=torch.tril, scale=None, after_softmax=False, fill=float("-inf"), dim=-1):
    """Causal attention with one mistake switched on: (queries, keys, values) -> (B, n, v)."""
    def attention(queries, keys, values):
        n, d = queries.shape[1], queries.shape[2]
        scores = queries @ keys.transpose(1, 2) / (math.sqrt(d) if scale is None else scale(d))
        allowed = mask(torch.ones(n, n, dtype=torch.bool))
        if after_softmax:
            return (torch.softmax(scores, -1) * allowed) @ values
        return torch.softmax(scores.masked_fill(~allowed, fill), dim) @ values
    return attention


def _weights_of(attention):
    """The weights of ``attention``: its output for values that are the identity, one value per key."""
    return lambda queries, keys: attention(queries, keys, torch.eye(keys.shape[1]).expand(keys.shape[0], -1, -1))


def _half_norms(x):
    """½‖x‖² of each vector of x, (..., n, d) -> (..., n, 1)."""
    return 0.5 * (x ** 2).sum(-1, keepdim=True)


def _full_distance(queries, keys):
    """Exercise 4.3 with both norms appended: the dot products are the full -½‖q - k‖²."""
    half_q, half_k = _half_norms(queries), _half_norms(keys)
    return (torch.cat([queries, torch.ones_like(half_q), -half_q], -1),
            torch.cat([keys, -half_k, torch.ones_like(half_k)], -1))


def _discarded_mask(queries, keys, values):
    scores = queries @ keys.transpose(1, 2) / 2
    scores.masked_fill(~torch.ones(5, 5, dtype=torch.bool).tril(), float("-inf"))  # the result is thrown away
    return torch.softmax(scores, -1) @ values


# ---- chapter 05 ----

def _wrong_head_scales(answer):
    """A head's scores scaled by √num_hiddens (12 here) and not at all, for an answer whose scale_width
    replaces d_head."""
    return {"√num_hiddens": (lambda *args: answer(*args, scale_width=12), r"not by √num_hiddens"),
            "no scale": (lambda *args: answer(*args, scale_width=1),
                         r"divide the scores by √d_head before the softmax")}


def _einsum_unfolded(queries, keys, values, mha):
    """The heads split by a reshape to (B, h, n, d_head) with no transpose, and joined the same way."""
    h, B = mha.num_heads, queries.shape[0]

    def split(x):
        return x.reshape(B, h, x.shape[1], -1)

    q, k, v = split(queries @ mha.W_q.weight.T), split(keys @ mha.W_k.weight.T), split(values @ mha.W_v.weight.T)
    weights = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, -1)
    return (weights @ v).transpose(1, 2).reshape(B, queries.shape[1], -1) @ mha.W_o.weight.T


def _einsum_joined_unmoved(queries, keys, values, mha):
    h, B = mha.num_heads, queries.shape[0]

    def split(x):
        return x.reshape(B, x.shape[1], h, -1).transpose(1, 2)

    q, k, v = split(queries @ mha.W_q.weight.T), split(keys @ mha.W_k.weight.T), split(values @ mha.W_v.weight.T)
    weights = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, -1)
    return (weights @ v).reshape(B, queries.shape[1], -1) @ mha.W_o.weight.T


def _after_W_o(mha, X, head):
    output = mha(X, X, X).clone()
    output[..., head * 4:(head + 1) * 4] = 0
    return output


def _einsum_no_W_o(queries, keys, values, mha):
    return answers.einsum_multihead(queries, keys, values, mha) @ torch.linalg.inv(mha.W_o.weight.T)


def _head_weights_over_queries(mha, X, head):
    d_head = mha.W_q.weight.shape[0] // mha.num_heads
    rows = slice(head * d_head, (head + 1) * d_head)
    q, k = X @ mha.W_q.weight[rows].T, X @ mha.W_k.weight[rows].T
    return torch.softmax(q @ k.transpose(1, 2) / d_head ** 0.5, 1)


def _split_reshape_alone(X, num_heads):
    T, B, d = X.shape
    return X.reshape(B * num_heads, T, d // num_heads)


def _split_as_if_batch_first(X, num_heads):
    T, B, d = X.shape
    return X.reshape(B, T, num_heads, d // num_heads).permute(0, 2, 1, 3).reshape(B * num_heads, T, -1)


def _split_heads_behind_positions(X, num_heads):
    T, B, d = X.shape
    return X.transpose(0, 1).reshape(B * num_heads, T, d // num_heads)


def _split_head_major(X, num_heads):
    T, B, d = X.shape
    return X.reshape(T, B, num_heads, d // num_heads).permute(2, 1, 0, 3).reshape(B * num_heads, T, -1)


def _split_positions_as_batch(X, num_heads):
    T, B, d = X.shape
    return X.reshape(T, B, num_heads, d // num_heads).permute(0, 2, 1, 3).reshape(T * num_heads, B, -1)


def _split_interleaved(X, num_heads):
    T, B, d = X.shape
    return X.reshape(T, B, d // num_heads, num_heads).permute(1, 3, 0, 2).reshape(B * num_heads, T, -1)


# ---- chapter 07 ----

ALTERNATING = itertools.cycle([True, False])


class Transposed(torch.nn.Module):
    def __init__(self, max_len, num_hiddens):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(num_hiddens, max_len))

    def forward(self, X):
        return X + self.table[:, :X.shape[1]].T


class EmbeddingAlone(answers.LearnedPositionalEmbedding):
    def forward(self, X):
        return self.table[:X.shape[1]].expand(X.shape[0], -1, -1)


class SinusoidalStart(answers.LearnedPositionalEmbedding):
    def __init__(self, max_len, num_hiddens):
        super().__init__(max_len, num_hiddens)
        self.table = torch.nn.Parameter(d2l.PositionalEncoding(num_hiddens, 0.0, max_len=max_len).P[0].clone())


class RowPerExample(answers.LearnedPositionalEmbedding):
    def forward(self, X):
        return X + self.table[:X.shape[0]].unsqueeze(1)  # (batch, 1, hiddens): row b for every token of example b


class WholeTable(answers.LearnedPositionalEmbedding):
    def forward(self, X):
        return X + self.table  # (max_len, hiddens): every row, however many steps X has


class ScaledParameter(answers.LearnedPositionalEmbedding):
    """Wrong: the wrapper scaled, nn.Parameter(t) * 0.01, which is a plain tensor again."""

    def __init__(self, max_len, num_hiddens):
        torch.nn.Module.__init__(self)
        self.table = torch.nn.Parameter(torch.randn(max_len, num_hiddens)) * 0.01


class Detached(answers.LearnedPositionalEmbedding):
    def forward(self, X):
        return X + self.table.detach()[:X.shape[1]]


# ---- chapter 08 ----

def _cross(**options):
    return lambda *args: answers.make_cross_attention(*args, **options)


def _zeros_step(outputs, lens, W_q, W_k):
    return lambda state: (torch.zeros(3, 8), torch.zeros(3, 6))


def _sort(**options):
    return lambda source, lens: answers.sort_alignment(source, lens, **options)


def _full_length(lens, n):
    return answers.reversal_alignment(lens, n, lengths=torch.full_like(lens[:, None], n))


def _real_rows(lens, n):
    return (torch.arange(n) < lens[:, None])[:, :, None]


def _ones(*shape):
    return torch.ones(*shape, dtype=torch.bool)


CATALOGUE = {
    # ---- chapter 01 ----
    exercises.ch01.check_triangular: Entry(d2l.boxcar, {
        "Epanechnikov": (d2l.epanechnikov, r"that is the Epanechnikov kernel, the parabola"),
        "no clamp": (lambda u: 1 - u.abs(), r"some of your values are negative"),
        "no absolute value": (lambda u: torch.clamp(1 - u, min=0), r"k\(-0.5\) should equal k\(0.5\)"),
        "a list": (lambda u: answers.triangular_right(u).tolist(), r"expected: a torch.Tensor"),
    }),
    exercises.ch01.check_best_sigma: Entry(lambda *args: 0.4, {
        "training error": (lambda xt, yt, xv, yv, s: answers.best_sigma_right(xt, yt, xt, yt, s),
                           r"the width the training error picks"),
        "argmax": (_worst_sigma, r"LARGEST validation error"),
        "the index": (lambda *args: args[-1].index(answers.best_sigma_right(*args)),
                      r"you returned the index 4 of the best width, not the width"),
        "every error": (lambda *args: torch.ones(len(args[-1])), r"return a single width"),
    }),
    exercises.ch01.check_block_out_loss: Entry(lambda x, y, sigma, m: torch.tensor(0.5), {
        "own key kept": (answers.block_out_loss_hiding(lambda offsets, m: offsets != offsets),
                         r"each query x_i still sees its own key x_i"),
        "m ignored": (answers.block_out_loss_hiding(lambda offsets, m: offsets == 0),
                      r"that is the leave-one-out loss"),
        "block too small": (answers.block_out_loss_hiding(lambda offsets, m: offsets.abs() < m),
                            r"one neighbour too few"),
        "block too large": (answers.block_out_loss_hiding(lambda offsets, m: offsets.abs() <= m + 1),
                            r"one neighbour too many"),
        "one side": (answers.block_out_loss_hiding(lambda offsets, m: (offsets <= 0) & (offsets >= -m)),
                     r"on one side of x_i only"),
        "negative slice end": (_block_out_loss_sliced,
                               r"for the first 2 queries i - m is negative, and a slice x\[:i - m\] whose end is "
                               r"negative counts from the other end of x"),
        "sum": (lambda x, y, s, m: answers.block_out_loss_right(x, y, s, m) * len(x),
                r"you returned the sum of the squared"),
        "root": (lambda x, y, s, m: answers.block_out_loss_right(x, y, s, m).sqrt(),
                 r"you returned the root of the mean"),
        "per point": (lambda *args: _block_out_per_point(*args) ** 2, r"return one number, the loss"),
    }),
    # ---- chapter 02 ----
    exercises.ch02.check_masked_mean: Entry(lambda values, lens: torch.zeros(4, 3), {
        "padding counted": (lambda values, lens: values.mean(dim=1), r"padding included"),
        "0/0": (lambda values, lens: (values * (torch.arange(5) < lens[:, None])[..., None]).sum(1)
                / lens[:, None], r"an example of length 0 gives 0/0 = NaN"),
        "query axis kept": (lambda values, lens: answers.masked_mean_right(values, lens).unsqueeze(1),
                            r"drop the query axis of length 1"),
        "the chapter's -1e6 fill": (_masked_mean_filled, r"(?s)example 2 \(valid length 0\): \[0, 0, 0\].*"
                                    r"an example of length 0 gets uniform weights, not zeros"),
    }),
    exercises.ch02.check_padded_queries: Entry(lambda scores, lens: torch.zeros_like(scores), {
        "keys only": (lambda scores, lens: d2l.masked_softmax(scores, lens), r"the padded queries still attend"),
        "queries only": (lambda scores, lens: torch.softmax(scores, -1) * answers.is_real(scores, lens)[:, :, None],
                         r"the padded keys still get weight"),
        "after the softmax": (lambda scores, lens: torch.softmax(scores, -1) * answers.is_real(scores, lens)[:, None],
                              r"you masked the weights after the softmax"),
        "uniform padded rows": (lambda scores, lens: torch.softmax(scores.masked_fill(
            ~(answers.is_real(scores, lens)[:, :, None] & answers.is_real(scores, lens)[:, None]), -1e6), -1),
            r"a padded query's row is uniform"),
        "NaN padded rows": (lambda scores, lens: torch.softmax(scores.masked_fill(
            ~(answers.is_real(scores, lens)[:, :, None] & answers.is_real(scores, lens)[:, None]), float("-inf")), -1),
            r"softmax\(-inf, ..., -inf\) = 0/0 = NaN"),
        "wrong shape": (lambda scores, lens: scores[..., 0], r"hint: return the weights, a tensor with the shape"),
    }),
    exercises.ch02.check_local_causal_mask: Entry(lambda n, w: torch.eye(n, dtype=torch.bool), {
        "one key too many": (lambda n, w: answers.local_causal_mask_right(n, w + 1), r"one key too many"),
        "one key too few": (lambda n, w: answers.local_causal_mask_right(n, w - 1), r"one key too few"),
        "diagonal masked": (lambda n, w: answers.local_causal_mask_right(n, w) & ~torch.eye(n, dtype=torch.bool),
                            r"the diagonal is missing"),
        "no window": (lambda n, w: _ones(n, n).tril(), r"this is the plain causal mask: the window is missing"),
        "both directions": (lambda n, w: (torch.arange(n)[None, :] - torch.arange(n)[:, None]).abs() < w,
                            r"the window also reaches into the future"),
        "flipped": (lambda n, w: answers.local_causal_mask_right(n, w).T, r"rows are queries and columns are keys"),
        "inverted": (lambda n, w: ~answers.local_causal_mask_right(n, w), r"True should mark the keys a query MAY"),
        "numbers": (lambda n, w: answers.local_causal_mask_right(n, w).float(), r"return a boolean mask"),
        "and": (_window_with_and, r"(?s)RuntimeError: Boolean value of Tensor.*, raised by local_causal_mask\(6, 3\)"
                                  r".*a chain such as `a <= b & c > d`.*Combine two masks with &, the elementwise and"),
    }),
    # ---- chapter 03 ----
    exercises.ch03.check_concat_scores: Entry(lambda q, k, W_a, w_v: torch.zeros(2, 3, 4), {
        "[k; q]": (lambda q, k, W_a, w_v: torch.tanh(torch.cat([
            k.unsqueeze(1).expand(2, 3, 4, -1), q.unsqueeze(2).expand(2, 3, 4, -1)], -1) @ W_a.T) @ w_v,
            r"you stacked \[k; q\]: put the query first"),
        "no tanh": (lambda q, k, W_a, w_v: torch.cat([
            q.unsqueeze(2).expand(2, 3, 4, -1), k.unsqueeze(1).expand(2, 3, 4, -1)], -1) @ W_a.T @ w_v,
            r"the tanh is missing"),
        "leftover axis": (lambda q, k, W_a, w_v: answers.concat_scores(q, k, W_a, w_v).unsqueeze(-1),
                          r"drop the last axis of length 1"),
    }),
    exercises.ch03.check_weight_gap: Entry(lambda additive, q, k, v, lens: torch.tensor(0.5), {
        "outputs compared": (lambda additive, q, k, v, lens: (
            additive(q, k, v, lens) - d2l.DotProductAttention(0.0)(q, k, v, lens)).abs().max(),
            r"you compared the outputs"),
        "valid_lens forgotten": (lambda additive, q, k, v, lens: answers.weight_gap(additive, q, k, v, None),
                                 r"pass valid_lens to both calls"),
        "a number": (lambda *args: 0.0, r"expected: a torch.Tensor"),
    }),
    exercises.ch03.check_bilinear_scores: Entry(lambda q, k, W: torch.zeros(2, 3, 4), {
        "sign": (lambda q, k, W: -answers.bilinear_scores(q, k, W), r"check the sign"),
        "keys as rows": (lambda q, k, W: k @ W.T @ q.transpose(1, 2), r"your result has one row per key"),
        "scaled": (lambda q, k, W: answers.bilinear_scores(q, k, W) / q.shape[-1] ** 0.5,
                   r"the bilinear score has no scale"),
    }),
    # ---- chapter 04 ----
    exercises.ch04.check_sum_scores: Entry(lambda q, k: torch.zeros(2, 3, 5), {
        "feature axis kept": (lambda q, k: q.unsqueeze(2) + k.unsqueeze(1), r"also sum over the feature axis"),
        "keys only": (lambda q, k: k.sum(-1).unsqueeze(1).expand(-1, q.shape[1], -1),
                      r"the query's sum is missing"),
        "product": (lambda q, k: q.sum(-1).unsqueeze(2) * k.sum(-1).unsqueeze(1), r"you multiplied the two sums"),
    }),
    exercises.ch04.check_attention_cost: Entry(lambda nq, nk, d, bytes_per_element=4: (1, nq * nk * 4), {
        "QKᵀ only": (lambda nq, nk, d, bytes_per_element=4: (nq * nk * d, nq * nk * bytes_per_element),
                     r"you counted QKᵀ only"),
        "a sum": (lambda nq, nk, d, bytes_per_element=4: (2 * (nq + nk) * d, nq * nk * bytes_per_element),
                  r"not their sum"),
        "elements, not bytes": (lambda nq, nk, d, bytes_per_element=4: (2 * nq * nk * d, nq * nk),
                                r"one float32 \(4 bytes\) per \(query, key\) pair"),
        "float32 always": (lambda nq, nk, d, bytes_per_element=4: (2 * nq * nk * d, nq * nk * 4),
                           r"use the bytes_per_element argument"),
        "one number": (lambda nq, nk, d, bytes_per_element=4: 2 * nq * nk * d, r"return two numbers, as a tuple"),
        "two operations each": (lambda nq, nk, d, bytes_per_element=4: (4 * nq * nk * d, nq * nk * bytes_per_element),
                                r"you counted two operations per multiply-add"),
    }),
    exercises.ch04.check_distance_scores: Entry(lambda q, k: (torch.zeros(2, 3, 5), torch.zeros(2, 5, 5)), {
        "full distance": (_full_distance, r"your vectors give the full -½‖q - k‖²"),
        "nothing added": (lambda q, k: answers.distance_as_dot_product(q, k, query_end=lambda q: 0 * q[..., :1]),
                          r"the appended coordinates add nothing"),
        "no half": (lambda q, k: answers.distance_as_dot_product(q, k, key_end=lambda k: -2 * _half_norms(k)),
                    r"halve the squared norm of the keys"),
        "query norm": (lambda q, k: answers.distance_as_dot_product(
            q, k, query_end=lambda q: -_half_norms(q), key_end=lambda k: torch.ones_like(k[..., :1])),
            r"not -½‖q‖²"),
        "key sign": (lambda q, k: answers.distance_as_dot_product(q, k, key_end=_half_norms),
                     r"check the sign of the key's appended number"),
        "signs": (lambda q, k: answers.distance_as_dot_product(-q, k, key_end=_half_norms), r"check the signs"),
        "norm, not squared": (lambda q, k: answers.distance_as_dot_product(
            q, k, key_end=lambda k: -0.5 * k.norm(dim=-1, keepdim=True)), r"‖k‖² is the squared length"),
        "one tensor": (lambda q, k: q @ k.transpose(1, 2), r"(?s)expected: a pair \(longer_queries, longer_keys\)"),
        "nothing appended": (lambda q, k: (q, k), r"nothing was appended"),
    }),
    exercises.ch04.check_causal_attention: Entry(lambda q, k, v: v, {
        "flipped mask": (_causal(mask=torch.triu), r"use torch.tril, not torch.triu"),
        "diagonal masked": (_causal(mask=lambda m: m.tril(-1)), r"the diagonal is masked"),
        "one key too many": (_causal(mask=lambda m: m.tril(1)), r"one key too many"),
        "no scale": (_causal(scale=lambda d: 1), r"divide the scores by √d before the softmax"),
        "scaled by d": (_causal(scale=lambda d: d), r"you divided the scores by d"),
        "masked after the softmax": (_causal(after_softmax=True), r"you zeroed the weights after the softmax"),
        "filled with 0": (_causal(fill=0.0), r"a score of 0 is not a masked score"),
        "softmax over the queries": (_causal(dim=1), r"your softmax runs over the queries"),
        "mask thrown away": (_discarded_mask, r"the mask has no effect"),
        "the weights returned": (lambda q, k, v, prefix=1: _weights_of(answers.causal_attention)(q, k),
                                 r"(?s)shape \(2, 5, 3\) from causal_attention\(queries, keys, values\).*"
                                 r"that is the weights, one per query and key"),
        "the prefix's rows": (_prefix_rows,
                              r"(?s)causal_attention\(queries, keys, values\): not yet.*"
                              r"you allowed the prefix's rows, its queries, to see every key"),
        "a 2-D output for the prefix": (lambda q, k, v, prefix=1: answers.causal_attention(q, k, v, prefix)
                                        if prefix == 1 else v[0],
                                        r"(?s)shape \(2, 5, 3\) from causal_attention\(queries, keys, values, "
                                        r"prefix=3\).*return the output, \(B, n, d_v\)"),
    }),
    exercises.ch04.check_fixed_causal_weights: Entry(lambda q, k: torch.full((2, 5, 5), 0.2), {
        "as given": (answers.causal_weights_with_a_bug, r"this is still the function as given: "),
        "filled with 0": (_weights_of(_causal(fill=0.0)), r"a score of 0 is not a masked score"),
        "flipped mask": (_weights_of(_causal(mask=torch.triu)), r"use torch.tril, not torch.triu"),
        "diagonal masked": (_weights_of(_causal(mask=lambda m: m.tril(-1))), r"the diagonal is masked"),
        "one key too many": (_weights_of(_causal(mask=lambda m: m.tril(1))), r"one key too many"),
        "no scale": (_weights_of(_causal(scale=lambda d: 1)), r"divide the scores by √d before the softmax"),
        "softmax over the queries": (_weights_of(_causal(dim=1)), r"your softmax runs over the queries"),
    }),
    # ---- chapter 05 ----
    exercises.ch05.check_parameter_count: Entry(lambda n, h, q, k, v, b: n * (q + k + v + n) // h, {
        "times the heads": (lambda n, h, q, k, v, b: h * answers.parameter_count(n, h, q, k, v, b),
                            r"do not multiply by num_heads"),
        "no biases": (lambda n, h, q, k, v, b: n * (q + k + v + n), r"each of the four layers also has biases"),
        "no W_o": (lambda n, h, q, k, v, b: n * (q + k + v), r"count W_o too"),
    }),
    exercises.ch05.check_head_weights: Entry(lambda mha, X, head: torch.full((2, 4, 4), 0.25), {
        **_wrong_head_scales(answers.head_weights),
        "softmax over the queries": (_head_weights_over_queries, r"your softmax runs over the queries"),
        "interleaved rows": (lambda mha, X, head: answers.head_weights(mha, X, head, rows=slice(head, None, 3)),
                             r"\(head 0\)(?s:.*)a block of consecutive rows"),
    }),
    exercises.ch05.check_output_without_head: Entry(lambda mha, X, head: torch.zeros(2, 4, 12), {
        "after W_o": (_after_W_o, r"you zeroed the output after W_o"),
        "unchanged": (lambda mha, X, head: mha(X, X, X), r"the output is unchanged"),
    }),
    exercises.ch05.check_split_heads_seq_first: Entry(
            lambda X, h: torch.zeros(X.shape[1] * h, X.shape[0], X.shape[2] // h), {
        "no transpose": (_split_reshape_alone, r"a reshape alone never moves a number"),
        "read as batch-first": (_split_as_if_batch_first, r"as if it were \(B, T, d_model\)"),
        "heads behind the positions": (_split_heads_behind_positions, r"head axis still sits behind the positions"),
        "head-major batch": (_split_head_major, r"merged in the wrong order: head first, then example"),
        "positions as the batch": (_split_positions_as_batch, r"which here is the positions, not the examples"),
        "interleaved": (_split_interleaved, r"the head index is taken from the wrong end"),
    }),
    exercises.ch05.check_einsum_multihead: Entry(lambda q, k, v, mha: torch.zeros(2, 3, 12), {
        **_wrong_head_scales(answers.einsum_multihead),
        "unfolded head split": (_einsum_unfolded, r"without the transpose mixes positions into the heads"),
        "heads joined unmoved": (_einsum_joined_unmoved, r"the heads were joined without moving them back"),
        "no W_o": (_einsum_no_W_o, r"W_o is missing"),
    }),
    # ---- chapter 06 ----
    exercises.ch06.check_max_tokens: Entry(lambda b, h, dtype, budget: 1, {
        "scores, not tokens": (lambda b, h, dtype, budget: budget // (b * h * dtype.itemsize),
                               r"that is how many scores fit"),
        "rounded up": (lambda b, h, dtype, budget: math.ceil(math.sqrt(budget / (b * h * dtype.itemsize))),
                       r"one token too many"),
        "one head": (lambda b, h, dtype, budget: math.isqrt(budget // (b * dtype.itemsize)), r"every head has its own"),
        "float32 always": (lambda b, h, dtype, budget: math.isqrt(budget // (b * h * 4)), r"use dtype.itemsize"),
        "a float": (lambda b, h, dtype, budget: math.sqrt(budget // (b * h * dtype.itemsize)),
                    r"return a whole number of tokens"),
    }),
    exercises.ch06.check_decode_mask: Entry(lambda q, k: torch.eye(q, k, dtype=torch.bool), {
        "inverted": (lambda q, k: ~answers.decode_mask(q, k), r"nn.MultiheadAttention's convention"),
        "top-left": (lambda q, k: _ones(q, k).tril(), r"this lines query i up with key i \(top-left\)"),
        "diagonal masked": (lambda q, k: _ones(q, k).tril(k - q - 1), r"a new token may attend to itself"),
        "one key too many": (lambda q, k: _ones(q, k).tril(k - q + 1), r"one key too many"),
        "no mask": (lambda q, k: _ones(q, k), r"right only for a single new token"),
        "numbers": (lambda q, k: answers.decode_mask(q, k).float(), r"1.0 and 0.0 would hide nothing"),
        "every query": (lambda q, k: answers.decode_mask(k, k), r"one row per NEW query"),
        "flipped": (lambda q, k: _ones(q, k).triu(k - q), r"your mask is flipped"),
    }),
    exercises.ch06.check_left_padded_mask: Entry(lambda lens, n: _ones(len(lens), n, n), {
        "inverted": (lambda lens, n: ~answers.left_padded_mask(lens, n), r"nn.MultiheadAttention's convention"),
        "right padding": (lambda lens, n: answers.causal(n) & (torch.arange(n) < lens[:, None, None]),
                          r"this puts the padding on the right"),
        "no causal part": (lambda lens, n: (torch.arange(n) >= answers.first_real(lens, n)).expand(-1, n, n),
                           r"the future is visible"),
        "no padding part": (lambda lens, n: answers.causal(n).expand(len(lens), n, n), r"the padding gets weight"),
        "one real key missing": (lambda lens, n: answers.causal(n) & (torch.arange(n) > answers.first_real(lens, n)),
                                 r"one real key is missing"),
        "one padding key": (lambda lens, n: answers.causal(n) & (torch.arange(n) >= answers.first_real(lens, n) - 1),
                            r"one padding key is visible"),
        "diagonal masked": (lambda lens, n: answers.left_padded_mask(lens, n) & ~torch.eye(n, dtype=torch.bool),
                            r"the diagonal is missing"),
        "numbers": (lambda lens, n: answers.left_padded_mask(lens, n).float(), r"1.0 and 0.0 would hide nothing"),
        "padding only": (lambda lens, n: torch.arange(n) >= answers.first_real(lens, n),
                         r"a \(batch, 1, num_steps\) mask can only hide padding"),
        "one mask for all": (lambda lens, n: answers.causal(n), r"one \(queries, keys\) mask per example"),
    }),
    # ---- chapter 07 ----
    exercises.ch07.check_offset_rotation: Entry(lambda delta, omega: torch.eye(2), {
        "transposed": (lambda d, w: answers.offset_rotation(d, w).T, r"moves the pair back by δ"),
        "sin on the diagonal": (lambda d, w: torch.tensor([[math.sin(w * d), math.cos(w * d)],
                                                           [-math.cos(w * d), math.sin(w * d)]]),
                                r"cos\(ωδ\) belongs on the diagonal"),
        "degrees": (lambda d, w: answers.offset_rotation(1, math.radians(w * d)), r"already an angle in radians"),
        "no ω": (lambda d, w: answers.offset_rotation(d, 1.0), r"the angle is ω·δ"),
        "no δ": (lambda d, w: answers.offset_rotation(1, w),
                 r"(?s)expected: δ = 3, ω = 1, row 0: \[-0\.99, .*only δ = 1 comes out right"),
    }),
    exercises.ch07.check_learned_embedding: Entry(answers.OneRowTooMany, {
        "not a parameter": (answers.PlainTensor, r"the table is not learnable"),
        "transposed": (Transposed, r"the table is transposed: one row per position"),
        "embedding alone": (EmbeddingAlone, r"the module returns the embedding alone: add it to X"),
        "sinusoidal": (SinusoidalStart, r"that is the fixed sinusoidal table"),
        "row per example": (RowPerExample, r"(?s)example 0, position 1: .*example b got row b of the table"),
        "the whole table": (WholeTable, r"(?s)must match the size of tensor b \(10\).*raised by forward\(X\).*"
                                        r"only the first 7 rows of the table are added"),
        "detached": (Detached, r"the output does not depend on the parameter through autograd"),
        "parameter scaled": (ScaledParameter, r"(?s)no parameters; table is a tensor computed from one.*"
                                              r"nn.Parameter\(t\) \* 0.01 is a plain tensor again"),
    }),
    exercises.ch07.check_equivariance: Entry(lambda layer, X, perm: next(ALTERNATING), {
        "inverse permutation": (lambda layer, X, perm: torch.allclose(
            layer(X[:, perm]), layer(X)[:, torch.argsort(perm)], atol=1e-5), r"with the inverse permutation"),
        "one side shuffled": (lambda layer, X, perm: torch.allclose(layer(X[:, perm]), layer(X), atol=1e-5),
                              r"with the unshuffled output"),
        "negated": (lambda layer, X, perm: not answers.is_permutation_equivariant(layer, X, perm),
                    r"every answer is the opposite"),
        "too strict": (lambda layer, X, perm: answers.is_permutation_equivariant(layer, X, perm, compare=torch.equal),
                       r"your test is too strict"),
        "too loose": (lambda layer, X, perm: answers.is_permutation_equivariant(
            layer, X, perm, compare=lambda a, b: torch.allclose(a, b, atol=0.3)), r"its tolerance is too loose"),
        "batch axis": (lambda layer, X, perm: torch.allclose(layer(X.flip(0)), layer(X).flip(0), atol=1e-5),
                       r"are you shuffling the tokens, axis 1 of X\?"),
        "perm on axis 0": (lambda layer, X, perm: torch.allclose(layer(X[perm]), layer(X)[perm], atol=1e-5),
                           r"(?s)IndexError: index 5 is out of bounds for dimension 0.*you used it on axis 0 of X"),
    }),
    # ---- chapter 08 ----
    exercises.ch08.check_reversal_alignment: Entry(lambda lens, n: torch.zeros(len(lens), n, n), {
        "diagonal": (lambda lens, n: torch.eye(n) * _real_rows(lens, n), r"that is the diagonal"),
        "padded row reversed": (lambda lens, n: _full_length(lens, n) * _real_rows(lens, n),
                                r"you reversed the padded row of 8: step 0 then copies"),
        "padded row, padding copied": (_full_length, r"you reversed the padded row of 8, and padding steps"),
        "padding rows kept": (lambda lens, n: answers.reversal_alignment(lens, n, rows=lambda positions: positions % n),
                              r"the padding steps \(t ≥ n\) got a 1 too"),
    }),
    exercises.ch08.check_cross_attention_steps: Entry(_zeros_step, {
        "no scale": (_cross(scale=False), r"divide the scores by √d"),
        "no mask": (_cross(softmax=lambda scores, lens: torch.softmax(scores, -1)), r"padding source positions"),
        "softmax over the query axis": (_cross(softmax=lambda scores, lens: torch.softmax(scores, 1)),
                                        r"every weight is 1: your softmax ran over an axis of size 1"),
        "query axis, padding at -inf": (_cross(softmax=answers.masked_then_softmax_over_steps),
                                        r"(?s)received: weights\[\d, 0\].*nan.*−inf alone, got 0/0"),
        "softmax over the examples": (_cross(softmax=lambda scores, lens: torch.softmax(
            scores.masked_fill(answers.padded_keys(scores, lens), float("-inf")), 0)), r"runs over the examples"),
        "mask after the softmax": (_cross(softmax=answers.masked_after_softmax),
                                   r"(?s)\(sum 1\.000\).*\(sum 0\.\d+\).*you masked after the softmax"),
        "projected values": (_cross(values=lambda outputs, W_k: W_k(outputs)), r"the values are the encoder"),
        "keys in every step": (_cross(keys_in_step=True), r"project the encoder outputs once"),
        "query axis kept": (_cross(keep_axis=True), r"(?s)shape \(3, 1, 8\).*drop the axis of size 1"),
        "a tensor": (lambda *args: lambda state: answers.make_cross_attention(*args)(state)[1],
                     r"step returns the context and the weights, as a"),
    }),
    exercises.ch08.check_sort_alignment: Entry(lambda source, lens: torch.zeros(6, 7, 7), {
        "ranks": (_sort(ranks=True), r"you marked where each source position goes \(its rank\)"),
        "descending": (_sort(descending=True), r"that sorts in decreasing order"),
        "padding rows": (_sort(mask_rows=False), r"the padding steps got a 1 too"),
    }),
    # ---- chapter 09 ----
    exercises.ch09.check_sep_share: Entry(lambda a: a[..., 1:-1, 1].mean(dim=-1), {
        "every row, as in the chapter": (lambda a: a[..., :, -1].mean(dim=-1), r"you averaged over every row"),
        "the [CLS] row kept": (lambda a: a[..., :-1, -1].mean(dim=-1), r"the \[CLS\] row is still in"),
        "the [SEP] row kept": (lambda a: a[..., 1:, -1].mean(dim=-1), r"the \[SEP\] row is still in"),
        "[CLS] column": (lambda a: a[..., 1:-1, 0].mean(dim=-1), r"that is the \[CLS\] share"),
        "off by one": (lambda a: a[..., 1:-1, -2].mean(dim=-1), r"off by one: that column is the token before"),
        "the [SEP] row": (lambda a: a[..., -1, :].mean(dim=-1), r"you averaged the \[SEP\] row"),
        "a sum": (lambda a: a[..., 1:-1, -1].sum(dim=-1), r"a share is an average"),
        "both specials": (lambda a: (a[..., 1:-1, 0] + a[..., 1:-1, -1]).mean(dim=-1), r"you added \[CLS\]'s"),
    }),
    exercises.ch09.check_previous_token_head: Entry(lambda maps: ((0, 0), 0.9), {
        "next token": (lambda maps: answers.previous_token_head(maps, offset=1), r"that head looks at the next token"),
        "every row": (lambda maps: answers.previous_token_head(maps, rows=torch.arange),
                      r"leave out the \[CLS\] and \[SEP\] rows"),
        "per sentence": (lambda maps: answers.previous_token_head(maps, per_sentence=True),
                         r"you averaged each sentence, then the sentences"),
        "swapped": (lambda maps: answers.previous_token_head(maps, order=lambda layer, head: (head, layer)),
                    r"the pair is \(layer, head\), in that order"),
        "flat index": (lambda maps: (6, 0.9), r"(?s)expected: a pair \(\(layer, head\), score\)"),
    }),
    exercises.ch09.check_similarity_matrix: Entry(lambda h, v: torch.eye(4), {
        "padding included": (lambda h, v: answers.similarity_matrix(h, v, padding=True),
                             r"the padding rows were averaged in"),
        "not normalised": (lambda h, v: answers.similarity_matrix(h, v, normalise=False),
                           r"those are dot products of the means"),
        "both": (lambda h, v: answers.similarity_matrix(h, v, padding=True, normalise=False),
                 r"two things: the padding rows were averaged in, and the means were not scaled"),
        "feature axis": (lambda h, v: (lambda m: m @ m.T)(F.normalize(h.mean(dim=-1), dim=-1)),
                         r"you averaged over the features"),
    }),
}


def _first_hint(check, answer):
    with pytest.raises(ExerciseError) as info:
        check(answer)
    return info.value


def test_every_check_of_every_chapter_has_at_least_two_variants():
    checks = list(answers.public_checks())
    assert len(checks) >= 30
    missing = sorted(answers.check_name(check) for check in checks if check not in CATALOGUE)
    assert not missing, f"checks with no entry in the wrong-variant catalogue: {missing}"
    few = sorted(answers.check_name(check) for check in checks if len(CATALOGUE[check].variants) < 2)
    assert not few, f"checks with fewer than two wrong variants: {few}"


@pytest.mark.parametrize("check", list(CATALOGUE), ids=[answers.check_name(check) for check in CATALOGUE])
def test_each_wrong_variant_gets_a_hint_of_its_own(check):
    entry = CATALOGUE[check]
    generic = _first_hint(check, entry.unrecognised).hints[0]
    seen = {}
    for name, (answer, pattern) in entry.variants.items():
        error = _first_hint(check, answer)
        assert re.search(pattern, str(error)), f"{name}: {pattern!r} not in\n{error}"
        hint = error.hints[0]
        assert hint != generic, f"{name} gets the check's generic hint: {hint}"
        assert hint not in seen, f"{name} and {seen.get(hint)} get the same hint: {hint}"
        seen[hint] = name
