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
# # 03 · Additive attention
#
# The Gaussian kernel of chapter 01 compared a query with a key by their
# distance, which only makes sense when both are vectors of the same size.
# Often they are not. In a translation model, the query may describe the
# words written so far and each key one word of the source sentence; two
# different parts of the model make them, and nothing forces the two to have
# the same size (chapter 08 builds a small model of this kind). Below, a
# query of size 20 meets keys of size 2.
#
# Unequal sizes alone do not call for a network. One learned matrix placed
# between the query and the key also turns the pair into one number, with
# matrix products only: you design that score in Exercise 3.1, and chapter
# 05's projections accept unequal sizes too. What sets additive
# attention apart is the kind of score it computes: a small learned neural
# network with a non-linear step inside. The network carries the query and
# the key into a shared space, adds them there, bends the sum with $\tanh$,
# and reduces the result to one number. Because of that bend, it can learn
# scores that matrix products alone cannot give.
#
# **In this notebook you will**
# 1. write the additive score $a(q, k) = w_v^\top \tanh(W_q q + W_k k)$ in plain
#    `torch`, scoring every (query, key) pair at once by broadcasting;
# 2. check your version against `d2lmini.AdditiveAttention` and against a
#    slow loop over pairs;
# 3. run the classic toy example and predict its output before you see it;
# 4. see that the "concatenation" form $W_a [q; k]$ is the same function;
# 5. compare additive and dot-product weights, in a heatmap and in an
#    explorer.

# %% [markdown]
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/03_additive_attention.ipynb) opens this chapter's learner edition in Colab. Run the collapsed setup cell below first: on Colab it installs `d2lmini`, this collection's helper package, and leaves the runtime's own packages alone; on a course hub it names any file of yours that an update kept under a new name. Anywhere else it does nothing.

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
from d2lmini.exercises import ch03

device = d2l.try_gpu()

# %% [markdown]
# ## The scoring function
#
# A query $q \in \mathbb{R}^{d_q}$ and a key $k \in \mathbb{R}^{d_k}$ (the sizes
# $d_q$ and $d_k$ may differ) are scored by a small neural network with one
# hidden layer. In plain words, the network works in two stages. First it
# computes $d_h$ intermediate numbers from the query and the key; together
# they are the *hidden layer*, and each one is a *hidden unit* ("hidden"
# because it is neither an input nor the output). Then it combines those
# $d_h$ numbers into the one number it returns, the score:
#
# $$a(q, k) = w_v^\top \tanh\left(W_q\, q + W_k\, k\right),
# \qquad W_q \in \mathbb{R}^{d_h \times d_q},\; W_k \in \mathbb{R}^{d_h \times d_k},\;
# w_v \in \mathbb{R}^{d_h}.$$
#
# $W_q$ and $W_k$ carry the query and the key into the same $d_h$-dimensional
# space, where they can be added; $\tanh$, applied to each entry, squashes
# it into the range $(-1, 1)$ and makes the score non-linear; $w_v$ turns
# the $d_h$ hidden features into one number. All three are learned.
# The hidden size $d_h$ (`num_hiddens` in code) is a free setting, chosen
# when the layer is built: nothing ties it to $d_q$ or $d_k$, and both
# projections share it.
#
# For one pair the formula is three lines of `torch`. Here the query has 5
# features, the key 3, and the hidden layer 8 units. Each random parameter is
# divided by the square root of the size of the vector it multiplies, so that
# each product, a sum of that many terms, stays of size about 1 (chapter 04
# measures why the square root is the right divisor):

# %%
query_size, key_size, num_hiddens = 5, 3, 8
torch.manual_seed(0)  # here, so that running this cell again draws the same numbers
W_q = torch.randn(num_hiddens, query_size) / query_size ** 0.5
W_k = torch.randn(num_hiddens, key_size) / key_size ** 0.5
w_v = torch.randn(num_hiddens) / num_hiddens ** 0.5

q, k = torch.randn(query_size), torch.randn(key_size)
score = w_v @ torch.tanh(W_q @ q + W_k @ k)  # a scalar
print(f"a(q, k) = {score.item():.4f}")

