"""Interactive heatmap explorers: move a slider, see the attention weights change.

Each ``explore_*`` function returns an explorer, an ``ipywidgets.VBox`` with
its controls, a caption with the values drawn, the picture (an
``ipywidgets.Image`` of PNG bytes), a Save row and a message line. The explorer exposes ``controls`` (name -> widget),
``image``, ``weights`` (the tensor drawn now), ``figure`` and ``save(path)``.

How an update works, and why:

* The weights are computed by d2lmini's own functions, so the picture shows
  what the package computes.
* The figure is a ``matplotlib.figure.Figure`` on an Agg canvas, never a
  pyplot figure, so nothing leaks into the notebook's inline output.
* The figure is built once. The artists that change (heatmaps, lines, bars)
  are *animated*: the rest is drawn once and kept as a background,
  and an update pastes the background back and draws only those artists.
  A new figure per change costs several times more (see
  ``benchmarks/widget_latency.py``).
* The cell output is the container alone, and its text form is a short repr
  of the control values, so a notebook displaying an explorer passes strict
  nbval.
* An exception while updating is shown in the explorer (and kept as
  ``last_error``); the previous picture stays, and the next change redraws.
* Every explorer has a ``colour_scale`` control: ``"fixed"`` (0 to 1) or
  ``"fit"`` (0 to ``scale_top(weights)``). The heatmaps and the colorbar share
  one ``Normalize``, so one assignment recolours them all.
"""

import contextlib
import html
import math
import struct
import traceback
import zlib
from pathlib import Path
from types import SimpleNamespace

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ._checks import check_positive_int
from .attention import AdditiveAttention, DotProductAttention, MultiHeadAttention
from .kernels import KERNELS, nadaraya_watson
from .masking import causal_valid_lens, masked_softmax

DPI = 80  # modest: the PNG is re-encoded and sent to the browser on every change
CMAP = "Reds"  # as d2l.show_heatmaps
WIDE = {"description_width": "initial"}


def _check_range(value, name, low, high, integer=False):
    kinds, wanted = ((int,), "an int") if integer else ((int, float), "a number")
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise TypeError(f"{name} must be {wanted}, got {type(value).__name__} {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {value}")


def _check_choice(value, name, choices):
    # True == 1 in Python: a bool is only a valid choice among bools, and an int never is.
    if isinstance(value, bool) != isinstance(choices[0], bool) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")


def _check_valid_lens(valid_lens, batch, num_keys):
    """Starting lengths: a list or tuple with one int in 0..num_keys per example."""
    if not isinstance(valid_lens, (list, tuple)) or len(valid_lens) != batch:
        raise ValueError(f"valid_lens must be a list or tuple of {batch} lengths, one per example, "
                         f"got {valid_lens!r}")
    for b, length in enumerate(valid_lens):
        _check_range(length, f"valid_lens[{b}]", 0, num_keys, integer=True)


def _heatmap(ax, norm, num_queries, num_keys, xlabel="Keys", ylabel="Queries"):
    """An animated (queries, keys) heatmap coloured by the figure's shared ``norm``, query 0 at the top.

    Cell (i, j) is centred on (j, i), as with ``imshow``. It is a QuadMesh
    because that draws these small grids several times faster than an image.
    """
    mesh = ax.pcolormesh(np.arange(num_keys + 1) - 0.5, np.arange(num_queries + 1) - 0.5,
                         np.zeros((num_queries, num_keys)), cmap=CMAP, norm=norm, animated=True)
    ax.set(xlim=(-0.5, num_keys - 0.5), ylim=(num_queries - 0.5, -0.5), xlabel=xlabel, ylabel=ylabel)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return mesh


def _colorbar(fig, axes, norm):
    """One colorbar for ``axes``, true for all of them: every heatmap shares ``norm``."""
    fig.colorbar(ScalarMappable(norm, CMAP), ax=axes, shrink=0.9, label="attention weight")


# Upper ends for the "fit to weights" colour scale. Rounding the largest weight
# up to one of these keeps the colorbar's ticks readable, and lets a kept
# background be reused: the colorbar is part of it.
SCALE_TOPS = (1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001)


