# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,jupyter,cellView,-all
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
# 2. compute one by hand in plain `torch`, then check it against `d2lmini`,
#    the small package of helpers that comes with these notebooks;
# 3. read an attention heatmap (rows are queries, columns are keys);
# 4. move a query with your first *explorer* and watch its weights follow;
# 5. learn how the notebooks are organised and where the exercises are.

# %% [markdown]
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/00_start_here.ipynb) opens this chapter's learner edition in Colab. Run the collapsed setup cell below first: on Colab it installs `d2lmini`, this collection's helper package, and leaves the runtime's own packages alone; on a course hub it names any file of yours that an update kept under a new name. Anywhere else it does nothing.

# %% cellView="form" jupyter={"source_hidden": true} tags=["colab-setup"]
# @title Setup { display-mode: "form" }
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("d2lmini") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "d2lmini @ git+https://github.com/attention-notebooks/attention-notebooks@v0.2.0"], check=True)
    print("Installed d2lmini 0.2.0 for this runtime; its torch, numpy, matplotlib and ipywidgets are unchanged.")

from d2lmini.updates import report_renamed_files

report_renamed_files()

# %%
import torch

import d2lmini as d2l
from d2lmini.diagrams import draw_queries_keys_values

# %% [markdown]
# ## Attention pooling in one formula
#
# We have a set of **keys** $k_1, \dots, k_n$, each paired with a **value**
# $v_i$, and a **query** $q$. Think of a lookup: the query is what we ask
# for, each key is a label that may match it, and its value is what that key
# hands back. Instead of returning the value of the one best key, attention
# pooling answers the query with a weighted average of all the values:
#
# $$\operatorname{attention}(q) = \sum_{i=1}^{n} \alpha(q, k_i)\, v_i,
# \qquad \alpha(q, k_i) = \frac{\exp a(q, k_i)}{\sum_{j=1}^{n} \exp a(q, k_j)} .$$
#
# The **scoring function** $a(q, k)$ says how well a key matches the query.
# The **softmax** (the fraction on the right) turns the scores into weights
# that are positive and sum to 1, so the answer is a weighted average of the
# values. Chapters 01, 03 and 04 each choose a different $a$; the others are
# about the weights: which keys may get any (02), several sets side by side
# (05), computing them fast (06), word order (07), and what training makes of
# them (08, 09). The map at the end of this notebook lists them all.
#
# The picture follows one query through the formula. It uses the score of
# the next section, $a(q, k) = -\tfrac12 (q - k)^2$, and four keys on a line,
# each with its value: the query $q$ meets each key $k_i$, one softmax over
# the scores $a(q, k_i)$ gives the weights $\alpha_i$, which sum to 1, and the
# output is $\sum_i \alpha_i v_i$. The key nearest the query, $k_2 = 1$, gets
# the largest weight. The picture numbers its keys from 1, as the formula
# does.

# %%
draw_queries_keys_values()

# %% [markdown]
# ## Computing one by hand
#
# Take six keys on a line, each carrying a value, and three queries. As a
# score we use the negative squared distance, $a(q, k) = -\tfrac12 (q - k)^2$:
# a key close to the query scores high. The first four keys and values are
# the picture's.
#
# From here on we number the keys as Python does, from 0: `keys[0]` is the
# picture's $k_1$, `keys[1]` is its $k_2$, and so on. The keys sit at 0, 1,
# …, 5, so "key 2" below means `keys[2]`, the key at position 2 on the line.
#
# The line that computes `scores` compares every query with every key at
# once. `queries` has shape (3,) and `keys` has shape (6,). Indexing with
# `None` adds an axis of length 1: `queries[:, None]` is a column of shape
# (3, 1), and `keys[None, :]` is a row of shape (1, 6). Subtracting a row
# from a column, PyTorch stretches each along its axis of length 1, as numpy
# does (this is called **broadcasting**), so the difference has shape
# (3, 6): entry $(i, j)$ is query $i$ minus key $j$, one row per query and
# one column per key. The softmax along `dim=1` (PyTorch's name for numpy's
# `axis`), the keys, then turns each
# row into weights, and `weights @ values` adds up each row's weights times
# the values: one output per query.

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
# `d2lmini` provides this pooling as `nadaraya_watson`: with the Gaussian
# kernel of width 1 its weights are exactly the softmax of our score
# (chapter 01 explains the name and the kernel). Building it by hand first
# and then checking our version against the package is the pattern every
# chapter follows:

