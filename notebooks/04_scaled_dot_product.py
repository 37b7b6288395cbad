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
# # 04 · Scaled dot-product attention
#
# Additive attention (chapter 03) runs a small network for every
# (query, key) pair. When queries and keys have the same size there is a much
# cheaper score: their dot product. It needs no parameters at all, and a whole
# batch of scores is a single matrix product. The one subtlety is a division by
# $\sqrt{d}$, and this notebook measures why it is there.
#
# **In this notebook you will**
# 1. write $\operatorname{softmax}(QK^\top/\sqrt{d})\,V$ with `torch.bmm`;
# 2. check it against `d2lmini.DotProductAttention` and PyTorch's
#    `scaled_dot_product_attention`, with and without masks;
# 3. measure the variance of $q^\top k$ as $d$ grows, with and without the
#    scale, and what an unscaled softmax does to the weights and to the
#    gradients that flow back through it;
# 4. run causal self-attention on two short sentences that share a word;
# 5. explore dimension, scale, temperature and masks with sliders.

# %% [markdown]
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/04_scaled_dot_product.ipynb) opens this chapter's learner edition in Colab. Run the collapsed setup cell below first: on Colab it installs `d2lmini`, this collection's helper package, and leaves the runtime's own packages alone; on a course hub it names any file of yours that an update kept under a new name. Anywhere else it does nothing.

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
import math

import torch
import torch.nn.functional as F

import d2lmini as d2l
from d2lmini.exercises import ch04

device = d2l.try_gpu()

# %% [markdown]
# ## The score and its batched form
#
# For a query and a key of the same size $d$,
#
# $$a(q, k) = \frac{q^\top k}{\sqrt{d}} .$$
#
# Stack the $n_q$ queries of an example as the rows of a matrix
# $\mathbf{Q} \in \mathbb{R}^{n_q \times d}$, the $n_k$ keys as
# $\mathbf{K} \in \mathbb{R}^{n_k \times d}$ and the values, of size $d_v$, as
# $\mathbf{V} \in \mathbb{R}^{n_k \times d_v}$. All $n_q \cdot n_k$ scores are then
# one matrix product, and the pooling another:
#
# $$\operatorname{softmax}\!\left(\frac{\mathbf{Q}\mathbf{K}^\top}{\sqrt{d}}\right)\mathbf{V}
# \in \mathbb{R}^{n_q \times d_v}.$$
#
# `torch.bmm` does one such product per example of the batch. Padding keys are
# handled by the masked softmax of chapter 02.

# %%
def scaled_dot_product(queries, keys, values, valid_lens=None):
    """softmax(Q Kᵀ / √d) V per example; returns the output and the weights."""
    d = queries.shape[-1]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n_q, d) @ (B, d, n_k) -> (B, n_q, n_k)
    weights = d2l.masked_softmax(scores, valid_lens)  # (B, n_q, n_k)
    return torch.bmm(weights, values), weights  # (B, n_q, n_k) @ (B, n_k, d_v) -> (B, n_q, d_v)


torch.manual_seed(0)  # here, so that running this cell again draws the same numbers
queries = torch.randn(2, 3, 8).to(device)  # (batch, queries, d)
keys = torch.randn(2, 5, 8).to(device)  # (batch, keys, d)
values = torch.randn(2, 5, 4).to(device)  # (batch, keys, d_v)
valid_lens = torch.tensor([2, 4]).to(device)

output, weights = scaled_dot_product(queries, keys, values, valid_lens)
print("output:", tuple(output.shape), " weights:", tuple(weights.shape))
print("weights of example 0 (2 valid keys):")
print(d2l.numpy(weights[0]).round(3))

# %% [markdown]
# ## Checking against `d2lmini` and PyTorch
#
# `d2l.DotProductAttention` computes the same thing, with dropout on the
# weights during training. PyTorch ships the operation as
# `torch.nn.functional.scaled_dot_product_attention` (SDPA). SDPA does not take
# lengths; it takes a boolean `attn_mask` that is `True` where a query may look
# at a key. One length per example gives a mask of shape (batch, 1, keys),
# which broadcasts over the queries.

# %%
attention = d2l.DotProductAttention(dropout=0.0)
package_output = attention(queries, keys, values, valid_lens)

key_positions = torch.arange(keys.shape[1], device=device)
allowed = key_positions < valid_lens[:, None, None]  # (batch, 1, keys), True = may attend
sdpa_output = F.scaled_dot_product_attention(queries, keys, values, attn_mask=allowed)

torch.testing.assert_close(package_output, output)
torch.testing.assert_close(attention.attention_weights, weights)
torch.testing.assert_close(sdpa_output, output)
print("ours == d2l.DotProductAttention == F.scaled_dot_product_attention (1-D valid lengths)")

# %% [markdown]
# The same holds with one length per query (a (batch, queries) tensor of
# lengths, a (batch, queries, keys) mask) and with no mask at all:

