# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,cellView,jupyter,-all
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
# # 02 · Masked softmax
#
# A model reads a sentence as a sequence of **tokens** (here simply its
# words). Sentences have different lengths, but a **minibatch**, the group
# of examples a model processes together, is one rectangular tensor. So the
# short sentences are padded with a filler token
# up to the length of the longest one. Attention must then ignore the
# filler: a padding key has to receive a weight of exactly zero. The tool
# for this is the **masked softmax**, and every attention layer in the
# chapters that follow needs it.
#
# **In this notebook you will**
# 1. write `sequence_mask` and `masked_softmax` in plain `torch`, for valid
#    lengths given per example or per query, and check them against
#    `d2lmini` and against PyTorch's `scaled_dot_product_attention`;
# 2. compare the values used to fill masked scores (−1e6, −inf, the dtype's
#    minimum) and see, in numbers, what each does in float16 and to a query
#    with nothing to attend to;
# 3. learn why `d2lmini` gives such a query all-zero weights;
# 4. express causal masking, which keeps a model that writes left to right
#    from looking ahead, as valid lengths $1, 2, \dots, n$;
# 5. edit a mask cell by cell and watch the weights follow.

# %% [markdown]
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/02_masked_softmax.ipynb) opens this chapter's learner edition in Colab. Run the collapsed setup cell below first: on Colab it installs `d2lmini`, this collection's helper package, and leaves the runtime's own packages alone; on a course hub it names any file of yours that an update kept under a new name. Anywhere else it does nothing.

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
import torch.nn.functional as F

import d2lmini as d2l
from d2lmini.exercises import ch02

device = d2l.try_gpu()

# %% [markdown]
# ## Padded minibatches
#
# Three sentences of 3, 2 and 4 words, padded to 4 tokens. The **valid
# length** of each example is the number of real tokens.

# %%
sentences = [["the", "cat", "sat"], ["dogs", "bark"], ["birds", "sing", "at", "dawn"]]
num_steps = max(len(s) for s in sentences)
for s in sentences:
    print(" ".join(f"{word:<6}" for word in s + ["<pad>"] * (num_steps - len(s))))
valid_lens = torch.tensor([len(s) for s in sentences])
print("valid_lens:", valid_lens.tolist())

# %% [markdown]
# When the tokens of a sentence attend to one another, which is called
# **self-attention** (chapter 04 puts it to work), every token is a query and
# every token is also a key. An attention layer then scores this batch with
# a tensor of shape (batch, queries, keys) = (3, 4, 4). We use random scores
# (drawn on the CPU from a seed, so they are the same on any device). A plain
# softmax over the keys then gives padding this share of each query's weight:

# %%
torch.manual_seed(0)
scores = torch.randn(3, num_steps, num_steps).to(device)  # (batch, queries, keys)
is_padding = torch.arange(num_steps) >= valid_lens[:, None]  # (batch, keys)
plain = torch.softmax(scores, dim=-1)
weight_on_padding = (plain * is_padding[:, None, :].to(device)).sum(dim=-1)  # (batch, queries)
print("weight each query puts on padding (rows = examples):")
print(d2l.numpy(weight_on_padding).round(3))

# %% [markdown]
# Each query of the second sentence gives between a quarter and 90 % of its
# attention to the two `<pad>` tokens. Those weights have to become zero, and
# the weights on the real tokens have to sum to 1 again.
#
# ## `sequence_mask` from scratch
#
# First a helper: in a tensor of shape (batch, steps), overwrite every
# position $t \ge$ `valid_len[b]` with a given value. A comparison with
# `arange` builds the mask without a loop: `arange(steps)[None, :]` has shape
# (1, steps), `valid_len[:, None]` has shape (batch, 1), and comparing them
# broadcasts to (batch, steps).

# %%
def sequence_mask(X, valid_len, value=0.0):
    """A copy of X (batch, steps) with X[b, t] = value wherever t >= valid_len[b]."""
    steps = torch.arange(X.shape[1], device=X.device)  # (steps,)
    keep = steps[None, :] < valid_len.to(X.device)[:, None]  # (batch, steps)
    X = X.clone()  # never write into the caller's tensor
    X[~keep] = value
    return X


X = torch.tensor([[1, 2, 3], [4, 5, 6]])
ours = sequence_mask(X, torch.tensor([1, 2]))
torch.testing.assert_close(ours, d2l.sequence_mask(X, torch.tensor([1, 2])))
print(ours.tolist(), "— matches d2l.sequence_mask")