def scale_top(weights):
    """The smallest of ``SCALE_TOPS`` at or above the largest weight (1 when all are 0)."""
    largest = float(weights.max()) if weights.numel() else 0.0
    if largest <= 0:
        return 1.0
    # Float32 stores 0.1 as 0.10000000149: uniform weights over 10 keys must still get 0.1.
    return min((top for top in SCALE_TOPS if top >= largest * (1 - 1e-6)), default=1.0)


def _png_chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def _png(rgba):
    """PNG bytes of an (height, width, 4) uint8 array, alpha dropped (the figure is opaque).

    Written by hand because it is the largest cost of an update otherwise:
    Pillow tries five row filters on every row, while filter 0 ("none") with
    zlib level 1 is about three times faster, and flat-coloured plots compress
    well without filters.
    """
    height, width, _ = rgba.shape
    rows = np.zeros((height, 1 + 3 * width), dtype=np.uint8)  # each row: filter byte 0, then RGB
    np.copyto(rows[:, 1:].reshape(height, width, 3), rgba[..., :3])
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", zlib.compress(rows, 1)) + _png_chunk(b"IEND", b""))


@contextlib.contextmanager
def _one_thread():
    """Run torch on one thread: the tensors here are tiny, and waking torch's
    worker threads after an idle pause costs more than the whole computation
    (8 ms for a (50, 40) softmax on a busy 2-core machine, against 0.1 ms)."""
    num_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(num_threads)


def _error_html(error):
    summary = html.escape(f"{type(error).__name__}: {error}")
    details = html.escape("".join(traceback.format_exception(error)))
    return (f'<details style="color:#b00020"><summary>⚠ {summary}</summary>'
            f"<pre>{details}</pre></details>")


class _Plot:
    """A figure built once and redrawn by blitting its animated artists.

    ``build(figure, norm)`` adds the axes and artists and returns the parts the
    explorer moves; artists created with ``animated=True`` are left out of the
    kept background and drawn on every render. Every heatmap and the colorbar
    share ``norm``, so changing its upper end recolours them all at once.
    """

    def __init__(self, figsize, build):
        self.figure = Figure(figsize=figsize, dpi=DPI, layout="constrained")
        self.canvas = FigureCanvasAgg(self.figure)
        self.norm = Normalize(0, 1)
        self.parts = build(self.figure, self.norm)
        self.backgrounds = {}  # background state -> pixels of everything not animated
        self.state = None
        self.animated = []

    def render(self, state=None):
        """Draw the figure and return it as PNG bytes.

        ``state`` is a hashable summary of what is *not* animated, such as the
        number of keys on an axis. A state seen for the first time is drawn in
        full (text is the slow part of that) and its background kept; later
        renders paste a kept background and draw the animated artists only.
        """
        if state not in self.backgrounds:
            self.canvas.draw()  # everything but the animated artists
            # Keep the layout of the first draw: constrained layout costs more
            # than the whole update, and the axes do not move.
            self.figure.set_layout_engine("none")
            self.backgrounds[state] = self.canvas.copy_from_bbox(self.figure.bbox)
        else:
            self.canvas.restore_region(self.backgrounds[state])
        if state != self.state or not self.animated:  # the explorer may have added artists
            # Animated artists are children of an axes; findobj would also visit every
            # tick, which costs more than the whole update.
            animated = (a for ax in self.figure.axes for a in ax.get_children() if a.get_animated())
            self.animated = sorted(animated, key=lambda a: a.get_zorder())
            self.state = state
        for artist in self.animated:
            self.figure.draw_artist(artist)
        return _png(np.asarray(self.canvas.buffer_rgba()))  # buffer: (height, width, 4)

    def save(self, path, fmt, dpi, caption):
        """Write the whole figure, animated artists included, with ``caption`` above it."""
        title = self.figure.text(0.5, 1.0, caption, ha="center", va="bottom")
        try:  # "tight" grows the saved area to take in the caption above the frozen layout
            self.figure.savefig(path, format=fmt, dpi=dpi, facecolor="white", bbox_inches="tight")
        finally:
            title.remove()
            self.backgrounds.clear()  # saving redrew the canvas, maybe at another dpi


