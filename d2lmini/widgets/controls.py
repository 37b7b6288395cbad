"""The controls an explorer is made of, each checking its starting value.

Every factory builds an ipywidgets control and first checks the starting value
against the control's own bounds or choices, so that a mistake raises at once,
in the learner's terms: ``name`` is the argument the learner passed, as in
``sigma must be between 0.0078125 and 8.0, got 0``. The checks themselves
(``check_number``, ``check_choice``, ``check_per_example``) also serve the
arguments of an explorer that are not a control's starting value.
"""

import ipywidgets as widgets

WIDE = {"description_width": "initial"}  # a control's style: its description in full, never cut


def check_number(value, name, low, high, integer=False):
    """``value`` is an int (or, unless ``integer``, a float) between ``low`` and ``high``."""
    kinds, wanted = ((int,), "an int") if integer else ((int, float), "a number")
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise TypeError(f"{name} must be {wanted}, got {type(value).__name__} {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {value}")


def check_choice(value, name, choices):
    """``value`` is one of ``choices``."""
    # True == 1 in Python: a bool is only a valid choice among bools, and an int never is.
    if isinstance(value, bool) != isinstance(choices[0], bool) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")


def check_per_example(values, name, count):
    """``values`` is a list or tuple of ``count`` starting values, one per example."""
    if not isinstance(values, (list, tuple)) or len(values) != count:
        raise ValueError(f"{name} must be a list or tuple of {count} lengths, one per example, "
                         f"got {values!r}")
    return list(values)


def int_slider(name, value, low, high, **options):
    check_number(value, name, low, high, integer=True)
    return widgets.IntSlider(value=value, min=low, max=high, **options)


def float_slider(name, value, low, high, **options):
    check_number(value, name, low, high)
    return widgets.FloatSlider(value=value, min=low, max=high, **options)


def log_slider(name, value, base, low_exponent, high_exponent, **options):
    """A slider over ``base ** exponent``, for widths and temperatures."""
    check_number(value, name, float(base) ** low_exponent, float(base) ** high_exponent)
    return widgets.FloatLogSlider(value=value, base=base, min=low_exponent, max=high_exponent, **options)


def selection_slider(name, value, choices, **options):
    check_choice(value, name, choices)
    return widgets.SelectionSlider(options=choices, value=value, **options)


def dropdown(name, value, options, **more):
    """A menu; ``options`` are values, or (label, value) pairs."""
    values = [option[1] if isinstance(option, tuple) else option for option in options]
    check_choice(value, name, values)
    return widgets.Dropdown(options=options, value=value, **more)


def checkbox(name, value, **options):
    check_choice(value, name, [True, False])
    return widgets.Checkbox(value=value, **options)
