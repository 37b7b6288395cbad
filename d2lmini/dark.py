"""Figures drawn for a dark page: the same picture, with the colours that would vanish on dark mirrored.

The web site shows each figure in the reader's mode (light or dark). ``drawn_dark`` recolours a
finished matplotlib figure for the dark page, and puts every colour back when it ends:

* the background (figure, axes, legend frames, near-white boxes) becomes the page's dark background;
* black and dark grey lines, edges, ticks and text become light: their lightness is mirrored
  (HLS), so that a hue stays a hue;
* a text keeps its colour where it already stands out from what lies behind it (dark text in a
  pale box), and the text drawn over a heatmap keeps the colour chosen for its cell;
* what a colour map paints (heatmaps, colour bars, colour-mapped points) is left as it is: the
  collection's maps (viridis, cividis, greys) read the same on both backgrounds.

Plain colours that already stand out on dark (3:1 for a line, 4.5:1 for a text) are kept, so a
colour means the same thing in both modes; the darker ones (two of the heads' colours, as lines)
are lightened, keeping their hue.
"""

import colorsys
from contextlib import contextmanager

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection
from matplotlib.colors import to_hex, to_rgba, to_rgba_array
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

# The site's dark page (pydata-sphinx-theme's dark background and text colours).
DARK_BACKGROUND = "#14181e"
DARK_TEXT = "#ced6dd"
# WCAG 2.1's contrast minimums: 4.5 for text, 3 for the lines and marks of a graphic.
TEXT_CONTRAST, GRAPHIC_CONTRAST = 4.5, 3.0
PALE = 0.85  # a fill at least this luminous is a background (white, light grey), not a colour


def luminance(colour):
    """WCAG's relative luminance of a colour (0 black, 1 white)."""
    channels = np.array(to_rgba(colour)[:3])
    linear = np.where(channels <= 0.04045, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    return float(linear @ [0.2126, 0.7152, 0.0722])


def contrast(first, second):
    """WCAG's contrast ratio of two colours, from 1 (the same) to 21 (black on white)."""
    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def mirrored(colour):
    """``colour`` with its lightness mirrored, keeping its hue and alpha: white becomes the dark
    page's background, black its text colour."""
    red, green, blue, alpha = to_rgba(colour)
    hue, lightness, saturation = colorsys.rgb_to_hls(red, green, blue)
    if lightness >= 0.97:
        return (*to_rgba(DARK_BACKGROUND)[:3], alpha)
    if lightness <= 0.1:
        return (*to_rgba(DARK_TEXT)[:3], alpha)
    return (*colorsys.hls_to_rgb(hue, 1 - lightness, saturation), alpha)


def _fill(colour):
    """A fill for the dark page: a pale (background-like) fill is mirrored, a colour is kept."""
    rgba = to_rgba(colour)
    return mirrored(rgba) if rgba[3] > 0 and luminance(rgba) >= PALE else rgba


def _mark(colour):
    """A line, edge or marker for the dark page: mirrored when it would not stand out on it."""
    rgba = to_rgba(colour)
    if rgba[3] == 0 or contrast(rgba, DARK_BACKGROUND) >= GRAPHIC_CONTRAST:
        return rgba
    return mirrored(rgba)


def _colour_mapped(artist):
    return artist.get_array() is not None


class _Recolouring:
    """Colour changes that can be undone, in the order they were made."""

    def __init__(self):
        self.undo = []

    def set(self, getter, setter, new):
        old = getter()
        if not np.array_equal(to_rgba_array(old), to_rgba_array(new)):
            setter(new)
            self.undo.append((setter, old))

    def restore(self):
        for setter, old in reversed(self.undo):
            setter(old)
        self.undo.clear()


def _behind(text, patches, images, renderer):
    """The colour behind the middle of ``text`` after recolouring, or None over an image (a heatmap's
    cell, whose text colour was chosen for that cell)."""
    own = text.get_bbox_patch()
    if own is not None and own.get_fill():
        return to_rgba(own.get_facecolor())
    box = text.get_window_extent(renderer)
    middle = ((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2)
    for image in images:
        if image.get_window_extent(renderer).contains(*middle):
            return None
    under = [patch for patch in patches
             if patch.get_fill() and to_rgba(patch.get_facecolor())[3] >= 0.5 and patch.contains_point(middle)]
    if under:  # the smallest is the nearest: a box in an axes in the figure
        nearest = min(under, key=lambda patch: patch.get_window_extent(renderer).width
                      * patch.get_window_extent(renderer).height)
        return to_rgba(nearest.get_facecolor())
    return to_rgba(DARK_BACKGROUND)


@contextmanager
def drawn_dark(fig):
    """Recolour ``fig`` for a dark page inside the ``with`` block; every colour is put back after it."""
    changes = _Recolouring()
    canvas = fig.canvas
    try:
        # A canvas of its own (a closed figure has none that draws), to measure the texts where the
        # last drawing laid them out: drawing again here could move a figure's parts.
        renderer = FigureCanvasAgg(fig).get_renderer()
        artists = [artist for artist in fig.findobj(include_self=True) if artist.get_visible()]
        patches = [artist for artist in artists if isinstance(artist, Patch)]
        arrows = [text.arrow_patch for text in artists if getattr(text, "arrow_patch", None) is not None]
        for arrow in arrows:  # an annotation's arrow is not among the figure's children
            changes.set(arrow.get_facecolor, arrow.set_facecolor, _mark(arrow.get_facecolor()))
            changes.set(arrow.get_edgecolor, arrow.set_edgecolor, _mark(arrow.get_edgecolor()))
        for patch in patches:
            changes.set(patch.get_facecolor, patch.set_facecolor, _fill(patch.get_facecolor()))
            changes.set(patch.get_edgecolor, patch.set_edgecolor, _mark(patch.get_edgecolor()))
        for line in (artist for artist in artists if isinstance(artist, Line2D)):
            changes.set(line.get_color, line.set_color, _mark(line.get_color()))
            for getter, setter in ((line.get_markeredgecolor, line.set_markeredgecolor),
                                   (line.get_markerfacecolor, line.set_markerfacecolor)):
                changes.set(getter, setter, _mark(getter()))
        for collection in (artist for artist in artists if isinstance(artist, Collection)):
            if _colour_mapped(collection):
                continue
            faces, edges = collection.get_facecolor(), collection.get_edgecolor()
            if len(faces):
                changes.set(collection.get_facecolor, collection.set_facecolor, [_fill(c) for c in faces])
            if len(edges):
                changes.set(collection.get_edgecolor, collection.set_edgecolor, [_mark(c) for c in edges])
        images = [artist for artist in artists if isinstance(artist, AxesImage)]
        for text in (artist for artist in artists if isinstance(artist, Text) and artist.get_text().strip()):
            behind = _behind(text, patches, images, renderer)
            colour = to_rgba(text.get_color())
            if behind is None or contrast(colour, behind) >= TEXT_CONTRAST:
                continue
            changes.set(text.get_color, text.set_color, to_hex(mirrored(colour), keep_alpha=True))
        yield fig
    finally:
        changes.restore()
        fig.set_canvas(canvas)
