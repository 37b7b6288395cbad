"""An explorer declared once, as data: its controls, a pure computation, and a view.

A declaration says three things, and two shells are built from it:

* its **controls** (``controls``): the specs below (``IntSlider``,
  ``FloatSlider``, ``LogSlider``, ``Choice``, ``Checkbox``, ``NumberBox``),
  each a frozen dataclass that knows its name, its label, every value it can
  take and how to check one;
* a **computation** ``compute(settings) -> result``: from a frozen dataclass
  of named settings (``Settings``, one field per control) to a frozen
  dataclass of named results (a subclass of ``Result``). It draws nothing and
  keeps no state, so any shell, a test or the site's builder can call it;
* a **view** ``build(blit) -> view``: the axes and artists of a
  ``figure.BlitFigure``, every artist that moves registered with
  ``blit.animate``; the view's ``update(result)`` moves them.

The kernel's shell, ``explorer.Explorer`` (an ipywidgets box, in Jupyter,
Colab and on a hub), and the page's shell (``page``, for the web site) both
read the same declaration. This module imports neither ipywidgets nor
matplotlib.
"""

import dataclasses
import itertools
import math
from dataclasses import dataclass, field

import torch

from .._checks import check_choice, check_number
from ..i18n import _

# English text made by ``numbered`` -> (its template, its fields): ``say`` translates the template.
_NUMBERED = {}


def numbered(template, **fields):
    """``template`` (marked ``N_``) filled with ``fields``, in English: a label that holds a number
    ("valid_len, example 0"). The declaration keeps the English, the page's too; ``say`` gives it
    in the learner's language."""
    text = template.format(**fields)
    _NUMBERED[text] = template, fields
    return text


def say(text):
    """A declaration's ``text`` (a label, an option, a note, marked ``N_`` or made by ``numbered``)
    in the learner's language."""
    if text in _NUMBERED:
        template, fields = _NUMBERED[text]
        return _(template).format(**{name: say(value) if isinstance(value, str) else value
                                     for name, value in fields.items()})
    return _(text) if text else text


@dataclass(frozen=True)
class Control:
    """One control: ``name`` is its settings field, ``label`` what the learner reads beside it,
    ``argument`` the name an error message gives a bad starting value (``name`` by default).

    ``accessible_name`` is what a screen reader says for it where the label is short or repeats
    (the per-query boxes "q0" of each example: "example 1, query 0, valid length"); the label by
    default (``spoken``). ``inactive_when`` = (setting, value, reason): while that setting has that
    value the control changes nothing, and each shell disables it and shows ``reason``
    (``Declaration.inactive``)."""

    name: str
    label: str
    argument: str = field(default="", kw_only=True)
    tooltip: str = field(default="", kw_only=True)
    accessible_name: str = field(default="", kw_only=True)
    inactive_when: tuple = field(default=None, kw_only=True)

    @property
    def spoken(self):
        """The control's name for a screen reader, in English (``say`` it): its accessible name or label."""
        return self.accessible_name or self.label

    @property
    def kind(self):
        return type(self).__name__

    def check(self, value):
        """Raise, naming the argument, if ``value`` is not a value of this control."""
        raise NotImplementedError

    def values(self):
        """Every value the control can take, in order."""
        raise NotImplementedError

    def spec(self):
        """The control as JSON-ready data, for the page."""
        data = {"kind": self.kind, **dataclasses.asdict(self)}
        data.pop("argument")
        return data

    @property
    def who(self):
        return self.argument or self.name


@dataclass(frozen=True)
class IntSlider(Control):
    low: int
    high: int
    step: int = 1

    def check(self, value):
        check_number(value, self.who, self.low, self.high, integer=True)

    def values(self):
        return tuple(range(self.low, self.high + 1, self.step))


def _grid(low, high, step):
    """low, low + step, ... up to high, as the slider snaps them (rounded to 10 decimals)."""
    count = math.floor((high - low) / step + 1e-9)
    return tuple(round(low + k * step, 10) for k in range(count + 1))


@dataclass(frozen=True)
class FloatSlider(Control):
    low: float
    high: float
    step: float
    digits: int = 1  # decimals shown in the readout

    def check(self, value):
        check_number(value, self.who, self.low, self.high)

    def values(self):
        return _grid(self.low, self.high, self.step)


@dataclass(frozen=True)
class LogSlider(Control):
    """A slider over ``base ** exponent``, for widths and temperatures."""

    base: float
    low_exponent: float
    high_exponent: float
    step: float
    readout: str = ".3g"  # format of the value shown

    def check(self, value):
        check_number(value, self.who, float(self.base) ** self.low_exponent, float(self.base) ** self.high_exponent)

    def values(self):
        return tuple(float(self.base) ** e for e in _grid(self.low_exponent, self.high_exponent, self.step))


