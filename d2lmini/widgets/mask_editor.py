"""A mask edited cell by cell, and ``masked_softmax`` of fixed scores under it.

The grid holds one cell per (query, key): pressed (✓) means the query may
attend to the key, True in the mask, as ``attention_mask`` and SDPA have it.
Presets set the whole grid at once from ``attention_mask``.
"""

import dataclasses

import torch

from .._checks import check_number
from ..i18n import N_, _, n_
from ..masking import attention_mask, empty_rows, masked_softmax
from .declaration import Checkbox, Choice, Declaration, Result, Row, numbered, options
from .explorer import Explorer
from .export import Recipe
from .figure import masked_weights

__all__ = ["MaskEditor", "explore_mask_editor"]

SIZE = 6  # queries and keys: small enough to click through, large enough for a staircase
CUSTOM = N_("edited by hand")  # the preset shown once a cell has been clicked
DEFAULT = N_("causal + padding: 4 valid keys")

# Preset -> (valid_lens, causal) for attention_mask with a batch of one example.
PRESETS = {
    N_("no mask"): (None, False),
    N_("padding: 4 valid keys"): ([4], False),
    N_("padding: 2 valid keys"): ([2], False),
    N_("causal"): (None, True),
    DEFAULT: ([4], True),
    N_("a whole row masked: query 2"): ([[SIZE, SIZE, 0, SIZE, SIZE, SIZE]], False),
}
CELLS = tuple(f"cell_{i}_{j}" for i in range(SIZE) for j in range(SIZE))  # query i, key j, row by row

POLICY = N_("A query whose whole row is masked has no key to attend to: d2lmini gives it all-zero weights "
            "(<code>masking.zero_empty_rows</code>), never NaN and never a uniform row over the masked keys.")
# A cell's name follows from where it is, which works on every screen, by touch too (no hovering).
LEGEND = N_("<b>✓ pressed</b> (ticked) = the query may attend to the key (True in the mask); "
            "<b>blank</b> = masked. Row i is query i and column j is key j, counted from 0 at the top left: "
            "the cell in row 2, column 3 is \"query 2, key 3\", the name a screen reader says.")


def preset_mask(preset):
    """The (queries, keys) boolean mask of ``preset``, from ``attention_mask``."""
    valid_lens, causal = PRESETS[preset]
    mask = attention_mask(valid_lens, 1, SIZE, SIZE, causal=causal)  # None when nothing is masked
    if mask is None:
        return torch.ones(SIZE, SIZE, dtype=torch.bool)
    return mask.expand(1, SIZE, SIZE)[0]


def cells(mask):
    """Settings field -> bool for every cell of a (queries, keys) mask."""
    return dict(zip(CELLS, mask.flatten().tolist()))


def mask_of(settings):
    """The (queries, keys) mask the cells of ``settings`` show, True = may attend."""
    return torch.tensor([getattr(settings, name) for name in CELLS]).reshape(SIZE, SIZE)


# The preset and one field per cell, row by row; the cells start as the default preset's.
MaskSettings = dataclasses.make_dataclass(
    "MaskSettings", [("preset", str, DEFAULT), *((name, bool, on) for name, on in cells(preset_mask(DEFAULT)).items())],
    frozen=True)


def _queries(rows):
    return ", ".join(str(q) for q in rows)


# The caption's words, which the page script says too (MaskEditor.script_words).
EVERY_QUERY = N_("every query sees at least one key")
CELLS_MASKED = N_("{masked} of {cells} cells masked; {rows}")


def fully_masked(count):
    """The caption's words for ``count`` queries that see no key (listed in its {queries})."""
    return n_("fully masked: query {queries}, all-zero weights by d2lmini's policy",
              "fully masked: queries {queries}, all-zero weights by d2lmini's policy", count)


