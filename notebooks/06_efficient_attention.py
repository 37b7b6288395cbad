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
# # 06 · Efficient attention: the same answer without the n × n matrix
#
# The explicit attention of chapters 04 and 05 is written to be read: scores,
# masked softmax, weighted sum, each a tensor you can print and plot. That
# clarity has a price that grows with the square of the sequence length. This
# chapter counts the price and shows how to avoid it without changing the
# answer.
#
# **In this notebook you will**
# 1. count the memory of the explicit path and see why it grows as $n^2$;
# 2. compute attention over the keys block by block with the *online
#    softmax*, first for one query, then for a batch, and check that it gives
#    the explicit path's answer;
# 3. count what each path holds at once: $n \times n$ scores against
#    $n \times \text{block}$;
# 4. step through the online softmax in an explorer;
# 5. switch `d2lmini`'s attention to its fast path, one call to PyTorch's
#    `scaled_dot_product_attention`, which does the same in compiled code.

# %% [markdown]
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/06_efficient_attention.ipynb) opens this chapter's learner edition in Colab. Run the collapsed setup cell below first: on Colab it installs `d2lmini`, this collection's helper package, and leaves the runtime's own packages alone; on a course hub it names any file of yours that an update kept under a new name. Anywhere else it does nothing.

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
import time

import torch
import torch.nn.functional as F
from matplotlib.ticker import LogLocator, NullFormatter, NullLocator, StrMethodFormatter

import d2lmini as d2l
from d2lmini.exercises import ch06

_ = torch.manual_seed(0)

# %% tags=["nbval-ignore-output"]
device = d2l.try_gpu()
print("this notebook runs on:", device)

# %% [markdown]
# ## Where the memory goes
#
# For a batch of $B$ sequences of $n$ tokens, with the model width
# $d_\text{model}$ split over $h$ heads of width
# $d_\text{head} = d_\text{model}/h$ (chapter 05), the explicit path computes,
# for all heads at once,
#
# $$S = \frac{Q K^\top}{\sqrt{d_\text{head}}} \in \mathbb{R}^{B \times h \times n \times n},
# \qquad A = \operatorname{softmax}(S), \qquad O = A V .$$
#
# $Q$, $K$, $V$ and $O$ hold $B \cdot n \cdot d_\text{model}$ numbers each: they
# grow **linearly** with $n$. $S$ and $A$ hold $B \cdot h \cdot n^2$ numbers
# each: they grow **quadratically**. During the softmax both exist at once, so
# the explicit path needs at least $2 \cdot B h n^2$ numbers.
#
# The explicit path keeps $A$ as `attention_weights`; measuring that tensor
# shows the growth directly.

# %%
B, h, d_model = 2, 4, 64
explicit = d2l.MultiHeadAttention(d_model, h, 0.0, query_size=d_model, key_size=d_model,
                                  value_size=d_model).to(device).eval()

lengths = [64, 128, 256, 512, 1024]
weight_mib, input_mib = [], []  # MiB: 2**20 bytes
print(" tokens | Q, K or V (MiB) | weights kept (MiB) | weights shape")
for n in lengths:
    X = torch.randn(B, n, d_model).to(device)  # drawn on the CPU: the same numbers on every device
    with torch.no_grad():
        explicit(X, X, X)
    weights = explicit.attention_weights  # (batch, heads, queries, keys)
    weight_mib.append(weights.nelement() * weights.element_size() / 2**20)
    input_mib.append(X.nelement() * X.element_size() / 2**20)
    print(f"{n:7d} | {input_mib[-1]:15g} | {weight_mib[-1]:18g} | {tuple(weights.shape)}")  # exact: powers of 2

# %%
fig, ax = d2l.plt.subplots(figsize=(4.5, 3))
ax.loglog(lengths, weight_mib, "o-", label="weights $A$, $B h n^2$ numbers")
ax.loglog(lengths, input_mib, "s-", label="input $X$, $B n d_{model}$ numbers")
ax.set_xlabel("tokens n")
ax.set_ylabel("MiB (float32)")
ax.set_title("Memory of one tensor against length")
ax.legend()
d2l.plt.show()

