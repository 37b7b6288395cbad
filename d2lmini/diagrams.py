"""Labelled diagrams of the ideas the chapters teach, drawn in code.

One function per diagram, each returning a matplotlib ``Figure``:

- ``draw_queries_keys_values``: one query scored against a few keys, the
  softmax into weights that sum to 1, and the output as the weighted sum of
  the values (chapter 00);
- ``draw_additive_scorer``: the additive score ``w_vᵀ tanh(W_q q + W_k k)``
  piece by piece, with the size of each piece (chapter 03);
- ``draw_causal_mask``: the causal mask as a grid, beside the two classic
  mistakes (chapter 02);
- ``draw_multihead_split_merge``: multi-head attention as one flow, the
  features split into heads that attend side by side, then merged and mixed
  by W_o (chapter 05, beside its step-by-step figure of the reshapes).

Each figure is closed in pyplot as soon as it is made, so none stays open
there: in Jupyter a diagram is shown once, as the cell's value (end the cell
with the call, or pass the figure to ``display``), and a script that draws one
leaves pyplot's figure list as it was. Each diagram is the same on every call:
its numbers come from a fixed example, never from a random draw.
"""

import matplotlib.pyplot as plt
import torch
from matplotlib import colormaps
from matplotlib.colors import ListedColormap, to_rgba
from matplotlib.patches import FancyBboxPatch, Rectangle

from ._checks import check_number
from .figure_alt import set_alt
from .i18n import _, number
from .masking import attention_mask
from .plotting import CMAP, MASKED_CELLS, head_colour

# Chapter 00's first four keys and values, and its score a(q, k) = -(q - k)² / 2, for one query.
EXAMPLE_QUERY = 1.2
EXAMPLE_KEYS = (0.0, 1.0, 2.0, 3.0)
EXAMPLE_VALUES = (0.0, 2.0, 1.0, 4.0)

QUERY_COLOUR, KEY_COLOUR, VALUE_COLOUR = "#cfe2ff", "#ffe0cc", "#d8f0d2"
ARROW = {"arrowstyle": "-|>", "color": "#444444", "lw": 1.2, "shrinkA": 2, "shrinkB": 2}
ALLOWED_COLOUR = colormaps[CMAP](0.3)  # a cell where the query may attend: blue, so the red outlines
# of the wrong cells stand out for a red-green colour-blind eye too (a green would not)
MISTAKE_EDGE = "#cf222e"  # the outline of a cell that a wrong mask gets wrong


def _figure(figsize, layout="constrained"):
    """A new figure that pyplot does not keep.

    Made through pyplot, so that its backend is loaded (Jupyter's inline
    backend registers the PNG picture of a figure when it loads), then closed,
    so that the backend does not draw it a second time at the end of the cell.
    """
    fig = plt.figure(figsize=figsize, layout=layout)
    plt.close(fig)
    return fig


def _box(ax, x, y, text, colour="white", width=1.0, height=0.5, fontsize=11):
    """A rounded box centred on (x, y) with ``text`` in it; returns the text artist."""
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                                boxstyle="round,pad=0.02,rounding_size=0.08", facecolor=colour,
                                edgecolor="#555555", linewidth=1))
    return ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


def _lighter(colour, amount=0.75):
    """``colour`` mixed with ``amount`` of white: a background that black text reads on."""
    red, green, blue, _ = to_rgba(colour)
    return tuple(channel + (1 - channel) * amount for channel in (red, green, blue))


def _arrow(ax, start, end, **style):
    ax.annotate("", xy=end, xytext=start, arrowprops={**ARROW, **style})


def _example_weights():
    """Scores a(q, k_i) and weights α_i of the fixed example, both of shape (keys,)."""
    keys = torch.tensor(EXAMPLE_KEYS)
    scores = -0.5 * (EXAMPLE_QUERY - keys) ** 2  # (keys,)
    return scores, torch.softmax(scores, dim=0)