@dataclass(frozen=True)
class Choice(Control):
    """One of ``options``, (label, value) pairs, shown as a ``"dropdown"`` menu, ``"toggle"``
    buttons or a ``"slider"`` over the options."""

    options: tuple
    style: str = "dropdown"  # or "toggle", "slider", or "combobox": a text box that suggests the options
    free_text: bool = False  # a "combobox" that takes any text, not only its options

    def check(self, value):
        if self.free_text:
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{self.who} must be a non-empty str, got {value!r}")
            return
        check_choice(value, self.who, self.values())

    def values(self):
        return tuple(value for _, value in self.options)

    def label_of(self, value):
        return next(label for label, option in self.options if option == value)


def options(values):
    """(label, value) pairs for plain values: each labelled by its own text."""
    return tuple((str(value), value) for value in values)


@dataclass(frozen=True)
class Checkbox(Control):
    """On or off: a ``"box"`` with its label, or a ``"cell"``, a small square button marked ✓
    when on (the mask editor's cells; its label is its tooltip)."""

    style: str = "box"

    def check(self, value):
        check_choice(value, self.who, [True, False])

    def values(self):
        return (False, True)


@dataclass(frozen=True)
class NumberBox(Control):
    """An integer typed in a box, between ``low`` and ``high``."""

    low: int
    high: int

    def check(self, value):
        check_number(value, self.who, self.low, self.high, integer=True)

    def values(self):
        return tuple(range(self.low, self.high + 1))


@dataclass(frozen=True)
class Row:
    """Controls shown side by side, by name; ``label`` before them; shown only while the
    setting ``when[0]`` equals ``when[1]`` (always, when ``when`` is None). With ``columns``,
    a grid of that many columns instead of a row, beside the picture (the mask editor's cells).
    ``note``, HTML, is shown under it (what a cell means)."""

    names: tuple
    label: str = ""
    when: tuple = None
    columns: int = None
    note: str = ""


@dataclass(frozen=True)
class Result:
    """What ``compute`` returns; an explorer's result class adds its own fields.

    ``weights`` is the tensor drawn, ``caption`` the line above the picture,
    ``mask`` (True = may attend, the shape of ``weights``) marks the masked
    cells when there are any, and ``layout`` picks the figure when the
    explorer has several (``Declaration.layouts``).
    """

    weights: torch.Tensor
    caption: str
    mask: torch.Tensor = field(default=None, kw_only=True)
    layout: object = field(default=None, kw_only=True)


