"""The page's shell: an explorer's declaration made into data that a web page draws with no kernel
and no network. This module is the build side; ``page_js/explorers.js`` is the page side, and
``page_js/<name>.js`` the scripts of the declarations that compute in the page (``page_script``).

For each figure (layout) of a declaration, ``export`` keeps what the kernel's shell keeps
(``figure.BlitFigure``):

* the **background**, drawn once by matplotlib without the registered artists and the colorbar,
  as PNG;
* the **colorbar** for every end of the colour scale (``SCALE_TOPS``): its ticks, tick labels and
  label drawn by Agg as a transparent sprite, over a gradient that the page paints from the colour
  map's own table;
* every **registered artist**'s kind and style (``_ARTISTS``), read once, as the figure is built:
  cells, lines, markers, bars and frames, texts, coloured segments, and sprites (an artist that only
  shows or hides, drawn once by Agg).

Then, for each state the page offers (``Declaration.page_states``), it runs the declaration's own
``compute`` and its view's ``update``, and reads back from the registered artists what moved: cell
values, line points, marker sizes, bar ends, texts (and their colour, where it is not the
style's), segments with their values and widths, in canvas pixels. The page
paints those over the background: the blitting idea carried to the page. Each distinct look of an
artist is stored once, so states that share it share its entry; captions and text summaries too.
A control whose options depend on the others (``Declaration.choices``) offers, among the stored
states, only the options valid with the others' values (``valid_options``).

Each figure also has a **dark** variant, for the site's dark mode: what depends on colours, drawn
again under ``d2lmini.dark.drawn_dark`` on the same figure (its background, colorbar sprites, and the
artists' styles where they differ). The states are shared by both modes. A colour that a state gives
a text (the red of a wrong symbol) follows its text: where ``drawn_dark`` recoloured the text's own
colour (it stands on the page), the state's colour is kept when it reaches ``TEXT_CONTRAST`` on the
dark background and is ``mirrored`` otherwise; where it kept it (over a heatmap's cell), it is kept.
A text with a halo (a stroke) is drawn to be read on any colour, and keeps its colours.

The page speaks the learner's language (``d2lmini.i18n``), the one set when the assets are written:
what the declarations say (labels, options, notes, captions, summaries) as the kernel's shell says it
(``say``), and every word of the page's scripts, which keep none of their own. Those are tables of
messages (``SHELL_WORDS``, ``plotting.SUMMARY_WORDS``, ``SCRIPT_WORDS``) sent translated with the
language's number marks and plural rule (``colour_script``, ``export``), where ``D2L.say`` fills their
fields as Python's ``str.format`` does.
"""

import base64
import gettext
import io
import itertools
import json
import math
import re
import shutil
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.collections import LineCollection, PathCollection, QuadMesh
from matplotlib.colors import to_rgba
from matplotlib.image import AxesImage, PcolorImage
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from PIL import Image

from ..dark import DARK_BACKGROUND, TEXT_CONTRAST, contrast, drawn_dark, mirrored
from ..i18n import DOMAIN, ENGLISH, LOCALE, N_, _, current_language, marks, n_
from ..plotting import CMAPS, SUMMARY_KEYS, SUMMARY_PANELS, SUMMARY_QUERIES, SUMMARY_WORDS
from .declaration import say
from .explorer import Explorer, one_thread
from .figure import DPI, PIXEL_RATIO, SCALE_TOPS, BlitFigure, CellImage, scale_top
from .png import png_bytes

PAGE_JS = Path(__file__).with_name("page_js")  # the page side's scripts
PAGE_DPI = DPI * PIXEL_RATIO  # canvas pixels per inch, as the kernel's figure
POINT = PAGE_DPI / 72  # canvas pixels per typographic point
MAX_STATES = 5000  # states one explorer's page may store; more need a coarser grid (page_values)
DIGITS = 2  # decimals kept of a canvas pixel coordinate
VALUE_DIGITS = 5  # decimals kept of a cell's value (colours have 256 levels)
REDUCED_LEVELS = 8  # the most a channel may move when an opaque picture is reduced to 256 colours


