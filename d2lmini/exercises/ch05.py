"""Checks for chapter 05, multi-head attention."""

import math

import torch

from ..attention import DotProductAttention, MultiHeadAttention
from ..i18n import N_, _, number, numbers
from ._feedback import check, expect_close, passed, require
from ._feedback import hint as hint  # an error asks the learner to run ch05.hint()
from ._support import hint_for, seeded, without

EINSUM = N_("Exercise 5.5 · multi-head attention with einsum")
ONE_HEAD = N_("Exercise 5.2 · one head's weights by hand")
SILENCED_HEAD = N_("Exercise 5.3 · silencing a head")
PARAMETERS = N_("Exercise 5.1 · parameters of multi-head attention")
SPLIT = N_("Exercise 5.4 · heads into the batch from a sequence-first tensor")


def _random_layer(seed, num_hiddens=12, num_heads=3, input_size=5):
    """A bias-free MultiHeadAttention with eager weights, plus a self-attention input (2, 4, input_size)."""
    with seeded(seed):
        mha = MultiHeadAttention(num_hiddens, num_heads, 0.0, query_size=input_size, key_size=input_size,
                                 value_size=input_size)
        X = torch.randn(2, 4, input_size)
    return mha.eval(), X


def _einsum_mistakes(mha, queries, keys, values):
    """Multi-head attention computed with each typical mistake, paired with its hint."""
    h, B, n_q, n_k = mha.num_heads, queries.shape[0], queries.shape[1], keys.shape[1]
    with torch.no_grad():
        q, k, v = mha.W_q(queries), mha.W_k(keys), mha.W_v(values)  # (B, n, num_hiddens)
        d_head = q.shape[-1] // h

        def heads(x, n, transposed=True):  # (B, n, num_hiddens) -> (B, h, n, d_head)
            return x.reshape(B, n, h, d_head).transpose(1, 2) if transposed else x.reshape(B, h, n, d_head)

        def attend(q, k, v, width=d_head, dim=-1, join=lambda o: o.transpose(1, 2).reshape(B, n_q, -1)):
            weights = torch.softmax(q @ k.transpose(-1, -2) / width ** 0.5, dim)  # (B, h, n_q, n_k)
            return join(weights @ v)  # (B, n_q, num_hiddens), before W_o

        right = (heads(q, n_q), heads(k, n_k), heads(v, n_k))
        wrong = [
            (mha.W_o(attend(*right, width=h * d_head)),
             (_("divide each head's scores by √d_head, the width of one head, not by √num_hiddens"),
              _("d_head = num_hiddens / num_heads"))),
            (mha.W_o(attend(*right, width=1)), (_("divide the scores by √d_head before the softmax"),
                                                _("d_head = num_hiddens / num_heads, the width of one head"))),
            (mha.W_o(attend(*right, dim=-2)), (_("your softmax runs over the queries"),
                                               _("each query's weights over the keys sum to 1: the keys' axis"))),
            (mha.W_o(attend(heads(q, n_q, False), heads(k, n_k, False), heads(v, n_k, False))),
             (_("a reshape to (batch, heads, n, d_head) without the transpose mixes positions into the heads"),
              _("reshape to (batch, n, heads, d_head) first, then move the head axis forward"))),
            (mha.W_o(attend(*right, join=lambda o: o.reshape(B, n_q, -1))),
             (_("the heads were joined without moving them back: (batch, heads, n, d_head) reshaped straight to "
                "(batch, n, num_hiddens) mixes positions"),
              _("bring the query axis in front of the head axis before you merge heads and d_head"))),
            (attend(*right), (_("W_o is missing: the heads side by side still go through the output projection"),
                              _("apply mha.W_o's weight (transposed) at the end"))),
        ]
    return wrong


@check(EINSUM)
def check_einsum_multihead(einsum_multihead):
    """Exercise 5.5: an einsum version equals d2l.MultiHeadAttention, cross-attention sizes included."""
    with seeded(51):
        mha = MultiHeadAttention(12, 3, 0.0, query_size=5, key_size=7, value_size=6).eval()
        queries, keys, values = torch.randn(2, 3, 5), torch.randn(2, 4, 7), torch.randn(2, 4, 6)
    expected = mha(queries, keys, values).detach()
    with without(EINSUM, _("compute it with torch.einsum from mha's weights"),
                 (MultiHeadAttention, "forward", "mha(...)"),
                 (DotProductAttention, "forward", "mha.attention(...)")):
        received = einsum_multihead(queries, keys, values, mha)
    hint = hint_for(received, (
        _("follow the module's steps: project, split into heads, score, softmax, weight the values, join, W_o"),
        _("a Linear layer computes x Wᵀ, so project with each weight's transpose; head i owns the i-th block "
          "of d_head = num_hiddens / num_heads features, and its scores are divided by √d_head, not √num_hiddens"),
        _("softmax over the keys, weight the values, put the heads back side by side as (batch, queries, "
          "num_hiddens), and apply W_o")), _einsum_mistakes(mha, queries, keys, values))
    expect_close(received, expected, EINSUM, hint)
    passed(EINSUM, _("Equal to d2l.MultiHeadAttention, with queries, keys and values of three sizes."))