# %% [markdown]
# Read the table down: each row doubles $n$, and the weights' column grows by
# exactly 4 each time, from 0.125 MiB at 64 tokens to 32 MiB at 1,024, which is
# $B h n^2 = 2 \cdot 4 \cdot 1024^2$ numbers of 4 bytes. Sixteen times the
# tokens, 256 times the memory, while the input's column only doubles per
# row. These are counts of numbers, not measurements: they come out the same
# on every machine. The factor 4 is exact for the weights tensor; the
# explicit path's whole memory also holds $Q$, $K$, $V$ and the output, which
# only double, so in total it grows by less than 4 per row, and by nearly 4
# once the $n^2$ tensors dominate. On the log-log plot the weights
# climb with slope 2, the input with slope 1. At 1,024 tokens, batch 8 and 12
# heads (one layer of GPT-2 small, a model with 12 heads of width 64), one
# float32 copy of $S$ is 384 MiB; at 4,096 tokens it is 6 GiB.
#
# ## The softmax of a row, one block at a time
#
# The explicit path stores $S$ and $A$ because that is the plainest way to
# write attention, not because the answer needs them. Take one query and its
# row of scores $s_1, \dots, s_n$. Computed the way `torch.softmax` computes
# it, the softmax needs, besides the scores themselves, just two numbers: the
# row's largest score $m$, which it subtracts before exponentiating so that no
# exponential overflows (chapter 01 showed the same subtraction keeping a
# denominator away from 0), and the sum $\ell$ of the exponentials. The
# output $y$ is then
#
# $$y = \sum_j \frac{e^{s_j - m}}{\ell}\, v_j , \qquad \ell = \sum_j e^{s_j - m}.$$
#
# Both $m$ and $\ell$ can be kept as **running values** while the keys are
# visited a block at a time, together with a running weighted sum $o$ of the
# values (not yet divided by $\ell$). Start with $m = -\infty$, $\ell = 0$,
# $o = 0$. For each block of keys, with $j$ running over the keys of the block:
#
# $$m_\text{new} = \max\big(m, \max_j s_j\big), \quad
# \ell \leftarrow \ell\, e^{m - m_\text{new}} + \sum_j e^{s_j - m_\text{new}}, \quad
# o \leftarrow o\, e^{m - m_\text{new}} + \sum_j e^{s_j - m_\text{new}}\, v_j ,$$
#
# then $m \leftarrow m_\text{new}$. Why the factor $e^{m - m_\text{new}}$?
# Everything summed so far was computed as $e^{s - m}$. When a block brings a
# larger maximum, those terms should have been $e^{s - m_\text{new}}$, and
# $e^{s - m} \cdot e^{m - m_\text{new}} = e^{s - m_\text{new}}$: one
# multiplication corrects all of them at once. When the maximum does not
# grow, the factor is $e^0 = 1$. After the last block, $o / \ell$ is the
# output $y$. Nothing is dropped or approximated, and only one block of scores
# has existed at any time. This is the **online softmax**.
#
# Here it is for one query and eight keys, in blocks of two. The query and
# keys are chosen so that the scores $q \cdot k_j / \sqrt{d}$ are whole
# numbers you can follow by hand, and each key's value is its position $j$,
# so the output is the position the query attends to on average.

# %%
q = torch.tensor([2.0, 0.0, 0.0, 0.0])  # d = 4, so q / √d = (1, 0, 0, 0)
K = torch.zeros(8, 4)  # (keys, d)
K[:, 0] = torch.tensor([1.0, 3.0, 0.0, 2.0, 5.0, 1.0, 4.0, 2.0])  # each key's score is its first number
V = torch.arange(8.0)[:, None]  # (keys, 1): key j carries the value j


def online_attention_one_query(q, K, V, block_size, trace=False):
    """softmax(K q / √d) V for one query q (d,), visiting the keys block_size at a time."""
    q = q / math.sqrt(q.shape[-1])
    m = torch.tensor(float("-inf"))  # the largest score so far
    total = torch.tensor(0.0)  # ℓ: the running sum of exp(score - m)
    o = torch.zeros(V.shape[-1])  # the running sum of exp(score - m) * value, (value_size,)
    for start in range(0, K.shape[0], block_size):
        s = K[start:start + block_size] @ q  # (block,): this block's scores
        m_new = torch.maximum(m, s.max())
        rescale = torch.exp(m - m_new)  # 0 on the first block (m = -inf), 1 when the maximum does not grow
        p = torch.exp(s - m_new)  # (block,)
        total = total * rescale + p.sum()
        o = o * rescale + p @ V[start:start + block_size]
        m = m_new
        if trace:
            print(f"{start}-{start + len(s) - 1}  | {d2l.number(s.tolist()):10} | {m.item():>3.0f} | "
                  f"{rescale.item():>8.4f} | {total.item():>6.4f} | {o[0].item():>6.4f} | {(o / total)[0].item():.4f}")
    return o / total


