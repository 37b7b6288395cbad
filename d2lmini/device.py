"""Devices and the small tensor helpers that the d2l book's code calls.

Everything here is a thin, explicit wrapper over torch, so that code written
as ``d2l.ones(...)`` or ``d2l.try_gpu()`` in the book runs unchanged after
``import d2lmini as d2l``.
"""

import torch

float32 = torch.float32
tensor = torch.tensor
ones = torch.ones
zeros = torch.zeros
eye = torch.eye
arange = torch.arange
reshape = torch.reshape
normal = torch.normal
rand = torch.rand
randn = torch.randn
sin = torch.sin
exp = torch.exp
abs = torch.abs  # shadows the builtin inside this module only, as d2l.abs does in the book


def astype(x, dtype):
    """``x`` converted to ``dtype`` (the book's ``d2l.astype(x, d2l.float32)``)."""
    return x.to(dtype)


def reduce_sum(x, *args, **kwargs):
    """``x.sum(...)``: ``d2l.reduce_sum(k, 0)`` sums over axis 0, as in the book."""
    return x.sum(*args, **kwargs)


def cpu():
    """The CPU device."""
    return torch.device("cpu")


def gpu(i=0):
    """The ``i``-th CUDA device (it need not exist; see ``try_gpu``)."""
    return torch.device(f"cuda:{i}")


def num_gpus():
    """The number of CUDA devices visible to torch."""
    return torch.cuda.device_count()


def _mps_available():
    backend = getattr(torch.backends, "mps", None)
    return backend is not None and backend.is_available()


def try_gpu(i=0):
    """The ``i``-th CUDA device if it exists, else Apple's MPS, else the CPU."""
    if num_gpus() >= i + 1:
        return gpu(i)
    if _mps_available():
        return torch.device("mps")
    return cpu()


def try_all_gpus():
    """Every CUDA device, or ``[mps]`` on Apple silicon, or ``[cpu()]``.

    The list is never empty, so ``devices[0]`` is always a usable device.
    """
    if num_gpus() > 0:
        return [gpu(i) for i in range(num_gpus())]
    if _mps_available():
        return [torch.device("mps")]
    return [cpu()]


def numpy(x):
    """A NumPy copy of ``x``: detached from autograd and moved to the CPU."""
    return x.detach().cpu().numpy()


class ShapeError(AssertionError, ValueError):
    """A tensor of the wrong shape.

    An ``AssertionError``, as the book's ``check_shape`` raises (its version is
    an ``assert``), and a ``ValueError``, like this package's other errors
    about a shape.
    """


def check_shape(a, shape):
    """Raise ``ShapeError`` naming both shapes unless ``a.shape`` equals ``shape``."""
    if tuple(a.shape) != tuple(shape):
        raise ShapeError(f"expected shape {tuple(shape)}, got {tuple(a.shape)}")
