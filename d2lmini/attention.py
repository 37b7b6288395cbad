"""Attention scoring functions as modules: additive, scaled dot-product, multi-head.

Shapes follow the book: queries ``(batch, queries, query_size)``, keys
``(batch, keys, key_size)``, values ``(batch, keys, value_size)``; the output
is ``(batch, queries, value_size)`` and the weights ``(batch, queries, keys)``.
"""

import math
import warnings

import torch
from torch import nn

from ._checks import (
    check_dropout,
    check_linear_input,
    check_positive_int,
    check_same,
    check_tensor,
    shape_str,
)
from .masking import masked_softmax


def _linear(in_features, out_features, bias):
    """``nn.Linear``, or ``nn.LazyLinear`` when the input size is left to the first call."""
    if in_features is None:
        with warnings.catch_warnings():
            # Older torch releases warn that lazy modules are experimental.
            warnings.simplefilter("ignore", UserWarning)
            return nn.LazyLinear(out_features, bias=bias)
    check_positive_int(in_features, "input size")
    return nn.Linear(in_features, out_features, bias=bias)


def _check_qkv(queries, keys, values):
    """Ranks and matching sizes of a (queries, keys, values) triple."""
    check_tensor(queries, "queries", ndim=3, floating=True)
    check_tensor(keys, "keys", ndim=3, floating=True)
    check_tensor(values, "values", ndim=3, floating=True)
    check_same(
        {
            f"queries {shape_str(queries)}": queries.shape[0],
            f"keys {shape_str(keys)}": keys.shape[0],
            f"values {shape_str(values)}": values.shape[0],
        },
        "batch sizes (axis 0)",
    )
    check_same(
        {f"keys {shape_str(keys)}": keys.shape[1], f"values {shape_str(values)}": values.shape[1]},
        "numbers of keys and values (axis 1)",
    )


