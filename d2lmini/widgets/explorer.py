"""The explorer: controls in, a redrawn picture of one kept figure out.

An explorer is an ``ipywidgets.VBox``: its controls, a caption with the values
drawn, the picture (an ``ipywidgets.Image`` of PNG bytes), a Save row and a
message line. A subclass declares four things and nothing else:

* its **controls**, passed to ``Explorer.__init__`` (the factories in
  ``controls`` build them and check each starting value against the
  control's own bounds);
* ``build(plot)``: the axes and artists of ``plot.figure``; every artist that
  changes is registered with ``plot.animate(artist)`` (``plot.heatmap`` does it);
* ``compute(state)``: the control values (a dict) -> a dict with ``"weights"``,
  ``"caption"`` and whatever ``draw`` needs; it draws nothing;
* ``draw(result)``: moves the registered artists.

The base does the rest, as matplotlib's "Faster rendering by using blitting"
tutorial does with its ``BlitManager`` (``figure.BlitFigure``): the figure is
drawn in full once, without the registered artists, and kept as a background;
an update pastes the background back and draws the registered artists over it.
An explorer whose picture changes shape (the multi-head grid) declares one
figure per ``layout``; the one shown first is drawn at construction, the
others ahead of time while the kernel is idle, so that a layout shown for the
first time usually costs no more than any other change.

Nothing can be forgotten silently: registering an artist twice raises, an
artist made ``animated=True`` but never registered makes the background draw
raise, and a ``draw`` that changes an unregistered artist (which the kept
background would hide) raises too. The error is shown in the explorer.

Other behaviour every explorer shares:

* the weights come from d2lmini's own functions, so the picture shows what the
  package computes;
* the figure is a ``matplotlib.figure.Figure`` on an Agg canvas, never a
  pyplot figure, so nothing leaks into the notebook's inline output;
* the cell output is the container alone, and its text form is a short repr of
  the control values, so a notebook displaying an explorer passes strict nbval;
* an exception while updating is shown in the explorer (and kept as
  ``last_error``); the previous picture stays, and the next change redraws;
* a ``colour_scale`` control: ``"fixed"`` (0 to 1) or ``"fit"`` (0 to
  ``scale_top(weights)``); the heatmaps and the colorbar share one
  ``Normalize``, so one assignment recolours them all; beside it a
  ``colour_map`` menu (``plotting.CMAPS``: viridis by default, and the
  colour-blind safe ones say so) recolours them all in place too. An explorer
  whose picture is not attention weights (``SHOWS_WEIGHTS = False``) has
  neither;
* a text summary of the weights drawn (``plotting.describe_weights``, or the
  explorer's own ``describe``) under the picture and as the image's tooltip
  (its ``title``, which screen readers read as its description), updated
  with every redraw;
* the picture is drawn at ``PIXEL_RATIO`` times its CSS size, for HiDPI
  screens; only the rows that can change are compressed again (``png.BandedPNG``);
* masked cells are left out of a heatmap and show a grey hatched background,
  named in a legend, so a masked key never looks like a weight of 0;
* the display data carries a static PNG of the first picture beside the widget
  view, for renderers without widgets (GitHub, an export without widget state);
* Save writes into ``figures/`` beside the notebook (git ignores it) and says
  the full paths: PNG or SVG of the picture, or (``.npz``) the weights with
  the inputs that rebuild them and, beside it, a Python snippet of plain
  ``d2lmini`` code that recomputes and draws them (``recipe``; ``export`` writes them).
"""

import asyncio
import base64
import contextlib
import html
import struct
import time
import traceback
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import torch
from IPython import get_ipython
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from traitlets import Unicode

from ..plotting import CMAP, CMAPS, describe_weights
from ._compat import MimeBundleDisplay, tooltip
from .controls import WIDE
from .export import SAVE_FOLDER, SAVE_FORMATS, save_npz, save_picture
from .figure import DPI, PIXEL_RATIO, BlitFigure, scale_top
from .png import png_bytes

HINT = "run the cell to move the sliders"  # under the static picture of a notebook not run

