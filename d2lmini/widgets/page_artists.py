"""The page's readers of registered artists: for every kind the page draws (``ARTISTS``), its style,
read once as the figure is built, and its look, read per state, in canvas pixels (``kind_of``); and
the sprites that Agg draws for what the page only shows or hides (``Sprites``)."""

import base64
import math

import matplotlib
import numpy as np
from matplotlib.backend_bases import GraphicsContextBase
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.collections import LineCollection, PathCollection, QuadMesh
from matplotlib.colors import to_rgba
from matplotlib.image import AxesImage, PcolorImage
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.path import Path
from matplotlib.patheffects import Stroke
from matplotlib.text import Text
from matplotlib.transforms import IdentityTransform

from .figure import DPI, PIXEL_RATIO, CellImage, GridImage
from .png import page_png

PAGE_DPI = DPI * PIXEL_RATIO  # canvas pixels per inch, as the kernel's figure
POINT = PAGE_DPI / 72  # canvas pixels per typographic point
DIGITS = 2  # decimals kept of a canvas pixel coordinate
VALUE_DIGITS = 5  # decimals kept of a cell's value (colours have 256 levels)


def data_url(rgba):
    png = page_png(rgba)
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def page_colour(rgba):
    """A colour as [r, g, b, a], 8-bit channels and alpha in [0, 1]."""
    r, g, b, a = to_rgba(rgba)
    return [round(r * 255), round(g * 255), round(b * 255), round(a, 3)]


def rounded(values, digits=DIGITS):
    """Numbers rounded for storage; NaN (a break in a line) becomes None."""
    return [None if not math.isfinite(v) else round(float(v), digits) for v in np.asarray(values).ravel()]


def colour_table(name):
    """The 256 colours of the colour map ``name`` as Agg paints them (rounded to 8 bits), flattened RGB."""
    lut = matplotlib.colormaps[name](np.arange(256))[:, :3]  # (256, 3), floats
    return np.round(lut * 255).astype(int).ravel().tolist()



class Sprites:
    """Transparent PNG crops that Agg drew, stored once each (by their pixels)."""

    def __init__(self):
        self.urls, self.index = [], {}

    def draw(self, artist, width, height):
        """[sprite, left, top] of ``artist`` drawn alone by Agg on a canvas of ``width`` × ``height``
        pixels, or None when it draws nothing."""
        renderer = RendererAgg(width, height, PAGE_DPI)
        animated = artist.get_animated()
        artist.set_animated(False)
        try:
            artist.draw(renderer)
        finally:
            artist.set_animated(animated)
        pixels = np.asarray(renderer.buffer_rgba())  # (height, width, 4), straight alpha
        rows, columns = np.nonzero(pixels[..., 3])
        if not len(rows):
            return None
        top, bottom, left, right = rows.min(), rows.max() + 1, columns.min(), columns.max() + 1
        crop = np.ascontiguousarray(pixels[top:bottom, left:right])
        key = (crop.shape, crop.tobytes())
        if key not in self.index:
            self.index[key] = len(self.urls)
            self.urls.append(data_url(crop))
        return [self.index[key], int(left), int(top)]



def _pixels(transform, xy, height):
    """Data points (n, 2) -> canvas pixels (n, 2), y downwards."""
    points = transform.transform(np.asarray(xy, dtype=float).reshape(-1, 2))
    points[:, 1] = height - points[:, 1]
    return points


def _colour_mapped(artist, figure):
    """How ``artist`` maps values to colours: through the figure's shared scale (the colour controls'),
    or through its own range and colour table, which may be a map outside the menu (the positional
    encoding's diverging map)."""
    norm = artist.norm
    shared = norm is figure.blit.norm
    return {"shared": shared, "range": None if shared else [norm.vmin, norm.vmax],
            "table": None if shared else colour_table(artist.get_cmap().name)}


def _cells_style(artist, figure):
    return {"kind": "cells", **_colour_mapped(artist, figure)}