# %% [markdown]
# The same three lines as a picture, each piece with its size: $W_q$
# ($d_h \times d_q$) and $W_k$ ($d_h \times d_k$) carry $q \in \mathbb{R}^{d_q}$
# and $k \in \mathbb{R}^{d_k}$ into $\mathbb{R}^{d_h}$, where they can be added;
# tanh keeps the size $d_h$, and $w_v^\top$ ($1 \times d_h$) leaves a scalar.
# The line at the bottom is the next section: the same steps for a whole
# batch.

# %%
from d2lmini.diagrams import draw_additive_scorer

draw_additive_scorer()

# %% [markdown]
# ## Every pair at once: broadcasting
#
# In a minibatch of $B$ examples, each with $n_q$ queries and $n_k$ keys, we
# have queries of shape $(B, n_q, d_q)$ and keys of shape $(B, n_k, d_k)$, and
# we need a score for each of the $n_q \times n_k$ pairs. Projecting first is
# cheap: each query and each key goes through its matrix once. Then two
# inserted axes of length 1 let broadcasting form all the sums.
# `x.unsqueeze(2)` inserts such an axis at position 2, so for a 3-D `x` it is
# `x[:, :, None]`; `x.unsqueeze(1)` is `x[:, None]`:
#
# $$\underbrace{(B, n_q, 1, d_h)}_{W_q q} + \underbrace{(B, 1, n_k, d_h)}_{W_k k}
# \;\longrightarrow\; (B, n_q, n_k, d_h) \;\xrightarrow{\;w_v^\top \tanh(\cdot)\;}\; (B, n_q, n_k).$$

# %%
def additive_scores(queries, keys, W_q, W_k, w_v):
    """a(q, k) = w_vᵀ tanh(W_q q + W_k k) for every (query, key) pair of a batch."""
    queries = queries @ W_q.T  # (B, n_q, d_h)
    keys = keys @ W_k.T  # (B, n_k, d_h)
    features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))  # (B, n_q, n_k, d_h)
    return features @ w_v  # (B, n_q, n_k)


queries, keys = torch.randn(2, 3, query_size), torch.randn(2, 4, key_size)
print("queries projected and unsqueezed:", tuple((queries @ W_q.T).unsqueeze(2).shape))
print("keys projected and unsqueezed:   ", tuple((keys @ W_k.T).unsqueeze(1).shape))
scores = additive_scores(queries, keys, W_q, W_k, w_v)
print("scores:                          ", tuple(scores.shape))

# %% [markdown]
# Entry `[b, i, j]` must be the one-pair formula applied to query `i` and key `j`
# of example `b`. Check one entry, and check the whole tensor against a slow
# double loop:

# %%
one_pair = w_v @ torch.tanh(W_q @ queries[1, 2] + W_k @ keys[1, 0])
torch.testing.assert_close(scores[1, 2, 0], one_pair)

B, n_q, n_k = scores.shape
looped = torch.zeros(B, n_q, n_k)  # filled one pair at a time
for b in range(B):
    for i in range(n_q):
        for j in range(n_k):
            looped[b, i, j] = w_v @ torch.tanh(W_q @ queries[b, i] + W_k @ keys[b, j])
torch.testing.assert_close(scores, looped)
print("broadcast scores equal the pair-by-pair loop")

# %% [markdown]
# ## From scores to attention
#
# The rest is what chapter 02 built: a masked softmax over the keys turns the
# scores into weights, so that padding keys beyond `valid_lens` get weight 0,
# and a batched matrix product averages the values (each of size $d_v$, which
# need not match $d_q$ or $d_k$ either). `torch.bmm(A, B)` is that product: it
# multiplies two batches of matrices example by example, so entry `b` of its
# result is `A[b] @ B[b]`.
#
# $$\operatorname{attention}(q) = \sum_{j} \alpha(q, k_j)\, v_j,
# \qquad \alpha = \operatorname{masked\_softmax}(a(q, \cdot)).$$

# %%
def additive_attention(queries, keys, values, valid_lens, W_q, W_k, w_v):
    """Additive attention pooling; returns the output and the weights."""
    weights = d2l.masked_softmax(additive_scores(queries, keys, W_q, W_k, w_v), valid_lens)  # (B, n_q, n_k)
    return torch.bmm(weights, values), weights  # (B, n_q, d_v), (B, n_q, n_k)


# %% [markdown]
# ## The classic toy example
#
# Two examples, each with one query of size 20 and ten keys of size 2. Every
# key is the vector (1, 1), and the values are the numbers 0…39 laid out as ten
# rows of four, the same for both examples. The first example may look at its
# first 2 keys, the second at its first 6.
#
# Before running it, predict the attention weights and the two outputs. You
# need neither the query nor the network's parameters: look at the keys.