def draw_queries_keys_values():
    """One query, four keys and their values: score, softmax, weighted sum, every piece labelled.

    The numbers are chapter 00's first four keys and values, with its score
    a(q, k) = -(q - k)² / 2 and the query 1.2: the weights α_i are the softmax
    of the scores and the output is Σ α_i v_i. Each weight is coloured on the collection's
    colour map (0 to 1). Returns the figure.
    """
    scores, weights = _example_weights()
    output = float(weights @ torch.tensor(EXAMPLE_VALUES))
    colours = colormaps[CMAP]
    num_keys = len(EXAMPLE_KEYS)
    rows = [num_keys - 1 - i for i in range(num_keys)]  # key 1 at the top

    fig = _figure((9.5, 3.6))
    ax = fig.add_subplot()
    centre = (num_keys - 1) / 2
    _box(ax, 0.6, centre, _("query\n$q$ = {query:g}").format(query=EXAMPLE_QUERY), QUERY_COLOUR, width=1.1, height=0.8)
    for i, (row, key, value, score, weight) in enumerate(zip(rows, EXAMPLE_KEYS, EXAMPLE_VALUES, scores,
                                                             weights), start=1):
        _box(ax, 2.4, row, f"$k_{i}$ = {number(key, 'g')}", KEY_COLOUR)
        _box(ax, 4.5, row, f"$a(q, k_{i})$ = {number(float(score), '.2f')}", width=1.9)
        _arrow(ax, (1.15, centre), (1.9, row), color="#1f4e99", lw=0.8)  # q meets each key
        _arrow(ax, (2.9, row), (3.55, row))
        _arrow(ax, (5.45, row), (6.1, row))
        face = colours(float(weight))
        text = "white" if weight < 0.5 else "black"  # viridis is dark below the middle
        label = _box(ax, 7.3, row, f"$\\alpha_{i}$ = {number(float(weight), '.2f')}", face, width=1.3)
        label.set_color(text)
        _box(ax, 8.9, row, f"$v_{i}$ = {number(value, 'g')}", VALUE_COLOUR)
        ax.text(8.1, row, "×", ha="center", va="center", fontsize=12)
        _arrow(ax, (9.4, row), (10.35, centre))
    ax.add_patch(Rectangle((6.25, -0.35), 0.3, num_keys - 0.3, facecolor="#f2f2f2", edgecolor="#888888"))
    ax.text(6.4, centre, _("softmax over the keys"), rotation=90, ha="center", va="center", fontsize=9)
    _box(ax, 11.0, centre, _("output\n$\\sum_i \\alpha_i v_i$\n= {output:.2f}").format(output=output), QUERY_COLOUR,
         width=1.25,
         height=1.1)
    ax.text(0.6, centre + 0.5, _("meets each key"), ha="center", fontsize=9, color="#1f4e99")
    ax.text(2.4, num_keys - 0.35, _("keys"), ha="center", fontsize=10, color="#9a4a12")
    ax.text(4.5, num_keys - 0.35, _("scores"), ha="center", fontsize=10)
    ax.text(7.3, num_keys - 0.35, _("weights: $\\sum_i \\alpha_i$ = {total:.2f}").format(total=float(weights.sum())),
            ha="center",
            fontsize=10)
    ax.text(8.9, num_keys - 0.35, _("values"), ha="center", fontsize=10, color="#2d6a1f")
    ax.text(0.0, -0.85, _("$a(q, k) = -(q - k)^2 / 2$: a key near the query scores high and gets a large weight"),
            fontsize=9, color="#444444")
    ax.set(xlim=(-0.1, 11.8), ylim=(-1.0, num_keys))
    ax.set_axis_off()
    pairs = "; ".join(_("k{i} = {key:g}: score {score:.2f}, weight {weight:.2f}, value {value:g}").format(
                          i=i, key=key, score=float(score), weight=float(weight), value=value)
                      for i, (key, value, score, weight)
                      in enumerate(zip(EXAMPLE_KEYS, EXAMPLE_VALUES, scores, weights), start=1))
    return set_alt(fig, _("Diagram: the query q = {query:g} is scored against {count} keys with "
                          "a(q, k) = -(q - k)² / 2, the softmax turns the scores into weights that sum to 1, and the "
                          "output is the weighted sum of the values, {output:.2f}. {pairs}.").format(
                       query=EXAMPLE_QUERY, count=num_keys, output=output, pairs=pairs))