# %%
package_outputs, package_weights = d2l.nadaraya_watson(queries, keys, values, kernel="gaussian", sigma=1.0)
torch.testing.assert_close(package_weights, weights)
torch.testing.assert_close(package_outputs, outputs)
print("our pooling matches d2lmini.nadaraya_watson")

# %% [markdown]
# ## Reading an attention heatmap
#
# All notebooks draw attention weights the same way: **one row per query, one
# column per key**, and one colorbar that is true for every panel of the
# figure. The colour map is viridis, which stays readable with the common
# colour-vision deficiencies and in grey print: from dark purple at the
# bottom of the colorbar to yellow at its top, so brighter means more weight
# (an explorer's *map* menu offers others; in greys, darker means more).
# Read the numbers off the colorbar, since its range differs from figure to
# figure (here it ends near 0.5, the largest weight).

# %%
fig = d2l.show_heatmaps(weights, xlabel="Keys", ylabel="Queries", figsize=(4, 2.2))

# %% [markdown]
# Row 0 puts its weight on the first keys, row 2 on the last ones: each query
# attends to the keys near it. The text under the figure says the same in
# words, for a screen reader.
#
# From chapter 02 on, some keys are *masked*: a query may not attend to them,
# and they get a weight of exactly 0. A plain heatmap (`d2l.show_heatmaps`)
# draws such a cell as that 0, the colour of the bottom of the colorbar. The
# explorers, `d2l.show_weights` and the mask diagrams leave it uncoloured
# instead, grey and hatched, so that a masked key never looks like a key
# that merely scored low.
#
# ## Try it: your first explorer
#
# An *explorer* is a picture with sliders and menus that redraws at once.
# This one pools the six keys and values above for a single query $q$: its
# slider moves $q$ along the line, and its menu switches the score between
# the nearness score above and the product $a(q, k) = q \cdot k$. Its
# top panel shows each value at its key, with a circle whose area is the
# key's weight, and the answer $\sum_i \alpha_i v_i$ as a star at the query's
# position; the faint curve is the answer for every position of $q$. Under it,
# on the same axis, the weights form a heatmap of one row. It starts at
# $q = 0.5$, the first row of the heatmap above. Things to try:
#
# * Put the query right on a key, at $q = 2$. Does the answer equal that
#   key's value, 1?
# * Drag $q$ to either end of the slider, past the keys. How far does the
#   answer go?
# * Switch the score to the product $q \cdot k$ and set $q$ to 1, 0 and
#   $-1$. Which key gets the most weight now? Does it matter which keys the
#   query sits near?

# %%
from d2lmini.widgets import explore_one_query

explorer = explore_one_query()
explorer

# %% [markdown]
# <details>
# <summary>Worked answers to the things to try (open once you have tried them)</summary>
#
# 1. No. At $q = 2$ key 2 gets the largest weight, 0.40, but keys 1 and 3
#    get 0.24 each and keys 0 and 4 get 0.05 each, so the answer, 2.045, is a
#    blend pulled up by the neighbours' values 2 and 4. A score that rewards
#    nearness still lets a query on a key hear that key's neighbours.
# 2. At $q = 6$ the last key gets 0.81 and the answer is 4.624; at $q = -1$
#    the first key gets 0.81 and the answer is 0.376. Past the keys the answer
#    levels off towards the values at the ends, 5 and 0, and the faint curve
#    never leaves the range from 0 to 5. Why it cannot is the question at the
#    end of this notebook.
# 3. With $q \cdot k$ the query's position no longer picks its neighbours. At
#    $q = 1$, on key 1, the largest key, 5, gets 0.63 and the answer is
#    4.266; at $q = 0$ every key gets $1/6 \approx 0.167$ and the answer is the
#    plain mean of the values, 2.5; at $q = -1$ key 0 gets 0.63 and the answer
#    is 0.734. The product favours the keys farthest out in the query's
#    direction, and a larger $\lvert q\rvert$ sharpens the weights ($q = 2$
#    puts 0.86 on key 5). Chapter 01 shows when the two scores give the same
#    weights, and chapter 04 builds on the product.
#
# </details>

