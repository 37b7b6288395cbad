"""Alt text for figures: what a screen reader says in a figure's place, made from what the figure holds.

A figure shown in Jupyter carries its alt text in the output's metadata (``image/png`` → ``alt``,
where IPython's ``Image(alt=...)`` and nbconvert put it), and the web site reads it from there
(``tools/build_site.py``). ``describe_figure`` builds the text from the figure itself: its title,
each panel's axes and labels, what is drawn (a heatmap of R × C cells, curves and where they start
and end, bars, points) and the colour scale. A figure that knows better says so with ``set_alt``;
a heatmap of attention weights adds the summary that ``describe_weights`` prints under it.
"""

import re

import numpy as np

from .i18n import _, n_, number

ALT = "_d2lmini_alt"  # the attribute of a figure that holds its own alt text (set_alt)
MAX_PANELS = 4  # a figure of more panels is described by its first ones
MAX_CURVES = 4
MAX_LABELS = 8  # tick labels (words, tokens) named for an axis
NUMBER = re.compile(r"[−-]?[\d.,]+(e[−+-]?\d+|\^[−-]?\d+)?%?")  # a tick label such as 0.5, −2, 10^{-1}, 50%


def set_alt(fig, text):
    """Give ``fig`` its alt text: one or two sentences saying what the picture shows. Returns ``fig``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str saying what the figure shows; got {type(text).__name__}")
    if not text.strip():
        raise ValueError("text must say what the figure shows; got an empty string")
    setattr(fig, ALT, " ".join(text.split()))
    return fig


def _number(value):
    """A value as a reader hears it: 2 significant digits (a whole number from 100 on, "almost 0"
    below 0.001), no "-0", with the learner's language's marks."""
    value = float(value)
    if 0 < abs(value) < 0.001:
        return _("almost 0")
    text = number(value, ".0f") if abs(value) >= 100 else number(value, ".2g")
    return "0" if text in {"-0", "0"} else text


TEX = {r"\cdot": "·", r"\ell": "ℓ", r"\,": " ", r"\mathrm": "", r"\sqrt": "√"}


def _plain(text):
    """A label as it reads, without matplotlib's TeX marks: "$B h n^2$" -> "B h n^2"."""
    for mark, shown in TEX.items():
        text = text.replace(mark, shown)
    return " ".join(re.sub(r"[${}]|\\", "", text).split())


def _quoted(text):
    return f"“{_plain(text)}”"


def _colour_bars(fig):
    """The axes that hold a colour bar: they are a panel's scale, not a panel."""
    bars = set()
    for ax in fig.axes:
        for mappable in [*ax.images, *ax.collections]:
            bar = getattr(mappable, "colorbar", None)
            if bar is not None:
                bars.add(bar.ax)
    return bars


def _word_labels(labels):
    """Tick labels when they are words (tokens, names), not numbers; else None."""
    texts = [label.get_text() for label in labels if label.get_text()]
    if not texts or all(NUMBER.fullmatch(re.sub(r"[${}]|\\mathdefault", "", text)) for text in texts):
        return None
    shown = ", ".join(texts[:MAX_LABELS])
    return shown + (_(" and {count} more").format(count=len(texts) - MAX_LABELS) if len(texts) > MAX_LABELS else "")


def _axis(ax, name):
    label = (ax.get_xlabel() if name == "x" else ax.get_ylabel()).strip()
    words = _word_labels(ax.get_xticklabels() if name == "x" else ax.get_yticklabels())
    if not label and not words:
        return ""
    return (_("{axis} axis").format(axis=name) + (f" {_quoted(label)}" if label else "")
            + (_(" labelled {words}").format(words=words) if words else ""))


def _curve(line, label):
    y = np.asarray(line.get_ydata(), dtype=float)
    y = y[np.isfinite(y)]
    name = _quoted(label) if label and not label.startswith("_") else _("a curve")
    if y.size == 0:
        return name
    if y.size == 1:
        return _("{curve} at {value}").format(curve=name, value=_number(y[0]))
    return _("{curve} from {first} to {last} (lowest {lowest}, highest {highest})").format(
        curve=name, first=_number(y[0]), last=_number(y[-1]), lowest=_number(y.min()), highest=_number(y.max()))


