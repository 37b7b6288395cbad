"""Attention pooling as a weighted average: chapter 00's single query over six keys, and
chapter 01's Nadaraya–Watson fit next to its weights, as σ, the kernel and the data change."""

import functools
from dataclasses import dataclass

import numpy as np
import torch
from matplotlib import patheffects
from matplotlib.lines import Line2D

from ..i18n import N_, _, number
from ..kernels import KERNELS, nadaraya_watson
from ..plotting import CMAP, describe_weights
from .declaration import Choice, Declaration, FloatSlider, IntSlider, LogSlider, Result, say
from .explorer import Explorer
from .export import Recipe
from .figure import GridImage

__all__ = ["QueryPooling", "explore_one_query", "KernelPooling", "explore_kernel_pooling"]

LOW, HIGH = 0.0, 5.0  # the inputs: training points and queries lie in [0, 5)


def _toy_function(x):
    return 2 * torch.sin(x) + x


# Chapter 00's example: six keys on a line, each carrying a value.
QUERY_KEYS = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
QUERY_VALUES = (0.0, 2.0, 1.0, 4.0, 3.0, 5.0)
QUERY_LOW, QUERY_HIGH = -1.0, 6.0  # the query slider reaches a little past the keys on both sides
# Two scoring functions a(q, k), as (menu label, name): nearness, and the plain product of chapter 04.
SCORES = ((N_("−½(q − k)², nearness"), "distance"), (N_("q·k, product"), "product"))
# What the learner reads for each kernel of d2lmini.KERNELS (the menu, the caption): its code name in
# English, translated where it is shown; the code takes the name itself.
KERNEL_LABELS = {"gaussian": N_("gaussian"), "boxcar": N_("boxcar"), "constant": N_("constant"),
                 "epanechnikov": N_("epanechnikov")}
# The kernel explorer's caption, which its page script says too (KernelPooling.script_words).
KERNEL_CAPTION = N_("{kernel} kernel, σ = {sigma:.3g}, {n} training points")


def _scores(query, keys, score):
    """a(q, k) for every key (keys,), or for every query of ``query`` (queries,) -> (queries, keys)."""
    query = torch.as_tensor(query, dtype=keys.dtype)[..., None]  # (..., 1)
    return -0.5 * (query - keys) ** 2 if score == "distance" else query * keys


@dataclass(frozen=True)
class QuerySettings:
    query: float = 0.5
    score: str = "distance"


@dataclass(frozen=True)
class QueryResult(Result):
    query: float
    score: str
    output: float  # the answer Σ α_i v_i
    curve: torch.Tensor  # (141,): the answer at every query of the grid


@functools.cache
def _answer_curve(score):
    """The answer at every query of ``QueryPooling.query_grid``: it depends on the score alone."""
    every = torch.softmax(_scores(QueryPooling.query_grid, QueryPooling.pool_keys, score), dim=-1)  # (grid, keys)
    return every @ QueryPooling.pool_values  # (grid,)


class QueryPooling(Declaration):
    """One query pooled over chapter 00's six keys: move it, and see its weights and its answer.

    Top, the values at their keys, the answer Σ α_i v_i at the query's
    position, and the faint curve of the answers for every position; below, on
    the same axis, the weights α_i (one query × six keys), each written in its
    cell under its key. The nearness score is the Gaussian kernel of width 1.
    """

    chapter = 0
    title = N_("Query pooling explorer")
    controls = (
        FloatSlider("query", N_("query q"), QUERY_LOW, QUERY_HIGH, 0.1),
        Choice("score", N_("score a(q, k)"), SCORES),
    )
    Settings = QuerySettings
    figsize = (6.4, 4.4)
    filename = "one_query.png"
    repr_controls = ("query", "score")
    pool_keys = torch.tensor(QUERY_KEYS)  # (keys,)
    pool_values = torch.tensor(QUERY_VALUES)  # (keys,)
    query_grid = torch.linspace(QUERY_LOW, QUERY_HIGH, 141)  # (141,): every query, for the curve

    def compute(self, settings):
        query, score = settings.query, settings.score
        weights = torch.softmax(_scores(query, self.pool_keys, score), dim=-1)[None]  # (1 query, keys)
        output = (weights @ self.pool_values).item()
        name = say(self.control("score").label_of(score)).split(",")[0]
        caption = _("a(q, k) = {name}, q = {query:.1f}: answer {output:.3f}").format(
            name=name, query=query, output=output)
        return QueryResult(weights, caption,
                           query=query, score=score, output=output, curve=_answer_curve(score))

    def build(self, blit):
        return QueryView(blit, self.query_grid)

    def describe(self, result):
        return describe_weights(result.weights, query_labels=[f"q = {number(result.query, '.1f')}"],
                                key_labels=[f"k = {number(k, 'g')}" for k in QUERY_KEYS])

    def recipe(self, result):
        inputs = {"query": result.query, "keys": self.pool_keys, "score": result.score}
        return Recipe(inputs, """
            query = float(saved["query"])
            keys = torch.from_numpy(saved["keys"])  # (keys,)
            scores = -0.5 * (query - keys) ** 2 if str(saved["score"]) == "distance" else query * keys
            weights = torch.softmax(scores, dim=-1)[None]  # (1 query, keys)
        """)


