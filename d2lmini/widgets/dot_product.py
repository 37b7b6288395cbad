"""Scaled dot-product weights for random queries and keys, with each row's entropy."""

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..attention import DotProductAttention
from ..i18n import N_, _
from ..masking import attention_mask
from .declaration import Checkbox, Choice, Declaration, IntSlider, LogSlider, Result, Row, options
from .explorer import Explorer
from .export import Recipe
from .figure import masked_weights

__all__ = ["DotProduct", "explore_dot_product"]

NUM_TOKENS = 8
D_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
# The caption and its parts, which the page script says too (DotProduct.script_words).
CAPTION = N_("d = {d}, {scaled}, temperature {temperature:.2g}, valid_lens = {valid_lens}{causal}")
SCALED, UNSCALED, CAUSAL = N_("scaled by 1/√d"), N_("unscaled"), N_(", causal")


@dataclass(frozen=True)
class DotProductSettings:
    d: int = 16
    scale: bool = True
    temperature: float = 1.0
    valid_len: int = 8
    causal: bool = False


@dataclass(frozen=True)
class DotProductResult(Result):
    d: int
    scale: bool
    temperature: float
    causal: bool
    valid_lens: torch.Tensor  # (1,)
    entropy: torch.Tensor  # (queries,): each row's entropy, in nats


class DotProduct(Declaration):
    """Scaled dot-product weights for random queries and keys, with each row's entropy."""

    chapter = 4
    title = N_("Dot-product attention explorer")
    controls = (
        Choice("d", N_("dimension d"), options(D_CHOICES), style="slider"),
        Checkbox("scale", N_("divide by √d")),
        # Up to 10^1.5 ≈ 31.6: above √512 ≈ 22.6, so the temperature can undo the missing
        # scale at every d offered.
        LogSlider("temperature", N_("temperature"), 10, -1, 1.5, 0.05, readout=".2g"),
        # The argument's name in English; a translation may say it as a label ("comprimento válido").
        IntSlider("valid_len", N_("valid_len"), 0, NUM_TOKENS),
        Checkbox("causal", N_("causal")),
    )
    Settings = DotProductSettings
    rows = (Row(("d", "scale", "temperature")), Row(("valid_len", "causal")))
    figsize = (7, 3)
    filename = "dot_product.png"
    repr_controls = ("d", "scale", "temperature", "valid_len", "causal")
    page_script = "attention.js"  # 18,360 states, each computed in the page from the queries and keys
    script_words = {"dot product caption": CAPTION, "scaled": SCALED, "unscaled": UNSCALED, "causal": CAUSAL}

    def __init__(self, seed=0):
        generator = torch.Generator().manual_seed(seed)
        # Unit-variance coordinates, so an unscaled score q·k has variance d.
        # A smaller d uses the first d coordinates of the same vectors.
        self.all_queries = torch.randn(1, NUM_TOKENS, max(D_CHOICES), generator=generator)  # (1, queries, 512)
        self.all_keys = torch.randn(1, NUM_TOKENS, max(D_CHOICES), generator=generator)  # (1, keys, 512)

    @staticmethod
    def attention(causal):
        """The package's module; the causal one hides the future on top of valid_lens (the package
        combines the two). A new one each call: a module keeps the weights of its last call."""
        return DotProductAttention(dropout=0.0, causal=causal)

    def compute(self, settings):
        d, scale, temperature, causal = settings.d, settings.scale, settings.temperature, settings.causal
        queries = self.all_queries[..., :d]  # (1, queries, d)
        keys = self.all_keys[..., :d]  # (1, keys, d)
        # DotProductAttention divides the scores by √d: multiply it back in when
        # the scale is off, and divide by the temperature.
        factor = (1.0 if scale else math.sqrt(d)) / temperature
        valid_lens = torch.tensor([settings.valid_len])  # (1,)
        attention = self.attention(causal)
        attention(queries * factor, keys, keys, valid_lens)
        weights = attention.attention_weights[0]  # (queries, keys)
        entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)  # (queries,); 0 log 0 = 0
        mask = attention_mask(valid_lens, 1, *weights.shape, causal=causal)[0].expand(weights.shape)
        caption = _(CAPTION).format(d=d, scaled=_(SCALED) if scale else _(UNSCALED), temperature=temperature,
                                    valid_lens=valid_lens.tolist(), causal=_(CAUSAL) if causal else "")
        return DotProductResult(weights, caption, mask=mask, d=d, scale=scale, temperature=temperature,
                                causal=causal, valid_lens=valid_lens, entropy=entropy)

    def build(self, blit):
        return DotProductView(blit)

    def page_data(self):
        """The queries and keys (tokens, 512), float32 values: a smaller d uses their first d coordinates."""
        return {"queries": self.all_queries[0].tolist(), "keys": self.all_keys[0].tolist()}

    def recipe(self, result):
        d = result.d
        inputs = {"queries": self.all_queries[..., :d], "keys": self.all_keys[..., :d],
                  "valid_lens": result.valid_lens, "scale": result.scale,
                  "temperature": result.temperature, "causal": result.causal}
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


class DotProductView:
    """The weights on the left; each row's entropy on the right, a dashed tick at uniform's."""

    def __init__(self, blit):
        ax_map, ax_entropy = blit.figure.subplots(1, 2, sharey=True, width_ratios=(3, 2))
        self.heatmap = blit.heatmap(ax_map, NUM_TOKENS, NUM_TOKENS, masked=True)
        ax_map.set_title(_("attention weights"))
        blit.colorbar(ax_map)
        bars = ax_entropy.barh(range(NUM_TOKENS), np.zeros(NUM_TOKENS), height=0.6, color="C3")
        self.bars = [blit.animate(bar) for bar in bars]
        # Per row, the entropy of uniform weights over the keys that row may attend to.
        self.uniform = blit.animate(ax_entropy.plot([], [], color="gray", linestyle="--")[0])
        ax_entropy.set(xlim=(0, 1.05 * math.log(NUM_TOKENS)), title=_("row entropy"),
                       xlabel=_("nats (dashed: uniform over\nthe keys not masked)"))

    def update(self, result):
        self.heatmap.set_array(masked_weights(result.weights, result.mask))
        # A dashed tick per row at log(keys it may attend to); none for a row with no key.
        xs, ys = [], []
        for row, count in enumerate(result.mask.sum(dim=-1).tolist()):
            uniform = math.log(count) if count else math.nan
            xs += [uniform, uniform, math.nan]
            ys += [row - 0.4, row + 0.4, math.nan]
        self.uniform.set_data(xs, ys)
        for bar, value in zip(self.bars, result.entropy.tolist()):
            bar.set_width(value)


def explore_dot_product(d=16, scale=True, temperature=1.0, valid_len=8, causal=False):
    """Scaled dot-product attention: d, the 1/√d scale, temperature, valid length, causal."""
    declaration = DotProduct()
    return Explorer(declaration, declaration.checked_settings(d=d, scale=scale, temperature=temperature,
                                                              valid_len=valid_len, causal=causal))
