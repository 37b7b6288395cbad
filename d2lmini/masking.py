"""Sequence masks and the masked softmax.

Conventions used throughout the package:

* scores have shape ``(batch, queries, keys)``;
* ``valid_lens`` is ``None``, 1-D ``(batch,)`` with one length per example, or
  2-D ``(batch, queries)`` with one length per query;
* key ``j`` is valid for a row when ``j < valid_len``, so a length above the
  number of keys means "every key is valid", and float lengths work too;
* a row with no valid key gets all-zero weights: never NaN, and never weight
  on padding.
"""

import math

import torch

from ._checks import check_tensor, shape_str


def _as_lengths(valid_lens, name="valid_lens"):
    """Turn ``valid_lens`` into a tensor and check its values."""
    if isinstance(valid_lens, (list, tuple)):
        valid_lens = torch.tensor(valid_lens)
    check_tensor(valid_lens, name)
    if valid_lens.dtype == torch.bool or valid_lens.is_complex():
        raise TypeError(f"{name} must hold integer or float lengths, got dtype {valid_lens.dtype}")
    if valid_lens.numel() > 0:
        # One reduction checks both: the minimum is NaN if any length is NaN.
        shortest = valid_lens.min().item()
        if math.isnan(shortest):
            raise ValueError(f"{name} must not contain NaN, got {valid_lens.tolist()}")
        if shortest < 0:
            raise ValueError(f"{name} must be non-negative, got {valid_lens.tolist()}")
    return valid_lens


def sequence_mask(X, valid_len, value=0):
    """A copy of ``X`` whose steps ``t >= valid_len[b]`` along axis 1 hold ``value``.

    ``X`` has shape ``(batch, steps, ...)`` and ``valid_len`` shape ``(batch,)``.
    Unlike the book's version, ``X`` itself is left untouched.
    """
    check_tensor(X, "X")
    if X.dim() < 2:
        raise ValueError(
            f"X must have at least 2 dimensions (batch, steps, ...), got shape {shape_str(X)}"
        )
    valid_len = _as_lengths(valid_len, "valid_len")
    if valid_len.shape != X.shape[:1]:
        raise ValueError(
            f"valid_len must have shape ({X.shape[0]},), one length per example of X, "
            f"got shape {shape_str(valid_len)} for X of shape {shape_str(X)}"
        )
    if X.is_floating_point() and abs(value) != float("inf") and abs(value) > torch.finfo(X.dtype).max:
        raise ValueError(
            f"value={value} does not fit in X's dtype {X.dtype} (largest magnitude "
            f"{torch.finfo(X.dtype).max:.6g}); use float('-inf') or torch.finfo(X.dtype).min"
        )
    steps = torch.arange(X.shape[1], device=X.device)
    keep = steps[None, :] < valid_len.to(X.device)[:, None]  # (batch, steps)
    keep = keep.reshape(keep.shape + (1,) * (X.dim() - 2))
    return X.masked_fill(~keep, value)


def _check_lengths(valid_lens, batch, num_queries, device, source):
    """Check ``valid_lens`` against ``batch`` and ``num_queries`` and move it to ``device``.

    ``source`` names where those sizes come from, for the error message.
    """
    valid_lens = _as_lengths(valid_lens)
    expected = f"({batch},) or ({batch}, {num_queries})"
    if valid_lens.dim() not in (1, 2):
        raise ValueError(
            f"valid_lens must be 1-D or 2-D, got shape {shape_str(valid_lens)}; "
            f"expected {expected}"
        )
    if valid_lens.dim() == 1 and valid_lens.shape[0] != batch:
        raise ValueError(
            f"valid_lens has shape {shape_str(valid_lens)}, which does not fit {source} "
            f"(batch size {batch}); expected {expected}"
        )
    if valid_lens.dim() == 2 and tuple(valid_lens.shape) != (batch, num_queries):
        raise ValueError(
            f"valid_lens has shape {shape_str(valid_lens)}, which does not fit {source} "
            f"({num_queries} queries): a 2-D valid_lens needs one length per query; expected {expected}"
        )
    return valid_lens.to(device)


def _lengths_column(valid_lens):
    """Lengths shaped to compare with key positions: (batch, 1, 1) or (batch, queries, 1)."""
    return valid_lens[:, None, None] if valid_lens.dim() == 1 else valid_lens[:, :, None]


