"""The states a page stores: each distinct value once (``Interned``), the values the page offers
for each control (``offered_values``), what a state shows (``PageStates``), and which options are
valid with the other controls' values (``valid_options``)."""

import json

from .explorer import one_thread
from .figure import scale_top
from .page_artists import Sprites
from .page_figure import PageFigure


class Interned:
    """Values stored once each: ``add`` returns the index of an equal value stored before."""

    def __init__(self):
        self.values, self.index = [], {}

    def add(self, value):
        key = json.dumps(value, sort_keys=True, separators=(",", ":"))
        if key not in self.index:
            self.index[key] = len(self.values)
            self.values.append(value)
        return self.index[key]


def offered_values(declaration):
    """name -> the values the page offers for each control (``Declaration.page_values``)."""
    return {control.name: tuple(declaration.page_values().get(control.name, control.values()))
            for control in declaration.controls}


class PageStates:
    """A declaration's figures for the page, and its states as the page shows them."""

    def __init__(self, declaration):
        self.declaration = declaration
        self.sprites = Sprites()
        self.page_figures = {}  # layout, as JSON -> PageFigure

    def page_figure(self, layout):
        """The ``PageFigure`` of ``layout``, built the first time it is asked for."""
        key = json.dumps(layout)
        if key not in self.page_figures:
            self.page_figures[key] = PageFigure(self.declaration, layout, self.sprites)
        return self.page_figures[key]

    def state(self, settings):
        """(layout as JSON, caption, text summary, end of the fitted colour scale, every registered
        artist's look) for ``settings``: what the page shows, read from the declaration's own view."""
        with one_thread():
            result = self.declaration.compute(settings)
        page_figure = self.page_figure(result.layout)
        page_figure.view.update(result)
        return (json.dumps(result.layout), result.caption, self.declaration.describe(result),
                scale_top(result.weights), page_figure.looks())


def valid_options(declaration, offered, states):
    """name -> {the other controls' offered indices, comma-joined -> the offered indices of the
    options valid there}, for each control whose options depend on the other settings
    (``Declaration.choices``), over ``states``: the page offers only those options."""
    names = [control.name for control in declaration.controls]
    valid = {name: {} for name in declaration.choices(declaration.Settings())}
    for settings in states:
        for name, allowed in declaration.choices(settings).items():  # a list, or a dict value -> label
            others = ",".join(str(offered[other].index(getattr(settings, other))) for other in names if other != name)
            valid[name][others] = [i for i, value in enumerate(offered[name]) if value in allowed]
    return valid

