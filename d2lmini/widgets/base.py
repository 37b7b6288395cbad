"""The explorer framework: controls in, a redrawn picture of one kept figure out.

An explorer is an ``ipywidgets.VBox``: its controls, a caption with the values
drawn, the picture (an ``ipywidgets.Image`` of PNG bytes), a Save row and a
message line. A subclass declares four things and nothing else:

* its **controls**, passed to ``Explorer.__init__`` (the helpers below build
  them and check each starting value against the control's own bounds);
* ``build(plot)``: the axes and artists of ``plot.figure``; every artist that
  changes is registered with ``plot.animate(artist)`` (``plot.heatmap`` does it);
* ``compute(state)``: the control values (a dict) -> a dict with ``"weights"``,
  ``"caption"`` and whatever ``draw`` needs; it draws nothing;
* ``draw(result)``: moves the registered artists.

The base does the rest, as matplotlib's "Faster rendering by using blitting"
tutorial does with its ``BlitManager`` (``BlitFigure`` below): the figure is
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
  screens; only the rows that can change are compressed again (``BandedPNG``);
* masked cells are left out of a heatmap and show a grey hatched background,
  named in a legend, so a masked key never looks like a weight of 0;
* the display data carries a static PNG of the first picture beside the widget
  view, for renderers without widgets (GitHub, an export without widget state);
* Save writes into ``figures/`` beside the notebook (git ignores it) and says
  the full paths: PNG or SVG of the picture, or (``.npz``) the weights with
  the inputs that rebuild them and, beside it, a Python snippet of plain
  ``d2lmini`` code that recomputes and draws them (``recipe``).
"""

import asyncio
import base64
import contextlib
import html
import math
import struct
import textwrap
import time
import traceback
import zlib
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import torch
from IPython import get_ipython
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.ticker import MaxNLocator
from traitlets import Unicode

from ..plotting import CMAP, CMAPS, MASKED_CELLS, describe_weights
from ._compat import MimeBundleDisplay, tooltip

DPI = 80  # CSS pixels per inch: the size an explorer's picture is shown at
SAVE_FOLDER = "figures"  # where Save writes by default, relative to the notebook: git ignores it
PIXEL_RATIO = 2  # drawn at twice that, so a HiDPI screen gets every pixel it can show
HINT = "run the cell to move the sliders"  # under the static picture of a notebook not run
WIDE = {"description_width": "initial"}

# Upper ends for the "fit to weights" colour scale. Rounding the largest weight
# up to one of these keeps the colorbar's ticks readable, and lets a kept
# picture of the colorbar be reused.
SCALE_TOPS = (1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001)

# Seconds of quiet (no cell run, no control moved) before an explorer prepares its
# other layouts in the kernel's idle time, and between two layouts prepared.
IDLE_DELAY, IDLE_STEP = 0.5, 0.1
# When a control of any explorer last moved: one explorer's idle-time work waits while the
# learner uses another (a layout drawn meanwhile held up that explorer's next picture by 0.3 s).
_last_change_anywhere = [float("-inf")]
READY_CLASS = "d2l-ready"  # an explorer's CSS class once every layout is drawn (the browser tests wait for it)


def scale_top(weights):
    """The smallest of ``SCALE_TOPS`` at or above the largest weight (1 when all are 0)."""
    largest = float(weights.max()) if weights.numel() else 0.0
    if largest <= 0:
        return 1.0
    # Float32 stores 0.1 as 0.10000000149: uniform weights over 10 keys must still get 0.1.
    return min((top for top in SCALE_TOPS if top >= largest * (1 - 1e-6)), default=1.0)


# PNG encoding ----------------------------------------------------------------------------------

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_ADLER_BASE = 65521


def _png_chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def _png_rows(rgba):
    """The filtered PNG rows of an (height, width, 4) uint8 array, RGBA as it is.

    Each row is a filter byte, then the row's bytes: the first row as they are
    (filter 0, "none"), every other row minus the row above it, byte by byte
    (filter 2, "up"), which turns whatever repeats from row to row, a plot's
    flat colours and straight lines, into zeros. Keeping the alpha byte costs
    little to compress and spares a slow copy that would drop it.
    """
    height, width, _ = rgba.shape
    flat = rgba.reshape(height, 4 * width)
    rows = np.empty((height, 1 + 4 * width), dtype=np.uint8)
    if height:
        rows[0, 0], rows[0, 1:] = 0, flat[0]
        rows[1:, 0] = 2
        np.subtract(flat[1:], flat[:-1], out=rows[1:, 1:])  # modulo 256, as PNG wants
    return rows


