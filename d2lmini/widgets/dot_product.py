"""Scaled dot-product weights for random queries and keys, with each row's entropy."""

import math

import ipywidgets as widgets
import numpy as np
import torch

from ..attention import DotProductAttention
from ..masking import attention_mask
from .controls import WIDE, checkbox, int_slider, log_slider, selection_slider
from .export import Recipe
from .figure import masked_weights
from .legacy import Explorer, Shown


class DotProductExplorer(Explorer):
    """Scaled dot-product weights for random queries and keys, with each row's entropy."""

    repr_controls = ("d", "scale", "temperature", "valid_len", "causal")
    D_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
    entropy, valid_lens = Shown(), Shown()

    def __init__(self, d=16, scale=True, temperature=1.0, valid_len=8, causal=False, seed=0):
        num_tokens = 8
        generator = torch.Generator().manual_seed(seed)
        # Unit-variance coordinates, so an unscaled score q·k has variance d.
        # A smaller d uses the first d coordinates of the same vectors.
        self.all_queries = torch.randn(1, num_tokens, max(self.D_CHOICES), generator=generator)
        self.all_keys = torch.randn(1, num_tokens, max(self.D_CHOICES), generator=generator)
        # The causal one hides the future on top of valid_lens: the package combines the two.
        self.attention = {flag: DotProductAttention(dropout=0.0, causal=flag) for flag in (False, True)}
        controls = {
            "d": selection_slider("d", d, self.D_CHOICES, description="dimension d", style=WIDE),
            "scale": checkbox("scale", scale, description="divide by √d"),
            # Up to 10^1.5 ≈ 31.6: above √512 ≈ 22.6, so the temperature can undo the missing
            # scale at every d offered.
            "temperature": log_slider("temperature", temperature, 10, -1, 1.5, step=0.05,
                                      description="temperature", readout_format=".2g", style=WIDE),
            "valid_len": int_slider("valid_len", valid_len, 0, num_tokens, description="valid_len",
                                    style=WIDE),
            "causal": checkbox("causal", causal, description="causal"),
        }
        rows = [widgets.HBox([controls["d"], controls["scale"], controls["temperature"]]),
                widgets.HBox([controls["valid_len"], controls["causal"]])]
        super().__init__(controls, rows, figsize=(7, 3), filename="dot_product.png")

    def build(self, plot):
        num_tokens = self.all_queries.shape[1]
        ax_map, ax_entropy = plot.figure.subplots(1, 2, sharey=True, width_ratios=(3, 2))
        self.heatmap = plot.heatmap(ax_map, num_tokens, num_tokens, masked=True)
        ax_map.set_title("attention weights")
        plot.colorbar(ax_map)
        bars = ax_entropy.barh(range(num_tokens), np.zeros(num_tokens), height=0.6, color="C3")
        self.bars = [plot.animate(bar) for bar in bars]
        # Per row, the entropy of uniform weights over the keys that row may attend to.
        self.uniform = plot.animate(ax_entropy.plot([], [], color="gray", linestyle="--")[0])
        ax_entropy.set(xlim=(0, 1.05 * math.log(num_tokens)), title="row entropy",
                       xlabel="nats (dashed: uniform over\nthe keys not masked)")

    def compute(self, state):
        d, scale, temperature = state["d"], state["scale"], state["temperature"]
        queries = self.all_queries[..., :d]  # (1, queries, d)
        keys = self.all_keys[..., :d]  # (1, keys, d)
        # DotProductAttention divides the scores by √d: multiply it back in when
        # the scale is off, and divide by the temperature.
        factor = (1.0 if scale else math.sqrt(d)) / temperature
        valid_lens = torch.tensor([state["valid_len"]])  # (1,)
        attention = self.attention[state["causal"]]
        attention(queries * factor, keys, keys, valid_lens)
        weights = attention.attention_weights[0]  # (queries, keys)
        entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)  # (queries,); 0 log 0 = 0
        mask = attention_mask(valid_lens, 1, *weights.shape, causal=state["causal"])[0].expand(weights.shape)
        caption = (f"d = {d}, {'scaled by 1/√d' if scale else 'unscaled'}, temperature {temperature:.2g}, "
                   f"valid_lens = {valid_lens.tolist()}{', causal' if state['causal'] else ''}")
        return {"weights": weights, "mask": mask, "entropy": entropy, "valid_lens": valid_lens,
                "caption": caption}

    def draw(self, result):
        self.heatmap.set_array(masked_weights(result["weights"], result["mask"]))
        # A dashed tick per row at log(keys it may attend to); none for a row with no key.
        xs, ys = [], []
        for row, count in enumerate(result["mask"].sum(dim=-1).tolist()):
            uniform = math.log(count) if count else math.nan
            xs += [uniform, uniform, math.nan]
            ys += [row - 0.4, row + 0.4, math.nan]
        self.uniform.set_data(xs, ys)
        for bar, value in zip(self.bars, result["entropy"].tolist()):
            bar.set_width(value)

    def recipe(self, result):
        state = self.state
        d = state["d"]
        inputs = {"queries": self.all_queries[..., :d], "keys": self.all_keys[..., :d],
                  "valid_lens": result["valid_lens"], "scale": state["scale"],
                  "temperature": state["temperature"], "causal": state["causal"]}
        return Recipe(inputs, """
            queries = torch.from_numpy(saved["queries"])  # (1, queries, d)
            keys = torch.from_numpy(saved["keys"])  # (1, keys, d); the keys are the values too
            d = queries.shape[-1]
            # DotProductAttention divides the scores by √d: multiply it back in when the
            # scale was off, and divide by the temperature.
            factor = (1.0 if saved["scale"] else math.sqrt(d)) / float(saved["temperature"])
            attention = d2l.DotProductAttention(dropout=0.0, causal=bool(saved["causal"]))
            attention(queries * factor, keys, keys, torch.from_numpy(saved["valid_lens"]))
            weights = attention.attention_weights[0]  # (queries, keys)
        """)


def explore_dot_product(d=16, scale=True, temperature=1.0, valid_len=8, causal=False):
    """Scaled dot-product attention: d, the 1/√d scale, temperature, valid length, causal."""
    return DotProductExplorer(d, scale, temperature, valid_len, causal)