def _cell_edges(artist, height):
    """(column edges, row edges) of a cells artist in canvas pixels."""
    if isinstance(artist, CellImage):  # whole pixels, as it fills them
        x_edges, y_edges = artist.edges()
        return x_edges, height - y_edges
    transform = artist.get_transform()
    if isinstance(artist, QuadMesh):
        corners = artist.get_coordinates()  # (rows + 1, columns + 1, 2), data
        xs, ys = corners[0, :, 0], corners[:, 0, 1]
    elif isinstance(artist, GridImage):
        xs, ys = artist.get_edges()
    else:  # an AxesImage filling its extent, row 0 at the top
        left, right, bottom, top = artist.get_extent()
        rows, columns = artist.get_array().shape[:2]
        xs, ys = np.linspace(left, right, columns + 1), np.linspace(top, bottom, rows + 1)
    x_pixels = _pixels(transform, np.stack([xs, np.full(len(xs), ys[0])], 1), height)[:, 0]
    y_pixels = _pixels(transform, np.stack([np.full(len(ys), xs[0]), ys], 1), height)[:, 1]
    return x_pixels, y_pixels


def _cells(artist, figure, style):
    """Cell edges in canvas pixels and the values (None: masked, or transparent)."""
    x_pixels, y_pixels = _cell_edges(artist, figure.height)
    values = artist.get_array()
    if values.ndim == 3:  # 8-bit RGBA, drawn as it is
        colours = np.asarray(values).reshape(-1, values.shape[-1]).tolist()
        return {"x": rounded(x_pixels), "y": rounded(y_pixels), "rgba": colours, "columns": values.shape[1]}
    mask = np.ma.getmaskarray(values)
    flat = np.asarray(np.ma.getdata(values), dtype=float)
    cells = [None if hidden else round(float(v), VALUE_DIGITS) for v, hidden in zip(flat.ravel(), mask.ravel())]
    return {"x": rounded(x_pixels), "y": rounded(y_pixels), "values": cells, "columns": values.shape[1]}


def _line_style(artist, figure):
    width = artist.get_linewidth() * POINT
    style = artist.get_linestyle()
    dashes = {"--": matplotlib.rcParams["lines.dashed_pattern"], ":": matplotlib.rcParams["lines.dotted_pattern"],
              "-.": matplotlib.rcParams["lines.dashdot_pattern"]}.get(style, [])
    marker = artist.get_marker()
    return {"kind": "line", "colour": page_colour((*to_rgba(artist.get_color())[:3], artist.get_alpha() or 1)),
            "width": round(width, 3), "dashes": [round(d * width, 3) for d in dashes],
            "draw": style not in ("None", " ", ""), "marker": None if marker in ("None", None, "") else marker,
            "size": round(artist.get_markersize() * POINT, 3),
            "face": page_colour(artist.get_markerfacecolor()) if artist.get_markerfacecolor() != "none" else None,
            "edge": page_colour(artist.get_markeredgecolor()),
            "edge_width": round(artist.get_markeredgewidth() * POINT, 3)}


def _line(artist, figure, style):
    points = _pixels(artist.get_transform(), artist.get_xydata(), figure.height)
    return {"points": rounded(points)}


def _points_style(artist, figure):
    return {"kind": "points", "width": round(float(np.atleast_1d(artist.get_linewidths())[0]) * POINT, 3)}


def _points(artist, figure, style):
    centres = _pixels(artist.get_offset_transform(), artist.get_offsets(), figure.height)
    radii = np.sqrt(artist.get_sizes()) / 2 * POINT
    radii = np.broadcast_to(radii, (len(centres),))
    faces = [page_colour(c) for c in artist.get_facecolors()]
    edges = [page_colour(c) for c in artist.get_edgecolors()]
    return {"centres": rounded(centres), "radii": rounded(radii), "faces": faces, "edges": edges}


def _rect_style(artist, figure):
    edge = to_rgba(artist.get_edgecolor())
    drawn = edge[3] > 0 and artist.get_linewidth() > 0  # a frame (fill=False) has an edge only
    return {"kind": "rect", "face": page_colour(artist.get_facecolor()), "edge": page_colour(edge) if drawn else None,
            "edge_width": round(artist.get_linewidth() * POINT, 3)}


def _rect(artist, figure, style):
    corners = _pixels(artist.get_transform(), [[0, 0], [1, 1]], figure.height)  # the patch's unit box
    (x0, y0), (x1, y1) = corners
    return {"box": rounded([min(x0, x1), min(y0, y1), abs(x1 - x0), abs(y1 - y0)])}