def _png(width, height, zlib_stream):
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA, no interlace
    return (PNG_SIGNATURE + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", zlib_stream)
            + _png_chunk(b"IEND", b""))


def png_bytes(rgba):
    """PNG bytes of an (height, width, 4) uint8 array.

    Written by hand because it is the largest cost of an update otherwise:
    Pillow tries five row filters on every row, while one filter ("up") with
    zlib level 1 is several times faster, and plots compress well with it.
    """
    height, width, _ = rgba.shape
    return _png(width, height, zlib.compress(np.ascontiguousarray(_png_rows(rgba)), 1))


def _adler32_combine(first, second, second_length):
    """The Adler-32 of two pieces of data joined, from the Adler-32 of each (zlib's
    ``adler32_combine``, which Python's zlib does not expose)."""
    remainder = second_length % _ADLER_BASE
    low = ((first & 0xFFFF) + (second & 0xFFFF) + _ADLER_BASE - 1) % _ADLER_BASE
    high = (remainder * (first & 0xFFFF) + (first >> 16) + (second >> 16) + _ADLER_BASE - remainder) % _ADLER_BASE
    return low | high << 16


class _Deflated:
    """Rows compressed on their own: raw deflate ending on a byte boundary (a sync
    flush, no final block), with the Adler-32 and length of the rows."""

    def __init__(self, rows):
        data = rows.data if rows.size else b""
        compressor = zlib.compressobj(1, zlib.DEFLATED, -15)
        self.bytes = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
        self.adler, self.length = zlib.adler32(data), rows.size


class BandedPNG:
    """PNG encoding that compresses again only the band of rows that can change.

    The rows above and below ``rows`` (a ``slice``) are compressed once, from
    ``kept`` (the picture they never leave), and reused: a deflate stream may be
    cut into independently compressed pieces, each ending on a byte boundary,
    and the zlib checksum of the whole is combined from the pieces' checksums.
    Each piece's first row is filtered on its own (filter "none"), so that no
    piece depends on the rows of another.
    """

    def __init__(self, kept, rows):
        self.height, self.width, _ = kept.shape
        self.rows = rows
        self.above = _Deflated(_png_rows(kept[:rows.start]))
        self.below = _Deflated(_png_rows(kept[rows.stop:]))

    def encode(self, rgba):
        """PNG bytes of ``rgba``, whose rows outside the band equal ``kept``."""
        band = _Deflated(_png_rows(rgba[self.rows]))
        adler = self.above.adler
        for piece in (band, self.below):
            adler = _adler32_combine(adler, piece.adler, piece.length)
        stream = b"".join([b"\x78\x01", self.above.bytes, band.bytes, self.below.bytes,
                           b"\x03\x00",  # an empty final block ends the deflate stream
                           struct.pack(">I", adler)])
        return _png(self.width, self.height, stream)


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


def masked_weights(weights, mask):
    """``weights`` (a tensor) as a NumPy masked array that hides the cells where
    ``mask`` (a boolean tensor of the same shape, True = may attend) is False."""
    return np.ma.masked_array(weights.numpy(), ~mask.numpy())