print("keys | scores     |   m |  rescale |      ℓ |      o | o / ℓ")
blockwise_output = online_attention_one_query(q, K, V, block_size=2, trace=True)
explicit_output = torch.softmax(K @ q / math.sqrt(4), dim=-1) @ V  # the explicit softmax(q Kᵀ/√d) V
torch.testing.assert_close(blockwise_output, explicit_output)
print(f"explicit softmax(q Kᵀ/√d) V: {explicit_output.item():.4f}")

# %% [markdown]
# Read the rows; *rescale* is $e^{m - m_\text{new}}$. The first block sets
# $m = 3$; its rescale factor is $e^{-\infty} = 0$, so the empty start counts
# for nothing. The second block's largest score, 2, is below 3: the factor
# is 1 and the new terms are simply added. The third block brings a 5, so everything so far is multiplied by
# $e^{3 - 5} = 0.1353$: $\ell$ *drops* although a block was added, because
# every term is now measured against the larger maximum. The fourth block's
# 4 is below 5 again. The last $o / \ell$, 4.2192, is the explicit output:
# `assert_close` checked it. The $o / \ell$ column after each block is
# attention over the keys seen so far; here it moves towards the exact
# answer as the keys come in (in general it may swing past it and back), and
# it equals the exact answer after the last block.
#
# The trace also shows what the loop keeps: two numbers and a vector for the
# query ($m$, $\ell$, and $o$, which has as many numbers as a value) and one
# block of scores, never the whole row. The softmax is called **online**
# because it is computed in one pass, as the keys arrive, without waiting for
# the whole row.

# %% [markdown]
# ## A batch of queries
#
# Nothing in the loop depends on there being one query. With a batch of
# queries, $m$ and $\ell$ become one number per query, of shape
# (batch, queries, 1), $o$ becomes (batch, queries, value_size), and a block's
# scores are (batch, queries, block). The block size need not divide the
# number of keys: slicing past the end gives a shorter last block. In the
# code, `scores.amax(dim=-1, keepdim=True)` is each row's largest score, kept
# as a column of shape (batch, queries, 1) so that it broadcasts against the
# block; `torch.maximum` takes the larger of two tensors element by element
# (where `max` would reduce one tensor).

# %%
def blockwise_attention(queries, keys, values, block_size):
    """softmax(Q Kᵀ / √d) V, visiting the keys block_size at a time."""
    queries = queries / math.sqrt(queries.shape[-1])
    m = torch.full(queries.shape[:-1] + (1,), float("-inf"), dtype=queries.dtype,
                   device=queries.device)  # (batch, queries, 1): the largest score so far
    total = torch.zeros_like(m)  # (batch, queries, 1): ℓ, the running sum of exp(score - m)
    output = torch.zeros(queries.shape[:-1] + values.shape[-1:], dtype=queries.dtype,
                         device=queries.device)  # (batch, queries, value_size): o
    for start in range(0, keys.shape[1], block_size):
        block_keys = keys[:, start:start + block_size]  # (batch, block, d)
        block_values = values[:, start:start + block_size]  # (batch, block, value_size)
        scores = torch.bmm(queries, block_keys.transpose(1, 2))  # (batch, queries, block)
        new_m = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        rescale = torch.exp(m - new_m)  # 0 on the first block, where m = -inf
        p = torch.exp(scores - new_m)  # (batch, queries, block)
        total = total * rescale + p.sum(dim=-1, keepdim=True)
        output = output * rescale + torch.bmm(p, block_values)
        m = new_m
    return output / total


# %% [markdown]
# Check it against the explicit formula $\operatorname{softmax}(QK^\top/\sqrt{d})\,V$,
# written out, for a block size that divides the 50 keys, one that does not,
# and one key at a time:

# %%
queries = torch.randn(2, 7, 16).to(device)
keys = torch.randn(2, 50, 16).to(device)
values = torch.randn(2, 50, 3).to(device)
reference = torch.softmax(queries @ keys.transpose(1, 2) / math.sqrt(16), dim=-1) @ values
for block_size in (10, 16, 1):
    torch.testing.assert_close(blockwise_attention(queries, keys, values, block_size), reference)
print("blockwise attention matches softmax(Q Kᵀ/√d) V for blocks of 10, 16 and 1")
print("first output row:", d2l.numpy(reference[0, 0]).round(3))

# %% [markdown]
# `d2lmini` provides the same function as `d2l.blockwise_attention`, with
# checks on its arguments (a block size that is not a positive int, keys and
# queries of different widths). It agrees with the one built here:

# %%
for block_size in (10, 16, 1):
    torch.testing.assert_close(d2l.blockwise_attention(queries, keys, values, block_size),
                               blockwise_attention(queries, keys, values, block_size))