class QueryView:
    """The values, the answer and its curve above; the weights below, each under its key."""

    def __init__(self, blit, query_grid):
        self.query_grid = query_grid.numpy()
        ax_values, ax_map = blit.figure.subplots(2, 1, sharex=True, height_ratios=(3, 1.2))
        ax_values.plot(QUERY_KEYS, QUERY_VALUES, "o", color="C0", ms=4)
        self.circles = blit.animate(ax_values.scatter(QUERY_KEYS, QUERY_VALUES, s=np.zeros(len(QUERY_KEYS)),
                                                      facecolors="none", edgecolors="C0"))
        self.curve = blit.animate(ax_values.plot([], [], color="C3", alpha=0.35, lw=1)[0])
        self.answer = blit.animate(ax_values.plot([], [], "*", color="C3", ms=12)[0])
        self.query_lines = [blit.animate(ax.axvline(0, color="gray", ls="--", lw=1)) for ax in (ax_values, ax_map)]
        legend = [  # the legend is drawn once: stand-ins for the artists that move
            Line2D([], [], marker="o", color="C0", ls="", ms=4, label=_("value $v_i$ at key $k_i$")),
            Line2D([], [], marker="o", mfc="none", mec="C0", ls="", ms=10, label=_("circle area: weight $\\alpha_i$")),
            Line2D([], [], marker="*", color="C3", ls="", ms=10, label=_("answer $\\Sigma_i\\, \\alpha_i v_i$")),
            Line2D([], [], color="C3", alpha=0.35, label=_("the answer for every $q$")),
            Line2D([], [], color="gray", ls="--", lw=1, label=_("the query $q$")),
        ]
        ax_values.legend(handles=legend, loc="upper left", fontsize="x-small")
        ax_values.set(ylim=(-0.8, 9), ylabel=_("value"))
        # One row of weights on the values' x axis: each key's cell sits under its key.
        self.heatmap = blit.heatmap(ax_map, 1, len(QUERY_KEYS), xlabel=_("Keys $k_i$ (and the query $q$) on the line"),
                                    ylabel=_("Query"))
        ax_map.set_xlim(QUERY_LOW, QUERY_HIGH)
        ax_map.set_yticks([0], ["q"])
        outline = [patheffects.withStroke(linewidth=2.5, foreground="white")]  # readable on every colour map
        self.labels = [blit.animate(ax_map.text(k, 0, "", ha="center", va="center", fontsize="small",
                                                path_effects=outline))
                       for k in QUERY_KEYS]
        blit.colorbar(ax_map)

    def update(self, result):
        weights, query = result.weights[0], result.query  # (keys,), a number
        self.heatmap.set_array(result.weights.numpy())
        self.circles.set_sizes((400 * weights).numpy())
        self.curve.set_data(self.query_grid, result.curve.numpy())
        for line in self.query_lines:
            line.set_xdata([query, query])
        self.answer.set_data([query], [result.output])
        for label, weight in zip(self.labels, weights.tolist()):
            label.set_text(number(weight, ".2f"))


@dataclass(frozen=True)
class KernelSettings:
    sigma: float = 0.5
    kernel: str = "gaussian"
    n_train: int = 40


@dataclass(frozen=True)
class KernelResult(Result):
    kernel: str
    sigma: float
    x_train: torch.Tensor  # (n,): the keys, sorted
    y_train: torch.Tensor  # (n,): the values
    predictions: torch.Tensor  # (queries,)


QUERIES = torch.arange(LOW, HIGH, 0.1)  # (50,): the kernel explorer's queries


def training_data(n, seed=0):
    """``n`` sorted training inputs in [0, 5) and noisy targets 2 sin(x) + x."""
    generator = torch.Generator().manual_seed(seed)
    x_train = torch.sort(torch.rand(n, generator=generator) * HIGH).values  # (n,)
    y_train = _toy_function(x_train) + 0.5 * torch.randn(n, generator=generator)  # (n,)
    return x_train, y_train


