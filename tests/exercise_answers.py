"""The reference answer of every public exercise check, and how to find the checks.

``REFERENCE`` maps each ``check_*`` of the chapter modules to its exercise's
number and reference answer; the contract test (``test_exercise_contract.py``)
fails for a check missing from it. Several answers take keyword arguments that
switch one typical mistake on, so that the wrong-variant catalogue
(``test_wrong_variants.py``) and the chapter tests build their wrong answers
from the right one. The few wrong answers that both of those use are here too;
the others live in the one file that uses them.
"""

import importlib
import math
import pkgutil
import re
from typing import NamedTuple

import pytest
import torch
import torch.nn.functional as F

import d2lmini as d2l
from d2lmini import exercises
from d2lmini.exercises import ExerciseError, ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09


def public_checks():
    """Every ``check_*`` of every chapter module ``chNN`` of ``d2lmini.exercises``, found by walking the package."""
    checks = []
    for info in pkgutil.iter_modules(exercises.__path__):
        if re.fullmatch(r"ch\d\d", info.name):
            module = importlib.import_module(f"d2lmini.exercises.{info.name}")
            checks.extend(getattr(module, name) for name in vars(module) if name.startswith("check_"))
    return checks


def check_name(check):
    """``ch01.check_triangular``: a check's name as a notebook calls it, for test ids and messages."""
    return f"{check.__module__.rpartition('.')[2]}.{check.__name__}"


# ---- chapter 01 ----

def triangular_right(u):
    return torch.clamp(1 - u.abs(), min=0)


def best_sigma_right(x_train, y_train, x_val, y_val, sigmas):
    errors = [((d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", s)[0] - y_val) ** 2).mean()
              for s in sigmas]
    return sigmas[int(torch.stack(errors).argmin())]


def block_out_loss_right(x, y, sigma, m):
    predictions = []
    for i in range(len(x)):
        keep = (torch.arange(len(x)) - i).abs() > m
        predictions.append(d2l.nadaraya_watson(x[i:i + 1], x[keep], y[keep], "gaussian", sigma)[0])
    return ((torch.cat(predictions) - y) ** 2).mean()


def block_out_loss_hiding(hidden):
    """A loss whose query i cannot see the keys j where hidden(offsets)[i, j], offsets[i, j] = j - i."""
    def loss(x, y, sigma, m):
        index = torch.arange(len(x))
        scores = -0.5 * ((x[:, None] - x[None, :]) / sigma) ** 2
        mask = hidden(index[None, :] - index[:, None], m)
        return (((torch.softmax(scores.masked_fill(mask, float("-inf")), -1) * y).sum(-1) - y) ** 2).mean()
    return loss


# ---- chapter 02 ----

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


# ---- chapter 03 ----

def concat_scores(queries, keys, W_a, w_v):
    B, Q, K = queries.shape[0], queries.shape[1], keys.shape[1]
    pairs = torch.cat([queries.unsqueeze(2).expand(B, Q, K, -1), keys.unsqueeze(1).expand(B, Q, K, -1)], -1)
    return torch.tanh(pairs @ W_a.T) @ w_v


def weight_gap(additive, queries, keys, values, valid_lens):
    additive(queries, keys, values, valid_lens)
    dot_product = d2l.DotProductAttention(dropout=0.0)
    dot_product(queries, keys, values, valid_lens)
    return (additive.attention_weights - dot_product.attention_weights).abs().max()


def bilinear_scores(queries, keys, W):
    return queries @ W @ keys.transpose(1, 2)


# ---- chapter 04 ----

def distance_as_dot_product(queries, keys, query_end=None, key_end=None):
    """The reference answer of Exercise 4.3; query_end and key_end replace the appended coordinates."""
    query_end = torch.ones_like(queries[..., :1]) if query_end is None else query_end(queries)
    key_end = -0.5 * (keys ** 2).sum(-1, keepdim=True) if key_end is None else key_end(keys)
    return torch.cat([queries, query_end], -1), torch.cat([keys, key_end], -1)


def sum_scores(queries, keys):
    return queries.sum(-1).unsqueeze(2) + keys.sum(-1).unsqueeze(1)


def attention_cost(num_queries, num_keys, d, bytes_per_element=4):
    return 2 * num_queries * num_keys * d, num_queries * num_keys * bytes_per_element


def causal_attention(queries, keys, values, prefix=1, prefix_mask=None):
    """The reference answer of Exercise 4.5; prefix_mask(n, prefix) replaces the mask when a prefix is given."""
    n, d = queries.shape[1], queries.shape[2]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    allowed[:, :prefix] = True
    if prefix > 1 and prefix_mask is not None:
        allowed = prefix_mask(n, prefix)
    return torch.bmm(torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1), values)


def causal_weights(queries, keys):
    n, d = queries.shape[1], queries.shape[2]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
    return torch.softmax(scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf")), -1)


def causal_weights_with_a_bug(queries, keys):
    """The function Exercise 4.4 gives the learner to fix: it zeroes the future after the softmax."""
    n, d = queries.shape[1], queries.shape[2]
    weights = torch.softmax(torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d), -1)
    return weights.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), 0.0)


