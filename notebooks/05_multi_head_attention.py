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
# # 05 · Multi-head attention
#
# One attention layer gives each query one set of weights, so whatever the
# query should gather from the keys comes out as one weighted average.
# Multi-head attention runs several smaller attentions side by side, each on
# its own learned projection of the queries, keys and values, and mixes their
# results with one last linear map.
# One head can match tokens on one set of features while another matches them
# on a different set.
#
# **In this notebook you will**
# 1. build multi-head attention from scratch, first one head at a time, then
#    with all heads folded into the batch (`transpose_qkv` and
#    `transpose_output`), following the shapes at every step;
# 2. check it against `d2lmini.MultiHeadAttention` and against PyTorch's
#    `torch.nn.MultiheadAttention`, copying the weights across by hand;
# 3. see the error you get when the width does not split into equal heads;
# 4. draw each head's weights for a self-attention example;
# 5. trace where each feature goes when the heads are folded into the batch,
#    and see what a missing transpose does;
# 6. explore heads, causal masking and valid lengths with sliders;
# 7. meet `torch.einsum`, which writes a batched product by naming its axes.

# %% [markdown]
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/05_multi_head_attention.ipynb) opens this chapter's learner edition in Colab. Run the collapsed setup cell below first: on Colab it installs `d2lmini`, this collection's helper package, and leaves the runtime's own packages alone; on a course hub it names any file of yours that an update kept under a new name. Anywhere else it does nothing.

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
from torch import nn

import d2lmini as d2l
from d2lmini.exercises import ch05

device = d2l.try_gpu()

# %% [markdown]
# ## Heads, as formulas
#
# The layer has a width $d_\text{model}$ (the code's `num_hiddens`) and $h$
# heads (`num_heads`). Each head works in a space of width
# $d_\text{head} = d_\text{model} / h$: its queries, keys and values all have
# $d_\text{head}$ features. Head $i$ has its own projections
# $W_q^{(i)} \in \mathbb{R}^{d_\text{head} \times d_q}$,
# $W_k^{(i)} \in \mathbb{R}^{d_\text{head} \times d_k}$ and
# $W_v^{(i)} \in \mathbb{R}^{d_\text{head} \times d_v}$, where $d_q$, $d_k$ and
# $d_v$ are the sizes of the input query, key and value vectors, and computes
# scaled dot-product attention (chapter 04) in that space, so its scores are
# divided by $\sqrt{d_\text{head}}$:
#
# $$\mathbf{h}_i = \operatorname{attention}\!\left(W_q^{(i)} q,\; W_k^{(i)} k,\;
# W_v^{(i)} v\right) \in \mathbb{R}^{d_\text{head}}.$$
#
# The $h$ results are concatenated back to width
# $h \cdot d_\text{head} = d_\text{model}$ and mixed by one output matrix
# $W_o \in \mathbb{R}^{d_\text{model} \times d_\text{model}}$:
#
# $$\operatorname{multihead}(q, k, v) = W_o \begin{bmatrix} \mathbf{h}_1 \\ \vdots \\
# \mathbf{h}_h \end{bmatrix}.$$
#
# Stack the heads' projections on top of each other and you get one ordinary
# $d_\text{model} \times d_q$ matrix $W_q$: head $i$ owns rows
# $i \cdot d_\text{head}$ to $(i + 1) \cdot d_\text{head} - 1$ (and likewise for
# $W_k$ and $W_v$). So the projections of all heads are computed by one matrix
# product, and a head is just a slice of the projected features.
#
# ## From scratch, one head at a time
#
# Take $d_\text{model} = 16$ and $h = 4$ heads of width $d_\text{head} = 4$, a
# batch of two examples with 3 queries and 5 key–value pairs each, inputs of
# size $d_q = d_k = d_v = 16$, and 1-D valid lengths. Each head uses
# `d2l.DotProductAttention` from chapter 04.
#
# The formulas multiply a column: $W_q q$. The code keeps each query as a
# row, along the last axis of `queries`, so it multiplies from the right by
# the transpose: for a row $x$, $x W^\top$ holds the same numbers as the
# column $W x$ (entry $j$ of both is row $j$ of $W$ times $x$). So
# `queries @ W_q.T` projects every query of the batch at once, and head
# $i$'s $W_q^{(i)}$ is the slice of its $d_\text{head}$ rows, `W_q[rows]`,
# which projects with `queries @ W_q[rows].T`.

# %%
num_hiddens, num_heads = 16, 4  # d_model and h
d_head = num_hiddens // num_heads  # width of one head
input_size = 16  # d_q = d_k = d_v
torch.manual_seed(0)  # here, so that running this cell again draws the same numbers
W_q, W_k, W_v = (torch.randn(num_hiddens, input_size) / input_size ** 0.5 for _ in range(3))  # (d_model, d_q)
W_o = torch.randn(num_hiddens, num_hiddens) / num_hiddens ** 0.5  # (d_model, d_model)
queries = torch.randn(2, 3, input_size)  # (batch, queries, d_q)
keys = torch.randn(2, 5, input_size)  # (batch, keys, d_k)
values = torch.randn(2, 5, input_size)  # (batch, keys, d_v)
valid_lens = torch.tensor([3, 5])

