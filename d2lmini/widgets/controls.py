"""The kernel's controls: ``widget_for`` builds the ipywidgets control of a declaration's control spec.

It checks the starting value first (the spec's ``check``), so that a mistake
raises at once, in the learner's terms: the spec names the argument the learner
passed, as in ``sigma must be between 0.0078125 and 8.0, got 0``. The checks
themselves (``check_number``, ``check_choice``, ``check_per_example``) live in
``d2lmini._checks``, with the package's other argument checks.
"""

import ipywidgets as widgets

from ..i18n import marks
from ._compat import toggle_button_style, tooltip
from .declaration import Checkbox, Choice, FloatSlider, IntSlider, LogSlider, NumberBox, say

WIDE = {"description_width": "initial"}  # a control's style: its description in full, never cut


def _mark(on):
    return "✓" if on else ""


def _readout(spec):
    """A slider's readout format (d3-format's, which groups thousands with a comma in every language):
    without the grouping where the learner's language writes a comma as its decimal mark, where
    "10,000" would read as ten."""
    return spec.replace(",", "") if marks()[0] == "," else spec


def widget_for(control, value):
    """The ipywidgets control of the spec ``control`` (``declaration``), at ``value``, checked first;
    its label, tooltip and options' labels in the learner's language (``say``)."""
    control.check(value)
    # The tooltip a screen reader can get: the control's whole name where its label is short
    # (``accessible_name``), then its hint.
    hint = " ".join(say(text) for text in (control.accessible_name, control.tooltip) if text)
    common = {"description": say(control.label), "style": WIDE, **(tooltip(hint) if hint else {})}
    if isinstance(control, IntSlider):
        return widgets.IntSlider(value=value, min=control.low, max=control.high, step=control.step, **common)
    if isinstance(control, FloatSlider):
        return widgets.FloatSlider(value=value, min=control.low, max=control.high, step=control.step,
                                   readout_format=f".{control.digits}f", **common)
    if isinstance(control, LogSlider):
        return widgets.FloatLogSlider(value=value, base=control.base, min=control.low_exponent,
                                      max=control.high_exponent, step=control.step,
                                      readout_format=_readout(control.readout), **common)
    if isinstance(control, Choice) and control.style == "combobox":
        return widgets.Combobox(value=value, options=[label for label, _ in control.options],
                                ensure_option=not control.free_text, continuous_update=False,
                                layout=widgets.Layout(width="95%"), **common)
    if isinstance(control, Choice):
        kind = {"dropdown": widgets.Dropdown, "toggle": widgets.ToggleButtons,
                "slider": widgets.SelectionSlider}[control.style]
        return kind(options=[(say(label), option) for label, option in control.options], value=value, **common)
    if isinstance(control, Checkbox) and control.style == "cell":
        cell = widgets.ToggleButton(value=value, description=_mark(value), tooltip=say(control.spoken),
                                    layout=widgets.Layout(width="30px", height="30px", padding="0"),
                                    style=toggle_button_style())
        cell.observe(lambda change: setattr(cell, "description", _mark(change["new"])), names="value")
        return cell
    if isinstance(control, Checkbox):
        return widgets.Checkbox(value=value, **common)
    if isinstance(control, NumberBox):
        return widgets.BoundedIntText(value=value, min=control.low, max=control.high,
                                      layout=widgets.Layout(width="110px"),
                                      **{**common, "style": {"description_width": "24px"}})
    raise TypeError(f"control must be one of d2lmini.widgets.declaration's specs, got {type(control).__name__}")
