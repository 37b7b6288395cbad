"""Masks: which keys each query may attend to, and the softmax that respects them.

Conventions used throughout the package:

* scores have shape ``(batch, queries, keys)`` (the multi-head fast path adds
  a head axis after the batch);
* ``valid_lens`` is ``None``, 1-D ``(batch,)`` with one length per example, or
  2-D ``(batch, queries)`` with one length per query;
* key ``j`` is valid for a row when ``j < valid_len``, so a length above the
  number of keys means "every key is valid", and float lengths work too;
* a mask is boolean and True where a query *may* attend to a key, as in
  ``torch.nn.functional.scaled_dot_product_attention`` (SDPA).

One rule, one place:

* ``attention_mask`` is the only function that reads ``valid_lens``. Every
  entry point (``masked_softmax``, ``sequence_mask``, ``padding_mask``, both
  paths of the attention modules, the explorers) turns lengths into a mask
  through it, once per call.
* ``empty_rows`` and ``zero_empty_rows`` hold the policy for a query with no
  valid key: its row is all zeros, never NaN and never weight on padding.
"""

import math

import torch

from ._checks import check_number, check_tensor, shape_str


def _as_lengths(valid_lens, batch_size, num_queries):
    """``valid_lens`` as a tensor whose shape fits the batch, checked once.

    Shapes are metadata, so checking them is free on every device. Values are
    only read back from CPU tensors: reading a GPU tensor's values would make
    the host wait for the GPU (a synchronisation) on every forward pass.
    """
    if isinstance(valid_lens, (list, tuple)):
        valid_lens = torch.tensor(valid_lens)
    check_tensor(valid_lens, "valid_lens")
    if valid_lens.dtype == torch.bool or valid_lens.is_complex():
        raise TypeError(f"valid_lens must hold integer or float lengths, got dtype {valid_lens.dtype}")
    def expected():
        return f"expected ({batch_size},) or ({batch_size}, {num_queries})"

    if valid_lens.dim() not in (1, 2):
        raise ValueError(f"valid_lens must be 1-D or 2-D, got shape {shape_str(valid_lens)}; {expected()}")
    if valid_lens.shape[0] != batch_size:
        raise ValueError(f"valid_lens has shape {shape_str(valid_lens)}, which does not fit a batch of "
                         f"{batch_size} examples; {expected()}")
    if valid_lens.dim() == 2 and valid_lens.shape[1] != num_queries:
        raise ValueError(f"valid_lens has shape {shape_str(valid_lens)}, but there are {num_queries} "
                         f"queries: a 2-D valid_lens needs one length per query; {expected()}")
    if valid_lens.device.type == "cpu" and valid_lens.numel() > 0:
        shortest = valid_lens.min().item()  # NaN if any length is NaN: one reduction checks both
        if math.isnan(shortest):
            raise ValueError(f"valid_lens must not contain NaN, got {valid_lens.tolist()}")
        if shortest < 0:
            raise ValueError(f"valid_lens must be non-negative, got {valid_lens.tolist()}")
    return valid_lens


def attention_mask(valid_lens, batch_size, num_queries, num_keys, *, causal=False, device=None):
    """The boolean mask for ``valid_lens``: True where query ``i`` may attend to key ``j``.

    ``valid_lens`` is None, 1-D ``(batch_size,)``, 2-D ``(batch_size,
    num_queries)``, or a list of lengths. With ``causal=True`` query ``i``
    also sees keys ``0..i`` only (query ``i`` lines up with key ``i``, as with
    SDPA's ``is_causal``); combined with lengths, a key must pass both.

    Returns None when nothing is masked, else a mask that broadcasts against
    scores ``(batch, queries, keys)``: ``(batch, 1, keys)`` for 1-D lengths,
    ``(batch, queries, keys)`` for 2-D or causal lengths, ``(1, queries,
    keys)`` for the causal mask alone. It lives on ``device`` (by default the
    lengths' device, or the CPU).

    The lengths are checked here and nowhere else, with an error that names
    what was received and what was expected. Their values (no NaN, none
    negative) are checked only for CPU tensors, where reading them is free;
    lengths on a GPU are never read back, so building the mask does not
    synchronise. There, a NaN or negative length simply allows no key.
    """
    if valid_lens is None and not causal:
        return None
    mask = None
    if valid_lens is not None:
        valid_lens = _as_lengths(valid_lens, batch_size, num_queries)
        if device is not None:
            valid_lens = valid_lens.to(device, non_blocking=True)
        device = valid_lens.device
        lengths = valid_lens[:, None, None] if valid_lens.dim() == 1 else valid_lens[:, :, None]
        mask = torch.arange(num_keys, device=device) < lengths  # (batch, 1 or queries, keys)
    if causal:
        keys = torch.arange(num_keys, device=device)
        queries = torch.arange(num_queries, device=device)
        past = keys <= queries[:, None]  # (queries, keys)
        mask = past[None] if mask is None else mask & past
    return mask


