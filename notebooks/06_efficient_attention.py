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
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/06_efficient_attention.ipynb) (the learner edition; see the first cell below)

# %% tags=["colab-setup"]
# On Colab (or wherever this collection's package is missing) this installs it, and nothing else:
# --no-deps leaves the runtime's own torch, numpy, matplotlib and ipywidgets as they are. Elsewhere it installs nothing.
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("d2lmini") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    'd2lmini @ git+https://github.com/attention-notebooks/attention-notebooks@v0.1.0'], check=True)
    print("Installed d2lmini 0.1.0 for this runtime; its torch, numpy, matplotlib and ipywidgets are unchanged.")

# On a course hub, an update that adds a file with the name of one of yours keeps yours under a new name.
# This prints a line for each such file in this folder, and nothing when there is none.
from d2lmini.updates import report_renamed_files

report_renamed_files()

# %% [markdown]
# # 06 · Efficient attention: the same answer without the n × n matrix
#
# The explicit attention of chapters 04 and 05 is written to be read: scores,
# masked softmax, weighted sum, each a tensor you can print and plot. That
# clarity has a price that grows with the square of the sequence length. This
# chapter measures the price and shows how to avoid it without changing the
# answer.
#
# **In this notebook you will**
# 1. count the memory of the explicit path and see why it grows as $n^2$;
# 2. see why attention can visit the keys block by block (the *online
#    softmax*) and still give the same answer, so that the full score matrix
#    never has to exist (a deeper part writes it out and checks it against
#    `d2lmini`);
# 3. switch `d2lmini`'s attention to its fast path, one call to PyTorch's
#    `scaled_dot_product_attention`, and check that both paths agree, masks
#    included;
# 4. time both paths on your machine, and read how the time grows.

# %%
import math
import time

import torch
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
# the explicit path needs at least $2 \cdot B h n^2$ numbers. Doubling the
# sequence quadruples them.
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
# on every machine. On the log-log plot the weights climb with slope 2, the
# input with slope 1. At 1,024 tokens, batch 8 and 12 heads (one layer of
# GPT-2 small, a model with 12 heads of width 64), one float32 copy of $S$ is
# 384 MiB; at 4,096 tokens it is 6 GiB.
#
# ## The same answer, block by block
#
# The explicit path stores $S$ and $A$ because that is the plainest way to
# write attention, not because the answer needs them. Computed the way
# `torch.softmax` computes it, the softmax of a row needs, besides the scores
# themselves, just two numbers: the row's largest score, which it subtracts
# before exponentiating so that no exponential overflows (chapter 01 showed
# the same subtraction keeping a denominator away from 0), and the sum of the
# exponentials. Both can be kept as running values while the keys are
# visited a block at a time, together with a running weighted sum of the
# values. When a block brings a larger maximum, what was accumulated so far
# is rescaled to the new maximum, so nothing is dropped or approximated:
# after the last block, one division gives the explicit path's output, up to
# float rounding, although only one block of scores has existed at any time.
# This is the **online softmax**.
#
# It is the idea behind FlashAttention (Dao et al., in the further reading)
# and behind the *fused kernels* that PyTorch calls. A kernel here is one
# compiled routine (not the similarity kernel of chapter 01); a fused one
# computes the scores, the softmax and the weighted sum together, block by
# block in the processor's fast memory (its cache, or a GPU's on-chip
# memory), and never writes the $n \times n$ matrices out.

# %% [markdown]
# **Deeper (you may skip this).** The online softmax written out, and built
# from scratch. Nothing after this part depends on it; the main line resumes
# at "The fast path in `d2lmini`".
#
# Visit the keys in blocks; keep, for every query, the largest score seen so
# far $m$, the running sum $\ell$ of $e^{s - m}$ and the running weighted sum
# $o$ of the values. When a new block raises the maximum from $m$ to $m'$,
# everything accumulated so far was scaled by $e^{-m}$ instead of $e^{-m'}$,
# so multiply it by $e^{m - m'}$:
#
# $$m' = \max(m, \max_j s_j), \quad
# \ell' = \ell\, e^{m - m'} + \sum_j e^{s_j - m'}, \quad
# o' = o\, e^{m - m'} + \sum_j e^{s_j - m'} v_j ,$$
#
# where $j$ runs over the keys of the new block. After the last block the
# output is $o / \ell$. Only one block of scores, $n \times \text{block}$
# per example, exists at any time.

# %%
def blockwise_attention(queries, keys, values, block_size):
    """softmax(Q Kᵀ / √d) V, visiting the keys block_size at a time."""
    queries = queries / math.sqrt(queries.shape[-1])
    m = torch.full(queries.shape[:-1] + (1,), float("-inf"), dtype=queries.dtype,
                   device=queries.device)  # (batch, queries, 1): the largest score so far
    total = torch.zeros_like(m)  # (batch, queries, 1): running sum of exp(score - m)
    output = torch.zeros(queries.shape[:-1] + values.shape[-1:], dtype=queries.dtype,
                         device=queries.device)  # (batch, queries, value_size)
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
# Check it against `d2lmini`'s explicit `DotProductAttention`, for a block
# size that divides the 50 keys, one that does not, and one key at a time:

# %%
queries = torch.randn(2, 7, 16).to(device)
keys = torch.randn(2, 50, 16).to(device)
values = torch.randn(2, 50, 3).to(device)
reference = d2l.DotProductAttention(0.0)(queries, keys, values)
for block_size in (10, 16, 1):
    torch.testing.assert_close(blockwise_attention(queries, keys, values, block_size), reference)