def draw_additive_scorer():
    """The additive score a(q, k) = w_vᵀ tanh(W_q q + W_k k), each piece labelled with its size.

    The query (size d_q) and the key (size d_k) are carried into the same
    d_h-dimensional space by W_q (d_h × d_q) and W_k (d_h × d_k), added, passed
    through tanh, and turned into one number by w_vᵀ (1 × d_h). Below, the same steps
    for a batch, where broadcasting forms every (query, key) sum. Returns the
    figure.
    """
    fig = _figure((9.5, 3.4))
    ax = fig.add_subplot()
    top, bottom, middle = 2.0, 0.6, 1.3
    _box(ax, 0.6, top, "$q \\in \\mathbb{R}^{d_q}$", QUERY_COLOUR, width=1.1)
    _box(ax, 0.6, bottom, "$k \\in \\mathbb{R}^{d_k}$", KEY_COLOUR, width=1.1)
    _box(ax, 2.3, top, "$W_q$: $d_h \\times d_q$", width=1.3)
    _box(ax, 2.3, bottom, "$W_k$: $d_h \\times d_k$", width=1.3)
    _box(ax, 4.2, top, "$W_q\\, q \\in \\mathbb{R}^{d_h}$", QUERY_COLOUR, width=1.5)
    _box(ax, 4.2, bottom, "$W_k\\, k \\in \\mathbb{R}^{d_h}$", KEY_COLOUR, width=1.5)
    _box(ax, 5.75, middle, "+", width=0.5, fontsize=14)
    _box(ax, 7.0, middle, "tanh\n$\\mathbb{R}^{d_h}$", width=0.9, height=0.8)
    _box(ax, 8.5, middle, "$w_v^\\top$: $1 \\times d_h$", width=1.3)
    _box(ax, 10.2, middle, _("$a(q, k)$\na scalar"), "#f2f2f2", width=1.3, height=0.8)
    for row in (top, bottom):
        _arrow(ax, (1.15, row), (1.65, row))
        _arrow(ax, (2.95, row), (3.45, row))
        _arrow(ax, (4.95, row), (5.5, middle))
    _arrow(ax, (6.0, middle), (6.55, middle))
    ax.text(6.27, middle + 0.12, "$\\mathbb{R}^{d_h}$", ha="center", fontsize=9)
    _arrow(ax, (7.45, middle), (7.85, middle))
    _arrow(ax, (9.15, middle), (9.55, middle))
    ax.text(0.05, -0.25, _("A batch: $W_q q$ as (B, n_q, 1, d_h) + $W_k k$ as (B, 1, n_k, d_h) broadcast to "
                           "(B, n_q, n_k, d_h); tanh and $w_v^\\top$ then give the scores (B, n_q, n_k)."),
            fontsize=9, color="#444444")
    ax.set(xlim=(0.0, 11.0), ylim=(-0.45, 2.45))
    ax.set_axis_off()
    return set_alt(fig, _("Diagram of the additive score a(q, k) = w_vᵀ tanh(W_q q + W_k k): the query q (size d_q) "
                          "goes through W_q (d_h × d_q) and the key k (size d_k) through W_k (d_h × d_k), both into "
                          "size d_h; the two are added, passed through tanh, and w_vᵀ (1 × d_h) turns the result "
                          "into one number, the score. Below: for a batch, W_q q as (B, n_q, 1, d_h) plus W_k k as "
                          "(B, 1, n_k, d_h) broadcast to (B, n_q, n_k, d_h), and the scores are (B, n_q, n_k)."))


