"""The online softmax of chapter 06: one query visits sixteen keys a block at a time.

The picture shows, after the blocks seen so far, the weights over the keys seen
(the blocks not yet seen hatched), the running maximum m and running sum ℓ
after each block, the partial output o / ℓ reaching the exact output at the last block, and
the scores each path holds for sixteen queries: the explicit path's n × n
against the blockwise path's n × block.
"""

import dataclasses
import math
from dataclasses import dataclass

import torch
from matplotlib.lines import Line2D

from .._checks import check_choice
from ..attention import DotProductAttention
from ..i18n import N_, _, n_
from ..plotting import describe_weights
from .declaration import Choice, Declaration, Result, Row, options
from .explorer import Explorer
from .export import Recipe
from .figure import masked_weights

__all__ = ["OnlineSoftmax", "explore_online_softmax"]

NUM_KEYS = 16  # n: the keys (and, for the memory count, the queries)
BLOCK_SIZES = (1, 2, 4, 8, 16)  # the divisors of NUM_KEYS
KEY_SIZE = 4  # d
VALUE_SIZE = 2  # each value has two numbers: the output is drawn as two lines


def example(seed=0):
    """The chapter's query (1, 1, d), keys (1, n, d) and values (1, n, 2), drawn from ``seed``."""
    generator = torch.Generator().manual_seed(seed)
    query = 2 * torch.randn(1, 1, KEY_SIZE, generator=generator)  # (1, 1 query, d): spread-out scores
    keys = torch.randn(1, NUM_KEYS, KEY_SIZE, generator=generator)  # (1, keys, d)
    values = torch.randn(1, NUM_KEYS, VALUE_SIZE, generator=generator)  # (1, keys, 2)
    return query, keys, values


def online_softmax_steps(scores, values, block_size):
    """The running state after each block: m (blocks,), ℓ (blocks,) and o (blocks, value_size).

    ``scores`` (keys,) are one query's scaled scores, ``values`` (keys, value_size).
    """
    m, total = torch.tensor(-math.inf), torch.tensor(0.0)
    output = torch.zeros(values.shape[-1])
    maxima, totals, outputs = [], [], []
    for start in range(0, len(scores), block_size):
        block = scores[start:start + block_size]  # (block,)
        new_m = torch.maximum(m, block.max())
        rescale = torch.exp(m - new_m)  # 0 on the first block, where m = -inf
        p = torch.exp(block - new_m)  # (block,)
        total = total * rescale + p.sum()
        output = output * rescale + p @ values[start:start + block_size]
        m = new_m
        maxima.append(m)
        totals.append(total)
        outputs.append(output)
    return torch.stack(maxima), torch.stack(totals), torch.stack(outputs)


@dataclass(frozen=True)
class OnlineSoftmaxSettings:
    block_size: int = 4
    step: int = 2  # blocks seen


@dataclass(frozen=True)
class OnlineSoftmaxResult(Result):
    block_size: int
    step: int
    keys_seen: torch.Tensor  # (step,): the keys seen after each block, b, 2b, ...
    maxima: torch.Tensor  # (step,): m after each block
    totals: torch.Tensor  # (step,): ℓ after each block
    partial: torch.Tensor  # (step, 2): o / ℓ after each block
    exact: torch.Tensor  # (2,): softmax(q Kᵀ / √d) V, the explicit path's output