def _page_png(rgba):
    """PNG bytes of a picture (height, width, 4) that every reader of the page downloads, so made small
    once: indexed colours where it has 256 or fewer (exact: text and lines on white, or on nothing,
    usually have), compressed at zlib's highest level."""
    flat = np.ascontiguousarray(rgba).reshape(-1, 4).view(np.uint32).ravel()
    colours, index = np.unique(flat, return_inverse=True)
    if len(colours) > 256:
        return _reduced_png(rgba) or png_bytes(rgba)
    palette = colours.view(np.uint8).reshape(-1, 4)  # (colours, 4): RGBA
    picture = Image.fromarray(index.reshape(rgba.shape[:2]).astype(np.uint8), "P")
    picture.putpalette(palette[:, :3].ravel().tolist())
    buffer = io.BytesIO()
    picture.save(buffer, "PNG", compress_level=9, transparency=palette[:, 3].tobytes())
    return buffer.getvalue()


def _reduced_png(rgba):
    """PNG bytes of an opaque picture reduced to 256 colours (median cut, no dithering) where that moves
    no channel by more than ``REDUCED_LEVELS``, else None. A dark figure has a few antialiased blends
    more than 256 (light text over light lines), and its full-colour PNG is three times larger."""
    if (rgba[..., 3] != 255).any():
        return None
    picture = Image.fromarray(np.ascontiguousarray(rgba[..., :3])).quantize(
        256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    if np.abs(np.asarray(picture.convert("RGB"), dtype=int) - rgba[..., :3]).max() > REDUCED_LEVELS:
        return None
    buffer = io.BytesIO()
    picture.save(buffer, "PNG", compress_level=9)
    return buffer.getvalue()


def _data_url(rgba):
    png = _page_png(rgba)
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _colour(rgba):
    """A colour as [r, g, b, a], 8-bit channels and alpha in [0, 1]."""
    r, g, b, a = to_rgba(rgba)
    return [round(r * 255), round(g * 255), round(b * 255), round(a, 3)]


def _rounded(values, digits=DIGITS):
    """Numbers rounded for storage; NaN (a break in a line) becomes None."""
    return [None if not math.isfinite(v) else round(float(v), digits) for v in np.asarray(values).ravel()]


def colour_table(name):
    """The 256 colours of the colour map ``name`` as Agg paints them (rounded to 8 bits), flattened RGB."""
    lut = matplotlib.colormaps[name](np.arange(256))[:, :3]  # (256, 3), floats
    return np.round(lut * 255).astype(int).ravel().tolist()


# What the page's shell (explorers.js) says, by name. Each table of the page's words has the form of
# plotting.SUMMARY_WORDS: a message (N_), or for one said of a count, a function of the count (n_).
SHELL_WORDS = {
    "colours": N_("colours"),
    "map": N_("map"),
    # Translators: the colour-map menu's name for a screen reader; it holds the word of "map".
    "colour map": N_("colour map"),
    "fitted": N_("; colours 0 to {top:g}"),
    # Translators: the button that replays a recorded training run on the web page, step by step.
    "play": N_("Play"),
    # Translators: the same button while the run replays.
    "pause": N_("Pause"),
    "computed": N_("This explorer runs in your browser, from data the chapter's own code prepared ahead of time; "
                   "its arithmetic is tested against the chapter's."),
    "stored": N_("These pictures were computed ahead of time, by the chapter's own code, for every setting "
                 "offered here."),
    "run": N_("To change the code, run the chapter: Colab, Binder or a hub (the links at the top of the page)."),
    "not offered": N_("This combination of settings is not offered on the page: run the chapter."),
}

# What each page script (page_js/<name>.js) says, by name: the messages of the compute and describe
# it ports (their declarations' modules say them too), so that the page says what the kernel says.
SCRIPT_WORDS = {
    "kernel_pooling.js": {
        "caption": N_("{kernel} kernel, σ = {sigma:.3g}, {n} training points"),
    },
    "masked_softmax.js": {
        "example": N_("example {b}"),
        "every query": N_("every query sees at least one key"),
        "fully masked": lambda count: n_("fully masked: query {queries}, all-zero weights by d2lmini's policy",
                                         "fully masked: queries {queries}, all-zero weights by d2lmini's policy",
                                         count),
        "cells masked": N_("{masked} of {cells} cells masked; {rows}"),
    },
    "attention.js": {
        "additive": N_("additive"),
        "scaled dot product": N_("scaled dot product"),
        "panel": N_("{method}, example {b}"),
        "additive caption": N_("keys = 1 + {noise:.2f} × noise (seed {seed}), valid_lens = {valid_lens}"),
        "dot product caption": N_("d = {d}, {scaled}, temperature {temperature:.2g}, valid_lens = {valid_lens}"
                                  "{causal}"),
        "scaled": N_("scaled by 1/√d"),
        "unscaled": N_("unscaled"),
        "causal": N_(", causal"),
    },
    "positional.js": {
        "caption": N_("d = {d}, base = {base}: wavelengths from 2π ≈ 6.28 to {longest} positions"),
    },
    "head_view.js": {
        "every token": N_("every token"),
        "token": N_("token {query} ({token!r})"),
        "caption": N_("layer {layer}, head {head}: where {who} looks, in {sentence!r}"),
        "summary": N_("Layer {layer}, head {head}: {summary}"),
        "title": N_("layer {layer}, head {head}"),
        "all tokens": N_("all tokens"),
    },
    "shape_tracer.js": {
        "reshape": N_("reshape alone: heads mix positions"),
        "caption": N_("h = {h}, d_head = {d_head}, T = {T}: (1, {T}, {d}) → ({h}, {T}, {d_head}) by {how}"),
        "heads": lambda count: n_("head {heads}", "heads {heads}", count),
        "positions": lambda count: n_("position {positions}", "positions {positions}", count),
        "block": N_("block {b} holds {heads} at {positions}"),
        "width": lambda count: n_("{h} heads of width {d_head}: ", "{h} heads of width {d_head}: ", count),
        "first blocks": N_(" (first 2 of {h} blocks)."),
    },
}

# Each explorer's name on the page (its box's aria-label), so that a screen reader says which
# explorer a control belongs to. An explorer not here is named after its class, in English (``title``).
TITLES = {
    "QueryPoolingExplorer": N_("Query pooling explorer"),
    "KernelPoolingExplorer": N_("Kernel pooling explorer"),
    "MaskedSoftmaxExplorer": N_("Masked softmax explorer"),
    "MaskEditorExplorer": N_("Mask editor explorer"),
    "AdditiveExplorer": N_("Additive attention explorer"),
    "DotProductExplorer": N_("Dot-product attention explorer"),
    "ShapeTracerExplorer": N_("Shape tracer explorer"),
    "MultiHeadExplorer": N_("Multi-head attention explorer"),
    "OnlineSoftmaxExplorer": N_("Online softmax explorer"),
    "PositionalEncodingExplorer": N_("Positional encoding explorer"),
    "AlignmentExplorer": N_("Alignment explorer"),
    "HeadViewExplorer": N_("Head view explorer"),
}


def title(declaration):
    """The explorer's name on the page, in the learner's language (``TITLES``); one not in ``TITLES``
    is named after its class ("MaskEditorExplorer": "Mask editor explorer")."""
    if declaration.name in TITLES:
        return _(TITLES[declaration.name])
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", declaration.name).capitalize()


def plural_rule():
    """(the learner's language's plural rule, the number of its plural forms): the rule is a C
    expression of ``n`` giving the index of a message's form for the count ``n``, as the language's
    catalogue says (its Plural-Forms header), and English's where there is no catalogue."""
    if current_language() == ENGLISH:
        return "(n != 1)", 2
    header = gettext.translation(DOMAIN, LOCALE, [current_language()]).info()["plural-forms"]
    count = int(re.search(r"nplurals\s*=\s*(\d+)", header).group(1))
    return re.search(r"plural\s*=\s*([^;]+)", header).group(1).strip(), count


def said(words):
    """A table of the page's words (``SHELL_WORDS``, ...) in the learner's language, JSON-ready: a
    message as its text, one said of a count as the list of its forms, by the plural rule's index."""
    expression, count = plural_rule()
    rule = gettext.c2py(expression)  # also refuses anything but a plural rule, which the page evaluates
    counts = [next(n for n in range(1000) if rule(n) == form) for form in range(count)]  # a count of each form
    return {name: [str(word(n)) for n in counts] if callable(word) else str(_(word)) for name, word in words.items()}


def colour_script():
    """A script that gives the page what d2lmini decides, so that no rule and no word has a second home
    in JavaScript: every colour map of the explorers' menu (its label and its ``colour_table``), the
    colour scale's choices (``Explorer.COLOUR_SCALES``) and its fitted ends (``SCALE_TOPS``), how many
    queries, keys and panels a text summary describes (``plotting.SUMMARY_*``) and its words; the
    shell's words (``SHELL_WORDS``), and the language's decimal and thousands marks and plural rule.
    Its labels and words are in the learner's language."""
    tables = {name: colour_table(name) for _, name in CMAPS}
    settings = {"labels": {name: str(_(label)) for label, name in CMAPS},
                "scales": [[str(_(label)), scale] for label, scale in Explorer.COLOUR_SCALES],
                "tops": SCALE_TOPS,
                "summary": {"queries": SUMMARY_QUERIES, "keys": SUMMARY_KEYS, "panels": SUMMARY_PANELS,
                            "words": said(SUMMARY_WORDS)},
                "words": said(SHELL_WORDS), "marks": list(marks()), "plural": plural_rule()[0]}
    return (f"window.D2L_COLOUR_TABLES = {json.dumps(tables, separators=(',', ':'))};\n"
            f"window.D2L_SETTINGS = {json.dumps(settings, ensure_ascii=False)};\n")


class _Sprites:
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
            self.urls.append(_data_url(crop))
        return [self.index[key], int(left), int(top)]


def _dark_look_colours(colours):
    """[[colour, its colour on the dark page], ...] for the colours that states give a text standing on
    the page: kept where it reaches ``TEXT_CONTRAST`` on the dark background, else ``mirrored``."""
    pairs = []
    for colour in colours:
        rgba = (*[channel / 255 for channel in colour[:3]], colour[3])
        dark = rgba if contrast(rgba, DARK_BACKGROUND) >= TEXT_CONTRAST else mirrored(rgba)
        pairs.append([colour, _colour(dark)])
    return pairs


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
    elif isinstance(artist, PcolorImage):
        xs, ys = artist._Ax, artist._Ay  # its edges: PcolorImage has no public getter (matplotlib 3.8-3.11)
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
        return {"x": _rounded(x_pixels), "y": _rounded(y_pixels), "rgba": colours, "columns": values.shape[1]}
    mask = np.ma.getmaskarray(values)
    flat = np.asarray(np.ma.getdata(values), dtype=float)
    cells = [None if hidden else round(float(v), VALUE_DIGITS) for v, hidden in zip(flat.ravel(), mask.ravel())]
    return {"x": _rounded(x_pixels), "y": _rounded(y_pixels), "values": cells, "columns": values.shape[1]}


def _line_style(artist, figure):
    width = artist.get_linewidth() * POINT
    style = artist.get_linestyle()
    dashes = {"--": matplotlib.rcParams["lines.dashed_pattern"], ":": matplotlib.rcParams["lines.dotted_pattern"],
              "-.": matplotlib.rcParams["lines.dashdot_pattern"]}.get(style, [])
    marker = artist.get_marker()
    return {"kind": "line", "colour": _colour((*to_rgba(artist.get_color())[:3], artist.get_alpha() or 1)),
            "width": round(width, 3), "dashes": [round(d * width, 3) for d in dashes],
            "draw": style not in ("None", " ", ""), "marker": None if marker in ("None", None, "") else marker,
            "size": round(artist.get_markersize() * POINT, 3),
            "face": _colour(artist.get_markerfacecolor()) if artist.get_markerfacecolor() != "none" else None,
            "edge": _colour(artist.get_markeredgecolor()),
            "edge_width": round(artist.get_markeredgewidth() * POINT, 3)}


def _line(artist, figure, style):
    points = _pixels(artist.get_transform(), artist.get_xydata(), figure.height)
    return {"points": _rounded(points)}


def _points_style(artist, figure):
    return {"kind": "points", "width": round(float(np.atleast_1d(artist.get_linewidths())[0]) * POINT, 3)}


def _points(artist, figure, style):
    centres = _pixels(artist.get_offset_transform(), artist.get_offsets(), figure.height)
    radii = np.sqrt(artist.get_sizes()) / 2 * POINT
    radii = np.broadcast_to(radii, (len(centres),))
    faces = [_colour(c) for c in artist.get_facecolors()]
    edges = [_colour(c) for c in artist.get_edgecolors()]
    return {"centres": _rounded(centres), "radii": _rounded(radii), "faces": faces, "edges": edges}


def _rect_style(artist, figure):
    edge = to_rgba(artist.get_edgecolor())
    drawn = edge[3] > 0 and artist.get_linewidth() > 0  # a frame (fill=False) has an edge only
    return {"kind": "rect", "face": _colour(artist.get_facecolor()), "edge": _colour(edge) if drawn else None,
            "edge_width": round(artist.get_linewidth() * POINT, 3)}


def _rect(artist, figure, style):
    corners = _pixels(artist.get_transform(), [[0, 0], [1, 1]], figure.height)  # the patch's unit box
    (x0, y0), (x1, y1) = corners
    return {"box": _rounded([min(x0, x1), min(y0, y1), abs(x1 - x0), abs(y1 - y0)])}


def _text_style(artist, figure):
    outline = next((effect for effect in artist.get_path_effects() if hasattr(effect, "_gc")), None)
    stroke = None
    if outline is not None:  # patheffects.withStroke: a halo that keeps the text readable on any colour
        stroke = {"width": round(outline._gc.get("linewidth", 1) * POINT, 3),
                  "colour": _colour(outline._gc.get("foreground", "white"))}
    return {"kind": "text", "size": round(artist.get_fontsize() * POINT, 3), "colour": _colour(artist.get_color()),
            "align": artist.get_horizontalalignment(), "baseline": artist.get_verticalalignment(),
            "rotation": artist.get_rotation(), "weight": str(artist.get_fontweight()), "stroke": stroke}


def _text(artist, figure, style):
    """The text and its anchor in canvas pixels; its colour too where it is not the style's (a symbol
    red where the model is wrong)."""
    (x, y), = _pixels(artist.get_transform(), [artist.get_position()], figure.height)
    look = {"text": artist.get_text(), "at": _rounded([x, y])}
    colour = _colour(artist.get_color())
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
    look = {"points": [_rounded(_pixels(transform, segment, figure.height)) for segment in segments],
            "widths": _rounded(widths)}
    values = artist.get_array()
    if values is None:
        look["colours"] = [_colour(c) for c in np.broadcast_to(artist.get_colors(), (len(segments), 4))]
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
_ARTISTS = [(QuadMesh, _cells_style, _cells), (PcolorImage, _cells_style, _cells), (AxesImage, _cells_style, _cells),
            (Line2D, _line_style, _line), (PathCollection, _points_style, _points), (Rectangle, _rect_style, _rect),
            (Text, _text_style, _text), (LineCollection, _segments_style, _segments), (Legend, _sprite_style, _sprite)]


def _kind(artist):
    for kind, style, look in _ARTISTS:
        if isinstance(artist, kind):
            return style, look
    raise TypeError(f"the page cannot draw a registered {type(artist).__name__}; it draws "
                    + ", ".join(kind.__name__ for kind, _, _ in _ARTISTS))


class _PageFigure:
    """One layout of a declaration: its background, colorbar and registered artists, for the page."""

    def __init__(self, declaration, layout, sprites):
        self.blit = BlitFigure(declaration.figsize_for(layout), layout)
        self.view = declaration.build(self.blit)
        self.blit.prepare()  # lays the figure out once and draws the background, as the kernel does
        self.width, self.height = self.blit.canvas.get_width_height(physical=True)
        self.sprites = sprites
        self.kinds = [_kind(artist) for artist in self.blit.artists]
        # Read as built, before any update: a look that differs from its style says so (a text's colour).
        self.styles = [style(artist, self) for artist, (style, _) in zip(self.blit.artists, self.kinds)]
        self.look_colours = [[] for _ in self.blit.artists]  # per artist, the colours its states give a text

    def describe(self):
        """What never changes: the background, the artists' styles, the colorbar per scale end; and
        the same for a dark page (``dark``)."""
        blit = self.blit
        css_width, css_height = blit.css_size
        return {"background": self._background(), "width": self.width, "height": self.height,
                "css_width": css_width, "css_height": css_height,
                "artists": [{**style, "axes": self._axes(artist)} for artist, style in zip(blit.artists, self.styles)],
                "colorbar": self._colorbar(), "dark": self._dark()}

    def _background(self):
        """The background as drawn now, without the colorbar (the page paints it), as a data URL."""
        blit = self.blit
        blit._paste_background(1.0, blit.cmap)
        if blit.colorbar_axes is not None:
            blit.canvas.restore_region(blit._background)
        return _data_url(np.asarray(blit.canvas.buffer_rgba()).copy())

    def _dark(self):
        """What a dark page draws instead (``drawn_dark`` on this figure): the background, the colorbar's
        sprites, and each artist's style where it differs from the light one. A text is read as built (its
        style's colour, and a letter where the last state left it empty), so that ``drawn_dark`` judges it
        where it stands; the colours its states gave it get their dark colours (``_dark_look_colours``)."""
        blit = self.blit
        texts = [(artist, artist.get_text(), artist.get_color(), style) for artist, style
                 in zip(blit.artists, self.styles) if style["kind"] == "text"]
        blit._forget_backgrounds()  # the kept pictures are the light page's
        try:
            for artist, text, _, style in texts:
                artist.set_color([channel / 255 for channel in style["colour"][:3]] + [style["colour"][3]])
                artist.set_text(text if text.strip() else "M")
            with drawn_dark(blit.figure):
                blit.figure.set_canvas(blit.canvas)  # the blit draws on its own canvas; drawn_dark puts it back
                background = self._background()
                styles = [style(artist, self) for artist, (style, _) in zip(blit.artists, self.kinds)]
                colorbar = self._colorbar()
        finally:
            for artist, text, colour, _ in texts:
                artist.set_text(text)
                artist.set_color(colour)
            blit._forget_backgrounds()  # the next render draws the light background again
        artists = []
        for light, dark, seen in zip(self.styles, styles, self.look_colours):
            changed = {key: value for key, value in dark.items() if value != light[key]}
            if light["kind"] == "text" and light["stroke"]:
                changed = {}  # a halo keeps the text readable on any colour: drawn as on the light page
            elif "colour" in changed and seen:
                changed["look_colours"] = _dark_look_colours(seen)
            artists.append(changed)
        return {"background": background, "artists": artists,
                "colorbar": None if colorbar is None else {"ends": colorbar["ends"]}}

    def _axes(self, artist):
        """[left, top, width, height] of the artist's axes in canvas pixels and [x0, x1, y0, y1], its
        limits, so that a page script maps data to pixels as the axes do (linear axes only)."""
        ax = artist.axes
        if ax is None:
            return None
        if ax.get_xscale() != "linear" or ax.get_yscale() != "linear":
            raise ValueError(f"the page maps data to pixels on linear axes only, got {ax.get_xscale()}/"
                             f"{ax.get_yscale()} axes")
        x0, y0, x1, y1 = ax.bbox.extents
        return _rounded([x0, self.height - y1, x1 - x0, y1 - y0], 4) + [*ax.get_xlim(), *ax.get_ylim()]

    def _colorbar(self):
        """The colorbar's box in canvas pixels and, per scale end, its ticks and labels as a sprite."""
        blit = self.blit
        if blit.colorbar_axes is None:
            return None
        x0, y0, x1, y1 = blit.colorbar_axes.bbox.extents
        box = _rounded([x0, self.height - y1, x1 - x0, y1 - y0])
        ends = {}
        # The page paints the gradient itself: hide it (a QuadMesh that the colorbar makes anew
        # for each end, among the axes' collections) and the axes' white patch under it while
        # Agg draws the ticks and labels.
        try:
            for top in SCALE_TOPS:
                blit.norm.vmax = top
                blit.colorbar_axes.draw(RendererAgg(self.width, self.height, PAGE_DPI))  # lays the ticks out
                gradient = [(c, c.get_visible()) for c in (*blit.colorbar_axes.collections, blit.colorbar_axes.patch)]
                for collection, _ in gradient:
                    collection.set_visible(False)
                ends[f"{top:g}"] = self.sprites.draw(blit.colorbar_axes, self.width, self.height)
                for collection, visible in gradient:
                    collection.set_visible(visible)
        finally:
            blit.norm.vmax = 1.0
        return {"box": box, "ends": ends}

    def looks(self):
        """The look of every registered artist now (after ``update``), JSON-ready."""
        looks = [look(artist, self, style) if artist.get_visible() else None
                 for artist, style, (_, look) in zip(self.blit.artists, self.styles, self.kinds)]
        for seen, look in zip(self.look_colours, looks):
            if look is not None and "colour" in look and look["colour"] not in seen:
                seen.append(look["colour"])
        return looks


class _Interned:
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
        self.sprites = _Sprites()
        self.figures = {}  # layout, as JSON -> _PageFigure

    def figure(self, layout):
        key = json.dumps(layout)
        if key not in self.figures:
            self.figures[key] = _PageFigure(self.declaration, layout, self.sprites)
        return self.figures[key]

    def state(self, settings):
        """(layout as JSON, caption, text summary, end of the fitted colour scale, every registered
        artist's look) for ``settings``: what the page shows, read from the declaration's own view."""
        with one_thread():
            result = self.declaration.compute(settings)
        figure = self.figure(result.layout)
        figure.view.update(result)
        return (json.dumps(result.layout), result.caption, self.declaration.describe(result),
                scale_top(result.weights), figure.looks())


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


def said_spec(control):
    """The control's spec (``Control.spec``) as the page shows it: its label, tooltip and options'
    labels in the learner's language (``say``, as the kernel's controls say them), its values kept."""
    spec = control.spec()
    spec["label"] = say(spec["label"])
    for text in ("tooltip", "accessible_name"):
        if spec.get(text):
            spec[text] = say(spec[text])
    if spec.get("inactive_when"):
        setting, value, reason = spec["inactive_when"]
        spec["inactive_when"] = [setting, value, say(reason)]
    if "options" in spec:
        spec["options"] = [[say(label), value] for label, value in spec["options"]]
    return spec


def export(declaration):
    """The page data of ``declaration``: its controls and figures, and either every offered state
    or, for a declaration with a ``page_script`` that computes in the page, the data it computes from
    and its script's words (``SCRIPT_WORDS``). What it says is in the learner's language."""
    offered = offered_values(declaration)
    states = [] if declaration.page_script else list(itertools.islice(declaration.page_states(offered),
                                                                       MAX_STATES + 1))
    if len(states) > MAX_STATES:
        raise ValueError(f"{declaration.name} offers more than {MAX_STATES} states on the page: offer coarser "
                         "grids in page_values or fewer states in page_states, or compute them in the page "
                         "(page_script)")
    page = PageStates(declaration)
    looks, strings, table = _Interned(), _Interned(), {}
    if declaration.page_script:  # every figure, at the default settings
        page.state(declaration.Settings())
        for layout in declaration.page_layouts():
            page.figure(layout)
    for settings in states:
        layout, caption, summary, top, state_looks = page.state(settings)
        key = ",".join(str(offered[control.name].index(getattr(settings, control.name)))
                       for control in declaration.controls)
        table[key] = [layout, strings.add(caption), strings.add(summary), top, *map(looks.add, state_looks)]
    described = {layout: figure.describe() for layout, figure in page.figures.items()}  # colorbar sprites too
    return {
        "name": declaration.name,
        "controls": [said_spec(control) for control in declaration.controls],
        "offered": {name: list(values) for name, values in offered.items()},
        "start": {control.name: offered[control.name].index(getattr(declaration.Settings(), control.name))
                  for control in declaration.controls},
        "coarser": say(declaration.page_note),
        "rows": [{"names": list(row.names), "label": say(row.label), "when": row.when, "columns": row.columns,
                  "note": say(row.note)} for row in declaration.arrangement()],
        "shows_weights": declaration.shows_weights, "colour_scale": declaration.colour_scale,
        "figures": described,
        "looks": looks.values, "strings": strings.values, "sprites": page.sprites.urls, "states": table,
        "play": declaration.page_play, "choices": valid_options(declaration, offered, states),
        "compute": declaration.page_script, "data": declaration.page_data() if declaration.page_script else None,
        "title": title(declaration),
        "words": said(SCRIPT_WORDS[declaration.page_script]) if declaration.page_script else None,
    }


def script(data):
    """The page data as a script that registers it (a page opened from disk cannot fetch JSON), then
    starts its explorers if the page's shell (explorers.js) ran first: the scripts may load in
    either order, and without holding the page up (defer)."""
    return ("window.D2L_EXPLORERS = window.D2L_EXPLORERS || {};\n"
            f"window.D2L_EXPLORERS[{json.dumps(data['name'])}] = {json.dumps(data, separators=(',', ':'))};\n"
            "if (window.D2L) window.D2L.startSoon();\n")


# The page's shell, its parts in the order a page loads them (plain scripts sharing window.D2L: each
# uses those before it). site/conf.py lists them too, for the web site's pages.
SHELL_SCRIPTS = ("words.js", "paint.js", "controls.js", "explorers.js")


def write_assets(folder, declarations):
    """Write into ``folder`` what pages need to show ``declarations`` live: the shell's scripts
    (``SHELL_SCRIPTS``), ``explorers.css`` and ``colours.js`` (every page), and per explorer ``<name>.js``, its
    data, with its page script before it when it has one, all in the learner's language
    (``i18n.set_language``). Returns name -> the scripts its page loads, in order (relative to ``folder``)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in (*SHELL_SCRIPTS, "explorers.css"):
        shutil.copy(PAGE_JS / name, folder / name)
    (folder / "colours.js").write_text(colour_script())
    scripts = {}
    for declaration in declarations:
        data = export(declaration)
        (folder / f"{declaration.name}.js").write_text(script(data))
        scripts[declaration.name] = [f"{declaration.name}.js"]
        if declaration.page_script:
            shutil.copy(PAGE_JS / declaration.page_script, folder / declaration.page_script)
            scripts[declaration.name].insert(0, declaration.page_script)
    return scripts


def page_html(names, scripts, title="explorers"):
    """A page of its own showing the explorers ``names`` (``write_assets``'s scripts beside it), in the
    learner's language (its ``lang``, "pt-BR" for pt_BR)."""
    tags = ['<link rel="stylesheet" href="explorers.css">', '<script src="colours.js"></script>']
    sources = dict.fromkeys(src for name in names for src in scripts[name])  # each script once, in order
    tags += [f'<script src="{src}"></script>' for src in sources]
    tags += [f'<script defer src="{src}"></script>' for src in SHELL_SCRIPTS]  # deferred scripts run in order
    boxes = "\n".join(f'<div id="explorer-{i}" data-d2l-explorer="{name}"></div>' for i, name in enumerate(names))
    language = current_language().replace("_", "-")  # a BCP 47 tag
    return (f'<!doctype html>\n<html lang="{language}"><head><meta charset="utf-8"><title>{title}</title>\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            + "\n".join(tags) + f"</head>\n<body>\n{boxes}\n</body></html>\n")