W_q, W_k, W_v, W_o = (W.to(device) for W in (W_q, W_k, W_v, W_o))
queries, keys, values, valid_lens = (t.to(device) for t in (queries, keys, values, valid_lens))
dot_product = d2l.DotProductAttention(dropout=0.0)


def multihead_loop(queries, keys, values, valid_lens):
    """Multi-head attention with an explicit loop over the heads."""
    heads = []
    for i in range(num_heads):
        rows = slice(i * d_head, (i + 1) * d_head)  # head i's rows of every projection
        q_i, k_i, v_i = queries @ W_q[rows].T, keys @ W_k[rows].T, values @ W_v[rows].T  # (B, n, d_head)
        heads.append(dot_product(q_i, k_i, v_i, valid_lens))  # (B, n_q, d_head)
    return torch.cat(heads, dim=-1) @ W_o.T  # (B, n_q, h*d_head) -> (B, n_q, d_model)


looped = multihead_loop(queries, keys, values, valid_lens)
print("output of the loop:", tuple(looped.shape))

# %% [markdown]
# ## All heads at once: fold them into the batch
#
# The loop runs $h$ small attentions one after the other. But the heads are
# independent, exactly like the examples of a batch, so we can *make* them
# examples of the batch: project once with the full matrices, split the
# feature axis into (heads, $d_\text{head}$), move the head axis next to the
# batch axis and merge the two. One call of batched attention then serves
# every head of every example. `X.permute(dims)` reorders the axes: axis
# `k` of the result is axis `dims[k]` of `X`. So `permute(0, 2, 1, 3)`
# swaps axes 1 and 2, and `permute(2, 0, 1)` of an (A, B, C) tensor gives
# (C, A, B): new axis 0 is old axis 2, new axis 1 old axis 0, new axis 2 old
# axis 1. Follow the shapes:

# %%
B, n_q = queries.shape[0], queries.shape[1]
projected = queries @ W_q.T
print("projected with W_q:           ", tuple(projected.shape), " (batch, queries, d_model)")
split = projected.reshape(B, n_q, num_heads, d_head)
print("feature axis split into heads:", tuple(split.shape), " (batch, queries, heads, d_head)")
moved = split.permute(0, 2, 1, 3)
print("head axis moved forward:      ", tuple(moved.shape), " (batch, heads, queries, d_head)")
folded = moved.reshape(B * num_heads, n_q, d_head)
print("heads folded into the batch:  ", tuple(folded.shape), " (batch*heads, queries, d_head)")

# %% [markdown]
# Those three lines are `transpose_qkv`. In the folded batch, row
# `b * h + i` is head `i` of example `b`. Valid lengths belong to examples, so
# each length must be repeated once per head, in the same order
# (`repeat_interleave`). After attention, `transpose_output` undoes the folding
# — (batch·heads, queries, $d_\text{head}$) back to (batch, queries,
# heads·$d_\text{head}$) — which *is* the concatenation of the heads, ready
# for $W_o$.

# %%
def transpose_qkv(X):
    """(batch, n, d_model) -> (batch*heads, n, d_head): each head becomes an example."""
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)  # (batch, n, heads, d_head)
    X = X.permute(0, 2, 1, 3)  # (batch, heads, n, d_head)
    return X.reshape(-1, X.shape[2], X.shape[3])  # (batch*heads, n, d_head)


def transpose_output(X):
    """(batch*heads, n, d_head) -> (batch, n, heads*d_head): the heads side by side."""
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])  # (batch, heads, n, d_head)
    X = X.permute(0, 2, 1, 3)  # (batch, n, heads, d_head)
    return X.reshape(X.shape[0], X.shape[1], -1)  # (batch, n, heads*d_head)


def multihead_folded(queries, keys, values, valid_lens):
    """Multi-head attention with the heads folded into the batch: one attention call."""
    q, k, v = transpose_qkv(queries @ W_q.T), transpose_qkv(keys @ W_k.T), transpose_qkv(values @ W_v.T)
    lens = torch.repeat_interleave(valid_lens, repeats=num_heads, dim=0)  # (batch*heads,)
    heads = dot_product(q, k, v, lens)  # (batch*heads, queries, d_head)
    return transpose_output(heads) @ W_o.T  # (batch, queries, d_model)


print("lengths per (example, head):", torch.repeat_interleave(valid_lens, num_heads).tolist())
torch.testing.assert_close(multihead_folded(queries, keys, values, valid_lens), looped)
print("folded heads == loop over heads")

# %% [markdown]
# The whole layer in one picture, for this section's sizes
# ($d_\text{model} = 16$, $h = 4$, $d_\text{head} = 4$). Each feature column is
# coloured by the head it goes to: the split (`transpose_qkv`) hands head $i$
# its own $d_\text{head}$ columns as an example of the batch of $B \cdot h$,
# the heads attend side by side, and the merge
# (`transpose_output`) puts their columns back where they came from, which is
# the concatenation that $W_o$ mixes. Which reshapes do the split, and why the
# transpose among them matters, is traced step by step further down.

# %%
from d2lmini.diagrams import draw_multihead_split_merge

draw_multihead_split_merge()