print("d2l.blockwise_attention == blockwise_attention above, for blocks of 10, 16 and 1")

# %% [markdown]
# ## What each path holds at once
#
# Count the largest tensor each path holds for one example and one head,
# with $n$ queries and $n$ keys. The explicit path holds the $n \times n$
# scores (and, during the softmax, the $n \times n$ weights beside them). The
# blockwise path holds one block of scores, $n \times \text{block}$, and its
# running values: $m$ and $\ell$ ($n$ numbers each) and $o$
# ($n \times d_\text{value}$, where $d_\text{value}$ is the values' size,
# `value_size` in the code). With the block size fixed, doubling $n$ doubles
# what the blockwise path holds and quadruples what the explicit path holds.
# The blockwise path's memory is about $n \times (2\,\text{block} +
# d_\text{value})$ numbers (the block's scores and their exponentials, and
# the running values): it grows linearly in $n$, with the block size, which
# the programmer chooses; never with $n^2$.

# %%
block_size, value_size = 64, 64
print("     n | explicit: n × n scores | blockwise: n × block scores | running m, ℓ, o")
for n in (256, 1024, 4096, 16384):
    print(f"{n:6d} | {n * n:22,d} | {n * block_size:27,d} | {n * (2 + value_size):15,d}")

# %% [markdown]
# At 16,384 tokens the explicit path holds 268,435,456 scores per head and
# example, a gigabyte in float32, twice over during the softmax; the blockwise
# path's largest tensor, with blocks of 64, is 1,048,576 scores, 256 times
# fewer. The arithmetic is the same: every score is still computed once.
#
# ## What fused kernels do
#
# A Python loop over blocks is slow: each block costs several separate
# operations, each reading and writing its tensors. FlashAttention (Dao et
# al., in the further reading) does the same online softmax inside one
# *fused kernel*. A kernel here is one compiled routine (not the similarity
# kernel of chapter 01); a fused one computes the scores, the softmax and the
# weighted sum together, block by block in the processor's fast memory (its
# cache, or a GPU's on-chip memory), and never writes the $n \times n$
# matrices out. PyTorch's `torch.nn.functional.scaled_dot_product_attention`
# (SDPA) chooses among such kernels for your device, dtype and inputs (and
# falls back to one written in plain PyTorch operations, not fused, which
# does build the $n \times n$ scores: the deeper part below meets it). It
# takes the same queries, keys and values and gives the same answer as the
# blockwise loop and as `d2lmini`'s explicit `DotProductAttention`:

# %%
sdpa = F.scaled_dot_product_attention(queries, keys, values)
explicit_path = d2l.DotProductAttention(0.0)(queries, keys, values)
torch.testing.assert_close(d2l.blockwise_attention(queries, keys, values, 16), sdpa)
torch.testing.assert_close(explicit_path, sdpa)
print("SDPA == d2l.blockwise_attention == d2l.DotProductAttention (explicit path)")

# %% [markdown]
# ## Explore: the online softmax step by step
#
# First the trace above as a picture: after each block of two keys, the
# running maximum $m$ and sum $\ell$, and $o / \ell$ reaching the explicit
# output (dashed).

# %%
keys_seen = [2, 4, 6, 8]  # after each block of two keys
maxima, sums, partial = [], [], []
for seen in keys_seen:  # m, ℓ and o / ℓ after the first `seen` keys: the trace's rows
    scores = K[:seen] @ q / math.sqrt(4)  # (seen,)
    maxima.append(scores.max().item())
    sums.append(torch.exp(scores - scores.max()).sum().item())
    partial.append(online_attention_one_query(q, K[:seen], V[:seen], block_size=2).item())
fig, (ax_state, ax_out) = d2l.plt.subplots(1, 2, figsize=(7, 2.8))
ax_state.plot(keys_seen, maxima, "o-", label="running max $m$")
ax_state.plot(keys_seen, sums, "s-", label="running sum $\\ell$")
ax_state.set(xlabel="keys seen", ylim=(0, 6.8), title="after each block of 2 keys")
ax_state.legend(loc="upper left")
ax_out.plot(keys_seen, partial, "o-", color="C2", label="$o / \\ell$ so far")
ax_out.axhline(explicit_output.item(), color="C2", ls="--", lw=1, label="explicit output")
ax_out.set(xlabel="keys seen", ylim=(0, 5.6), title="the output")
ax_out.legend(loc="upper left")
d2l.plt.show()