def _mask_panel(ax, mask, right, title):
    """One (queries, keys) mask as a grid: allowed cells filled, masked ones hatched grey.

    Cells where ``mask`` differs from ``right`` are outlined in red.
    """
    n = mask.shape[0]
    # Masked cells are not drawn (NaN); the axes' background, hatched as MASKED_CELLS, shows through them.
    ax.patch.set(**MASKED_CELLS)
    ax.imshow(torch.where(mask, 1.0, float("nan")).numpy(), cmap=ListedColormap([ALLOWED_COLOUR]), vmin=0, vmax=1)
    ax.set_xticks(torch.arange(n + 1) - 0.5, minor=True)
    ax.set_yticks(torch.arange(n + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=1)  # a line between cells
    for i, j in (mask != right).nonzero().tolist():
        ax.add_patch(Rectangle((j - 0.45, i - 0.45), 0.9, 0.9, fill=False, edgecolor=MISTAKE_EDGE, linewidth=2))
    ax.set(xticks=range(n), yticks=range(n))
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(_("key $j$ (time →)"))
    ax.set_ylabel(_("query $i$ (time ↓)"))
    ax.tick_params(which="both", length=0, labelsize=9)


def causal_masks(num_steps):
    """The causal mask and the two classic mistakes, each ``(num_steps, num_steps)``, True = may attend.

    Returns a dict: "right" (from ``attention_mask(..., causal=True)``),
    "diagonal masked" (a query may not see its own key) and "flipped" (the
    upper triangle: query i sees itself and every later key, the future).
    """
    check_number(num_steps, "num_steps", 2, 12, integer=True)  # a grid readable in a figure
    right = attention_mask(None, 1, num_steps, num_steps, causal=True)[0]  # (queries, keys)
    eye = torch.eye(num_steps, dtype=torch.bool)
    return {"right": right, "diagonal masked": right & ~eye, "flipped": right.T}


def draw_causal_mask(num_steps=5):
    """The causal mask of ``num_steps`` queries and keys, beside the two classic mistakes.

    Left, the right mask: query i may attend to keys 0..i, its own included
    (the lower triangle with the diagonal); the masked future is hatched grey,
    as in the collection's explorers and diagrams. Right, two small wrong
    panels: the diagonal masked, and the mask flipped so that each query sees
    itself and the future; the cells they get wrong are outlined in red. Returns the figure.
    """
    masks = causal_masks(num_steps)
    fig = _figure((9.5, 3.8), layout="compressed")
    axes = fig.subplots(1, 3, width_ratios=[1.3, 1, 1])
    titles = {"right": _("right: keys 0..i, diagonal included"),
              "diagonal masked": _("wrong: diagonal masked\n(a query cannot see itself)"),
              "flipped": _("wrong: flipped (upper triangle)\n(queries see the future)")}
    for ax, (name, mask) in zip(axes, masks.items()):
        _mask_panel(ax, mask, masks["right"], titles[name])
    fig.legend(handles=[Rectangle((0, 0), 1, 1, facecolor=ALLOWED_COLOUR, label=_("may attend")),
                        Rectangle((0, 0), 1, 1, label=_("masked"), **MASKED_CELLS),
                        Rectangle((0, 0), 1, 1, fill=False, edgecolor=MISTAKE_EDGE, linewidth=2,
                                  label=_("wrong cell"))],
               loc="outside lower center", ncols=3, fontsize=9, frameon=False)
    return set_alt(fig, _("Three {n} × {n} grids of queries (rows) by keys (columns). Left, the "
                          "right causal mask: each query may attend to the keys up to and including its own "
                          "position (the lower triangle with the diagonal); the rest is hatched grey, masked. "
                          "Middle, a wrong mask with the diagonal masked too: a query cannot see itself. Right, a "
                          "wrong mask flipped to the upper triangle: queries see the future. The cells each wrong "
                          "mask gets wrong are outlined in red.").format(n=num_steps))


def _feature_strip(ax, x, y, num_heads, head_width, width=1.5, height=0.3):
    """A row of ``num_heads * head_width`` feature cells centred on (x, y), each coloured by its head."""
    num_features = num_heads * head_width
    cell = width / num_features
    for j in range(num_features):
        ax.add_patch(Rectangle((x - width / 2 + j * cell, y - height / 2), cell, height,
                               facecolor=head_colour(j // head_width), edgecolor="white", linewidth=0.5))


def draw_multihead_split_merge():
    """Multi-head attention as one flow: project, split into heads, attend per head, merge, mix by W_o.

    Drawn for chapter 05's example, d_model = 16 features in h = 4 heads of
    width d_head = 4. Each feature column is coloured by the head it goes to,
    with the colours of chapter 05's shape tracer: the split (``transpose_qkv``)
    gives head i the columns i·d_head to (i + 1)·d_head − 1 as an example of
    its own, and the merge (``transpose_output``) puts them back side by side,
    which is the concatenation of the heads. Returns the figure.
    """
    num_heads, head_width = 4, 4
    fig = _figure((9.5, 3.8))
    ax = fig.add_subplot()
    centre = (num_heads - 1) / 2
    _box(ax, 0.6, centre, "$X$\n(B, n, $d_q$)", width=1.1, height=0.8)
    _box(ax, 2.25, centre, "$W_q, W_k, W_v$\n$d_\\mathrm{model} \\times d_q$", width=1.5, height=0.8)
    _feature_strip(ax, 4.05, centre, num_heads, head_width)
    ax.text(4.05, centre + 0.35, "Q, K, V\n(B, n, $d_\\mathrm{model}$)", ha="center", va="bottom", fontsize=10)
    ax.text(4.05, centre - 0.3, _("features coloured\nby their head"), ha="center", va="top", fontsize=9,
            color="#444444")
    for i in range(num_heads):
        row = num_heads - 1 - i
        _box(ax, 6.9, row, _("head {i}: attention\nover (n, d_head)").format(i=i), _lighter(head_colour(i)), width=1.8,
             height=0.7, fontsize=9)
        _arrow(ax, (4.85, centre), (6.0, row))
        _arrow(ax, (7.8, row), (8.95, centre))
    ax.text(5.4, num_heads - 0.4, _("split\ntranspose_qkv\n(B·h, n, d_head)"), ha="center", fontsize=9)
    ax.text(8.4, num_heads - 0.4, _("merge\ntranspose_output\n(B, n, h·d_head)"), ha="center", fontsize=9)
    _feature_strip(ax, 9.75, centre, num_heads, head_width)
    ax.text(9.75, centre + 0.35, _("heads side by side\n(B, n, $d_\\mathrm{model}$)"), ha="center", va="bottom",
            fontsize=10)
    ax.text(9.75, centre - 0.3, _("= the concatenation"), ha="center", va="top", fontsize=9, color="#444444")
    _box(ax, 11.4, centre, "$W_o$\n$d_\\mathrm{model}$\n$\\times d_\\mathrm{model}$", width=1.0, height=1.1)
    _box(ax, 12.75, centre, _("output\n(B, n, $d_\\mathrm{model}$)"), "#f2f2f2", width=1.2, height=0.8)
    for start, end in ((1.15, 1.5), (3.0, 3.3), (10.55, 10.9), (11.9, 12.15)):
        _arrow(ax, (start, centre), (end, centre))
    ax.text(0.05, -0.6, _("Here $d_\\mathrm{model}$ = 16 features and h = 4 heads of width $d_\\mathrm{head}$ = "
                          "$d_\\mathrm{model}$ / h = 4: each head attends "
                          "with its own 4 columns,\nall heads at once, as extra examples of the batch (B·h)."),
            fontsize=9,
            color="#444444", va="top")
    ax.set(xlim=(0.0, 13.4), ylim=(-1.3, num_heads + 0.3))
    ax.set_axis_off()
    return set_alt(fig, _("Diagram of multi-head attention as one flow: X of shape (B, n, d_q) is projected by W_q, "
                          "W_k and W_v to Q, K and V of shape (B, n, d_model), whose 16 feature columns are coloured "
                          "by head; the split (transpose_qkv) gives each of 4 heads its own 4 columns as extra "
                          "examples of the batch, (B·h, n, d_head); each head attends on its own; the merge "
                          "(transpose_output) puts the heads side by side again, (B, n, d_model), which is their "
                          "concatenation; W_o mixes them into the output of shape (B, n, d_model)."))

