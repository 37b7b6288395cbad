"""Argument checks shared by the public functions.

Each check raises ``TypeError`` or ``ValueError`` with a message that names
the argument, what was received and what was expected, so that a learner sees
the mistake in their own terms rather than an error from deep inside torch.
"""

import torch


def shape_str(x):
    """A shape as Python writes a tuple: (3,), (2, 3, 4)."""
    return str(tuple(x.shape))


def check_tensor(x, name, ndim=None, floating=False):
    """``x`` must be a tensor, of rank ``ndim`` (an int or a tuple of ints)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor, got {type(x).__name__}; "
            f"wrap it with torch.tensor(...)"
        )
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if x.dim() not in allowed:
            ranks = " or ".join(f"{r}-D" for r in allowed)
            raise ValueError(
                f"{name} must be {ranks}, got a {x.dim()}-D tensor of shape {shape_str(x)}"
            )
    if floating and not x.is_floating_point():
        raise TypeError(
            f"{name} must have a floating-point dtype, got {x.dtype}; "
            f"convert it with .float()"
        )


def check_same(sizes, what):
    """Every value in the dict ``sizes`` (argument description → size) is equal."""
    values = set(sizes.values())
    if len(values) > 1:
        listed = ", ".join(f"{name} has {size}" for name, size in sizes.items())
        raise ValueError(f"{what} must agree: {listed}")


def check_linear_input(layer, x, name, size_name):
    """``x``'s last axis fits ``layer`` once the layer knows its input size."""
    if isinstance(layer.weight, torch.nn.parameter.UninitializedParameter):
        return
    if x.shape[-1] != layer.in_features:
        raise ValueError(
            f"{name} has last dimension {x.shape[-1]} (shape {shape_str(x)}), "
            f"but this layer was built for {size_name}={layer.in_features}"
        )


def check_positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")


def check_dropout(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"dropout must be a number in [0, 1), got {type(value).__name__}")
    if not 0 <= value < 1:
        raise ValueError(f"dropout must be in [0, 1), got {value}")