# %% [markdown]
# ## `masked_softmax` from scratch
#
# For scores $X$ of shape (batch, queries, keys) and a valid length $\ell$
# for a row of scores, the masked softmax is
#
# $$\operatorname{masked\,softmax}(X)_{bij} =
# \begin{cases} \dfrac{\exp X_{bij}}{\sum_{j' < \ell} \exp X_{bij'}} & j < \ell \\[1ex]
# 0 & j \ge \ell \end{cases}$$
#
# where $\ell \ge 1$ (a row with $\ell = 0$ has nothing to divide by: a
# later section deals with it) and $\ell$ comes from `valid_lens` in one of
# three forms:
#
# | `valid_lens` | shape | $\ell$ for row $(b, i)$ | use |
# |---|---|---|---|
# | `None` | — | every key | no padding |
# | 1-D | (batch,) | `valid_lens[b]` | one length per example: padding |
# | 2-D | (batch, queries) | `valid_lens[b, i]` | one length per query: causal masks, below |
#
# The classic implementation (the d2l book's) flattens the scores to one row
# per (example, query), gives each row its length, overwrites the masked
# scores with a very negative number (−1e6) and takes an ordinary softmax:
# $\exp(-10^6)$ is 0 in floating point, so masked keys get no weight.

# %%
def masked_softmax(X, valid_lens, value=-1e6):
    """Softmax over the last axis of X (batch, queries, keys), ignoring keys beyond valid_lens."""
    if valid_lens is None:
        return torch.softmax(X, dim=-1)
    batch, queries, keys = X.shape
    if valid_lens.dim() == 1:
        valid_lens = valid_lens.repeat_interleave(queries)  # 3 queries: [3, 2] -> [3, 3, 3, 2, 2, 2], a length per row
    else:
        valid_lens = valid_lens.reshape(-1)  # (batch * queries,)
    X = sequence_mask(X.reshape(-1, keys), valid_lens, value)  # (batch * queries, keys)
    return torch.softmax(X.reshape(batch, queries, keys), dim=-1)


lens_per_query = torch.tensor([[1, 3, 2, 3], [2, 1, 2, 1], [4, 3, 2, 1]])  # (batch, queries)
for name, lens in [("None", None), ("1-D", valid_lens), ("2-D", lens_per_query)]:
    torch.testing.assert_close(masked_softmax(scores, lens), d2l.masked_softmax(scores, lens))
    print(f"valid_lens {name}: our masked_softmax matches d2l.masked_softmax")

ours = masked_softmax(scores, valid_lens)
print("weight on padding now:", d2l.numpy((ours * is_padding[:, None, :].to(device)).sum(dim=-1)).max().item())
print("row sums:", d2l.numpy(ours.sum(dim=-1)).round(3).ravel().tolist())

# %% [markdown]
# ### The same weights from PyTorch
#
# PyTorch has an attention function of its own,
# `torch.nn.functional.scaled_dot_product_attention` (SDPA); chapter 04
# builds the same computation from scratch. Here we need only what it
# computes. It takes three matrices whose rows are the queries ($Q$), the
# keys ($K$) and the values ($V$), and returns
# $\operatorname{softmax}(\text{scale} \cdot QK^\top)\, V$, the softmax taken
# over each row. Entry $(i, j)$ of the matrix product $QK^\top$ is the dot
# product of query $i$ and key $j$ (the sum of their entries' products), so
# $QK^\top$ holds one score per query and key, one row per query; the
# softmax turns each row into weights, and multiplying by $V$ gives each
# query its weighted average of the values. Its boolean `attn_mask` marks
# the keys a query may use: **True means "may attend"**, and a masked key
# is left out of its row's softmax.
#
# SDPA returns the outputs, not the weights, but we can make it hand us the
# weights. Take our scores as $Q$, the identity matrix $I$ (1 on the
# diagonal, 0 elsewhere) as $K$, and `scale=1`. Row $j$ of $I$ is 1 at
# position $j$ and 0 elsewhere, so its dot product with row $i$ of the
# scores picks out score $(i, j)$: $QI^\top$ is our scores themselves. Take
# $I$ as $V$ too: multiplying the weights by $I$ leaves them as they are, so
# each output row is a row of weights. SDPA does this for every example of
# a batch; `sdpa_weights` below gives each example the same identity with
# `expand` (a plain `torch.eye` would broadcast too).

