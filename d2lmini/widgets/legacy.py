"""The explorer shell before declarations: a subclass of ``Explorer`` with ``build``, ``compute``
and ``draw``. The explorers not yet declared (``declaration``) still use it; each moves to
``explorer.Explorer`` in turn, and this module then goes.
"""

import asyncio
import base64
import html
import struct
import time
from pathlib import Path

import ipywidgets as widgets
import numpy as np
from IPython import get_ipython

from ..plotting import CMAP, CMAPS, describe_weights
from ._compat import MimeBundleDisplay, tooltip
from .controls import WIDE
from .explorer import (  # noqa: F401
    HINT,
    IDLE_DELAY,
    IDLE_STEP,
    READY_CLASS,
    DescribedImage,
    _last_change_anywhere,
    _text_rows,
    error_html,
    one_thread,
)
from .export import SAVE_FOLDER, SAVE_FORMATS, save_npz, save_picture
from .figure import PIXEL_RATIO, BlitFigure, scale_top
from .png import png_bytes


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