class Explorer(widgets.VBox):
    """Controls, a picture of a kept figure, a Save row and a message line.

    Subclasses set ``_plot`` and ``repr_controls``, pass the controls and
    their layout rows, and define ``_compute`` (control values -> a dict with
    ``"weights"`` and ``"caption"``, drawing nothing) and ``_draw`` (move the artists;
    return None, or a hashable summary of what else it changed: see ``_Plot.render``).
    """

    repr_controls = ()  # the controls named in repr: short and deterministic for nbval

    COLOUR_SCALES = (("0 to 1", "fixed"), ("fit to weights", "fit"))

    def __init__(self, controls, rows, filename):
        super().__init__()
        # The fixed scale compares pictures honestly; fitting it makes small
        # weights (a wide kernel, many keys) visible. The colorbar is true either way.
        controls["colour_scale"] = widgets.ToggleButtons(options=self.COLOUR_SCALES, value="fixed",
                                                         description="colours")
        self.controls = controls
        self.weights = None
        self.last_error = None
        self._syncing = False
        self.caption = widgets.HTML()  # the values drawn, as text: drawing text in the figure is slow
        self.image = widgets.Image(format="png")
        self.message = widgets.HTML()
        self.save_path = widgets.Text(value=filename, description="save as", style=WIDE)
        self.save_button = widgets.Button(description="Save", icon="download",
                                          tooltip="Save the figure as PNG or SVG, chosen by the file extension")
        self.save_button.on_click(self._on_save)
        self._refresh()  # a failure here raises: the constructor's caller sees it
        for control in controls.values():
            control.observe(self._on_change, names="value")
        self.children = [*rows, controls["colour_scale"], self.caption, self.image,
                         widgets.HBox([self.save_path, self.save_button]), self.message]

    @property
    def figure(self):
        """The matplotlib figure drawn now."""
        return self._plot.figure

    def __repr__(self):
        values = ", ".join(f"{name}={self.controls[name].value!r}" for name in self.repr_controls)
        return f"{type(self).__name__}({values})"

    def save(self, path, dpi=150):
        """Save the current view with its caption to ``path``, PNG or SVG by the extension.

        Returns the path.
        """
        path = Path(path)
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in ("png", "svg"):
            raise ValueError(f"path must end in .png or .svg, got {str(path)!r}")
        self._plot.save(path, fmt, dpi, self._caption_text)
        return path

    def _refresh(self):
        with _one_thread():
            data = self._compute()
        state = self._draw(data)  # may choose self._plot
        caption = data["caption"]
        top = 1.0
        if self.controls["colour_scale"].value == "fit":
            top = scale_top(data["weights"])
            caption += f"; colours 0 to {top:g}"
        self._plot.norm.vmax = top  # recolours the heatmaps and the colorbar
        self.image.value = self._plot.render((state, top))
        self.weights = data["weights"]
        self._caption_text = caption
        self.caption.value = f"<b>{html.escape(caption)}</b>"

    def _sync_controls(self, owner):
        """Adjust other controls after ``owner`` changed (none by default)."""

    def _on_change(self, change):
        if self._syncing:  # a control adjusted by _sync_controls: one redraw follows
            return
        self._syncing = True
        try:
            self._sync_controls(change["owner"])
            self._refresh()
        except Exception as error:  # shown in the explorer and kept, never swallowed
            self._show_error(error)
        else:
            self.last_error = None
            self.message.value = ""
        finally:
            self._syncing = False

    def _on_save(self, button):
        try:
            path = self.save(self.save_path.value)
        except Exception as error:  # shown in the explorer and kept, never swallowed
            self._show_error(error)
        else:
            self.message.value = f"saved {html.escape(str(path))}"

    def _show_error(self, error):
        self.last_error = error
        self.message.value = _error_html(error)


def _toy_function(x):
    return 2 * torch.sin(x) + x


