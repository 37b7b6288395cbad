"""The kept figure an explorer draws on, and what draws fast on it.

``BlitFigure`` is the ``BlitManager`` of matplotlib's "Faster rendering by
using blitting" tutorial, on an Agg canvas with no window: a background drawn
once, registered artists redrawn over it, a colorbar kept per colour-scale end
and colour map, and PNG bytes out (``png.BandedPNG``). ``CellImage`` draws a
grid of cells by repeating colours instead of resampling. Masked cells:
``masked_weights`` leaves them out of a heatmap, and
``BlitFigure.heatmap(..., masked=True)`` hatches the background that shows
through them, named in a legend. ``scale_top`` rounds the largest weight up to
an end of the colour scale (``SCALE_TOPS``).
"""

import math

import numpy as np
from matplotlib.artist import allow_rasterization
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.image import AxesImage, PcolorImage
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.ticker import MaxNLocator

from ..i18n import _
from ..plotting import CMAP, KEYS, MASKED_CELLS, QUERIES
from .png import BandedPNG

DPI = 80  # CSS pixels per inch: the size an explorer's picture is shown at
PIXEL_RATIO = 2  # drawn at twice that, so a HiDPI screen gets every pixel it can show

# Upper ends for the "fit to weights" colour scale. Rounding the largest weight
# up to one of these keeps the colorbar's ticks readable, and lets a kept
# picture of the colorbar be reused.
SCALE_TOPS = (1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001)


def scale_top(weights):
    """The smallest of ``SCALE_TOPS`` at or above the largest weight (1 when all are 0)."""
    largest = float(weights.max()) if weights.numel() else 0.0
    if largest <= 0:
        return 1.0
    # Float32 stores 0.1 as 0.10000000149: uniform weights over 10 keys must still get 0.1.
    return min((top for top in SCALE_TOPS if top >= largest * (1 - 1e-6)), default=1.0)


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

    def edges(self):
        """(column edges left to right, row edges top to bottom) in whole display pixels (y upwards):
        its axes' box rounded as matplotlib rounds images, and each cell over the pixels whose centres
        fall in it. ``draw`` fills them; the web page paints them (``page``)."""
        x0, y0, x1, y1 = self.axes.bbox.extents  # display pixels, y upwards
        left, right = math.floor(x0 + 0.5), math.floor(x1 + 0.5)
        bottom, top = math.ceil(y0 - 0.5), math.ceil(y1 - 0.5)
        rows, columns = self.get_array().shape[:2]
        return left + _starts(right - left, columns), top - _starts(top - bottom, rows)

    @allow_rasterization
    def draw(self, renderer):
        """Hand the renderer the cells' colours repeated over their pixels, clipped as any artist is."""
        cells = self.get_array()
        if not self.get_visible() or cells.size == 0:
            self.stale = False
            return
        x_edges, y_edges = self.edges()
        colours = cells if cells.ndim == 3 else self.to_rgba(cells, bytes=True)  # (rows, columns, 4)
        flipped = colours[::-1]  # the renderer fills bottom up
        image = flipped.repeat(-np.diff(y_edges)[::-1], axis=0).repeat(np.diff(x_edges), axis=1)
        gc = renderer.new_gc()
        if self.get_clip_on():
            gc.set_clip_rectangle(self.get_clip_box())
            gc.set_clip_path(self.get_clip_path())
        gc.set_alpha(1.0 if self.get_alpha() is None else self.get_alpha())
        gc.set_url(self.get_url())
        gc.set_gid(self.get_gid())
        renderer.draw_image(gc, x_edges[0], y_edges[-1], image)
        gc.restore()
        self.stale = False