# Seconds of quiet (no cell run, no control moved) before an explorer prepares its
# other layouts in the kernel's idle time, and between two layouts prepared.
IDLE_DELAY, IDLE_STEP = 0.5, 0.1
# When a control of any explorer last moved: one explorer's idle-time work waits while the
# learner uses another (a layout drawn meanwhile held up that explorer's next picture by 0.3 s).
_last_change_anywhere = [float("-inf")]
READY_CLASS = "d2l-ready"  # an explorer's CSS class once every layout is drawn (the browser tests wait for it)


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread: the tensors here are tiny, and waking torch's
    worker threads after an idle pause costs more than the whole computation
    (8 ms for a (50, 40) softmax on a busy 2-core machine, against 0.1 ms)."""
    num_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(num_threads)


def error_html(error):
    """The error in one red line, its traceback folded beneath."""
    summary = html.escape(f"{type(error).__name__}: {error}")
    details = html.escape("".join(traceback.format_exception(error)))
    return (f'<details style="color:#b00020"><summary>⚠ {summary}</summary>'
            f"<pre>{details}</pre></details>")


def _text_rows(width, text, **style):
    """Pixel rows (height, ``width``, 4) of one centred line of ``text`` on white."""
    dpi = DPI * PIXEL_RATIO
    figure = Figure(figsize=(width / dpi, 0.3), dpi=dpi, facecolor="white")
    figure.text(0.5, 0.5, text, ha="center", va="center", **style)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    drawn = np.asarray(canvas.buffer_rgba())
    rows = np.full((drawn.shape[0], width, 4), 255, dtype=np.uint8)
    common = min(width, drawn.shape[1])
    rows[:, :common] = drawn[:, :common]
    return rows


class DescribedImage(widgets.Image):
    """An ``ipywidgets.Image`` whose ``tooltip`` becomes the ``<img>``'s ``title``: its description
    for a screen reader.

    ipywidgets 8's front end sets the title only when the model's ``description``
    is empty, and reads its length; an Image has no ``description``, so a
    tooltip on a plain Image stops its view from being drawn at all ("Could not
    create a view"). This one syncs an empty ``description``.
    """

    description = Unicode("").tag(sync=True)


class Shown:
    """An explorer attribute that reads ``result[name]`` of the picture shown now.

    ``x_train = Shown()`` in a class body gives ``explorer.x_train``.
    """

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, explorer, owner=None):
        if explorer is None:
            return self
        return explorer.result[self.name]


class Explorer(MimeBundleDisplay, widgets.VBox):
    """Controls, a picture of a kept figure, a Save row and a message line.

    A subclass passes its ``controls`` (name -> widget) and, optionally, their
    layout ``rows`` (one row of all of them by default), the ``figsize`` of its
    figure, or ``layouts`` (layout -> figsize) for several figures, and the
    default ``filename`` for Save. It defines ``build(plot)``,
    ``compute(state)`` and ``draw(result)`` (see the module's docstring), and
    may define ``sync_controls(owner)`` to adjust other controls after one
    changed. ``compute`` picks the figure with ``result["layout"]``.
    """

    repr_controls = ()  # the controls named in repr: short and deterministic for nbval

    COLOUR_SCALES = (("0 to 1", "fixed"), ("fit to weights", "fit"))
    SHOWS_WEIGHTS = True  # False: no colour-scale and colour-map controls, and Save writes no .npz

    weights = Shown()  # the tensor drawn now

    def __init__(self, controls, rows=None, *, figsize=(6.4, 3.2), layouts=None, filename="explorer.png"):
        super().__init__()
        rows = [widgets.HBox(list(controls.values()))] if rows is None else rows
        colour_row = []
        if self.SHOWS_WEIGHTS:
            # The fixed scale compares pictures honestly; fitting it makes small
            # weights (a wide kernel, many keys) visible. The colorbar is true either way.
            controls["colour_scale"] = widgets.ToggleButtons(options=self.COLOUR_SCALES, value="fixed",
                                                             description="colours")
            controls["colour_map"] = widgets.Dropdown(
                options=CMAPS, value=CMAP, description="map",
                **tooltip("The colour map of the weights. viridis, cividis and greys stay readable with "
                          "every common colour-vision deficiency and in grey print; the book's Reds is "
                          "less even to a red-blind eye."))
            colour_row = [widgets.HBox([controls["colour_scale"], controls["colour_map"]])]
        self.colour_controls = tuple(controls[name] for name in ("colour_scale", "colour_map") if name in controls)
        self.controls = controls
        self.layouts = layouts or {None: figsize}  # layout -> figure size in inches
        self.plots = {}  # layout -> BlitFigure, built when first needed
        self.plot = None  # the BlitFigure shown now
        self.result = None  # what compute returned for the picture shown now
        self.caption_text = ""
        self.summary_text = ""  # the weights drawn, in words (``describe``)
        self.top = 1.0  # the colour scale's upper end shown now
        self.cmap = CMAP  # the colour map shown now
        self.last_error = None
        self._syncing = False
        self._last_activity = time.monotonic()
        self.caption = widgets.HTML()  # the values drawn, as text: drawing text in the figure is slow
        self.image = DescribedImage(format="png")
        self.summary = widgets.HTML()  # under the picture; the same text is the image's tooltip
        self.message = widgets.HTML()
        # Saved figures go to a folder of their own beside the notebook, which git ignores.
        self.save_path = widgets.Text(value=f"{SAVE_FOLDER}/{filename}", description="save as", style=WIDE)
        formats = SAVE_FORMATS if self.SHOWS_WEIGHTS else {k: v for k, v in SAVE_FORMATS.items() if k != "npz"}
        self.save_button = widgets.Button(
            description="Save", icon="download",
            tooltip="Save by the file extension, creating its folder if needed: "
                    + "; ".join(f".{fmt}: {what}" for fmt, what in formats.items()))
        self.save_button.on_click(self._on_save)
        self.refresh()  # a failure here raises: the constructor's caller sees it
        self._prepare_when_idle()
        for control in controls.values():
            control.observe(self._on_change, names="value")
        self.add_class("d2l-explorer")
        if self.SHOWS_WEIGHTS:
            self.add_class("d2l-weights")  # the browser tests ask these for a colour switch
        self.children = [*rows, *colour_row, self.caption, self.image, self.summary,
                         widgets.HBox([self.save_path, self.save_button]), self.message]

    # What a subclass defines.

    def build(self, plot):
        """Add axes and artists to ``plot.figure``; register those that change."""
        raise NotImplementedError

    def compute(self, state):
        """Control values -> a dict with "weights", "caption" and what ``draw`` needs."""
        raise NotImplementedError

    def draw(self, result):
        """Move the registered artists to show ``result``."""
        raise NotImplementedError

    def sync_controls(self, owner):
        """Adjust other controls after ``owner`` changed (none by default)."""

    def describe(self, result):
        """The weights of ``result`` in words, for a screen reader (``plotting.describe_weights``).

        An explorer may override it to name its panels or tokens; the wording
        stays the one function's.
        """
        return describe_weights(result["weights"], result.get("mask"))

    def recipe(self, result):
        """A ``Recipe`` that rebuilds ``result["weights"]``; None: Save writes no ``.npz``."""
        return None

    # The machinery.

    @property
    def figure(self):
        """The matplotlib figure shown now."""
        return self.plot.figure

    @property
    def state(self):
        """The control values, name -> value."""
        return {name: control.value for name, control in self.controls.items()}

    def __repr__(self):
        values = ", ".join(f"{name}={self.controls[name].value!r}" for name in self.repr_controls)
        return f"{type(self).__name__}({values})"

    def plot_for(self, layout):
        """The BlitFigure of ``layout``, built now if it is not yet."""
        if layout not in self.plots:
            plot = BlitFigure(self.layouts[layout], layout)
            self.build(plot)
            self.plots[layout] = plot
        return self.plots[layout]

    def prepare(self):
        """Build every layout not shown yet and draw its background now, so that none
        is drawn in full when first shown. In a Jupyter kernel this happens by itself,
        in idle time."""
        for layout in self.layouts:
            if layout not in self.plots:
                self.plot_for(layout).prepare()
        self.add_class(READY_CLASS)

    def _prepare_when_idle(self):
        """Build and draw the layouts not shown yet while the kernel is idle, so that a
        layout shown for the first time draws nothing in full.

        Idle means that no cell ran and no control of this explorer moved for
        ``IDLE_DELAY`` seconds: a notebook run from top to bottom (nbval,
        nbconvert) never waits for this work. It runs between the kernel's
        messages, one layout per turn of its event loop, so a message arriving
        meanwhile waits for one layout at most. Without a running event loop
        (a script), a layout is built when it is first shown.
        """
        pending = [layout for layout in self.layouts if layout not in self.plots]
        if not pending:
            self.add_class(READY_CLASS)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        shell = get_ipython()  # None outside IPython
        self._last_activity = time.monotonic()

        def note_activity(*args):
            self._last_activity = time.monotonic()

        def prepare_next():
            quiet = time.monotonic() - max(self._last_activity, _last_change_anywhere[0])
            if quiet < IDLE_DELAY:
                loop.call_later(IDLE_DELAY - quiet, prepare_next)
                return
            layout = pending.pop(0)
            try:
                self.plot_for(layout).prepare()
            except Exception:  # not lost: showing this layout raises it again, in the explorer
                pass
            if pending:
                loop.call_later(IDLE_STEP, prepare_next)
                return
            self.add_class(READY_CLASS)
            if shell is not None:
                for event in ("pre_execute", "post_execute"):
                    shell.events.unregister(event, note_activity)

        if shell is not None:
            for event in ("pre_execute", "post_execute"):  # a cell starts, a cell ends
                shell.events.register(event, note_activity)
        loop.call_later(IDLE_DELAY, prepare_next)

    def refresh(self):
        """Compute from the controls, draw, and put the new picture in ``image``."""
        state = self.state
        with one_thread():
            result = self.compute(state)
        plot = self.plot_for(result.get("layout"))
        self.draw(result)
        plot.check_unchanged()
        caption = result["caption"]
        top, cmap = 1.0, state.get("colour_map", CMAP)
        if state.get("colour_scale") == "fit":
            top = scale_top(result["weights"])
            caption += f"; colours 0 to {top:g}"
        summary = self.describe(result)
        png = plot.render(top, cmap)
        with self.image.hold_sync():  # the picture and its description reach the browser in one message
            self.image.value = png
            if summary != self.summary_text:
                self.image.tooltip = summary  # the img's title: its description for a screen reader
        if plot is not self.plot:  # a new figure: show it at its size in CSS pixels (the PNG has
            width, height = plot.css_size  # PIXEL_RATIO times as many)
            self.image.layout.width, self.image.layout.height = f"{width}px", f"{height}px"
        self.plot, self.result, self.caption_text, self.top, self.cmap = plot, result, caption, top, cmap
        self.caption.value = f"<b>{html.escape(caption)}</b>"
        if summary != self.summary_text:
            self.summary_text = summary
            self.summary.value = (f'<div style="font-size:small; line-height:1.4" aria-live="polite">'
                                  f'{html.escape(summary)}</div>')

    def _repr_mimebundle_(self, **kwargs):
        """The widget view, and beside it a static PNG of the picture shown now, with
        its caption and the line "run the cell to move the sliders" (``static_png``).

        Jupyter with a kernel shows the widget; where no widget can be drawn (GitHub,
        an export without the widget state) the PNG shows. The text form stays the
        short repr that nbval compares; nbval skips PNG images.
        """
        data = super()._repr_mimebundle_(**kwargs)
        if data is None:  # a closed widget
            return None
        png = self.static_png()
        data["image/png"] = base64.b64encode(png).decode("ascii")
        width = struct.unpack(">I", png[16:20])[0] // PIXEL_RATIO  # IHDR: width in pixels
        return data, {"image/png": {"width": width}}

    def static_png(self):
        """PNG bytes of the picture shown now, its caption above and ``HINT`` below,
        at PIXEL_RATIO times its CSS size."""
        self.plot.render(self.top, self.cmap)  # the canvas may hold a saved figure's pixels
        picture = np.asarray(self.plot.canvas.buffer_rgba())  # (height, width, 4)
        width = picture.shape[1]
        caption = _text_rows(width, self.caption_text, weight="bold")
        hint = _text_rows(width, HINT, style="italic", color="#555555")
        return png_bytes(np.concatenate([caption, picture, hint]))

    def save(self, path, dpi=150):
        """Save the current view to ``path``, creating the folder if needed; returns the list of
        full paths written.

        By the extension: ``.png`` or ``.svg``, the picture with its caption;
        ``.npz`` (an explorer with a ``recipe``), the weights drawn and the
        inputs that rebuild them, and beside it a ``.py`` snippet of the same
        name that recomputes them with d2lmini, prints how far they are from
        the saved ones, and draws them. An existing file is replaced only by
        one of its own kind (a PNG by a PNG, a snippet by a snippet).
        """
        path = Path(path).expanduser()
        fmt = path.suffix.lower().lstrip(".")
        recipe = self.recipe(self.result) if fmt == "npz" else None
        if fmt not in ("png", "svg", "npz") or (fmt == "npz" and recipe is None):
            wanted = ".png, .svg or .npz" if self.SHOWS_WEIGHTS else ".png or .svg"
            raise ValueError(f"path must end in {wanted}, got {str(path)!r}")
        if fmt == "npz":
            return save_npz(path, recipe, self.result["weights"], type(self).__name__)
        return save_picture(self.plot, path, fmt, dpi, self.caption_text)

    def _on_change(self, change):
        self._last_activity = _last_change_anywhere[0] = time.monotonic()  # postpones all idle-time work
        if self._syncing:  # a control adjusted by sync_controls: one redraw follows
            return
        self._syncing = True
        try:
            self.sync_controls(change["owner"])
            self.refresh()
        except Exception as error:  # shown in the explorer and kept, never swallowed
            self._show_error(error)
        else:
            self.last_error = None
            self.message.value = ""
        finally:
            self._syncing = False

    def _on_save(self, button):
        try:
            paths = self.save(self.save_path.value)
        except Exception as error:  # shown in the explorer and kept, never swallowed
            self._show_error(error)
        else:
            self.message.value = f"saved {html.escape(' and '.join(str(path) for path in paths))}"

    def _show_error(self, error):
        self.last_error = error
        self.message.value = error_html(error)
