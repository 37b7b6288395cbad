"""Additive and scaled dot-product weights side by side, as the keys get noisier."""

import ipywidgets as widgets
import torch

from ..attention import AdditiveAttention, DotProductAttention
from ..masking import attention_mask
from ..plotting import describe_weights
from .controls import WIDE, float_slider, int_slider
from .declaration import check_per_example
from .export import Recipe
from .figure import masked_weights
from .legacy import Explorer, Shown


class AdditiveExplorer(Explorer):
    """Additive and scaled dot-product weights side by side, as the keys get noisier.

    Keys start as all ones, the classic case where both scores give uniform
    weights over the valid keys; the noise slider perturbs them.
    """

    repr_controls = ("noise", "seed", "valid_len_0", "valid_len_1")
    METHODS = ("additive", "scaled dot product")
    noisy_keys, valid_lens = Shown(), Shown()

    def __init__(self, noise=0.0, seed=0, valid_lens=(2, 6)):
        batch, num_queries, num_keys, size = 2, 4, 10, 2
        valid_lens = check_per_example(valid_lens, "valid_lens", batch)
        generator = torch.Generator().manual_seed(0)
        self.queries = torch.randn(batch, num_queries, size, generator=generator)  # (batch, queries, size)
        self.values = torch.arange(40.0).reshape(1, num_keys, 4).repeat(batch, 1, 1)  # (batch, keys, 4)
        with torch.random.fork_rng(devices=[]):  # fixed parameters, the caller's RNG untouched
            torch.manual_seed(0)
            self.additive = AdditiveAttention(num_hiddens=8, dropout=0.0, key_size=size, query_size=size)
        self.dot_product = DotProductAttention(dropout=0.0)
        self.keys_shape = (batch, num_keys, size)
        controls = {
            "noise": float_slider("noise", noise, 0.0, 2.0, step=0.05, description="key noise", style=WIDE),
            "seed": int_slider("seed", seed, 0, 9, description="noise seed", style=WIDE),
        }
        for b, start in enumerate(valid_lens):  # slider positions to start from, checked above
            controls[f"valid_len_{b}"] = int_slider(f"valid_lens[{b}]", start, 0, num_keys,
                                                    description=f"valid_len, example {b}", style=WIDE)
        rows = [widgets.HBox([controls["noise"], controls["seed"]]),
                widgets.HBox([controls["valid_len_0"], controls["valid_len_1"]])]
        super().__init__(controls, rows, figsize=(7, 4.4), filename="additive.png")

    def keys_for(self, noise, seed):
        """All-ones keys plus ``noise`` times standard normal noise drawn from ``seed``."""
        generator = torch.Generator().manual_seed(seed)
        return torch.ones(self.keys_shape) + noise * torch.randn(self.keys_shape, generator=generator)

    def build(self, plot):
        batch, num_keys, _ = self.keys_shape
        axes = plot.figure.subplots(batch, len(self.METHODS), sharex=True, sharey=True)
        self.heatmaps = []  # example 0 additive, example 0 dot product, example 1 ...
        for b in range(batch):
            for m, method in enumerate(self.METHODS):
                self.heatmaps.append(plot.heatmap(axes[b, m], self.queries.shape[1], num_keys, masked=True))
                axes[b, m].set_title(f"{method}, example {b}", fontsize="medium")
        for ax in axes.flat:
            ax.label_outer()
        plot.colorbar(axes)

    def compute(self, state):
        keys = self.keys_for(state["noise"], state["seed"])  # (batch, keys, size)
        valid_lens = torch.tensor([state["valid_len_0"], state["valid_len_1"]])  # (batch,)
        with torch.no_grad():
            self.additive(self.queries, keys, self.values, valid_lens)
            self.dot_product(self.queries, keys, self.values, valid_lens)
        weights = torch.stack([self.additive.attention_weights, self.dot_product.attention_weights],
                              dim=1)  # (batch, method, queries, keys)
        caption = (f"keys = 1 + {state['noise']:.2f} × noise (seed {state['seed']}), "
                   f"valid_lens = {valid_lens.tolist()}")
        batch, _, num_queries, num_keys = weights.shape
        mask = attention_mask(valid_lens, batch, num_queries, num_keys)  # (batch, 1, keys)
        mask = mask.unsqueeze(1).expand(weights.shape)  # the same for both methods
        return {"weights": weights, "mask": mask, "noisy_keys": keys, "valid_lens": valid_lens,
                "caption": caption}

    def draw(self, result):
        panels = zip(self.heatmaps, result["weights"].flatten(0, 1), result["mask"].flatten(0, 1))
        for heatmap, weights, mask in panels:
            heatmap.set_array(masked_weights(weights, mask))

    def describe(self, result):
        titles = [f"{method}, example {b}" for b in range(len(result["weights"])) for method in self.METHODS]
        return describe_weights(result["weights"], result["mask"], titles=titles)

    def recipe(self, result):
        inputs = {"queries": self.queries, "keys": result["noisy_keys"], "values": self.values,
                  "valid_lens": result["valid_lens"]}
        inputs.update({f"additive.{name}": value for name, value in self.additive.state_dict().items()})
        return Recipe(inputs, """
            queries = torch.from_numpy(saved["queries"])  # (batch, queries, 2)
            keys = torch.from_numpy(saved["keys"])  # (batch, keys, 2)
            values = torch.from_numpy(saved["values"])  # (batch, keys, 4)
            valid_lens = torch.from_numpy(saved["valid_lens"])  # (batch,)
            num_hiddens = saved["additive.W_q.weight"].shape[0]
            additive = d2l.AdditiveAttention(num_hiddens, dropout=0.0, key_size=keys.shape[-1],
                                             query_size=queries.shape[-1])
            # The explorer's parameters W_q, W_k and w_v, saved as "additive.<name>".
            additive.load_state_dict({name.removeprefix("additive."): torch.from_numpy(saved[name])
                                      for name in saved.files if name.startswith("additive.")})
            dot_product = d2l.DotProductAttention(dropout=0.0)
            with torch.no_grad():
                additive(queries, keys, values, valid_lens)
                dot_product(queries, keys, values, valid_lens)
            # (batch, method, queries, keys): one row of panels per example
            weights = torch.stack([additive.attention_weights, dot_product.attention_weights], dim=1)
        """, titles=list(self.METHODS))


def explore_additive(noise=0.0, seed=0, valid_lens=(2, 6)):
    """Additive versus scaled dot-product weights as the keys move away from all ones."""
    return AdditiveExplorer(noise, seed, valid_lens)
