"""Where each feature of a (1, T, d_model) tensor goes when multi-head attention folds its heads into the batch."""

import functools
from dataclasses import dataclass

import numpy as np
import torch
from matplotlib.colors import to_rgba

from ..attention import MultiHeadAttention
from ..i18n import N_, _, n_
from ..plotting import HEAD_COLOURS, head_colour  # noqa: F401 (chapter 05 imports head_colour from here)
from .declaration import Checkbox, Choice, Declaration, IntSlider, Result, options
from .explorer import Explorer
from .figure import CellImage

__all__ = ["ShapeTracer", "explore_shape_tracer"]

_HEAD_RGBA = np.array([to_rgba(colour) for colour in HEAD_COLOURS])  # (8, 4)
_DARK = np.array([colour in {"#332288", "#117733", "#882255"} for colour in HEAD_COLOURS])  # white digits

# Digits 0-9 as 3 x 5 pixels. Labels drawn as text cost a millisecond or more each; pixels in the
# cells' own image cost nothing, so a cell's position is painted into it.
FONT = {digit: np.array([[c == "#" for c in row] for row in rows.split()]) for digit, rows in enumerate([
    "### #.# #.# #.# ###", ".#. ##. .#. .#. ###", "### ..# ### #.. ###", "### ..# ### ..# ###",
    "#.# #.# ### ..# ..#", "### #.. ### ..# ###", "### #.. ### #.# ###", "### ..# .#. .#. .#.",
    "### #.# ### #.# ###", "### #.# ### ..# ###"])}
D_MODEL = 8  # the features of X
MAX_T = 5  # the most positions: the panels are sized for it
CELL = 8  # pixels per cell side: 7 of colour, then 1 white line between cells
DIGIT_AT = (1, 2)  # the digit's top-left pixel in its cell


def tensor_picture(positions, columns, head_width):
    """RGBA pixels of a tensor whose cells carry their position (the digit) and feature column (the colour).

    ``positions`` and ``columns`` have one shape, (G, R, C): the leading axis
    is drawn as G blocks of R rows and C columns, side by side left to right,
    one blank column apart. Feature column j belongs to head ``j // head_width``,
    whose colour fills the cell. Returns an array (R·CELL, (G·(C + 1) - 1)·CELL, 4).
    """
    positions, columns = np.asarray(positions), np.asarray(columns)
    G, R, C = positions.shape
    cells = np.zeros((R, G * (C + 1) - 1, 4))  # transparent between blocks
    digits = np.full((R, G * (C + 1) - 1), -1)
    for g in range(G):
        heads = columns[g] // head_width  # (R, C)
        cells[:, g * (C + 1):g * (C + 1) + C] = _HEAD_RGBA[heads]
        digits[:, g * (C + 1):g * (C + 1) + C] = positions[g]
    return _paint(cells, digits)


def _paint(cells, digits):
    """Cells (R, W, 4) as CELL x CELL squares with a white line right and below, and the digit ``digits[r, w]``
    (none where it is -1) in white on a dark colour, in black on a light one."""
    R, W, _ = cells.shape
    pixels = cells.repeat(CELL, axis=0).repeat(CELL, axis=1)
    pixels[CELL - 1::CELL] = pixels[:, CELL - 1::CELL] = 0
    dark = (np.abs(cells[..., None, :3] - _HEAD_RGBA[None, None, _DARK, :3]).sum(-1) < 1e-6).any(-1)  # (R, W)
    top, left = DIGIT_AT
    for (r, w), digit in np.ndenumerate(digits):
        if digit >= 0:
            ink = 1.0 if dark[r, w] else 0.0
            block = pixels[r * CELL + top:r * CELL + top + 5, w * CELL + left:w * CELL + left + 3]
            block[FONT[digit]] = (ink, ink, ink, 1.0)
    return pixels


@functools.cache
def _layer(num_heads):
    """A ``MultiHeadAttention`` with ``num_heads`` heads over D_MODEL features, for its ``transpose_qkv``."""
    with torch.random.fork_rng(devices=[]):  # building it draws W_o: leave the notebook's numbers alone
        return MultiHeadAttention(D_MODEL, num_heads, dropout=0.0)