class MaskEditor(Declaration):
    """Click cells of a (6 queries, 6 keys) mask; ``masked_softmax`` of fixed random scores redraws."""

    chapter = 2
    place = 1  # chapter 02 shows it after the masked softmax explorer
    title = N_("Mask editor explorer")
    controls = (
        Choice("preset", N_("preset"), options([*PRESETS, CUSTOM])),
        *(Checkbox(f"cell_{i}_{j}", numbered(N_("query {i}, key {j}"), i=i, j=j), style="cell")
          for i in range(SIZE) for j in range(SIZE)),
    )
    Settings = MaskSettings
    # The grid beside the picture, so that a click and its effect are seen together.
    rows = (Row(("preset",)),
            Row(CELLS, label=N_("mask (rows: queries 0-5, columns: keys 0-5)"), columns=SIZE,
                note=numbered("{legend}<p>{policy}</p>", legend=LEGEND, policy=POLICY)))
    figsize = (3.9, 3.1)
    filename = "mask_editor.png"
    repr_controls = ("preset",)
    page_script = "masked_softmax.js"  # 2^36 masks: the page computes them
    script_words = {"every query": EVERY_QUERY, "fully masked": fully_masked, "cells masked": CELLS_MASKED}

    def __init__(self, seed=0):
        check_number(seed, "seed", 0, 2**31 - 1, integer=True)
        generator = torch.Generator().manual_seed(seed)
        self.scores = torch.randn(1, SIZE, SIZE, generator=generator)  # (batch, queries, keys)

    def adjust(self, settings, changed):
        if changed != "preset":  # a cell: the grid no longer shows the preset
            return dataclasses.replace(settings, preset=CUSTOM)
        if settings.preset == CUSTOM:  # picked by hand: the grid stays as it is
            return settings
        return dataclasses.replace(settings, **cells(preset_mask(settings.preset)))

    def compute(self, settings):
        mask = mask_of(settings)[None]  # (1, queries, keys)
        weights = masked_softmax(self.scores, mask=mask)  # (1, queries, keys)
        empty = empty_rows(mask)[0, :, 0].nonzero().flatten().tolist()  # queries with no key
        if not empty:
            rows = _(EVERY_QUERY)
        else:
            rows = fully_masked(len(empty)).format(queries=_queries(empty))
        caption = _(CELLS_MASKED).format(masked=int((~mask).sum()), cells=SIZE * SIZE, rows=rows)
        return Result(weights, caption, mask=mask)

    def build(self, blit):
        return MaskView(blit)

    def page_data(self):
        """The scores (queries, keys), float32 values; every preset's mask (queries, keys), from
        ``attention_mask``; and the preset that a click shows."""
        return {"scores": self.scores[0].tolist(), "custom": CUSTOM,
                "presets": {preset: preset_mask(preset).tolist() for preset in PRESETS}}

    def recipe(self, result):
        return Recipe({"scores": self.scores, "mask": result.mask}, """
            scores = torch.from_numpy(saved["scores"])  # (1, queries, keys)
            mask = torch.from_numpy(saved["mask"])  # (1, queries, keys), True = may attend
            weights = d2l.masked_softmax(scores, mask=mask)  # (1, queries, keys)
        """)


class MaskView:
    """The masked weights, the masked cells hatched."""

    def __init__(self, blit):
        ax = blit.figure.subplots()
        self.heatmap = blit.heatmap(ax, SIZE, SIZE, masked=True)
        ax.set_title("masked_softmax(scores, mask=mask)", fontsize="medium")  # code: the same in every language
        blit.colorbar([ax])

    def update(self, result):
        self.heatmap.set_array(masked_weights(result.weights[0], result.mask[0]))


def explore_mask_editor(preset=DEFAULT, seed=0):
    """Edit a mask cell by cell, or from a preset, and see the masked softmax redraw."""
    declaration = MaskEditor(seed)
    settings = declaration.checked_settings(preset=preset)
    start = torch.ones(SIZE, SIZE, dtype=torch.bool) if preset == CUSTOM else preset_mask(preset)  # CUSTOM: no mask
    explorer = Explorer(declaration, dataclasses.replace(settings, **cells(start)))
    # The menu wide enough for its longest preset.
    explorer.controls["preset"].layout.width = "330px"
    return explorer