class Declaration:
    """An explorer, declared once (see the module's docstring).

    A subclass sets ``controls`` (a tuple of control specs), ``Settings`` (a
    frozen dataclass with one field per control, in the same order), and
    defines ``compute(settings)`` and ``build(blit)``. A declaration the
    package exports sets ``chapter``, the number of the chapter whose notebook
    shows it (2 for ``notebooks/02_masked_softmax.py``), and, where that
    notebook shows several, ``place``: its place among them in the notebook's
    order (0, the first, by default). ``DECLARATIONS`` is in that order, by
    chapter, then place (the package's ``__init__.py``). It may set:

    * ``rows``: the controls' arrangement, a tuple of ``Row`` (one row of
      all of them by default);
    * ``figsize``, or ``layouts`` (layout -> figsize) for a picture that
      changes shape;
    * ``filename`` (Save's default), ``repr_controls`` (the settings named
      in the text form that nbval compares), ``shows_weights`` (False: the
      picture is not attention weights, so no colour-scale or colour-map
      control), ``colour_scale`` (the scale shown first), ``static_hint``
      (the line under the static picture of a notebook not run, for an
      explorer that ``HINT``'s sliders would misdescribe), ``title`` (its name
      on the web page), ``page_script`` and its ``script_words`` (what the
      page's port of it says);

    and define ``adjust(settings, changed)`` (the settings after the control
    ``changed`` moved: one control may set others), ``choices(settings)``
    (options that depend on other settings), ``describe(result)`` (the text
    summary) and ``recipe(result)`` (what Save's ``.npz`` holds).
    """

    controls = ()
    Settings = None
    chapter = None
    place = 0
    rows = None
    figsize = (6.4, 3.2)
    layouts = None
    filename = "explorer.png"
    repr_controls = ()
    shows_weights = True
    colour_scale = "fixed"  # the colour scale shown first: "fixed" (0 to 1) or "fit" (to the weights)
    static_hint = None  # under the static picture: None, the shell's HINT; or a message marked with N_
    # Its name on the web page (its box's aria-label, said by a screen reader), marked N_; None: named
    # after its class, in English (page_words.title).
    title = None
    page_note = ""  # on the web site: what the page offers less than the notebook, said under the picture
    # On the web site: None, the page stores every state it offers (page_states); or the name of a
    # script in page_js/ that computes a state in the page from ``page_data()`` (and ports ``adjust``,
    # when the declaration has one: explorers.js's D2L_ADJUST).
    page_script = None
    # With a page_script: the words its port of ``compute`` and ``describe`` says, by name, each a message
    # marked N_ or, for one said of a count, a function of the count giving n_. They are the messages its
    # Python ``compute`` and ``describe`` format (its module's constants), so each is written once; a
    # script serving several declarations is sent the words of them all (page_words.script_words).
    script_words = {}
    page_play = None  # on the web site: the name of a slider given a Play/Pause button (a recorded run's steps)
    # The explorer's name in its text form and on the page: the class name and "Explorer", set for each
    # subclass (``__init_subclass__``) so that the class answers too, with no instance (the site's tools).
    # A subclass that sets ``name`` itself keeps it.
    name = "DeclarationExplorer"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" not in vars(cls):
            cls.name = cls.__name__ + "Explorer"

    @classmethod
    def for_page(cls):
        """The declaration with the data its chapter shows, for the web site (``cls()`` by default;
        one that needs a model or a recorded run loads it here)."""
        return cls()

    def control(self, name):
        """The control spec called ``name``."""
        for control in self.controls:
            if control.name == name:
                return control
        names = ", ".join(control.name for control in self.controls)
        raise ValueError(f"{type(self).__name__} has no control {name!r}; its controls: {names}")

    def checked_settings(self, **values):
        """``Settings`` from ``values``, each checked by its control (unnamed ones keep their defaults)."""
        for name, value in values.items():
            self.control(name).check(value)
        return self.Settings(**values)

    def all_layouts(self):
        """layout -> figsize, for every figure the explorer draws."""
        return dict(self.layouts) if self.layouts else {None: self.figsize}

    def figsize_for(self, layout):
        """The figure size of ``layout`` (``all_layouts``; a declaration whose layouts are made
        as the learner types overrides it)."""
        return self.all_layouts()[layout]

    def arrangement(self):
        """The rows of controls, ``rows`` or one row of all of them."""
        return self.rows or (Row(tuple(control.name for control in self.controls)),)

    # What a subclass defines.

    def compute(self, settings):
        """Settings -> a ``Result``; draws nothing."""
        raise NotImplementedError

    def build(self, blit):
        """Add the axes and artists to ``blit.figure``, register those that move, and return
        the view: an object whose ``update(result)`` moves them."""
        raise NotImplementedError

    def adjust(self, settings, changed):
        """The settings after control ``changed`` moved (unchanged by default)."""
        return settings

    def choices(self, settings):
        """name -> options for the controls whose options depend on other settings: the values
        allowed now, among the control's options, or a dict value -> label for options made from
        the settings (a sentence's tokens)."""
        return {}

    def inactive(self, settings):
        """name -> reason (English, ``say`` it) for each control that changes nothing with ``settings``
        (its ``inactive_when``): both shells disable it and show the reason."""
        return {control.name: control.inactive_when[2] for control in self.controls
                if control.inactive_when and getattr(settings, control.inactive_when[0]) == control.inactive_when[1]}

    def describe(self, result):
        """The picture of ``result`` in words (``plotting.describe_weights`` by default)."""
        from ..plotting import describe_weights
        return describe_weights(result.weights, result.mask)

    def recipe(self, result):
        """A ``Recipe`` that rebuilds ``result.weights``; None: Save writes no ``.npz``."""
        return None

    def page_values(self):
        """name -> the values the web page offers, for a control whose every value would make the
        page too large (every value by default; say so in ``page_note``)."""
        return {}

    def page_layouts(self):
        """The layouts of every figure the page may show, all built for it (``all_layouts`` by default;
        a declaration that builds its figures as the learner asks, such as a sentence's, lists them here)."""
        return tuple(self.all_layouts())

    def page_data(self):
        """What the page script computes from (name -> numbers or lists), JSON-ready. The script may
        also port ``adjust`` (``window.D2L_ADJUST``) and ``choices`` (a result's ``choices``)."""
        return {}

    def page_states(self, offered):
        """The settings the web page stores: every combination of the ``offered`` values (name ->
        values) that ``choices`` allows, by default."""
        names = [control.name for control in self.controls]
        for values in itertools.product(*(offered[name] for name in names)):
            settings = self.Settings(**dict(zip(names, values)))
            if all(getattr(settings, name) in allowed for name, allowed in self.choices(settings).items()):
                yield settings