# %%
queries = torch.normal(0, 1, (2, 1, 20))  # (batch, queries, query_size)
keys = torch.ones((2, 10, 2))  # (batch, keys, key_size)
values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)  # (batch, keys, 4)
valid_lens = torch.tensor([2, 6])

print("value rows of each example:")
print(values[0].numpy())

# %% [markdown]
# Now let `d2lmini` run it, on the GPU if there is one. The layers are built
# with explicit sizes, so their random initial parameters are drawn on the CPU
# and are the same whichever device runs the notebook. The module also has
# **dropout**, a training aid that sets a random share of the attention
# weights to zero and scales the others up to make up for them (chapter 04
# shows it at work); `eval()` switches it off.

# %%
queries, keys, values, valid_lens = (t.to(device) for t in (queries, keys, values, valid_lens))
attention = d2l.AdditiveAttention(num_hiddens=8, dropout=0.1, key_size=2, query_size=20).to(device)
attention.eval()
output = attention(queries, keys, values, valid_lens)

print("weights (one row per example's query):")
print(d2l.numpy(attention.attention_weights[:, 0]).round(3))
print("outputs:")
print(d2l.numpy(output[:, 0]).round(3))
torch.testing.assert_close(output.cpu(), torch.tensor([[[2.0, 3, 4, 5]], [[10.0, 11, 12, 13]]]))

# %% [markdown]
# Ten identical keys get ten identical scores, whatever the query and
# whatever the network's parameters, and a softmax of equal scores is uniform:
# weight 1/2 on each of the two valid keys, 1/6 on each of six, zero on the
# padding. So each output is the plain mean of the valid value rows: rows 0
# and 1 average to [2, 3, 4, 5], rows 0 to 5 to [10, 11, 12, 13].
#
# `d2l.show_weights` prints each weight in its cell and hatches the keys that
# the mask removed (`d2l.attention_mask` turns the valid lengths into that
# mask, True where a query may look), so a masked key cannot be mistaken for a
# key that merely got weight 0:

# %%
mask = d2l.attention_mask(valid_lens, batch_size=2, num_queries=1, num_keys=10)  # (batch, 1, keys)
fig, axes = d2l.plt.subplots(2, 1, figsize=(7, 2.4), layout="constrained")
for b, ax in enumerate(axes):
    d2l.show_weights(attention.attention_weights[b], mask=mask[b], ax=ax, ylabels=["query"],
                     ylabel=f"example {b}", xlabel="Keys" if b == 1 else "", colorbar=False)
_ = fig.colorbar(axes[0].collections[0], ax=axes, label="attention weight", shrink=0.9)

# %% [markdown]
# ## Checking against `d2lmini`
#
# Our two functions should compute what `d2l.AdditiveAttention` computes. Hand
# them the module's own parameters and compare. The module keeps them in
# three `nn.Linear` layers, `attention.W_q`, `attention.W_k` and
# `attention.w_v`. An `nn.Linear` is PyTorch's layer that multiplies its input
# by a learned matrix and then adds a learned vector, its bias, unless it is
# built with `bias=False`. The score $a(q, k)$ has no bias, so the module builds
# all three with `bias=False`: each only multiplies. A layer's `.weight` stores
# its matrix with shape (out, in), exactly the shape of our $W_q$ and $W_k$.
# `w_v` is `nn.Linear(d_h, 1, bias=False)`, so its weight has shape $(1, d_h)$,
# and `[0]` takes its one row, our vector $w_v$. The toy example's identical
# keys would hide a mistake that treats every key alike, so the comparison
# uses random keys. PyTorch has no built-in additive
# attention, so the pair-by-pair loop above is our independent reference.

# %%
random_keys = torch.randn(2, 10, 2).to(device)
output = attention(queries, random_keys, values, valid_lens)
ours, our_weights = additive_attention(queries, random_keys, values, valid_lens,
                                       attention.W_q.weight, attention.W_k.weight, attention.w_v.weight[0])
torch.testing.assert_close(our_weights, attention.attention_weights)
torch.testing.assert_close(ours, output)
print("our additive attention matches d2l.AdditiveAttention")