class KernelPoolingExplorer(Explorer):
    """Nadaraya–Watson pooling: the fit next to the weights (queries × sorted keys)."""

    repr_controls = ("sigma", "kernel", "n_train")

    def __init__(self, sigma=0.5, kernel="gaussian", n_train=40, seed=0):
        _check_range(sigma, "sigma", 2.0 ** -7, 2.0 ** 3)
        _check_choice(kernel, "kernel", list(KERNELS))
        _check_range(n_train, "n_train", 5, 100, integer=True)
        self.seed = seed
        self.queries = torch.arange(0, 5, 0.1)  # (50,)
        controls = {
            # Powers of 2 on the slider's grid, so 0.5 or 0.25 stays exact: the browser
            # snaps a value to the grid and sends it back.
            "sigma": widgets.FloatLogSlider(value=sigma, base=2, min=-7, max=3, step=0.25,
                                            description="width σ", readout_format=".3g", style=WIDE),
            "kernel": widgets.Dropdown(options=list(KERNELS), value=kernel, description="kernel"),
            "n_train": widgets.IntSlider(value=n_train, min=5, max=100, step=5,
                                         description="training points", style=WIDE),
        }
        self._plot = _Plot((8, 3.2), self._build)
        super().__init__(controls, [widgets.HBox(list(controls.values()))], "kernel_pooling.png")

    def training_data(self, n):
        """``n`` sorted training inputs in [0, 5) and noisy targets 2 sin(x) + x."""
        generator = torch.Generator().manual_seed(self.seed)
        x_train = torch.sort(torch.rand(n, generator=generator) * 5).values  # (n,)
        y_train = _toy_function(x_train) + 0.5 * torch.randn(n, generator=generator)  # (n,)
        return x_train, y_train

    def _build(self, fig, norm):
        ax_fit, ax_map = fig.subplots(1, 2)
        x = torch.linspace(0, 5, 200)
        ax_fit.plot(x, _toy_function(x), "--", color="gray", label="truth")
        points, = ax_fit.plot([], [], "o", ms=3, alpha=0.6, label="training data", animated=True)
        fit, = ax_fit.plot([], [], color="C3", label="prediction", animated=True)
        ax_fit.set(xlim=(0, 5), ylim=(-2.5, 7), xlabel="x", ylabel="y")
        ax_fit.legend(loc="upper left", fontsize="small")
        ax_fit.set_title("Nadaraya–Watson regression")
        ax_map.set_title("attention weights")
        _colorbar(fig, ax_map, norm)
        return SimpleNamespace(points=points, fit=fit, ax_map=ax_map, norm=norm, heatmaps={})  # number of keys -> mesh

    def _compute(self):
        sigma, kernel, n = (self.controls[name].value for name in self.repr_controls)
        x_train, y_train = self.training_data(n)
        predictions, weights = nadaraya_watson(self.queries, x_train, y_train, kernel, sigma)
        return {"weights": weights, "x_train": x_train, "y_train": y_train,
                "predictions": predictions, "caption": f"{kernel} kernel, σ = {sigma:.3g}, {n} training points"}

    def _draw(self, data):
        parts = self._plot.parts
        parts.points.set_data(data["x_train"].numpy(), data["y_train"].numpy())
        parts.fit.set_data(self.queries.numpy(), data["predictions"].numpy())
        self.x_train, self.y_train = data["x_train"], data["y_train"]
        self.predictions = data["predictions"]
        weights = data["weights"].numpy()  # (queries, keys)
        num_keys = weights.shape[1]
        if num_keys not in parts.heatmaps:  # a mesh has a fixed shape: one per number of keys
            parts.heatmaps[num_keys] = _heatmap(parts.ax_map, parts.norm, *weights.shape,
                                                ylabel="Queries (sorted)",
                                                xlabel="Keys (training inputs, sorted)")
        for keys, heatmap in parts.heatmaps.items():
            heatmap.set_visible(keys == num_keys)
        parts.heatmaps[num_keys].set_array(weights)
        parts.ax_map.set_xlim(-0.5, num_keys - 0.5)
        return num_keys  # the keys axis is part of the background