# %%
def sdpa_weights(scores, allowed=None, is_causal=False):
    """SDPA's attention weights for given scores (batch, queries, keys)."""
    identity = torch.eye(scores.shape[-1], dtype=scores.dtype, device=scores.device)
    identity = identity.expand(scores.shape[0], -1, -1)  # (batch, keys, keys)
    return F.scaled_dot_product_attention(scores, identity, identity, attn_mask=allowed,
                                          is_causal=is_causal, scale=1.0)


keys = torch.arange(num_steps)
allowed_1d = (keys < valid_lens[:, None])[:, None, :]  # (batch, 1, keys), broadcast over queries
allowed_2d = keys < lens_per_query[:, :, None]  # (batch, queries, keys)
for name, lens, allowed in [("1-D", valid_lens, allowed_1d), ("2-D", lens_per_query, allowed_2d)]:
    torch.testing.assert_close(masked_softmax(scores, lens), sdpa_weights(scores, allowed.to(device)))
    print(f"valid_lens {name}: our masked_softmax matches SDPA's weights")

# %% [markdown]
# And a query with no valid key at all? SDPA's answer has changed between
# PyTorch releases, so measure it rather than trust a sentence:

# %%
nothing_allowed = torch.zeros(1, 1, num_steps, dtype=torch.bool, device=device)  # (batch, query, keys)
print("SDPA, a row with no valid key:          ",
      d2l.numpy(sdpa_weights(scores[:1, :1], nothing_allowed)).round(3).ravel().tolist())
print("d2lmini's masked_softmax, the same row: ",
      d2l.numpy(d2l.masked_softmax(scores[:1, :1], torch.tensor([0], device=device))).round(3).ravel().tolist())
print("our -1e6 version above, the same row:   ",
      d2l.numpy(masked_softmax(scores[:1, :1], torch.tensor([0], device=device))).round(3).ravel().tolist())

# %% [markdown]
# With the torch this collection pins (2.13, on the CPU), SDPA gives such a
# row zeros, as `d2lmini` does; our −1e6 version spreads the row evenly over
# the padding (more on this choice below). Older releases (before about 2.5) returned
# NaN there, and the fused GPU kernels have not always agreed with the CPU:
# if you rely on it, run the cell above on your own version and device.

# %% [markdown]
# ## What the mask looks like
#
# The weights for both kinds of lengths. Each panel is one example: rows are
# queries, columns are keys, and all six panels share one colour scale.
# Masked keys get a weight of exactly 0, and this figure draws every weight
# as it is, so a masked key takes the colour of 0, the darkest.

# %%
weights_1d = d2l.masked_softmax(scores, valid_lens)  # (batch, queries, keys)
weights_2d = d2l.masked_softmax(scores, lens_per_query)
fig = d2l.show_heatmaps(torch.stack([weights_1d, weights_2d]), xlabel="Keys", ylabel="Queries",
                        titles=[f"example {b}" for b in range(3)], figsize=(7.5, 5))
fig.axes[0].set_ylabel("1-D valid_lens\nQueries")
fig.axes[3].set_ylabel("2-D valid_lens\nQueries")
d2l.plt.show()

# %% [markdown]
# Top row: in examples 0 and 1 whole columns go dark beyond the example's
# length (3 and 2 keys); example 2 uses all 4 keys. Bottom row: each query
# has a length of its own (1, 3, 2, 3 in example 0; 4, 3, 2, 1 in example 2),
# so the dark part of each row starts at a different key.
#
# This chapter draws masked cells in two ways. Its three static heatmaps
# (made by `d2l.show_heatmaps`: this one, the causal weights and the edited
# masks further down) show a masked cell as the 0 it holds, the darkest
# colour, like any weight of 0. Its two explorers and its causal-mask diagram
# hatch masked cells in grey instead, so that a masked key cannot be taken
# for a key whose weight is merely small.
#
# ### Explore it yourself
#
# The explorer below masks a random score tensor with one valid-length
# slider per example, and has a per-query mode. Things to try:
#
# * Drag one example's length down one step at a time and watch a column turn
#   to grey hatching, the explorer's mark for a masked key, while the rest of
#   each row brightens (the weights still sum to 1).
# * Set a length to 0. The whole panel is hatched: `d2lmini` gives a query
#   with no valid key all-zero weights. The next section explains why.
# * Switch to per-query mode. Example 0 starts with the lengths 1, 2, 3, 4:
#   which keys can query $i$ see? (The last section of this chapter gives
#   this pattern its name.)

