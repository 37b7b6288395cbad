"""The kernel's controls: ``widget_for`` builds the ipywidgets control of a declaration's control spec.

It checks the starting value first (the spec's ``check``), so that a mistake
raises at once, in the learner's terms: the spec names the argument the learner
passed, as in ``sigma must be between 0.0078125 and 8.0, got 0``. The checks
themselves (``check_number``, ``check_choice``, ``check_per_example``) live in
``d2lmini._checks``, with the package's other argument checks.
"""

import math
import re

import ipywidgets as widgets

from ..i18n import marks, number
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


def readout_text(control, value):
    """A slider's value as its readout writes it, with the learner's marks: a FloatSlider's with its
    ``digits`` decimals, a LogSlider's with its readout's significant digits (Python's "g", or written in
    full for d3's "r"), as the web page's explorers write it (``readout`` in page_js/explorers.js)."""
    if isinstance(control, FloatSlider):
        return number(value, f".{control.digits}f")
    digits = int((re.findall(r"[0-9]+", control.readout) or ["3"])[0])
    if "r" not in control.readout:
        return number(value, f".{digits}g")
    # d3-format's "r": rounded to ``digits`` significant digits, written in full (10,000, not 1e+04).
    rounded = float(format(value, f".{digits}g"))
    exponent = math.floor(math.log10(abs(rounded))) if rounded else 0
    return number(rounded, ("," if "," in control.readout else "") + f".{max(0, digits - 1 - exponent)}f")


def _marked_readout(slider, control):
    """Give ``slider`` a readout that writes the learner's decimal mark, where it is not a point.

    ipywidgets draws its readout with d3-format in the browser, which writes a point in every language
    (7.7 and 8 alike). There the slider's own readout is hidden and a Label beside it, updated on each
    change, shows the value; ``shown`` places the two together. The slider keeps its description and
    tooltip, so its accessible name is unchanged."""
    if marks()[0] == ".":
        return slider
    slider.readout = False
    label = widgets.Label(readout_text(control, slider.value), layout=widgets.Layout(min_width="3.5em"))
    label.add_class("d2l-readout")
    slider.observe(lambda change: setattr(label, "value", readout_text(control, change["new"])), names="value")
    slider.marked_readout = label
    return slider


def shown(widget):
    """What to place in a row for the control ``widget``: itself, beside its readout where it has one of
    its own (``_marked_readout``)."""
    label = getattr(widget, "marked_readout", None)
    return widget if label is None else widgets.HBox([widget, label])


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
        return _marked_readout(widgets.FloatSlider(value=value, min=control.low, max=control.high,
                                                   step=control.step, readout_format=f".{control.digits}f",
                                                   **common), control)
    if isinstance(control, LogSlider):
        return _marked_readout(widgets.FloatLogSlider(value=value, base=control.base, min=control.low_exponent,
                                                      max=control.high_exponent, step=control.step,
                                                      readout_format=_readout(control.readout), **common),
                               control)
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
