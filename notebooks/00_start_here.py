# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 00 · Start here: attention pooling in one picture
#
# Welcome! This collection teaches how attention *scores* and *pools*, one idea
# per notebook, with code you can run on a laptop CPU and sliders you can move.
#
# **In this notebook you will**
# 1. see attention pooling as a weighted average of values;
# 2. compute one by hand in plain `torch`, then check it against `d2lmini`;
# 3. read an attention heatmap (rows are queries, columns are keys);
# 4. learn how the notebooks are organised and where the exercises are.

# %%
import torch

import d2lmini as d2l

_ = torch.manual_seed(0)  # manual_seed returns the generator; naming it keeps it off the screen

# %% [markdown]
# ## Attention pooling in one formula
#
# We have a set of **keys** $k_1, \dots, k_n$, each paired with a **value**
# $v_i$, and a **query** $q$. Attention pooling answers the query with a
# weighted average of the values:
#
# $$\operatorname{attention}(q) = \sum_{i=1}^{n} \alpha(q, k_i)\, v_i,
# \qquad \alpha(q, k_i) = \frac{\exp a(q, k_i)}{\sum_{j=1}^{n} \exp a(q, k_j)} .$$
#
# The **scoring function** $a(q, k)$ says how well a key matches the query.
# The softmax turns the scores into weights that are positive and sum to 1,
# so the answer always lies among the values. Every chapter that follows is
# about a different choice of $a$ — and about what has to be true of the
# weights.
#
# The picture follows one query through the formula. It uses the score of
# the next section, $a(q, k) = -\tfrac12 (q - k)^2$, and four keys on a line,
# each with its value: the query $q$ meets each key $k_i$, one softmax over
# the scores $a(q, k_i)$ gives the weights $\alpha_i$, which sum to 1, and the
# output is $\sum_i \alpha_i v_i$. The key nearest the query, $k_2 = 1$, gets
# the largest weight.

# %%
from d2lmini.diagrams import draw_queries_keys_values

draw_queries_keys_values()

# %% [markdown]
# ## Computing one by hand
#
# Take six keys on a line, each carrying a value, and three queries. As a
# score we use the negative squared distance, $a(q, k) = -\tfrac12 (q - k)^2$:
# a key close to the query scores high.

# %%
keys = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
values = torch.tensor([0.0, 2.0, 1.0, 4.0, 3.0, 5.0])
queries = torch.tensor([0.5, 2.5, 4.8])

scores = -0.5 * (queries[:, None] - keys[None, :]) ** 2  # (queries, keys)
weights = torch.softmax(scores, dim=1)  # each row sums to 1
outputs = weights @ values  # (queries,)

print("weights (rows = queries, columns = keys):")
print(weights.numpy().round(3))
print("row sums:", weights.sum(dim=1).numpy().round(3))
print("outputs:", outputs.numpy().round(3))

# %% [markdown]
# Each output is a blend of the values whose keys sit near the query: the
# query at 0.5 mostly averages the values of keys 0 and 1 (0 and 2), so it
# answers about 1.
#
# `d2lmini` provides this pooling as `nadaraya_watson` (chapter 01 explains
# the name). Building it by hand first and then checking our version against
# the package is the pattern every chapter follows:

# %%
package_outputs, package_weights = d2l.nadaraya_watson(queries, keys, values, kernel="gaussian", sigma=1.0)
torch.testing.assert_close(package_weights, weights)
torch.testing.assert_close(package_outputs, outputs)
print("our pooling matches d2lmini.nadaraya_watson")

# %% [markdown]
# ## Reading an attention heatmap
#
# All notebooks draw weights the same way: **one row per query, one column
# per key**, brighter means more weight (the colour map is viridis, which
# reads the same with the common colour-vision deficiencies: dark purple is
# 0, yellow the most), and one colorbar that is true for every panel in the
# figure.

# %%
fig = d2l.show_heatmaps(weights, xlabel="Keys", ylabel="Queries", figsize=(4, 2.2))

# %% [markdown]
# Row 0 puts its weight on the first keys, row 2 on the last ones: each query
# attends to the keys near it.
#
# ## CPU or GPU
#
# Everything runs on a laptop CPU. If a GPU is present, `d2l.try_gpu()` picks
# it (CUDA first, then Apple's MPS), and the notebooks move their tensors there;
# otherwise it returns the CPU. Printed results are rounded so that they read
# the same on any device.

# %% tags=["nbval-ignore-output"]
device = d2l.try_gpu()
print("this notebook runs on:", device)

# %%
on_device = d2l.nadaraya_watson(queries.to(device), keys.to(device), values.to(device))[0]
print("outputs computed on the chosen device:", d2l.numpy(on_device).round(3))