class MaskedSoftmaxExplorer(Explorer):
    """``masked_softmax`` over fixed random scores (2 examples, 4 queries, 8 keys)."""

    repr_controls = ("mode", "valid_len_0", "valid_len_1")
    MODES = ("per example", "per query")

    def __init__(self, valid_lens=(2, 5), seed=0):
        batch, num_queries, num_keys = 2, 4, 8
        _check_valid_lens(valid_lens, batch, num_keys)
        generator = torch.Generator().manual_seed(seed)
        self.scores = torch.randn(batch, num_queries, num_keys, generator=generator)  # (batch, queries, keys)
        per_query_start = [[1, 2, 3, 4], [8, 6, 4, 2]]  # a causal staircase, and a shrinking window
        controls = {"mode": widgets.ToggleButtons(options=self.MODES, description="lengths")}
        for b in range(batch):
            controls[f"valid_len_{b}"] = widgets.IntSlider(
                value=valid_lens[b], min=0, max=num_keys, description=f"valid_len, example {b}", style=WIDE)
        for b in range(batch):
            for q in range(num_queries):
                controls[f"query_len_{b}_{q}"] = widgets.BoundedIntText(
                    value=per_query_start[b][q], min=0, max=num_keys, description=f"q{q}",
                    layout=widgets.Layout(width="110px"), style={"description_width": "24px"})
        self._per_example_row = widgets.HBox([controls[f"valid_len_{b}"] for b in range(batch)])
        self._per_query_rows = widgets.VBox([
            widgets.HBox([widgets.Label(f"example {b}:"),
                          *(controls[f"query_len_{b}_{q}"] for q in range(num_queries))])
            for b in range(batch)])
        self._shape = (batch, num_queries)
        self._plot = _Plot((7, 2.6), self._build)
        super().__init__(controls, [controls["mode"], self._per_example_row, self._per_query_rows],
                         "masked_softmax.png")
        self._sync_controls(controls["mode"])

    def _build(self, fig, norm):
        axes = fig.subplots(1, self._shape[0], sharey=True)
        heatmaps = [_heatmap(ax, norm, *self.scores.shape[1:]) for ax in axes]
        for b, ax in enumerate(axes):
            ax.set_title(f"example {b}")
        _colorbar(fig, axes, norm)
        return SimpleNamespace(heatmaps=heatmaps)

    def _sync_controls(self, owner):
        if owner is self.controls["mode"]:
            per_query = owner.value == "per query"
            self._per_example_row.layout.display = "none" if per_query else None
            self._per_query_rows.layout.display = None if per_query else "none"

    def _compute(self):
        batch, num_queries = self._shape
        if self.controls["mode"].value == "per example":
            valid_lens = torch.tensor([self.controls[f"valid_len_{b}"].value for b in range(batch)])  # (batch,)
        else:
            valid_lens = torch.tensor([[self.controls[f"query_len_{b}_{q}"].value for q in range(num_queries)]
                                       for b in range(batch)])  # (batch, queries)
        caption = f"masked_softmax(scores, valid_lens={valid_lens.tolist()})"
        return {"weights": masked_softmax(self.scores, valid_lens), "valid_lens": valid_lens, "caption": caption}

    def _draw(self, data):
        parts = self._plot.parts
        for heatmap, weights in zip(parts.heatmaps, data["weights"]):
            heatmap.set_array(weights.numpy())
        self.valid_lens = data["valid_lens"]