# %% [markdown]
# ## The concatenation form
#
# Papers often write the additive score as one matrix applied to the query and
# the key stacked into one vector:
#
# $$a(q, k) = w_v^\top \tanh\left(W_a \begin{bmatrix} q \\ k \end{bmatrix}\right),
# \qquad W_a \in \mathbb{R}^{d_h \times (d_q + d_k)}.$$
#
# Split $W_a$ into its first $d_q$ columns and its last $d_k$ columns,
# $W_a = [\,W_q \;\; W_k\,]$. A matrix times a stacked vector is the sum of the
# blocks times the pieces, $W_a [q; k] = W_q q + W_k k$: the two forms are the
# same family of functions, and every $W_a$ gives a $(W_q, W_k)$ pair and back.

# %%
W_a = torch.cat([W_q, W_k], dim=1)  # (d_h, d_q + d_k)
stacked = torch.cat([q, k])  # (d_q + d_k,)
torch.testing.assert_close(W_a @ stacked, W_q @ q + W_k @ k)
torch.testing.assert_close(w_v @ torch.tanh(W_a @ stacked), score)
print("W_a [q; k] equals W_q q + W_k k; shape of W_a:", tuple(W_a.shape))

# %% [markdown]
# Equal functions, unequal costs. The stacked form multiplies a fresh
# $(d_q + d_k)$-vector by $W_a$ for every one of the $n_q \cdot n_k$ pairs;
# the split form projects each query and each key once and only adds per
# pair. Count the arithmetic up to the tanh (one multiply–add or one addition
# counts as one operation) for 50 queries and 50 keys, $d_q = d_k = 64$ and
# $d_h = 32$:

# %%
n_q, n_k, size, d_h = 50, 50, 64, 32  # size: d_q = d_k
stacked_cost = n_q * n_k * d_h * (size + size)  # one (d_h x 2*size) product per pair
split_cost = n_q * d_h * size + n_k * d_h * size + n_q * n_k * d_h  # project once, then add per pair
print(f"stacked: {stacked_cost:,} operations")
print(f"split:   {split_cost:,} operations, {stacked_cost / split_cost:.0f}x fewer")

# %% [markdown]
# That is why implementations (`d2lmini` included) keep $W_q$ and $W_k$
# apart and broadcast.
#
# ## Queries and keys of different sizes
#
# The toy example already scored queries of size 20 against keys of size 2.
# The dot product $q^\top k$ cannot do that: it needs equal sizes. It is the
# score of `d2l.DotProductAttention`, which chapter 04 builds ($q^\top k$
# divided by $\sqrt{d}$, where $d$ is that common size); here it is enough
# that the module refuses our toy inputs, and says why:

# %%
try:
    d2l.DotProductAttention(dropout=0.0)(queries, keys, values)
except ValueError as error:
    print("ValueError:", error)

# %% [markdown]
# `d2l.AdditiveAttention` takes any three sizes: here queries of size 5, keys
# of size 3 and values of size 7.

# %%
mixed = d2l.AdditiveAttention(num_hiddens=8, dropout=0.0, key_size=3, query_size=5).to(device)
mixed_output = mixed(torch.randn(2, 4, 5).to(device), torch.randn(2, 6, 3).to(device),
                     torch.randn(2, 6, 7).to(device), torch.tensor([3, 6]).to(device))
print("output:", tuple(mixed_output.shape), " weights:", tuple(mixed.attention_weights.shape))

# %% [markdown]
# Additive attention is not the only way past the dot product's limit. A
# learned matrix between the query and the key, with no hidden layer and no
# $\tanh$, also scores a query of one size against a key of another
# (Exercise 3.1), and chapter 05's multi-head attention scores queries and
# keys of different sizes with matrix products only. What additive attention
# adds is the network: its $\tanh$ lets it learn scores that no matrix
# product gives, and keeps every score between fixed bounds (the worked
# answers to the Explore section use that).

# %% [markdown]
# ## Additive versus dot-product weights
#
# When keys and queries do have the same size, both scoring functions apply.
# The figure scores 4 queries of size 2 against 10 keys (the second example,
# 6 of them valid) with each function, twice: once with identical keys as in
# the toy example, once with random noise of scale 1 added to the keys. Rows
# are queries, columns are keys, and one colour scale serves all four panels;
# the masked keys 6 to 9 show as the 0 they hold.
#
# Predict before you run the next two cells: with identical keys, do the two
# functions give the same weights? And once the noise makes the keys
# differ?