# ---- chapter 05 ----

def einsum_multihead(queries, keys, values, mha, scale_width=None):
    h = mha.num_heads
    B, n_q, n_k = queries.shape[0], queries.shape[1], keys.shape[1]
    q = (queries @ mha.W_q.weight.T).reshape(B, n_q, h, -1)
    k = (keys @ mha.W_k.weight.T).reshape(B, n_k, h, -1)
    v = (values @ mha.W_v.weight.T).reshape(B, n_k, h, -1)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / (scale_width or q.shape[-1]) ** 0.5
    heads = torch.einsum("bhqk,bkhd->bqhd", torch.softmax(scores, -1), v)
    return heads.reshape(B, n_q, -1) @ mha.W_o.weight.T


def head_weights(mha, X, head, rows=None, scale_width=None):
    d_head = mha.W_q.weight.shape[0] // mha.num_heads
    rows = slice(head * d_head, (head + 1) * d_head) if rows is None else rows
    q, k = X @ mha.W_q.weight[rows].T, X @ mha.W_k.weight[rows].T
    return torch.softmax(q @ k.transpose(1, 2) / (scale_width or d_head) ** 0.5, -1)


def output_without_head(mha, X, head):
    q, k, v = (mha.transpose_qkv(layer(X)) for layer in (mha.W_q, mha.W_k, mha.W_v))
    concatenated = mha.transpose_output(mha.attention(q, k, v)).clone()
    d_head = concatenated.shape[-1] // mha.num_heads
    concatenated[..., head * d_head:(head + 1) * d_head] = 0
    return mha.W_o(concatenated)


def parameter_count(num_hiddens, num_heads, query_size, key_size, value_size, bias):
    return num_hiddens * (query_size + key_size + value_size + num_hiddens) + (4 * num_hiddens if bias else 0)