class AdditiveExplorer(Explorer):
    """Additive and scaled dot-product weights side by side, as the keys get noisier.

    Keys start as all ones, the classic case where both scores give uniform
    weights over the valid keys; the noise slider perturbs them.
    """

    repr_controls = ("noise", "seed", "valid_len_0", "valid_len_1")

    def __init__(self, noise=0.0, seed=0, valid_lens=(2, 6)):
        batch, num_queries, num_keys, size = 2, 4, 10, 2
        _check_range(noise, "noise", 0.0, 2.0)
        _check_range(seed, "seed", 0, 9, integer=True)
        _check_valid_lens(valid_lens, batch, num_keys)
        generator = torch.Generator().manual_seed(0)
        self.queries = torch.randn(batch, num_queries, size, generator=generator)  # (batch, queries, size)
        self.values = torch.arange(40.0).reshape(1, num_keys, 4).repeat(batch, 1, 1)  # (batch, keys, 4)
        with torch.random.fork_rng(devices=[]):  # fixed parameters, the caller's RNG untouched
            torch.manual_seed(0)
            self.additive = AdditiveAttention(num_hiddens=8, dropout=0.0, key_size=size, query_size=size)
        self.dot_product = DotProductAttention(dropout=0.0)
        self._keys_shape = (batch, num_keys, size)
        controls = {
            "noise": widgets.FloatSlider(value=noise, min=0, max=2, step=0.05, description="key noise",
                                         style=WIDE),
            "seed": widgets.IntSlider(value=seed, min=0, max=9, description="noise seed", style=WIDE),
        }
        for b in range(batch):
            controls[f"valid_len_{b}"] = widgets.IntSlider(
                value=valid_lens[b], min=0, max=num_keys, description=f"valid_len, example {b}", style=WIDE)
        self._plot = _Plot((7, 4.4), self._build)
        rows = [widgets.HBox([controls["noise"], controls["seed"]]),
                widgets.HBox([controls["valid_len_0"], controls["valid_len_1"]])]
        super().__init__(controls, rows, "additive.png")

    def keys_for(self, noise, seed):
        """All-ones keys plus ``noise`` times standard normal noise drawn from ``seed``."""
        generator = torch.Generator().manual_seed(seed)
        return torch.ones(self._keys_shape) + noise * torch.randn(self._keys_shape, generator=generator)

    def _build(self, fig, norm):
        axes = fig.subplots(2, 2, sharex=True, sharey=True)
        heatmaps = []
        for b in range(2):
            for m, method in enumerate(("additive", "scaled dot product")):
                heatmaps.append(_heatmap(axes[b, m], norm, self.queries.shape[1], self._keys_shape[1]))
                axes[b, m].set_title(f"{method}, example {b}", fontsize="medium")
        for ax in axes.flat:
            ax.label_outer()
        _colorbar(fig, axes, norm)
        return SimpleNamespace(heatmaps=heatmaps)

    def _compute(self):
        keys = self.keys_for(self.controls["noise"].value, self.controls["seed"].value)  # (batch, keys, size)
        valid_lens = torch.tensor([self.controls["valid_len_0"].value, self.controls["valid_len_1"].value])
        with torch.no_grad():
            self.additive(self.queries, keys, self.values, valid_lens)
            self.dot_product(self.queries, keys, self.values, valid_lens)
        weights = torch.stack([self.additive.attention_weights, self.dot_product.attention_weights],
                              dim=1)  # (batch, method, queries, keys)
        caption = (f"keys = 1 + {self.controls['noise'].value:.2f} × noise (seed {self.controls['seed'].value}), "
                   f"valid_lens = {valid_lens.tolist()}")
        return {"weights": weights, "keys": keys, "valid_lens": valid_lens, "caption": caption}

    def _draw(self, data):
        for heatmap, panel in zip(self._plot.parts.heatmaps, data["weights"].flatten(0, 1)):
            heatmap.set_array(panel.numpy())
        self.noisy_keys, self.valid_lens = data["keys"], data["valid_lens"]


class DotProductExplorer(Explorer):
    """Scaled dot-product weights for random queries and keys, with each row's entropy."""

    repr_controls = ("d", "scale", "temperature", "valid_len", "causal")
    D_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)

    def __init__(self, d=16, scale=True, temperature=1.0, valid_len=8, causal=False, seed=0):
        num_tokens = 8
        _check_choice(d, "d", self.D_CHOICES)
        _check_choice(scale, "scale", [True, False])
        _check_range(temperature, "temperature", 0.1, 10.0)
        _check_range(valid_len, "valid_len", 0, num_tokens, integer=True)
        _check_choice(causal, "causal", [True, False])
        generator = torch.Generator().manual_seed(seed)
        # Unit-variance coordinates, so an unscaled score q·k has variance d.
        # A smaller d uses the first d coordinates of the same vectors.
        self.all_queries = torch.randn(1, num_tokens, max(self.D_CHOICES), generator=generator)
        self.all_keys = torch.randn(1, num_tokens, max(self.D_CHOICES), generator=generator)
        self.attention = DotProductAttention(dropout=0.0)
        controls = {
            "d": widgets.SelectionSlider(options=self.D_CHOICES, value=d, description="dimension d"),
            "scale": widgets.Checkbox(value=scale, description="divide by √d"),
            "temperature": widgets.FloatLogSlider(value=temperature, base=10, min=-1, max=1, step=0.05,
                                                  description="temperature", readout_format=".2g"),
            "valid_len": widgets.IntSlider(value=valid_len, min=0, max=num_tokens, description="valid_len"),
            "causal": widgets.Checkbox(value=causal, description="causal"),
        }
        self._plot = _Plot((7, 3), self._build)
        rows = [widgets.HBox([controls["d"], controls["scale"], controls["temperature"]]),
                widgets.HBox([controls["valid_len"], controls["causal"]])]
        super().__init__(controls, rows, "dot_product.png")

    def _build(self, fig, norm):
        num_tokens = self.all_queries.shape[1]
        ax_map, ax_entropy = fig.subplots(1, 2, sharey=True, width_ratios=(3, 2))
        heatmap = _heatmap(ax_map, norm, num_tokens, num_tokens)
        ax_map.set_title("attention weights")
        _colorbar(fig, ax_map, norm)
        bars = ax_entropy.barh(range(num_tokens), np.zeros(num_tokens), height=0.6, color="C3",
                               animated=True)
        uniform = math.log(num_tokens)
        ax_entropy.axvline(uniform, color="gray", linestyle="--")
        ax_entropy.set(xlim=(0, 1.05 * uniform), xlabel="nats (dashed: uniform)", title="row entropy")
        return SimpleNamespace(heatmap=heatmap, bars=list(bars))

    def _compute(self):
        d, scale, temperature, valid_len, causal = (self.controls[name].value for name in self.repr_controls)
        queries = self.all_queries[..., :d]  # (1, queries, d)
        keys = self.all_keys[..., :d]  # (1, keys, d)
        # DotProductAttention divides the scores by √d: multiply it back in when
        # the scale is off, and divide by the temperature.
        factor = (1.0 if scale else math.sqrt(d)) / temperature
        if causal:
            valid_lens = causal_valid_lens(1, queries.shape[1]).clamp(max=valid_len)  # (1, queries)
        else:
            valid_lens = torch.tensor([valid_len])  # (1,)
        self.attention(queries * factor, keys, keys, valid_lens)
        weights = self.attention.attention_weights[0]  # (queries, keys)
        entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)  # (queries,); 0 log 0 = 0
        caption = (f"d = {d}, {'scaled by 1/√d' if scale else 'unscaled'}, temperature {temperature:.2g}, "
                   f"valid_lens = {valid_lens.tolist()}")
        return {"weights": weights, "entropy": entropy, "valid_lens": valid_lens, "caption": caption}

    def _draw(self, data):
        parts = self._plot.parts
        parts.heatmap.set_array(data["weights"].numpy())
        for bar, value in zip(parts.bars, data["entropy"].tolist()):
            bar.set_width(value)
        self.entropy, self.valid_lens = data["entropy"], data["valid_lens"]


