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


def show_weights(weights, mask=None, xlabels=None, ylabels=None, ax=None, fmt=".2f",
                 xlabel="Keys", ylabel="Queries", colorbar=True):
    """One small (queries, keys) weight matrix with each weight printed in its cell.

    ``mask`` (True = may attend, as from ``attention_mask``) marks the cells
    that were masked out: they are hatched and left blank, so a masked key
    never looks like a key that merely got weight 0. The colours run from 0 to
    1, and the colorbar (``colorbar=False`` leaves it out) says so. Drawn with seaborn into ``ax`` (a new figure if
    None); returns the axes. Meant for matrices of up to about 12 × 12.
    """
    import seaborn as sns  # imported on first use: it takes most of a second

    weights = _to_4d(weights)
    if weights.shape[:2] != (1, 1):
        raise ValueError(f"weights must be one (queries, keys) matrix, got shape {shape_str(weights)}")
    weights = weights[0, 0]
    hidden = None
    if mask is not None:
        mask = torch.as_tensor(mask).detach().cpu()
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must be a boolean tensor (True = may attend), got {mask.dtype}")
        try:
            hidden = (~mask.expand(weights.shape)).numpy()
        except RuntimeError:
            raise ValueError(f"mask of shape {shape_str(mask)} does not broadcast to the weights' "
                             f"shape {tuple(weights.shape)}") from None
    if ax is None:
        _, ax = plt.subplots(figsize=(0.55 * weights.shape[1] + 1.5, 0.45 * weights.shape[0] + 0.9),
                             layout="constrained")
    # Masked cells are not drawn; this hatched background shows through them.
    ax.set_facecolor("#eeeeee")
    ax.patch.set_hatch("//")
    ax.patch.set_edgecolor("#bbbbbb")
    sns.heatmap(weights.numpy(), mask=hidden, ax=ax, vmin=0, vmax=1, cmap="Reds", annot=True, fmt=fmt,
                annot_kws={"fontsize": "small"}, linewidths=0.5, linecolor="white",
                xticklabels=xlabels if xlabels is not None else "auto",
                yticklabels=ylabels if ylabels is not None else "auto",
                cbar=colorbar, cbar_kws={"label": "attention weight"})
    ax.set(xlabel=xlabel, ylabel=ylabel)
    return ax
