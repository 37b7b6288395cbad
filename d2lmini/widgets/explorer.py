"""The kernel's shell: an explorer's declaration turned into ipywidgets, redrawn by blitting.

``Explorer(declaration, settings)`` is an ``ipywidgets.VBox``: the controls
of the declaration (``declaration.Declaration``), a caption with the values
drawn, the picture (an ``ipywidgets.Image`` of PNG bytes), a text summary, a
Save row and a message line. Nothing is subclassed: a control moves, the shell
asks the declaration to ``adjust`` the settings and ``compute`` a result, the
view built by ``build`` moves its registered artists (``update``), and the
kept figure (``figure.BlitFigure``) pastes its background and draws them over
it, as matplotlib's "Faster rendering by using blitting" tutorial does with its
``BlitManager``. An explorer whose picture changes shape (the multi-head grid)
declares one figure per layout; the one shown first is drawn at construction,
the others ahead of time while the kernel is idle (``idle``), so that a layout shown for
the first time usually costs no more than any other change.

Nothing can be forgotten silently: registering an artist twice raises, an
artist made ``animated=True`` but never registered makes the background draw
raise, and an ``update`` that changes an unregistered artist (which the kept
background would hide) raises too. The error is shown in the explorer.

Other behaviour every explorer shares:

* the figure is a ``matplotlib.figure.Figure`` on an Agg canvas, never a
  pyplot figure, so nothing leaks into the notebook's inline output;
* the cell output is the container alone, and its text form is a short repr of
  the settings, so a notebook displaying an explorer passes strict nbval;
* an exception while updating is shown in the explorer (and kept as
  ``last_error``); the previous picture stays, and the next change redraws;
* a ``colour_scale`` control: ``"fixed"`` (0 to 1) or ``"fit"`` (0 to
  ``scale_top(weights)``), and a ``colour_map`` menu (``plotting.CMAPS``);
  a declaration whose picture is not attention weights (``shows_weights =
  False``) has neither;
* a text summary of the picture (the declaration's ``describe``) under it
  and as the image's tooltip, updated with every redraw;
* the picture is drawn at ``PIXEL_RATIO`` times its CSS size, for HiDPI
  screens; only the rows that can change are compressed again (``png.BandedPNG``);
* the display data carries a static PNG of the first picture beside the widget
  view, for renderers without widgets (GitHub, an export without widget state);
* Save writes into ``figures/`` beside the notebook (git ignores it): PNG or
  SVG of the picture, or (``.npz``) the weights with the inputs that rebuild
  them and a Python snippet that does (the declaration's ``recipe``).
"""

import base64
import contextlib
import html
import struct
import traceback
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..i18n import N_, _
from ..plotting import CMAP, CMAPS
from ._compat import DescribedImage, MimeBundleDisplay, tooltip
from .controls import WIDE, shown, widget_for
from .declaration import say
from .export import SAVE_FOLDER, SAVE_FORMATS, save_npz, save_picture
from .figure import DPI, PIXEL_RATIO, BlitFigure, scale_top
from .idle import READY_CLASS, IdlePreparation, LoopClock
from .png import png_bytes

HINT = N_("run the cell to move the sliders")  # under the static picture of a notebook not run

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