# %%
pair_queries = torch.randn(2, 4, 2)
identical_keys = torch.ones(2, 10, 2)
noisy_keys = identical_keys + torch.randn(2, 10, 2)
additive = d2l.AdditiveAttention(num_hiddens=8, dropout=0.0, key_size=2, query_size=2).to(device).eval()
dot_product = d2l.DotProductAttention(dropout=0.0).eval()

panels = []
for key_set in (identical_keys, noisy_keys):
    args = (pair_queries.to(device), key_set.to(device), values, valid_lens)
    additive(*args)
    dot_product(*args)
    panels.append(torch.stack([additive.attention_weights[1], dot_product.attention_weights[1]]))
panels = torch.stack(panels).detach().cpu()  # (key sets, scoring functions, queries, keys)

# %%
fig = d2l.show_heatmaps(panels, xlabel="Keys", ylabel="Queries",
                        titles=["additive", "scaled dot product"], figsize=(7, 3.6))
fig.axes[0].set_xticks(range(0, 10, 2))  # the panels share their axes: setting one sets all
fig.axes[0].set_yticks(range(4))
fig.axes[0].set_ylabel("identical keys\nQueries")
fig.axes[2].set_ylabel("noisy keys\nQueries")
d2l.plt.show()

# %% [markdown]
# With identical keys (top row) both panels are flat over the six valid
# keys, 1/6 each: equal keys leave any scoring function nothing to choose
# between. With noisy keys (bottom row) the two functions part ways. The dot
# product favours, for each query, the keys with the largest component along
# it; the untrained additive network is still nearly uniform, and where it
# does prefer a key it need not be the same one. Neither is "right": they are different functions,
# and training decides what each one attends to.
#
# ## Explore
#
# The explorer below redraws the two weightings side by side as you move its
# controls. Things to try:
#
# * Set the key noise to 0: whatever the seed, the panels agree and are flat
#   over the valid keys.
# * Raise the noise slowly. At what scale do the dot-product weights turn into
#   near one-hot rows, nearly all the weight on one key? Do the additive ones
#   ever?
# * Change the seed at a fixed noise: which parts of the pattern stay?
# * Move a valid length down to 1: the one valid key takes all the weight,
#   whichever scoring function and whatever the noise. (A length of 0 would
#   give a row of zeros, `d2lmini`'s policy from chapter 02.)

# %%
from d2lmini.widgets import explore_additive

explorer = explore_additive()
explorer

# %% [markdown]
# <details>
# <summary>Worked answers to the things to try (open once you have tried them)</summary>
#
# 1. With no noise every key is $(1, 1)$, so each query gives all of its
#    valid keys the same score: every weight is $1/2 = 0.5$ in example 0 and
#    $1/6 \approx 0.167$ in example 1, in both panels and for any seed (the
#    seed only draws the noise, which is multiplied by 0).
# 2. It depends on how many keys share a row. In example 0, with two valid
#    keys, some dot-product rows are near one-hot from about noise 1 (the
#    largest weight over seeds 0 to 9 is 0.990 at noise 1); the additive
#    rows there never pass 0.81. In example 1, with six, the dot-product rows
#    get close only at the top of the slider's range: the first weight above
#    0.9 comes at noise 1.55 (seed 8), and the largest, 0.96, at noise 2.
#    They still sharpen much faster than the additive rows: over seeds 0 to 9
#    the mean row maximum (uniform: 0.167) is 0.36 at noise 1 and 0.52 at
#    noise 2 for the dot product; the additive rows are at 0.23 and 0.29 and
#    never exceed 0.39. The dot-product score grows without bound as the keys
#    grow, while the additive one passes through $\tanh$, so it stays
#    within $\pm\sum_i |w_{v,i}|$, which is $\pm 1.81$ for this explorer's
#    $w_v$: over six keys no additive weight can ever exceed
#    $e^{3.62}/(e^{3.62} + 5) \approx 0.88$.
# 3. The hatched columns stay (they come from the valid lengths), and so
#    does the character of each panel. The additive rows of a panel look
#    alike: at noise 1, for every seed from 0 to 9, all four queries of
#    example 1 pick the same key, and no two of its rows differ by more than
#    0.041. Where $\tanh$ is close to linear,
#    $w_v^\top \tanh(W_q q + W_k k) \approx w_v^\top W_q q + w_v^\top W_k k$;
#    the first term is the same for every key and cancels in the softmax, so
#    the key with the largest $w_v^\top W_k k$ wins for every query (it names
#    the winner for all ten seeds). The dot-product rows differ from one
#    another, since each query has its own direction. Which key wins changes
#    with the seed, because the noise alone makes the keys different.
# 4. A row with one valid key is a softmax over one score, so that key gets
#    weight 1 (1.000 in both panels) and the output is exactly its value.
#
# </details>

