"""Argument checks shared by the public functions.

Each check raises ``TypeError`` or ``ValueError`` with a message that names
the argument, what was received and what was expected, so that a learner sees
the mistake in their own terms rather than an error from deep inside torch.
The messages are English, a programmer's; ``check_same``'s is in the learner's
language (``d2lmini.i18n``), as chapter 03 shows it on purpose.
"""

import torch

from .i18n import _


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
    """Every value in the dict ``sizes`` (argument description → size) is equal; ``what`` names the sizes.
    The descriptions and ``what`` come in the learner's language, and so does the message."""
    values = set(sizes.values())
    if len(values) > 1:
        listed = ", ".join(_("{name} has {size}").format(name=name, size=size) for name, size in sizes.items())
        raise ValueError(_("{what} must agree: {listed}").format(what=what, listed=listed))


def check_linear_input(layer, x, name, size_name):
    """``x``'s last axis fits ``layer`` once the layer knows its input size."""
    if isinstance(layer.weight, torch.nn.parameter.UninitializedParameter):
        return
    if x.shape[-1] != layer.in_features:
        raise ValueError(
            f"{name} has last dimension {x.shape[-1]} (shape {shape_str(x)}), "
            f"but this layer was built for {size_name}={layer.in_features}"
        )


def check_number(value, name, low=None, high=None, *, integer=False):
    """``value`` is an int (or, unless ``integer``, a float), from ``low`` to ``high`` where they are given.

    A bool is refused: Python counts True as 1, so a flag passed where a count
    or a size belongs would otherwise run as the number 1 or 0.
    """
    kinds, wanted = (int, "an int") if integer else ((int, float), "a number")
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise TypeError(f"{name} must be {wanted}, got {type(value).__name__} {value!r}")
    if low is not None and high is not None and not low <= value <= high:  # NaN fails these too
        raise ValueError(f"{name} must be between {low} and {high}, got {value}")
    if low is not None and not low <= value:
        raise ValueError(f"{name} must be at least {low}, got {value}")


def check_positive(value, name, *, integer=False):
    """``value`` is a number above 0: an int if ``integer``."""
    check_number(value, name, integer=integer)
    if not value > 0:  # NaN fails this too
        raise ValueError(f"{name} must be positive, got {value}")


def check_positive_int(value, name):
    check_positive(value, name, integer=True)


def check_dropout(value):
    check_number(value, "dropout")
    if not 0 <= value < 1:
        raise ValueError(f"dropout must be in [0, 1), got {value}")


def check_flag(value, name):
    """``value`` is True or False: not 1, 0 or a one-element tensor."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r:.60}")


def check_choice(value, name, choices):
    """``value`` is one of ``choices`` (a sequence)."""
    # True == 1 in Python: a bool is only a valid choice among bools, and an int never is.
    if isinstance(value, bool) != isinstance(choices[0], bool) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")


def check_per_example(values, name, count):
    """``values`` is a list or tuple of ``count`` starting values, one per example."""
    if not isinstance(values, (list, tuple)) or len(values) != count:
        raise ValueError(f"{name} must be a list or tuple of {count} lengths, one per example, "
                         f"got {values!r}")
    return list(values)