# %%
from d2lmini.widgets import explore_masked_softmax

explorer = explore_masked_softmax()
explorer

# %% [markdown]
# <details>
# <summary>Worked answers to the things to try (open once you have tried them)</summary>
#
# 1. Take the second example from 5 keys to 4: query 0's weights go from
#    0.108, 0.206, 0.122, 0.255, 0.309 to 0.156, 0.298, 0.176, 0.370 and 0.
#    Each surviving weight is divided by $1 - 0.309$, what the dropped key
#    held, so the ratios between them stay as they were and every row still
#    sums to 1. Masking a key does not just zero its weight: the softmax hands
#    that weight to the keys that are left.
# 2. With a length of 0 every weight of that example is exactly 0 and each
#    row sums to 0, not 1. A softmax over no keys has nothing to divide by;
#    `d2lmini` answers "attend to nothing" rather than NaN or a uniform row.
# 3. Query $i$ of example 0 sees keys 0 to $i$ and nothing after: the
#    **causal mask** of the last section, the same cells as
#    `d2l.attention_mask(None, 1, 4, 8, causal=True)`. Query 0 is one-hot
#    (weight 1.000 on key 0); query 1 splits 0.830 and 0.170.
#
# </details>

# %% [markdown]
# ## Which value should fill the masked scores?
#
# −1e6 is the classic choice. It works in float32 because $e^{-10^6}$ rounds
# to 0. But models are often run in float16, whose largest magnitude is 65504:

# %%
print("largest float16 magnitude:", torch.finfo(torch.float16).max)
print("-1e6 stored as float16:", torch.tensor(-1e6).to(torch.float16).item())
fp16_scores = sequence_mask(scores[:1, 0].half(), torch.tensor([2]), value=-1e6)  # one row, 2 valid keys
print("a float16 row filled the classic way:", d2l.numpy(fp16_scores).round(3))

# %% [markdown]
# −1e6 silently becomes −inf. For a row with at least one valid key this is
# harmless: $e^{-\infty} = 0$ too. The trouble is a row with **no** valid
# key: a query in an empty sequence, or a padding query whose per-query length
# is 0. Then every score in the row is the fill value, and the softmax
# returns $\frac{e^{c}}{\sum e^{c}}$:
#
# * with a finite $c$ (−1e6 in float32, or the dtype's minimum) it is
#   $1/n$: uniform weight **on the padding**, a silent wrong answer;
# * with $c = -\infty$ (−inf, or −1e6 in float16) it is $0/0$ = NaN.
#
# The same row of scores with valid length 0, filled three ways, in both
# dtypes, next to `d2l.masked_softmax`:

# %%
empty_row = scores[:1, :1]  # one example, one query: (1, 1, keys)
no_valid_key = torch.tensor([0])
for dtype in (torch.float32, torch.float16):
    X = empty_row.to(dtype)
    print(f"{dtype}:")
    for name, value in [("-1e6", -1e6), ("-inf", float("-inf")), ("dtype min", torch.finfo(dtype).min)]:
        print(f"  fill {name:>9}: {d2l.numpy(masked_softmax(X, no_valid_key, value).float()).round(3).ravel()}")
    print(f"  d2l.masked_softmax: {d2l.numpy(d2l.masked_softmax(X, no_valid_key).float()).round(3).ravel()}")

# %% [markdown]
# `d2lmini` fills masked scores with −inf, which gives exactly zero weight in
# every dtype, and then sets a row with no valid key to **all zeros**. Why
# zeros rather than NaN or a uniform row?
#
# * The output of such a query is then the zero vector: "nothing to attend
#   to" reads as nothing, not as an average of padding.
# * NaN spreads, and in training it reaches the whole model. A model's
#   **parameters** are the numbers it learns, such as the entries of a
#   weight matrix. Training sums up how wrong the model is on a batch in one
#   number, the **loss**. It then computes the loss's **gradient**, which
#   says for each parameter how the loss changes when that parameter moves a
#   little, and moves every parameter a small step in the direction that
#   lowers the loss. A weight matrix is used for every example of the batch,
#   so a single NaN row makes the loss NaN, the gradient of that matrix NaN,
#   and after one step the matrix itself NaN: from then on every output that
#   passes through it is NaN. Here is that in miniature: two examples, the
#   first with valid length 0, and a 2 × 2 matrix of parameters `W` that
#   multiplies the attention output of both. `@` on 3-D tensors multiplies
#   each example's matrices separately: (batch, queries, keys) @ (batch,
#   keys, value size) gives (batch, queries, value size). The sum of the
#   outputs stands in for a loss. `requires_grad_()` asks PyTorch to track `W`, and
#   `loss.backward()` computes the gradient and stores it in `W.grad`.