# %% [markdown]
# ## Summary
#
# * Additive attention scores a pair with a small learned network with one
#   hidden layer and a non-linear step,
#   $a(q, k) = w_v^\top \tanh(W_q q + W_k k)$. Queries and keys may have
#   different sizes $d_q$ and $d_k$; a learned matrix between them handles
#   unequal sizes too, with matrix products only (Exercise 3.1). The hidden
#   size $d_h$ is a free setting that both projections share.
# * Projecting first and broadcasting $(B, n_q, 1, d_h) + (B, 1, n_k, d_h)$
#   scores every pair at once; a masked softmax and `torch.bmm` finish the
#   pooling.
# * Identical keys get identical scores, hence uniform weights over the valid
#   keys: the toy example returns the means [2, 3, 4, 5] and [10, 11, 12, 13].
# * $W_a [q; k] = W_q q + W_k k$ with $W_a = [W_q \; W_k]$: the concatenation form
#   is the same function. Computed as written, with one product for every
#   pair, it costs more arithmetic than projecting each query and each key
#   once and broadcasting, as soon as there are several of each (the count
#   above).
# * `d2l.AdditiveAttention` equals the from-scratch version given the same
#   parameters.
# * With identical keys, additive and dot-product attention give the same
#   uniform weights; with noisy keys they part ways.

# %% [markdown]
# ## Why? A question to check
#
# **In the toy example all ten keys are (1, 1). Why are the weights uniform
# over the valid keys, whatever the query and whatever the network's
# parameters?**

# %%
from d2lmini.exercises import questions

questions.ask("03")


# %% [markdown]
# ## Matrix products, before the exercises
#
# Exercise 3.1 asks you to build a score from matrix products only. Three
# facts are all it needs.
#
# * A matrix with $m$ rows and $n$ columns times a vector of size $n$ gives a
#   vector of size $m$: entry $i$ of $A x$ is $\sum_j A_{ij} x_j$. So a matrix
#   can turn a vector of one size into a vector of another, as $W_k k$ did
#   above.
# * Two vectors of the same size give one number, their dot product
#   $u^\top x = \sum_i u_i x_i$. Vectors of different sizes have none.
# * The identity matrix $I$ (`torch.eye`), ones on its diagonal and zeros
#   elsewhere, leaves every vector as it is: $I x = x$.
#
# In `torch`, `@` multiplies. A batch, a 3-D tensor, times a 2-D matrix
# multiplies every matrix of the batch by that same matrix; two batches are
# multiplied example by example, as `torch.bmm` did above. `.transpose(1, 2)`
# swaps a batch's last two axes. Check each printed shape against these
# rules:

# %%
A, x = torch.randn(4, 3), torch.randn(3)  # A: 4 rows, 3 columns
X, Y = torch.randn(2, 5, 4), torch.randn(2, 6, 3)  # batches of 2 matrices, (5, 4) and (6, 3)
print("A @ x:            ", tuple((A @ x).shape))
print("X @ A:            ", tuple((X @ A).shape))
print("Y.transpose(1, 2):", tuple(Y.transpose(1, 2).shape))
print("torch.eye(3) @ x equals x:", torch.equal(torch.eye(3) @ x, x))

# %% [markdown]
# ## Exercises
#
# Fill in the body of each function below, then run the check cell below
# it.

# %% [markdown]
# ### Exercise 3.1 · A score from matrix products only (★)
#
# Additive attention uses a hidden layer and a $\tanh$ to score a query of
# size $d_q$ against a key of size $d_k$. Matrix products alone can do it
# too, as the chapter said; here you find out how. Design a score $a(q, k)$
# that
#
# * uses one learnable matrix $W$ of shape $(d_q, d_k)$ and matrix products
#   only: no hidden layer, no $\tanh$;
# * gives one number for each (query, key) pair;
# * is the plain dot product $q^\top k$ when $d_q = d_k$ and $W = I$.
#
# Then write `matrix_scores(queries, keys, W)` for a batch: queries
# $(B, n_q, d_q)$ and keys $(B, n_k, d_k)$ in, scores $(B, n_q, n_k)$ out,
# using `@` or `torch.bmm` (no loops).