# %% [markdown]
# The explorer does the same for one query over sixteen keys with random
# scores (seeded), for every block size that divides 16. Top, the weights
# $e^{s_j - m}/\ell$ over the keys seen so far, the keys not yet seen hatched;
# below, $m$ and $\ell$ after each block, the two numbers of $o / \ell$ after
# each block against the exact output (dashed), and the scores each path
# holds at once for 16 queries: $16 \times 16$ for the explicit path,
# $16 \times \text{block}$ for the blockwise one.
#
# * With block size 1, step through the keys one at a time. At which keys
#   does $m$ grow, and what happens to $\ell$ and to the weights already
#   drawn when it does?
# * Go to the last block with block size 1, 4 and 16. Compare the final
#   output, and the points the output panel shares between block sizes.
# * Move the block size from 1 to 16 and read the bars. When does the
#   blockwise path hold as much as the explicit one?

# %%
from d2lmini.widgets import explore_online_softmax

explorer = explore_online_softmax()
explorer

# %% [markdown]
# <details>
# <summary>Worked answers to the things to try (open once you have tried them)</summary>
#
# 1. $m$ grows three times: at key 0 (the first score, −1.86), at key 1
#    (1.64) and at key 10 (4.44). Each time, $\ell$ and $o$ are multiplied by
#    $e^{m - m_\text{new}}$: at key 10 by $e^{1.64 - 4.44}$, about 0.06, so
#    $\ell$ falls from 2.39 after ten keys to 1.15 after eleven, and the
#    weights already drawn shrink: key 10 takes 0.87 of the weight, and
#    key 1's falls from 0.42 to 0.05.
# 2. Every block size ends at the same output, the dashed lines (1.18 and
#    0.45). The points at the same number of keys seen coincide too: after
#    8 keys, blocks of 1, 2, 4 or 8 all give $o/\ell$ = (0.82, 1.31), the
#    attention over the first 8 keys. How the keys were grouped changes
#    nothing but how many points there are.
# 3. The blockwise bar is $16 \times \text{block}$: 16, 32, 64, 128 and 256
#    scores. At block size 16 one block is the whole row, and the blockwise
#    path holds the $16 \times 16 = 256$ scores of the explicit one.
#
# </details>

# %% [markdown]
# ## The fast path in `d2lmini`
#
# `DotProductAttention` and `MultiHeadAttention` take a constructor flag,
# `need_weights`. The default, `True`, is the explicit path that these
# notebooks teach; it keeps `attention_weights` for the heatmaps.
# `need_weights=False` builds the **fast path**: one call to SDPA, which never
# returns the weights, so `attention_weights` stays `None`. The choice is made
# once, when the module is built, as in nanoGPT (a small, widely read GPT
# implementation). A second flag, `causal=True`, lets query $i$ see keys
# $0..i$ only; without `valid_lens` the fast path passes it to SDPA as
# `is_causal=True` (with them, it folds it into SDPA's mask), the
# explicit path applies the lower-triangular mask (the same as 2-D valid
# lengths $1, 2, \dots, n$, chapter 02). On the fast path, `valid_lens`
# becomes a boolean `attn_mask`, SDPA's mask argument, True where a query
# may attend (the deeper part below counts its bytes).
#
# Both paths follow the package's rule for a query with no valid key (a
# valid length of 0): its output row is zero, never NaN. Below, example 1
# has no valid key at all.

# %%
torch.manual_seed(1)
B, n, d_model, h = 2, 6, 16, 4
sizes = dict(query_size=d_model, key_size=d_model, value_size=d_model)
explicit = d2l.MultiHeadAttention(d_model, h, 0.0, **sizes, causal=True).to(device).eval()
fast = d2l.MultiHeadAttention(d_model, h, 0.0, **sizes, causal=True, need_weights=False).to(device).eval()
fast.load_state_dict(explicit.state_dict())  # the same W_q, W_k, W_v, W_o

X = torch.randn(B, n, d_model).to(device)
valid_lens = torch.tensor([4, 0], device=device)
with torch.no_grad():
    out_explicit = explicit(X, X, X, valid_lens)
    out_fast = fast(X, X, X, valid_lens)
torch.testing.assert_close(out_fast, out_explicit)
print("fast path == explicit path:", torch.allclose(out_fast, out_explicit, atol=1e-6))
print("example 1, no valid key, largest |output|:", out_fast[1].abs().max().item())
print("explicit path keeps weights of shape", tuple(explicit.attention_weights.shape))
print("fast path keeps:", fast.attention_weights)

# %% [markdown]
# These are the matrices the fast path never builds: example 0's four heads,
# causal and limited to the first 4 keys.

