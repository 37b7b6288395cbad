"""Per-head self-attention weights over six positions with random embeddings, on one shared colour scale."""

import math

import ipywidgets as widgets
import torch

from ..attention import MultiHeadAttention
from ..masking import attention_mask
from ..plotting import describe_weights
from .controls import WIDE, checkbox, dropdown, int_slider, selection_slider
from .export import Recipe
from .figure import masked_weights
from .legacy import Explorer, Shown


class MultiHeadExplorer(Explorer):
    """Per-head self-attention weights over six positions, on one shared scale.

    The positions' embeddings are random vectors, not words: the tick labels
    are positions, so no picture suggests a meaning the weights do not have.

    Every number of heads uses the same projections W_q, W_k, W_v (they are
    initialised from one seed): only how their features are split into heads
    changes. Each number of panels (1 for a single head) is a layout, a figure
    of its own: the one shown first is drawn when the explorer is built, the
    others in the kernel's idle time (see ``Explorer``).
    """

    repr_controls = ("num_heads", "head", "causal", "valid_len")
    TOKENS = ("0", "1", "2", "3", "4", "5")  # positions
    MAX_PANELS = 8
    MAX_COLUMNS = 4
    valid_lens = Shown()

    def __init__(self, num_heads=2, head="all", causal=False, valid_len=6, num_hiddens=16, seed=0):
        self.num_hiddens, self.seed = num_hiddens, seed
        self._attention_by_heads = {}
        self.attention(1)  # MultiHeadAttention checks num_hiddens
        choices = [h for h in range(1, self.MAX_PANELS + 1) if num_hiddens % h == 0]
        num_tokens = len(self.TOKENS)
        controls = {
            "num_heads": selection_slider("num_heads", num_heads, choices, description="heads"),
            "head": dropdown("head", head, self._head_labels(num_heads), description="show"),
            "causal": checkbox("causal", causal, description="causal"),
            "valid_len": int_slider("valid_len", valid_len, 0, num_tokens, description="valid_len",
                                    style=WIDE),
        }
        generator = torch.Generator().manual_seed(seed)
        # Random embeddings with standard deviation 2: with 1, every head is close to uniform.
        self.X = 2 * torch.randn(1, num_tokens, num_hiddens, generator=generator)  # (1, tokens, num_hiddens)
        self.panels = {}  # number of panels -> (heatmaps, titles)
        rows = [widgets.HBox([controls["num_heads"], controls["head"]]),
                widgets.HBox([controls["valid_len"], controls["causal"]])]
        layouts = {n: self._figsize(n) for n in sorted({1, *choices})}
        super().__init__(controls, rows, layouts=layouts, filename="multihead.png")

    @staticmethod
    def _head_options(num_heads):
        return ["all", *range(num_heads)]

    @classmethod
    def _head_labels(cls, num_heads):
        return [("all heads" if h == "all" else f"head {h}", h) for h in cls._head_options(num_heads)]

    @classmethod
    def _grid(cls, num_panels):
        cols = min(num_panels, cls.MAX_COLUMNS)
        return math.ceil(num_panels / cols), cols

    @classmethod
    def _figsize(cls, num_panels):
        rows, cols = cls._grid(num_panels)
        return 2.1 * cols + 1.4, 2.1 * rows + 0.5

    def attention(self, num_heads, causal=False):
        """The ``MultiHeadAttention`` with ``num_heads`` heads (built once, then reused)."""
        if (num_heads, causal) not in self._attention_by_heads:
            with torch.random.fork_rng(devices=[]):  # same projections for every head count
                torch.manual_seed(self.seed)
                self._attention_by_heads[num_heads, causal] = MultiHeadAttention(
                    self.num_hiddens, num_heads, dropout=0.0, query_size=self.num_hiddens,
                    key_size=self.num_hiddens, value_size=self.num_hiddens, causal=causal)
        return self._attention_by_heads[num_heads, causal]

    def build(self, plot):
        num_panels, num_tokens = plot.layout, len(self.TOKENS)
        rows, cols = self._grid(num_panels)
        axes = plot.figure.subplots(rows, cols, sharex=True, sharey=True, squeeze=False).flat
        for ax in axes[num_panels:]:  # the empty end of a last row that is not full
            ax.remove()
        heatmaps, titles = [], []
        for h, ax in enumerate(axes[:num_panels]):
            heatmaps.append(plot.heatmap(ax, num_tokens, num_tokens, masked=True))
            titles.append(ax.set_title(f"head {h}"))
            # Positions under the lowest panel of each column, and left of each row.
            lowest, first = h + cols >= num_panels, h % cols == 0
            ax.tick_params(labelbottom=lowest, labelleft=first)
            ax.tick_params(axis="x", labelrotation=90)
            ax.set(xlabel="Key position" if lowest else "", ylabel="Query position" if first else "")
        # The panels share their axes: the positions set once label them all.
        axes[0].set_xticks(range(num_tokens), self.TOKENS)
        axes[0].set_yticks(range(num_tokens), self.TOKENS)
        if num_panels == 1:  # a single panel can show any head
            plot.animate(titles[0])
        plot.colorbar(list(axes[:num_panels]))
        self.panels[num_panels] = heatmaps, titles

    def sync_controls(self, owner):
        head = self.controls["head"]
        if owner is self.controls["num_heads"]:
            num_heads = owner.value
            keep = head.value if head.value in self._head_options(num_heads) else "all"
            head.options = self._head_labels(num_heads)
            head.value = keep

    def compute(self, state):
        num_heads, head, causal = state["num_heads"], state["head"], state["causal"]
        valid_lens = torch.tensor([state["valid_len"]])  # (1,)
        attention = self.attention(num_heads, causal)
        with torch.no_grad():
            attention(self.X, self.X, self.X, valid_lens)
        head_weights = attention.attention_weights[0]  # (heads, queries, keys)
        shown = list(range(num_heads)) if head == "all" else [head]
        caption = (f"{num_heads} heads of width {self.num_hiddens // num_heads}, "
                   f"valid_lens = {valid_lens.tolist()}{', causal' if causal else ''}")
        mask = attention_mask(valid_lens, 1, *head_weights.shape[1:], causal=causal)[0]
        return {"weights": head_weights[shown], "mask": mask.expand(head_weights.shape[1:]),
                "heads": shown, "valid_lens": valid_lens,
                "layout": len(shown), "caption": caption}

    def draw(self, result):
        heatmaps, titles = self.panels[result["layout"]]
        for heatmap, weights in zip(heatmaps, result["weights"]):
            heatmap.set_array(masked_weights(weights, result["mask"]))
        if result["layout"] == 1:
            titles[0].set_text(f"head {result['heads'][0]}")

    def describe(self, result):
        return describe_weights(result["weights"], result["mask"], titles=[f"head {h}" for h in result["heads"]])

    def recipe(self, result):
        state = self.state
        attention = self.attention(state["num_heads"], state["causal"])
        inputs = {"X": self.X, "valid_lens": result["valid_lens"], "num_heads": state["num_heads"],
                  "causal": state["causal"], "heads": result["heads"]}
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
        """, titles=[f"head {h}" for h in result["heads"]])


def explore_multihead(num_heads=2, head="all", causal=False, valid_len=6):
    """Multi-head self-attention: number of heads, which head, causal, valid length."""
    return MultiHeadExplorer(num_heads, head, causal, valid_len)