# %% tags=["exercise"]
def matrix_scores(queries, keys, W):
    """One score per (query, key) pair from matrix products with W (d_q, d_k): shape (B, n_q, n_k)."""
    ### BEGIN SOLUTION
    return queries @ W @ keys.transpose(1, 2)
    ### END SOLUTION


# %% tags=["check"]
ch03.check_bilinear_scores(matrix_scores)

# %% [markdown]
# ### Exercise 3.2 · Put a number on the gap (★)
#
# The comparison figure showed the two weightings side by side. Write
# `weight_gap(additive, queries, keys, values, valid_lens)`: run the given
# `d2l.AdditiveAttention` module and a `d2l.DotProductAttention` (no dropout)
# on the same inputs and return the largest absolute difference between their
# attention weights, as a 0-d tensor.
#
# The check runs it on two cases like the figure's, identical keys and random
# keys, and on a third: queries that all point along $(1, 0)$, and keys $(1, t_j)$
# with eight different numbers $t_j$, so that no two keys are equal. Before
# running it, predict the third gap. Is it zero? Is either of the two
# weightings uniform there, and why?

# %% tags=["exercise"]
def weight_gap(additive, queries, keys, values, valid_lens):
    """Largest |additive weight - dot-product weight| over all queries and keys."""
    ### BEGIN SOLUTION
    additive(queries, keys, values, valid_lens)
    dot_product = d2l.DotProductAttention(dropout=0.0)
    dot_product(queries, keys, values, valid_lens)
    return (additive.attention_weights - dot_product.attention_weights).abs().max()
    ### END SOLUTION


# %% tags=["check"]
ch03.check_weight_gap(weight_gap)

# %% [markdown]
# ### Exercise 3.3 · The concatenation form, batched (★★)
#
# Write `concat_scores(queries, keys, W_a, w_v)` that computes
# $w_v^\top \tanh(W_a [q; k])$ for every (query, key) pair, with the query
# first in the stacked vector. `queries` is $(B, n_q, d_q)$, `keys` is
# $(B, n_k, d_k)$, `W_a` is $(d_h, d_q + d_k)$ and `w_v` is $(d_h,)$; return
# the scores, $(B, n_q, n_k)$. Build the stacked pairs explicitly: after
# `unsqueeze`, as in `additive_scores`, `expand` both tensors to
# $(B, n_q, n_k, \cdot)$, then `torch.cat` them. (`expand` repeats an axis of
# length 1 to the length you give, without copying; `-1` keeps an axis as it
# is.) The point is to see the stacked form work, not to be fast.

# %% tags=["exercise"]
def concat_scores(queries, keys, W_a, w_v):
    """Scores w_vᵀ tanh(W_a [q; k]) for every (query, key) pair, shape (B, n_q, n_k)."""
    ### BEGIN SOLUTION
    B, n_q, n_k = queries.shape[0], queries.shape[1], keys.shape[1]
    pairs = torch.cat([queries.unsqueeze(2).expand(B, n_q, n_k, -1),
                       keys.unsqueeze(1).expand(B, n_q, n_k, -1)], dim=-1)  # (B, n_q, n_k, d_q + d_k)
    return torch.tanh(pairs @ W_a.T) @ w_v
    ### END SOLUTION


# %% tags=["check"]
ch03.check_concat_scores(concat_scores)

# %% [markdown]
# ## Further reading
#
# * D. Bahdanau, K. Cho and Y. Bengio (2014), "Neural Machine Translation by
#   Jointly Learning to Align and Translate" (arXiv:1409.0473): the additive
#   score, introduced so that a translation model, as it writes each word,
#   can look back at every word of the source sentence. Chapter 08 trains a
#   small model of this kind.
# * M.-T. Luong, H. Pham and C. D. Manning (2015), "Effective Approaches to
#   Attention-based Neural Machine Translation": the additive score measured
#   against the dot product and against a score built from one matrix, which
#   they call "general".
# * The d2l book, section "Attention Scoring Functions".