# %%
fig = d2l.show_heatmaps(explicit.attention_weights[:1], xlabel="Keys", ylabel="Queries",
                        titles=[f"head {i}" for i in range(h)], figsize=(8, 2.4))

# %% [markdown]
# The fast path also agrees with PyTorch's own `nn.MultiheadAttention`, to
# which `d2l.to_torch_multihead` copies the weights. Its boolean masks use the
# opposite convention, True where attention is *forbidden*, hence `triu(1)`
# and `padding_mask`:

# %%
valid_lens = torch.tensor([4, 6], device=device)
future = torch.ones(n, n, dtype=torch.bool, device=device).triu(1)  # True: may not attend
torch_mha = d2l.to_torch_multihead(fast).eval()
with torch.no_grad():
    theirs, _ = torch_mha(X, X, X, key_padding_mask=d2l.padding_mask(valid_lens, n),
                          attn_mask=future, need_weights=False)
    ours = fast(X, X, X, valid_lens)
torch.testing.assert_close(ours, theirs)
print("fast path == nn.MultiheadAttention:", torch.allclose(ours, theirs, atol=1e-6))

# %% [markdown]
# One more difference: with dropout, the fast path asks SDPA to drop weights
# (`dropout_p`) in training mode only, and draws its own random numbers, so
# the two paths agree in evaluation mode, not draw for draw in training.
#
# ## Summary
#
# * The explicit path holds the $B \times h \times n \times n$ scores and
#   weights. The weights tensor grows exactly 4 times for each doubling of
#   $n$, on any machine; the inputs and outputs only double, so the whole
#   path grows by less than 4 per doubling, and by nearly 4 once the
#   $n \times n$ tensors dominate.
# * The online softmax visits the keys block by block, keeping for each
#   query the running maximum $m$, the running sum $\ell$ and the running
#   output $o$, and rescaling $\ell$ and $o$ by $e^{m - m_\text{new}}$ when
#   the maximum grows. After the last block $o/\ell$ is the explicit output,
#   up to float rounding.
# * It holds one block of scores, $n \times \text{block}$, and its running
#   values, about $n \times (2\,\text{block} + d_\text{value})$ numbers in
#   all: linear in $n$, not $n^2$. The arithmetic still grows as $n^2$.
# * Fused kernels (FlashAttention, the kernels behind PyTorch's SDPA) do the
#   online softmax in compiled code. `need_weights=False` switches
#   `d2lmini`'s attention to one SDPA call with the same answer, masks and
#   zero rows included. Keep `need_weights=True` when you want to look at the
#   weights.

# %% [markdown]
# ## Masks and timings
#
# **Deeper (you may skip this).** What the fast path's masks cost, and how
# its time grows, measured on your machine. Nothing after this part depends
# on it; the main line resumes at the question below.
#
# **Masks.** For 1-D `valid_lens` the fast path's boolean mask is broadcast
# to shape $(B, 1, 1, n)$, one row per example, shared by every query and
# head. For 2-D lengths, or lengths together with `causal=True`, each query
# has its own row and the mask is $(B, 1, n, n)$: quadratic again, but shared
# by all $h$ heads, and one byte per entry where $S$ costs $4h$ bytes in
# float32. What SDPA does with a boolean mask depends on the kernel it
# chooses, and so on the device, the dtype and the torch release: some of
# its kernels (the one written in plain PyTorch operations, for one) first
# turn it into a float mask of the same shape (0 where a query may attend,
# $-\infty$ where it may not, added to the scores); others read it as it is.
# With such a float copy and the package's own two boolean masks (the mask
# itself, and the copy that lets a query with no valid key attend somewhere,
# whose output is then set to zero), the masks
# come to at most about 6 bytes per query–key pair. With `causal=True` and no
# `valid_lens` the fast path passes no mask at all.
#
# **Timing both paths.** Small sizes, so that this cell takes a second or
# two; each time is the fastest of seven calls, on one CPU thread. Other work
# on the machine can only slow a call down, never speed it up, so the
# fastest of several calls is the steadiest estimate of what the call itself
# costs. Read how the times *grow*, not the times themselves: each row
# doubles $n$, and the columns marked × give the factor by which the time
# grew since the row above. If $n^2$ ruled, every factor would be 4.

# %% tags=["nbval-ignore-output"]
def fastest_ms(fn, *args, repeats=7):
    """The fastest of `repeats` calls of fn(*args), in milliseconds, after one warm-up call."""
    fn(*args)
    times = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn(*args)
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