# %%
torch.manual_seed(1)
scores_2 = torch.randn(2, 3, 4).to(device)  # (batch, queries, keys)
values = torch.randn(2, 4, 2).to(device)  # (batch, keys, value size)
W = torch.randn(2, 2).to(device).requires_grad_()  # parameters used by both examples
lens = torch.tensor([0, 3])
for name, weights in [("fill -inf, no clean-up", masked_softmax(scores_2, lens, float("-inf"))),
                      ("d2l.masked_softmax", d2l.masked_softmax(scores_2, lens))]:
    W.grad = None  # backward() adds to W.grad: start from nothing
    loss = (weights @ values @ W).sum()  # (batch, queries, value size) summed
    loss.backward()
    print(f"{name:>22}: loss {loss.item():.3f}, NaN entries in W.grad: "
          f"{int(W.grad.isnan().sum())} of {W.numel()}")

# %% [markdown]
# PyTorch made the same choice: since version 2.5, SDPA's math path returns
# zeros for a query that may attend to nothing (it calls a "safe" softmax that zeroes
# such rows); the SDPA cell earlier in this chapter measures it on the
# torch you run.
#
# Why not the dtype's minimum? It avoids NaN but gives the uniform row over
# padding shown above.

# %% [markdown]
# **Deeper (you may skip this).** The dtype's minimum has a second flaw. A
# mask can also be **additive**: a tensor added to the scores rather than
# written over them, 0 where a key is allowed and the fill where it is not
# (SDPA accepts a float `attn_mask` of this kind). Added in float16, score +
# min is −inf for any score of −16 or less, because the sum rounds past the
# largest magnitude. A row with no valid key whose scores are that low is all
# −inf, and its softmax is NaN after all, if you add the mask yourself in
# float16 and take `torch.softmax`, as below (SDPA on the CPU adds in float32
# and returns the uniform row instead):

# %%
min16 = torch.finfo(torch.float16).min
print("float16 min:", min16, "| -20 + min in float16:", (torch.tensor(-20.0, dtype=torch.float16) + min16).item())

# %% [markdown]
# ## Causal masking: valid lengths 1, 2, …, n
#
# A **decoder** is the part of a model that writes a sequence one token at
# a time, each new token chosen from the tokens before it (chapter 08 trains
# a small one). A decoder built on self-attention is given the whole target
# sentence at once in training, so that every position learns in parallel:
# position $i$ learns to predict token $i + 1$, and token $i$ is both query
# $i$ and key $i$. Nothing but the mask stops position $i$ from looking at
# key $i + 1$, the very token it is learning to predict, or any later one. So
# query $i$ may attend to keys $0, \dots, i$ only: itself and the past, never
# the future. This is **causal masking**.
#
# It is a special case of what we have built. Query $i$ gets the valid
# length $i + 1$, so the 2-D lengths are $1, 2, \dots, n$ for every example;
# `d2l.causal_valid_lens` builds them. As a boolean mask (True = may attend)
# it is the lower triangle of the (queries, keys) matrix, diagonal included:
# row $i$ holds $i + 1$ True entries, its length. `d2l.attention_mask` with
# `causal=True` builds that triangle directly.

# %%
n = 5
causal_lens = d2l.causal_valid_lens(2, n)  # (batch, queries)
print("causal valid lengths:", causal_lens.tolist())
lower = torch.ones(n, n, dtype=torch.bool).tril()  # True on and below the diagonal
print("lower-triangular mask (1 = may attend):")
print(lower.int().numpy())
print("True entries per row:", lower.sum(dim=1).tolist())
# attention_mask(valid_lens, batch_size, num_queries, num_keys): (batch, queries, keys)
assert torch.equal(d2l.attention_mask(None, 1, n, n, causal=True)[0], lower)
print("d2l.attention_mask(None, 1, n, n, causal=True) is the same triangle")