def _panel(ax):
    """One panel in words: what is drawn on which axes."""
    drawn = []
    for image in ax.images:
        rows, cols = np.shape(image.get_array())[:2]
        drawn.append(_("a heatmap of {rows} × {cols} cells").format(rows=rows, cols=cols))
    for mesh in ax.collections:
        if mesh.get_array() is not None and getattr(mesh, "colorbar", None) is not None and not ax.images:
            drawn.append(_("a colour map of {count} cells").format(count=np.size(mesh.get_array())))
    lines = [line for line in ax.get_lines() if np.size(line.get_ydata()) > 1 or line.get_label()[:1] != "_"]
    marks = [line for line in lines if line.get_linestyle() in {"None", "", " "}]  # markers only
    curves = [line for line in lines if line not in marks and np.size(line.get_ydata()) > 2]
    if marks:
        count = sum(np.size(line.get_ydata()) for line in marks)
        drawn.append(_("{count} marked cells or points").format(count=count))
    if curves:
        legend = ax.get_legend()
        labels = [text.get_text() for text in legend.get_texts()] if legend is not None else []
        if len(labels) != len(curves):  # a legend given its labels in order names the curves in order
            labels = [line.get_label() for line in curves]
        described = [_curve(line, label) for line, label in zip(curves[:MAX_CURVES], labels)]
        more = _(" and {count} more").format(count=len(curves) - MAX_CURVES) if len(curves) > MAX_CURVES else ""
        drawn.append(n_("{count} curve: {curves}{more}", "{count} curves: {curves}{more}", len(curves)).format(
            count=len(curves), curves="; ".join(described), more=more))
    bars = sum(len(container.patches) for container in ax.containers)
    if bars:
        drawn.append(_("{count} bars").format(count=bars))
    points = sum(len(collection.get_offsets()) for collection in ax.collections
                 if type(collection).__name__ == "PathCollection")
    if points:
        drawn.append(_("{count} points").format(count=points))
    texts = [" ".join(text.get_text().split()) for text in ax.texts if text.get_text().strip()]
    if texts and not drawn:
        shown = ", ".join(texts[:MAX_LABELS])
        more = _(" and {count} more").format(count=len(texts) - MAX_LABELS) if len(texts) > MAX_LABELS else ""
        drawn.append(_("labels {labels}").format(labels=shown) + more)
    axes = [_axis(ax, "x"), _axis(ax, "y")] if ax.axison else []
    axes = [text for text in axes if text]
    title = ax.get_title().strip()
    text = (_quoted(title) + ": " if title else "") + ("; ".join(drawn) or _("an empty panel"))
    return text + (f" ({', '.join(axes)})" if axes else "")


def _colour_scale(fig, bars):
    scales = []
    for bar_ax in sorted(bars, key=lambda ax: ax.get_position().x0):
        bar = next(mappable.colorbar for ax in fig.axes for mappable in [*ax.images, *ax.collections]
                   if getattr(mappable, "colorbar", None) is not None and mappable.colorbar.ax is bar_ax)
        low, high = bar.mappable.get_clim()
        label = bar.ax.get_ylabel() or bar.ax.get_xlabel()
        if label:
            scale = _("colour scale {label} from {low} to {high}").format(label=_quoted(label), low=_number(low),
                                                                          high=_number(high))
        else:
            scale = _("colour scale from {low} to {high}").format(low=_number(low), high=_number(high))
        scales.append(scale)
    if not scales:
        return ""
    if len(scales) == 1:
        shared = _(", shared by every panel") if len(fig.axes) - len(bars) > 1 else ""
        return scales[0][0].upper() + scales[0][1:] + shared + "."
    if len(set(scales)) == 1:
        return _("Every panel has its own {scale}.").format(scale=scales[0])
    return _("Each panel has its own colour scale.")


def describe_figure(fig):
    """A figure's alt text, from what it holds (see the module's docstring); ``set_alt`` overrides it."""
    own = getattr(fig, ALT, None)
    if own:
        return own
    bars = _colour_bars(fig)
    panels = [ax for ax in fig.axes if ax not in bars and ax.get_visible()]
    suptitle = fig.get_suptitle().strip() if hasattr(fig, "get_suptitle") else ""
    opening = _("Figure {title}").format(title=_quoted(suptitle)) if suptitle else _("Figure")
    if len(panels) == 1:
        sentences = [f"{opening}: {_panel(panels[0])}."]
    else:
        sentences = [_("{figure} of {count} panels.").format(figure=opening, count=len(panels))]
        for number, ax in enumerate(panels[:MAX_PANELS], start=1):
            sentences.append(_("Panel {number}, {panel}.").format(number=number, panel=_panel(ax)))
        if len(panels) > MAX_PANELS:
            sentences.append(_("(First {shown} of {count} panels described.)").format(shown=MAX_PANELS,
                                                                                      count=len(panels)))
    scale = _colour_scale(fig, bars)
    if scale:
        sentences.append(scale)
    return " ".join(sentences)