@check(ONE_HEAD)
def check_head_weights(head_weights):
    """Exercise 5.2: one head's weights from its own rows of W_q and W_k."""
    mha, X = _random_layer(52)
    mha(X, X, X)
    all_heads = mha.attention_weights.detach()  # (batch, heads, n, n)
    mha.attention.attention_weights = None  # the learner computes them, rather than reading them off
    d_head = 12 // 3
    for head in range(3):
        expected = all_heads[:, head]
        with without(ONE_HEAD, _("compute the head's weights from its rows of W_q and W_k"),
                     (MultiHeadAttention, "forward", "mha(...)"),
                     (DotProductAttention, "forward", "mha.attention(...)")):
            received = head_weights(mha, X, head)
        q, k = mha.transpose_qkv(mha.W_q(X)), mha.transpose_qkv(mha.W_k(X))  # (batch*heads, n, d_head)
        scores = (q @ k.transpose(1, 2)).reshape(2, 3, 4, 4)[:, head].detach()  # (batch, n, n)
        interleaved = X @ mha.W_q.weight[head::3].T @ (X @ mha.W_k.weight[head::3].T).transpose(1, 2)
        hint = hint_for(received, (_("head {head} has its own rows of W_q.weight and W_k.weight: rows "
                                     "{first} to {last}").format(head=head, first=head * d_head,
                                                                 last=head * d_head + d_head - 1),
                                   _("project X with those rows (a Linear layer computes x Wᵀ), then softmax "
                                     "the scores divided by √d_head over the keys")),
                        [(torch.softmax(scores / math.sqrt(12), -1),
                          (_("divide by √d_head, the width of one head (here 4), not by √num_hiddens"),
                           _("d_head = num_hiddens / num_heads"))),
                         (torch.softmax(scores, -1), (_("divide the scores by √d_head before the softmax"),
                                                      _("d_head is the width of one head: num_hiddens / num_heads"))),
                         (torch.softmax(scores / 2, 1), (_("your softmax runs over the queries, axis 1"),
                                                         _("each query's row of weights sums to 1: softmax over "
                                                           "the keys, the last axis"))),
                         (torch.softmax(interleaved.detach() / 2, -1),
                          (_("a head owns a block of consecutive rows, not every num_heads-th row"),
                           _("head i owns rows i·d_head to (i + 1)·d_head - 1 of each projection")))])
        expect_close(received, expected, _("{exercise} (head {head})").format(exercise=_(ONE_HEAD), head=head), hint,
                     weights=True)
    passed(ONE_HEAD, _("All three heads match mha.attention_weights."))


@check(SILENCED_HEAD)
def check_output_without_head(output_without_head):
    """Exercise 5.3: silence one head before W_o, then rank the heads by the change it makes."""
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
        hint = hint_for(received, (_("silence head {head} before W_o mixes the heads: features {first} to "
                                     "{last} of the heads side by side must be zero").format(
                                         head=head, first=head * 4, last=head * 4 + 3),
                                   _("recompute the heads' outputs side by side, as the module does before W_o "
                                     "(transpose_output), zero that slice of a copy, then apply W_o")), [
            (full * keep, (_("you zeroed the output after W_o"),
                           _("zero the head's slice of the concatenation before W_o, which mixes every head into "
                             "every feature"))),
            (full, (_("the output is unchanged"), _("zero the head's slice of the concatenation before W_o"))),
        ])
        expect_close(received, expected,
                     _("{exercise} (head {head})").format(exercise=_(SILENCED_HEAD), head=head), hint)
        changes.append((full - expected).norm().item())
    ranking = numbers(_("head {head}: {change:.3f}").format(head=i, change=change)
                      for i, change in enumerate(changes))
    passed(SILENCED_HEAD, _("Output change without each head ({ranking}).").format(ranking=ranking))


def _shown(received):
    """A received count as the learner reads it: a Python number with the language's marks, anything else
    as Python writes it."""
    return number(received) if isinstance(received, (int, float)) else repr(received)