# %% [markdown]
# How to read it. Data flows left to right, and the shape beside each label
# is that of the tensor at that point. The coloured strip is the
# $d_\text{model} = 16$ features of one token after the projection: columns
# 0 to 3 in the first colour, 4 to 7 in the second, and so on, one colour per
# head. Each head box is tinted with the colour of its 4 columns: they go to
# that box and to no other,
# and come back as that head's 4 output columns in the same place of the
# right-hand strip. The four boxes are drawn apart, but the code makes no
# four calls: after the split they are four rows of one batch of
# $B \cdot h$, and one attention call handles them all. Only $W_o$ mixes the
# colours.

# %% [markdown]
# ## Checking against `d2lmini`
#
# `d2l.MultiHeadAttention` is this folded version, with $W_q, W_k, W_v, W_o$ as
# `nn.Linear` layers (PyTorch's learnable matrix $W$, applied to a row $x$ as
# $x W^\top$, plus a bias when asked for). Build one with explicit input sizes, so that its layers
# have weight matrices at once (without the sizes they would wait for the
# first call to learn them, and there would be nothing to copy into yet), copy
# our matrices in, and compare the outputs and the per-head weights, which it
# reports as (batch, heads, queries, keys).

# %%
mha = d2l.MultiHeadAttention(num_hiddens, num_heads, dropout=0.0, query_size=input_size,
                             key_size=input_size, value_size=input_size).to(device)
with torch.no_grad():
    for layer, W in ((mha.W_q, W_q), (mha.W_k, W_k), (mha.W_v, W_v), (mha.W_o, W_o)):
        layer.weight.copy_(W)  # nn.Linear stores (out, in): the same layout as our W

ours = mha(queries, keys, values, valid_lens)
torch.testing.assert_close(ours, looped)
torch.testing.assert_close(mha.transpose_qkv(queries @ W_q.T), transpose_qkv(queries @ W_q.T))
print("d2l.MultiHeadAttention == our loop; weights:", tuple(mha.attention_weights.shape))

# %% [markdown]
# The layer keeps its pieces as attributes you can use on their own.
# `mha.num_heads` is $h$, the number of heads. `mha.W_q`, `mha.W_k`,
# `mha.W_v` and `mha.W_o` are the four `nn.Linear` layers; `mha.transpose_qkv` and `mha.transpose_output` are its versions of
# our two functions (the first was just checked against ours). And
# `mha.attention` is a `d2l.DotProductAttention` from chapter 04: it plays the
# part of `dot_product` in `multihead_folded`, one call on the folded heads,
# (batch·heads, n, $d_\text{head}$) in and (batch·heads, queries,
# $d_\text{head}$) out. After every call it keeps that call's weights, one
# matrix per (example, head): `mha.attention.attention_weights`, of shape
# (batch·heads, queries, keys). `mha.attention_weights` is those same numbers
# reshaped to (batch, heads, queries, keys).

# %%
print("mha.attention is a", type(mha.attention).__name__)
print("mha.attention.attention_weights:", tuple(mha.attention.attention_weights.shape), " (batch*heads, queries, keys)")
torch.testing.assert_close(mha.attention.attention_weights.reshape(2, num_heads, 3, 5), mha.attention_weights)
print("reshaped to (batch, heads, queries, keys), they are mha.attention_weights")

# %% [markdown]
# ## Checking against `torch.nn.MultiheadAttention`
#
# PyTorch's layer stores the three input projections as **one** matrix,
# `in_proj_weight` of shape ($3 d_\text{model}$, $d_\text{model}$): $W_q$, $W_k$
# and $W_v$ stacked by rows, in that order. (Its queries must have width
# $d_\text{model}$; one matrix can hold all three projections because here
# keys and values have that width too, $d_k = d_v = d_\text{model}$, PyTorch's
# default.) $W_o$ lives in `out_proj`. Its heads split the rows the same way ours do (head $i$ owns
# rows $i \cdot d_\text{head}$ to $(i+1) \cdot d_\text{head} - 1$ of each block),
# so copying the matrices is all it takes. Two more details:
#
# * it masks with `key_padding_mask`, a (batch, keys) boolean tensor that is
#   **True at padding** — the opposite sense of SDPA's `attn_mask`;
# * `average_attn_weights=False` returns the weights per head instead of
#   their mean.
#
# First the copy, spelled out:

# %%
torch_mha = nn.MultiheadAttention(embed_dim=num_hiddens, num_heads=num_heads, bias=False,
                                  batch_first=True).to(device)
with torch.no_grad():
    torch_mha.in_proj_weight.copy_(torch.cat([W_q, W_k, W_v], dim=0))  # (3*d_model, d_model)
    torch_mha.out_proj.weight.copy_(W_o)  # (d_model, d_model)

padding = torch.arange(keys.shape[1], device=device) >= valid_lens[:, None]  # (batch, keys), True = padding
print("key_padding_mask:")
print(padding.cpu().int().numpy())

theirs, their_weights = torch_mha(queries, keys, values, key_padding_mask=padding, average_attn_weights=False)
torch.testing.assert_close(theirs, ours)
torch.testing.assert_close(their_weights, mha.attention_weights)
print("nn.MultiheadAttention == d2l.MultiHeadAttention, outputs and per-head weights")

# %% [markdown]
# From now on the two helpers `d2lmini` provides do this work:
# `d2l.padding_mask(valid_lens, num_keys)` builds the mask and
# `d2l.to_torch_multihead(mha)` builds the PyTorch layer with the weights
# copied (including the biases, for a layer built with `bias=True`).