# %% [markdown]
# ## How to use these notebooks
#
# 1. **Run all cells first** (*Run → Run All Cells*). Every notebook runs in a
#    few seconds and downloads nothing.
# 2. **Then play.** Each chapter ends its main part with an *explorer*: sliders
#    and menus that redraw a heatmap at once. A static heatmap comes just
#    before it, so the notebook still reads well on GitHub or in a PDF.
# 3. **Do the exercises.** Each is a code cell for you to fill in, followed by
#    a check. Until you try, it says the exercise is not attempted yet; after
#    that it tells you what it expected, what it got, and a first hint, and
#    `chNN.hint()` in a new cell gives the next one.
#
# ## The map
#
# | Notebook | Scoring function | The question it answers |
# |---|---|---|
# | 01 · Attention pooling | Gaussian kernel | Why a weighted average of neighbours is already attention, and what the width does |
# | 02 · Masked softmax | — | How padding keys get exactly zero weight, in every dtype |
# | 03 · Additive attention | $w_v^\top \tanh(W_q q + W_k k)$ | How to score queries and keys of different sizes |
# | 04 · Scaled dot-product attention | $q^\top k / \sqrt d$ | Why the $1/\sqrt d$ is there, measured |
# | 05 · Multi-head attention | $h$ heads in parallel | How heads are folded into the batch, and what each head looks at |
# | 06 · Efficient attention | the same, fused | Why the weights cost $n^2$ memory, and how a fused kernel avoids storing them |
# | 07 · Self-attention and positional encoding | $q^\top k / \sqrt d$ on $X + P$ | Why self-attention cannot tell word order without positions, and how sines and cosines give it |
# | 08 · Attention that learns | additive or $q^\top k / \sqrt d$, trained | How a model learns where to look: a tiny translator whose cross-attention finds the alignment in seconds |
# | 09 · A real model's attention | 6 layers × 12 heads, trained | What the heads of a pretrained model (all-MiniLM-L6-v2, offline) look at, and what their maps cannot tell you |
#
# ## Summary
#
# * Attention pooling answers a query with a weighted average of values.
# * The weights are a softmax of scores $a(q, k)$: positive, summing to 1.
# * A heatmap of weights has one row per query and one column per key.
# * The rest of the collection is about choosing $a$ and controlling the
#   weights.

# %% [markdown]
# ## Try it: your first explorer
#
# Here is what an explorer looks like. It pools noisy samples of
# $f(x) = 2\sin x + x$ with a kernel of width $\sigma$ (chapter 01 explains
# it all). First the static picture, for readers without a running kernel:
# the weights for $\sigma = 0.25$, one row per query, one column per training
# point.

# %%
from d2lmini.widgets import explore_kernel_pooling

explorer = explore_kernel_pooling(sigma=0.25)
fig = d2l.show_heatmaps(explorer.weights, xlabel="Keys (training inputs, sorted)",
                        ylabel="Queries (sorted)", figsize=(4, 3), vmin=0, vmax=1)

# %% [markdown]
# Now the explorer itself. The slider sets the width $\sigma$, the menu swaps
# the kernel, and below the picture *Save* writes the current view to a PNG
# or SVG file. Every chapter's explorer comes with a list of things to try,
# and after it *Worked answers*, closed until you click them: try first, then
# open them to compare. Things to try:
#
# * Drag $\sigma$ all the way down. What happens to the band of weight, and
#   to the fit?
# * Drag it all the way up. What does the fit become?

# %%
explorer

# %% [markdown]
# <details>
# <summary>Worked answers to the things to try (open once you have tried them)</summary>
#
# 1. At the smallest width, $\sigma = 2^{-7}$, 46 of the 50 rows put all of
#    their weight (1.000) on the training point nearest to their query, and even
#    the least decided row gives 0.75 to one point. The band is a thin
#    staircase, and the fit jumps from one noisy target to the next (squared
#    error against the true function: 0.233, against 0.036 at $\sigma = 0.25$).
# 2. At $\sigma = 8$ no weight exceeds 0.027, close to $1/40$: every query
#    averages almost all 40 training points, and the fit is nearly a flat
#    line at their mean (squared error 0.851). Chapter 01 explains both ends.
#
# </details>

# %% [markdown]
# ## Why? A question to check
#
# **Why does attention pooling always answer with a number between the
# smallest and the largest value?**
#
# Pick one option and press *Check*. Every option has its own feedback: a
# wrong one names the confusion behind it and points back to the part of the
# chapter that settles it. Without a kernel (on GitHub, in a PDF) the options
# show as text under the cell.

# %%
from d2lmini.exercises import questions

questions.ask("00")

# %% [markdown]
# ## Further reading
#
# * The d2l book ("Dive into Deep Learning"), chapter "Attention Mechanisms
#   and Transformers", section "Queries, Keys, and Values": the same picture
#   of attention as a soft lookup in a database. Each chapter here ends with
#   the papers and the book sections that match it.
