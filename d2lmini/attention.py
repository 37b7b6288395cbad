"""Attention scoring functions as modules: additive, scaled dot-product, multi-head.

Shapes follow the book: queries ``(batch, queries, query_size)``, keys
``(batch, keys, key_size)``, values ``(batch, keys, value_size)``; the output
is ``(batch, queries, value_size)`` and the weights ``(batch, queries, keys)``.

``valid_lens`` is read once per call: ``forward`` hands it to
``masking.attention_mask``, which checks it and returns the boolean mask that
everything after it uses.

``DotProductAttention`` and ``MultiHeadAttention`` have two paths, fixed when
the module is built and visible as one ``if`` in ``DotProductAttention.attend``:

* ``need_weights=True`` (the default) is the explicit path the notebooks
  teach: it computes the scores, the masked softmax and the weighted sum, and
  keeps the weights in ``attention_weights`` for plotting;
* ``need_weights=False`` is the fast path: one call to
  ``torch.nn.functional.scaled_dot_product_attention`` (SDPA), which never
  hands the queries x keys weights back, so ``attention_weights`` stays None.

Both give the same output, including the package's rule that a query with no
valid key gets a zero output row.

``blockwise_attention`` computes the same ``softmax(Q Kᵀ / √d) V`` without the
queries x keys matrix: it visits the keys a block at a time with the online
softmax (chapter 06), the idea that fused kernels such as SDPA's carry out in
compiled code. Neither path of the modules reads a tensor's values back to the
host, so on a GPU a forward pass never waits for the device (see
``attention_mask`` for how the lengths are checked without that).
"""

import math
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from ._checks import (
    check_dropout,
    check_flag,
    check_linear_input,
    check_positive_int,
    check_same,
    check_tensor,
    shape_str,
)
from .i18n import N_, _
from .masking import attention_mask, empty_rows, masked_softmax, zero_empty_rows

# How a size error names a tensor (check_same), in the learner's language: chapter 03 shows one on purpose.
_ROLES = {"queries": N_("queries {shape}"), "keys": N_("keys {shape}"), "values": N_("values {shape}")}


def _named(role, x):
    """"queries (2, 1, 20)": the tensor ``x`` by its role and its shape."""
    return _(_ROLES[role]).format(shape=shape_str(x))


class _LazyLinear(nn.LazyLinear):
    """``nn.LazyLinear`` whose first weights do not depend on the device of the first input.

    ``nn.LazyLinear`` draws its weights where they are created, so a layer
    first called on a GPU draws them from that GPU's generator, and the same
    seed gives other numbers than on the CPU. Here they are always drawn on the
    CPU, exactly as an ``nn.Linear`` of the same size would draw them, then
    copied across.
    """

    def reset_parameters(self):
        if self.has_uninitialized_params() or self.in_features == 0:
            return
        # nn.Linear's constructor draws the weight, then the bias, from the CPU generator.
        reference = nn.Linear(self.in_features, self.out_features, bias=self.bias is not None)
        with torch.no_grad():
            # non_blocking: a first call on a GPU must not make the host wait (see attention_mask).
            self.weight.copy_(reference.weight, non_blocking=True)
            if self.bias is not None:
                self.bias.copy_(reference.bias, non_blocking=True)


def _linear(in_features, out_features, bias):
    """``nn.Linear``, or a lazy one when the input size is left to the first call."""
    if in_features is None:
        with warnings.catch_warnings():
            # Older torch releases warn that lazy modules are experimental.
            warnings.simplefilter("ignore", UserWarning)
            return _LazyLinear(out_features, bias=bias)
    check_positive_int(in_features, "input size")
    return nn.Linear(in_features, out_features, bias=bias)