@check(PARAMETERS)
def check_parameter_count(multihead_parameter_count):
    """Exercise 5.1: the count from the formula equals a real module's, for several head counts."""
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
            hint = (_("do not multiply by num_heads: the heads split each projection's num_hiddens rows "
                      "between them"),
                    _("heads × d_head = num_hiddens, whatever the number of heads"))
        elif received == weights_only:
            hint = (_("with bias=True each of the four layers also has biases"), _("num_hiddens biases per layer"))
        elif received == num_hiddens * (query_size + key_size + value_size):
            hint = (_("count W_o too"), _("W_o is num_hiddens × num_hiddens"))
        else:
            hint = (_("count the weights of the four Linear layers, W_q, W_k, W_v and W_o, and their biases "
                      "when bias=True"),
                    _("W_q is (num_hiddens × query_size), W_k and W_v likewise, W_o is "
                      "(num_hiddens × num_hiddens), plus num_hiddens biases per layer when bias=True"))
        require(received == expected, PARAMETERS,
                _("{expected} parameters for num_hiddens={num_hiddens}, num_heads={num_heads}, sizes "
                  "({query_size}, {key_size}, {value_size}), bias={bias}").format(
                    expected=expected, num_hiddens=num_hiddens, num_heads=num_heads, query_size=query_size,
                    key_size=key_size, value_size=value_size, bias=bias), _shown(received), hint)
        counts.append(expected)
    passed(PARAMETERS, _("The count does not depend on num_heads: width 8 costs {one} parameters with "
                         "1 head and {four} with 4.").format(one=counts[0], four=counts[1]))


def _sequence_first_mistakes(X, num_heads):
    """The typical wrong splits of a sequence-first X (T, B, d_model), each with its hint, for ``hint_for``."""
    T, B, d_model = X.shape
    d_head = d_model // num_heads
    by_head = X.reshape(T, B, num_heads, d_head)  # (T, B, h, d_head)
    return [
        (X.reshape(B * num_heads, T, d_head),
         (_("a reshape alone never moves a number: each batch row mixes positions, examples and heads"),
          _("a reshape only regroups the numbers in the order they lie in memory; bringing an axis forward takes "
            "a permute or a transpose"))),
        (X.reshape(B, T, num_heads, d_head).permute(0, 2, 1, 3).reshape(B * num_heads, T, d_head),
         (_("you reshaped X as if it were (B, T, d_model): a reshape renames the axes without moving the numbers, "
            "so positions and examples got mixed"),
          _("in X the positions come first; putting the examples in front of them takes a permute or a transpose"))),
        (by_head.transpose(0, 1).reshape(B * num_heads, T, d_head),
         (_("the examples came to the front, but the head axis still sits behind the positions: the heads mix "
            "positions"),
          _("before merging, the head axis must also come in front of the position axis"))),
        (by_head.permute(2, 1, 0, 3).reshape(B * num_heads, T, d_head),
         (_("the batch rows are merged in the wrong order: head first, then example"),
          _("row b·num_heads + i must be head i of example b, the order in which the valid lengths are repeated "
            "(repeat_interleave): keep the example axis in front of the head axis when you merge them"))),
        (by_head.permute(0, 2, 1, 3).reshape(T * num_heads, B, d_head),
         (_("you folded the heads into the first axis of X, which here is the positions, not the examples"),
          _("the result holds the examples' heads as batch rows and the positions as its second axis: "
            "(B·num_heads, T, d_head)"))),
        (X.reshape(T, B, d_head, num_heads).permute(1, 3, 0, 2).reshape(B * num_heads, T, d_head),
         (_("the head index is taken from the wrong end: head i got every num_heads-th feature, interleaved"),
          _("head i owns the block of d_head consecutive features i·d_head to (i + 1)·d_head - 1, so the "
            "feature axis splits as (heads, d_head), heads first"))),
    ]


@check(SPLIT)
def check_split_heads_seq_first(split_heads_seq_first):
    """Exercise 5.4: a sequence-first (T, B, d_model) tensor split into transpose_qkv's batch; wrong splits named."""
    cases = [(5, 2, 12, 3), (4, 3, 8, 2), (3, 3, 6, 3)]  # (T, B, d_model, heads)
    for T, B, d_model, num_heads in cases:
        with seeded(55):  # building the module draws its W_o
            X = torch.randn(T, B, d_model)
            expected = MultiHeadAttention(d_model, num_heads, 0.0).transpose_qkv(X.transpose(0, 1))  # (B·h, T, d_head)
        with without(SPLIT, _("split the heads into the batch"),
                     (MultiHeadAttention, "transpose_qkv", "mha.transpose_qkv(...)"),
                     (MultiHeadAttention, "split_heads", "mha.split_heads(...)")):
            received = split_heads_seq_first(X.clone(), num_heads)
        hint = hint_for(received, (_("work out where each axis of X has to go: the result's axes are (example and "
                                     "head together, position, feature of the head)"),
                                   _("split the feature axis into (heads, d_head) first; then one permute can put "
                                     "the example, head and position axes in the order the result needs, before "
                                     "you merge the first two")),
                        _sequence_first_mistakes(X, num_heads))
        expect_close(received, expected, f"{_(SPLIT)} (T={T}, B={B}, d_model={d_model}, num_heads={num_heads})", hint)
    passed(SPLIT, _("Each batch row holds one head of one example, its positions in order down its rows: "
                    "the examples and the heads both had to move in front of the positions."))