# %% [markdown]
# ## CPU or GPU
#
# Everything runs on a laptop CPU. If a GPU is present, `d2l.try_gpu()` picks
# it (CUDA first, then Apple's MPS), and this notebook and chapters 01–08 move
# their tensors there; otherwise it returns the CPU. Chapter 09 runs its
# pretrained model on the CPU. Printed numbers are rounded, so that most of
# them read the same on any machine; a few cells print the device or a
# timing, which differ, and chapter 08, which trains models, says how far
# its numbers can move.

# %% tags=["nbval-ignore-output"]
device = d2l.try_gpu()
print("this notebook runs on:", device)

# %%
on_device = d2l.nadaraya_watson(queries.to(device), keys.to(device), values.to(device))[0]
print("outputs computed on the chosen device:", d2l.numpy(on_device).round(3))

# %% [markdown]
# ## How to use these notebooks
#
# 1. **Run all cells first** (*Run → Run All Cells*). Apart from the setup
#    cell on Colab, no notebook downloads anything. On a laptop CPU each chapter runs in under 20 seconds, except
#    chapter 08, which trains small models: it takes up to a minute. A part
#    that starts with
#    **Deeper (you may skip this).** holds material for a second reading (a
#    derivation, a floating-point detail, how a file format works): the rest
#    of its chapter does not build on it.
# 2. **Then play.** Every chapter has at least one explorer like the one
#    above. Before you run its cell, and on GitHub, an explorer's output
#    shows the picture it starts with, and a static figure comes before it
#    in the text. Each explorer comes with things to try, and worked
#    answers just after them that stay closed until you click them: try
#    first, then compare. *Save*, under
#    an explorer's picture, writes the current view to a PNG or SVG file, or
#    the weights it draws to an `.npz` file.
# 3. **Answer the why-question.** Every chapter asks one, just before its
#    exercises (here, before the further reading). Pick one option and press
#    *Check*: each option has its own feedback. A wrong one names the
#    confusion behind it and points back to the part of the chapter that
#    settles it; the right one says why it is right. Without a kernel (on
#    GitHub, in a PDF) the options show as text under the cell.
# 4. **Do the exercises.** Chapters 01 to 09 end with at least three each
#    (this one has none), labelled ★ to ★★★. Each asks you to complete a
#    function or a class in a code cell, and the cell under it checks your
#    answer. In the learner edition, the copy that `make lab` opens in
#    `learner/` (and Binder opens too), those cells are yours to fill in; the
#    chapters in `notebooks/` hold the reference answers. Until you try, the
#    check says the exercise is not attempted yet. After that it says in one
#    line that your answer is right, or tells you what it expected, what it
#    received and a first hint; `ch01.hint()` (for chapter 01) in a new cell
#    gives the next hint.
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
# | 06 · Efficient attention | the same, fused | Why the weights cost $n^2$ memory, and how a fused computation avoids storing them |
# | 07 · Self-attention and positional encoding | $q^\top k / \sqrt d$ on $X + P$ | Why self-attention cannot tell word order without positions, and how sines and cosines give it |
# | 08 · Attention that learns | additive or $q^\top k / \sqrt d$, trained | How a model learns where to look: a tiny encoder–decoder, trained on toy tasks, whose cross-attention finds the known alignment on a laptop CPU |
# | 09 · A real model's attention | 6 layers × 12 heads, trained | What the heads of a pretrained model (all-MiniLM-L6-v2, offline) look at, and what their maps cannot tell you |

# %% [markdown]
# ## Summary
#
# * Attention pooling answers a query with a weighted average of values.
# * The weights are a softmax of scores $a(q, k)$: positive, summing to 1.
# * A heatmap of weights has one row per query and one column per key.
# * The score decides which keys a query listens to: nearness picks its
#   neighbours, a product picks the keys farthest out in its direction.
# * The rest of the collection is about choosing $a$ and controlling the
#   weights.

# %% [markdown]
# ## Why? A question to check
#
# **Why does attention pooling always answer with a number between the
# smallest and the largest value?**

# %%
from d2lmini.exercises import questions

questions.ask("00")

# %% [markdown]
# ## Further reading
#
# * The d2l book ("Dive into Deep Learning"), chapter "Attention Mechanisms
#   and Transformers", section "Queries, Keys, and Values": the same picture
#   of attention as a soft lookup in a database. Each chapter here ends with
#   the papers that match it and, where the book has one, its section.
