"""Nadaraya–Watson attention pooling with similarity kernels (chapter 01).

A kernel k(u) scores how close a query q is to a key x_i through
u = (q - x_i) / sigma; the pooling weights are the kernel values normalised
over the keys, and the prediction is their weighted average of the values.
"""

import torch
from torch import nn

from ._checks import check_number, check_positive, check_tensor, shape_str


def gaussian(u):
    """exp(-u²/2): every key gets some weight, nearer keys more."""
    return torch.exp(-u ** 2 / 2)


def boxcar(u):
    """1 inside the window |u| < 1, else 0: an unweighted local average."""
    return (u.abs() < 1).to(u.dtype)


def constant(u):
    """1 everywhere: every key weighs the same, so pooling is the plain mean."""
    return torch.ones_like(u)


def epanechnikov(u):
    """max(1 - u², 0): a parabola on |u| < 1 (its 3/4 factor cancels when normalised)."""
    return torch.clamp(1 - u ** 2, min=0)


KERNELS = {"gaussian": gaussian, "boxcar": boxcar, "constant": constant, "epanechnikov": epanechnikov}


def _log_kernel(kernel, u):
    """log k(u). Zero kernel values become -inf, which the softmax turns into zero weight."""
    if kernel == "gaussian":
        return -u ** 2 / 2  # exact: no exp, so no underflow for tiny sigma
    values = KERNELS[kernel](u) if isinstance(kernel, str) else kernel(u)
    if not isinstance(values, torch.Tensor) or values.shape != u.shape:
        raise ValueError(
            f"kernel must return a tensor shaped like its input {shape_str(u)}, "
            f"got {type(values).__name__} {getattr(values, 'shape', '')}"
        )
    if (values < 0).any():
        raise ValueError("kernel must return non-negative values; a similarity cannot be negative")
    return torch.log(values)


def _safe_softmax(scores):
    """Softmax over the last axis; a row that is all -inf gets all-zero weights."""
    weights = torch.softmax(scores, dim=-1)
    return torch.nan_to_num(weights, nan=0.0)


def nadaraya_watson(queries, keys, values, kernel="gaussian", sigma=1.0):
    """Pool ``values`` at ``queries`` with kernel weights; return ``(predictions, weights)``.

    ``kernel`` is a name from ``KERNELS`` or any function k(u) >= 0 of the
    scaled distance u = (query - key) / sigma.

    ``queries`` has shape ``(Q,)``; ``keys`` and ``values`` shape ``(K,)``, or
    ``(Q, K)`` when each query has its own keys (leave-one-out). The weights
    have shape ``(Q, K)`` (rows are queries) and each row sums to 1, except a
    row whose query lies outside every key's window: it is all zeros, and its
    prediction is 0. The weights are computed as a softmax of log-kernel
    values, so tiny ``sigma`` never gives NaN.
    """
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {sorted(KERNELS)} or a function, got {kernel!r}")
    elif not callable(kernel):
        raise TypeError(
            f"kernel must be a kernel name, one of {sorted(KERNELS)}, or a function k(u), "
            f"got {type(kernel).__name__}"
        )
    check_tensor(queries, "queries", ndim=1, floating=True)
    check_tensor(keys, "keys", ndim=(1, 2), floating=True)
    check_tensor(values, "values", ndim=(1, 2), floating=True)
    if keys.shape != values.shape:
        raise ValueError(
            f"keys and values must have the same shape, got keys {shape_str(keys)} "
            f"and values {shape_str(values)}"
        )
    if keys.dim() == 2 and keys.shape[0] != queries.shape[0]:
        raise ValueError(
            f"2-D keys need one row per query: keys {shape_str(keys)} but queries {shape_str(queries)}"
        )
    if not isinstance(sigma, torch.Tensor):  # a tensor may give each query its own width
        check_number(sigma, "sigma")
    sigma = torch.as_tensor(sigma, dtype=queries.dtype, device=queries.device)
    if not (sigma > 0).all():
        raise ValueError(f"sigma must be positive, got {sigma.tolist()}")
    u = (queries[:, None] - keys.reshape(-1, keys.shape[-1])) / sigma  # (Q, K)
    weights = _safe_softmax(_log_kernel(kernel, u))  # (Q, K)
    predictions = (weights * values.reshape(-1, values.shape[-1])).sum(-1)  # (Q,)
    return predictions, weights


def leave_one_out(x, y):
    """Keys and values for training a kernel width without cheating.

    Row i holds every training point except point i, shape ``(n, n-1)``, so
    query x_i cannot simply copy its own target y_i.
    """
    check_tensor(x, "x", ndim=1)
    check_tensor(y, "y", ndim=1)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape, got {shape_str(x)} and {shape_str(y)}")
    n = x.shape[0]
    if n < 2:
        raise ValueError(f"leave-one-out needs at least 2 points, got {n}")
    keep = ~torch.eye(n, dtype=torch.bool, device=x.device)
    return x.expand(n, n)[keep].reshape(n, n - 1), y.expand(n, n)[keep].reshape(n, n - 1)


class NWKernelRegression(nn.Module):
    """Gaussian Nadaraya–Watson regression with a learnable width sigma.

    The width is stored as ``log_sigma`` so that gradient steps keep it positive.
    """

    def __init__(self, sigma=1.0):
        super().__init__()
        check_positive(sigma, "sigma")
        self.log_sigma = nn.Parameter(torch.tensor(float(sigma)).log())

    @property
    def sigma(self):
        return self.log_sigma.exp()

    def forward(self, queries, keys, values):
        predictions, self.attention_weights = nadaraya_watson(
            queries, keys, values, "gaussian", self.sigma
        )
        return predictions