class KernelPooling(Declaration):
    """Nadaraya–Watson pooling: the fit next to the weights (queries × keys, by position).

    The weights are drawn against positions on a fixed [0, 5) axis: key j's
    column spans the inputs nearer to x_j than to any other key. The axes are
    the same for every number of training points, so a new number draws as
    fast as any other change.
    """

    chapter = 1
    title = N_("Kernel pooling explorer")
    controls = (
        # Powers of 2 on the slider's grid, so 0.5 or 0.25 stays exact: the browser
        # snaps a value to the grid and sends it back.
        LogSlider("sigma", N_("width σ"), 2, -7, 3, 0.25),
        Choice("kernel", N_("kernel"), tuple((KERNEL_LABELS[name], name) for name in KERNELS)),
        IntSlider("n_train", N_("training points"), 5, 100, 5),
    )
    Settings = KernelSettings
    figsize = (8, 3.2)
    filename = "kernel_pooling.png"
    repr_controls = ("sigma", "kernel", "n_train")
    queries = QUERIES
    page_script = "kernel_pooling.js"  # 3,280 states of up to 5,000 weights: the page computes them
    script_words = {"caption": KERNEL_CAPTION}

    def compute(self, settings):
        sigma, kernel, n = settings.sigma, settings.kernel, settings.n_train
        x_train, y_train = training_data(n)
        predictions, weights = nadaraya_watson(self.queries, x_train, y_train, kernel, sigma)
        caption = _(KERNEL_CAPTION).format(kernel=_(KERNEL_LABELS[kernel]), sigma=sigma, n=n)
        return KernelResult(weights, caption,
                            kernel=kernel, sigma=sigma, x_train=x_train, y_train=y_train, predictions=predictions)

    def build(self, blit):
        return KernelView(blit, self.queries)

    def page_data(self):
        """The queries, each kernel's name as the caption says it, and, for every number of training points,
        the training data (float32 values)."""
        data = {"queries": self.queries.tolist(), "low": LOW, "high": HIGH, "training": {},
                "kernel_labels": {name: _(label) for name, label in KERNEL_LABELS.items()}}
        for n in self.control("n_train").values():
            x_train, y_train = training_data(n)
            data["training"][str(n)] = [x_train.tolist(), y_train.tolist()]
        return data

    def describe(self, result):
        # The summary's names for the rows and columns: the training points move with n_train.
        queries = [f"x = {number(x, '.1f')}" for x in self.queries.tolist()]
        keys = [f"x = {number(x, '.2f')}" for x in result.x_train.tolist()]
        return describe_weights(result.weights, query_labels=queries, key_labels=keys)

    def recipe(self, result):
        inputs = {"queries": self.queries, "x_train": result.x_train, "y_train": result.y_train,
                  "kernel": result.kernel, "sigma": result.sigma}
        return Recipe(inputs, """
            queries = torch.from_numpy(saved["queries"])  # (queries,)
            x_train = torch.from_numpy(saved["x_train"])  # (keys,): the keys, sorted
            y_train = torch.from_numpy(saved["y_train"])  # (keys,): the values
            predictions, weights = d2l.nadaraya_watson(queries, x_train, y_train, str(saved["kernel"]),
                                                       float(saved["sigma"]))  # weights: (queries, keys)
        """)


class KernelView:
    """The fit on the left; the weights on the right, each key's column at its position."""

    def __init__(self, blit, queries):
        self.queries = queries.numpy()
        step = float(queries[1] - queries[0])
        self.query_edges = np.append(self.queries, HIGH) - step / 2  # (51,): rows centred on queries
        ax_fit, ax_map = blit.figure.subplots(1, 2)
        x = torch.linspace(LOW, HIGH, 200)
        ax_fit.plot(x, _toy_function(x), "--", color="gray", label=_("truth"))
        self.points = blit.animate(ax_fit.plot([], [], "o", ms=3, alpha=0.6, label=_("training data"))[0])
        self.fit = blit.animate(ax_fit.plot([], [], color="C3", label=_("prediction"))[0])
        ax_fit.set(xlim=(LOW, HIGH), ylim=(-2.5, 7), xlabel="x", ylabel="y")
        ax_fit.legend(loc="upper left", fontsize="small")
        ax_fit.set_title(_("Nadaraya–Watson regression"))
        # An image on a rectilinear grid whose columns may change in number and width.
        self.heatmap = GridImage(ax_map, [LOW, HIGH], self.query_edges, np.zeros((len(self.queries), 1)),
                                 cmap=CMAP, norm=blit.norm)
        self.heatmap.set_extent((LOW, HIGH, self.query_edges[0], self.query_edges[-1]))
        ax_map.add_image(self.heatmap)
        blit.animate(self.heatmap)
        ax_map.set(xlim=(LOW, HIGH), ylim=(self.query_edges[-1], self.query_edges[0]),
                   xlabel=_("Keys (training inputs x)"), ylabel=_("Queries (x)"), title=_("attention weights"))
        blit.colorbar(ax_map)

    def update(self, result):
        x_train = result.x_train.numpy()
        self.points.set_data(x_train, result.y_train.numpy())
        self.fit.set_data(self.queries, result.predictions.numpy())
        key_edges = np.concatenate([[LOW], (x_train[1:] + x_train[:-1]) / 2, [HIGH]])  # (n + 1,)
        self.heatmap.set_data(key_edges, self.query_edges, result.weights.numpy())


def explore_kernel_pooling(sigma=0.5, kernel="gaussian", n_train=40):
    """Nadaraya–Watson pooling: the kernel width σ (log scale), the kernel, the training points."""
    declaration = KernelPooling()
    return Explorer(declaration, declaration.checked_settings(sigma=sigma, kernel=kernel, n_train=n_train))


def explore_one_query(query=0.5, score="distance"):
    """One query over six keys: its position q and the score a(q, k), with its weights and answer."""
    declaration = QueryPooling()
    return Explorer(declaration, declaration.checked_settings(query=query, score=score))
