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
# # 07 · Self-attention and positional encoding
#
# In self-attention a sequence attends to itself: every token is a query, and
# every token is a key and a value. Chapters 04 and 05 used it already. This
# chapter asks what such a layer knows about **order**. For self-attention
# without a mask, where every query sees every key, the answer is: nothing.
# Shuffle the tokens and the outputs are shuffled the same way, so "the dog
# chased the cat" and "the cat chased the dog" look alike to it. (Chapter 04
# also used a causal mask; masks are a separate story, which Exercise 7.3
# lets you explore.) The usual fix is to add a **positional encoding** to the
# tokens first, and the sinusoidal one of the Transformer paper has neat
# properties, which we measure here.
#
# **In this notebook you will**
# 1. measure that self-attention without a mask is *permutation-equivariant*,
#    and that adding positions breaks the symmetry;
# 2. build the sinusoidal encoding from scratch, check it against
#    `d2lmini.PositionalEncoding`, and read it as a smooth binary counter;
# 3. verify that moving $\delta$ positions is a rotation of the encoding, and
#    that the dot product of two positions depends only on their distance;
# 4. compare convolutions, recurrent layers and self-attention on cost and
#    path length, counting and timing where we can;
# 5. explore the encoding's dimension and base with sliders.

# %% [markdown]
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/07_self_attention_positional_encoding.ipynb) opens this chapter's learner edition in Colab. Run the collapsed setup cell below first: on Colab it installs `d2lmini`, this collection's helper package, and leaves the runtime's own packages alone; on a course hub it names any file of yours that an update kept under a new name. Anywhere else it does nothing.

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
from torch import nn

import d2lmini as d2l
from d2lmini.exercises import ch07

torch.manual_seed(0)
device = d2l.try_gpu()

# %% [markdown]
# ## Self-attention without a mask does not see order
#
# Given tokens $x_1, \dots, x_n$ (the rows of $X$), a self-attention layer
# without a mask computes for every position $i$
#
# $$y_i = \sum_{j=1}^{n} \alpha(x_i, x_j)\, W_v x_j, \qquad
# \alpha(x_i, x_j) = \operatorname{softmax}_j\!\left(\frac{(W_q x_i)^\top W_k x_j}{\sqrt{d}}\right),$$
#
# with $d$ the size of the projected queries and keys. With several heads,
# each head does this with its own $W_q$, $W_k$, $W_v$ and $d = d_\text{head}$,
# and chapter 05's $W_o$ then mixes the heads' outputs, position by position.
# Nothing in this formula mentions $i$ or $j$ except through $x_i$ and $x_j$:
# the sum over $j$ does not care in which order the keys come. Reorder the
# tokens by a permutation $\pi$ and each output moves with its token:
# $f(X_{\pi}) = f(X)_{\pi}$. A function with this property is called
# **permutation-equivariant**.
#
# Let us measure it on two sentences. The embeddings are random vectors made
# here, one per word and seeded, standing in for the learned embeddings of a
# real model; "the" gets the same vector both times it appears. The layer is
# `d2l.MultiHeadAttention` with two heads and random weights, called with
# queries = keys = values = $X$.

# %%
d_model = 16
generator = torch.Generator().manual_seed(7)
vocabulary = ["the", "dog", "chased", "cat"]
embedding = {word: torch.randn(d_model, generator=generator) for word in vocabulary}
sentences = [["the", "dog", "chased", "the", "cat"], ["the", "cat", "chased", "the", "dog"]]
X = torch.stack([torch.stack([embedding[word] for word in sentence]) for sentence in sentences]).to(device)
print("X:", tuple(X.shape), "(sentences, tokens, features)")

self_attention = d2l.MultiHeadAttention(d_model, 2, 0.0, query_size=d_model, key_size=d_model,
                                        value_size=d_model).to(device).eval()


def self_attend(X):
    """Self-attention: the sequence gives the queries, the keys and the values."""
    return self_attention(X, X, X)


# %% [markdown]
# First a random permutation of the tokens of each sentence, and then the
# largest difference between "shuffle, then attend" and "attend, then
# shuffle". We print whether it is below $10^{-6}$ rather than the number
# itself, which is float32 rounding and changes from machine to machine.

# %%
with torch.no_grad():
    Y = self_attend(X)  # (2, 5, d_model)
    perm = torch.randperm(5, generator=generator)
    error = (self_attend(X[:, perm]) - Y[:, perm]).abs().max().item()

    # The same on 100 random permutations of a longer random sequence.
    long_X = torch.randn(1, 12, d_model, generator=generator).to(device)
    long_Y = self_attend(long_X)
    errors = []
    for _ in range(100):
        long_perm = torch.randperm(12, generator=generator)
        errors.append((self_attend(long_X[:, long_perm]) - long_Y[:, long_perm]).abs().max().item())

print("permutation:", perm.tolist())
print("max |f(X[:, perm]) - f(X)[:, perm]| < 1e-6:", error < 1e-6)
print("100 permutations of 12 tokens, every error < 1e-6:", max(errors) < 1e-6)

# %% [markdown]
# The second sentence *is* a permutation of the first: "dog" and "cat" trade
# places (positions 1 and 4). So the layer gives "dog" the same output vector
# whether it does the chasing or is chased, and its weights in the second
# sentence are those of the first with rows and columns swapped. Both panels
# show head 0, on one colour scale; rows are queries, columns keys.

