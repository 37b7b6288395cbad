"""Additive and scaled dot-product weights side by side, as the keys get noisier."""

from dataclasses import dataclass

import torch

from .._checks import check_per_example
from ..attention import AdditiveAttention, DotProductAttention
from ..i18n import N_, _
from ..masking import attention_mask
from ..plotting import describe_weights
from .declaration import Declaration, FloatSlider, IntSlider, Result, Row, numbered
from .explorer import Explorer
from .export import Recipe
from .figure import masked_weights

__all__ = ["Additive", "explore_additive"]

# A panel's title (its method, one of METHODS) and the caption, which the page script says too
# (Additive.script_words).
PANEL = N_("{method}, example {b}")
ADDITIVE_CAPTION = N_("keys = 1 + {noise:.2f} × noise (seed {seed}), valid_lens = {valid_lens}")
BATCH, NUM_QUERIES, NUM_KEYS, SIZE = 2, 4, 10, 2  # SIZE: the queries' and keys' features
METHODS = (N_("additive"), N_("scaled dot product"))
PANEL_TITLES = [f"{method}, example {b}" for b in range(BATCH) for method in METHODS]  # panel by panel: the page's


def panel_titles():
    """The panels' titles (``PANEL_TITLES``) in the learner's language."""
    return [_(PANEL).format(method=_(method), b=b) for b in range(BATCH) for method in METHODS]


def key_noise(seed):
    """Standard normal noise (batch, keys, size) drawn from ``seed``."""
    return torch.randn(BATCH, NUM_KEYS, SIZE, generator=torch.Generator().manual_seed(seed))


def noisy_keys(noise, seed):
    """All-ones keys (batch, keys, size) plus ``noise`` times the noise drawn from ``seed``."""
    return torch.ones(BATCH, NUM_KEYS, SIZE) + noise * key_noise(seed)


@dataclass(frozen=True)
class AdditiveSettings:
    noise: float = 0.0
    seed: int = 0
    valid_len_0: int = 2
    valid_len_1: int = 6


@dataclass(frozen=True)
class AdditiveResult(Result):
    noisy_keys: torch.Tensor  # (batch, keys, size)
    valid_lens: torch.Tensor  # (batch,)