class AdditiveAttention(nn.Module):
    """Additive attention: a(q, k) = w_vᵀ tanh(W_q q + W_k k).

    Queries and keys may have different sizes. Give ``key_size`` and
    ``query_size`` for eager layers (the book's older style), or leave them
    out and the layers size themselves on the first call.
    """

    def __init__(self, num_hiddens, dropout, key_size=None, query_size=None, **kwargs):
        super().__init__(**kwargs)
        check_positive_int(num_hiddens, "num_hiddens")
        check_dropout(dropout)
        self.W_k = _linear(key_size, num_hiddens, bias=False)
        self.W_q = _linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        _check_qkv(queries, keys, values)
        check_linear_input(self.W_q, queries, "queries", "query_size")
        check_linear_input(self.W_k, keys, "keys", "key_size")
        queries, keys = self.W_q(queries), self.W_k(keys)
        # (batch, queries, 1, h) + (batch, 1, keys, h) -> (batch, queries, keys, h)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)  # (batch, queries, keys)
        self.attention_weights = masked_softmax(scores, valid_lens, _inplace=True)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):
    """Scaled dot-product attention: softmax(Q Kᵀ / √d) V."""

    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        check_dropout(dropout)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        _check_qkv(queries, keys, values)
        check_same(
            {f"queries {shape_str(queries)}": queries.shape[-1], f"keys {shape_str(keys)}": keys.shape[-1]},
            "query and key sizes (last axis) for a dot product",
        )
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (batch, queries, keys)
        self.attention_weights = masked_softmax(scores, valid_lens, _inplace=True)
        return torch.bmm(self.dropout(self.attention_weights), values)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with ``num_heads`` scaled dot-product heads.

    Each head sees ``num_hiddens / num_heads`` features. The heads run in
    parallel by folding them into the batch axis (``transpose_qkv``) and are
    concatenated back (``transpose_output``) before ``W_o``. Input sizes are
    inferred on the first call unless given as keywords.
    """

    def __init__(self, num_hiddens, num_heads, dropout, bias=False,
                 query_size=None, key_size=None, value_size=None, **kwargs):
        super().__init__(**kwargs)
        check_positive_int(num_hiddens, "num_hiddens")
        check_positive_int(num_heads, "num_heads")
        if num_hiddens % num_heads != 0:
            raise ValueError(
                f"num_hiddens ({num_hiddens}) must be divisible by num_heads ({num_heads}) "
                f"so that every head gets the same width; try num_heads in "
                f"{[h for h in range(1, num_hiddens + 1) if num_hiddens % h == 0][:8]}"
            )
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = _linear(query_size, num_hiddens, bias)
        self.W_k = _linear(key_size, num_hiddens, bias)
        self.W_v = _linear(value_size, num_hiddens, bias)
        self.W_o = _linear(num_hiddens, num_hiddens, bias)

    def forward(self, queries, keys, values, valid_lens=None):
        _check_qkv(queries, keys, values)
        check_linear_input(self.W_q, queries, "queries", "query_size")
        check_linear_input(self.W_k, keys, "keys", "key_size")
        check_linear_input(self.W_v, values, "values", "value_size")
        batch, num_queries = queries.shape[0], queries.shape[1]
        queries = self.transpose_qkv(self.W_q(queries))  # (batch*heads, queries, hiddens/heads)
        keys = self.transpose_qkv(self.W_k(keys))  # (batch*heads, keys, hiddens/heads)
        values = self.transpose_qkv(self.W_v(values))  # (batch*heads, keys, hiddens/heads)
        if valid_lens is not None:
            if isinstance(valid_lens, (list, tuple)):
                valid_lens = torch.tensor(valid_lens)
            check_tensor(valid_lens, "valid_lens", ndim=(1, 2))
            expected = (batch,) if valid_lens.dim() == 1 else (batch, num_queries)
            if tuple(valid_lens.shape) != expected:
                raise ValueError(
                    f"valid_lens has shape {shape_str(valid_lens)} but queries have shape "
                    f"(batch={batch}, queries={num_queries}, ...); "
                    f"expected ({batch},) or ({batch}, {num_queries})"
                )
            # Every head of example b uses example b's lengths.
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)  # (batch*heads, queries, hiddens/heads)
        return self.W_o(self.transpose_output(output))  # (batch, queries, hiddens)

    @property
    def attention_weights(self):
        """Per-head weights of the last call, shape ``(batch, heads, queries, keys)``."""
        weights = self.attention.attention_weights  # (batch*heads, queries, keys)
        return weights.reshape(-1, self.num_heads, weights.shape[1], weights.shape[2])

    def transpose_qkv(self, X):
        """(batch, n, hiddens) -> (batch*heads, n, hiddens/heads)."""
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)  # (batch, n, heads, hiddens/heads)
        X = X.permute(0, 2, 1, 3)  # (batch, heads, n, hiddens/heads)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def transpose_output(self, X):
        """The inverse of ``transpose_qkv``: (batch*heads, n, p) -> (batch, n, heads*p)."""
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])  # (batch, heads, n, p)
        X = X.permute(0, 2, 1, 3)  # (batch, n, heads, p)
        return X.reshape(X.shape[0], X.shape[1], -1)


def to_torch_multihead(mha):
    """An ``nn.MultiheadAttention`` (batch_first) carrying ``mha``'s weights.

    ``mha`` must have been called once (or built with explicit sizes) so that
    its layers have weights. Call the result with ``key_padding_mask=
    padding_mask(valid_lens, num_keys)`` to reproduce 1-D ``valid_lens``.
    """
    if not isinstance(mha, MultiHeadAttention):
        raise TypeError(f"mha must be a d2lmini MultiHeadAttention, got {type(mha).__name__}")
    for name in ("W_q", "W_k", "W_v"):
        if isinstance(getattr(mha, name).weight, nn.parameter.UninitializedParameter):
            raise ValueError(
                f"mha.{name} has no weights yet: call mha once, or build it with explicit sizes"
            )
    num_hiddens = mha.W_o.out_features
    if mha.W_q.in_features != num_hiddens:
        raise ValueError(
            f"nn.MultiheadAttention needs query_size == num_hiddens, got "
            f"query_size={mha.W_q.in_features} and num_hiddens={num_hiddens}"
        )
    bias = mha.W_q.bias is not None
    torch_mha = nn.MultiheadAttention(
        num_hiddens, mha.num_heads, dropout=mha.attention.dropout.p, bias=bias,
        kdim=mha.W_k.in_features, vdim=mha.W_v.in_features, batch_first=True,
        device=mha.W_o.weight.device, dtype=mha.W_o.weight.dtype,
    )
    with torch.no_grad():
        if torch_mha._qkv_same_embed_dim:
            torch_mha.in_proj_weight.copy_(torch.cat([mha.W_q.weight, mha.W_k.weight, mha.W_v.weight]))
        else:
            torch_mha.q_proj_weight.copy_(mha.W_q.weight)
            torch_mha.k_proj_weight.copy_(mha.W_k.weight)
            torch_mha.v_proj_weight.copy_(mha.W_v.weight)
        torch_mha.out_proj.weight.copy_(mha.W_o.weight)
        if bias:
            torch_mha.in_proj_bias.copy_(torch.cat([mha.W_q.bias, mha.W_k.bias, mha.W_v.bias]))
            torch_mha.out_proj.bias.copy_(mha.W_o.bias)
    return torch_mha
