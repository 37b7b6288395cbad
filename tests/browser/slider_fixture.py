# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Browser-suite self-test: a slider that redraws a heatmap
#
# Not a chapter. The browser tests open this notebook like a chapter to prove
# that their slider-moving machinery works before the chapters' explorers
# exist: one `IntSlider` whose observer redraws a matplotlib heatmap into an
# `ipywidgets.Image`.

# %%
import io

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

keys = np.linspace(0, 5, 12)  # (keys,)
queries = np.linspace(0, 5, 8)  # (queries,)


def gaussian_weights(width):
    """Softmax over the keys of -(q - k)^2 / (2 width^2)."""
    scores = -((queries[:, None] - keys[None, :]) ** 2) / (2 * width**2)  # (queries, keys)
    scores -= scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)  # (queries, keys)
    return weights / weights.sum(axis=1, keepdims=True)


print(gaussian_weights(1.0).sum(axis=1).round(3))

# %%
fig = Figure(figsize=(4, 3), dpi=80)
ax = fig.subplots()
heatmap = ax.imshow(gaussian_weights(0.5), cmap="Reds", vmin=0, vmax=1)
ax.set_xlabel("keys")
ax.set_ylabel("queries")
fig.colorbar(heatmap, ax=ax)
image = widgets.Image(format="png", width=320)
width = widgets.IntSlider(value=5, min=1, max=20, description="width / 10")


def redraw(change=None):
    heatmap.set_data(gaussian_weights(width.value / 10))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    image.value = buffer.getvalue()


width.observe(redraw, names="value")
redraw()
explorer = widgets.VBox([width, image])
explorer