class Explorer(MimeBundleDisplay, widgets.VBox):
    """A declaration's controls, its picture redrawn by blitting, a Save row and a message line.

    ``declaration`` is a ``declaration.Declaration``; ``settings`` its
    ``Settings`` to start from (its defaults when None). ``controls`` maps
    each control's name to its widget, the colour scale's and colour map's
    too; ``settings`` reads them back as the declaration's ``Settings``;
    ``result`` is what ``compute`` returned for the picture shown now, and
    ``view`` the object that moves its artists.

    Construction builds the shell, then draws the first picture
    (``first_refresh``). A subclass whose ``show`` needs more than the shell
    passes ``refresh_now=False``, sets up what it adds (its own attributes,
    ``add_actions``, ``add_status``) and calls ``first_refresh`` at the end of
    its own ``__init__``: nothing it adds is read before it exists.
    """

    COLOUR_SCALES = ((N_("0 to 1"), "fixed"), (N_("fit to weights"), "fit"))
    clock = LoopClock()  # the idle-time work's time and timers, shared by every explorer

    def __init__(self, declaration, settings=None, *, refresh_now=True):
        super().__init__()
        self.declaration = declaration
        settings = declaration.Settings() if settings is None else settings
        self.controls = {control.name: widget_for(control, getattr(settings, control.name))
                         for control in declaration.controls}
        self._set_choices(settings)
        self.rows = [(row, self._row_box(row)) for row in declaration.arrangement()]  # (Row, its box)
        # Why a control is disabled (Declaration.inactive), said under the controls while it is.
        self.inactive_note = widgets.HTML(layout=widgets.Layout(display="none"))
        self.inactive_note.add_class("d2l-inactive")
        colour_row = self._add_colour_controls() if declaration.shows_weights else []
        self.layouts = declaration.all_layouts()  # layout -> figure size in inches
        self.views = {}  # layout -> (BlitFigure, view), built when first needed
        self.blit = None  # the BlitFigure shown now
        self.view = None  # its view, which moved its artists to ``result``
        self.result = None  # what compute returned for the picture shown now
        self.caption_text = ""
        self.summary_text = ""  # the picture in words (``describe``)
        self.top = 1.0  # the colour scale's upper end shown now
        self.cmap = CMAP  # the colour map shown now
        self.last_error = None
        self._syncing = False
        self._idle = IdlePreparation(self.clock)  # when this explorer was last used, and its layouts to draw
        self.caption = widgets.HTML()  # the values drawn, as text: drawing text in the figure is slow
        self.image = DescribedImage(format="png")
        self.summary = widgets.HTML()  # under the picture; the same text is the image's tooltip
        self.message = widgets.HTML()
        self._make_save_row()
        self._colour_row = colour_row
        self._actions = []  # after the last row's controls (add_actions)
        self._status = None  # before the caption (add_status)
        self._refreshed = False
        self._show_rows(settings)
        if refresh_now:
            self.first_refresh()

    def _row_box(self, row):
        """The box of ``row`` (a ``declaration.Row``): its label, its controls (in a grid of
        ``row.columns`` columns, or in a line) and its note."""
        label = [widgets.Label(say(row.label))] if row.label else []
        note = [widgets.HTML(f'<div style="line-height:1.3; font-size:small">{say(row.note)}</div>',
                             layout=widgets.Layout(width="300px"))] if row.note else []
        cells = [shown(self.controls[name]) for name in row.names]
        if row.columns:
            grid = widgets.GridBox(cells, layout=widgets.Layout(
                grid_template_columns=f"repeat({row.columns}, 32px)", grid_gap="2px"))
            return widgets.VBox([*label, grid, *note])
        return widgets.VBox([widgets.HBox([*label, *cells]), *note]) if note else widgets.HBox([*label, *cells])

    def _add_colour_controls(self):
        """Add the colour scale's and the colour map's controls to ``controls``; returns their row."""
        # The fixed scale compares pictures honestly; fitting it makes small
        # weights (a wide kernel, many keys) visible. The colorbar is true either way.
        self.controls["colour_scale"] = widgets.ToggleButtons(
            options=[(_(label), scale) for label, scale in self.COLOUR_SCALES], value=self.declaration.colour_scale,
            description=_("colours"))
        self.controls["colour_map"] = widgets.Dropdown(
            options=[(_(label), name) for label, name in CMAPS], value=CMAP, description=_("map"),
            **tooltip(_("The colour map of the weights. viridis, cividis and greys stay readable with "
                        "every common colour-vision deficiency and in grey print; the book's Reds is "
                        "less even to a red-blind eye.")))
        return [widgets.HBox([self.controls["colour_scale"], self.controls["colour_map"]])]

    def _make_save_row(self):
        """The path to save to (``save_path``) and the Save button (``save_button``)."""
        # Saved figures go to a folder of their own beside the notebook, which git ignores.
        self.save_path = widgets.Text(value=f"{SAVE_FOLDER}/{self.declaration.filename}", description=_("save as"),
                                      style=WIDE)
        formats = SAVE_FORMATS if self.declaration.shows_weights else {
            k: v for k, v in SAVE_FORMATS.items() if k != "npz"}
        self.save_button = widgets.Button(
            description=_("Save"), icon="download",
            tooltip=_("Save by the file extension, creating its folder if needed: ")
                    + "; ".join(f".{fmt}: {_(what)}" for fmt, what in formats.items()))
        self.save_button.on_click(self._on_save)

    def add_actions(self, *buttons):
        """Show ``buttons`` after the last row's controls (the training view's Train and Stop);
        before ``first_refresh``, which arranges the shell."""
        self._check_not_refreshed("add_actions")
        self._actions.extend(buttons)

    def add_status(self, widget):
        """Show ``widget`` before the caption, in one row (the training view's progress bar); before
        ``first_refresh``, which arranges the shell."""
        self._check_not_refreshed("add_status")
        self._status = widget

    def first_refresh(self):
        """Draw the first picture, then arrange the shell, start the idle-time preparation of the
        other layouts and follow the controls. ``__init__`` calls it unless ``refresh_now=False``."""
        self._check_not_refreshed("first_refresh")
        self._refreshed = True
        self.refresh()  # a failure here raises: the constructor's caller sees it
        self._prepare_when_idle()
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.add_class("d2l-explorer")
        if self.declaration.shows_weights:
            self.add_class("d2l-weights")  # the browser tests ask these for a colour switch
        self._arrange()

    def _check_not_refreshed(self, name):
        if self._refreshed:
            raise RuntimeError(f"{name}() comes before the first refresh, and this explorer has had it")

    def _arrange(self):
        """The shell's children: the rows (the actions after the last one), the note on inactive
        controls, the colour controls, the picture (grids beside it), Save and the message line."""
        if self._actions:
            last_row = self.rows[-1][1]
            last_row.children = (*last_row.children, *self._actions)
        caption = [self.caption] if self._status is None else [widgets.HBox([self._status, self.caption])]
        picture = [*caption, self.image, self.summary]
        beside = [box for row, box in self.rows if row.columns]  # grids sit beside the picture
        if beside:
            picture = [widgets.HBox([widgets.VBox(beside), widgets.VBox(picture)])]
        # The note only where a control can be inactive.
        controls = self.declaration.controls
        note = [self.inactive_note] if any(control.inactive_when for control in controls) else []
        self.children = [*(box for row, box in self.rows if not row.columns), *note, *self._colour_row, *picture,
                         widgets.HBox([self.save_path, self.save_button]), self.message]

    @property
    def figure(self):
        """The matplotlib figure shown now."""
        return self.blit.figure

    @property
    def weights(self):
        """The tensor drawn now."""
        return self.result.weights

    @property
    def settings(self):
        """The declaration's ``Settings``, read from the controls."""
        return self.declaration.Settings(**{control.name: self.controls[control.name].value
                                            for control in self.declaration.controls})

    def __repr__(self):
        values = ", ".join(f"{name}={self.controls[name].value!r}" for name in self.declaration.repr_controls)
        return f"{self.declaration.name}({values})"

    def view_for(self, layout):
        """The (BlitFigure, view) of ``layout``, built now if it is not yet."""
        if layout not in self.views:
            blit = BlitFigure(self.declaration.figsize_for(layout), layout)
            self.views[layout] = blit, self.declaration.build(blit)
        return self.views[layout]

    def prepare(self):
        """Build every layout not shown yet and draw its background now, so that none
        is drawn in full when first shown. In a Jupyter kernel this happens by itself,
        in idle time."""
        for layout in self.layouts:
            if layout not in self.views:
                self.view_for(layout)[0].prepare()
        self.add_class(READY_CLASS)

    def _prepare_when_idle(self):
        """Build and draw the layouts not shown yet while the kernel is idle (``idle.IdlePreparation``),
        so that a layout shown for the first time draws nothing in full."""
        self._idle.start([layout for layout in self.layouts if layout not in self.views],
                         lambda layout: self.view_for(layout)[0].prepare(), lambda: self.add_class(READY_CLASS))

    def refresh(self):
        """Compute from the settings and show the result (``show``)."""
        with one_thread():
            result = self.declaration.compute(self.settings)
        self.show(result)

    def show(self, result):
        """Move the view's artists to ``result`` and put the new picture in ``image``: the result
        ``refresh`` computed, or one made elsewhere (the training view shows each step of a run)."""
        blit, view = self.view_for(result.layout)
        view.update(result)
        blit.check_unchanged()
        caption = result.caption
        top = 1.0
        cmap = self.controls["colour_map"].value if "colour_map" in self.controls else CMAP
        if "colour_scale" in self.controls and self.controls["colour_scale"].value == "fit":
            top = scale_top(result.weights)
            caption += _("; colours 0 to {top:g}").format(top=top)
        summary = self.declaration.describe(result)
        png = blit.render(top, cmap)
        with self.image.hold_sync():  # the picture and its description reach the browser in one message
            self.image.value = png
            if summary != self.summary_text:
                self.image.tooltip = summary  # the img's title: its description for a screen reader
        if blit is not self.blit:  # a new figure: show it at its size in CSS pixels (the PNG has
            width, height = blit.css_size  # PIXEL_RATIO times as many)
            self.image.layout.width, self.image.layout.height = f"{width}px", f"{height}px"
        self.blit, self.view, self.result = blit, view, result
        self.caption_text, self.top, self.cmap = caption, top, cmap
        self.caption.value = f"<b>{html.escape(caption)}</b>"
        if summary != self.summary_text:
            self.summary_text = summary
            self.summary.value = (f'<div style="font-size:small; line-height:1.4" aria-live="polite">'
                                  f'{html.escape(summary)}</div>')

    def _set_choices(self, settings):
        """Give the controls whose options depend on other settings their options now, and their
        values in ``settings`` (new options select the first)."""
        for name, choices in self.declaration.choices(settings).items():
            control = self.controls[name]
            if isinstance(choices, dict):  # value -> label: options made from the settings
                labelled = [(say(label), value) for value, label in choices.items()]
            else:
                labelled = [(say(label), value) for label, value in self.declaration.control(name).options
                            if value in choices]
            if list(control.options) != labelled:
                control.options = labelled
                control.value = getattr(settings, name)

    def _show_rows(self, settings):
        """Show the rows whose condition holds (``Row.when``), hide the others; disable the controls
        that change nothing now (``Declaration.inactive``) and say why under the controls."""
        for row, box in self.rows:
            if row.when is not None:
                name, value = row.when
                box.layout.display = None if getattr(settings, name) == value else "none"
        inactive = self.declaration.inactive(settings)
        for control in self.declaration.controls:
            if control.inactive_when:  # only these: the training view disables its controls during a run
                self.controls[control.name].disabled = control.name in inactive
        reasons = [html.escape(say(reason)) for reason in inactive.values()]
        self.inactive_note.value = "".join(f'<div style="font-size:small">{reason}</div>' for reason in reasons)
        self.inactive_note.layout.display = None if reasons else "none"

    def _repr_mimebundle_(self, **kwargs):
        """The widget view, and beside it a static PNG of the picture shown now, with
        its caption and the line "run the cell to move the sliders", or the
        declaration's own ``static_hint`` (``static_png``).

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
        """PNG bytes of the picture shown now, its caption above and its hint below (the
        declaration's ``static_hint``, or ``HINT``), at PIXEL_RATIO times its CSS size."""
        self.blit.render(self.top, self.cmap)  # the canvas may hold a saved figure's pixels
        picture = np.asarray(self.blit.canvas.buffer_rgba())  # (height, width, 4)
        width = picture.shape[1]
        caption = _text_rows(width, self.caption_text, weight="bold")
        hint = _text_rows(width, _(self.declaration.static_hint or HINT), style="italic", color="#555555")
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
        recipe = self.declaration.recipe(self.result) if fmt == "npz" else None
        if fmt == "npz" and recipe is None and self.declaration.shows_weights:  # Save offers .npz to every such one
            raise ValueError(f"path: {self.declaration.name} saves no .npz, as its declaration has no recipe; "
                             f"use .png or .svg, got {str(path)!r}")
        if fmt not in ("png", "svg", "npz") or (fmt == "npz" and recipe is None):
            wanted = ".png, .svg or .npz" if self.declaration.shows_weights else ".png or .svg"
            raise ValueError(f"path must end in {wanted}, got {str(path)!r}")
        if fmt == "npz":
            return save_npz(path, recipe, self.result.weights, self.declaration.name)
        return save_picture(self.blit, path, fmt, dpi, self.caption_text)

    def _on_change(self, change):
        self._idle.note_change()  # postpones all idle-time work
        if self._syncing:  # a control set by the declaration's adjust: one redraw follows
            return
        self._syncing = True
        try:
            owner = change["owner"]
            changed = next((name for name, control in self.controls.items() if control is owner), None)
            if changed in {control.name for control in self.declaration.controls}:
                self._adjust(changed)
            self.refresh()
        except Exception as error:  # shown in the explorer and kept, never swallowed
            self._show_error(error)
        else:
            self.last_error = None
            self.message.value = ""
        finally:
            self._syncing = False

    def _adjust(self, changed):
        """Let the declaration set other controls after ``changed`` moved (``adjust``, ``choices``)."""
        settings = self.declaration.adjust(self.settings, changed)
        self._set_choices(settings)
        for control in self.declaration.controls:
            value = getattr(settings, control.name)
            if self.controls[control.name].value != value:
                self.controls[control.name].value = value
        self._show_rows(settings)

    def _on_save(self, button):
        try:
            paths = self.save(self.save_path.value)
        except Exception as error:  # shown in the explorer and kept, never swallowed
            self._show_error(error)
        else:
            self.message.value = html.escape(_("saved {paths}").format(
                paths=_(" and ").join(str(path) for path in paths)))

    def _show_error(self, error):
        self.last_error = error
        self.message.value = error_html(error)