class Additive(Declaration):
    """Additive and scaled dot-product weights side by side, as the keys get noisier.

    Keys start as all ones, the classic case where both scores give uniform
    weights over the valid keys; the noise slider perturbs them.
    """

    chapter = 3
    title = N_("Additive attention explorer")
    controls = (
        FloatSlider("noise", N_("key noise"), 0.0, 2.0, 0.05, digits=2),
        # At noise 0 every seed gives the same keys, all ones: the seed is disabled, and says why.
        IntSlider("seed", N_("noise seed"), 0, 9,
                  inactive_when=("noise", 0.0, N_("The noise seed changes nothing while the key noise is 0: "
                                                   "every seed then gives the same keys, all ones. Move the "
                                                   "key noise to compare seeds."))),
        *(IntSlider(f"valid_len_{b}", numbered(N_("valid_len, example {b}"), b=b), 0, NUM_KEYS,
                    argument=f"valid_lens[{b}]")
          for b in range(BATCH)),
    )
    Settings = AdditiveSettings
    rows = (Row(("noise", "seed")), Row(("valid_len_0", "valid_len_1")))
    figsize = (7, 4.4)
    filename = "additive.png"
    repr_controls = ("noise", "seed", "valid_len_0", "valid_len_1")
    page_script = "attention.js"  # 49,610 states, each computed in the page from a few hundred numbers
    # Each method by its English, as the script names it.
    script_words = {**{method: method for method in METHODS}, "panel": PANEL, "additive caption": ADDITIVE_CAPTION}

    def __init__(self):
        generator = torch.Generator().manual_seed(0)
        self.queries = torch.randn(BATCH, NUM_QUERIES, SIZE, generator=generator)  # (batch, queries, size)
        self.values = torch.arange(40.0).reshape(1, NUM_KEYS, 4).repeat(BATCH, 1, 1)  # (batch, keys, 4)

    @staticmethod
    def additive():
        """The additive scoring module, with the same parameters W_q, W_k, w_v every time (seed 0).
        A new one each call: a module keeps the weights of its last call, and ``compute`` changes nothing."""
        with torch.random.fork_rng(devices=[]):  # the caller's random numbers untouched
            torch.manual_seed(0)
            return AdditiveAttention(num_hiddens=8, dropout=0.0, key_size=SIZE, query_size=SIZE)

    def compute(self, settings):
        noise, seed = settings.noise, settings.seed
        keys = noisy_keys(noise, seed)  # (batch, keys, size)
        valid_lens = torch.tensor([settings.valid_len_0, settings.valid_len_1])  # (batch,)
        additive, dot_product = self.additive(), DotProductAttention(dropout=0.0)
        with torch.no_grad():
            additive(self.queries, keys, self.values, valid_lens)
            dot_product(self.queries, keys, self.values, valid_lens)
        weights = torch.stack([additive.attention_weights, dot_product.attention_weights],
                              dim=1)  # (batch, method, queries, keys)
        mask = attention_mask(valid_lens, BATCH, NUM_QUERIES, NUM_KEYS)  # (batch, 1, keys)
        mask = mask.unsqueeze(1).expand(weights.shape)  # the same for both methods
        caption = _(ADDITIVE_CAPTION).format(noise=noise, seed=seed, valid_lens=valid_lens.tolist())
        return AdditiveResult(weights, caption, mask=mask, noisy_keys=keys, valid_lens=valid_lens)

    def build(self, blit):
        return AdditiveView(blit)

    def page_data(self):
        """What the page computes a state from (float32 values): the queries, the additive scoring's
        parameters W_q, W_k and w_v, per seed the noise ``noisy_keys`` scales, and the panels' titles."""
        parameters = self.additive().state_dict()
        return {"queries": self.queries.tolist(), "titles": PANEL_TITLES,
                **{name: parameters[f"{name}.weight"].tolist() for name in ("W_q", "W_k", "w_v")},
                "noise": {str(seed): key_noise(seed).tolist() for seed in self.control("seed").values()}}

    def describe(self, result):
        return describe_weights(result.weights, result.mask, titles=panel_titles())

    def recipe(self, result):
        inputs = {"queries": self.queries, "keys": result.noisy_keys, "values": self.values,
                  "valid_lens": result.valid_lens}
        inputs.update({f"additive.{name}": value for name, value in self.additive().state_dict().items()})
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
        """, titles=list(METHODS))


class AdditiveView:
    """A row of panels per example: its additive weights, then its scaled dot-product weights."""

    def __init__(self, blit):
        axes = blit.figure.subplots(BATCH, len(METHODS), sharex=True, sharey=True)
        self.heatmaps = [blit.heatmap(ax, NUM_QUERIES, NUM_KEYS, masked=True) for ax in axes.flat]  # as PANEL_TITLES
        for ax, title in zip(axes.flat, panel_titles()):
            ax.set_title(title, fontsize="medium")
            ax.label_outer()
        blit.colorbar(axes)

    def update(self, result):
        panels = zip(self.heatmaps, result.weights.flatten(0, 1), result.mask.flatten(0, 1))
        for heatmap, weights, mask in panels:
            heatmap.set_array(masked_weights(weights, mask))


def explore_additive(noise=0.0, seed=0, valid_lens=(2, 6)):
    """Additive versus scaled dot-product weights as the keys move away from all ones."""
    declaration = Additive()
    starts = check_per_example(valid_lens, "valid_lens", BATCH)  # the sliders' starting positions
    return Explorer(declaration, declaration.checked_settings(
        noise=noise, seed=seed, **{f"valid_len_{b}": start for b, start in enumerate(starts)}))