# What compute and describe say, which the page script says too (ShapeTracer.script_words).
RESHAPE = N_("reshape alone: heads mix positions")
CAPTION = N_("h = {h}, d_head = {d_head}, T = {T}: (1, {T}, {d}) → ({h}, {T}, {d_head}) by {how}")
BLOCK = N_("block {b} holds {heads} at {positions}")
FIRST_BLOCKS = N_(" (first 2 of {h} blocks).")


def heads_held(count):
    return n_("head {heads}", "heads {heads}", count)


def positions_held(count):
    return n_("position {positions}", "positions {positions}", count)


def heads_of_width(count):
    # The English says "1 heads" as it always has (the page's summaries); a translation has both forms.
    return n_("{h} heads of width {d_head}: ", "{h} heads of width {d_head}: ", count)


@dataclass(frozen=True)
class TracerSettings:
    num_heads: int = 2
    T: int = 4
    transpose: bool = True


@dataclass(frozen=True)
class TracerResult(Result):
    d_head: int
    X: tuple  # (positions, columns), (1, T, d_model) each: the position and feature column of each cell of X
    positions: torch.Tensor  # (B·h, T, d_head): the position each cell of the folded batch came from
    columns: torch.Tensor  # (B·h, T, d_head): its feature column in X


class ShapeTracer(Declaration):
    """A (1, T, d_model) tensor whose cells know their position and feature column, and where
    ``transpose_qkv`` puts them: the (B·h, T, d_head) batch drawn as h blocks side by side.

    Each cell is coloured by the head its feature column belongs to (column j
    goes to head j // d_head) and labelled with its position. With the transpose
    (``d2lmini.MultiHeadAttention.transpose_qkv``) block b holds one head, one
    colour, every position in its own row; without it (a bare ``reshape``), a
    block mixes heads and positions. The panels are sized once for the largest
    T and number of heads; a smaller tensor leaves the rest blank.
    """

    chapter = 5
    title = N_("Shape tracer explorer")
    controls = (
        Choice("num_heads", N_("heads h"), options(h for h in range(1, D_MODEL + 1) if D_MODEL % h == 0),
               style="slider"),
        IntSlider("T", N_("positions T"), 2, MAX_T),
        Checkbox("transpose", N_("with transpose")),
    )
    Settings = TracerSettings
    figsize = (7.6, 2.6)
    filename = "shape_tracer.png"
    repr_controls = ("num_heads", "T", "transpose")
    shows_weights = False  # cells coloured by head: no colour scale or map to choose, nothing to rebuild
    page_script = "shape_tracer.js"  # 32 states, but each of its pictures is 8,320 RGBA pixels: the page paints them
    script_words = {"reshape": RESHAPE, "caption": CAPTION, "heads": heads_held, "positions": positions_held,
                    "block": BLOCK, "width": heads_of_width, "first blocks": FIRST_BLOCKS}

    def compute(self, settings):
        h, T, transpose, d = settings.num_heads, settings.T, settings.transpose, D_MODEL
        d_head = d // h
        positions = torch.arange(T).repeat_interleave(d).reshape(1, T, d)  # X[0, t, j] = t
        columns = torch.arange(d).repeat(T).reshape(1, T, d)  # X[0, t, j] = j
        if transpose:
            folded = [_layer(h).transpose_qkv(X) for X in (positions, columns)]  # (h, T, d_head) each
            how = "transpose_qkv"
        else:
            folded = [X.reshape(h, T, d_head) for X in (positions, columns)]  # the bug: heads mix positions
            how = _(RESHAPE)
        caption = _(CAPTION).format(h=h, d_head=d_head, T=T, d=d, how=how)
        # No attention weights here: the folded positions stand in as the tensor drawn.
        return TracerResult(folded[0].float(), caption, d_head=d_head, X=(positions, columns),
                            positions=folded[0], columns=folded[1])

    def build(self, blit):
        return TracerView(blit)

    def page_data(self):
        """What the page paints with: the sizes, each head's colour (8-bit RGBA) and whether its digits
        are white, and the digits' pixels."""
        return {"d_model": D_MODEL, "max_t": MAX_T, "cell": CELL, "digit_at": list(DIGIT_AT),
                "colours": np.round(255 * _HEAD_RGBA).astype(int).tolist(), "dark": _DARK.tolist(),
                "font": [FONT[digit].tolist() for digit in range(10)]}

    def describe(self, result):
        """Which heads and positions each block of the folded batch holds, for its first two blocks."""
        d_head = result.d_head
        blocks = []
        for b, (positions, columns) in enumerate(zip(result.positions, result.columns)):
            if b == 2:
                break
            heads = sorted(set((columns // d_head).flatten().tolist()))
            where = sorted(set(positions.flatten().tolist()))
            held = heads_held(len(heads)).format(heads=", ".join(map(str, heads)))
            at = positions_held(len(where)).format(positions=", ".join(map(str, where)))
            blocks.append(_(BLOCK).format(b=b, heads=held, positions=at))
        h = D_MODEL // d_head
        heads = heads_of_width(h).format(h=h, d_head=d_head)
        ending = _(FIRST_BLOCKS).format(h=h) if h > 2 else "."
        return heads + "; ".join(blocks) + ending


class TracerView:
    """X on the left; the folded batch on the right, and under it one cell per head."""

    def __init__(self, blit):
        d = D_MODEL
        fold_width = 2 * d - 1  # d columns of the folded batch and at most d - 1 blank ones between blocks
        grid = blit.figure.add_gridspec(2, 2, width_ratios=[d, fold_width], height_ratios=[MAX_T, 1])
        ax_x, ax_fold = blit.figure.add_subplot(grid[0, 0]), blit.figure.add_subplot(grid[0, 1])
        ax_legend = blit.figure.add_subplot(grid[1, 1])
        self.images = {}
        for name, ax, rows, columns in (("X", ax_x, MAX_T, d), ("fold", ax_fold, MAX_T, fold_width),
                                        ("legend", ax_legend, 1, 2 * d - 1)):
            extent = (-0.5, columns - 0.5, rows - 0.5, -0.5)
            image = CellImage(ax, extent=extent)  # 8-bit RGBA, drawn as it is
            image.set_data(np.zeros((rows * CELL, columns * CELL, 4), np.uint8))
            ax.add_image(image)
            ax.set(xlim=extent[:2], ylim=extent[2:], aspect="equal")
            ax.set(xticks=[], yticks=[])
            ax.spines[:].set_visible(False)
            self.images[name] = blit.animate(image)
        ax_x.set_title(_("X (B, T, d_model): row = position"), fontsize=9)
        ax_fold.set_title(_("(B·h, T, d_head): block b = batch row b"), fontsize=9)
        ax_legend.text(-0.7, 0, _("heads"), ha="right", va="center", fontsize=9)
        ax_x.set_xlabel(_("digit = position, colour = head"), fontsize=8)

    def update(self, result):
        d_head = result.d_head
        h = D_MODEL // d_head
        for name, (positions, columns) in (("X", result.X), ("fold", (result.positions, result.columns))):
            image = self.images[name]
            canvas = np.zeros(image.get_array().shape, np.uint8)
            picture = tensor_picture(positions, columns, d_head)
            canvas[:picture.shape[0], :picture.shape[1]] = np.round(255 * picture)
            image.set_data(canvas)
        # The legend: one cell per head, one blank apart, numbered by head.
        legend = self.images["legend"]
        canvas = np.zeros(legend.get_array().shape, np.uint8)
        heads = torch.arange(h).reshape(h, 1, 1)  # (h, 1, 1): block b is head b
        picture = tensor_picture(heads, heads * d_head, d_head)
        canvas[:, :picture.shape[1]] = np.round(255 * picture)
        legend.set_data(canvas)


def explore_shape_tracer(num_heads=2, T=4, transpose=True):
    """Where transpose_qkv puts each feature of a (1, T, 8) tensor, with or without its transpose."""
    declaration = ShapeTracer()
    return Explorer(declaration, declaration.checked_settings(num_heads=num_heads, T=T, transpose=transpose))