class CellImage(AxesImage):
    """An image that fills its axes, drawn by repeating each cell's colour over the canvas pixels it covers.

    Matplotlib resamples an image and colour-maps it at the resolution of the
    canvas; for the positional-encoding panels at 160 dpi that was most of an
    update (about 8 ms for the encoding alone). Colour-mapping the cells and
    repeating each over its pixels with ``numpy.repeat`` draws the same picture
    (a cell edge may move by one pixel) in a fraction of that. The data is
    either values (rows, columns), colour-mapped through ``cmap`` and
    ``norm``, or 8-bit RGBA (rows, columns, 4), drawn as it is. The extent must
    equal the axes' limits, with row 0 at the top.
    """

    _counts = None  # ((canvas width, canvas height, rows, columns), canvas pixels per row, per column)

    def make_image(self, renderer, magnification=1.0, unsampled=False):
        x0, y0, x1, y1 = self.axes.bbox.extents  # display pixels, y upwards
        left, right = math.floor(x0 + 0.5), math.floor(x1 + 0.5)  # rounded as matplotlib rounds images
        bottom, top = math.ceil(y0 - 0.5), math.ceil(y1 - 0.5)
        rows, columns = self._A.shape[:2]
        key = (right - left, top - bottom, rows, columns)
        if self._counts is None or self._counts[0] != key:
            width, height = key[:2]
            column_of = ((np.arange(width) + 0.5) * columns // width).astype(int)  # (width,): each pixel's cell
            row_of = ((np.arange(height) + 0.5) * rows // height).astype(int)  # (height,)
            self._counts = (key, np.bincount(row_of, minlength=rows), np.bincount(column_of, minlength=columns))
        _, row_counts, column_counts = self._counts
        colours = self._A if self._A.ndim == 3 else self.to_rgba(self._A, bytes=True)  # (rows, columns, 4)
        flipped = colours[::-1]  # the renderer fills bottom up
        return flipped.repeat(row_counts[::-1], axis=0).repeat(column_counts, axis=1), left, bottom, None


# Controls: each helper checks its starting value against its own bounds -------------------------
# ``name`` is the argument the learner passed, so that a mistake reads in their terms.

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


# The figure ------------------------------------------------------------------------------------

def _draws_something(artist):
    # Drawing skips an invisible artist or an empty text without marking it fresh:
    # they stay stale, harmlessly, until they are shown.
    return artist.get_visible() and not (isinstance(artist, Text) and not artist.get_text())


class BlitFigure:
    """A figure drawn in full once; afterwards only its registered artists are redrawn.

    The ``BlitManager`` of matplotlib's blitting tutorial, on an Agg canvas with
    no window. ``animate(artist)`` registers an artist and sets
    ``animated=True``, which keeps it out of full draws. The first ``render``
    draws everything else and keeps it as the background; every ``render``
    pastes a kept background back, draws the registered artists over it and
    returns PNG bytes.

    The colorbar lies in between: it changes with the colour scale's upper end,
    rarely. The background is drawn without it, and for each upper end a copy
    with the colorbar drawn over it is kept, so a new end costs one colorbar,
    not a full draw. Every heatmap and the colorbar share ``norm``.

    The figure is drawn at ``PIXEL_RATIO`` times ``DPI`` and shown at ``DPI``
    (``css_size``), so a HiDPI screen gets full resolution. Its PNG is encoded
    by ``BandedPNG``: only the band of rows that the registered artists cover
    is compressed again on each render.
    """

    def __init__(self, figsize, layout=None):
        self.figure = Figure(figsize=figsize, dpi=DPI * PIXEL_RATIO, layout="constrained")
        self.canvas = FigureCanvasAgg(self.figure)
        self.norm = Normalize(0, 1)
        self.layout = layout  # which of its explorer's figures this is (None: the only one)
        self.artists = []  # registered, in drawing order (zorder)
        self.colorbar_axes = None
        self.full_draws = 0  # how many times the background was drawn: once, unless saved
        self._background = None  # pixels of everything but the artists and the colorbar
        self.cmap = CMAP  # the colour map of every artist that shares ``norm``, and of the colorbar
        self.colorbar_mappable = None
        self._with_colorbar = {}  # (upper end of the colour scale, colour map) -> background and colorbar
        self._encoders = {}  # (upper end of the colour scale, colour map) -> its BandedPNG
        self.masked_cells = False  # whether a heatmap hatches its masked cells (then: a legend entry)

    def animate(self, artist):
        """Register ``artist`` to be redrawn on every render; returns it."""
        if artist in self.artists:
            raise ValueError(f"{artist} is registered twice: register each artist once")
        if artist.figure is not self.figure:
            raise ValueError(f"{artist} belongs to another figure: register it with that figure's plot")
        if not artist.get_animated():
            self._forget_backgrounds()  # a kept background may show it
            artist.set_animated(True)
        self._encoders.clear()  # the band of rows that change may grow
        self.artists.append(artist)
        self.artists.sort(key=lambda a: a.get_zorder())  # stable: equal zorders keep their order
        return artist

    @property
    def css_size(self):
        """(width, height) of the picture as shown, in CSS pixels."""
        width, height = self.figure.get_size_inches() * DPI
        return round(width), round(height)

    def heatmap(self, ax, num_queries, num_keys, xlabel="Keys", ylabel="Queries", masked=False):
        """A registered (queries, keys) heatmap coloured by ``norm``, query 0 at the top.

        Cell (i, j) is centred on (j, i), as with ``imshow``. It is a QuadMesh
        because that draws these small grids several times faster than an image.
        With ``masked=True`` the cells of a masked array (``masked_weights``)
        are left out, and a grey hatched background, drawn once with the axes,
        shows through them: a masked key never looks like a weight of 0.
        """
        mesh = ax.pcolormesh(np.arange(num_keys + 1) - 0.5, np.arange(num_queries + 1) - 0.5,
                             np.zeros((num_queries, num_keys)), cmap=self.cmap, norm=self.norm)
        if masked:
            ax.patch.set(**MASKED_CELLS)
            self.masked_cells = True
        ax.set(xlim=(-0.5, num_keys - 0.5), ylim=(num_queries - 0.5, -0.5), xlabel=xlabel, ylabel=ylabel)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        return self.animate(mesh)

    def colorbar(self, axes):
        """One colorbar for ``axes``, true for all of them: every heatmap shares ``norm``.

        With a heatmap that hatches masked cells, a legend entry under the
        colorbar says what the hatching means.
        """
        self.colorbar_mappable = ScalarMappable(self.norm, self.cmap)
        colorbar = self.figure.colorbar(self.colorbar_mappable, ax=axes, shrink=0.9, label="attention weight")
        self.colorbar_axes = colorbar.ax
        if self.masked_cells:
            swatch = Patch(**MASKED_CELLS, label="masked")
            self.figure.legend(handles=[swatch], loc="outside lower right", fontsize="small",
                               handlelength=1.4, handleheight=1.4, frameon=False)

    def render(self, top=1.0, cmap=CMAP):
        """PNG bytes of the figure with the colour scale ending at ``top``, in colour map ``cmap``."""
        self._paste_background(top, cmap)
        rgba = np.asarray(self.canvas.buffer_rgba())  # (height, width, 4), a view of the canvas
        key = (top, cmap)
        if key not in self._encoders:  # from the kept picture, now on the canvas
            self._encoders[key] = BandedPNG(rgba, self._changing_rows())
        for artist in self.artists:
            self.figure.draw_artist(artist)
        return self._encoders[key].encode(rgba)

    def _use_cmap(self, cmap):
        """Give ``cmap`` to every registered artist coloured through ``norm``, and to the colorbar."""
        if cmap == self.cmap:
            return
        for artist in self.artists:
            if getattr(artist, "norm", None) is self.norm:
                artist.set_cmap(cmap)
        if self.colorbar_mappable is not None:
            self.colorbar_mappable.set_cmap(cmap)  # the colorbar follows its mappable
        self.cmap = cmap

    def _changing_rows(self):
        """The rows of the canvas that the registered artists may draw on, as a slice:
        their clipping boxes (the axes), or their extents where they are not clipped."""
        renderer = self.canvas.get_renderer()
        height = self.canvas.get_width_height(physical=True)[1]
        boxes = [artist.get_clip_box() if artist.get_clip_on() and artist.get_clip_box() is not None
                 else artist.get_window_extent(renderer) for artist in self.artists]
        if not boxes:
            return slice(0, 0)
        margin = 2 * PIXEL_RATIO  # antialiased edges
        top = max(box.y1 for box in boxes)  # display coordinates: y grows upwards
        bottom = min(box.y0 for box in boxes)
        return slice(max(0, math.floor(height - top) - margin), min(height, math.ceil(height - bottom) + margin))

    def prepare(self):
        """Draw and keep what a first render needs, if it is not kept yet: the
        background, and the colorbar on the default 0 to 1 scale and colour map."""
        if (1.0, CMAP) not in self._with_colorbar:
            self._paste_background(1.0, CMAP)

    def _paste_background(self, top, cmap):
        """Put the background and the colorbar for ``top`` and ``cmap`` on the canvas, drawing
        what is not kept yet: the background once, the colorbar once per (``top``, ``cmap``)."""
        self.norm.vmax = top  # recolours the heatmaps and the colorbar
        self._use_cmap(cmap)
        if self._background is None:
            self._draw_background()
        key = (top, cmap)
        if key in self._with_colorbar:
            self.canvas.restore_region(self._with_colorbar[key])
            return
        self.canvas.restore_region(self._background)
        if self.colorbar_axes is not None:
            self.figure.draw_artist(self.colorbar_axes)
        self._with_colorbar[key] = self.canvas.copy_from_bbox(self.figure.bbox)

    def check_unchanged(self):
        """Raise if an artist of the axes drawn in the background has changed since: the
        background would hide the change. Moving an artist never registered does this."""
        if self._background is None:
            return
        changed = [child for ax in self.figure.axes if ax is not self.colorbar_axes
                   for child in (*ax.get_children(), ax)
                   if child.stale and not child.get_animated() and _draws_something(child)]
        if changed:
            raise RuntimeError(f"{changed[0]} changed, but it is drawn once, in the kept background: "
                               "register the artists that draw() moves with plot.animate(artist)")

    def save(self, path, fmt, dpi, caption):
        """Write the whole figure, registered artists included, with ``caption`` above it."""
        title = self.figure.text(0.5, 1.0, caption, ha="center", va="bottom")
        try:  # "tight" grows the saved area to take in the caption above the frozen layout
            self.figure.savefig(path, format=fmt, dpi=dpi, facecolor="white", bbox_inches="tight")
        finally:
            title.remove()
            self._forget_backgrounds()  # saving redrew the canvas, maybe at another dpi

    def _draw_background(self):
        registered = set(self.artists)
        strays = [child for ax in self.figure.axes for child in ax.get_children()
                  if child.get_animated() and child not in registered]
        if strays:
            raise ValueError(f"{strays[0]} is animated but not registered, so it would never be drawn: "
                             "register it with plot.animate(artist)")
        if self.full_draws == 0:
            # Lay out once, colorbar included, and keep that layout: constrained
            # layout costs more than a whole update, and the axes do not move.
            # It leaves room for the widest tick labels of any colour-scale end, so
            # that the colorbar's label fits whichever end is shown.
            # The colorbar's size, and so its ticks, change with the layout: lay out
            # again if another end has become the widest.
            top, laid_out_for = self.norm.vmax, None
            try:
                for _ in range(3):
                    widest = self._widest_colorbar_top() if self.colorbar_axes is not None else top
                    if widest == laid_out_for:
                        break
                    self.norm.vmax = laid_out_for = widest
                    self.figure.get_layout_engine().execute(self.figure)
            finally:
                self.norm.vmax = top
            self.figure.set_layout_engine("none")
        if self.colorbar_axes is not None:
            self.colorbar_axes.set_visible(False)
        try:
            self.canvas.draw()  # everything but the registered artists (and the colorbar)
        finally:
            if self.colorbar_axes is not None:
                self.colorbar_axes.set_visible(True)
        self._background = self.canvas.copy_from_bbox(self.figure.bbox)
        self.full_draws += 1

    def _widest_colorbar_top(self):
        """The end of ``SCALE_TOPS`` whose colorbar, tick labels and label, is the widest."""
        renderer = self.canvas.get_renderer()
        widths = {}
        for top in SCALE_TOPS:
            self.norm.vmax = top
            widths[top] = self.colorbar_axes.get_tightbbox(renderer).width
        return max(widths, key=widths.get)

    def _forget_backgrounds(self):
        self._background = None
        self._with_colorbar.clear()
        self._encoders.clear()


# Save as .npz: the weights, their inputs, and a snippet that rebuilds them ------------------------

SNIPPET_HEADER = "# Rebuilds attention weights saved by a d2lmini explorer"  # the first line of every snippet
SAVE_FORMATS = {
    "png": "the picture as shown, with its caption",
    "svg": "the picture as shown, with its caption, as vector graphics",
    "npz": "the weights and the inputs they come from, with a .py snippet beside it (same name) that "
           "rebuilds them with d2lmini, prints how far they are from the saved ones, and draws them",
}


class Recipe:
    """How an explorer's weights are rebuilt from saved inputs with plain ``d2lmini`` code.

    ``inputs`` (name -> tensor, array, number, bool or str) go into the
    ``.npz`` beside the weights; ``code`` is Python that reads them from
    ``saved`` (the loaded ``.npz``; ``torch``, ``math``, ``np`` and ``d2l`` are
    imported) and sets ``weights``, the tensor the explorer draws. With
    ``rebuilt=False`` (a trained model's weights, which the inputs alone cannot
    give) the code only reads the saved weights, and the snippet says so.
    ``why`` says why not. ``drawn`` is the expression drawn (``weights`` by
    default), ``titles`` name its panels (one per column of
    ``d2l.show_heatmaps``), ``draw`` is code run after it (``fig`` is the
    figure), e.g. to label the rows and columns with tokens.
    """

    def __init__(self, inputs, code, *, rebuilt=True, why="", drawn="weights", titles=None, draw=""):
        self.inputs, self.code, self.rebuilt, self.why = inputs, textwrap.dedent(code).strip(), rebuilt, why
        self.drawn, self.titles, self.draw = drawn, titles, textwrap.dedent(draw).strip()


def _as_array(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _snippet(recipe, explorer_name, npz_name):
    """The text of the .py snippet for ``recipe``, reading ``npz_name`` beside it."""
    if recipe.rebuilt:
        compare = ('difference = (weights - torch.from_numpy(saved["weights"])).abs().max().item()\n'
                   'print(f"largest difference from the saved weights: {difference:.2g}")')
        source = "recomputes them with d2lmini from the inputs saved beside them"
    else:
        compare = 'print("drawn from the saved weights: there is nothing to recompute them from")'
        source = f"cannot recompute them ({recipe.why}), so it draws the saved weights"
    titles = "" if recipe.titles is None else f", titles={list(recipe.titles)!r}"
    lines = [
        f"{SNIPPET_HEADER} ({explorer_name}): it {source}.",
        "# Written by the explorer's Save button; run it with `python` or `%run` in a notebook.",
        "import math",
        "from pathlib import Path",
        "",
        "import numpy as np",
        "import torch",
        "",
        "import d2lmini as d2l",
        "",
        f'saved = np.load(Path(__file__).with_name("{npz_name}"))',
        "",
        recipe.code,
        "",
        compare,
        "",
        "# Rows are queries, columns keys.",
        f'fig = d2l.show_heatmaps({recipe.drawn}, xlabel="Keys", ylabel="Queries"{titles})',
        *([recipe.draw] if recipe.draw else []),
        "d2l.plt.show()",
    ]
    return "\n".join(lines) + "\n"


def _check_may_write(path, looks_right, kind):
    """Refuse to replace an existing file at ``path`` unless ``looks_right(first bytes)``."""
    if path.exists():
        with open(path, "rb") as file:
            start = file.read(256)
        if not looks_right(start):
            raise FileExistsError(f"{path} exists and is not {kind}: choose another name, or move it away")


# The explorer ----------------------------------------------------------------------------------

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
            return self._save_npz(path, recipe)
        _check_may_write(path, (lambda start: start.startswith(PNG_SIGNATURE)) if fmt == "png"
                         else (lambda start: b"<svg" in start or start.startswith(b"<?xml")), f"a {fmt.upper()}")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.plot.save(path, fmt, dpi, self.caption_text)
        return [path.resolve()]

    def _save_npz(self, path, recipe):
        snippet_path = path.with_suffix(".py")
        _check_may_write(path, lambda start: start.startswith(b"PK"), "a NumPy .npz archive")
        _check_may_write(snippet_path, lambda start: start.startswith(SNIPPET_HEADER.encode()),
                         "a snippet written by Save")
        arrays = {name: _as_array(value) for name, value in recipe.inputs.items()}
        if "weights" in arrays:
            raise ValueError("a recipe's inputs must not be named 'weights': that name holds the weights drawn")
        arrays["weights"] = _as_array(self.result["weights"])
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as file:  # np.savez would add ".npz" to a name ending in ".NPZ"
            np.savez(file, **arrays)
        snippet_path.write_text(_snippet(recipe, type(self).__name__, path.name), encoding="utf-8")
        return [path.resolve(), snippet_path.resolve()]

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
