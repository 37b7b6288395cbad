"""Checks for chapter 05, multi-head attention."""

import math

import torch

from ..attention import DotProductAttention, MultiHeadAttention
from ._feedback import expect, expect_close, passed
from ._support import hint_for, seeded, without


def _random_layer(seed, num_hiddens=12, num_heads=3, input_size=5):
    """A bias-free MultiHeadAttention with eager weights, plus a self-attention input (2, 4, input_size)."""
    with seeded(seed):
        mha = MultiHeadAttention(num_hiddens, num_heads, 0.0, query_size=input_size, key_size=input_size,
                                 value_size=input_size)
        X = torch.randn(2, 4, input_size)
    return mha.eval(), X


def check_einsum_multihead(einsum_multihead):
    """Exercise 5.1: an einsum version equals d2l.MultiHeadAttention, cross-attention sizes included."""
    exercise = "Exercise 5.1 · multi-head attention with einsum"
    with seeded(51):
        mha = MultiHeadAttention(12, 3, 0.0, query_size=5, key_size=7, value_size=6).eval()
        queries, keys, values = torch.randn(2, 3, 5), torch.randn(2, 4, 7), torch.randn(2, 4, 6)
    expected = mha(queries, keys, values).detach()
    with without(exercise, "compute it with torch.einsum from mha's weights",
                 (MultiHeadAttention, "forward", "mha(...)"),
                 (DotProductAttention, "forward", "mha.attention(...)")):
        received = einsum_multihead(queries, keys, values, mha)
    expect_close(received, expected, exercise,
                 "project with each weight's transpose, reshape to (batch, n, heads, p) with p = "
                 "num_hiddens / num_heads (head i owns features i*p to (i+1)*p - 1), divide the scores "
                 "by √p (not √num_hiddens), softmax over the keys, and apply W_o to the heads "
                 "reshaped back to (batch, queries, num_hiddens)")
    passed(exercise, "Equal to d2l.MultiHeadAttention, with queries, keys and values of three sizes.")


def check_head_weights(head_weights):
    """Exercise 5.2: one head's weights from its own rows of W_q and W_k."""
    exercise = "Exercise 5.2 · one head's weights by hand"
    mha, X = _random_layer(52)
    mha(X, X, X)
    all_heads = mha.attention_weights.detach()  # (batch, heads, n, n)
    mha.attention.attention_weights = None  # the learner computes them, rather than reading them off
    p = 12 // 3
    for head in range(3):
        expected = all_heads[:, head]
        with without(exercise, "compute the head's weights from its rows of W_q and W_k",
                     (MultiHeadAttention, "forward", "mha(...)"),
                     (DotProductAttention, "forward", "mha.attention(...)")):
            received = head_weights(mha, X, head)
        q, k = mha.transpose_qkv(mha.W_q(X)), mha.transpose_qkv(mha.W_k(X))  # (batch*heads, n, p)
        scores = (q @ k.transpose(1, 2)).reshape(2, 3, 4, 4)[:, head].detach()  # (batch, n, n)
        interleaved = X @ mha.W_q.weight[head::3].T @ (X @ mha.W_k.weight[head::3].T).transpose(1, 2)
        hint = hint_for(received, f"take rows {head * p} to {head * p + p - 1} of W_q.weight and "
                        f"W_k.weight, project X with them, and softmax the scores divided by √p",
                        [(torch.softmax(scores / math.sqrt(12), -1),
                          "divide by √p, the width of one head (here 4), not by √num_hiddens"),
                         (torch.softmax(scores, -1), "divide the scores by √p before the softmax"),
                         (torch.softmax(interleaved.detach() / 2, -1),
                          "a head owns a block of consecutive rows, W[head*p:(head+1)*p], not every "
                          "num_heads-th row")])
        expect_close(received, expected, f"{exercise} (head {head})", hint)
    passed(exercise, "All three heads match mha.attention_weights.")


def check_output_without_head(output_without_head):
    """Exercise 5.3: silence one head before W_o, then rank the heads by the change it makes."""
    exercise = "Exercise 5.3 · silencing a head"
    mha, X = _random_layer(53)
    with torch.no_grad():
        full = mha(X, X, X)
        q, k, v = (mha.transpose_qkv(layer(X)) for layer in (mha.W_q, mha.W_k, mha.W_v))
        concatenated = mha.transpose_output(mha.attention(q, k, v))  # (2, 4, 12)
    changes = []
    for head in range(3):
        keep = torch.ones(12)
        keep[head * 4:(head + 1) * 4] = 0
        expected = mha.W_o(concatenated * keep).detach()
        received = output_without_head(mha, X, head)
        hint = hint_for(received, f"zero features {head * 4} to {head * 4 + 3} of the concatenated heads "
                        f"(after transpose_output), then apply W_o", [
                            (full * keep, "you zeroed the output after W_o; zero the head's slice of the "
                                          "concatenation before W_o, which mixes every head into every feature"),
                            (full, "the output is unchanged: zero the head's slice of the concatenation"),
                        ])
        expect_close(received, expected, f"{exercise} (head {head})", hint)
        changes.append((full - expected).norm().item())
    ranking = ", ".join(f"head {i}: {change:.3f}" for i, change in enumerate(changes))
    passed(exercise, f"Output change without each head ({ranking}).")


def check_parameter_count(multihead_parameter_count):
    """Exercise 5.4: the count from the formula equals a real module's, for several head counts."""
    exercise = "Exercise 5.4 · parameters of multi-head attention"
    cases = [(8, 1, 8, 8, 8, False), (8, 4, 8, 8, 8, False), (12, 3, 5, 7, 6, False), (12, 6, 5, 7, 6, True)]
    counts = []
    for num_hiddens, num_heads, query_size, key_size, value_size, bias in cases:
        with seeded(54):  # building a module draws its initial weights
            module = MultiHeadAttention(num_hiddens, num_heads, 0.0, bias=bias, query_size=query_size,
                                        key_size=key_size, value_size=value_size)
        expected = sum(parameter.numel() for parameter in module.parameters())
        received = multihead_parameter_count(num_hiddens, num_heads, query_size, key_size, value_size, bias)
        weights_only = num_hiddens * (query_size + key_size + value_size + num_hiddens)
        if received == expected * num_heads and num_heads > 1:
            hint = ("the heads split the num_hiddens rows of each projection between them: "
                    "heads × p = num_hiddens, so do not multiply by num_heads")
        elif received == weights_only:
            hint = "with bias=True each of the four layers also has num_hiddens biases"
        elif received == num_hiddens * (query_size + key_size + value_size):
            hint = "count W_o too: num_hiddens × num_hiddens"
        else:
            hint = ("W_q is (num_hiddens × query_size), W_k and W_v likewise, W_o is "
                    "(num_hiddens × num_hiddens), plus num_hiddens biases per layer when bias=True")
        expect(received == expected, exercise,
               f"{expected} parameters for num_hiddens={num_hiddens}, num_heads={num_heads}, sizes "
               f"({query_size}, {key_size}, {value_size}), bias={bias}", f"{received!r}", hint)
        counts.append(expected)
    passed(exercise, f"The count does not depend on num_heads: width 8 costs {counts[0]} parameters with "
                     f"1 head and {counts[1]} with 4.")