# %%
per_query_lens = torch.tensor([[1, 3, 5], [2, 2, 4]]).to(device)
allowed = key_positions < per_query_lens[:, :, None]  # (batch, queries, keys)
torch.testing.assert_close(attention(queries, keys, values, per_query_lens),
                           F.scaled_dot_product_attention(queries, keys, values, attn_mask=allowed))
torch.testing.assert_close(attention(queries, keys, values),
                           F.scaled_dot_product_attention(queries, keys, values))
print("also equal with 2-D valid lengths and with no mask")

# %% [markdown]
# **Dropout.** During training, `DotProductAttention` sets each weight to 0
# with probability $p$, its `dropout` argument (and scales the others by
# $1/(1-p)$, which keeps their expected value), so two calls give two answers;
# in evaluation mode dropout is off. SDPA's counterpart is its
# `dropout_p` argument, which we left at 0.

# %%
noisy = d2l.DotProductAttention(dropout=0.5)
noisy.train()
print("train mode, two calls equal:", torch.equal(noisy(queries, keys, values), noisy(queries, keys, values)))
noisy.eval()
print("eval mode, two calls equal: ", torch.equal(noisy(queries, keys, values), noisy(queries, keys, values)))

# %% [markdown]
# ## Why divide by $\sqrt{d}$? The variance, measured
#
# Three words first. The **mean** $\mathbb{E}[x]$ of a random number $x$ is
# its average over many draws, and its **variance** is the mean of its squared
# distance from that mean, which is $\mathbb{E}[x^2]$ when the mean is 0. Two
# random numbers are **independent** when knowing one tells nothing about the
# other: then the mean of their product is the product of their means, and
# the variance of their sum is the sum of their variances.
#
# Suppose the coordinates of $q$ and $k$ are independent, with mean 0 and
# variance 1. Each product $q_i k_i$ then has mean 0 and variance
# $\mathbb{E}[q_i^2 k_i^2] = \mathbb{E}[q_i^2]\,\mathbb{E}[k_i^2] = 1$, and the
# $d$ products are independent, so
#
# $$\operatorname{Var}(q^\top k) = \sum_{i=1}^{d} \operatorname{Var}(q_i k_i) = d,
# \qquad \operatorname{Var}\!\left(\frac{q^\top k}{\sqrt{d}}\right) = 1 .$$
#
# Let us check it on 2,000 random pairs per dimension. These are
# measurements rather than model code, so they run on the CPU in float64
# (drawn in float32, which is faster), which makes the printed digits the
# same on every machine.

# %%
generator = torch.Generator().manual_seed(0)
dims = [2 ** i for i in range(11)]  # 1, 2, 4, ..., 1024
num_pairs = 2000
unscaled_var, scaled_var = [], []
for d in dims:
    q = torch.randn(num_pairs, d, generator=generator).double()
    k = torch.randn(num_pairs, d, generator=generator).double()
    dots = (q * k).sum(dim=1)  # (num_pairs,): one qᵀk per pair
    unscaled_var.append(dots.var().item())
    scaled_var.append((dots / math.sqrt(d)).var().item())

print(f"{'d':>5} {'Var(qᵀk)':>10} {'Var(qᵀk/√d)':>12}")
for d, unscaled, scaled in list(zip(dims, unscaled_var, scaled_var))[::2]:
    print(f"{d:>5} {unscaled:>10.1f} {scaled:>12.2f}")

# %%
fig, ax = d2l.plt.subplots(figsize=(4.5, 3))
ax.loglog(dims, unscaled_var, "o-", label="qᵀk")
ax.loglog(dims, scaled_var, "s-", label="qᵀk / √d")
ax.loglog(dims, dims, "k:", label="d (theory)")
ax.set_xlabel("dimension d")
ax.set_ylabel("empirical variance")
ax.legend()
d2l.plt.show()