print("blockwise attention matches d2lmini.DotProductAttention for blocks of 10, 16 and 1")
print("first output row:", d2l.numpy(reference[0, 0]).round(3))

# %% [markdown]
# A Python loop over blocks is slow; the fused kernels do the same arithmetic
# in compiled code, block by block in fast memory. *(End of the deeper part.)*

# %% [markdown]
# ## The fast path in `d2lmini`
#
# `DotProductAttention` and `MultiHeadAttention` take a constructor flag,
# `need_weights`. The default, `True`, is the explicit path that these
# notebooks teach; it keeps `attention_weights` for the heatmaps.
# `need_weights=False` builds the **fast path**: one call to
# `torch.nn.functional.scaled_dot_product_attention` (SDPA), which never
# returns the weights, so `attention_weights` stays `None`. The choice is made
# once, when the module is built, as in nanoGPT (a small, widely read GPT
# implementation). A second flag, `causal=True`,
# lets query $i$ see keys $0..i$ only; the fast path passes it to SDPA as
# `is_causal=True`, the explicit path applies the lower-triangular mask
# (the same as 2-D valid lengths $1, 2, \dots, n$, chapter 02).
#
# On the fast path, `valid_lens` becomes a boolean `attn_mask` (SDPA's mask
# argument, True where a query may attend) built by broadcasting: for 1-D
# lengths its shape is $(B, 1, 1, n)$, one row per example, shared by every
# query and head. For 2-D lengths, or lengths together with `causal=True`,
# each query has its own row and the mask is $(B, 1, n, n)$: quadratic again,
# but shared by all $h$ heads. SDPA turns a boolean mask into a float mask of
# the same shape (0 where a query may attend, $-\infty$ where it may not,
# added to the scores). Together with the package's own boolean masks (a
# byte per entry each), the masks come to a few bytes per query–key pair,
# about 6 in float32, where $S$ and $A$ cost $4h$ bytes each. With
# `causal=True` and no `valid_lens` the fast path passes no mask at all.
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
# ## Timing both paths
#
# Small sizes, so that this cell takes a second or two; each time is the
# fastest of seven calls, on one CPU thread. The times depend on your machine and on what else
# it is doing, so read how they *grow*: each row doubles $n$, and the columns
# marked × give the factor by which the time grew since the row above. If
# $n^2$ ruled, every factor would be 4.

# %% tags=["nbval-ignore-output"]
def fastest_ms(fn, *args, repeats=7):
    """The fastest of `repeats` calls of fn(*args), in milliseconds, after one warm-up call.

    Other work on the machine can only slow a call down, so the fastest call is the steadiest estimate.
    """
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
# at the short lengths, where these costs dominate, climbing towards 4 as
# $n$ grows and the $n^2$ work takes over. A factor can also pass 4,
# when the $n \times n$ matrices outgrow the processor's cache, and a busy
# machine adds noise to any row. On a GPU, at these sizes, starting the
# operations can take longer than the arithmetic, and the times may hardly
# grow at all.
#
# The fast path still computes every score it needs, so in the end its time
# grows as $n^2$ too. A causal kernel can skip the blocks of keys that lie
# wholly above the diagonal; the share it skips grows towards one half as $n$
# grows, which keeps its factors under 4 for longer, but half of $n^2$ still
# grows as $n^2$. What the fast path saves is the memory of $S$ and $A$, and
# the time spent writing them out and reading them back.
#
# `make bench` measures the same comparison at full size: batch 8, 1,024
# tokens, width 768, 12 heads, causal, float32, against the book's code,
# `nn.MultiheadAttention` and a direct SDPA call, with peak memory too.
# `benchmarks/README.md` lists its results and the machine they were measured
# on; there, the fast path ran about as fast as a direct SDPA call and
# needed about a seventh of the explicit path's memory.
#
# ## Summary
#
# * The explicit path holds the $B \times h \times n \times n$ scores and
#   weights: its memory grows as $n^2$, exactly 4 times for each doubling of
#   $n$, on any machine.
# * Its arithmetic grows as $n^2$ too, and so does the fast path's. Measured
#   times show it only once $n$ is large enough for the $n^2$ work to outweigh
#   the fixed and linear costs; at small $n$ they grow more slowly.
# * The online softmax gives the same result visiting the keys block by
#   block, so only one block of scores exists at a time.
# * `need_weights=False` switches `d2lmini`'s attention to one SDPA call with
#   the same answer, masks and zero rows included; `causal=True` without
#   `valid_lens` maps to `is_causal`. Keep `need_weights=True` when you want
#   to look at the weights.

# %% [markdown]
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
# ### Exercise 6.1 · The bytes of the score matrix (★)
# Write `score_bytes(batch_size, num_heads, num_tokens, dtype)`: how many bytes
# one score matrix $S$ of the explicit path takes (it has one number per
# example, head, query and key). A `torch.dtype` knows its size in bytes as
# `dtype.itemsize`.

# %% tags=["exercise"]
def score_bytes(batch_size, num_heads, num_tokens, dtype):
    """Bytes of a (batch_size, num_heads, num_tokens, num_tokens) tensor of dtype."""
    ### BEGIN SOLUTION
    return batch_size * num_heads * num_tokens ** 2 * dtype.itemsize
    ### END SOLUTION


# %% tags=["check"]
ch06.check_score_bytes(score_bytes)

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
# * Extend `blockwise_attention` (from the deeper part) with a `causal` flag.
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