# %% [markdown]
# Drawn as a grid, with rows for queries and columns for keys, time runs
# right and down, and the right mask (left) is the lower triangle with the
# diagonal; masked cells are hatched grey, as in this chapter's explorers.
# Beside it, two mistakes met often, their wrong cells outlined in red. The
# first masks the diagonal too (`diagonal=-1` in `tril`): a query cannot see
# itself, and query 0 has no key at all (an empty row, which gets zero
# weights). The second is the flipped mask (`triu` for `tril`), the upper
# triangle: query $i$ sees itself and every key after it. Query 0 then sees
# the whole future and the last query only itself, so every query but the
# last looks ahead.

# %%
from d2lmini.diagrams import draw_causal_mask

draw_causal_mask(n)

# %%
torch.manual_seed(2)
self_scores = torch.randn(2, n, n).to(device)  # (batch, queries, keys)
causal = d2l.masked_softmax(self_scores, causal_lens)
from_triangle = torch.softmax(self_scores.masked_fill(~lower.to(device), float("-inf")), dim=-1)
torch.testing.assert_close(causal, from_triangle)
torch.testing.assert_close(causal, sdpa_weights(self_scores, is_causal=True))
print("valid lengths 1..n = lower-triangular mask = SDPA with is_causal=True")

fig = d2l.show_heatmaps(causal, xlabel="Keys", ylabel="Queries",
                        titles=["example 0", "example 1"], figsize=(5, 2.6))

# %% [markdown]
# Query 0 has one key to attend to, so its weight is 1; each later query
# spreads its weight over one more key. The later chapters use causal
# masking as built here: `d2l.causal_valid_lens` gives the lengths to any
# attention layer, and chapter 04 applies them to the self-attention of real
# sentences.
#
# Causal masking combines with padding: a key must then pass both tests, its
# position at most $i$ and below the example's valid length. Two boolean
# tensors combine entry by entry with `&`, "and": `a & b` is True where both
# `a` and `b` are True, False everywhere else (`|`, "or", is True where
# either is). Python's own `and` does not work on tensors: it needs one
# True or False for the whole tensor, and a tensor of more than one value
# refuses to be one (the cell below catches that error and prints it). And
# `&` binds more tightly than a comparison such as `<` or `<=`, so each
# comparison goes in its own parentheses: `(a < b) & (c < d)`. Like
# arithmetic, `&` broadcasts: the causal triangle, of shape (1, 5, 5), and a
# padding mask of 3 valid keys, (1, 1, 5), give one (1, 5, 5) mask, which
# `d2l.attention_mask` also builds when given both a length and
# `causal=True`.

# %%
a = torch.tensor([True, True, False, False])
b = torch.tensor([True, False, True, False])
print("a & b:", (a & b).tolist(), "| a | b:", (a | b).tolist())
try:
    a and b  # Python's and: asks the whole tensor for one truth value
except RuntimeError as error:
    print("a and b: RuntimeError:", error)

causal_mask = d2l.attention_mask(None, 1, n, n, causal=True)  # (1, queries, keys): the triangle
padding_mask = d2l.attention_mask([3], 1, n, n)  # (1, 1, keys): keys 0, 1 and 2 are real
both = causal_mask & padding_mask  # (1, queries, keys): True where both masks allow
print("causal & padding (1 = may attend):")
print(both[0].int().numpy())
assert torch.equal(both, d2l.attention_mask([3], 1, n, n, causal=True))
print("the same mask as d2l.attention_mask([3], 1, n, n, causal=True)")

# %% [markdown]
# ## Edit a mask by hand
#
# Lengths and the causal flag are two short ways to describe a mask, but the
# mask itself is just a boolean matrix, True where query $i$ may attend to
# key $j$, and any such matrix is allowed. Three of them over the same scores
# for one example of 6 queries and 6 keys: padding, causal with padding, and
# a query that may attend to nothing (a per-query length of 0).

# %%
torch.manual_seed(3)
edit_scores = torch.randn(1, 6, 6)  # (batch, queries, keys)
edit_masks = {  # each (1, queries or 1, keys), True = may attend
    "padding, 4 keys": d2l.attention_mask([4], 1, 6, 6),
    "causal + padding": d2l.attention_mask([4], 1, 6, 6, causal=True),
    "query 2: no key": d2l.attention_mask([[6, 6, 0, 6, 6, 6]], 1, 6, 6),
}
edit_weights = torch.cat([d2l.masked_softmax(edit_scores, mask=mask) for mask in edit_masks.values()])
print("query 2 with no key to attend to:", edit_weights[2, 2].tolist())
fig = d2l.show_heatmaps(edit_weights, xlabel="Keys", ylabel="Queries", titles=list(edit_masks),
                        figsize=(8, 2.9))