# %% [markdown]
# The unscaled variance sits on the line $y = d$, the scaled one stays near 1
# at every $d$. Without the scale, the scores' standard deviation, the typical
# distance of a score from 0, is $\sqrt{d}$: about 32 at $d = 1024$
# ($\sqrt{981.5} \approx 31$ measured).
#
# ## What large scores do to the softmax, and to learning
#
# Softmax turns differences of scores into ratios of weights,
# $e^{s_i - s_j}$. When the scores spread over tens of units, the largest one
# takes nearly all the weight: the softmax **saturates**. The usual textbook
# story goes one step further: a saturated softmax has tiny gradients, so
# without the scale, learning would stall. The paper that introduced the
# scale (Vaswani et al., 2017, "Attention Is All You Need") gives this
# reason, as a suspicion in one sentence. We test the story
# here.
#
# We draw 300 queries, each with 10 keys of its own, and compute each
# query's row of weights with and without the scale. We measure three
# things, at every $d$.
#
# 1. **How peaked the weights are**, to see whether the softmax saturates:
#    the largest weight in a row (1 means one-hot: all the weight on one key)
#    and the entropy of the row's weights $\alpha_j$,
#    $-\sum_j \alpha_j \log \alpha_j$ (0 means one-hot; uniform over 10 keys
#    gives $\log 10 \approx 2.30$).
# 2. **The gradient at the scores $s$**, the one the textbook story is
#    about. A gradient needs a loss. We take one that depends on every
#    weight, $L = \sum_j g_j \alpha_j$ with fixed random numbers $g_j$: no real
#    task, a stand-in for whatever loss training would use. PyTorch's
#    automatic differentiation (autograd, `.backward()`) computes the gradient.
# 3. **The gradient at the query $q$**, one step further back. Training does
#    not set the scores directly: it changes the learned weights that produce
#    $q$ (the projections of the next section). The gradient of those
#    weights is computed from the gradient at $q$, so this is one that
#    learning receives (the keys' projections learn through the gradient at
#    $k$, which behaves alike; here the keys are fixed).
#
# A gradient is a vector per row; we report its length (norm), one number
# per query, and take the mean over the 300 rows. For the gradient at $q$
# we also report the **median**, the row in the middle once the rows are
# sorted by that length. The two tell different things: if a few rows got
# large gradients and most got none, the mean could still look healthy, but
# the median would be near 0.

# %% [markdown]
# **Deeper (you may skip this).** The two gradients in formulas. For
# $\alpha = \operatorname{softmax}(s)$, $\partial \alpha_i / \partial s_j =
# \alpha_i(\delta_{ij} - \alpha_j)$, with $\delta_{ij} = 1$ when $i = j$ and 0
# otherwise: the Jacobian is
# $J = \operatorname{diag}(\alpha) - \alpha\alpha^\top$ (symmetric), so
# $\partial L / \partial s = J\, \partial L / \partial \alpha = J g$. A one-hot
# $\alpha$ makes $J = 0$: a saturated softmax passes almost nothing back to
# its scores. One step further, $s_j = q^\top k_j$ (unscaled) gives
# $\partial L / \partial q = \sum_j (\partial L / \partial s_j)\, k_j$: the
# gradient at the scores, weighted by the keys, whose lengths $\lVert k_j\rVert$
# grow like $\sqrt{d}$. Scaled, $s_j = q^\top k_j / \sqrt{d}$ adds a factor
# $1/\sqrt{d}$ that cancels that growth. And $Jg$ is far from 0 only when a
# second weight of the row is far from 0, that is when the row's two largest
# scores lie within a few units of each other. Unscaled, the gaps between
# scores grow like $\sqrt{d}$ along with the scores, so fewer and fewer rows
# have such a near tie: that is why the gradient at $q$ ends up concentrated
# on a few rows. The share of such rows tends to fall like $1/\sqrt{d}$,
# while the gradient at $q$ of a row that has one grows like
# $\lVert k_j\rVert$, that is like $\sqrt{d}$: the two roughly cancel, so the
# mean over the rows levels off instead of growing or vanishing.

# %% [markdown]
# The code below measures all of this. One line needs a word. After
# `.backward()`, autograd stores a gradient in `.grad` only for the tensors we
# marked with `requires_grad_()`, here `q`. The scores are computed from
# `q`: autograd uses their gradient on its way back to `q`, then drops it.
# `scores.retain_grad()` asks it to keep that gradient, in `scores.grad`, so
# that we can measure it.
#
# The last two lines of the output look at how the gradient at $q$ is spread
# over the rows at $d = 1024$. They sort the 300 rows by its length and give
# two shares: the share of the rows that get almost nothing (less than
# 0.01), and the share of the total that the tenth of the rows with the
# largest gradients carries. If every row got the same, that tenth would
# carry 10%.

# %%
def softmax_statistics(q, k, scale, g):
    """Softmax over q·k·scale: mean max weight, mean entropy, mean gradient norms at s and at q, median at q,
    and the gradient norm at q of every row."""
    q = q.detach().requires_grad_()  # (rows, 1, d)
    scores = (q @ k.transpose(1, 2)).squeeze(1) * scale  # (rows, keys)
    scores.retain_grad()  # keep ∂L/∂s in scores.grad (see above)
    weights = torch.softmax(scores, dim=-1)  # (rows, keys)
    (weights * g).sum().backward()  # L = Σ g · α, so ∂L/∂α = g
    entropy = torch.special.entr(weights).sum(dim=-1)  # -Σ α log α, with 0 log 0 = 0
    at_q = q.grad.squeeze(1).norm(dim=-1)  # (rows,)
    return (weights.max(dim=-1).values.mean().item(), entropy.mean().item(),
            scores.grad.norm(dim=-1).mean().item(), at_q.mean().item(), at_q.median().item(), at_q)


