"""Nadaraya–Watson pooling: the fit next to its weights, as σ, the kernel and the data change."""

import numpy as np
import torch
from matplotlib.image import PcolorImage

from ..kernels import KERNELS, nadaraya_watson
from ..plotting import describe_weights
from .base import CMAP, WIDE, Explorer, Recipe, Shown, dropdown, int_slider, log_slider

LOW, HIGH = 0.0, 5.0  # the inputs: training points and queries lie in [0, 5)


def _toy_function(x):
    return 2 * torch.sin(x) + x


class KernelPoolingExplorer(Explorer):
    """Nadaraya–Watson pooling: the fit next to the weights (queries × keys, by position).

    The weights are drawn against positions on a fixed [0, 5) axis: key j's
    column spans the inputs nearer to x_j than to any other key. The axes are
    the same for every number of training points, so a new number draws as
    fast as any other change.
    """

    repr_controls = ("sigma", "kernel", "n_train")
    x_train, y_train, predictions = Shown(), Shown(), Shown()

    def __init__(self, sigma=0.5, kernel="gaussian", n_train=40, seed=0):
        self.seed = seed
        self.queries = torch.arange(LOW, HIGH, 0.1)  # (50,)
        step = float(self.queries[1] - self.queries[0])
        self.query_edges = np.append(self.queries.numpy(), HIGH) - step / 2  # (51,): rows centred on queries
        self.query_labels = [f"x = {x:.1f}" for x in self.queries.tolist()]  # the summary's names for the rows
        controls = {
            # Powers of 2 on the slider's grid, so 0.5 or 0.25 stays exact: the browser
            # snaps a value to the grid and sends it back.
            "sigma": log_slider("sigma", sigma, 2, -7, 3, step=0.25, description="width σ",
                                readout_format=".3g", style=WIDE),
            "kernel": dropdown("kernel", kernel, list(KERNELS), description="kernel"),
            "n_train": int_slider("n_train", n_train, 5, 100, step=5, description="training points",
                                  style=WIDE),
        }
        super().__init__(controls, figsize=(8, 3.2), filename="kernel_pooling.png")

    def training_data(self, n):
        """``n`` sorted training inputs in [0, 5) and noisy targets 2 sin(x) + x."""
        generator = torch.Generator().manual_seed(self.seed)
        x_train = torch.sort(torch.rand(n, generator=generator) * HIGH).values  # (n,)
        y_train = _toy_function(x_train) + 0.5 * torch.randn(n, generator=generator)  # (n,)
        return x_train, y_train

    def build(self, plot):
        ax_fit, ax_map = plot.figure.subplots(1, 2)
        x = torch.linspace(LOW, HIGH, 200)
        ax_fit.plot(x, _toy_function(x), "--", color="gray", label="truth")
        self.points = plot.animate(ax_fit.plot([], [], "o", ms=3, alpha=0.6, label="training data")[0])
        self.fit = plot.animate(ax_fit.plot([], [], color="C3", label="prediction")[0])
        ax_fit.set(xlim=(LOW, HIGH), ylim=(-2.5, 7), xlabel="x", ylabel="y")
        ax_fit.legend(loc="upper left", fontsize="small")
        ax_fit.set_title("Nadaraya–Watson regression")
        # An image on a rectilinear grid whose columns may change in number and width.
        self.heatmap = PcolorImage(ax_map, [LOW, HIGH], self.query_edges, np.zeros((len(self.queries), 1)),
                                   cmap=CMAP, norm=plot.norm)
        self.heatmap.set_extent((LOW, HIGH, self.query_edges[0], self.query_edges[-1]))
        ax_map.add_image(self.heatmap)
        plot.animate(self.heatmap)
        ax_map.set(xlim=(LOW, HIGH), ylim=(self.query_edges[-1], self.query_edges[0]),
                   xlabel="Keys (training inputs x)", ylabel="Queries (x)", title="attention weights")
        plot.colorbar(ax_map)

    def compute(self, state):
        sigma, kernel, n = state["sigma"], state["kernel"], state["n_train"]
        x_train, y_train = self.training_data(n)
        predictions, weights = nadaraya_watson(self.queries, x_train, y_train, kernel, sigma)
        return {"weights": weights, "x_train": x_train, "y_train": y_train, "predictions": predictions,
                "caption": f"{kernel} kernel, σ = {sigma:.3g}, {n} training points"}

    def draw(self, result):
        x_train = result["x_train"].numpy()
        self.points.set_data(x_train, result["y_train"].numpy())
        self.fit.set_data(self.queries.numpy(), result["predictions"].numpy())
        key_edges = np.concatenate([[LOW], (x_train[1:] + x_train[:-1]) / 2, [HIGH]])  # (n + 1,)
        self.heatmap.set_data(key_edges, self.query_edges, result["weights"].numpy())

    def describe(self, result):
        keys = [f"x = {x:.2f}" for x in result["x_train"].tolist()]  # the training points move with n_train
        return describe_weights(result["weights"], query_labels=self.query_labels, key_labels=keys)

    def recipe(self, result):
        state = self.state
        inputs = {"queries": self.queries, "x_train": result["x_train"], "y_train": result["y_train"],
                  "kernel": state["kernel"], "sigma": state["sigma"]}
        return Recipe(inputs, """
            queries = torch.from_numpy(saved["queries"])  # (queries,)
            x_train = torch.from_numpy(saved["x_train"])  # (keys,): the keys, sorted
            y_train = torch.from_numpy(saved["y_train"])  # (keys,): the values
            predictions, weights = d2l.nadaraya_watson(queries, x_train, y_train, str(saved["kernel"]),
                                                       float(saved["sigma"]))  # weights: (queries, keys)
        """)


def explore_kernel_pooling(sigma=0.5, kernel="gaussian", n_train=40):
    """Nadaraya–Watson pooling: the kernel width σ (log scale), the kernel, the training points."""
    return KernelPoolingExplorer(sigma, kernel, n_train)
