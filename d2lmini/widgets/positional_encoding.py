"""The sinusoidal positional encoding, and what attention over positions alone makes of it."""

import math
from dataclasses import dataclass

import numpy as np
import torch
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.ticker import MaxNLocator

from ..attention import DotProductAttention
from ..i18n import N_, _, number
from ..plotting import CMAP
from ..positional import PositionalEncoding
from .declaration import Declaration, IntSlider, LogSlider, Result
from .explorer import Explorer
from .export import Recipe
from .figure import CellImage

__all__ = ["SinusoidalPositions", "explore_positional_encoding"]

ENCODING_CMAP = "RdBu_r"  # diverging: P lies in [-1, 1], and 0 is white
# The caption, which the page script says too (script_words).
CAPTION = N_("d = {d}, base = {base}: wavelengths from 2π ≈ 6.28 to {longest} positions")


def _cells(ax, shape, cmap, norm, extent):
    """A CellImage of ``shape`` (rows, columns) that fills ``ax`` over ``extent`` (left, right, bottom, top)."""
    image = CellImage(ax, cmap=cmap, norm=norm, extent=extent)
    image.set_data(np.zeros(shape))
    ax.add_image(image)
    ax.set(xlim=extent[:2], ylim=extent[2:])
    return image


def _number(value):
    """Three significant digits, as the base slider shows them: 3.16, 562, 17,800 (with the learner's
    language's marks: 3,16 and 17.800 in Portuguese)."""
    rounded = float(f"{value:.3g}")
    return number(rounded, "g") if rounded < 1000 else number(rounded, ",.0f")


@dataclass(frozen=True)
class PositionalSettings:
    d: int = 32
    base: float = 10000.0


@dataclass(frozen=True)
class PositionalResult(Result):
    d: int
    base: float
    encoding: torch.Tensor  # (positions, d): P


class SinusoidalPositions(Declaration):
    """The encoding P (positions × columns) next to softmax(P Pᵀ / √d), as d and the base change.

    P comes from ``d2lmini.PositionalEncoding``, the weights from
    ``d2lmini.DotProductAttention`` with P as queries, keys and values: what
    self-attention does with the positions alone. The encoding's columns are
    drawn on a fixed axis, column c at c / d, so that a new d changes one
    image, not the axes: column c's angle is position / base^(c / d) for even c.
    The colour scale starts fitted to the weights: over 64 keys the largest weight is often under
    0.1, and on the fixed 0-to-1 scale the attention panel would look empty.
    """

    chapter = 7
    title = N_("Positional encoding explorer")
    # Named "PositionalEncodingExplorer" on the page and in its text form, as before the class took its
    # own name (``PositionalEncoding`` is the book's ``nn.Module``, which this explorer draws).
    name = "PositionalEncodingExplorer"
    controls = (
        IntSlider("d", N_("encoding dimension d"), 2, 128, 2),
        # Quarter powers of ten: 10, 100, ..., 100,000 lie on the slider's grid.
        LogSlider("base", N_("base"), 10, 0.5, 5, 0.25, readout=",.3r"),
    )
    Settings = PositionalSettings
    figsize = (7.2, 3)
    filename = "positional_encoding.png"
    repr_controls = ("d", "base")
    colour_scale = "fit"
    NUM_POSITIONS = 64
    page_script = "positional.js"  # 1,216 states of up to 12,288 cells: the page computes them
    script_words = {"caption": CAPTION}

    def compute(self, settings):
        d, base = settings.d, settings.base
        P = PositionalEncoding(d, 0.0, max_len=self.NUM_POSITIONS, base=base).P  # (1, positions, d)
        attention = DotProductAttention(dropout=0.0)
        attention(P, P, P)
        weights = attention.attention_weights[0]  # (queries, keys): position i attending to position j
        last_sine = 2 * ((d - 1) // 2)  # the slowest column pair starts here
        longest = 2 * math.pi * base ** (last_sine / d)
        caption = _(CAPTION).format(d=d, base=_number(base), longest=_number(longest))
        return PositionalResult(weights, caption, d=d, base=base, encoding=P[0])

    def describe(self, result):
        """Both panels in words: the encoding as the caption gives it (d, the base, the wavelengths), then
        the weights. The weights alone read the same at neighbouring settings, which a screen reader would
        announce as no change at all."""
        return f"{result.caption}. {super().describe(result)}"

    def build(self, blit):
        return PositionalView(blit, self.NUM_POSITIONS)

    def page_data(self):
        """The number of positions: the page computes P and the weights from the settings alone."""
        return {"positions": self.NUM_POSITIONS}

    def recipe(self, result):
        inputs = {"d": result.d, "base": result.base, "num_positions": self.NUM_POSITIONS}
        return Recipe(inputs, """
            P = d2l.PositionalEncoding(int(saved["d"]), 0.0, max_len=int(saved["num_positions"]),
                                       base=float(saved["base"])).P  # (1, positions, d)
            attention = d2l.DotProductAttention(dropout=0.0)
            attention(P, P, P)  # the positions alone, as queries, keys and values
            weights = attention.attention_weights[0]  # (queries, keys): position i attending to position j
        """)


class PositionalView:
    """The encoding on its own fixed scale on the left; the weights on the explorer's scale on the right."""

    def __init__(self, blit, n):
        ax_code, ax_weights = blit.figure.subplots(1, 2)
        norm = Normalize(-1, 1)  # every entry of P is a sine or a cosine
        self.code = blit.animate(_cells(ax_code, (n, 2), ENCODING_CMAP, norm, (0, 1, n - 0.5, -0.5)))
        ax_code.set(xlabel=_("column / d  (fast → slow)"), ylabel=_("position i"), title=_("encoding P"))
        blit.figure.colorbar(ScalarMappable(norm, ENCODING_CMAP), ax=ax_code, shrink=0.9, label=_("P[i, column]"))
        # As blit.heatmap draws one, on the explorer's colour scale, but drawn cell by cell.
        self.heatmap = blit.animate(_cells(ax_weights, (n, n), CMAP, blit.norm, (-0.5, n - 0.5, n - 0.5, -0.5)))
        ax_weights.set(xlabel=_("Keys (position j)"), ylabel=_("Queries (position i)"),
                       title=_("positions alone: softmax(P Pᵀ / √d)"))
        ax_weights.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax_weights.yaxis.set_major_locator(MaxNLocator(integer=True))
        blit.colorbar(ax_weights)

    def update(self, result):
        self.code.set_data(result.encoding.numpy())
        self.heatmap.set_data(result.weights.numpy())


def explore_positional_encoding(d=32, base=10000.0):
    """The sinusoidal encoding for dimension d and a base, and softmax(P Pᵀ / √d) over 64 positions."""
    declaration = SinusoidalPositions()
    return Explorer(declaration, declaration.checked_settings(d=d, base=base))