num_rows, num_keys = 300, 10
g = torch.randn(num_rows, num_keys, generator=generator).double()
stats = {"unscaled": [], "scaled": []}
for d in dims:
    q = torch.randn(num_rows, 1, d, generator=generator).double()
    k = torch.randn(num_rows, num_keys, d, generator=generator).double()
    stats["unscaled"].append(softmax_statistics(q, k, 1.0, g))
    stats["scaled"].append(softmax_statistics(q, k, 1 / math.sqrt(d), g))


def print_table(title, columns, labels, digits):
    """One row per second dimension: the chosen columns of stats, unscaled | scaled."""
    width = 9 * len(columns) - 1
    print(f"{title}\n{'':>5} | {'unscaled':^{width}} | {'scaled by 1/√d':^{width}}")
    print(f"{'d':>5} | " + " | ".join([" ".join(f"{label:>8}" for label in labels)] * 2))
    for i in range(0, len(dims), 2):
        cells = [" ".join(f"{stats[name][i][c]:>8.{digits}f}" for c in columns) for name in stats]
        print(f"{dims[i]:>5} | " + " | ".join(cells))


print_table("The weights", [0, 1], ["max α", "entropy"], 3)
print()
print_table("The gradients (norm per row)", [2, 3, 4], ["at s", "at q", "q median"], 4)
print()
for name, rows in stats.items():
    at_q = rows[-1][5].sort(descending=True).values  # d = 1024, largest gradient first
    print(f"{name}, d = 1024: {(at_q < 0.01).double().mean():.0%} of the rows get a gradient at q below 0.01; "
          f"the tenth of the rows with the largest carries {at_q[:num_rows // 10].sum() / at_q.sum():.0%} of the total")

# %%
fig, axes = d2l.plt.subplots(2, 2, figsize=(8, 5), sharex=True)
for name, style in (("unscaled", "o-"), ("scaled", "s-")):
    label = name if name == "unscaled" else "scaled by 1/√d"
    columns = list(zip(*stats[name]))  # max α, entropy, gradient at s, at q, median at q
    for ax, column in zip(axes.flat, columns[:4]):
        line, = ax.semilogx(dims, column, style, label=label)
    axes[1, 1].semilogx(dims, columns[4], "--", color=line.get_color(), label=f"{label}, median")
titles = ["mean max weight", "mean row entropy", "gradient at the scores s (mean norm)",
          "gradient at the query q (mean norm; dashed: median)"]
for ax, title in zip(axes.flat, titles):
    ax.set_title(title, fontsize=10)
for ax in axes[1]:
    ax.set_xlabel("dimension d")
axes[0, 1].axhline(math.log(num_keys), color="k", linestyle=":", label="uniform (log 10)")
axes[0, 1].legend(fontsize=8)
axes[1, 1].legend(fontsize=8)
fig.tight_layout()
d2l.plt.show()

# %% [markdown]
# Unscaled, the rows become nearly one-hot as $d$ grows: at $d = 1024$ the
# largest weight is 0.963 on average and the entropy 0.086. The softmax
# saturates. Now the gradients, in the order we measured them:
#
# * **At the scores**, the textbook story holds. The gradient shrinks, from
#   0.31 at $d = 1$ to 0.04 at $d = 1024$: a saturated softmax barely
#   responds to a small change of its scores.
# * **At the query**, the mean does not shrink. It grows at first, from 0.22
#   at $d = 1$ to 1.20 at $d = 64$, then nearly levels off: 1.27 at
#   $d = 256$ and 1.36 at $d = 1024$. (The plot shows dips between: a mean of
#   numbers this uneven, over 300 rows, is itself noisy.) Two effects meet in
#   the step from $s$ to $q$. Each unit of score passes back less: from
#   $d = 64$ on, the gradient at the scores about halves each time $d$ grows
#   fourfold, like $1/\sqrt{d}$. But moving $q$ changes each score $q^\top k$
#   in proportion to the key's length, about $\sqrt{d}$, which doubles each
#   time $d$ grows fourfold. The two about cancel.
# * **The median row** shows what the mean hides. At $d = 1024$ it gets
#   0.0000. The last two printed lines say how uneven the spread is: 69% of
#   the rows get less than 0.01, and the tenth of the rows with the largest
#   gradients carries 90% of the total, not 10%. Most queries pass almost
#   nothing back to the weights that produce them, and a few pass a lot.
#
# Scaled by $1/\sqrt{d}$, every curve is flat from $d = 4$ on (at $d = 1$ the
# scale is 1, so the two runs are the same): the rows stay as spread at
# $d = 1024$ as at $d = 4$, and the gradient at $q$ has about the same mean
# and median at every $d$ (means 0.30 to 0.33 and medians 0.26 to 0.31). It
# stays spread over the rows: at $d = 1024$ no row gets less than 0.01, and
# the tenth of the rows with the largest gradients carries 19% of the total.
#
# **How this fits the textbook story.** The story says: without the scale,
# the softmax saturates and its gradients vanish. The first half is what we
# measured. The second half holds at the scores. But the weights that learn
# sit behind the query, and there the mean gradient does not vanish: it
# gathers in the few rows whose two largest scores happen to lie close
# together (the Deeper note above says why). So, in this measurement, the
# scale does not rescue a vanishing average. It keeps the gradient spread
# over all the queries, at a size that does not change with $d$, so that
# every query, not only a few, passes a gradient back to the weights that
# produce it.
#
# ## Causal self-attention on two sentences
#
# In **self-attention**, queries, keys and values all come from the same
# sequence $X$ (one row per token), through three projections, matrices
# that map each token's features to a query, a key and a value:
# $Q = X W_q^\top$, $K = X W_k^\top$, $V = X W_v^\top$. A language model that
# reads left to right (one that predicts each next token from the tokens
# before it) must not let a token look at the tokens after it: it
# needs the causal mask of chapter 02 ([Masked softmax](02_masked_softmax.ipynb)),
# in which query $i$ sees keys $0, \dots, i$, given as the valid lengths
# $1, 2, \dots, n$ of `d2l.causal_valid_lens`.
#
# Take the sentences "It took one minute." and "The size was minute.": the
# same token, *minute*, is a unit of time in one and means *tiny* in the other.
# Its embedding, the vector of numbers that stands for the token, is the same
# in both; only the context can tell them apart.
#
# To keep every number readable we give each word a hand-made 6-feature
# embedding instead of a learned one (features: time, smallness, number,
# verb, function word, end of sentence), and pick the projections by hand:
# $W_q = W_k = 2I$ (a dot product of features, sharpened) and $W_v = I$ (each
# token passes on its own features). A trained model learns all of these.