def _starts(pixels, cells):
    """Where each of ``cells`` equal cells over ``pixels`` pixels starts, and where the last ends
    (cells + 1 integers, 0 to ``pixels``): pixel p belongs to the cell its centre p + 0.5 falls in."""
    c = np.arange(cells + 1)
    return -((cells - 2 * c * pixels) // (2 * cells))  # ceil(c · pixels / cells - 1/2), in integers


class GridImage(PcolorImage):
    """matplotlib's ``PcolorImage`` (an image on a rectilinear grid) that tells its cell edges
    (``get_edges``), which matplotlib keeps but offers no getter for: the web page paints the cells
    over them (``page_artists``)."""

    def set_data(self, x, y, A):
        super().set_data(x, y, A)
        rows, columns = self.get_array().shape[:2]
        x = np.arange(columns + 1.0) if x is None else np.array(x, float).ravel()
        y = np.arange(rows + 1.0) if y is None else np.array(y, float).ravel()
        # Increasing, as PcolorImage stores them (it flips its array with them)
        self._edges = (x[::-1] if x[-1] < x[0] else x, y[::-1] if y[-1] < y[0] else y)

    def get_edges(self):
        """(column edges, row edges) in data coordinates, each increasing."""
        return self._edges


BACKGROUND = "background"  # BlitFigure.kept's key of the background without the colorbar


class Kept:
    """What a ``BlitFigure`` keeps for one end of the colour scale and colour map: the background's
    pixels with the colorbar, and the encoder of renders from them (None until a render makes it)."""

    def __init__(self, pixels):
        self.pixels, self.encoder = pixels, None


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
        self.cmap = CMAP  # the colour map of every artist that shares ``norm``, and of the colorbar
        self.colorbar_mappable = None
        # What is drawn once and kept, in one place, forgotten together (``forget``): BACKGROUND -> the
        # pixels of everything but the artists and the colorbar; (upper end of the colour scale, colour
        # map) -> Kept, those pixels with the colorbar and the BandedPNG that encodes renders from them.
        self.kept = {}
        self.masked_cells = False  # whether a heatmap hatches its masked cells (then: a legend entry)

    def animate(self, artist):
        """Register ``artist`` to be redrawn on every render; returns it."""
        if artist in self.artists:
            raise ValueError(f"{artist} is registered twice: register each artist once")
        if artist.figure is not self.figure:
            raise ValueError(f"{artist} belongs to another figure: register it with that figure's blit")
        # A kept background may show an artist not animated yet; with one already animated, only
        # the band of rows that change may grow.
        self.forget(pictures=not artist.get_animated())
        artist.set_animated(True)
        self.artists.append(artist)
        self.artists.sort(key=lambda a: a.get_zorder())  # stable: equal zorders keep their order
        return artist

    @property
    def css_size(self):
        """(width, height) of the picture as shown, in CSS pixels."""
        width, height = self.figure.get_size_inches() * DPI
        return round(width), round(height)

    def heatmap(self, ax, num_queries, num_keys, xlabel=KEYS, ylabel=QUERIES, masked=False):
        """A registered (queries, keys) heatmap coloured by ``norm``, query 0 at the top.

        Cell (i, j) is centred on (j, i), as with ``imshow``. It is a QuadMesh
        because that draws these small grids several times faster than an image.
        With ``masked=True`` the cells of a masked array (``masked_weights``)
        are left out, and a grey hatched background, drawn once with the axes,
        shows through them: a masked key never looks like a weight of 0. The axes' labels are
        said in the learner's language.
        """
        mesh = ax.pcolormesh(np.arange(num_keys + 1) - 0.5, np.arange(num_queries + 1) - 0.5,
                             np.zeros((num_queries, num_keys)), cmap=self.cmap, norm=self.norm)
        if masked:
            ax.patch.set(**MASKED_CELLS)
            self.masked_cells = True
        ax.set(xlim=(-0.5, num_keys - 0.5), ylim=(num_queries - 0.5, -0.5), xlabel=_(xlabel) if xlabel else "",
               ylabel=_(ylabel) if ylabel else "")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        return self.animate(mesh)

    def colorbar(self, axes):
        """One colorbar for ``axes``, true for all of them: every heatmap shares ``norm``.

        With a heatmap that hatches masked cells, a legend entry under the
        colorbar says what the hatching means.
        """
        self.colorbar_mappable = ScalarMappable(self.norm, self.cmap)
        colorbar = self.figure.colorbar(self.colorbar_mappable, ax=axes, shrink=0.9, label=_("attention weight"))
        self.colorbar_axes = colorbar.ax
        if self.masked_cells:
            swatch = Patch(**MASKED_CELLS, label=_("masked"))
            self.figure.legend(handles=[swatch], loc="outside lower right", fontsize="small",
                               handlelength=1.4, handleheight=1.4, frameon=False)

    def render(self, top=1.0, cmap=CMAP):
        """PNG bytes of the figure with the colour scale ending at ``top``, in colour map ``cmap``."""
        kept = self.paste_background(top, cmap)
        rgba = np.asarray(self.canvas.buffer_rgba())  # (height, width, 4), a view of the canvas
        if kept.encoder is None:  # from the kept picture, now on the canvas
            kept.encoder = BandedPNG(rgba, self.changing_rows())
        for artist in self.artists:
            self.figure.draw_artist(artist)
        return kept.encoder.encode(rgba)

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

    def changing_rows(self):
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
        if (1.0, CMAP) not in self.kept:
            self.paste_background(1.0, CMAP)

    def paste_background(self, top, cmap):
        """Put the background and the colorbar for ``top`` and ``cmap`` on the canvas, drawing
        what is not kept yet: the background once, the colorbar once per (``top``, ``cmap``).
        Returns what is kept for (``top``, ``cmap``) (``Kept``)."""
        self.norm.vmax = top  # recolours the heatmaps and the colorbar
        self._use_cmap(cmap)
        if BACKGROUND not in self.kept:
            self._draw_background()
        key = (top, cmap)
        if key in self.kept:
            self.canvas.restore_region(self.kept[key].pixels)
            return self.kept[key]
        self.canvas.restore_region(self.kept[BACKGROUND])
        if self.colorbar_axes is not None:
            self.figure.draw_artist(self.colorbar_axes)
        self.kept[key] = Kept(self.canvas.copy_from_bbox(self.figure.bbox))
        return self.kept[key]

    def background_rgba(self):
        """The background alone, without the registered artists and the colorbar, at the colour scale
        0 to 1 in the current colour map, as RGBA pixels (height, width, 4), a copy; it stays on the
        canvas."""
        self.paste_background(1.0, self.cmap)
        self.canvas.restore_region(self.kept[BACKGROUND])
        return np.asarray(self.canvas.buffer_rgba()).copy()

    def check_unchanged(self):
        """Raise if an artist of the axes drawn in the background has changed since: the
        background would hide the change. Moving an artist never registered does this."""
        if BACKGROUND not in self.kept:
            return
        changed = [child for ax in self.figure.axes if ax is not self.colorbar_axes
                   for child in (*ax.get_children(), ax)
                   if child.stale and not child.get_animated() and _draws_something(child)]
        if changed:
            raise RuntimeError(f"{changed[0]} changed, but it is drawn once, in the kept background: "
                               "register the artists that update() moves with blit.animate(artist)")

    def save(self, path, fmt, dpi, caption):
        """Write the whole figure, registered artists included, with ``caption`` above it."""
        title = self.figure.text(0.5, 1.0, caption, ha="center", va="bottom")
        try:  # "tight" grows the saved area to take in the caption above the frozen layout
            self.figure.savefig(path, format=fmt, dpi=dpi, facecolor="white", bbox_inches="tight")
        finally:
            title.remove()
            self.forget()  # saving redrew the canvas, maybe at another dpi

    def _draw_background(self):
        registered = set(self.artists)
        strays = [child for ax in self.figure.axes for child in ax.get_children()
                  if child.get_animated() and child not in registered]
        if strays:
            raise ValueError(f"{strays[0]} is animated but not registered, so it would never be drawn: "
                             "register it with blit.animate(artist)")
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
        self.kept[BACKGROUND] = self.canvas.copy_from_bbox(self.figure.bbox)
        self.full_draws += 1

    def _widest_colorbar_top(self):
        """The end of ``SCALE_TOPS`` whose colorbar, tick labels and label, is the widest."""
        renderer = self.canvas.get_renderer()
        widths = {}
        for top in SCALE_TOPS:
            self.norm.vmax = top
            widths[top] = self.colorbar_axes.get_tightbbox(renderer).width
        return max(widths, key=widths.get)

    def forget(self, pictures=True):
        """Forget what is kept, so that the next render draws it again: the background and the colorbars
        (after the figure changed, or was drawn otherwise: saved, or dark), or with ``pictures=False``
        only the encoders (the band of rows that change may have grown)."""
        if pictures:
            self.kept.clear()
            return
        for key, kept in self.kept.items():
            if key is not BACKGROUND:
                kept.encoder = None
