"""Per-head self-attention weights over six positions with random embeddings, on one shared colour scale."""

import dataclasses
import math
from dataclasses import dataclass

import torch

from .._checks import check_choice
from ..attention import MultiHeadAttention
from ..i18n import N_, _, n_
from ..masking import attention_mask
from ..plotting import describe_weights
from .declaration import Checkbox, Choice, Declaration, IntSlider, Result, Row, numbered, options
from .explorer import Explorer
from .export import Recipe
from .figure import masked_weights

__all__ = ["MultiHead", "explore_multihead"]

TOKENS = ("0", "1", "2", "3", "4", "5")  # positions
MAX_PANELS = 8  # the most heads offered
MAX_COLUMNS = 4  # panels in a row of the grid


def grid(num_panels):
    """(rows, columns) of the grid of ``num_panels`` panels."""
    columns = min(num_panels, MAX_COLUMNS)
    return math.ceil(num_panels / columns), columns


def figsize_of(num_panels):
    """(width, height) in inches of the grid of ``num_panels`` panels and its colorbar."""
    rows, columns = grid(num_panels)
    return 2.1 * columns + 1.4, 2.1 * rows + 0.5


@dataclass(frozen=True)
class MultiHeadSettings:
    num_heads: int = 2
    head: str | int = "all"  # "all", or the index of one head
    causal: bool = False
    valid_len: int = 6


@dataclass(frozen=True)
class MultiHeadResult(Result):
    num_heads: int
    causal: bool
    heads: list  # the heads shown, one per panel
    valid_lens: torch.Tensor  # (1,)


class MultiHead(Declaration):
    """Per-head self-attention weights over six positions, on one shared scale.

    The positions' embeddings are random vectors, not words: the tick labels
    are positions, so no picture suggests a meaning the weights do not have.

    Every number of heads uses the same projections W_q, W_k, W_v (they are
    initialised from one seed): only how their features are split into heads
    changes. Each number of panels (1 for a single head) is a layout, a figure
    of its own (see ``explorer.Explorer``). The heads offered are the divisors
    of ``num_hiddens`` up to ``MAX_PANELS``; ``head`` offers those that
    ``num_heads`` has.
    """

    chapter = 5
    place = 1  # chapter 05 shows it after the shape tracer
    title = N_("Multi-head attention explorer")
    Settings = MultiHeadSettings
    rows = (Row(("num_heads", "head")), Row(("valid_len", "causal")))
    filename = "multihead.png"
    repr_controls = ("num_heads", "head", "causal", "valid_len")

    def __init__(self, num_hiddens=16, seed=0):
        self.num_hiddens, self.seed = num_hiddens, seed
        self.attention(1)  # MultiHeadAttention checks num_hiddens: a bad one raises here
        heads = [h for h in range(1, MAX_PANELS + 1) if num_hiddens % h == 0]
        self.controls = (
            Choice("num_heads", N_("heads"), options(heads), style="slider"),
            # "show" alone says too little to a screen reader: its whole name says what is shown.
            Choice("head", N_("show"), ((N_("all heads"), "all"),
                                        *((numbered(N_("head {h}"), h=h), h) for h in range(max(heads)))),
                   accessible_name=N_("show the heads: all, or one")),
            Checkbox("causal", N_("causal")),
            # The argument's name in English; a translation may say it as a label ("comprimento válido").
            IntSlider("valid_len", N_("valid_len"), 0, len(TOKENS)),
        )
        self.layouts = {n: figsize_of(n) for n in sorted({1, *heads})}  # panels -> figure size
        generator = torch.Generator().manual_seed(seed)
        # Random embeddings with standard deviation 2: with 1, every head is close to uniform.
        self.X = 2 * torch.randn(1, len(TOKENS), num_hiddens, generator=generator)  # (1, tokens, num_hiddens)

    def attention(self, num_heads, causal=False):
        """The ``MultiHeadAttention`` with ``num_heads`` heads, with the same projections for every
        head count (one seed). A new one each call: a module keeps the weights of its last call."""
        with torch.random.fork_rng(devices=[]):  # the caller's random numbers untouched
            torch.manual_seed(self.seed)
            return MultiHeadAttention(self.num_hiddens, num_heads, dropout=0.0, query_size=self.num_hiddens,
                                      key_size=self.num_hiddens, value_size=self.num_hiddens, causal=causal)

    def checked_settings(self, head=MultiHeadSettings.head, **values):
        """The settings, ``head`` checked against the heads that ``num_heads`` has."""
        settings = super().checked_settings(**values)  # head at its default, which every num_heads has
        check_choice(head, "head", self.choices(settings)["head"])
        return dataclasses.replace(settings, head=head)

    def choices(self, settings):
        return {"head": ["all", *range(settings.num_heads)]}

    def adjust(self, settings, changed):
        """All heads when the head shown is gone with a smaller number of heads."""
        if settings.head not in self.choices(settings)["head"]:
            return dataclasses.replace(settings, head="all")
        return settings


    def compute(self, settings):
        num_heads, head, causal = settings.num_heads, settings.head, settings.causal
        valid_lens = torch.tensor([settings.valid_len])  # (1,)
        attention = self.attention(num_heads, causal)
        with torch.no_grad():
            attention(self.X, self.X, self.X, valid_lens)
        head_weights = attention.attention_weights[0]  # (heads, queries, keys)
        shown = list(range(num_heads)) if head == "all" else [head]
        weights = head_weights[shown]  # (panels, queries, keys)
        mask = attention_mask(valid_lens, 1, *weights.shape[1:], causal=causal)[0].expand(weights.shape)
        # The English says "1 heads" as it always has (the page's captions); a translation has both forms.
        caption = n_("{num_heads} heads of width {width}, valid_lens = {valid_lens}{causal}",
                     "{num_heads} heads of width {width}, valid_lens = {valid_lens}{causal}", num_heads).format(
            num_heads=num_heads, width=self.num_hiddens // num_heads, valid_lens=valid_lens.tolist(),
            causal=_(", causal") if causal else "")
        return MultiHeadResult(weights, caption, mask=mask, layout=len(shown), num_heads=num_heads, causal=causal,
                               heads=shown, valid_lens=valid_lens)

    def build(self, blit):
        return MultiHeadView(blit, num_panels=blit.layout)

    def describe(self, result):
        return describe_weights(result.weights, result.mask,
                                titles=[_("head {h}").format(h=h) for h in result.heads])

    def recipe(self, result):
        attention = self.attention(result.num_heads, result.causal)
        inputs = {"X": self.X, "valid_lens": result.valid_lens, "num_heads": result.num_heads,
                  "causal": result.causal, "heads": result.heads}
        inputs.update({f"attention.{name}": value for name, value in attention.state_dict().items()})
        return Recipe(inputs, """
            X = torch.from_numpy(saved["X"])  # (1, positions, num_hiddens): queries, keys and values
            num_hiddens = X.shape[-1]
            attention = d2l.MultiHeadAttention(num_hiddens, int(saved["num_heads"]), dropout=0.0,
                                               query_size=num_hiddens, key_size=num_hiddens,
                                               value_size=num_hiddens, causal=bool(saved["causal"]))
            # The explorer's projections W_q, W_k, W_v and W_o, saved as "attention.<name>".
            attention.load_state_dict({name.removeprefix("attention."): torch.from_numpy(saved[name])
                                       for name in saved.files if name.startswith("attention.")})
            with torch.no_grad():
                attention(X, X, X, torch.from_numpy(saved["valid_lens"]))
            # (heads shown, queries, keys)
            weights = attention.attention_weights[0][torch.from_numpy(saved["heads"])]
        """, titles=[f"head {h}" for h in result.heads])


