"""Heatmaps of attention weights with one honest colour scale, and the book's line plot."""

import base64
import functools
import os
import re
import struct
import sys
import unicodedata

import matplotlib.pyplot as plt
import torch
from matplotlib import scale, ticker

from ._checks import check_flag, check_tensor, shape_str
from .dark import drawn_dark
from .figure_alt import describe_figure
from .i18n import N_, _, marks, n_, number

SUMMARY = "_d2lmini_summary"  # the attribute of a figure that holds its text summary (attach_summary)

# How a masked cell looks wherever weights are drawn (show_weights, the explorers):
# not coloured, so the axes' background shows, grey and hatched, never like a weight of 0.
MASKED_CELLS = {"facecolor": "#eeeeee", "edgecolor": "#aaaaaa", "hatch": "//"}

# The colour map of every attention heatmap, static or live. viridis is perceptually uniform
# and readable with the common colour-vision deficiencies, and in grey print.
CMAP = "viridis"

# The maps an explorer's colour control offers, as (label, matplotlib name); the first is CMAP.
# viridis, cividis and greys keep their order of lightness for every common colour-vision
# deficiency; the book's Reds is one hue from white to dark red, less even to a red-blind eye.
CMAPS = (
    (N_("viridis (colour-blind safe)"), CMAP),
    (N_("cividis (colour-blind safe)"), "cividis"),
    (N_("greys (colour-blind safe)"), "Greys"),
    (N_("Reds (the book's)"), "Reds"),
)

# The colour of each attention head wherever heads are drawn (chapter 05's shape tracer, the
# multi-head diagram): Paul Tol's "muted" qualitative scheme, told apart with every common
# colour-vision deficiency.
HEAD_COLOURS = ("#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE", "#882255", "#44AA99", "#999933")


def head_colour(head):
    """The colour of head number ``head`` (from 0)."""
    return HEAD_COLOURS[head]


# The axes' labels of a heatmap of weights, by default (said in the learner's language).
KEYS, QUERIES = N_("Keys"), N_("Queries")

# How many queries a text summary describes, at most, and how many keys for each.
SUMMARY_QUERIES, SUMMARY_KEYS = 3, 2
SUMMARY_PANELS = 4  # a grid of more panels is summarised by its first ones


# What describe_weights says, by name: a message (N_), or for one said of a count, a function of the
# count giving its singular or plural form (n_). The page's port of describe_weights (widgets.page,
# page_js/explorers.js) is given the same messages in the learner's language, so the two say the same.
SUMMARY_WORDS = {
    "queries": lambda count: n_("{count} query", "{count} queries", count),
    "keys": lambda count: n_("{count} key", "{count} keys", count),
    "query": N_("query {name}"),
    "no key": N_("{query} attends to no key (all weights 0)"),
    "evenly": N_("{query} spreads evenly over {keys} ({weight:.2f} each)"),
    "mostly": lambda count: n_("{query} attends mostly to key {keys}", "{query} attends mostly to keys {keys}", count),
    "and": N_(" and "),
    "panels": N_("{count} panels of {shape}"),
    "panel": N_("panel {p}"),
    "first panels": N_("(First {shown} of {count} panels described.)"),
    "described": N_("({queries} of {count} described.)"),
    # What is hatched: keys masked, or (``unseen=True``, chapter 06's online softmax) keys not visited yet.
    "masked keys": lambda count: n_("key {keys} masked for every query", "keys {keys} masked for every query", count),
    "masked cells": N_("{hidden} of {total} cells masked"),
    "no key left": lambda count: n_("no key left for query {queries}", "no key left for queries {queries}", count),
    "unseen keys": lambda count: n_("key {keys} not seen yet", "keys {keys} not seen yet", count),
    "unseen cells": N_("{hidden} of {total} cells not seen yet"),
    "no key seen": lambda count: n_("no key seen yet by query {queries}", "no key seen yet by queries {queries}",
                                    count),
    # A panel with nothing masked, among panels whose masks differ.
    "nothing masked": N_("nothing masked"),
}