def _check_qkv(queries, keys, values):
    """Ranks and matching sizes of a (queries, keys, values) triple."""
    check_tensor(queries, "queries", ndim=3, floating=True)
    check_tensor(keys, "keys", ndim=3, floating=True)
    check_tensor(values, "values", ndim=3, floating=True)
    # The messages name every shape: build them only when a size disagrees.
    if not queries.shape[0] == keys.shape[0] == values.shape[0]:
        check_same(
            {
                _named("queries", queries): queries.shape[0],
                _named("keys", keys): keys.shape[0],
                _named("values", values): values.shape[0],
            },
            _("batch sizes (axis 0)"),
        )
    if keys.shape[1] != values.shape[1]:
        check_same(
            {_named("keys", keys): keys.shape[1], _named("values", values): values.shape[1]},
            _("numbers of keys and values (axis 1)"),
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
        self.attention_weights = masked_softmax(scores, valid_lens, inplace=True)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):
    """Scaled dot-product attention: softmax(Q Kᵀ / √d) V.

    ``need_weights=False`` picks the fast path (one SDPA call, no weights kept);
    ``causal=True`` lets query ``i`` see keys ``0..i`` only, on top of any
    ``valid_lens``. Both are fixed when the module is built.
    """

    def __init__(self, dropout, *, need_weights=True, causal=False, **kwargs):
        super().__init__(**kwargs)
        check_dropout(dropout)
        check_flag(need_weights, "need_weights")
        check_flag(causal, "causal")
        self.dropout = nn.Dropout(dropout)
        self._need_weights, self._causal = need_weights, causal
        self.attention_weights = None  # (batch, queries, keys) after an explicit call

    @property
    def need_weights(self):
        """True for the explicit path, False for the fast path (fixed at construction)."""
        return self._need_weights

    @property
    def causal(self):
        """Whether query ``i`` sees keys ``0..i`` only (fixed at construction)."""
        return self._causal

    def forward(self, queries, keys, values, valid_lens=None):
        _check_qkv(queries, keys, values)
        if queries.shape[-1] != keys.shape[-1]:
            check_same(
                {_named("queries", queries): queries.shape[-1], _named("keys", keys): keys.shape[-1]},
                _("query and key sizes (last axis) for a dot product"),
            )
        mask = attention_mask(valid_lens, queries.shape[0], queries.shape[1], keys.shape[1],
                              causal=self.causal, device=queries.device)  # (batch, 1 or queries, keys)
        return self.attend(queries, keys, values, mask, only_causal=self.causal and valid_lens is None)

    def attend(self, queries, keys, values, mask, only_causal=False):
        """Attention of checked inputs ``(..., n, d)`` under a boolean ``mask`` (or None).

        ``mask`` comes from ``attention_mask`` and broadcasts against the
        scores ``(..., queries, keys)``. ``only_causal`` says that it is the
        plain causal mask, which the fast path lets SDPA apply by itself.
        """
        if self.need_weights:
            # Explicit path (the default): the scores and weights that the notebooks
            # teach and plot, kept in attention_weights.
            d = queries.shape[-1]
            # Scaling the (queries, d) queries costs less than scaling the (queries, keys) scores.
            scores = (queries / math.sqrt(d)) @ keys.transpose(-2, -1)  # (..., queries, keys)
            self.attention_weights = masked_softmax(scores, mask=mask, inplace=True)
            return self.dropout(self.attention_weights) @ values
        # Fast path (need_weights=False): one fused SDPA call that never builds the weights.
        dropout_p = self.dropout.p if self.training else 0.0
        if mask is None or only_causal:
            return F.scaled_dot_product_attention(queries, keys, values, dropout_p=dropout_p,
                                                  is_causal=only_causal)
        # What SDPA returns for a query with no allowed key depends on the torch
        # release and the kernel (NaN in some, in the gradients too). Such a query
        # sees every key here, and the package's policy zeroes its output.
        output = F.scaled_dot_product_attention(queries, keys, values, attn_mask=mask | empty_rows(mask),
                                                dropout_p=dropout_p)
        return zero_empty_rows(output, mask)