def split_heads_seq_first(X, num_heads):
    T, B, d = X.shape
    return X.reshape(T, B, num_heads, d // num_heads).permute(1, 2, 0, 3).reshape(B * num_heads, T, -1)


# ---- chapter 06 ----

def max_tokens(batch_size, num_heads, dtype, budget_bytes):
    return math.isqrt(budget_bytes // (batch_size * num_heads * dtype.itemsize))


def decode_mask(num_queries, num_keys):
    return torch.arange(num_keys)[None, :] <= torch.arange(num_keys - num_queries, num_keys)[:, None]


def causal(num_steps):
    steps = torch.arange(num_steps)
    return steps[None, :] <= steps[:, None]  # (queries, keys)


def first_real(valid_lens, num_steps):
    return (num_steps - valid_lens)[:, None, None]  # (batch, 1, 1)


def left_padded_mask(valid_lens, num_steps):
    return causal(num_steps) & (torch.arange(num_steps) >= first_real(valid_lens, num_steps))


# ---- chapter 07 ----

def offset_rotation(delta, omega):
    c, s = math.cos(omega * delta), math.sin(omega * delta)
    return torch.tensor([[c, s], [-s, c]])


class LearnedPositionalEmbedding(torch.nn.Module):
    def __init__(self, max_len, num_hiddens):
        super().__init__()
        self.table = torch.nn.Parameter(0.02 * torch.randn(max_len, num_hiddens))

    def forward(self, X):
        return X + self.table[:X.shape[1]]


def is_permutation_equivariant(layer, X, perm, compare=lambda a, b: torch.allclose(a, b, atol=1e-5)):
    return compare(layer(X[:, perm]), layer(X)[:, perm])


class PlainTensor(torch.nn.Module):
    """Wrong: the table is a plain tensor, not a parameter."""

    def __init__(self, max_len, num_hiddens):
        super().__init__()
        self.table = 0.02 * torch.randn(max_len, num_hiddens)

    def forward(self, X):
        return X + self.table[:X.shape[1]]


class OneRowTooMany(LearnedPositionalEmbedding):
    """Wrong: a table of max_len + 1 rows."""

    def __init__(self, max_len, num_hiddens):
        super().__init__(max_len + 1, num_hiddens)


# ---- chapter 08 ----

def reversal_alignment(valid_lens, num_steps, lengths=None, rows=None):
    steps = torch.arange(num_steps)
    n = valid_lens[:, None] if lengths is None else lengths
    copied = (n - 1 - steps) if rows is None else rows(n - 1 - steps)
    return (copied[..., None] == steps).float()


def make_cross_attention(encoder_outputs, source_lens, W_q, W_k, *, scale=True, values=None, softmax=None,
                         keys_in_step=False, keep_axis=False):
    keys = None if keys_in_step else W_k(encoder_outputs)

    def step(decoder_state):
        query = W_q(decoder_state)[:, None, :]  # (B, 1, d_model)
        step_keys = W_k(encoder_outputs) if keys_in_step else keys
        scores = query @ step_keys.transpose(1, 2) / (math.sqrt(query.shape[-1]) if scale else 1)  # (B, 1, S)
        weights = d2l.masked_softmax(scores, source_lens) if softmax is None else softmax(scores, source_lens)
        context = weights @ (encoder_outputs if values is None else values(encoder_outputs, W_k))
        return (context, weights) if keep_axis else (context[:, 0], weights[:, 0])

    return step


def sort_alignment(source, valid_lens, descending=False, ranks=False, mask_rows=True):
    steps = source.shape[1]
    real = torch.arange(steps) < valid_lens[:, None]
    fill = -1 if descending else 10 ** 6
    copied = source.masked_fill(~real, fill).argsort(dim=1, descending=descending)
    if ranks:
        copied = copied.argsort(dim=1)
    alignment = F.one_hot(copied, steps).float()
    return alignment * real[:, :, None] if mask_rows else alignment


def padded_keys(scores, lens):
    return (torch.arange(scores.shape[-1]) >= lens[:, None])[:, None, :]  # (B, 1, S)


def masked_after_softmax(scores, lens):
    """Wrong, as make_cross_attention's softmax: the weights masked after the softmax."""
    return torch.softmax(scores, -1) * ~padded_keys(scores, lens)  # multiplied, not renormalised


def masked_then_softmax_over_steps(scores, lens):
    """Wrong, as make_cross_attention's softmax: over the query axis of size 1."""
    return torch.softmax(scores.masked_fill(padded_keys(scores, lens), float("-inf")), 1)  # padding columns: NaN


# ---- chapter 09 ----

def sep_share(attention):
    return attention[..., 1:-1, -1].mean(dim=-1)


def previous_token_head(attentions, offset=-1, rows=lambda T: torch.arange(1, T - 1), per_sentence=False,
                        order=lambda layer, head: (layer, head)):
    gathered = []
    for attention in attentions:
        queries = rows(attention.shape[-1])
        gathered.append(attention[..., queries, (queries + offset) % attention.shape[-1]])
    if per_sentence:
        scores = torch.stack([weights.mean(dim=-1) for weights in gathered]).mean(dim=0)
    else:
        scores = torch.cat(gathered, dim=-1).mean(dim=-1)
    layer, head = divmod(int(scores.argmax()), scores.shape[1])
    return order(layer, head), float(scores[layer, head])


def similarity_matrix(hidden, valid_lens, padding=False, normalise=True):
    valid = torch.arange(hidden.shape[1])[None, :] < valid_lens[:, None]
    if padding:
        valid = torch.ones_like(valid)
    means = (hidden * valid[..., None]).sum(dim=1) / valid.sum(dim=1, keepdim=True)
    if normalise:
        means = F.normalize(means, dim=-1)
    return means @ means.T


class Reference(NamedTuple):
    exercise: str  # its number, as the check's messages show it: "4.3"
    answer: object


REFERENCE = {
    ch01.check_triangular: Reference("1.1", triangular_right),
    ch01.check_best_sigma: Reference("1.2", best_sigma_right),
    ch01.check_block_out_loss: Reference("1.3", block_out_loss_right),
    ch02.check_masked_mean: Reference("2.1", masked_mean_right),
    ch02.check_padded_queries: Reference("2.2", padded_queries_right),
    ch02.check_local_causal_mask: Reference("2.3", local_causal_mask_right),
    ch03.check_bilinear_scores: Reference("3.1", bilinear_scores),
    ch03.check_weight_gap: Reference("3.2", weight_gap),
    ch03.check_concat_scores: Reference("3.3", concat_scores),
    ch04.check_sum_scores: Reference("4.1", sum_scores),
    ch04.check_attention_cost: Reference("4.2", attention_cost),
    ch04.check_distance_scores: Reference("4.3", distance_as_dot_product),
    ch04.check_fixed_causal_weights: Reference("4.4", causal_weights),
    ch04.check_causal_attention: Reference("4.5", causal_attention),
    ch05.check_parameter_count: Reference("5.1", parameter_count),
    ch05.check_head_weights: Reference("5.2", head_weights),
    ch05.check_output_without_head: Reference("5.3", output_without_head),
    ch05.check_split_heads_seq_first: Reference("5.4", split_heads_seq_first),
    ch05.check_einsum_multihead: Reference("5.5", einsum_multihead),
    ch06.check_max_tokens: Reference("6.1", max_tokens),
    ch06.check_decode_mask: Reference("6.2", decode_mask),
    ch06.check_left_padded_mask: Reference("6.3", left_padded_mask),
    ch07.check_offset_rotation: Reference("7.1", offset_rotation),
    ch07.check_learned_embedding: Reference("7.2", LearnedPositionalEmbedding),
    ch07.check_equivariance: Reference("7.3", is_permutation_equivariant),
    ch08.check_reversal_alignment: Reference("8.1", reversal_alignment),
    ch08.check_cross_attention_steps: Reference("8.2", make_cross_attention),
    ch08.check_sort_alignment: Reference("8.3", sort_alignment),
    ch09.check_sep_share: Reference("9.1", sep_share),
    ch09.check_previous_token_head: Reference("9.2", previous_token_head),
    ch09.check_similarity_matrix: Reference("9.3", similarity_matrix),
}


# ---------------------------------------------------------------- one wrong answer for every check

def zeros_like_scores(queries, keys, *rest):
    return torch.zeros(queries.shape[0], queries.shape[1], keys.shape[1])


# One wrong answer for every check, and for some checks a second, typical mistake.
WRONG_ANSWERS = {
    "ch01.check_triangular": lambda u: 1 - u.abs(),
    "ch01.check_best_sigma": lambda x_train, y_train, x_val, y_val, sigmas: sigmas[0],
    "ch01.check_block_out_loss": lambda x, y, sigma, m: torch.tensor(0.0),
    "ch02.check_padded_queries": lambda scores, valid_lens: torch.softmax(scores, -1),
    "ch02.check_local_causal_mask": lambda n, window: torch.ones(n, n, dtype=torch.bool).tril(),
    "ch02.check_masked_mean": lambda values, valid_lens: values.mean(1),
    "ch03.check_concat_scores": lambda queries, keys, W_a, w_v: zeros_like_scores(queries, keys),
    "ch03.check_weight_gap": lambda additive, queries, keys, values, valid_lens: torch.tensor(0.5),
    "ch03.check_bilinear_scores": lambda queries, keys, W: zeros_like_scores(queries, keys),
    "ch04.check_distance_scores": lambda queries, keys: queries @ keys.transpose(1, 2),
    "ch04.check_sum_scores": zeros_like_scores,
    "ch04.check_attention_cost": lambda nq, nk, d, bytes_per_element=4: (nq * nk * d, nq * nk * bytes_per_element),
    "ch04.check_causal_attention": lambda q, k, v: torch.softmax(q @ k.transpose(1, 2), -1) @ v,
    "ch04.check_fixed_causal_weights": lambda queries, keys: torch.full((2, 5, 5), 0.2),
    "ch05.check_einsum_multihead": lambda queries, keys, values, mha: torch.zeros(2, 3, 12),
    "ch05.check_head_weights": lambda mha, X, head: torch.full((2, 4, 4), 0.25),
    "ch05.check_output_without_head": lambda mha, X, head: mha(X, X, X),
    "ch05.check_parameter_count": lambda *sizes: 0,
    "ch05.check_split_heads_seq_first": lambda X, num_heads: X.reshape(-1, X.shape[0], X.shape[2] // num_heads),
    "ch06.check_max_tokens": lambda batch, heads, dtype, budget: math.isqrt(budget // (batch * heads * 4)),
    "ch06.check_decode_mask": lambda nq, nk: torch.ones(nq, nk, dtype=torch.bool).tril(),
    "ch06.check_left_padded_mask": lambda lens, n: torch.ones(len(lens), n, n, dtype=torch.bool).tril(),
    "ch07.check_offset_rotation": lambda delta, omega: torch.eye(2),
    "ch07.check_learned_embedding": lambda max_len, num_hiddens: torch.nn.Identity(),
    "ch07.check_equivariance": lambda layer, X, perm: torch.allclose(layer(X[:, perm]), layer(X), atol=1e-5),
    "ch08.check_reversal_alignment": lambda lens, n: torch.eye(n).expand(len(lens), n, n),
    "ch08.check_cross_attention_steps": lambda outputs, lens, W_q, W_k: lambda state: (
        outputs[:, 0], torch.softmax((W_k(outputs) @ W_q(state)[:, :, None])[..., 0], -1)),
    "ch08.check_sort_alignment": lambda source, lens: torch.zeros(*source.shape, source.shape[1]),
    "ch09.check_sep_share": lambda attention: attention[..., :, -1].mean(-1),
    "ch09.check_previous_token_head": lambda attentions: ((0, 0), 0.0),
    "ch09.check_similarity_matrix": lambda hidden, valid_lens: hidden.mean(1) @ hidden.mean(1).T,
}
CHAPTERS = {"ch01": ch01, "ch02": ch02, "ch03": ch03, "ch04": ch04, "ch05": ch05, "ch06": ch06, "ch07": ch07,
            "ch08": ch08, "ch09": ch09}


def the_check(name):
    module, function = name.split(".")
    return getattr(CHAPTERS[module], function)


def failure(name, answer):
    """The ExerciseError that the named check raises for ``answer``."""
    with pytest.raises(ExerciseError) as info:
        the_check(name)(answer)
    return info.value