def _say(name, count=None):
    """The summary's message ``name`` (``SUMMARY_WORDS``) in the learner's language, for ``count`` when
    it has a plural."""
    word = SUMMARY_WORDS[name]
    return word(count) if callable(word) else _(word)


def _queries(count):
    """"1 query", "3 queries", in the learner's language."""
    return _say("queries", count).format(count=count)


def _keys(count):
    """"1 key", "2 keys", in the learner's language."""
    return _say("keys", count).format(count=count)


def _label(text):
    """An axis label in the learner's language: d2lmini's own ("Keys") translated, a learner's kept."""
    return _(text) if text else text


def _named(index, labels):
    """Index ``index``, and its label in quotes when there are labels."""
    return f"{index}" if labels is None else f'{index} "{labels[index]}"'


def _spans(indices):
    """Sorted integers as short ranges: [0, 1, 2, 5] -> "0-2, 5"."""
    spans, start = [], None
    for previous, index in zip([None, *indices], [*indices, None]):
        if start is None:
            start = index
        elif index != previous + 1:
            spans.append(f"{start}" if start == previous else f"{start}-{previous}")
            start = index
    return ", ".join(spans)


def _representative_queries(num_queries, count):
    """``count`` queries spread evenly from the first to the last (the middle one for one)."""
    if count >= num_queries:
        return list(range(num_queries))
    if count == 1:
        return [num_queries // 2]
    return sorted({round(i * (num_queries - 1) / (count - 1)) for i in range(count)})


def _describe_row(row, allowed, query, query_labels, key_labels):
    """One query's weights (keys,) in words; ``allowed`` (keys,) is False where masked."""
    name = _say("query").format(name=_named(query, query_labels))
    if not allowed.any() or float(row.sum()) == 0.0:
        return _say("no key").format(query=name)
    visible = row[allowed]
    if len(visible) > 1 and float(visible.max() - visible.min()) < 0.005:  # equal to 2 decimals
        return _say("evenly").format(query=name, keys=_keys(int(allowed.sum())), weight=float(visible[0]))
    # The largest weights, to 4 decimals, equal ones in key order: weights equal in exact arithmetic
    # (keys 31 and 33 around query 32 in a positional encoding) differ in their last bits by machine
    # and in the page's own arithmetic, and a summary must read the same everywhere. Four decimals
    # still order the weights that the summary shows equal (0.03 and 0.03) by size.
    candidates = torch.where(allowed, row, -1.0).tolist()
    ranked = [float(f"{weight:.4f}") for weight in candidates]
    keys = sorted(range(len(candidates)), key=lambda k: (-ranked[k], k))[:min(SUMMARY_KEYS, int(allowed.sum()))]
    parts = [f"{_named(k, key_labels)} ({number(candidates[k], '.2f')})" for k in keys if candidates[k] >= 0.005]
    return _say("mostly", len(parts)).format(query=name, keys=_say("and").join(parts))


def describe_weights(weights, mask=None, query_labels=None, key_labels=None, titles=None,
                     max_queries=SUMMARY_QUERIES, queries=None, unseen=False):
    """A short text summary of attention weights, for a screen reader or a caption.

    ``weights`` is one (queries, keys) matrix, or panels of them, 3-D or 4-D as
    ``show_heatmaps`` takes them; ``mask`` (True = may attend) broadcasts to it;
    ``query_labels``/``key_labels`` name the rows and columns (tokens);
    ``titles`` names the panels, in order; ``queries`` (indices) picks the
    queries described instead of spreading them; ``unseen`` says that the cells
    left out are keys not visited yet (an online softmax), not masked ones. It gives the
    shape, what is masked, and for a few queries (spread evenly, and said so when not all)
    the keys each attends to most, rounded to 2 decimals, e.g. "8 queries × 8 keys.
    Query 3 attends mostly to keys 2 (0.61) and 5 (0.22)". A grid of several
    panels gets one query per panel, for its first ``SUMMARY_PANELS`` panels; what is
    masked is said once when every panel has the same mask, and panel by panel otherwise
    ("Example 0: keys 2-7 masked for every query; ..."). Every sentence begins with a capital.
    In the learner's language, its numbers with the language's marks ("2 (0,61)").
    """
    panels = _to_4d(weights).flatten(0, 1)  # (panels, queries, keys)
    num_panels, num_queries, num_keys = panels.shape
    if mask is None:
        allowed = torch.ones_like(panels, dtype=torch.bool)
    else:
        allowed = torch.as_tensor(mask).detach().cpu().bool()
        allowed = allowed.expand(*weights.shape).reshape(panels.shape)
    if titles is not None and len(titles) != num_panels:
        raise ValueError(f"titles must have one entry per panel ({num_panels}), got {len(titles)}")
    for labels, what, size in ((query_labels, "query", num_queries), (key_labels, "key", num_keys)):
        if labels is not None and len(labels) != size:
            raise ValueError(f"{what}_labels must have one entry per {what} ({size}), got {len(labels)}")
    shape = f"{_queries(num_queries)} × {_keys(num_keys)}"
    if num_panels > 1:
        shape = _say("panels").format(count=num_panels, shape=shape)
    shared = bool((allowed == allowed[:1]).all())  # one mask for every panel: said once
    masked = _masked_text(allowed, unseen) if shared else ""
    sentences = [shape + (f", {masked}" if masked else "") + "."]
    per_panel = max_queries if num_panels == 1 else 1
    for p in range(min(num_panels, SUMMARY_PANELS)):
        shown = _representative_queries(num_queries, per_panel) if queries is None else list(queries)
        parts = [_describe_row(panels[p, q], allowed[p, q], q, query_labels, key_labels) for q in shown]
        if not shared:  # this panel's own mask first
            parts.insert(0, _masked_text(allowed[p:p + 1], unseen) or _say("nothing masked"))
        text = "; ".join(parts)
        if num_panels > 1:
            title = " ".join(titles[p].split()) if titles is not None else _say("panel").format(p=p)  # one line
            text = f"{title}: {text}"
        sentences.append(text + ".")
    if num_panels > SUMMARY_PANELS:
        sentences.append(_say("first panels").format(shown=SUMMARY_PANELS, count=num_panels))
    elif len(shown) < num_queries:
        sentences.append(_say("described").format(queries=_queries(len(shown)), count=num_queries))
    return " ".join(sentence(text) for text in sentences)


def sentence(text):
    """``text`` with its first letter a capital, after an opening parenthesis if it has one: a sentence
    of the summary ("example 0: query 2 ..." -> "Example 0: query 2 ...", "a consulta 0 ..." -> "A
    consulta 0 ..."). A sentence that starts with a symbol keeps it, since a symbol's case is part of
    its meaning (Σ is a sum, Q a matrix): one given a value ("σ = 0.05: ...", "d = 16: ..."), one with
    a modifier letter ("qᵀk ...") and a name in code ("d_head ...")."""
    start = 1 if text.startswith("(") else 0
    word = 0  # the letters the sentence starts with
    while start + word < len(text) and unicodedata.category(text[start + word]).startswith("L"):
        word += 1
    after = text[start + word:]
    if (not word or any(unicodedata.category(letter) == "Lm" for letter in text[start:start + word])
            or after[:1] == "_" or after[:1].isalnum() or after.lstrip().startswith("=")):
        return text
    return text[:start] + text[start:start + 1].upper() + text[start + 1:]


def _masked_text(allowed, unseen=False):
    """What ``allowed`` (panels, queries, keys) hides, "12 of 64 cells masked (no key left for queries 0-1)",
    or "" when nothing is masked; with ``unseen``, the keys not seen yet."""
    hidden = int((~allowed).sum())
    if not hidden:
        return ""
    keys, cells, empty_rows = ("unseen keys", "unseen cells", "no key seen") if unseen else (
        "masked keys", "masked cells", "no key left")
    always = (~allowed).all(dim=0).all(dim=0).nonzero().flatten().tolist()  # keys no query may see
    if hidden == len(always) * allowed.shape[0] * allowed.shape[1]:
        text = _say(keys, len(always)).format(keys=_spans(always))
    else:
        text = _say(cells).format(hidden=hidden, total=allowed.numel())
    empty = (~allowed.any(dim=-1)).any(dim=0).nonzero().flatten().tolist()  # queries with no key, in a panel
    if empty:
        text += f" ({_say(empty_rows, len(empty)).format(queries=_spans(empty))})"
    return text


def _is_weights(matrices):
    """Whether every row of ``matrices`` (4-D) is weights: in [0, 1], summing to 1 (or all 0)."""
    if not matrices.numel() or matrices.min() < 0 or matrices.max() > 1:
        return False
    sums = matrices.sum(dim=-1)
    return bool(((sums - 1).abs() < 1e-3).logical_or(sums == 0).all())


# ---- tick labels with the learner's language's decimal mark

def marked_label(text):
    """A tick label (or an axis's offset text) with the learner's decimal mark: "0.5" is "0,5" in
    Portuguese; in mathtext ("$\\mathdefault{0.5}$") the comma is braced, "{,}", so that TeX's rules
    set no space after it. English labels are returned as they are."""
    decimal = marks()[0]
    if decimal == ".":
        return text
    return re.sub(r"(?<=\d)\.(?=\d)", "{" + decimal + "}" if "$" in text else decimal, text)


class MarkedScalarFormatter(ticker.ScalarFormatter):
    """matplotlib's default formatter of a linear axis, writing the learner's decimal mark.

    matplotlib's own way (``axes.formatter.use_locale``) asks the operating system's locale, which a
    learner's machine (or Colab, Binder) may not have for their language, and which would not follow
    ``set_language``; this reads d2lmini's language when the figure is drawn."""

    def __call__(self, x, pos=None):
        return marked_label(super().__call__(x, pos))

    def get_offset(self):
        return marked_label(super().get_offset())

    def format_data_short(self, value):
        return marked_label(super().format_data_short(value))


class MarkedLogFormatter(ticker.LogFormatterSciNotation):
    """matplotlib's default formatter of a log axis, writing the learner's decimal mark (a label such as
    "$\\mathdefault{10^{0.5}}$" where a base is not a whole power)."""

    def __call__(self, x, pos=None):
        return marked_label(super().__call__(x, pos))


class MarkedLinearScale(scale.LinearScale):
    """The "linear" scale, whose tick labels use ``MarkedScalarFormatter``."""

    def set_default_locators_and_formatters(self, axis):
        super().set_default_locators_and_formatters(axis)
        axis.set_major_formatter(MarkedScalarFormatter())


class MarkedLogScale(scale.LogScale):
    """The "log" scale, whose tick labels use ``MarkedLogFormatter``."""

    def set_default_locators_and_formatters(self, axis):
        super().set_default_locators_and_formatters(axis)
        axis.set_major_formatter(MarkedLogFormatter(self.base))
        axis.set_minor_formatter(MarkedLogFormatter(self.base, labelOnlyBase=self.subs is not None))


def use_marked_scales():
    """Make "linear" and "log" this module's scales again: the one place every figure gets its tick
    labels' decimal mark. matplotlib builds every axis's scale, and so its default formatter, from its
    registry by name, whenever an axis is made, cleared or rescaled: the chapters' own figures,
    d2lmini's and the explorers' (a colorbar's too). The scales keep matplotlib's names, so that
    ``set_xscale("log")`` and ``get_xscale()`` work as before. Called on import; again by whatever
    imported another copy of d2lmini (an earlier revision, for a benchmark), whose scales would
    otherwise speak that copy's language."""
    scale.register_scale(MarkedLinearScale)
    scale.register_scale(MarkedLogScale)


use_marked_scales()


def use_svg_display():
    """Kept for the book's code; the notebooks draw PNG, which nbval skips."""


# Set (to anything but "" or "0") while the collection's notebooks are executed for storing
# (``make notebooks``): each figure then also carries its picture for a dark page, which the web
# site shows in dark mode. A learner's run draws each figure once.
DARK_FIGURES = "D2LMINI_DARK_FIGURES"


SETTLE_DRAWINGS = 5


def _png_size(picture):
    """(width, height) in pixels of a formatter's PNG (base64, maybe with its metadata)."""
    data = picture[0] if isinstance(picture, tuple) else picture
    header = base64.b64decode(data[:32])  # the signature and the IHDR chunk
    return struct.unpack(">II", header[16:24])


def _with_alt_text(draw, fig):
    """The PNG of ``fig`` as ``draw`` (the inline backend's formatter) makes it, with its alt text in
    the metadata (``alt``), and, when DARK_FIGURES is set, its dark page picture (``dark``, base64)."""
    picture = draw(fig)
    dark = None
    if os.environ.get(DARK_FIGURES, "") not in {"", "0"}:
        # A layout engine may move a figure's parts over its first drawings: draw both pictures
        # again until they have one size.
        for _ in range(SETTLE_DRAWINGS):
            with drawn_dark(fig):
                dark = draw(fig)
            if _png_size(dark) == _png_size(picture):
                break
            picture = draw(fig)
    data, metadata = picture if isinstance(picture, tuple) else (picture, {})
    metadata = {**(metadata or {}), "alt": alt_text(fig)}
    if dark is not None:
        metadata["dark"] = dark[0] if isinstance(dark, tuple) else dark
    return data, metadata


def alt_text(fig):
    """What a screen reader says in place of ``fig``: ``describe_figure``, and a pointer to the text
    summary printed under it, when it has one (``attach_summary``)."""
    text = describe_figure(fig)
    if getattr(fig, SUMMARY, None):
        text += _(" A text summary of the weights follows the figure.")
    return text


def _sharp_inline_figures():
    """In Jupyter, draw inline figures at twice the pixels, shown at their usual size ("retina"),
    each with its alt text (``_with_alt_text``).

    They stay sharp on a HiDPI screen and on the collection's web site, which
    shows the stored PNGs. Outside IPython (a script, the tests) nothing changes.
    """
    if "IPython" not in sys.modules or sys.modules["IPython"].get_ipython() is None:
        return
    from matplotlib.figure import Figure
    from matplotlib_inline.config import InlineBackend

    InlineBackend.instance().figure_formats = {"retina"}  # its observer updates the shell's formatters
    png = sys.modules["IPython"].get_ipython().display_formatter.formatters["image/png"]
    try:
        draw = png.lookup_by_type(Figure)
    except KeyError:  # a terminal IPython shows no inline figure
        return
    png.for_type(Figure, functools.partial(_with_alt_text, draw))


_sharp_inline_figures()


def _display_once(fig, summary=None):
    """Show ``fig`` as Jupyter would, and take it out of pyplot so that it is shown only once.

    The inline backend draws every figure still open in pyplot when a cell
    ends. A figure that is also the cell's value would then appear twice.
    Closed here, it is drawn by whichever comes first: the cell's value, an
    explicit ``display(fig)``, or the backend at the end of the cell. Its
    ``summary`` (text for a screen reader), if any, is printed just under it.
    """
    from IPython import get_ipython
    from IPython.display import publish_display_data

    plt.close(fig)
    data, metadata = {}, {}
    for mime, formatter in get_ipython().display_formatter.formatters.items():
        value = formatter(fig)
        if isinstance(value, tuple):  # some formatters return (data, metadata)
            value, metadata[mime] = value
        if value is not None:
            data[mime] = value
    publish_display_data(data, metadata)
    if summary is not None:
        print(summary)


def _to_4d(matrices):
    if isinstance(matrices, torch.Tensor):
        matrices = matrices.detach().cpu()
    else:
        try:
            matrices = torch.as_tensor(matrices)
        except (TypeError, ValueError, RuntimeError):
            check_tensor(matrices, "matrices")
    if matrices.dim() == 2:
        matrices = matrices[None, None]  # one panel
    elif matrices.dim() == 3:
        matrices = matrices[None]  # one row of panels
    elif matrices.dim() != 4:
        raise ValueError(
            "matrices must be 2-D (queries, keys), 3-D (panels, queries, keys) or "
            f"4-D (rows, cols, queries, keys), got shape {shape_str(matrices)}"
        )
    return matrices.float()


def _colour_range(matrix, vmin, vmax):
    """(vmin, vmax) for ``matrix``: the given limits, else its own range."""
    vmin = float(matrix.min()) if vmin is None else vmin
    vmax = float(matrix.max()) if vmax is None else vmax
    if vmax <= vmin:
        vmax = vmin + 1e-6  # a constant matrix still gets a usable colorbar
    return vmin, vmax


def show_heatmaps(matrices, xlabel, ylabel, titles=None, figsize=(2.5, 2.5), cmap=CMAP,
                  vmin=None, vmax=None, shared_scale=True):
    """Draw a grid of heatmaps, by default on one colour scale, and return the figure.

    ``matrices`` is 2-D, 3-D (a row of panels) or 4-D ``(rows, cols, queries,
    keys)``, as in the book. With ``shared_scale=True`` every panel uses the
    same ``vmin``/``vmax`` (by default the range of all panels together), so
    the single colorbar is true for every panel. ``shared_scale=False`` scales
    each panel on its own, as the book does, and gives each its own colorbar.
    ``titles`` names the columns. Jupyter shows the figure once, whether the
    cell assigns it (``fig = d2l.show_heatmaps(...)``) or ends with the call.
    When every row is attention weights (in [0, 1], summing to 1 or all 0), a
    text summary for screen readers is printed too (``describe_weights``).
    """
    matrices = _to_4d(matrices)
    num_rows, num_cols = matrices.shape[:2]
    if titles is not None and len(titles) != num_cols:
        raise ValueError(f"titles must have one entry per column ({num_cols}), got {len(titles)}")
    check_flag(shared_scale, "shared_scale")
    if shared_scale:
        vmin, vmax = _colour_range(matrices, vmin, vmax)
    fig, axes = plt.subplots(num_rows, num_cols, figsize=figsize, sharex=True, sharey=True,
                             squeeze=False)
    for i in range(num_rows):
        for j in range(num_cols):
            ax = axes[i, j]
            limits = (vmin, vmax) if shared_scale else _colour_range(matrices[i, j], vmin, vmax)
            image = ax.imshow(matrices[i, j].numpy(), cmap=cmap, vmin=limits[0], vmax=limits[1])
            if not shared_scale:
                fig.colorbar(image, ax=ax, shrink=0.6)
            if i == num_rows - 1:
                ax.set_xlabel(_label(xlabel))
            if j == 0:
                ax.set_ylabel(_label(ylabel))
            if titles is not None:
                ax.set_title(titles[j])
    if shared_scale:
        fig.colorbar(image, ax=axes, shrink=0.6)
    summary = None
    if _is_weights(matrices):
        names = None
        if titles is not None:
            names = [titles[j] if num_rows == 1 else _("row {i}, {title}").format(i=i, title=titles[j])
                     for i in range(num_rows) for j in range(num_cols)]
        summary = describe_weights(matrices, titles=names)
    return attach_summary(fig, summary)


def attach_summary(fig, summary):
    """Make Jupyter show ``fig`` once, with ``summary`` (text for a screen reader, or None) just under it.

    It sets IPython's hook for showing an object, so the summary follows the
    picture it describes, even when several figures of one cell are shown at
    its end (``_display_once``). In a script, where no picture is shown
    inline, the summary is printed at once. Returns ``fig``.
    """
    fig._ipython_display_ = functools.partial(_display_once, fig, summary)
    setattr(fig, SUMMARY, summary)
    if summary is not None:
        from IPython import get_ipython  # imported here: it is slow, and only a summary needs it

        if get_ipython() is None:
            print(summary)
    return fig


def _as_curves(values):
    """A list of 1-D curves: one tensor or list of numbers, or a 2-D tensor (one curve per row)."""
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu()
        return [values] if values.dim() <= 1 else list(values)
    if isinstance(values, (list, tuple)) and values and not hasattr(values[0], "__len__"):
        return [values]  # a list of numbers is one curve
    return list(values)


def plot(X, Y=None, xlabel=None, ylabel=None, legend=None, xlim=None, ylim=None, xscale="linear",
         yscale="linear", fmts=("-", "m--", "g-.", "r:"), figsize=(3.5, 2.5), axes=None):
    """Plot one or more curves, as the book's ``d2l.plot`` does; returns None.

    ``X`` and ``Y`` may each be one curve (a 1-D tensor or a list of numbers)
    or several (a 2-D tensor, one curve per row, or a list of curves). One
    ``X`` is shared by every curve of ``Y``; with ``Y`` left out, ``X`` is
    plotted against its indices. Each curve takes the next format of ``fmts``;
    as in the book, curves beyond ``len(fmts)`` are not drawn.
    Draws into ``axes``, else into pyplot's current axes, whose figure is set
    to ``figsize`` (the book changes matplotlib's default size instead).
    """
    if Y is None:
        X, Y = [[]] * len(_as_curves(X)), X
    X, Y = _as_curves(X), _as_curves(Y)
    if len(X) != len(Y):
        X = X * len(Y)
    if axes is None:
        axes = plt.gca()
        axes.figure.set_size_inches(figsize)
    axes.cla()
    for x, y, fmt in zip(X, Y, fmts):
        if len(x):
            axes.plot(x, y, fmt)
        else:
            axes.plot(y, fmt)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_xscale(xscale)
    axes.set_yscale(yscale)
    axes.set_xlim(xlim)
    axes.set_ylim(ylim)
    if legend:
        axes.legend(legend)
    axes.grid()


def show_weights(weights, mask=None, xlabels=None, ylabels=None, ax=None, fmt=".2f",
                 xlabel=KEYS, ylabel=QUERIES, colorbar=True):
    """One small (queries, keys) weight matrix with each weight printed in its cell.

    ``mask`` (True = may attend, as from ``attention_mask``) marks the cells
    that were masked out: they are hatched and left blank, so a masked key
    never looks like a key that merely got weight 0. The colours run from 0 to
    1, and the colorbar (``colorbar=False`` leaves it out) says so. Drawn with seaborn into ``ax`` (a new figure if
    None); returns the axes. Meant for matrices of up to about 12 × 12. A text
    summary for screen readers is printed too (``describe_weights``).
    """
    import seaborn as sns  # imported on first use: it takes most of a second

    weights = _to_4d(weights)
    if weights.shape[:2] != (1, 1):
        raise ValueError(f"weights must be one (queries, keys) matrix, got shape {shape_str(weights)}")
    weights = weights[0, 0]
    hidden = None
    if mask is not None:
        mask = torch.as_tensor(mask).detach().cpu()
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must be a boolean tensor (True = may attend), got {mask.dtype}")
        try:
            hidden = (~mask.expand(weights.shape)).numpy()
        except RuntimeError:
            raise ValueError(f"mask of shape {shape_str(mask)} does not broadcast to the weights' "
                             f"shape {tuple(weights.shape)}") from None
    if ax is None:
        _figure, ax = plt.subplots(figsize=(0.55 * weights.shape[1] + 1.5, 0.45 * weights.shape[0] + 0.9),
                             layout="constrained")
    # Masked cells are not drawn; this hatched background shows through them.
    ax.patch.set(**MASKED_CELLS)
    # Each weight written here, with the learner's decimal mark (seaborn's own annotation writes a point).
    annotations = [[number(value, fmt) for value in row] for row in weights.tolist()]
    sns.heatmap(weights.numpy(), mask=hidden, ax=ax, vmin=0, vmax=1, cmap=CMAP, annot=annotations, fmt="",
                annot_kws={"fontsize": "small"}, linewidths=0.5, linecolor="white",
                xticklabels=xlabels if xlabels is not None else "auto",
                yticklabels=ylabels if ylabels is not None else "auto",
                cbar=colorbar, cbar_kws={"label": _("attention weight")})
    ax.set(xlabel=_label(xlabel), ylabel=_label(ylabel))
    print(describe_weights(weights, None if hidden is None else torch.from_numpy(~hidden),
                           query_labels=ylabels, key_labels=xlabels))
    return ax