def blockwise_attention(queries, keys, values, block_size):
    """softmax(Q Kᵀ / √d) V, visiting the keys ``block_size`` at a time (the online softmax).

    ``queries`` (batch, queries, d), ``keys`` (batch, keys, d) and ``values``
    (batch, keys, value_size) as ``DotProductAttention`` takes them, without a
    mask; the output is (batch, queries, value_size). For every query it keeps
    the largest score so far ``m``, the running sum ``total`` of exp(score - m)
    and the running weighted sum ``output`` of the values; when a block raises
    the maximum, both sums are rescaled by exp(m_old - m_new). Only a
    (batch, queries, block_size) block of scores exists at any time. The last
    block is shorter when ``block_size`` does not divide the number of keys.
    """
    _check_qkv(queries, keys, values)
    check_positive_int(block_size, "block_size")
    if queries.shape[-1] != keys.shape[-1]:
        check_same({_named("queries", queries): queries.shape[-1], _named("keys", keys): keys.shape[-1]},
                   _("query and key sizes (last axis) for a dot product"))
    if keys.shape[1] == 0:
        raise ValueError(f"keys must hold at least one key, got keys {shape_str(keys)}")
    queries = queries / math.sqrt(queries.shape[-1])
    m = queries.new_full(queries.shape[:-1] + (1,), float("-inf"))  # (batch, queries, 1)
    total = torch.zeros_like(m)  # (batch, queries, 1)
    output = queries.new_zeros(queries.shape[:-1] + values.shape[-1:])  # (batch, queries, value_size)
    for start in range(0, keys.shape[1], block_size):
        scores = queries @ keys[:, start:start + block_size].transpose(1, 2)  # (batch, queries, block)
        new_m = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        rescale = torch.exp(m - new_m)  # 0 on the first block, where m = -inf
        p = torch.exp(scores - new_m)  # (batch, queries, block)
        total = total * rescale + p.sum(dim=-1, keepdim=True)
        output = output * rescale + p @ values[:, start:start + block_size]
        m = new_m
    return output / total


_MULTIHEAD_SIGNATURE = ("MultiHeadAttention(num_hiddens, num_heads, dropout, bias=False, query_size=None, "
                       "key_size=None, value_size=None, *, need_weights=True, causal=False)")


def _signature_message(bias):
    """Why ``bias`` is wrong; a number there is most likely the classic edition's positional call."""
    message = (f"bias must be True or False, got {type(bias).__name__} {bias!r}. "
               f"The signature is {_MULTIHEAD_SIGNATURE}.")
    if isinstance(bias, int):
        message += (" A number in 4th place is what the book's classic edition (v0.17) passes, as "
                    "MultiHeadAttention(key_size, query_size, value_size, num_hiddens, num_heads, dropout); "
                    "here that call is MultiHeadAttention(num_hiddens, num_heads, dropout, "
                    "key_size=key_size, query_size=query_size, value_size=value_size).")
    return message


