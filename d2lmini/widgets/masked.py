"""``masked_softmax`` over fixed scores, with one valid length per example or per query."""

import ipywidgets as widgets
import torch

from ..masking import attention_mask, masked_softmax
from ..plotting import describe_weights
from .controls import WIDE, int_slider
from .declaration import check_per_example
from .export import Recipe
from .figure import masked_weights
from .legacy import Explorer, Shown


class MaskedSoftmaxExplorer(Explorer):
    """``masked_softmax`` over fixed random scores (2 examples, 4 queries, 8 keys)."""

    repr_controls = ("mode", "valid_len_0", "valid_len_1")
    MODES = ("per example", "per query")
    valid_lens = Shown()

    def __init__(self, valid_lens=(2, 5), seed=0):
        batch, num_queries, num_keys = 2, 4, 8
        valid_lens = check_per_example(valid_lens, "valid_lens", batch)
        generator = torch.Generator().manual_seed(seed)
        self.scores = torch.randn(batch, num_queries, num_keys, generator=generator)  # (batch, queries, keys)
        per_query_start = [[1, 2, 3, 4], [8, 6, 4, 2]]  # a causal staircase, and a shrinking window
        controls = {"mode": widgets.ToggleButtons(options=self.MODES, description="lengths")}
        for b, start in enumerate(valid_lens):  # slider positions to start from, checked above
            controls[f"valid_len_{b}"] = int_slider(f"valid_lens[{b}]", start, 0, num_keys,
                                                    description=f"valid_len, example {b}", style=WIDE)
        for b in range(batch):
            for q in range(num_queries):
                controls[f"query_len_{b}_{q}"] = widgets.BoundedIntText(
                    value=per_query_start[b][q], min=0, max=num_keys, description=f"q{q}",
                    layout=widgets.Layout(width="110px"), style={"description_width": "24px"})
        self.per_example_row = widgets.HBox([controls[f"valid_len_{b}"] for b in range(batch)])
        self.per_query_rows = widgets.VBox([
            widgets.HBox([widgets.Label(f"example {b}:"),
                          *(controls[f"query_len_{b}_{q}"] for q in range(num_queries))])
            for b in range(batch)])
        super().__init__(controls, [controls["mode"], self.per_example_row, self.per_query_rows],
                         figsize=(7, 2.6), filename="masked_softmax.png")
        self.sync_controls(controls["mode"])

    def build(self, plot):
        batch, num_queries, num_keys = self.scores.shape
        axes = plot.figure.subplots(1, batch, sharey=True)
        self.heatmaps = [plot.heatmap(ax, num_queries, num_keys, masked=True) for ax in axes]
        for b, ax in enumerate(axes):
            ax.set_title(f"example {b}")
        plot.colorbar(axes)

    def sync_controls(self, owner):
        if owner is self.controls["mode"]:
            per_query = owner.value == "per query"
            self.per_example_row.layout.display = "none" if per_query else None
            self.per_query_rows.layout.display = None if per_query else "none"

    def compute(self, state):
        batch, num_queries, _ = self.scores.shape
        if state["mode"] == "per example":
            valid_lens = torch.tensor([state[f"valid_len_{b}"] for b in range(batch)])  # (batch,)
        else:
            valid_lens = torch.tensor([[state[f"query_len_{b}_{q}"] for q in range(num_queries)]
                                       for b in range(batch)])  # (batch, queries)
        caption = f"masked_softmax(scores, valid_lens={valid_lens.tolist()})"
        weights = masked_softmax(self.scores, valid_lens)  # (batch, queries, keys)
        mask = attention_mask(valid_lens, *self.scores.shape).expand(weights.shape)  # as masked_softmax's
        return {"weights": weights, "mask": mask, "valid_lens": valid_lens, "caption": caption}

    def draw(self, result):
        for heatmap, weights, mask in zip(self.heatmaps, result["weights"], result["mask"]):
            heatmap.set_array(masked_weights(weights, mask))

    def describe(self, result):
        titles = [f"example {b}" for b in range(len(result["weights"]))]
        return describe_weights(result["weights"], result["mask"], titles=titles)

    def recipe(self, result):
        titles = [f"example {b}" for b in range(len(result["weights"]))]
        return Recipe({"scores": self.scores, "valid_lens": result["valid_lens"]}, """
            scores = torch.from_numpy(saved["scores"])  # (batch, queries, keys)
            valid_lens = torch.from_numpy(saved["valid_lens"])  # (batch,) or (batch, queries)
            weights = d2l.masked_softmax(scores, valid_lens)  # (batch, queries, keys)
        """, titles=titles)


def explore_masked_softmax(valid_lens=(2, 5)):
    """Masked softmax: one valid length per example, or one per query."""
    return MaskedSoftmaxExplorer(valid_lens)