# %% [markdown]
# As in the first figure, a masked cell shows as the 0 it holds, the darkest
# colour. The row of query 2 is dark from end to end: a query with no key to
# attend to gets all-zero weights, `d2lmini`'s rule from the section on fill
# values.
#
# ### Edit it yourself
#
# In the editor below each button of the grid is one cell of the mask: a
# pressed button (✓) means the query may attend to the key, a blank one that
# it is masked. Click a cell and the weights, `d2l.masked_softmax(scores,
# mask=mask)` over fixed random scores, redraw at once; the presets set the
# whole grid from `d2l.attention_mask`. The caption above the picture names
# the queries whose whole row is masked. Things to try:
#
# * Pick *a whole row masked: query 2*. Its row turns to grey hatching and
#   its weights are exactly 0, not NaN. Click one of its cells back on: query
#   2 now puts all of its weight, 1, on that single key.
# * Blank a whole column: that key is padding for every query, and the other
#   weights of each row grow so that the row still sums to 1.
# * Start from *causal* and flip it to anti-causal: blank the cells below
#   the diagonal and press those above it. Query 0 now sees every future
#   key, and the last query sees only itself. A decoder trained this way
#   learns to read the next token off its input instead of predicting it:
#   its training loss looks excellent, but at generation time the next token
#   does not exist yet, so what it learned to rely on is missing.

# %%
from d2lmini.widgets import explore_mask_editor

mask_editor = explore_mask_editor()
mask_editor

# %% [markdown]
# <details>
# <summary>Worked answers to the things to try (open once you have tried them)</summary>
#
# 1. The caption ends "fully masked: query 2, all-zero weights by
#    d2lmini's policy" and the row is six zeros. Turn on, say, key 4 in that
#    row and the row becomes 0, 0, 0, 0, 1, 0: a softmax over a single score
#    is 1 whatever the score is.
# 2. From *no mask*, blank the column of key 3: every row's other weights are
#    multiplied by $1/(1 - w_3)$, where $w_3$ was its weight on key 3: by 1.113
#    for query 0 and 1.215 for query 5 (whose weight on key 3 was 0.177). The
#    rows still sum to 1 and keep their shape.
# 3. Anti-causal, query 0 spreads its weight over all six keys (0.049 to
#    0.365) and query 5 puts 1.000 on itself; 15 of 36 cells are masked,
#    as for *causal*, but on the other side. The mask is still valid, so
#    nothing warns you: only the direction is wrong, and that bug is caught
#    by looking, or by a test that compares with a known causal mask.
#
# </details>

# %% [markdown]
# ## Summary
#
# * Padding makes a batch rectangular; the masked softmax gives padding keys
#   exactly zero weight and renormalises the rest.
# * `valid_lens` is `None`, 1-D (one length per example) or 2-D (one length
#   per query); `sequence_mask` and a flatten do the rest.
# * −1e6 becomes −inf in float16. Any fill that is −inf makes a row with no
#   valid key NaN; a finite fill makes it uniform over the padding.
# * `d2lmini` fills with −inf and gives rows with no valid key all-zero
#   weights, so one empty row cannot turn the loss, and through its
#   gradient the model's parameters, into NaN. PyTorch's SDPA gives zeros
#   there too in torch 2.13 (measured above); older releases gave NaN.
# * Causal masking, which keeps a decoder from seeing the tokens after the
#   current one, is masking with valid lengths $1, \dots, n$: the lower
#   triangle of the (queries, keys) matrix, diagonal included. Masking the
#   diagonal too, or taking the upper triangle, are the classic mistakes.
# * A mask is any boolean (queries, keys) matrix, True where a query may
#   attend; lengths and the causal flag are shorthands for the common ones.
#   `a & b` combines two masks entry by entry (Python's `and` cannot).

# %% [markdown]
# ## Why? A question to check
#
# **Why does d2lmini give a query with no valid key a row of zero weights,
# rather than the same weight on every key?**