# %%
features = ["time", "small", "number", "verb", "function", "end"]
embedding = {  # one row per word, one column per feature
    "it": [0, 0, 0, 0, 1, 0], "took": [1, 0, 0, 1, 0, 0], "one": [0, 0, 1, 0, 0, 0],
    "minute": [1, 1, 0, 0, 0, 0], ".": [0, 0, 0, 0, 0, 1], "the": [0, 0, 0, 0, 1, 0],
    "size": [0, 1, 0, 0, 0, 0], "was": [0, 0, 0, 1, 0, 0],
}
sentences = [["it", "took", "one", "minute", "."], ["the", "size", "was", "minute", "."]]
X = torch.tensor([[embedding[word] for word in sentence] for sentence in sentences],
                 dtype=torch.float32).to(device)  # (batch=2, tokens=5, features=6)
W_q = W_k = 2 * torch.eye(6, device=device)
W_v = torch.eye(6, device=device)

queries, keys, values = X @ W_q.T, X @ W_k.T, X @ W_v.T  # each (2, 5, 6)
causal_lens = d2l.causal_valid_lens(batch_size=2, num_queries=5, device=device)
print("causal valid lengths:", causal_lens.cpu().tolist())

self_attention = d2l.DotProductAttention(dropout=0.0)
contextual = self_attention(queries, keys, values, causal_lens)  # (2, 5, 6)
self_attention_weights = self_attention.attention_weights  # (2, 5, 5)

# %% [markdown]
# With these lengths `DotProductAttention` gives what PyTorch's SDPA gives with
# `is_causal=True`:

# %%
torch.testing.assert_close(contextual, F.scaled_dot_product_attention(queries, keys, values, is_causal=True))
print("DotProductAttention with causal_valid_lens == SDPA(is_causal=True)")

# %% [markdown]
# Rows are queries and columns are keys, labelled by their tokens; both
# heatmaps use the colour scale 0 to 1.

# %%
for sentence, sentence_weights in zip(sentences, self_attention_weights):
    fig = d2l.show_heatmaps(sentence_weights, xlabel="Keys", ylabel="Queries", figsize=(3.2, 2.8),
                            vmin=0, vmax=1)
    ax = fig.axes[0]
    ax.set_xticks(range(5), sentence, rotation=45)
    ax.set_yticks(range(5), sentence)
    ax.set_title(" ".join(sentence))
d2l.plt.show()

# %% [markdown]
# The upper triangle is empty: no token sees the future. The row of *minute*
# is printed below, in both sentences. Most of its weight, 0.79, stays on
# *minute* itself, which shares two features with itself and at most one with
# any other token. The rest goes mainly to the one earlier token that shares
# a feature: 0.15 to *took* (time) in the first sentence, 0.15 to *size*
# (smallness) in the second. That share is enough to make the same input
# vector leave the layer as two different vectors, the outputs printed
# under the weights:

# %%
minute = 3  # position of "minute" in both sentences
torch.testing.assert_close(X[0, minute], X[1, minute])  # identical input
print("weights of the query 'minute' over the keys:")
for sentence, row in zip(sentences, self_attention_weights[:, minute]):
    print("  " + "  ".join(f"{word} {weight:.2f}" for word, weight in zip(sentence, d2l.numpy(row))))