# %%
torch.testing.assert_close(d2l.padding_mask(valid_lens, keys.shape[1]), padding)
copied = d2l.to_torch_multihead(mha)
torch.testing.assert_close(copied(queries, keys, values, key_padding_mask=padding)[0], ours)
print("d2l.to_torch_multihead + d2l.padding_mask reproduce the same output")

# %% [markdown]
# ## When the width does not split
#
# Every head gets $d_\text{head} = d_\text{model} / h$ features, so
# $d_\text{model}$ (`num_hiddens`) must be a multiple of $h$ (`num_heads`).
# Ask for 4 heads over 10 features and `d2lmini` stops you at construction,
# with a suggestion:

# %%
try:
    d2l.MultiHeadAttention(num_hiddens=10, num_heads=4, dropout=0.0)
except ValueError as error:
    print("ValueError:", error)

# %% [markdown]
# PyTorch refuses too, more tersely:

# %%
try:
    nn.MultiheadAttention(embed_dim=10, num_heads=4)
except AssertionError as error:
    print("AssertionError:", error)

# %% [markdown]
# ## Tracing the shapes: why the transpose matters
#
# `transpose_qkv` is three lines, and the middle one is easy to drop: a single
# `reshape` to (batch·heads, n, $d_\text{head}$) has the right shape too.
# Shapes alone cannot tell the two apart, so make the tensor tell us where
# each number came from. Take one example ($B = 1$) of $T = 4$ positions and
# $d_\text{model} = 8$ features split into $h = 2$ heads of width
# $d_\text{head} = 4$, and build two tensors of that shape: one holds each
# cell's position $t$, the other its feature column $j$. Feature column $j$
# belongs to head $j \,//\, d_\text{head}$. Every reshape and permute moves the
# two tensors' cells the same way, so afterwards each cell still says where it
# came from.

# %%
T, d_model, h = 4, 8, 2
d_head = d_model // h  # 4, as in the first example
positions = torch.arange(T).repeat_interleave(d_model).reshape(1, T, d_model)  # X[0, t, j] = t
columns = torch.arange(d_model).repeat(T).reshape(1, T, d_model)  # X[0, t, j] = j
# Only its transpose_qkv and transpose_output are used.
tracer = d2l.MultiHeadAttention(num_hiddens=d_model, num_heads=h, dropout=0.0)


def steps(X):
    """transpose_qkv one step at a time: every intermediate tensor, named by the operation that made it."""
    split = X.reshape(1, T, h, d_head)  # (B, T, h, d_head)
    moved = split.permute(0, 2, 1, 3)  # (B, h, T, d_head)
    folded = moved.reshape(1 * h, T, d_head)  # (B*h, T, d_head)
    return {"X": X, "reshape": split, "permute(0, 2, 1, 3)": moved, "reshape = transpose_qkv": folded,
            "transpose_output": tracer.transpose_output(folded)}


traced = {name: steps(X) for name, X in (("positions", positions), ("columns", columns))}
wrong = positions.reshape(1 * h, T, d_head)  # the bug: no transpose
for name, X in (("positions", positions), ("columns", columns)):
    torch.testing.assert_close(traced[name]["reshape = transpose_qkv"], tracer.transpose_qkv(X))
    torch.testing.assert_close(traced[name]["transpose_output"], X)
for step, tensor in traced["positions"].items():
    print(f"{step:<24}{tuple(tensor.shape)}")
print("step by step == d2l's transpose_qkv; transpose_output brings X back")
print("positions in batch row 0, with the transpose:", traced["positions"]["reshape = transpose_qkv"][0, :, 0].tolist())
print("positions in batch row 0, reshape alone:     ", wrong[0, :, 0].tolist())

# %% [markdown]
# How to read it. Each panel is one tensor (batch of 1 dropped), titled
# with the step that made it and its shape. In every panel the last axis
# runs across a block, the one before it down the block's rows, and each
# index of the axes in front of those two gives one more block, side by
# side, left to right. A cell's colour is the head of its feature column,
# its digit the position it came from. What you want at the end of the top row:
# one block per head, each block in one colour (one head's features only),
# with the digits 0, 1, 2, 3 down its rows (every position once, in order).

# %%
from matplotlib.patches import Patch

from d2lmini.widgets.shape_tracer import head_colour, tensor_picture


def show_tensor(ax, name, tensor_positions, tensor_columns):
    """One panel: a traced tensor as blocks of cells, titled with the step and its shape."""
    shape = tuple(tensor_positions.shape)
    blocks = (-1, *shape[-2:])  # (blocks, rows, columns): batch and any middle axes side by side
    picture = tensor_picture(tensor_positions.reshape(blocks), tensor_columns.reshape(blocks), d_head)
    ax.imshow(picture, interpolation="nearest")
    ax.set_title(f"{name}\n{shape}", fontsize=9)
    ax.set_axis_off()


names = list(traced["positions"])
blocks = [traced["positions"][n].reshape(-1, *traced["positions"][n].shape[-2:]).shape for n in names]
fig, axes = d2l.plt.subplots(2, len(names), figsize=(12, 3.6), layout="constrained",
                             width_ratios=[G * (C + 1) - 1 for G, _, C in blocks])  # each panel's width in cells
for ax, name in zip(axes[0], names):
    show_tensor(ax, name, traced["positions"][name], traced["columns"][name])