class MultiHeadAttention(nn.Module):
    """Multi-head attention with ``num_heads`` scaled dot-product heads.

    Each head sees ``num_hiddens / num_heads`` features. On the explicit path
    (``need_weights=True``, the default) the heads run in parallel folded into
    the batch axis (``transpose_qkv``) and are concatenated back
    (``transpose_output``) before ``W_o``. The fast path (``need_weights=False``)
    keeps a head axis instead, ``(batch, heads, n, hiddens/heads)``, and makes
    one SDPA call. ``causal=True`` gives decoder (causal) self-attention. Input
    sizes are inferred on the first call unless given as keywords.
    """

    def __init__(self, num_hiddens, num_heads, dropout, bias=False,
                 query_size=None, key_size=None, value_size=None, *,
                 need_weights=True, causal=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(bias, bool):
            raise TypeError(_signature_message(bias))
        check_positive_int(num_hiddens, "num_hiddens")
        check_positive_int(num_heads, "num_heads")
        if num_hiddens % num_heads != 0:
            # Chapter 05 shows this error on purpose: it is in the learner's language.
            raise ValueError(_(
                "num_hiddens ({num_hiddens}) must be divisible by num_heads ({num_heads}) so that every head "
                "gets the same width; try num_heads in {divisors}").format(
                    num_hiddens=num_hiddens, num_heads=num_heads,
                    divisors=[h for h in range(1, num_hiddens + 1) if num_hiddens % h == 0][:8]))
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout, need_weights=need_weights, causal=causal)
        self.W_q = _linear(query_size, num_hiddens, bias)
        self.W_k = _linear(key_size, num_hiddens, bias)
        self.W_v = _linear(value_size, num_hiddens, bias)
        self.W_o = _linear(num_hiddens, num_hiddens, bias)

    @property
    def need_weights(self):
        """True for the explicit path, False for the fast path (fixed at construction)."""
        return self.attention.need_weights

    @property
    def causal(self):
        """Whether query ``i`` sees keys ``0..i`` only (fixed at construction)."""
        return self.attention.causal

    def forward(self, queries, keys, values, valid_lens=None):
        _check_qkv(queries, keys, values)
        check_linear_input(self.W_q, queries, "queries", "query_size")
        check_linear_input(self.W_k, keys, "keys", "key_size")
        check_linear_input(self.W_v, values, "values", "value_size")
        batch_size, num_queries = queries.shape[:2]
        mask = attention_mask(valid_lens, batch_size, num_queries, keys.shape[1],
                              causal=self.causal, device=queries.device)  # (batch, 1 or queries, keys)
        if mask is not None:
            mask = mask.unsqueeze(1)  # (batch, 1, 1 or queries, keys): every head of an example shares it
        only_causal = self.causal and valid_lens is None
        if self.need_weights:
            # Explicit path: the heads folded into the batch axis, as chapter 05 builds it,
            # so that self.attention keeps every head's weights.
            queries = self.transpose_qkv(self.W_q(queries))  # (batch*heads, queries, hiddens/heads)
            keys = self.transpose_qkv(self.W_k(keys))  # (batch*heads, keys, hiddens/heads)
            values = self.transpose_qkv(self.W_v(values))  # (batch*heads, keys, hiddens/heads)
            if mask is not None:
                mask = mask.expand(batch_size, self.num_heads, *mask.shape[2:]).flatten(0, 1)
            output = self.attention.attend(queries, keys, values, mask, only_causal)
            return self.W_o(self.transpose_output(output))  # (batch, queries, hiddens)
        # Fast path: a head axis instead of the fold, and one SDPA call for all heads.
        queries = self.split_heads(self.W_q(queries))  # (batch, heads, queries, hiddens/heads)
        keys = self.split_heads(self.W_k(keys))  # (batch, heads, keys, hiddens/heads)
        values = self.split_heads(self.W_v(values))  # (batch, heads, keys, hiddens/heads)
        output = self.attention.attend(queries, keys, values, mask, only_causal)
        output = output.transpose(1, 2)  # (batch, queries, heads, hiddens/heads)
        return self.W_o(output.reshape(batch_size, num_queries, -1))  # (batch, queries, hiddens)

    @property
    def attention_weights(self):
        """Per-head weights of the last call, ``(batch, heads, queries, keys)``.

        None before the first call, and always on the fast path.
        """
        weights = self.attention.attention_weights  # (batch*heads, queries, keys)
        if weights is None:
            return None
        return weights.reshape(-1, self.num_heads, weights.shape[1], weights.shape[2])

    def split_heads(self, X):
        """(batch, n, hiddens) -> (batch, heads, n, hiddens/heads), a view."""
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)  # (batch, n, heads, hiddens/heads)
        return X.transpose(1, 2)

    def transpose_qkv(self, X):
        """(batch, n, hiddens) -> (batch*heads, n, hiddens/heads)."""
        X = self.split_heads(X)  # (batch, heads, n, hiddens/heads)
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
        if torch_mha.in_proj_weight is not None:  # one packed projection: q, k and v of one width
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