print("\noutput of 'minute':")
print(f"{'':>22}" + "".join(f"{name:>9}" for name in features))
for sentence, row in zip(sentences, contextual[:, minute]):
    print(f"{' '.join(sentence[:minute + 1]):>22}" + "".join(f"{value:>9.2f}" for value in d2l.numpy(row)))

# %% [markdown]
# After "it took one", *minute* carries more *time* than *small* (0.94
# against 0.79); after "the size was", the balance flips. That is the point
# of self-attention: a token's output is a mixture of the tokens it can see,
# so its representation depends on its context.
#
# ## Scaled versus unscaled weights, as a heatmap
#
# Back to random vectors: 6 queries and 8 keys of dimension 64, weighted with
# and without the $1/\sqrt{d}$ scale, on one colour scale. The entropy of each
# row is printed below the figure (log 8 ≈ 2.08 would be uniform).

# %%
q64 = torch.randn(1, 6, 64, generator=generator).to(device)
k64 = torch.randn(1, 8, 64, generator=generator).to(device)
unscaled_weights = torch.softmax(torch.bmm(q64, k64.transpose(1, 2)), dim=-1)  # (1, 6, 8)
scaled_weights = torch.softmax(torch.bmm(q64, k64.transpose(1, 2)) / math.sqrt(64), dim=-1)  # (1, 6, 8)
panels = torch.cat([unscaled_weights, scaled_weights]).cpu()  # (2, 6, 8)

fig = d2l.show_heatmaps(panels, xlabel="Keys", ylabel="Queries",
                        titles=["unscaled qᵀk", "scaled qᵀk / √64"], figsize=(6, 2.6))
d2l.plt.show()
for title, panel in zip(["unscaled", "scaled  "], panels):
    print(title, "row entropies:", torch.special.entr(panel.double()).sum(dim=-1).numpy().round(2))

# %% [markdown]
# ## Explore
#
# The explorer draws the weights of random queries and keys together with
# each row's entropy. Its controls: the dimension $d$, the $1/\sqrt{d}$ scale
# on or off, a temperature $T$ that divides every score
# ($\operatorname{softmax}(s / T)$), a valid length, and causal masking.
#
# * Switch the scale off and drag $d$ up: watch the rows turn one-hot and the
#   entropies fall towards 0. Switch it back on: the cells still change with $d$
#   (each $d$ uses more coordinates of the vectors), but the rows stay about
#   as sharp at every $d$, and the entropies stop falling.
# * The temperature does what $d$ did: $T < 1$ sharpens, $T > 1$ flattens.
#   Switch the scale off and pick a $d$: which $T$ undoes the missing scale
#   there? The slider reaches 31.6, above $\sqrt{512} \approx 22.6$, so one
#   can at every $d$.
# * Shorten the valid length: the masked columns get weight 0 (the explorer
#   hatches them grey) and no row's entropy can exceed the log of the number
#   of keys it may attend to, the dashed mark on its bar.
# * Turn causal masking on: the upper triangle is hatched. The first query
#   may attend to key 0 alone, so its row is one-hot. (Queries and keys here
#   are different random vectors, so key 0 is not "the query itself".) With
#   a valid length of 0 no query has any key left, and every row is all
#   zeros.

# %%
from d2lmini.widgets import explore_dot_product

explorer = explore_dot_product()
explorer

# %% [markdown]
# <details>
# <summary>Worked answers to the things to try (open once you have tried them)</summary>
#
# 1. Unscaled, the mean row entropy over the eight queries is 1.50 at
#    $d = 1$, 0.77 at $d = 16$, 0.21 at $d = 64$ and 0.08 at $d = 512$, where
#    the largest weight of a row is 0.95 on average (the fall is not smooth,
#    since each $d$ adds new random coordinates). Scaled, it stays between
#    1.50 (at $d = 1$) and 1.79 (at $d = 16$): dividing by $\sqrt{d}$ keeps the scores'
#    variance near 1, so the softmax sees the same spread of scores.
# 2. $T = \sqrt{d}$, exactly: with the scale off, $s / T = s / \sqrt{d}$ is the
#    scaled score. The slider moves in steps of $10^{0.05}$, so take the
#    nearest one, 3.98 for $d = 16$ or 22.4 for $d = 512$; the weights then
#    differ from the scaled ones at $T = 1$ by at most 0.0015 and 0.006.
# 3. At a valid length of 3 the eight entropies lie between 0.83 and 1.08,
#    all below $\ln 3 \approx 1.10$, the dashed mark: no distribution over
#    three keys is more spread out than the uniform one. At the full length
#    the bound is $\ln 8 \approx 2.08$.
# 4. Query 0's row is 1, 0, …, 0 and its entropy 0; query $i$ may attend to
#    $i + 1$ keys, and the entropies mostly grow down the rows (0.45 for query
#    1, 1.89 for query 7). With a valid length of 0 every row, not only the
#    first, is all zeros: the valid length masks every key for every query.
#    With causal masking and a valid length of 3, rows 2 to 7 see the same
#    three keys, 0 to 2, since a key must pass both masks.
#
# </details>