show_tensor(axes[1, 0], "X", positions, columns)
show_tensor(axes[1, 3], "reshape alone (the bug)", wrong, columns.reshape(1 * h, T, d_head))
for ax in (axes[1, 1], axes[1, 2], axes[1, 4]):
    ax.set_axis_off()
axes[1, 1].text(0.5, 0.5, "no permute: the same\n(2, 4, 4) shape, but\nblock 0 holds positions\n0, 0, 1, 1",
                ha="center", va="center", fontsize=9, transform=axes[1, 1].transAxes)
fig.legend(handles=[Patch(color=head_colour(i), label=f"head {i}") for i in range(h)], loc="lower right",
           ncols=h, fontsize=9, frameon=False)
d2l.plt.show()

# %% [markdown]
# Read the top row left to right, one panel at a time.
#
# * **X**, (1, 4, 8): one block, a row per position (digits 0 to 3 going
#   down), a column per feature; columns 0 to 3 are head 0's, 4 to 7 head 1's.
# * **reshape**, (1, 4, 2, 4): the axes in front of the last two are now
#   (batch, positions), so there is one block per position, four in all. Its
#   two rows are the heads (first head 0, then head 1), its columns the 4
#   features of a head. No number has moved: the same 32 cells, grouped
#   differently.
# * **permute(0, 2, 1, 3)**, (1, 2, 4, 4): the head axis now comes before the
#   positions, so there is one block per head. Block 0 is all head 0's
#   colour, block 1 all head 1's, and each has positions 0 to 3 down its
#   rows. This is the picture we wanted.
# * **reshape = transpose_qkv**, (2, 4, 4): merging batch and heads into one
#   axis of 2 changes no block, since the batch has one example. These two
#   blocks are what attention receives: two sequences of 4 positions.
# * **transpose_output**, (1, 4, 8): the same cells as X, in the same places.
#
# The bottom row skips the permute. The shape is the same (2, 4, 4), but look
# at the colours and digits of block 0: its rows alternate between the two
# heads' colours and read 0, 0, 1, 1. A `reshape` fills the new shape in
# memory order, and memory holds X row by row, all 8 features of position 0,
# then all of position 1, and so on. So block 0 gets the first 16 numbers,
# positions 0 and 1, cut into rows of 4. Attention over that "head" would
# treat the two halves of one token as two tokens and never see positions 2
# and 3, which sit in block 1. No error is raised — only the numbers are
# wrong.

# %% [markdown]
# ## What each head looks at
#
# Random weights make random heads, which says little. To see heads doing
# different jobs, reuse the hand-made word features of chapter 04 (time,
# smallness, number, verb, function word, end of sentence) for the sentence
# "It took one minute." and build a layer of $h = 3$ heads of width
# $d_\text{head} = 2$ by hand ($d_\text{model} = 6$, the number of features):
# $W_q = W_k = 2I$, $W_v = W_o = I$. Heads are numbered from 0, as in
# the code and the explorer below: head 0 then sees only the features (time,
# small), head 1 only (number, verb), head 2 only (function, end) — each head
# matches tokens on its own two features. This is self-attention (queries,
# keys and values are all the sentence) with no mask.

# %%
features = ["time", "small", "number", "verb", "function", "end"]
sentence = ["it", "took", "one", "minute", "."]
X = torch.tensor([[0, 0, 0, 0, 1, 0],  # it
                  [1, 0, 0, 1, 0, 0],  # took
                  [0, 0, 1, 0, 0, 0],  # one
                  [1, 1, 0, 0, 0, 0],  # minute
                  [0, 0, 0, 0, 0, 1]],  # .
                 dtype=torch.float32).unsqueeze(0).to(device)  # (batch=1, tokens=5, features=6)

by_hand = d2l.MultiHeadAttention(num_hiddens=6, num_heads=3, dropout=0.0, query_size=6, key_size=6,
                                 value_size=6).to(device)
with torch.no_grad():
    for layer, scale in ((by_hand.W_q, 2.0), (by_hand.W_k, 2.0), (by_hand.W_v, 1.0), (by_hand.W_o, 1.0)):
        layer.weight.copy_(scale * torch.eye(6))
sentence_output = by_hand(X, X, X)
per_head = by_hand.attention_weights[0].detach().cpu()  # (heads, queries, keys)
print("output:", tuple(sentence_output.shape), " per-head weights of the example:", tuple(per_head.shape))

# %%
titles = [f"head {i}\n({features[2 * i]}, {features[2 * i + 1]})" for i in range(3)]
fig = d2l.show_heatmaps(per_head, xlabel="Keys", ylabel="Queries", titles=titles, figsize=(8.5, 3.2))
fig.axes[0].set_xticks(range(5), sentence)  # the panels share their axes: setting one sets all
fig.axes[0].set_yticks(range(5), sentence)
for ax in fig.axes[:3]:
    ax.tick_params(axis="x", labelrotation=45)
d2l.plt.show()

# %% [markdown]
# Each panel is one head; all three share one colour scale. Head 0 links
# *took* and *minute* (both carry time) and keeps *minute* mostly on itself.
# Head 1 lets *took* and *one* attend to themselves — no other token shares
# their verb or number feature. Head 2 does the same for *it* and the full
# stop. A token with nothing in a head's two features scores 0 against every
# key there, so its row is uniform: that head has nothing to say about it.
# Concatenating the three heads and applying $W_o$ gives each token one output
# that combines the three views.