class MultiHeadView:
    """A grid of ``num_panels`` heatmaps, one per head shown, with one colorbar."""

    def __init__(self, blit, num_panels):
        rows, columns = grid(num_panels)
        axes = blit.figure.subplots(rows, columns, sharex=True, sharey=True, squeeze=False).flat
        for ax in axes[num_panels:]:  # the empty end of a last row that is not full
            ax.remove()
        self.heatmaps, self.titles = [], []
        for h, ax in enumerate(axes[:num_panels]):
            self.heatmaps.append(blit.heatmap(ax, len(TOKENS), len(TOKENS), masked=True))
            self.titles.append(ax.set_title(_("head {h}").format(h=h)))
            # Positions under the lowest panel of each column, and left of each row.
            lowest, first = h + columns >= num_panels, h % columns == 0
            ax.tick_params(labelbottom=lowest, labelleft=first)
            ax.tick_params(axis="x", labelrotation=90)
            ax.set(xlabel=_("Key position") if lowest else "", ylabel=_("Query position") if first else "")
        # The panels share their axes: the positions set once label them all.
        axes[0].set_xticks(range(len(TOKENS)), TOKENS)
        axes[0].set_yticks(range(len(TOKENS)), TOKENS)
        if num_panels == 1:  # a single panel can show any head
            blit.animate(self.titles[0])
        blit.colorbar(list(axes[:num_panels]))

    def update(self, result):
        for heatmap, weights, mask in zip(self.heatmaps, result.weights, result.mask):
            heatmap.set_array(masked_weights(weights, mask))
        if len(self.heatmaps) == 1:
            self.titles[0].set_text(_("head {h}").format(h=result.heads[0]))


def explore_multihead(num_heads=2, head="all", causal=False, valid_len=6):
    """Multi-head self-attention: number of heads, which head, causal, valid length."""
    declaration = MultiHead()
    return Explorer(declaration, declaration.checked_settings(num_heads=num_heads, head=head, causal=causal,
                                                              valid_len=valid_len))