B, h, d_model = 2, 4, 64
sizes = dict(query_size=d_model, key_size=d_model, value_size=d_model)
explicit = d2l.MultiHeadAttention(d_model, h, 0.0, **sizes, causal=True).to(device).eval()
fast = d2l.MultiHeadAttention(d_model, h, 0.0, **sizes, causal=True, need_weights=False).to(device).eval()
timing_lengths = [64, 128, 256, 512, 1024]
explicit_ms, fast_ms = [], []
threads = torch.get_num_threads()
torch.set_num_threads(1)  # on a CPU: one thread is steadier when other programs share the processor
print("tokens | explicit ms |     × | fast ms |     × | explicit ÷ fast")
with torch.no_grad():
    for n in timing_lengths:
        X = torch.randn(B, n, d_model).to(device)
        explicit_ms.append(fastest_ms(explicit, X, X, X))
        fast_ms.append(fastest_ms(fast, X, X, X))
        # × : the time divided by the time of the row above, where n was half as large
        growth = [f"{ms[-1] / ms[-2]:5.1f}" if len(ms) > 1 else " " * 5 for ms in (explicit_ms, fast_ms)]
        print(f"{n:6d} | {explicit_ms[-1]:11.2f} | {growth[0]} | {fast_ms[-1]:7.2f} | {growth[1]} | "
              f"{explicit_ms[-1] / fast_ms[-1]:15.1f}")
torch.set_num_threads(threads)

fig, ax = d2l.plt.subplots(figsize=(4.5, 3))
ax.loglog(timing_lengths, explicit_ms, "o-", label="explicit (need_weights=True)")
ax.loglog(timing_lengths, fast_ms, "s-", label="fast (need_weights=False)")
# Ticks at the lengths timed and at 1, 2 and 5 times powers of ten, labelled
# plainly: a log axis otherwise labels only the powers of ten, as 10^2, 10^3.
ax.set_xticks(timing_lengths, [str(n) for n in timing_lengths])
ax.xaxis.set_minor_locator(NullLocator())
ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
ax.yaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
ax.yaxis.set_minor_formatter(NullFormatter())
ax.set_xlabel("tokens n")
ax.set_ylabel("ms per call (fastest of 7)")
ax.set_title(f"Causal multi-head attention on {device.type}")
ax.legend()
d2l.plt.show()

# %% [markdown]
# Why are the factors not all 4? Only part of a call grows as $n^2$: the
# scores, the mask, the softmax and the weighted sum. A call also pays costs
# that do not grow with $n$ at all (Python, the argument checks, starting
# each operation) and costs that grow only linearly: the four projections
# $W_q$, $W_k$, $W_v$, $W_o$ take $4 n d_\text{model}^2$ multiply–adds per
# sequence, as many as the $2 n^2 d_\text{model}$ of the scores and the
# weighted sum at $n = 2 d_\text{model} = 128$. So expect factors well under 4
# at the short lengths, climbing towards 4 as the $n^2$ work takes over. A
# factor can also pass 4 in either path: the explicit path's $n \times n$
# matrices may outgrow the processor's cache, both paths may switch to
# another CPU kernel at some size, and a busy machine adds noise to any row. On a GPU, at
# these sizes, starting the operations can take longer than the arithmetic,
# and the times may hardly grow at all.
#
# The fast path still computes every score, so in the end its time grows as
# $n^2$ too; a causal kernel can skip the blocks of keys that lie wholly above
# the diagonal, nearly half of them at large $n$, but half of $n^2$ still
# grows as $n^2$. What the fast path saves is the memory of $S$ and $A$, and
# the time spent writing them out and reading them back.
#
# `make bench` measures the same comparison at full size: batch 8, 1,024
# tokens, width 768, 12 heads, causal, float32, against the book's code,
# `nn.MultiheadAttention` and a direct SDPA call, with peak memory too.
# `benchmarks/README.md` lists its results and the machine they were measured
# on; there, the fast path ran about as fast as a direct SDPA call and
# needed about a seventh of the explicit path's memory. *(End of the deeper
# part.)*
#
# ## Why? A question to check
#
# **Why does the blockwise softmax give the same output as the full softmax
# (up to float rounding), although it never holds a whole row of scores?**

# %%
from d2lmini.exercises import questions

questions.ask("06")


# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 6.1 · The longest sequence that fits (★)
# The table in "Where the memory goes" counts the weights' memory for a given
# length. Turn
# the question around: write `max_tokens(batch_size, num_heads, dtype,
# budget_bytes)`, the largest number of tokens whose score matrix $S$ (one
# number per example, head, query and key) still fits in `budget_bytes`
# bytes, as an `int`. A `torch.dtype` knows its size in bytes as
# `dtype.itemsize`. Before you run the check, predict: how many times as many
# tokens fit in twice the memory?