# %% [markdown]
# ## Explore
#
# First the shapes. The tracer folds a (1, T, 8) tensor into (h, T, 8/h) like
# the figure above, with `d2l`'s own `transpose_qkv`, or with a bare
# `reshape` when you untick *with transpose*. It draws X on the left, a row
# per position, and the folded tensor on the right, block $b$ being batch row
# $b$; digits and colours mean what they did in the figure (position and
# head). A correct fold shows each block in one colour with the positions in
# order down its rows:
#
# * Step the heads through 1, 2, 4, 8 with the transpose: each block stays one
#   colour, positions 0 to T − 1 down its rows.
# * Untick *with transpose*: blocks now mix colours (heads) and their rows
#   repeat positions. With h = 1 the two agree: a single head needs no move.
# * Change T: without the transpose, which positions a block holds changes too.

# %%
from d2lmini.widgets import explore_shape_tracer

shape_tracer = explore_shape_tracer()
shape_tracer

# %% [markdown]
# <details>
# <summary>Worked answers to the things to try (open once you have tried them)</summary>
#
# 1. With the transpose the (1, 4, 8) input becomes (1, 4, 8), (2, 4, 4),
#    (4, 4, 2) and (8, 4, 1) for $h$ = 1, 2, 4, 8, and at every $h$ block $b$
#    holds only the $d_\text{head} = 8/h$ columns of head $b$, with positions
#    0, 1, 2, 3 down its rows. That is what attention needs: each block is one head's
#    own sequence.
# 2. Without it, at $h = 2$ each block holds both heads' columns and its rows
#    are positions 0, 0, 1, 1; at $h = 4$ block 0 is the whole of position 0,
#    all four heads of it. Attention inside such a block would treat pieces
#    of one position as different tokens, and mix the heads' features. At
#    $h = 1$ the caption shows the same shape, (1, 4, 8), either way, and the
#    blocks agree.
# 3. At $h = 4$ without the transpose, $T = 3$ gives blocks holding positions
#    0, 0, 0 / 0, 1, 1 / 1, 1, 2 / 2, 2, 2, and $T = 5$ gives 0, 0, 0, 0, 1 /
#    1, 1, 1, 2, 2 / … A bare `reshape` cuts the flat memory into equal
#    pieces, so where a block starts depends on $T$; with the transpose each
#    block holds positions 0 to $T - 1$ whatever $T$ is.
#
# </details>

# %% [markdown]
# Then the heads' weights. The second explorer runs a multi-head
# self-attention layer over six positions whose embeddings are random vectors
# (they stand for no word: chapter 09 shows a trained model's heads over real
# sentences) and redraws the per-head heatmaps, on one shared colour scale, as
# you move its controls: the number of heads, which head to show (or all of
# them), causal masking, and the valid length.
#
# * Step the number of heads through 1, 2, 4, 8: the width per head,
#   $d_\text{head} = d_\text{model} / h$ with $d_\text{model} = 16$, shrinks,
#   and the heads' patterns change because each sees fewer features.
# * Show all heads at once, then one: do two heads ever look alike?
# * Turn causal masking on: every head loses its upper triangle at once,
#   because every head gets the same mask.
# * Shorten the valid length: the padding columns go to zero in every head.

# %%
from d2lmini.widgets import explore_multihead

explorer = explore_multihead()
explorer

# %% [markdown]
# <details>
# <summary>Worked answers to the things to try (open once you have tried them)</summary>
#
# 1. The caption gives the width per head: 16 with one head, then 8, 4
#    and 2. With fewer features per head each score is a dot product over
#    fewer coordinates, so the patterns change from one head count to the
#    next; the largest weight of any head is 0.79 with one head and 0.96 to
#    0.98 with two or more.
# 2. Not here. Even the closest pair of heads differs by at least 0.48 in
#    some cell (with 8 heads; 0.61 with 4 and 0.94 with 2). Each head has its
#    own slice of $W_q$ and $W_k$, drawn at random, and nothing here has
#    trained them to agree.
# 3. The upper triangle is 0 in every head (its sum is exactly 0 over all
#    four heads at $h = 4$), and query 0 puts weight 1 on key 0 in each. The
#    layer builds one mask per example, from the valid lengths and the causal
#    flag, and hands that same mask to every head of the example.
# 4. At a valid length of 3 keys 3 to 5 get weight 0 in every head, and
#    every row of every head still sums to 1 over keys 0 to 2.
#
# </details>

# %% [markdown]
# ## One more tool: `torch.einsum`
#
# Exercise 5.5 writes products of tensors with `torch.einsum`, which names
# each axis with a letter instead of moving axes around. Its first argument
# is a string: the letters of each input, separated by commas, then `->` and
# the letters of the output. `"bij,bjk->bik"` says: the first input has axes
# (b, i, j), the second (b, j, k), and the output (b, i, k). The letters
# decide what happens:
#
# * a letter that appears in the inputs but not after the arrow (here `j`) is
#   summed over: entries that share it are multiplied, and the products added;
# * a letter that both inputs share and the output keeps (here `b`) pairs the
#   inputs up index by index, like the examples of a batch;
# * a letter of only one input that the output keeps (here `i` and `k`) is
#   an ordinary axis of the result;
# * the output's axes come in the order its letters are written.
#
# A letter used twice must name axes of the same length (or of length 1,
# which is broadcast). So
# `"bij,bjk->bik"` computes, for every `b`, `i` and `k`, the sum over `j` of
# `x[b, i, j] * y[b, j, k]`: a batched matrix product, what `torch.bmm` and
# `@` compute.