class MultiHeadExplorer(Explorer):
    """Per-head self-attention weights over a short sentence, on one shared scale.

    Every number of heads uses the same projections W_q, W_k, W_v (they are
    initialised from one seed): only how their features are split into heads
    changes. Each panel layout is a figure of its own, built the first time it
    is shown.
    """

    repr_controls = ("num_heads", "head", "causal", "valid_len")
    TOKENS = ("the", "cat", "sat", "on", "a", "mat")
    MAX_PANELS = 8

    def __init__(self, num_heads=2, head="all", causal=False, valid_len=6, num_hiddens=16, seed=0):
        check_positive_int(num_hiddens, "num_hiddens")
        choices = [h for h in range(1, self.MAX_PANELS + 1) if num_hiddens % h == 0]
        _check_choice(num_heads, "num_heads", choices)
        _check_choice(head, "head", self._head_options(num_heads))
        _check_choice(causal, "causal", [True, False])
        num_tokens = len(self.TOKENS)
        _check_range(valid_len, "valid_len", 0, num_tokens, integer=True)
        self.num_hiddens, self.seed = num_hiddens, seed
        generator = torch.Generator().manual_seed(seed)
        # Token embeddings with standard deviation 2: with 1, every head is close to uniform.
        self.X = 2 * torch.randn(1, num_tokens, num_hiddens, generator=generator)  # (1, tokens, num_hiddens)
        self._attention_by_heads = {}
        self._plots = {}
        controls = {
            "num_heads": widgets.SelectionSlider(options=choices, value=num_heads, description="heads"),
            "head": widgets.Dropdown(options=self._head_labels(num_heads), value=head, description="show"),
            "causal": widgets.Checkbox(value=causal, description="causal"),
            "valid_len": widgets.IntSlider(value=valid_len, min=0, max=num_tokens, description="valid_len"),
        }
        self._plot = None  # chosen by _draw from the number of panels
        rows = [widgets.HBox([controls["num_heads"], controls["head"]]),
                widgets.HBox([controls["valid_len"], controls["causal"]])]
        super().__init__(controls, rows, "multihead.png")

    @staticmethod
    def _head_options(num_heads):
        return ["all", *range(num_heads)]

    @classmethod
    def _head_labels(cls, num_heads):
        return [("all heads" if h == "all" else f"head {h}", h) for h in cls._head_options(num_heads)]

    def attention(self, num_heads):
        """The ``MultiHeadAttention`` with ``num_heads`` heads (built once, then reused)."""
        if num_heads not in self._attention_by_heads:
            with torch.random.fork_rng(devices=[]):  # same projections for every head count
                torch.manual_seed(self.seed)
                self._attention_by_heads[num_heads] = MultiHeadAttention(
                    self.num_hiddens, num_heads, dropout=0.0, query_size=self.num_hiddens,
                    key_size=self.num_hiddens, value_size=self.num_hiddens)
        return self._attention_by_heads[num_heads]

    def _sync_controls(self, owner):
        head = self.controls["head"]
        if owner is self.controls["num_heads"]:
            num_heads = owner.value
            keep = head.value if head.value in self._head_options(num_heads) else "all"
            head.options = self._head_labels(num_heads)
            head.value = keep

    def _compute(self):
        num_heads, head, causal, valid_len = (self.controls[name].value for name in self.repr_controls)
        num_tokens = self.X.shape[1]
        if causal:
            valid_lens = causal_valid_lens(1, num_tokens).clamp(max=valid_len)  # (1, queries)
        else:
            valid_lens = torch.tensor([valid_len])  # (1,)
        attention = self.attention(num_heads)
        with torch.no_grad():
            attention(self.X, self.X, self.X, valid_lens)
        head_weights = attention.attention_weights[0]  # (heads, queries, keys)
        shown = range(num_heads) if head == "all" else [head]
        caption = f"{num_heads} heads of width {self.num_hiddens // num_heads}, valid_lens = {valid_lens.tolist()}"
        return {"weights": head_weights[list(shown)], "heads": list(shown), "valid_lens": valid_lens,
                "caption": caption}

    def _figure_for(self, num_panels):
        if num_panels not in self._plots:
            cols = min(num_panels, 4)
            rows = math.ceil(num_panels / cols)
            self._plots[num_panels] = _Plot((2.1 * cols + 1.4, 2.1 * rows + 0.5),
                                            lambda fig, norm: self._build(fig, norm, rows, cols))
        return self._plots[num_panels]

    def _build(self, fig, norm, rows, cols):
        axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
        ticks = range(len(self.TOKENS))
        heatmaps, titles = [], []
        for h, ax in enumerate(axes.flat):
            heatmaps.append(_heatmap(ax, norm, len(self.TOKENS), len(self.TOKENS)))
            # With several panels they are heads 0, 1, ... in order; a single panel can be any head.
            titles.append(ax.set_title(f"head {h}", animated=axes.size == 1))
            ax.set_xticks(ticks, self.TOKENS, rotation=90)
            ax.set_yticks(ticks, self.TOKENS)
            ax.label_outer()
        _colorbar(fig, axes, norm)
        return SimpleNamespace(heatmaps=heatmaps, titles=titles)

    def _draw(self, data):
        plot = self._figure_for(len(data["heads"]))
        for heatmap, title, weights, h in zip(plot.parts.heatmaps, plot.parts.titles,
                                              data["weights"], data["heads"]):
            heatmap.set_array(weights.numpy())
            title.set_text(f"head {h}")
        self._plot = plot
        self.valid_lens = data["valid_lens"]


def explore_kernel_pooling(sigma=0.5, kernel="gaussian", n_train=40):
    """Nadaraya–Watson pooling: the kernel width σ (log scale), the kernel, the training points."""
    return KernelPoolingExplorer(sigma, kernel, n_train)


def explore_masked_softmax(valid_lens=(2, 5)):
    """Masked softmax: one valid length per example, or one per query."""
    return MaskedSoftmaxExplorer(valid_lens)


def explore_additive(noise=0.0, seed=0, valid_lens=(2, 6)):
    """Additive versus scaled dot-product weights as the keys move away from all ones."""
    return AdditiveExplorer(noise, seed, valid_lens)


def explore_dot_product(d=16, scale=True, temperature=1.0, valid_len=8, causal=False):
    """Scaled dot-product attention: d, the 1/√d scale, temperature, valid length, causal."""
    return DotProductExplorer(d, scale, temperature, valid_len, causal)


def explore_multihead(num_heads=2, head="all", causal=False, valid_len=6):
    """Multi-head self-attention: number of heads, which head, causal, valid length."""
    return MultiHeadExplorer(num_heads, head, causal, valid_len)
