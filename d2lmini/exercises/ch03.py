"""Checks for chapter 03, additive attention."""

import torch

from ..attention import AdditiveAttention, DotProductAttention
from ..i18n import N_, _
from ._feedback import check, expect_close, passed
from ._feedback import hint as hint  # an error asks the learner to run ch03.hint()
from ._support import hint_for, seeded

CONCATENATION = N_("Exercise 3.3 · the concatenation form")
WEIGHT_GAP = N_("Exercise 3.2 · additive versus dot-product weights")
BILINEAR = N_("Exercise 3.1 · a score from matrix products only")


def _module_scores(attention, queries, keys):
    """w_vᵀ tanh(W_q q + W_k k) from an ``AdditiveAttention``'s own layers, (B, n_q, n_k)."""
    features = torch.tanh(attention.W_q(queries).unsqueeze(2) + attention.W_k(keys).unsqueeze(1))
    return attention.w_v(features).squeeze(-1).detach()


@check(CONCATENATION)
def check_concat_scores(concat_scores):
    """Exercise 3.3: w_vᵀ tanh(W_a [q; k]) for every pair equals the split form."""
    with seeded(31):
        queries, keys = torch.randn(2, 3, 5), torch.randn(2, 4, 3)
        attention = AdditiveAttention(num_hiddens=6, dropout=0.0, key_size=3, query_size=5)
    W_a = torch.cat([attention.W_q.weight, attention.W_k.weight], dim=1).detach()  # (6, 5 + 3)
    w_v = attention.w_v.weight[0].detach()  # (6,)
    expected = _module_scores(attention, queries, keys)
    received = concat_scores(queries, keys, W_a, w_v)

    swapped = torch.cat([keys.unsqueeze(1).expand(2, 3, 4, 3), queries.unsqueeze(2).expand(2, 3, 4, 5)], -1)
    no_tanh = torch.cat([queries.unsqueeze(2).expand(2, 3, 4, 5), keys.unsqueeze(1).expand(2, 3, 4, 3)], -1)
    hint = hint_for(received, (
        _("each (query, key) pair gets one score, w_vᵀ tanh(W_a [q; k])"),
        _("build [q; k] for every pair, a (B, n_q, n_k, d_q + d_k) tensor: expand the queries along the key "
          "axis and the keys along the query axis, join them on the last axis, then apply W_a, tanh and w_v")), [
            (torch.tanh(swapped @ W_a.T) @ w_v,
             (_("you stacked [k; q]: put the query first"), _("W_a's first d_q columns belong to the query"))),
            (no_tanh @ W_a.T @ w_v,
             (_("the tanh is missing"), _("apply tanh to W_a [q; k] before the product with w_v"))),
        ])
    if isinstance(received, torch.Tensor) and received.shape == (2, 3, 4, 1):
        hint = (_("drop the last axis of length 1"), _("a product with the vector w_v, rather than with a one-column "
                                                       "matrix, leaves no such axis"))
    expect_close(received, expected, CONCATENATION, hint)
    passed(CONCATENATION, _("W_a [q; k] scores equal d2l.AdditiveAttention's W_q q + W_k k scores."))