# %%
x = torch.randn(2, 3, 4)  # (b, i, j)
y = torch.randn(2, 4, 5)  # (b, j, k)
product = torch.einsum("bij,bjk->bik", x, y)  # (b, i, k): j summed over
print("einsum('bij,bjk->bik'):", tuple(product.shape))
torch.testing.assert_close(product, torch.bmm(x, y))
torch.testing.assert_close(product, x @ y)
print("equal to torch.bmm(x, y) and to x @ y")

# %% [markdown]
# Because the letters say which axes pair up, no transpose is needed. The
# dot-product scores of chapter 04, `q @ k.transpose(1, 2)`, are one einsum:
# `d` (the features) is summed over, and every query `q` meets every key `k`.

# %%
q, k = torch.randn(2, 3, 4), torch.randn(2, 5, 4)  # (batch, queries, d), (batch, keys, d)
scores = torch.einsum("bqd,bkd->bqk", q, k)  # (batch, queries, keys)
torch.testing.assert_close(scores, q @ k.transpose(1, 2))
print("einsum('bqd,bkd->bqk'):", tuple(scores.shape), "== q @ k.transpose(1, 2)")

# %% [markdown]
# ## Summary
#
# * $h$ heads of width $d_\text{head} = d_\text{model} / h$ each run scaled
#   dot-product attention on their own slice of the projected queries, keys
#   and values; $W_o$ mixes the concatenated results.
# * Folding the heads into the batch (`transpose_qkv`, then `transpose_output`)
#   runs them all in one batched call; valid lengths are repeated per head.
# * The fold needs its permute: a bare `reshape` to (batch·heads, n,
#   $d_\text{head}$) has the right shape but fills each "head" with pieces of
#   several positions.
# * $d_\text{model}$ (`num_hiddens`) must be divisible by $h$: `d2lmini` says so
#   with a ValueError that suggests valid head counts.
# * With the weights copied across (`in_proj_weight` = $[W_q; W_k; W_v]$,
#   `out_proj` = $W_o$) and a `key_padding_mask` from the valid lengths,
#   `nn.MultiheadAttention` returns the same outputs and per-head weights.
# * `torch.einsum` names each axis with a letter: a letter missing from the
#   output is summed over, so `"bij,bjk->bik"` is a batched matrix product.
# * Per-head heatmaps on one colour scale show what each head attends to.

# %% [markdown]
# ## Why? A question to check
#
# **Why does transpose_qkv permute the head axis forward before merging it
# into the batch, instead of one reshape from (batch, n, d_model) to
# (batch·heads, n, d_head)?**

# %%
from d2lmini.exercises import questions

questions.ask("05")


# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 5.1 · Do more heads cost more parameters? (★)
#
# Write `multihead_parameter_count(num_hiddens, num_heads, query_size,
# key_size, value_size, bias)` that returns the number of learnable numbers in
# a `d2l.MultiHeadAttention` with these arguments, from the formula and not by
# building one. Predict first: how does the count change when you double the
# number of heads?

# %% tags=["exercise"]
def multihead_parameter_count(num_hiddens, num_heads, query_size, key_size, value_size, bias):
    """Number of parameters of d2l.MultiHeadAttention(num_hiddens, num_heads, ...)."""
    ### BEGIN SOLUTION
    weights = num_hiddens * (query_size + key_size + value_size + num_hiddens)  # W_q, W_k, W_v, W_o
    biases = 4 * num_hiddens if bias else 0
    return weights + biases
    ### END SOLUTION


# %% tags=["check"]
ch05.check_parameter_count(multihead_parameter_count)


# %% [markdown]
# ### Exercise 5.2 · One head's weights, by hand (★★)
#
# Write `head_weights(mha, X, head)` that returns the self-attention weights of
# head number `head` (counting from 0) for the input `X` (batch, n, d_q) — shape
# (batch, n, n) — computed only from the rows of `mha.W_q.weight` and
# `mha.W_k.weight` that belong to that head, without calling `mha`. It must
# equal `mha.attention_weights[:, head]` after `mha(X, X, X)`.

# %% tags=["exercise"]
def head_weights(mha, X, head):
    """Self-attention weights of one head of a bias-free d2l.MultiHeadAttention, (batch, n, n)."""
    ### BEGIN SOLUTION
    d_head = mha.W_q.weight.shape[0] // mha.num_heads
    rows = slice(head * d_head, (head + 1) * d_head)
    q, k = X @ mha.W_q.weight[rows].T, X @ mha.W_k.weight[rows].T  # (batch, n, d_head)
    return torch.softmax(q @ k.transpose(1, 2) / d_head ** 0.5, dim=-1)
    ### END SOLUTION


# %% tags=["check"]
ch05.check_head_weights(head_weights)