def key_mask(valid_lens, num_keys):
    """Boolean mask, True where a key is valid, broadcastable to (batch, queries, keys).

    A 1-D ``valid_lens`` gives shape ``(batch, 1, keys)`` and a 2-D one
    ``(batch, queries, keys)``: the comparison broadcasts, so no length is copied.
    """
    keys = torch.arange(num_keys, device=valid_lens.device)
    return keys < _lengths_column(valid_lens)  # (batch, 1 or queries, keys)


def _with_causal(valid_lens, batch_size, num_queries, device=None):
    """2-D lengths that also hide the future: query ``i`` sees at most keys ``0..i``.

    ``valid_lens`` is None (the plain causal mask, ``causal_valid_lens``), 1-D
    ``(batch,)`` or 2-D ``(batch, queries)``; the result is ``(batch, queries)``.
    Query ``i`` is lined up with key ``i``, as in SDPA's ``is_causal``.
    """
    causal = causal_valid_lens(batch_size, num_queries, device)  # (batch, queries)
    if valid_lens is None:
        return causal
    if valid_lens.dim() == 1:
        valid_lens = valid_lens[:, None]  # (batch, 1)
    return torch.minimum(valid_lens, causal)


def masked_softmax(X, valid_lens, *, _inplace=False):
    """Softmax over the last axis of ``X``, ignoring keys beyond ``valid_lens``.

    ``X`` holds scores of shape ``(batch, queries, keys)``. With ``valid_lens``
    None this is a plain softmax (and ``X`` may have any rank). Masked keys get
    weight exactly 0; a row with no valid key gets all-zero weights. ``X`` is
    never modified (``_inplace`` is for the package's own temporary scores).
    """
    check_tensor(X, "X", floating=True)
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    if X.dim() != 3:
        raise ValueError(
            f"X must be 3-D (batch, queries, keys) when valid_lens is given, "
            f"got shape {shape_str(X)}"
        )
    valid_lens = _check_lengths(valid_lens, X.shape[0], X.shape[1], X.device,
                                f"the scores X of shape {shape_str(X)}")
    lens = _lengths_column(valid_lens)  # (batch, 1 or queries, 1)
    fill = X.masked_fill_ if _inplace else X.masked_fill
    # The padding mask, True beyond each length, is (batch, 1 or queries, keys);
    # built inline, it is freed before the softmax allocates the weights.
    # -inf gives masked keys exactly zero weight in every dtype; -1e6 would
    # overflow to -inf in float16 anyway and is not small enough in float64.
    scores = fill(torch.arange(X.shape[-1], device=X.device) >= lens, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    # A row whose keys are all masked is softmax(-inf, ..., -inf) = NaN. Only
    # lengths of zero produce such rows, so pay for the clean-up only then.
    empty_rows = valid_lens <= 0  # (batch,) or (batch, queries)
    if empty_rows.any():
        if weights.requires_grad:
            # Autograd needs the softmax's output unchanged: zero a copy.
            weights = weights.masked_fill(_lengths_column(empty_rows), 0.0)
        else:
            # The weights are our own fresh tensor: write zeros into the empty rows only.
            weights[empty_rows.nonzero(as_tuple=True)] = 0.0
    return weights


def causal_valid_lens(batch_size, num_queries, device=None):
    """2-D valid lengths ``1, 2, ..., num_queries`` for every example.

    Query ``i`` may look at keys ``0..i`` only: the decoder's causal mask.
    """
    lens = torch.arange(1, num_queries + 1, device=device)
    return lens.repeat(batch_size, 1)  # (batch, queries)


def padding_mask(valid_lens, num_keys):
    """PyTorch's ``key_padding_mask`` from 1-D lengths: True marks padding.

    This is the form ``torch.nn.MultiheadAttention`` expects, shape
    ``(batch, keys)``.
    """
    valid_lens = _as_lengths(valid_lens)
    if valid_lens.dim() != 1:
        raise ValueError(
            f"valid_lens must be 1-D (batch,) for a key padding mask, got shape "
            f"{shape_str(valid_lens)}"
        )
    return torch.arange(num_keys, device=valid_lens.device) >= valid_lens[:, None]
