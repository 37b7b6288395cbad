"""``masked_softmax`` over fixed scores, with one valid length per example or per query."""

from dataclasses import dataclass

import torch

from .._checks import check_per_example
from ..i18n import N_, _
from ..masking import attention_mask, masked_softmax
from ..plotting import describe_weights
from .declaration import Choice, Declaration, IntSlider, NumberBox, Result, Row, numbered
from .explorer import Explorer
from .export import Recipe
from .figure import masked_weights

__all__ = ["MaskedSoftmax", "explore_masked_softmax"]

EXAMPLE = N_("example {b}")  # a panel's title, which the page script says too (MaskedSoftmax.script_words)
BATCH, NUM_QUERIES, NUM_KEYS = 2, 4, 8
PANEL_TITLES = [f"example {b}" for b in range(BATCH)]  # the page's; the learner's: panel_titles()


def panel_titles():
    """The panels' titles in the learner's language."""
    return [_(EXAMPLE).format(b=b) for b in range(BATCH)]


@dataclass(frozen=True)
class MaskedSettings:
    mode: str = "per example"
    valid_len_0: int = 2
    valid_len_1: int = 5
    # Per query: a causal staircase in example 0, a shrinking window in example 1.
    query_len_0_0: int = 1
    query_len_0_1: int = 2
    query_len_0_2: int = 3
    query_len_0_3: int = 4
    query_len_1_0: int = 8
    query_len_1_1: int = 6
    query_len_1_2: int = 4
    query_len_1_3: int = 2


@dataclass(frozen=True)
class MaskedResult(Result):
    valid_lens: torch.Tensor  # (batch,) per example, or (batch, queries) per query


class MaskedSoftmax(Declaration):
    """``masked_softmax`` over fixed random scores (2 examples, 4 queries, 8 keys).

    The lengths come from one slider per example, or, per query, from one box
    per query of each example; only the controls of the mode shown count.
    """

    chapter = 2
    title = N_("Masked softmax explorer")
    controls = (
        Choice("mode", N_("lengths"), ((N_("per example"), "per example"), (N_("per query"), "per query")),
               style="toggle"),
        *(IntSlider(f"valid_len_{b}", numbered(N_("valid_len, example {b}"), b=b), 0, NUM_KEYS,
                    argument=f"valid_lens[{b}]")
          for b in range(BATCH)),
        # A short label, "q0", beside its example's row label; a screen reader gets the whole name.
        *(NumberBox(f"query_len_{b}_{q}", f"q{q}", 0, NUM_KEYS,
                    accessible_name=numbered(N_("example {b}, query {q}, valid length"), b=b, q=q))
          for b in range(BATCH) for q in range(NUM_QUERIES)),
    )
    Settings = MaskedSettings
    rows = (
        Row(("mode",)),
        Row(tuple(f"valid_len_{b}" for b in range(BATCH)), when=("mode", "per example")),
        *(Row(tuple(f"query_len_{b}_{q}" for q in range(NUM_QUERIES)), numbered(N_("example {b}:"), b=b),
              when=("mode", "per query"))
          for b in range(BATCH)),
    )
    figsize = (7, 2.6)
    filename = "masked_softmax.png"
    repr_controls = ("mode", "valid_len_0", "valid_len_1")
    page_script = "masked_softmax.js"  # 9^8 states per query: the page computes them
    script_words = {"example": EXAMPLE}

    def __init__(self, seed=0):
        generator = torch.Generator().manual_seed(seed)
        self.scores = torch.randn(BATCH, NUM_QUERIES, NUM_KEYS, generator=generator)  # (batch, queries, keys)

    def compute(self, settings):
        if settings.mode == "per example":
            valid_lens = torch.tensor([getattr(settings, f"valid_len_{b}") for b in range(BATCH)])  # (batch,)
        else:
            valid_lens = torch.tensor([[getattr(settings, f"query_len_{b}_{q}") for q in range(NUM_QUERIES)]
                                       for b in range(BATCH)])  # (batch, queries)
        weights = masked_softmax(self.scores, valid_lens)  # (batch, queries, keys)
        mask = attention_mask(valid_lens, *self.scores.shape).expand(weights.shape)  # as masked_softmax's
        return MaskedResult(weights, f"masked_softmax(scores, valid_lens={valid_lens.tolist()})", mask=mask,
                            valid_lens=valid_lens)

    def build(self, blit):
        return MaskedView(blit)

    def page_data(self):
        """The scores (batch, queries, keys), float32 values, and the panels' titles."""
        return {"scores": self.scores.tolist(), "titles": PANEL_TITLES}

    def describe(self, result):
        return describe_weights(result.weights, result.mask, titles=panel_titles())

    def recipe(self, result):
        return Recipe({"scores": self.scores, "valid_lens": result.valid_lens}, """
            scores = torch.from_numpy(saved["scores"])  # (batch, queries, keys)
            valid_lens = torch.from_numpy(saved["valid_lens"])  # (batch,) or (batch, queries)
            weights = d2l.masked_softmax(scores, valid_lens)  # (batch, queries, keys)
        """, titles=PANEL_TITLES)


class MaskedView:
    """One heatmap per example, its masked cells hatched."""

    def __init__(self, blit):
        axes = blit.figure.subplots(1, BATCH, sharey=True)
        self.heatmaps = [blit.heatmap(ax, NUM_QUERIES, NUM_KEYS, masked=True) for ax in axes]
        for ax, title in zip(axes, panel_titles()):
            ax.set_title(title)
        blit.colorbar(axes)

    def update(self, result):
        for heatmap, weights, mask in zip(self.heatmaps, result.weights, result.mask):
            heatmap.set_array(masked_weights(weights, mask))


def explore_masked_softmax(valid_lens=(2, 5)):
    """Masked softmax: one valid length per example, or one per query."""
    declaration = MaskedSoftmax()
    starts = check_per_example(valid_lens, "valid_lens", BATCH)  # the sliders' starting positions
    return Explorer(declaration, declaration.checked_settings(
        **{f"valid_len_{b}": start for b, start in enumerate(starts)}))