# %% [markdown]
# ### Exercise 5.3 · How much does a head matter? (★★)
#
# A simple test of a head's importance: silence it and see how much the output
# moves. Write `output_without_head(mha, X, head)` that runs self-attention on
# `X` like `mha(X, X, X)`, except that the chosen head's slice of the
# concatenated heads is set to zero before $W_o$. Use the module's own pieces,
# introduced after the check against `d2lmini`:
# `mha.W_q`, `mha.W_k`, `mha.W_v`, `mha.transpose_qkv`, `mha.attention`,
# `mha.transpose_output` and `mha.W_o`. The check then reports, for each head
# of a random layer, how far the output moves without it.

# %% tags=["exercise"]
def output_without_head(mha, X, head):
    """mha(X, X, X) with head number `head` silenced before W_o."""
    ### BEGIN SOLUTION
    q, k, v = (mha.transpose_qkv(layer(X)) for layer in (mha.W_q, mha.W_k, mha.W_v))
    concatenated = mha.transpose_output(mha.attention(q, k, v))  # (batch, n, d_model)
    d_head = concatenated.shape[-1] // mha.num_heads
    concatenated = concatenated.clone()
    concatenated[..., head * d_head:(head + 1) * d_head] = 0
    return mha.W_o(concatenated)
    ### END SOLUTION


# %% tags=["check"]
ch05.check_output_without_head(output_without_head)

# %% [markdown]
# ### Exercise 5.4 · Heads into the batch, from a sequence-first tensor (★★)
#
# Not every layer puts the batch first. `nn.MultiheadAttention` built without
# `batch_first=True` (its default is `False`) takes tensors of shape
# (T, B, d_model): positions first, then the examples. Write
# `split_heads_seq_first(X, num_heads)` that turns such an `X` into the
# (B·num_heads, T, d_head) batch that `transpose_qkv` makes from the
# batch-first tensor, with d_head = d_model / num_heads: row b·num_heads + i
# is head i of example b, and its row t is position t. Use `reshape` and
# `permute` (or `transpose`), not `d2l`'s own helpers, which the check
# switches off. Predict first: can a `reshape` alone turn (T, B, d_model)
# into (B, T, d_model)? The check also runs the typical wrong splits and says
# which one yours is.

# %% tags=["exercise"]
def split_heads_seq_first(X, num_heads):
    """(T, B, d_model) -> (B*num_heads, T, d_head): each head of each example becomes a batch row."""
    ### BEGIN SOLUTION
    T, B, d_model = X.shape
    X = X.reshape(T, B, num_heads, d_model // num_heads)  # (T, B, h, d_head)
    X = X.permute(1, 2, 0, 3)  # (B, h, T, d_head)
    return X.reshape(B * num_heads, T, d_model // num_heads)
    ### END SOLUTION


# %% tags=["check"]
ch05.check_split_heads_seq_first(split_heads_seq_first)

# %% [markdown]
# ### Exercise 5.5 · Multi-head attention in one `einsum` per step (★★★)
#
# Write `einsum_multihead(queries, keys, values, mha)` that reproduces
# `mha(queries, keys, values)` for a `d2l.MultiHeadAttention` built with
# `bias=False`, without `transpose_qkv`: project with `mha.W_q.weight` (and
# the others), `reshape` to (batch, n, heads, d_head), and write the scores
# and the pooling as `torch.einsum` calls with a separate head axis, e.g.
# `"bqhd,bkhd->bhqk"` (`d` runs over a head's features; the section on
# `torch.einsum` before the summary gives the rules). No mask is needed.

# %% tags=["exercise"]
def einsum_multihead(queries, keys, values, mha):
    """mha(queries, keys, values) for a bias-free d2l.MultiHeadAttention, with einsum."""
    ### BEGIN SOLUTION
    h = mha.num_heads
    B, n_q, n_k = queries.shape[0], queries.shape[1], keys.shape[1]
    q = (queries @ mha.W_q.weight.T).reshape(B, n_q, h, -1)  # (B, n_q, h, d_head)
    k = (keys @ mha.W_k.weight.T).reshape(B, n_k, h, -1)  # (B, n_k, h, d_head)
    v = (values @ mha.W_v.weight.T).reshape(B, n_k, h, -1)  # (B, n_k, h, d_head)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / q.shape[-1] ** 0.5  # (B, h, n_q, n_k)
    heads = torch.einsum("bhqk,bkhd->bqhd", torch.softmax(scores, dim=-1), v)  # (B, n_q, h, d_head)
    return heads.reshape(B, n_q, -1) @ mha.W_o.weight.T  # (B, n_q, d_model)
    ### END SOLUTION


# %% tags=["check"]
ch05.check_einsum_multihead(einsum_multihead)

# %% [markdown]
# ## Further reading
#
# * A. Vaswani et al. (2017), "Attention Is All You Need", section 3.2.2:
#   multi-head attention, with $h = 8$ heads of size $d_\text{model}/h = 64$,
#   at the cost of one full-width head.
# * E. Voita, D. Talbot, F. Moiseev, R. Sennrich and I. Titov (2019),
#   "Analyzing Multi-Head Self-Attention: Specialized Heads Do the Heavy
#   Lifting, the Rest Can Be Pruned", and P. Michel, O. Levy and G. Neubig
#   (2019), "Are Sixteen Heads Really Better than One?": what happens when
#   heads are removed, measured (exercise 5.3 in small).
# * The d2l book, section "Multi-Head Attention".