class OnlineSoftmax(Declaration):
    """One query, sixteen keys, visited ``block_size`` at a time: step through the blocks.

    Top, the weights over the keys seen so far, exp(s_j − m) / ℓ (the keys not
    yet seen hatched); below, m and ℓ after each block, the partial output
    o / ℓ after each block against the exact output (dashed), and the scores
    each path holds at once for sixteen queries. ``step`` offers 0 to
    n / block_size blocks (``choices``); a larger block size brings it down
    to its last block (``adjust``).
    """

    chapter = 6
    title = N_("Online softmax explorer")
    controls = (
        Choice("block_size", N_("block size"), options(BLOCK_SIZES), style="slider"),
        Choice("step", N_("blocks seen"), options(range(NUM_KEYS + 1)), style="slider"),
    )
    Settings = OnlineSoftmaxSettings
    rows = (Row(("block_size", "step")),)
    figsize = (8, 4.8)
    filename = "online_softmax.png"
    repr_controls = ("block_size", "step")

    def __init__(self, seed=0):
        self.seed = seed
        self.query, self.keys, self.values = example(seed)
        self.scores = (self.query[0, 0] @ self.keys[0].T) / math.sqrt(KEY_SIZE)  # (keys,): scaled scores
        with torch.no_grad():
            self.exact = DotProductAttention(0.0)(self.query, self.keys, self.values)[0, 0]  # (2,)

    def checked_settings(self, step=OnlineSoftmaxSettings.step, **values):
        """The settings, ``step`` checked against the blocks that ``block_size`` makes."""
        settings = super().checked_settings(**values)
        check_choice(step, "step", self.choices(settings)["step"])
        return dataclasses.replace(settings, step=step)

    def choices(self, settings):
        return {"step": list(range(NUM_KEYS // settings.block_size + 1))}

    def adjust(self, settings, changed):
        """The last block when a larger block size leaves fewer blocks than the step."""
        last = NUM_KEYS // settings.block_size
        if settings.step > last:
            return dataclasses.replace(settings, step=last)
        return settings


    def compute(self, settings):
        block_size, step = settings.block_size, settings.step
        num_blocks = NUM_KEYS // block_size
        maxima, totals, outputs = online_softmax_steps(self.scores, self.values[0], block_size)
        maxima, totals, outputs = maxima[:step], totals[:step], outputs[:step]
        seen = step * block_size
        mask = (torch.arange(NUM_KEYS) < seen)[None]  # (1 query, keys): True for the keys seen
        weights = torch.zeros(1, NUM_KEYS)
        if step:
            weights[0, :seen] = torch.exp(self.scores[:seen] - maxima[-1]) / totals[-1]
            # "1 of 1 block seen", "2 of 4 blocks seen": the noun agrees with the number of blocks.
            caption = n_("block size {block_size}: {step} of {num_blocks} block seen ({seen} of {num_keys} keys), "
                         "m = {m:.2f}, ℓ = {total:.2f}",
                         "block size {block_size}: {step} of {num_blocks} blocks seen ({seen} of {num_keys} keys), "
                         "m = {m:.2f}, ℓ = {total:.2f}", num_blocks).format(
                block_size=block_size, step=step, num_blocks=num_blocks, seen=seen, num_keys=NUM_KEYS,
                m=maxima[-1], total=totals[-1])
        else:
            caption = n_("block size {block_size}: 0 of {num_blocks} block seen, nothing computed yet",
                         "block size {block_size}: 0 of {num_blocks} blocks seen, nothing computed yet",
                         num_blocks).format(block_size=block_size, num_blocks=num_blocks)
        return OnlineSoftmaxResult(weights, caption, mask=mask, block_size=block_size, step=step,
                                   keys_seen=block_size * torch.arange(1, step + 1), maxima=maxima, totals=totals,
                                   partial=outputs / totals[:, None], exact=self.exact)

    def build(self, blit):
        return OnlineSoftmaxView(blit, self.exact)

    def describe(self, result):
        # The hatched keys are the ones not visited yet, not masked ones.
        return describe_weights(result.weights, result.mask, unseen=True)

    def recipe(self, result):
        inputs = {"query": self.query, "keys": self.keys, "values": self.values,
                  "keys_seen": result.step * result.block_size}
        return Recipe(inputs, """
            query = torch.from_numpy(saved["query"])  # (1, 1 query, d)
            seen = int(saved["keys_seen"])
            keys = torch.from_numpy(saved["keys"])  # (1, n keys, d)
            # The weights over the keys seen so far: the online softmax's exp(s - m) / ℓ; 0 on the keys not
            # yet seen, as the explorer draws them (hatched).
            weights = torch.zeros(1, keys.shape[1], dtype=query.dtype)
            scores = query @ keys[:, :seen].transpose(1, 2) / query.shape[-1] ** 0.5  # (1, 1, keys seen)
            weights[:, :seen] = torch.softmax(scores, dim=-1)[0]
        """)


class OnlineSoftmaxView:
    """The weights seen so far on top; m and ℓ, the partial output and the memory below."""

    def __init__(self, blit, exact):
        figure = blit.figure
        grid = figure.add_gridspec(2, 3, height_ratios=(1, 3.2), width_ratios=(1, 1, 0.8))
        ax_map = figure.add_subplot(grid[0, :])
        ax_state, ax_output, ax_memory = (figure.add_subplot(grid[1, i]) for i in range(3))
        self.heatmap = blit.heatmap(ax_map, 1, NUM_KEYS, xlabel=_("Keys (the ones not yet seen hatched)"), ylabel="",
                                    masked=True)
        ax_map.set_yticks([0], ["q"])
        ax_map.set_title(_("weights over the keys seen so far, $e^{s_j - m} / \\ell$"), fontsize="medium")
        blit.colorbar(ax_map)
        # The hatching's legend entry (BlitFigure.colorbar's "masked") names what it means here.
        blit.figure.legends[-1].texts[0].set_text(_("not seen yet"))

        self.maxima = blit.animate(ax_state.plot([], [], "o-", color="C0", ms=4, label=_("running max $m$"))[0])
        self.totals = blit.animate(ax_state.plot([], [], "s-", color="C1", ms=4, label=_("running sum $\\ell$"))[0])
        ax_state.set(xlim=(0, NUM_KEYS + 0.5), ylim=(-2.5, 5.5), xlabel=_("keys seen"), title=_("after each block"))
        ax_state.legend(loc="upper left", fontsize="x-small")

        self.partial = []
        for i, colour in enumerate(("C2", "C3")):
            ax_output.axhline(float(exact[i]), color=colour, ls="--", lw=1)
            self.partial.append(blit.animate(ax_output.plot([], [], "o-", color=colour, ms=4)[0]))
        legend = [Line2D([], [], marker="o", color="gray", ms=4, label=_("partial output $o / \\ell$")),
                  Line2D([], [], color="gray", ls="--", lw=1, label=_("exact output"))]
        ax_output.legend(handles=legend, loc="lower right", fontsize="x-small")
        ax_output.set(xlim=(0, NUM_KEYS + 0.5), ylim=(-0.2, 2.8), xlabel=_("keys seen"),
                       title=_("output (2 numbers)"))

        bars = ax_memory.bar([0, 1], [NUM_KEYS ** 2, NUM_KEYS], color=["C7", "C0"], width=0.6)
        self.block_bar = blit.animate(bars[1])
        ax_memory.text(0, NUM_KEYS ** 2 + 6, f"{NUM_KEYS ** 2}", ha="center", va="bottom", fontsize="small")
        self.block_label = blit.animate(ax_memory.text(1, 0, "", ha="center", va="bottom", fontsize="small"))
        ax_memory.set_xticks([0, 1], [_("explicit\n$n \\times n$"), _("blockwise\n$n \\times$ block")])
        ax_memory.set(xlim=(-0.6, 1.6), ylim=(0, 300), ylabel=_("scores held (floats)"),
                      title=_("{count} queries at once").format(count=NUM_KEYS))

    def update(self, result):
        self.heatmap.set_array(masked_weights(result.weights, result.mask))
        seen = result.keys_seen.numpy()
        self.maxima.set_data(seen, result.maxima.numpy())
        self.totals.set_data(seen, result.totals.numpy())
        for i, line in enumerate(self.partial):
            line.set_data(seen, result.partial[:, i].numpy())
        held = NUM_KEYS * result.block_size
        self.block_bar.set_height(held)
        self.block_label.set_position((1, held + 6))
        self.block_label.set_text(f"{held}")


def explore_online_softmax(block_size=4, step=2):
    """The online softmax: the block size, and how many blocks of keys have been seen."""
    declaration = OnlineSoftmax()
    return Explorer(declaration, declaration.checked_settings(block_size=block_size, step=step))