# %% tags=["exercise"]
def max_tokens(batch_size, num_heads, dtype, budget_bytes):
    """The largest num_tokens whose (batch_size, num_heads, num_tokens, num_tokens) tensor of dtype fits."""
    ### BEGIN SOLUTION
    numbers = budget_bytes // (batch_size * num_heads * dtype.itemsize)  # scores that fit: n² of them at most
    return math.isqrt(numbers)  # the largest whole n with n² ≤ numbers
    ### END SOLUTION


# %% tags=["check"]
ch06.check_max_tokens(max_tokens)

# %% [markdown]
# ### Exercise 6.2 · A causal mask for cached decoding (★★)
# A model that generates text keeps the keys and values of the tokens it has
# already processed (the *KV cache*) and runs only the new tokens' queries
# against all of them. With `num_keys` tokens in all, of which the last
# `num_queries` are new, new query $i$ is the token at position
# `num_keys - num_queries + i`. SDPA's `is_causal=True` does not know that:
# it lines query $i$ up with key $i$ (the top-left corner), which is right
# only when there are as many queries as keys. Write
# `decode_mask(num_queries, num_keys)`: the boolean `attn_mask`, shape
# (num_queries, num_keys), True where a new query may attend. The check runs
# SDPA with your mask and compares the new tokens' outputs with causal
# attention over all the tokens.

# %% tags=["exercise"]
def decode_mask(num_queries, num_keys):
    """Boolean (num_queries, num_keys): the new queries are the last num_queries of num_keys tokens."""
    ### BEGIN SOLUTION
    positions = torch.arange(num_keys - num_queries, num_keys)  # each new query's place in the sequence
    return torch.arange(num_keys)[None, :] <= positions[:, None]
    ### END SOLUTION


# %% tags=["check"]
ch06.check_decode_mask(decode_mask)

# %% [markdown]
# ### Exercise 6.3 · Left padding for batched generation (★★★)
# To generate for several prompts at once, a batch is usually padded on the
# **left**, so that every prompt ends at the last position and the next
# tokens line up. `valid_lens` then counts the *last* positions of each
# example. Write `left_padded_mask(valid_lens, num_steps)`: the boolean
# `attn_mask` of causal self-attention over such a batch, shape
# (batch, num_steps, num_steps). Query $i$ of example $b$ may attend to key
# $j$ when $j \le i$ and key $j$ is a real token; a padding query, with no
# real key at or before it, gets a row of False. The check compares each
# real token's output with a run of its sequence alone, without padding.

# %% tags=["exercise"]
def left_padded_mask(valid_lens, num_steps):
    """Boolean (batch, num_steps, num_steps): causal, and the first num_steps - valid_lens[b] keys are padding."""
    ### BEGIN SOLUTION
    steps = torch.arange(num_steps, device=valid_lens.device)
    causal = steps[None, :] <= steps[:, None]  # (queries, keys): key j <= query i
    real = steps[None, :] >= (num_steps - valid_lens)[:, None]  # (batch, keys): the last valid_lens[b]
    return causal[None, :, :] & real[:, None, :]  # (batch, queries, keys)
    ### END SOLUTION


# %% tags=["check"]
ch06.check_left_padded_mask(left_padded_mask)

# %% [markdown]
# ### Going further (no check)
# * Extend `blockwise_attention` (built in the main line) with a `causal` flag.
#   Which key blocks can a block of queries skip entirely?
# * Run `make bench` and compare the memory column with $2 \cdot B h n^2 \cdot
#   4$ bytes. What else does the explicit path hold at its peak?

# %% [markdown]
# ## Further reading
#
# * M. Milakov and N. Gimelshein (2018), "Online normalizer calculation for
#   softmax": the one-pass softmax that blockwise attention rests on.
# * M. N. Rabe and C. Staats (2021), "Self-attention Does Not Need O(n²)
#   Memory": attention computed in chunks, with the same online rescaling.
# * T. Dao, D. Y. Fu, S. Ermon, A. Rudra and C. Ré (2022), "FlashAttention:
#   Fast and Memory-Efficient Exact Attention with IO-Awareness": the fused
#   GPU kernel; its successor, FlashAttention-2, is one of the kernels that
#   PyTorch's SDPA chooses from on a GPU.
# * PyTorch's documentation of `torch.nn.functional.scaled_dot_product_attention`:
#   which kernels exist, and when each is chosen.