def empty_rows(mask):
    """True for a query that may attend to no key at all: shape ``(..., 1 or queries, 1)``."""
    return ~mask.any(dim=-1, keepdim=True)


def zero_empty_rows(x, mask, *, inplace=False):
    """``x`` with the rows of queries that see no key set to zero: the package's policy.

    ``x`` holds one row per query, ``(..., queries, n)``: attention weights or
    attention outputs. ``inplace=True`` writes into ``x`` (for a temporary
    the caller owns). On the CPU, reading the mask back is free: the work is
    skipped when no row is empty, and in place only the empty rows are
    written. On a GPU that read would synchronise, so the fill always runs
    over the whole of ``x`` there.
    """
    if x.device.type == "cpu":
        if mask.any(dim=-1).all():  # every query sees a key: nothing to zero
            return x
        if inplace:
            x[empty_rows(mask)[..., 0].expand(x.shape[:-1])] = 0.0  # the empty rows alone
            return x
    empty = empty_rows(mask)
    return x.masked_fill_(empty, 0.0) if inplace else x.masked_fill(empty, 0.0)


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
    if X.is_floating_point() and abs(value) != float("inf") and abs(value) > torch.finfo(X.dtype).max:
        raise ValueError(
            f"value={value} does not fit in X's dtype {X.dtype} (largest magnitude "
            f"{torch.finfo(X.dtype).max:.6g}); use float('-inf') or torch.finfo(X.dtype).min"
        )
    keep = attention_mask(valid_len, X.shape[0], 1, X.shape[1], device=X.device)[:, 0]  # (batch, steps)
    keep = keep.reshape(keep.shape + (1,) * (X.dim() - 2))
    return X.masked_fill(~keep, value)


def masked_softmax(X, valid_lens=None, *, mask=None, inplace=False):
    """Softmax over the last axis of ``X``, ignoring the keys that are masked.

    Give either ``valid_lens`` (the book's way: ``X`` is then ``(batch,
    queries, keys)``) or a boolean ``mask`` from ``attention_mask`` that
    broadcasts against ``X``. With neither this is a plain softmax. Masked
    keys get weight exactly 0, and a row with no valid key gets all-zero
    weights. ``X`` is left untouched unless ``inplace=True``, which fills the
    masked scores in place (for scores the caller has just computed and owns).
    """
    check_tensor(X, "X", floating=True)
    if valid_lens is not None:
        if mask is not None:
            raise ValueError("give valid_lens or mask, not both")
        if X.dim() != 3:
            raise ValueError(f"X must be 3-D (batch, queries, keys) when valid_lens is given, "
                             f"got shape {shape_str(X)}")
        mask = attention_mask(valid_lens, *X.shape, device=X.device)
    if mask is None:
        return torch.softmax(X, dim=-1)
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise TypeError(f"mask must be a boolean tensor (True = may attend), got "
                        f"{getattr(mask, 'dtype', type(mask).__name__)}")
    # -inf gives masked keys exactly zero weight in every dtype; -1e6 would
    # overflow to -inf in float16 anyway, and in every dtype it gives a fully
    # masked row uniform weights, and a key scored below -1e6 less than a masked one.
    scores = (X.masked_fill_ if inplace else X.masked_fill)(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # a row with every key masked is NaN here
    # The weights are our own new tensor; autograd needs them unchanged only when it tracks them.
    return zero_empty_rows(weights, mask, inplace=not weights.requires_grad)


def causal_valid_lens(batch_size, num_queries, device=None):
    """2-D valid lengths ``1, 2, ..., num_queries`` for every example.

    Query ``i`` may look at keys ``0..i`` only: the decoder's causal mask.
    """
    check_number(batch_size, "batch_size", low=0, integer=True)
    check_number(num_queries, "num_queries", low=0, integer=True)
    lens = torch.arange(1, num_queries + 1, device=device)
    return lens.repeat(batch_size, 1)  # (batch, queries)


def padding_mask(valid_lens, num_keys):
    """PyTorch's ``key_padding_mask`` from 1-D lengths: True marks padding.

    This is the form ``torch.nn.MultiheadAttention`` expects, shape
    ``(batch, keys)``: the opposite convention to ``attention_mask``.
    """
    check_number(num_keys, "num_keys", low=0, integer=True)
    if isinstance(valid_lens, (list, tuple)):
        valid_lens = torch.tensor(valid_lens)
    check_tensor(valid_lens, "valid_lens")
    if valid_lens.dim() != 1:
        raise ValueError(
            f"valid_lens must be 1-D (batch,) for a key padding mask, got shape "
            f"{shape_str(valid_lens)}"
        )
    return ~attention_mask(valid_lens, valid_lens.shape[0], 1, num_keys)[:, 0]