# %%
swap = torch.tensor([0, 4, 2, 3, 1])  # sentence 2 = sentence 1 with tokens 1 and 4 exchanged
assert [sentences[0][i] for i in swap] == sentences[1]
with torch.no_grad():
    Y = self_attend(X)  # (2, 5, d_model)
dog_chasing, dog_chased = Y[0, 1], Y[1, 4]
print("'dog' gets the same output in both sentences:", torch.allclose(dog_chasing, dog_chased, atol=1e-6))

weights = self_attention.attention_weights[:, 0].cpu()  # (sentences, queries, keys), head 0
torch.testing.assert_close(weights[1], weights[0][swap][:, swap])
# Two panels with their own token labels, one colour scale: 0 to the largest weight of either.
fig, axes = d2l.plt.subplots(1, 2, figsize=(6.5, 3), layout="constrained")
for ax, sentence, panel in zip(axes, sentences, weights):
    image = ax.imshow(panel, cmap=d2l.plotting.CMAP, vmin=0, vmax=weights.max().item())
    ax.set_xticks(range(5), sentence, rotation=45)
    ax.set_yticks(range(5), sentence)
    ax.set(title=" ".join(sentence), xlabel="Keys")
    print(d2l.describe_weights(panel, query_labels=sentence, key_labels=sentence))  # for a screen reader
axes[0].set_ylabel("Queries")
fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
d2l.plt.show()

# %% [markdown]
# ### Adding positions breaks the symmetry
#
# If each token carries its position, $x_i + p_i$, a shuffled sentence is a
# different input: the tokens move but the positions stay where they are. We
# add `d2l.PositionalEncoding` (built below from scratch) and measure again.

# %%
positional_encoding = d2l.PositionalEncoding(d_model, 0.0).to(device).eval()


def self_attend_with_positions(X):
    """Self-attention over the tokens plus their positional encoding."""
    X = positional_encoding(X)
    return self_attention(X, X, X)


with torch.no_grad():
    Y = self_attend_with_positions(X)
    perm = torch.tensor([3, 0, 4, 1, 2])
    error = (self_attend_with_positions(X[:, perm]) - Y[:, perm]).abs().max().item()
print("with positions, max |f(X[:, perm]) - f(X)[:, perm]| < 1e-6:", error < 1e-6, f"(it is {error:.2f})")
gap = ((Y[0, 1] - Y[1, 4]).norm() / Y[0, 1].norm()).item()
print(f"'dog' chasing vs 'dog' chased: the outputs differ by {gap:.0%} of their length")

# %% [markdown]
# Now the layer can tell the two sentences apart. How far apart they end up,
# and how useful the difference is, depends on the encoding, which we turn
# to now.
#
# ## The sinusoidal encoding, from scratch
#
# For a sequence of $n$ positions and an encoding of width $d$, the Transformer
# paper fills a matrix $P \in \mathbb{R}^{n \times d}$ with sines and cosines.
# ($P$ is added to the tokens, so its width is the model width
# $d_\text{model}$; from here on this chapter writes $d$ for it, as the
# explorer's slider does.)
#
# $$P_{i,\,2j} = \sin\!\left(\frac{i}{10000^{2j/d}}\right), \qquad
# P_{i,\,2j+1} = \cos\!\left(\frac{i}{10000^{2j/d}}\right).$$
#
# Columns $2j$ and $2j + 1$ form a pair that shares one frequency,
# $\omega_j = 10000^{-2j/d}$: position $i$ sits at angle $\omega_j i$ on a
# circle. The frequencies fall geometrically from $\omega_0 = 1$ (a full turn
# every $2\pi \approx 6.3$ positions) towards $1/10000$: the slowest pair has
# $10000^{-(d-2)/d}$, about $1/5600$ for $d = 32$. We call 10000 the
# **base**; `d2l.PositionalEncoding` takes it as a keyword, `base=10000`.