# %% [markdown]
# ## Summary
#
# * Scaled dot-product attention is $\operatorname{softmax}(QK^\top/\sqrt{d})V$:
#   two batched matrix products and a masked softmax, no parameters.
# * `d2l.DotProductAttention` equals `F.scaled_dot_product_attention` with a
#   boolean mask built from the valid lengths (and `is_causal=True` for the
#   causal lengths); its dropout acts only in training mode.
# * For unit-variance coordinates, $\operatorname{Var}(q^\top k) = d$: we
#   measured close to 1,000 at $d = 1024$ unscaled, and close to 1 scaled.
# * Without the scale, the softmax saturates as $d$ grows (max weight → 1,
#   entropy → 0). The gradient at the scores shrinks; the gradient at the
#   query does not shrink on average, since the scores grow too, but it
#   gathers in a few rows while most rows get almost none. Scaled, it stays
#   spread over all the rows, with about the same mean and median from
#   $d = 4$ on.
# * Self-attention makes a token's output depend on its context: *minute*
#   comes out differently after "it took one" and "the size was". The causal
#   mask only limits that context to the token itself and the ones before it.

# %% [markdown]
# ## Why? A question to check
#
# **Why are the scores divided by √d, and not by d?**

# %%
from d2lmini.exercises import questions

questions.ask("04")


# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 4.1 · Is a sum a good score? (★)
#
# Someone proposes the score $a(q, k) = \sum_i (q_i + k_i)$: add the two
# vectors, then add up the coordinates. Write `sum_scores(queries, keys)` for
# a batch, (B, n_q, d) and (B, n_k, d) in, (B, n_q, n_k) out. The check then
# looks at the weights it produces. Before you run it, predict: how much can
# the weights of two different queries differ?

# %% tags=["exercise"]
def sum_scores(queries, keys):
    """Σᵢ (qᵢ + kᵢ) for every (query, key) pair, shape (B, n_q, n_k)."""
    ### BEGIN SOLUTION
    return queries.sum(dim=-1).unsqueeze(2) + keys.sum(dim=-1).unsqueeze(1)  # (B, n_q, 1) + (B, 1, n_k)
    ### END SOLUTION


# %% tags=["check"]
ch04.check_sum_scores(sum_scores)

# %% [markdown]
# ### Exercise 4.2 · The cost of attention as the sequence grows (★)
#
# For one example with $n_q$ queries, $n_k$ keys, and queries, keys and
# values all of size $d$, write `attention_cost(num_queries, num_keys,
# d, bytes_per_element=4)` returning a pair `(multiply_adds, weight_bytes)`:
# the multiply–adds of the two matrix products $QK^\top$ and $\alpha V$
# (ignore the softmax), and the bytes of the weight matrix $\alpha$. The check
# compares your bytes with a real `DotProductAttention` call, then tells you
# what doubling the sequence costs.

# %% tags=["exercise"]
def attention_cost(num_queries, num_keys, d, bytes_per_element=4):
    """(multiply-adds of QKᵀ and αV, bytes of the weight matrix α)."""
    ### BEGIN SOLUTION
    multiply_adds = num_queries * num_keys * d + num_queries * num_keys * d  # QKᵀ, then αV
    weight_bytes = num_queries * num_keys * bytes_per_element
    return multiply_adds, weight_bytes
    ### END SOLUTION


# %% tags=["check"]
ch04.check_attention_cost(attention_cost)

# %% [markdown]
# ### Exercise 4.3 · The Gaussian kernel as dot-product attention (★★)
#
# Chapter 01 ended by expanding the Gaussian kernel's score
# ([Attention pooling](01_attention_pooling.ipynb), "A bridge to dot-product
# attention"): at width $\sigma = 1$ its weights are
# $\operatorname{softmax}(q^\top k - \tfrac12\|k\|^2)$, a dot product plus one
# bias per key. So Gaussian-kernel attention is almost
# dot-product attention. Show that it is exactly dot-product attention, on
# vectors one coordinate longer.
#
# Write `distance_as_dot_product(queries, keys)` that appends one coordinate
# to every query and one to every key, (B, n_q, d) → (B, n_q, d + 1) and
# (B, n_k, d) → (B, n_k, d + 1). Choose them so that the softmax of the plain
# dot products of the longer vectors is the Gaussian kernel's weights; the
# simplest choice makes each dot product exactly $q^\top k - \tfrac12\|k\|^2$.
# Return the pair `(longer_queries, longer_keys)`. The check multiplies them
# with `torch.bmm` and compares the softmax of the results with the Gaussian
# kernel's weights. Dot products that differ from
# $q^\top k - \tfrac12\|k\|^2$ by a number that is the same for every key of
# a query give the same softmax (Exercise 4.1 met this): they pass too, and
# the check's message says so.