# %%
from d2lmini.exercises import questions

questions.ask("02")


# %% [markdown]
# ## Exercises
#
# Fill in each function, run its cell, then run the check below it. A check
# prints one line when your answer is right; otherwise it tells you what it
# expected, what it got, and gives a hint.

# %% [markdown]
# ### Exercise 2.1 · Mean pooling over the valid steps (★)
#
# Write `masked_mean(values, valid_lens)`: for `values` of shape
# (batch, steps, dim) and 1-D `valid_lens`, return the mean of the first
# `valid_lens[b]` steps of each example, shape (batch, dim), with no loop
# over the examples. Padding steps must not count, and an example of length
# 0 gives a zero vector. Hint: a mean is a weighted average. What weight
# does it give each real step, and each padding step? Where in this chapter
# have you met weights like that?

# %% tags=["exercise"]
def masked_mean(values, valid_lens):
    """Mean of each example's first valid_lens[b] steps: (batch, steps, dim) -> (batch, dim)."""
    ### BEGIN SOLUTION
    scores = torch.zeros(values.shape[0], 1, values.shape[1], device=values.device)  # all equal
    weights = d2l.masked_softmax(scores, valid_lens)  # (batch, 1, steps)
    return (weights @ values).squeeze(1)  # (batch, dim)
    ### END SOLUTION


# %% tags=["check"]
ch02.check_masked_mean(masked_mean)

# %% [markdown]
# ### Exercise 2.2 · Padded queries, not just padded keys (★★)
#
# In self-attention every token is a query as well as a key, padding
# included. A 1-D `valid_lens` hides the padded *keys*, but each padded
# query still gets a full row of weights: attention computed for a token
# that does not exist. Write `self_attention_weights(scores, valid_lens)`:
# for self-attention scores of shape (batch, steps, steps) and 1-D
# `valid_lens`, return the weights in which a real query
# ($i <$ `valid_lens[b]`) attends to the real keys only and a padded query's
# row is all zeros. Do not modify `scores`. Hint: 2-D valid lengths give each
# query a length of its own.

# %% tags=["exercise"]
def self_attention_weights(scores, valid_lens):
    """Masked softmax of (batch, steps, steps) scores: padded keys and padded queries get no weight."""
    ### BEGIN SOLUTION
    is_real = torch.arange(scores.shape[1], device=valid_lens.device) < valid_lens[:, None]  # (batch, queries)
    lens = torch.where(is_real, valid_lens[:, None], 0)  # (batch, queries): 0 for a padded query
    return d2l.masked_softmax(scores, lens)
    ### END SOLUTION


# %% tags=["check"]
ch02.check_padded_queries(self_attention_weights)

# %% [markdown]
# ### Exercise 2.3 · A sliding-window causal mask (★★)
#
# With a causal mask the last of $n$ queries attends to all $n$ keys, so the
# cost still grows as $n^2$. Some models (Mistral 7B, for one) let each query
# see only the `window` most recent keys, itself included: query $i$ attends
# to keys $i - \text{window} + 1, \dots, i$. Write
# `local_causal_mask(num_steps, window)`: a boolean tensor of shape
# (num_steps, num_steps), True where query $i$ (row) may attend to key $j$
# (column), as in SDPA's `attn_mask`. Build it from comparisons with
# `torch.arange`, as `sequence_mask` does: the causal lengths $i + 1$ give
# each row its last key, and the window gives it a first one.

# %% tags=["exercise"]
def local_causal_mask(num_steps, window):
    """Boolean (num_steps, num_steps) mask: True where i - window < j <= i."""
    ### BEGIN SOLUTION
    steps = torch.arange(num_steps)
    queries, keys = steps[:, None], steps[None, :]  # (num_steps, 1), (1, num_steps)
    return (keys <= queries) & (keys > queries - window)
    ### END SOLUTION


# %% tags=["check"]
ch02.check_local_causal_mask(local_causal_mask)

# %% [markdown]
# ## Further reading
#
# * A. Vaswani et al. (2017), "Attention Is All You Need", section 3.2.3:
#   the decoder's mask, scores of illegal connections set to $-\infty$
#   before the softmax.
# * PyTorch's documentation of `torch.nn.functional.scaled_dot_product_attention`:
#   its boolean `attn_mask` (True may attend) and `is_causal`.
# * The d2l book, section "Attention Scoring Functions", where the masked
#   softmax operation is introduced.
