"""A mask edited cell by cell, and ``masked_softmax`` of fixed scores under it.

The grid holds one toggle button per (query, key) cell: pressed (✓) means the
query may attend to the key, True in the mask, as ``attention_mask`` and
SDPA have it. Presets set the whole grid at once from ``attention_mask``.
"""

import ipywidgets as widgets
import torch

from ..masking import attention_mask, empty_rows, masked_softmax
from ._compat import toggle_button_style
from .controls import dropdown
from .declaration import check_number
from .export import Recipe
from .figure import masked_weights
from .legacy import Explorer

SIZE = 6  # queries and keys: small enough to click through, large enough for a staircase
CUSTOM = "edited by hand"  # the preset shown once a cell has been clicked

# Preset -> (valid_lens, causal) for attention_mask with a batch of one example.
PRESETS = {
    "no mask": (None, False),
    "padding: 4 valid keys": ([4], False),
    "padding: 2 valid keys": ([2], False),
    "causal": (None, True),
    "causal + padding: 4 valid keys": ([4], True),
    "a whole row masked: query 2": ([[SIZE, SIZE, 0, SIZE, SIZE, SIZE]], False),
}

POLICY = ("A query whose whole row is masked has no key to attend to: d2lmini gives it all-zero weights "
          "(<code>masking.zero_empty_rows</code>), never NaN and never a uniform row over the masked keys.")
LEGEND = ("<b>✓ pressed</b> = the query may attend to the key (True in the mask); "
          "<b>blank</b> = masked. Rows are queries, columns keys; hover a cell for its name.")


def preset_mask(preset):
    """The (queries, keys) boolean mask of ``preset``, from ``attention_mask``."""
    valid_lens, causal = PRESETS[preset]
    mask = attention_mask(valid_lens, 1, SIZE, SIZE, causal=causal)  # None when nothing is masked
    if mask is None:
        return torch.ones(SIZE, SIZE, dtype=torch.bool)
    return mask.expand(1, SIZE, SIZE)[0]


def _mark(allowed):
    return "✓" if allowed else ""


def _queries(rows):
    return ", ".join(str(q) for q in rows)


class MaskEditorExplorer(Explorer):
    """Click cells of a (6 queries, 6 keys) mask; ``masked_softmax`` of fixed random scores redraws."""

    repr_controls = ("preset",)

    def __init__(self, preset="causal + padding: 4 valid keys", seed=0):
        check_number(seed, "seed", 0, 2**31 - 1, integer=True)
        controls = {"preset": dropdown("preset", preset, [*PRESETS, CUSTOM], description="preset",
                                       layout=widgets.Layout(width="330px"))}
        generator = torch.Generator().manual_seed(seed)
        self.scores = torch.randn(1, SIZE, SIZE, generator=generator)  # (batch, queries, keys)
        start = preset_mask(preset) if preset != CUSTOM else torch.ones(SIZE, SIZE, dtype=torch.bool)
        # One layout and one style shared by the 36 buttons: 2 widget models, not 72, in a saved notebook.
        cell_layout = widgets.Layout(width="30px", height="30px", padding="0")
        cell_style = toggle_button_style()
        for i in range(SIZE):
            for j in range(SIZE):
                allowed = bool(start[i, j])
                controls[f"cell_{i}_{j}"] = widgets.ToggleButton(
                    value=allowed, description=_mark(allowed), tooltip=f"query {i}, key {j}",
                    layout=cell_layout, style=cell_style)
        self.cells = [[controls[f"cell_{i}_{j}"] for j in range(SIZE)] for i in range(SIZE)]
        grid = widgets.GridBox([cell for row in self.cells for cell in row],
                               layout=widgets.Layout(grid_template_columns=f"repeat({SIZE}, 32px)",
                                                     grid_gap="2px"))
        self.legend = widgets.HTML(f'<div style="line-height:1.3; font-size:small">{LEGEND}<p>{POLICY}</p></div>',
                                   layout=widgets.Layout(width="300px"))
        super().__init__(controls, [controls["preset"]], figsize=(3.9, 3.1), filename="mask_editor.png")
        # The grid beside the picture, so that a click and its effect are seen together.
        preset_row, colour_row, caption, image, summary, save_row, message = self.children
        editor = widgets.VBox([widgets.Label("mask (rows: queries 0-5, columns: keys 0-5)"), grid, self.legend])
        self.children = [preset_row, colour_row, widgets.HBox([editor, widgets.VBox([caption, image, summary])]),
                         save_row, message]

    def build(self, plot):
        ax = plot.figure.subplots()
        self.heatmap = plot.heatmap(ax, SIZE, SIZE, masked=True)
        ax.set_title("masked_softmax(scores, mask=mask)", fontsize="medium")
        plot.colorbar([ax])

    def sync_controls(self, owner):
        # Called with the explorer's redraw held back (see Explorer._on_change): the
        # buttons set here redraw nothing, and one redraw follows.
        preset = self.controls["preset"]
        if owner is preset:
            if preset.value == CUSTOM:
                return
            mask = preset_mask(preset.value)
            for i, row in enumerate(self.cells):
                for j, cell in enumerate(row):
                    cell.value = bool(mask[i, j])
                    cell.description = _mark(cell.value)
        elif owner not in self.colour_controls:  # a cell
            owner.description = _mark(owner.value)
            preset.value = CUSTOM  # the grid no longer shows the preset

    def compute(self, state):
        mask = torch.tensor([[[state[f"cell_{i}_{j}"] for j in range(SIZE)] for i in range(SIZE)]])  # (1, q, k)
        weights = masked_softmax(self.scores, mask=mask)  # (1, queries, keys)
        empty = empty_rows(mask)[0, :, 0].nonzero().flatten().tolist()  # queries with no key
        if not empty:
            rows = "every query sees at least one key"
        else:
            plural = "queries" if len(empty) > 1 else "query"
            rows = f"fully masked: {plural} {_queries(empty)}, all-zero weights by d2lmini's policy"
        caption = f"{int((~mask).sum())} of {SIZE * SIZE} cells masked; {rows}"
        return {"weights": weights, "mask": mask, "empty_rows": empty, "caption": caption}

    def draw(self, result):
        self.heatmap.set_array(masked_weights(result["weights"][0], result["mask"][0]))

    def recipe(self, result):
        return Recipe({"scores": self.scores, "mask": result["mask"]}, """
            scores = torch.from_numpy(saved["scores"])  # (1, queries, keys)
            mask = torch.from_numpy(saved["mask"])  # (1, queries, keys), True = may attend
            weights = d2l.masked_softmax(scores, mask=mask)  # (1, queries, keys)
        """)

    @property
    def mask(self):
        """The mask drawn now, (queries, keys), True = may attend."""
        return self.result["mask"][0]


def explore_mask_editor(preset="causal + padding: 4 valid keys", seed=0):
    """Edit a mask cell by cell, or from a preset, and see the masked softmax redraw."""
    return MaskEditorExplorer(preset, seed)