# %% tags=["exercise"]
def distance_as_dot_product(queries, keys):
    """Queries and keys one coordinate longer, whose dot products are qᵀk - ½‖k‖²."""
    ### BEGIN SOLUTION
    ones = torch.ones_like(queries[..., :1])  # (B, n_q, 1): the same extra coordinate for every query
    minus_half_norms = -0.5 * (keys ** 2).sum(dim=-1, keepdim=True)  # (B, n_k, 1): one per key
    return torch.cat([queries, ones], dim=-1), torch.cat([keys, minus_half_norms], dim=-1)
    ### END SOLUTION


# %% tags=["check"]
ch04.check_distance_scores(distance_as_dot_product)

# %% [markdown]
# ### Exercise 4.4 · Spot the bug in causal weights (★★)
#
# A colleague wrote the function below for the weights of causal
# self-attention: query i should attend to keys 0 to i only. It runs, its
# output has the right shape and zeros in the right places, and yet it has
# one bug. Run it, read its output row by row, then find the bug.

# %%
def causal_weights_with_a_bug(queries, keys):
    """Causal attention weights, (B, n, n): query i attends to keys 0..i."""
    n, d = queries.shape[1], queries.shape[2]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n, n)
    weights = torch.softmax(scores, dim=-1)
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # True above the diagonal
    return weights.masked_fill(future, 0.0)


torch.manual_seed(45)
random_tokens = torch.randn(1, 4, 8)
buggy = causal_weights_with_a_bug(random_tokens, random_tokens)
print(buggy[0].round(decimals=2))

# %% [markdown]
# Write `causal_weights(queries, keys)`, the same function with the bug
# fixed: change as little as you can. The check also tells you when your
# fix is one of the usual wrong ones.

# %% tags=["exercise"]
def causal_weights(queries, keys):
    """Causal attention weights, (B, n, n): query i attends to keys 0..i."""
    ### BEGIN SOLUTION
    n, d = queries.shape[1], queries.shape[2]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n, n)
    future = torch.triu(torch.ones(n, n, dtype=torch.bool, device=scores.device), diagonal=1)
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    ### END SOLUTION


# %% tags=["check"]
ch04.check_fixed_causal_weights(causal_weights)

# %% [markdown]
# ### Exercise 4.5 · A causal mask with a prefix (★★)
#
# Chapter 02 built the causal mask as the lower triangle of `torch.tril`. Some
# models go one step further. They read a prompt, a question say, in full,
# then write the answer one token at a time. The prompt's first $p$ tokens,
# the **prefix**, are all given at once, so each of them may attend to all
# $p$, in both directions. Every token after the prefix stays causal. So
# query $i$ may attend to keys $0, \dots, \max(i, p - 1)$. With $p = 1$ this
# is the plain causal mask. (Such a model is called a *prefix language
# model*.)
#
# Write `causal_attention(queries, keys, values, prefix=1)` for
# self-attention with as many queries as keys: scaled dot-product scores,
# a boolean mask that starts from `torch.tril` and allows the keys just named,
# used as in your fix of Exercise 4.4, then the product with the values.
# Return the output, (B, n, d_v). The check
# first calls it without a prefix and compares it with `DotProductAttention`
# and `d2l.causal_valid_lens`; then it calls it with `prefix=3`. Before you
# run the check, predict: which valid lengths would give the same weights as
# a prefix of 3 over 5 tokens?

# %% tags=["exercise"]
def causal_attention(queries, keys, values, prefix=1):
    """Scaled dot-product attention in which query i sees keys 0..max(i, prefix - 1)."""
    ### BEGIN SOLUTION
    n, d = queries.shape[1], queries.shape[2]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n, n)
    allowed = torch.tril(torch.ones(n, n, dtype=torch.bool, device=scores.device))  # (n, n): the causal triangle
    allowed[:, :prefix] = True  # every query also sees the whole prefix
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return torch.bmm(weights, values)
    ### END SOLUTION


# %% tags=["check"]
ch04.check_causal_attention(causal_attention)

# %% [markdown]
# ## Further reading
#
# * A. Vaswani et al. (2017), "Attention Is All You Need", section 3.2.1:
#   scaled dot-product attention and the variance argument for $1/\sqrt d$,
#   in one paragraph and a footnote. The reason it gives for the scale, as a
#   suspicion rather than a measurement, is the softmax's small gradients: the
#   gradient at the scores, in this chapter's terms.
# * M.-T. Luong, H. Pham and C. D. Manning (2015), "Effective Approaches to
#   Attention-based Neural Machine Translation": the unscaled dot-product
#   score, two years earlier.
# * The d2l book, section "Attention Scoring Functions".
