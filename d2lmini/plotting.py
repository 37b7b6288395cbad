"""Heatmaps of attention weights with one honest colour scale."""

import matplotlib.pyplot as plt
import torch

from ._checks import check_tensor, shape_str


def use_svg_display():
    """Kept for the book's code; the notebooks draw PNG, which nbval skips."""


def _to_4d(matrices):
    if isinstance(matrices, torch.Tensor):
        matrices = matrices.detach().cpu()
    else:
        try:
            matrices = torch.as_tensor(matrices)
        except (TypeError, ValueError, RuntimeError):
            check_tensor(matrices, "matrices")
    if matrices.dim() == 2:
        matrices = matrices[None, None]  # one panel
    elif matrices.dim() == 3:
        matrices = matrices[None]  # one row of panels
    elif matrices.dim() != 4:
        raise ValueError(
            "matrices must be 2-D (queries, keys), 3-D (panels, queries, keys) or "
            f"4-D (rows, cols, queries, keys), got shape {shape_str(matrices)}"
        )
    return matrices.float()


def show_heatmaps(matrices, xlabel, ylabel, titles=None, figsize=(2.5, 2.5), cmap="Reds",
                  vmin=None, vmax=None):
    """Draw a grid of heatmaps sharing one colour scale, and return the figure.

    ``matrices`` is 2-D, 3-D (a row of panels) or 4-D ``(rows, cols, queries,
    keys)``, as in the book. Every panel uses the same ``vmin``/``vmax`` (by
    default the range of all panels together), so the single colorbar is
    true for every panel. ``titles`` names the columns.
    """
    matrices = _to_4d(matrices)
    num_rows, num_cols = matrices.shape[:2]
    if titles is not None and len(titles) != num_cols:
        raise ValueError(f"titles must have one entry per column ({num_cols}), got {len(titles)}")
    vmin = float(matrices.min()) if vmin is None else vmin
    vmax = float(matrices.max()) if vmax is None else vmax
    if vmax <= vmin:
        vmax = vmin + 1e-6  # a constant matrix still gets a usable colorbar
    fig, axes = plt.subplots(num_rows, num_cols, figsize=figsize, sharex=True, sharey=True,
                             squeeze=False)
    for i in range(num_rows):
        for j in range(num_cols):
            ax = axes[i, j]
            image = ax.imshow(matrices[i, j].numpy(), cmap=cmap, vmin=vmin, vmax=vmax)
            if i == num_rows - 1:
                ax.set_xlabel(xlabel)
            if j == 0:
                ax.set_ylabel(ylabel)
            if titles is not None:
                ax.set_title(titles[j])
    fig.colorbar(image, ax=axes, shrink=0.6)
    return fig