# %%
def sinusoidal_encoding(num_steps, num_hiddens, base=10000, dtype=torch.float32):
    """P, (num_steps, num_hiddens): sines in the even columns, cosines in the odd ones."""
    positions = torch.arange(num_steps, dtype=dtype).unsqueeze(1)  # (num_steps, 1): unsqueeze(1) adds an axis of size 1
    exponents = torch.arange(0, num_hiddens, 2, dtype=dtype) / num_hiddens  # (ceil(d/2),): 2j/d
    angles = positions / base ** exponents  # (num_steps, ceil(d/2)): i · ω_j
    P = torch.zeros(num_steps, num_hiddens, dtype=dtype)
    P[:, 0::2] = torch.sin(angles)
    P[:, 1::2] = torch.cos(angles[:, :num_hiddens // 2])  # an odd width has one sine more
    return P


for num_steps, num_hiddens, base in [(60, 32, 10000), (60, 32, 100), (9, 7, 10000)]:
    package = d2l.PositionalEncoding(num_hiddens, 0.0, max_len=num_steps, base=base).P[0]  # (steps, d)
    torch.testing.assert_close(sinusoidal_encoding(num_steps, num_hiddens, base), package)
print("ours == d2l.PositionalEncoding(...).P for widths 32 and 7 and bases 10000 and 100")

# %% [markdown]
# `PositionalEncoding` adds $P$ to its input (and applies dropout when
# training); it keeps $P$ as a buffer, so it moves with `.to(device)` and is
# not a learned parameter. Here are four of its columns over 60 positions, as
# the book draws them: the pair 6, 7 turns $10000^{2/32} \approx 1.78$ times as
# fast as the pair 8, 9.

# %%
P = sinusoidal_encoding(60, 32)
fig, ax = d2l.plt.subplots(figsize=(7, 2.5), layout="constrained")
d2l.plot(torch.arange(60), P[:, 6:10].T, xlabel="position i", ylabel="P[i, column]", axes=ax)
ax.legend([f"column {c}" for c in range(6, 10)], fontsize="small", loc="upper left", bbox_to_anchor=(1, 1))
d2l.plt.show()

# %% [markdown]
# ## A binary counter, made smooth
#
# Write the positions in binary: the lowest bit flips at every step, the next
# every second step, the next every fourth. Each bit is a square wave, and
# each one is twice as slow as the one before.

# %%
for i in range(8):
    print(f"{i} in binary: {i:03b}")

# %% [markdown]
# The encoding does the same with smooth waves: column pair $j$ is a wave
# whose period grows by a factor $10000^{2/d}$ from one pair to the next
# (1.78 for $d = 32$) instead of 2. Side by side, over 64 positions, with the
# fastest bit and the fastest column on the left:

# %%
num_positions, num_bits = 64, 6
# i >> b shifts i right by b binary digits; & 1 keeps the last digit
bits = (torch.arange(num_positions).unsqueeze(1) >> torch.arange(num_bits)) & 1  # (64, 6): bit b of i
P = sinusoidal_encoding(num_positions, 32)
fig, (ax_bits, ax_code) = d2l.plt.subplots(1, 2, figsize=(8, 3.4), width_ratios=(1, 3), layout="constrained")
image = ax_bits.imshow(bits, cmap="Greys", aspect="auto", interpolation="nearest")
ax_bits.set(title="binary digits of i", xlabel="bit (lowest first)", ylabel="position i")
fig.colorbar(image, ax=ax_bits, ticks=[0, 1], label="bit")
image = ax_code.imshow(P, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
ax_code.set(title="sinusoidal encoding P, d = 32", xlabel="column (encoding dimension)")
fig.colorbar(image, ax=ax_code, label="P[i, column]")
d2l.plt.show()

# %% [markdown]
# A bit jumps between 0 and 1; a column glides between −1 and 1, so that
# neighbouring positions get similar codes. Each pair holds a sine and a
# cosine because together they fix the angle on the circle, and that makes
# the next property possible.
#
# ## Moving $\delta$ positions is a rotation
#
# Take one pair, $p_i = (\sin \omega i,\ \cos \omega i)$. The pair of
# position $i + \delta$ is $(\sin \omega(i + \delta),\ \cos \omega(i + \delta))$.
# The angle-addition formulas hold for any two angles $a$ and $b$:
#
# $$\sin(a + b) = \sin a \cos b + \cos a \sin b, \qquad
# \cos(a + b) = \cos a \cos b - \sin a \sin b.$$
#
# With $a = \omega i$ and $b = \omega\delta$ they write each of the two entries
# of $p_{i+\delta}$ as a fixed combination of $\sin \omega i$ and
# $\cos \omega i$, with coefficients that depend on $\omega\delta$ only. So
# there is a $2 \times 2$ matrix $M_\delta$ with $p_{i+\delta} = M_\delta\, p_i$
# **at every position $i$**: moving by
# $\delta$ is a linear map. It is a rotation, by the angle $\omega\delta$: it
# turns the point at angle $\omega i$ on the circle to the point at angle
# $\omega(i + \delta)$. Here the angle $\theta$ names the point
# $(\sin \theta, \cos \theta)$, so angles are measured from the cosine axis
# towards the sine axis. Drawn with the sine across and the cosine up, that
# turn is clockwise; a textbook that measures angles anticlockwise from the
# first axis would call $M_\delta$ a rotation by $-\omega\delta$. Over the
# whole encoding, it is one rotation per pair, a block-diagonal matrix.
#
# This property is the reason the Transformer paper gives for its sines and
# cosines: its authors *hypothesised* that it would make it easy for a model
# to learn to attend by relative position, "three positions back" whatever
# the position. That is a hypothesis, not a measured result. What the paper
# did measure is that learned position vectors (Exercise 7.2) gave nearly the
# same results; it kept the sines because they might let a model handle
# sequences longer than those it was trained on. And the step from the
# encoding to a layer is not automatic: a layer never sees $p_i$ alone but
# $x_i + p_i$, and its projections act on both,
# $W_q(x_i + p_i) = W_q x_i + W_q p_i$. The rotation describes the positional
# part only; the token's content goes through the same matrices, and whether
# a trained layer uses the rotation is up to training.
#
# Let us find each pair's map from the table alone. We look for the
# $2 \times 2$ matrix $A$ with $p_i A \approx p_{i+\delta}$ for the rows $p_i$,
# at all positions at once. There are many more rows than the four numbers
# in $A$, so in general no $A$ would fit them all, and we ask for the best
# compromise: **least squares** picks the $A$ that makes the sum of the
# squared differences between $p_i A$ and $p_{i+\delta}$, over all rows, as
# small as possible. When some $A$ fits every row exactly, that sum is 0 and
# least squares returns that $A$. `torch.linalg.lstsq` computes it (here in
# float64). Then we check that it fits exactly, that it is a rotation
# ($A^\top A = I$, $\det A = 1$) and that its angle is $\omega\delta$.
# $A$ multiplies a row from the right; the same step on a column is
# $M_\delta = A^\top$. Exercise 7.1 asks for $M_\delta$, the form that
# multiplies a column, as a formula in $\delta$ and $\omega$.

# %%
num_steps, num_hiddens = 100, 16
P64 = sinusoidal_encoding(num_steps, num_hiddens, dtype=torch.float64)
omegas = 10000.0 ** (-torch.arange(0, num_hiddens, 2, dtype=torch.float64) / num_hiddens)  # (8,)


def fitted_map(P, delta, j):
    """Least-squares A, (2, 2), with P[i, pair j] A ≈ P[i + δ, pair j] over every i; and the largest residual."""
    start, stop = max(0, -delta), P.shape[0] - max(0, delta)
    here = P[start:stop, 2 * j:2 * j + 2]  # (rows, 2): (sin ωi, cos ωi)
    there = P[start + delta:stop + delta, 2 * j:2 * j + 2]  # the same pair, δ positions on
    A = torch.linalg.lstsq(here, there).solution
    return A, (here @ A - there).abs().max().item()


table = [f"{'δ':>4} | {'fits at every i':>15} | {'AᵀA = I':>8} | {'det A = 1':>9} | {'angle = ωδ':>10}"]
for delta in (1, 5, 20, -7):
    fits, orthogonal, unit, angles = [], [], [], []
    for j, omega in enumerate(omegas):
        A, residual = fitted_map(P64, delta, j)
        fits.append(residual < 1e-9)
        orthogonal.append(torch.allclose(A.T @ A, torch.eye(2, dtype=torch.float64), atol=1e-9))
        unit.append(abs(torch.linalg.det(A).item() - 1) < 1e-9)
        angle = math.atan2(A[1, 0].item(), A[0, 0].item())
        turn = math.remainder(angle - omega.item() * delta, 2 * math.pi)  # 0 when equal up to whole turns
        angles.append(abs(turn) < 1e-9)
    table.append(f"{delta:>4} | {str(all(fits)):>15} | {str(all(orthogonal)):>8} | {str(all(unit)):>9} | "
                 f"{str(all(angles)):>10}")
print("\n".join(table))

# %% [markdown]
# Every pair, every offset: an exact fit, orthogonal, determinant 1, turned by
# $\omega\delta$. Rotary position embeddings (RoPE) build on exactly this, but
# apply it after the projections: they rotate each query and key by the
# angles of its position, so that the offset $i - j$ enters every score by
# construction rather than by training.
#
# The table reads the angle as a textbook would: `atan2(A[1, 0], A[0, 0])` is
# the $\theta$ of a matrix
#
# $$\begin{bmatrix}\cos\theta & -\sin\theta\\ \sin\theta & \cos\theta\end{bmatrix},$$
#
# and $A$ is that matrix with $\theta = \omega\delta$. The textbook reading
# assumes a matrix that multiplies a column, and angles measured
# anticlockwise from the first axis. $A$ multiplies a row instead, and this
# chapter measures angles from the second axis, the cosine, towards the
# first. Each of the two differences reverses the direction of the turn, so
# together they cancel: $A$ has the textbook angle $+\omega\delta$, and
# $p_i A = p_{i+\delta}$ turns each pair forward by $\omega\delta$ in this
# chapter's sense. Put $A$ where $M_\delta$ belongs, multiplying a column,
# and only the second difference is left: $A\, p_i = M_\delta^\top p_i = p_{i-\delta}$
# (a rotation's transpose is its inverse) turns each pair by $-\omega\delta$ in this chapter's sense, $\delta$
# positions back. Both readings hold: they describe the same matrix used two
# ways. That is why Exercise 7.1's check, given $A$, calls it a rotation by
# $-\omega\delta$.
#
# ## Similarity depends only on distance
#
# A rotation keeps dot products: $(M p)^\top (M q) = p^\top q$. So the dot
# product of two positions,
#
# $$P_i \cdot P_j = \sum_{k} \left(\sin \omega_k i \sin \omega_k j + \cos \omega_k i \cos \omega_k j\right)
# = \sum_{k} \cos\!\big(\omega_k (i - j)\big),$$
#
# where $k$ runs over the $d/2$ column pairs, depends only on the offset
# $i - j$, and is $d/2$ on the diagonal. Measured: every diagonal of $PP^\top$
# is constant.

# %%
num_steps, num_hiddens = 100, 64
P64 = sinusoidal_encoding(num_steps, num_hiddens, dtype=torch.float64)
gram = P64 @ P64.T  # (positions, positions): P_i · P_j
# torch.diagonal(gram, offset): the entries gram[i, i + offset]; offset 0 is the main diagonal
spreads = [torch.diagonal(gram, offset).max() - torch.diagonal(gram, offset).min()
           for offset in range(-num_steps + 1, num_steps)]
print("every diagonal of P Pᵀ is constant (spread < 1e-9):", max(spreads).item() < 1e-9)
print("P_i · P_i =", round(gram[0, 0].item(), 6), "= d/2")
# .flip(0) reverses the order: behind starts at position 49, then 48, and so on
ahead, behind = gram[50, 51:], gram[50, :50].flip(0)[:49]  # P_50 · P_(50+δ) and P_50 · P_(50-δ), δ = 1..49
print("from position 50, 50 + δ and 50 - δ look alike for every δ:", torch.allclose(ahead, behind))

# %% [markdown]
# Divided by $d/2$, the dot product is the cosine similarity of two positions
# (every $P_i$ has length $\sqrt{d/2}$, so this is the dot product of the two
# vectors scaled to length 1). On the left, the whole matrix for $d = 64$: a
# band along the diagonal, the same along every diagonal. On the right, its
# first row against the distance, for several bases.

# %%
similarity = gram / (num_hiddens / 2)  # cosine similarity: P_i has norm √(d/2)
fig, (ax_map, ax_curve) = d2l.plt.subplots(1, 2, figsize=(9, 3.4), layout="constrained")
image = ax_map.imshow(similarity, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
ax_map.set(title=r"$P_i \cdot P_j\,/\,(d/2)$, base 10000", xlabel="Keys (position j)",
           ylabel="Queries (position i)")
fig.colorbar(image, ax=ax_map, label="cosine similarity")
distances = torch.arange(num_steps)
for base, style in [(10000, "-"), (1000, "--"), (100, "-."), (10, ":")]:
    curve = sinusoidal_encoding(num_steps, num_hiddens, base, dtype=torch.float64)
    ax_curve.plot(distances, curve @ curve[0] / (num_hiddens / 2), style, label=f"base {base}")
ax_curve.axhline(0, color="gray", linewidth=0.5)
ax_curve.set(xlabel="distance |i - j|", ylabel=r"$P_i \cdot P_j\,/\,(d/2)$",
             title="similarity against distance, d = 64")
ax_curve.legend(fontsize="small")
d2l.plt.show()

# %% [markdown]
# With the base 10000, similarity falls fast over the first few positions,
# then slowly, with ripples: near positions look alike, far ones less so. A
# small base makes every wave short: the curve drops to zero within a few
# positions and then oscillates, so that positions far apart can look as
# similar as fairly near ones. Note also what the dot product
# cannot say: $P_i \cdot P_{i+\delta} = P_i \cdot P_{i-\delta}$, so it knows
# the distance but not the direction. The learned projections $W_q$ and $W_k$
# of a real layer can break that symmetry; relative position methods (see the
# further reading) encode the offset directly.
#
# ## Costs: convolution, recurrence, self-attention
#
# Three ways to let $n$ tokens of width $d$ exchange information. A
# **convolution** with kernel size $k$ is a window that slides along the
# sequence: the output at each position is a weighted sum of the $k$ inputs
# around it, with the same weights at every position (each weight a
# $d \times d$ matrix, since every position carries $d$ numbers). A **recurrent layer**
# (RNN) reads the tokens one at a time, left to right, and keeps a hidden
# state, a vector it updates from the previous state and the current token;
# the state at the last position has seen every token. Self-attention mixes
# every position with every other. This chapter needs nothing more of
# convolutions and RNNs than these two sentences: how far one layer reaches,
# and which steps must wait for each other. We compare them on three counts:
# the computation of one layer, the operations that must run one after
# another, and the longest path a signal travels between two positions (the
# Transformer paper argues that short paths make long-range dependencies
# easier to learn).
#
# | layer | computation | sequential operations | maximum path length |
# |---|---|---|---|
# | convolution, kernel size $k$ | $O(knd^2)$ | $O(1)$ | $O(n/k)$ |
# | recurrent (RNN) | $O(nd^2)$ | $O(n)$ | $O(n)$ |
# | self-attention | $O(n^2 d)$ | $O(1)$ | $O(1)$ |
#
# **Computation, counted.** The multiply–adds of one forward pass follow from
# the shapes: a convolution with $d$ input and output channels (the features
# of each position) does $knd^2$, an RNN $2nd^2$ (the input and the hidden
# state, each through a $d \times d$ matrix), and self-attention $4nd^2$ for
# its four projections plus $2n^2 d$ for the scores and the weighted sum. The
# $n^2 d$ term is the one in the table; it overtakes the projections once
# $n > 2d$. (PyTorch's
# `torch.utils.flop_counter.FlopCounterMode` counts the same numbers on real
# layers, in FLOPs, two per multiply–add; it needs a second or so to warm up,
# so it is left out here.)

# %%
d, k = 64, 3
multiply_adds = {"convolution": lambda n: k * n * d * d, "RNN": lambda n: 2 * n * d * d,
                 "self-attention": lambda n: 4 * n * d * d + 2 * n * n * d}
table = [f"{'n':>5} | " + " | ".join(f"{name:>14}" for name in multiply_adds)
         + f"   (millions of multiply-adds, d = {d}, k = {k})"]
for n in (16, 64, 128, 256, 1024, 4096):
    table.append(f"{n:>5} | " + " | ".join(f"{count(n) / 1e6:>14.2f}" for count in multiply_adds.values()))
print("\n".join(table))

# %% [markdown]
# **Path length, measured.** How many stacked convolutions does it take
# before the last output depends on the first input? We stack layers until
# the gradient of the last output with respect to the first input is no
# longer zero. For that test to be fair, a zero gradient must mean "no
# connection" and nothing else. So every convolution weight is set to 1:
# each route from the first input to the last output then adds a positive
# amount to the gradient, and no two routes can cancel out. With random
# weights of both signs, routes could cancel, and the gradient could be
# zero although the positions are connected. With kernel size $k$ (padding
# on both sides), each layer sees $(k-1)/2$ positions further each way, so
# $n$ positions take about $2(n-1)/(k-1)$ layers. One self-attention layer
# already connects every pair (measured the same way). An RNN passes the
# first token to the last through $n - 1$ steps of its recurrence, one after
# another.

# %%
def layers_to_connect(layer, n, width, max_layers=100):
    """How many copies of `layer`, (1, n, width) -> the same, must be stacked before output n-1 depends on input 0."""
    X = torch.ones(1, n, width, requires_grad=True)
    hidden = X
    for depth in range(1, max_layers + 1):
        hidden = layer(hidden)
        # the gradient of the last output with respect to X, returned rather than left in X.grad;
        # retain_graph keeps the record, which the next depth's call goes back through again
        (gradient,) = torch.autograd.grad(hidden[0, -1].sum(), X, retain_graph=True)
        if gradient[0, 0].abs().sum() > 0:
            return depth
    raise RuntimeError(f"not connected after {max_layers} layers")


def convolution(kernel_size):
    """A one-channel Conv1d over the positions, as a layer from (1, n, 1) to (1, n, 1)."""
    conv = nn.Conv1d(1, 1, kernel_size, padding=kernel_size // 2, bias=False)
    nn.init.constant_(conv.weight, 1.0)  # every weight 1, as the text explains
    return lambda X: conv(X.transpose(1, 2)).transpose(1, 2)


attention_layer = d2l.MultiHeadAttention(4, 1, 0.0, query_size=4, key_size=4, value_size=4)
table = [f"{'n':>4} | {'conv, k = 3':>11} | {'conv, k = 5':>11} | {'conv, k = 9':>11} | self-attention"]
for n in (8, 16, 32):
    depths = [layers_to_connect(convolution(size), n, 1) for size in (3, 5, 9)]
    depths.append(layers_to_connect(lambda X: attention_layer(X, X, X), n, 4))
    table.append(f"{n:>4} | " + " | ".join(f"{depth:>11}" for depth in depths[:3]) + f" | {depths[3]:>14}")
print("\n".join(table))

# %% [markdown]
# **Time, on your machine.** One forward pass of each layer ($d = 64$, one
# sequence, one CPU thread), the fastest of a few calls: `nn.Conv1d`,
# `nn.RNN` and `d2l.MultiHeadAttention` with one head. These numbers depend
# on your hardware and on what else it is doing; the counts above do not.
# Compare them with the counts: the RNN does the least arithmetic, yet it is
# often the slowest, at least at the shorter lengths. Its $n$ steps run one
# after another, each a small product of one vector with a matrix, while the
# convolution and self-attention handle all positions in a few large matrix
# products, which a processor runs much faster per multiply–add. At 256
# tokens self-attention does six times the RNN's arithmetic (the table
# above); compare that with the ratio of their times.

# %% tags=["nbval-ignore-output"]
conv = nn.Conv1d(d, d, kernel_size=k, padding=1, bias=False)
rnn = nn.RNN(d, d, batch_first=True, bias=False)
attention = d2l.MultiHeadAttention(d, 1, 0.0, query_size=d, key_size=d, value_size=d).eval()
layers = {"convolution": lambda X: conv(X.transpose(1, 2)), "RNN": lambda X: rnn(X),
          "self-attention": lambda X: attention(X, X, X)}


def fastest_ms(fn, X, repeats=5):
    """The fastest of `repeats` calls of fn(X), in milliseconds, after one warm-up call.

    Other work on the machine can only slow a call down, so the fastest call is the steadiest estimate.
    """
    times = []
    with torch.no_grad():
        fn(X)
        for _ in range(repeats):
            start = time.perf_counter()
            fn(X)
            times.append(time.perf_counter() - start)
    return min(times) * 1e3


threads = torch.get_num_threads()
torch.set_num_threads(1)  # one thread: the layers are compared, not how well each uses a thread pool
table = [f"{'n':>5} | " + " | ".join(f"{name:>14}" for name in layers) + "   (ms, CPU, one thread)"]
for n in (64, 256, 512):
    X = torch.randn(1, n, d)
    table.append(f"{n:>5} | " + " | ".join(f"{fastest_ms(layer, X):>14.2f}" for layer in layers.values()))
torch.set_num_threads(threads)
print("\n".join(table))

# %% [markdown]
# ## Explore
#
# The explorer shows the encoding $P$ of 64 positions (left; columns drawn
# at column / $d$, so the fast columns are on the left whatever $d$ is) and,
# on the right, what self-attention makes of positions alone:
# $\operatorname{softmax}(PP^\top/\sqrt{d})$, the weights a layer with identity
# projections would give if the tokens carried nothing but their positions.
# Rows are queries, columns keys. It starts with the colour scale fitted to
# the weights; "0 to 1" compares pictures on one scale.
#
# * Raise $d$: the picture of $P$ gets finer but keeps its shape (the
#   frequencies always run from 1 down towards 1/base); the band of weights
#   around the diagonal narrows, because every score is $\sqrt{d}/2$ times the
#   cosine similarity of two positions (1 on the diagonal, less elsewhere), so
#   the gap between the diagonal and the rest of a row grows with $d$.
# * Lower the base: every column but the first pair turns faster, and the
#   weights show stripes parallel to the diagonal, positions far apart that
#   look alike. The caption gives the longest wavelength: once it is shorter than 64, even the
#   slowest pair comes back round within the picture, and at the lowest bases
#   a distant position can look more like position $i$ than a near one does.
# * Back at base 10000 and $d = 2$: a single pair, a wave of period $2\pi$;
#   the weights repeat every 6 or so positions.

# %%
from d2lmini.widgets import explore_positional_encoding

explorer = explore_positional_encoding()
explorer

# %% [markdown]
# <details>
# <summary>Worked answers to the things to try (open once you have tried them)</summary>
#
# 1. From $d = 16$ up the band narrows: the keys a row gives more than 0.01
#    fall from 55 of 64 on average to 47 at $d = 64$ and 30 at $d = 128$, and
#    the mean weight on the diagonal grows from 0.034 to 0.059 and 0.089. The
#    diagonal score $\lVert p_i \rVert^2/\sqrt{d} = \sqrt{d}/2$ is 2 at
#    $d = 16$ and 5.7 at $d = 128$. Scores off the diagonal grow too, but
#    less: in the row of position 32, the score of position 62 goes from 0.67
#    to 3.2, so its gap to the diagonal widens from 1.3 to 2.5, and the
#    softmax favours the diagonal more and more. (Below $d = 16$ the picture
#    is mostly stripes: with only a few pairs, the fastest one, which repeats
#    every $2\pi \approx 6.3$ positions, weighs heavily. At $d = 8$ the row of
#    position 32 gives 0.028 to position 38, six places away, against 0.030
#    to itself; see answer 3.)
# 2. The caption's longest wavelength is 35,300 positions at base 10,000, 160
#    at 31.6, 93.3 at 17.8 and 54.4 at 10, the first step below 64. At the
#    lowest base, 3.16 (longest wavelength 18.5), the row of position 32
#    gives 0.020 to position 46, fourteen places away, and only 0.002 to
#    position 36: the encoding says 46 looks more like 32 than 36 does. Those
#    repeats are the stripes.
# 3. With $d = 2$ the caption reads "from 2π ≈ 6.28 to 6.28": one sine and
#    one cosine. The row of position 0 peaks at positions 6, 13, 19, 25, …,
#    the integers nearest to multiples of $2\pi$, where the wave comes back
#    to where it started; positions a period apart get the same encoding,
#    give or take the rounding.
#
# </details>

# %% [markdown]
# ## Summary
#
# * Self-attention without a mask is permutation-equivariant: shuffling the
#   tokens shuffles the outputs the same way (measured below $10^{-6}$), so
#   without positions "the dog chased the cat" and "the cat chased the dog"
#   give "dog" the same vector.
# * Adding a positional encoding to the tokens breaks that symmetry.
# * The sinusoidal encoding puts position $i$ at angle $\omega_j i$ on one
#   circle per column pair, with frequencies $\omega_j = \text{base}^{-2j/d}$
#   falling geometrically: a smooth binary counter.
# * Moving $\delta$ positions rotates every pair by $\omega_j\delta$, the same
#   linear map at every position, and the dot product $P_i \cdot P_j$
#   depends only on $i - j$ (not on its sign). That a model can use the
#   rotation to attend by relative position is the Transformer paper's
#   hypothesis: a layer's projections act on the token and its position
#   together.
# * Self-attention costs $O(n^2 d)$ but has $O(1)$ sequential operations and
#   path length; an RNN needs $O(n)$ of both, a convolution $O(n/k)$ layers
#   to connect distant positions.

# %% [markdown]
# ## Why? A question to check
#
# **Without positions, self-attention gives 'dog' the same output in 'the dog
# chased the cat' and 'the cat chased the dog'. Why?**

# %%
from d2lmini.exercises import questions

questions.ask("07")


# %% [markdown]
# ## Exercises
#
# ### Exercise 7.1 · An offset as a rotation (★)
#
# For one column pair with frequency $\omega$, write
# `offset_rotation(delta, omega)` returning the $2 \times 2$ tensor $M$ with
#
# $$\begin{bmatrix}\sin \omega(i+\delta)\\ \cos \omega(i+\delta)\end{bmatrix}
# = M \begin{bmatrix}\sin \omega i\\ \cos \omega i\end{bmatrix}
# \quad\text{for every position } i.$$
#
# This is the column form $M_\delta$, not the row form $A$ that
# `fitted_map` computes: $M_\delta = A^\top$.
# `delta` is an int and `omega` a float (use `math.sin` and `math.cos`, or
# torch's on a tensor). The check tries several offsets and frequencies, then
# applies your matrix to every row of `d2l.PositionalEncoding`'s table.

# %% tags=["exercise"]
def offset_rotation(delta, omega):
    """The 2 × 2 matrix that moves the pair (sin ωi, cos ωi) by delta positions."""
    ### BEGIN SOLUTION
    c, s = math.cos(omega * delta), math.sin(omega * delta)
    rows = [[c, s], [-s, c]]  # row 0 gives the new sine, row 1 the new cosine
    return torch.tensor(rows)
    ### END SOLUTION


# %% tags=["check"]
ch07.check_offset_rotation(offset_rotation)

# %% [markdown]
# ### Exercise 7.2 · A learned positional embedding (★★)
#
# BERT and GPT-2 do not use sines: they learn one vector per position, like a
# word embedding whose "words" are the positions 0 to `max_len - 1`. To write
# such a layer you need two pieces of PyTorch.
#
# A layer is a **module**: a class derived from `nn.Module`. Its `__init__`
# first calls `super().__init__()`, which sets the module up, and then creates
# the layer's learnable tensors. Its `forward` computes the output, and
# calling the object, `layer(X)`, runs `forward(X)`. Every layer this chapter
# called, `d2l.MultiHeadAttention`, `d2l.PositionalEncoding` and
# `nn.Conv1d` among them, is a module.
#
# The learnable tensors are `nn.Parameter`s, which you met in chapter 01:
# `d2l.NWKernelRegression` kept its width there as `log_sigma`, and gradient
# descent changed it. A parameter stored as an attribute of a module
# (`self.name = nn.Parameter(...)`) is registered with it: `parameters()`
# and `named_parameters()` list it. So you can hand all of a module's
# parameters at once to an optimizer, the object that makes chapter 01's
# gradient step on each tensor it is given:
# `torch.optim.SGD(layer.parameters(), lr=0.1)`. `nn.Parameter` also turns
# on the recording of computations, so `backward()` fills its `.grad`. A
# plain tensor stored the same way is not a parameter: neither list shows
# it. A tiny module with one learned factor per feature:

# %%
class Scale(nn.Module):
    """Multiplies each feature of X by a learned factor."""

    def __init__(self, num_features):
        super().__init__()  # set up the module before giving it parameters
        self.factor = nn.Parameter(torch.ones(num_features))  # learned, starts at 1

    def forward(self, X):
        return X * self.factor  # (batch, steps, num_features) times (num_features,)


scale = Scale(3)
print("parameters:", [(name, tuple(p.shape)) for name, p in scale.named_parameters()])
Y_small = scale(torch.ones(2, 4, 3))  # calls forward
print("output:", tuple(Y_small.shape))
Y_small.sum().backward()
print("gradient of the factor:", scale.factor.grad)  # each factor multiplied 2 × 4 ones: gradient 8

# %% [markdown]
# Now complete `LearnedPositionalEmbedding(max_len, num_hiddens)`: its table
# is a parameter of shape (max_len, num_hiddens), started at small random
# values so that the positions do not swamp the token vectors at the start
# (or, if you know it, a `torch.nn.Embedding` with one row per position),
# and `forward(X)` adds the rows of the first `steps` positions to a
# (batch, steps, num_hiddens) input, the same rows for every example. The
# check looks at the shapes, at what is added, and at the gradient that
# reaches the table.

# %% tags=["exercise"]
class LearnedPositionalEmbedding(nn.Module):
    """X + E[:steps], with E a learned (max_len, num_hiddens) table."""

    def __init__(self, max_len, num_hiddens):
        super().__init__()
        ### BEGIN SOLUTION
        self.table = nn.Parameter(0.02 * torch.randn(max_len, num_hiddens))  # one learned row per position
        ### END SOLUTION

    def forward(self, X):
        ### BEGIN SOLUTION
        steps = X.shape[1]
        return X + self.table[:steps]  # (steps, num_hiddens) broadcast over the batch
        ### END SOLUTION


# %% tags=["check"]
ch07.check_learned_embedding(LearnedPositionalEmbedding)

# %% [markdown]
# ### Exercise 7.3 · Which layers ignore the order? (★★)
#
# Write `is_permutation_equivariant(layer, X, perm)`, which returns `True`
# when shuffling the tokens of `X` (axis 1, by the index tensor `perm`) before
# the layer gives the same as shuffling the layer's output, up to float
# rounding, and `False` otherwise. `layer` is any function from (batch,
# tokens, features) to the same shape. The check runs your test on the
# seven layers below, in this order:
#
# 1. self-attention
# 2. self-attention after adding P
# 3. causal self-attention
# 4. a position-wise MLP, the same small network of two linear layers applied
#    to each token on its own
# 5. the mean of the tokens, given to each token
# 6. a convolution over the tokens
# 7. an RNN
#
# Predict first: in `my_predictions()`, write the list `predictions = [...]`,
# one `"yes"` (equivariant) or `"no"` per layer, in this order, before you
# write the test. The check reads your predictions once your test is right,
# and says which of them the test contradicts.

# %% tags=["exercise"]
def is_permutation_equivariant(layer, X, perm):
    """Whether layer(X[:, perm]) equals layer(X)[:, perm], up to rounding."""
    ### BEGIN SOLUTION
    shuffled_first = layer(X[:, perm])
    shuffled_after = layer(X)[:, perm]
    return torch.allclose(shuffled_first, shuffled_after, atol=1e-5)
    ### END SOLUTION


def my_predictions():
    """Your seven predictions, "yes" (equivariant) or "no", in the order of the list above."""
    ### BEGIN SOLUTION
    predictions = ["yes", "no", "no", "yes", "yes", "no", "no"]
    ### END SOLUTION
    return predictions


# %% tags=["check"]
ch07.check_equivariance(is_permutation_equivariant, predictions=my_predictions)

# %% [markdown]
# ## Further reading
#
# * Vaswani et al., *Attention Is All You Need* (2017): section 3.5,
#   "Positional Encoding", introduces the sinusoidal encoding and the remark
#   that an offset is a linear function of it; table 1 compares the costs
#   above (its convolution row assumes dilated convolutions, with a path of
#   $O(\log_k n)$; section 4 gives $O(n/k)$ for contiguous kernels, as here).
# * Gehring et al., *Convolutional Sequence to Sequence Learning* (2017):
#   learned position embeddings added to the tokens, as in exercise 7.2.
# * Shaw, Uszkoreit and Vaswani, *Self-Attention with Relative Position
#   Representations* (2018): the offset $i - j$ fed to attention directly.
# * Su et al., *RoFormer: Enhanced Transformer with Rotary Position
#   Embedding* (2021): the rotation of this chapter, applied to queries and
#   keys.
# * *Dive into Deep Learning*, chapter "Attention Mechanisms and
#   Transformers", section "Self-Attention and Positional Encoding".