@check(WEIGHT_GAP)
def check_weight_gap(weight_gap):
    """Exercise 3.2: zero gap for identical keys, the true gap for random keys and for keys (1, t)."""
    with seeded(32):
        random_queries = torch.randn(2, 3, 2)
        random_keys = torch.randn(2, 8, 2)
        values = torch.randn(2, 8, 4)
        additive = AdditiveAttention(num_hiddens=8, dropout=0.0, key_size=2, query_size=2)
        with torch.no_grad():
            additive.w_v.weight.mul_(4)  # sharper scores, so the two weightings differ clearly
    valid_lens = torch.tensor([3, 6])
    identical_keys = torch.ones(2, 8, 2)
    # Queries along (1, 0) and keys (1, t): every key has the same component along every query.
    along = (torch.tensor([0.5, 1.0, 2.0])[:, None] * torch.tensor([1.0, 0.0])).expand(2, 3, 2)
    sideways_keys = torch.stack([torch.ones(8), torch.linspace(-2, 2, 8)], dim=-1).expand(2, 8, 2)

    dot_product = DotProductAttention(dropout=0.0)
    gaps = {}
    cases = ((N_("identical keys"), random_queries, identical_keys), (N_("random keys"), random_queries, random_keys),
             (N_("keys (1, t)"), along, sideways_keys))
    for name, queries, keys in cases:
        additive(queries, keys, values)
        dot_product(queries, keys, values)
        unmasked_gap = (additive.attention_weights - dot_product.attention_weights).abs().max().detach()
        output_gap = (additive(queries, keys, values, valid_lens)
                      - dot_product(queries, keys, values, valid_lens)).abs().max().detach()
        expected = (additive.attention_weights - dot_product.attention_weights).abs().max().detach()
        received = weight_gap(additive, queries, keys, values, valid_lens)
        if isinstance(received, torch.Tensor) and received.numel() == 1:
            received = received.detach().reshape(())
        hint = hint_for(received, (_("compare the two modules' attention weights on the same inputs"),
                                   _("call both modules with the same queries, keys, values and valid_lens, "
                                     "then take the largest absolute difference of their attention_weights")), [
            (output_gap, (_("you compared the outputs, not the weights"),
                          _("compare the attention_weights that each module stores after a call"))),
            (unmasked_gap, (_("pass valid_lens to both calls"), _("padding keys must get weight 0 in both"))),
        ])
        expect_close(received, expected, f"{_(WEIGHT_GAP)} ({_(name)})", hint)
        gaps[name] = expected.item()
    passed(WEIGHT_GAP, _("Gap with identical keys: {identical:.3f}; with random keys: {random:.3f}; with keys "
                         "(1, t): {sideways:.3f}. Against a query along (1, 0), every key (1, t) has the same dot "
                         "product, so the dot product weights them equally; the additive network sees the whole "
                         "key and tells them apart.").format(identical=gaps["identical keys"],
                                                             random=gaps["random keys"], sideways=gaps["keys (1, t)"]))


@check(BILINEAR)
def check_bilinear_scores(bilinear_scores):
    """Exercise 3.1: a score from matrix products only (qᵀ W k) for every pair, with different sizes."""
    with seeded(33):
        queries, keys, W = torch.randn(2, 3, 5), torch.randn(2, 4, 2), torch.randn(5, 2)
        same_size_keys = torch.randn(2, 4, 5)
    received = bilinear_scores(queries, keys, W)
    expected = torch.einsum("bqi,ij,bkj->bqk", queries, W, keys)
    hint = hint_for(received, (_("W has shape (d_q, d_k): a product with W turns a key into a vector of a "
                                 "query's size. Which score of two vectors of equal size must W = I give?"),
                               _("score the query against W k by a dot product, qᵀ (W k) = qᵀ W k: multiply the "
                                 "queries (B, n_q, d_q) by W (d_q, d_k), then by the keys with their last two "
                                 "axes swapped, (B, d_k, n_k)")),
                    [(-expected, (_("check the sign"), _("the score is +qᵀ W k"))),
                     (expected.transpose(1, 2), (_("your result has one row per key: rows are queries, columns "
                                                   "keys"), _("the queries come first in the product, the keys' "
                                                              "transpose last"))),
                     (expected / 5 ** 0.5, (_("the bilinear score has no scale: W already sets how large it is"),
                                            _("leave out the division by √d")))])
    expect_close(received, expected, BILINEAR, hint)

    received = bilinear_scores(queries, same_size_keys, torch.eye(5))
    expected = torch.bmm(queries, same_size_keys.transpose(1, 2))  # the unscaled dot product
    expect_close(received, expected, f"{_(BILINEAR)} (W = I)", _("with W = I the result must be the dot product qᵀk"))
    passed(BILINEAR, _("This is the bilinear score qᵀ W k: with W = I it is the unscaled dot product, and any W "
                       "lets q and k differ in size."))