class _StrokeReader(RendererAgg):
    """A renderer that draws nothing and keeps the graphics context of the first path drawn."""

    def __init__(self):
        super().__init__(1, 1, PAGE_DPI)
        self.gc = None

    def draw_path(self, gc, path, transform, rgbFace=None):
        if self.gc is None:
            self.gc = (gc.get_linewidth(), gc.get_rgb())


def _stroke(outline):
    """A halo that keeps a text readable on any colour (``patheffects.withStroke``): its width and
    colour, as the effect draws them, over 1 point of white where it sets neither."""
    renderer, gc = _StrokeReader(), GraphicsContextBase()
    gc.set_linewidth(1)
    gc.set_foreground("white")
    outline.draw_path(renderer, gc, Path([[0, 0], [1, 1]]), IdentityTransform(), None)
    width, rgba = renderer.gc
    return {"width": round(width * POINT, 3), "colour": page_colour(rgba)}


def _text_style(artist, figure):
    outline = next((effect for effect in artist.get_path_effects() if isinstance(effect, Stroke)), None)
    stroke = None if outline is None else _stroke(outline)
    return {"kind": "text", "size": round(artist.get_fontsize() * POINT, 3), "colour": page_colour(artist.get_color()),
            "align": artist.get_horizontalalignment(), "baseline": artist.get_verticalalignment(),
            "rotation": artist.get_rotation(), "weight": str(artist.get_fontweight()), "stroke": stroke}


def _text(artist, figure, style):
    """The text and its anchor in canvas pixels; its colour too where it is not the style's (a symbol
    red where the model is wrong)."""
    (x, y), = _pixels(artist.get_transform(), [artist.get_position()], figure.height)
    look = {"text": artist.get_text(), "at": rounded([x, y])}
    colour = page_colour(artist.get_color())
    if colour != style["colour"]:
        look["colour"] = colour
    return look


def _segments_style(artist, figure):
    return {"kind": "segments", **_colour_mapped(artist, figure), "cap": artist.get_capstyle() or "butt"}


def _segments(artist, figure, style):
    """A LineCollection: each segment's points in canvas pixels (flat x, y), its value (or, with no
    values, its colour) and its width in canvas pixels."""
    segments = artist.get_segments()
    transform = artist.get_transform()
    widths = np.broadcast_to(artist.get_linewidths(), (len(segments),)) * POINT
    look = {"points": [rounded(_pixels(transform, segment, figure.height)) for segment in segments],
            "widths": rounded(widths)}
    values = artist.get_array()
    if values is None:
        look["colours"] = [page_colour(c) for c in np.broadcast_to(artist.get_colors(), (len(segments), 4))]
    else:
        look["values"] = [round(float(v), VALUE_DIGITS) for v in np.asarray(values).ravel()]
    return look


def _sprite_style(artist, figure):
    """An artist that never changes but may hide (a legend): drawn once by Agg, [sprite, left, top]."""
    return {"kind": "sprite", "sprite": figure.sprites.draw(artist, figure.width, figure.height)}


def _sprite(artist, figure, style):
    return {}  # shown: nothing more to say than its style


# Every kind of registered artist the page can draw: (its style, read once as the figure is built;
# its look, read per state). An invisible artist's look is None.
ARTISTS = [(QuadMesh, _cells_style, _cells), (GridImage, _cells_style, _cells), (AxesImage, _cells_style, _cells),
            (Line2D, _line_style, _line), (PathCollection, _points_style, _points), (Rectangle, _rect_style, _rect),
            (Text, _text_style, _text), (LineCollection, _segments_style, _segments), (Legend, _sprite_style, _sprite)]


def kind_of(artist):
    """(style reader, look reader) of a registered artist (``ARTISTS``)."""
    if isinstance(artist, PcolorImage) and not isinstance(artist, GridImage):
        raise TypeError("the page reads the cell edges of a figure.GridImage, not of a PcolorImage: "
                        "register a GridImage")
    for kind, style, look in ARTISTS:
        if isinstance(artist, kind):
            return style, look
    raise TypeError(f"the page cannot draw a registered {type(artist).__name__}; it draws "
                    + ", ".join(kind.__name__ for kind, _, _ in ARTISTS))

