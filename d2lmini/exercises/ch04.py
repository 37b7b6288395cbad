"""Checks for chapter 04, scaled dot-product attention."""

import inspect

import torch
import torch.nn.functional as F

import d2lmini

from ..attention import DotProductAttention
from ..i18n import N_, _, number
from ..masking import causal_valid_lens, masked_softmax
from ._feedback import ExerciseError, check, describe, expect_close, passed, require
from ._feedback import hint as hint  # an error asks the learner to run ch04.hint()
from ._support import hint_for, seeded, without

DISTANCE = N_("Exercise 4.3 · the Gaussian kernel as dot-product attention")
SUMMATION = N_("Exercise 4.1 · the summation score")
COST = N_("Exercise 4.2 · the cost of attention")
CAUSAL = N_("Exercise 4.5 · a causal mask with a prefix")
SPOT_THE_BUG = N_("Exercise 4.4 · spot the bug")


def _pair_shapes(received):
    """What a learner's answer to Exercise 4.3 is, in a few words: a pair's shapes, or its type."""
    if isinstance(received, tuple) and all(isinstance(x, torch.Tensor) for x in received):
        shapes = ", ".join(str(tuple(x.shape)) for x in received)
        return _("a tuple of tensors of shapes {shapes}").format(shapes=shapes)
    if isinstance(received, torch.Tensor):
        return _("one tensor of shape {shape}").format(shape=tuple(received.shape))
    return f"{type(received).__name__} {received!r}"


def _describe_shift(shift):
    """The number that right dot products add to qᵀk - ½‖k‖², in a few words: one value, or one per query."""
    per_query = shift[..., 0]  # (2, 3)
    if torch.allclose(per_query, per_query.flatten()[0].expand_as(per_query), atol=1e-4, rtol=1e-4):
        return _("{shift:.4g}, the same for every query and key").format(shift=per_query.flatten()[0].item())
    return _("a number that changes from query to query but is the same for every key of a query")


def _require_longer_pair(received):
    """Exercise 4.3's answer as (longer_queries, longer_keys), once it is a pair of tensors of the inputs'
    batch and counts, each at least one coordinate longer; the inputs are (2, 3, 4) and (2, 5, 4)."""
    require(isinstance(received, tuple) and len(received) == 2
            and all(isinstance(x, torch.Tensor) for x in received), DISTANCE,
            _("a pair (longer_queries, longer_keys) of tensors"), _pair_shapes(received),
            (_("return the longer queries and the longer keys, as a tuple of two tensors"),
             _("the check computes the dot products itself, from the two longer tensors")))
    longer_queries, longer_keys = received
    shapes_fit = (longer_queries.dim() == 3 and longer_keys.dim() == 3 and longer_queries.shape[:2] == (2, 3)
                  and longer_keys.shape[:2] == (2, 5) and longer_queries.shape[-1] == longer_keys.shape[-1])
    if shapes_fit and longer_queries.shape[-1] == 4:
        hint = (_("nothing was appended: the vectors still have d coordinates"),
                _("add one coordinate at the end of every query and every key, along the feature axis"))
    else:
        hint = (_("append along the last axis, the features: (B, n_q, d) becomes (B, n_q, d + 1), and "
                  "(B, n_k, d) becomes (B, n_k, d + 1)"), _("torch.cat joins tensors along the axis you name"))
    require(shapes_fit and longer_queries.shape[-1] > 4, DISTANCE,
            _("shapes (2, 3, 5) and (2, 5, 5): 3 queries and 5 keys of size 4, each one coordinate longer"),
            _pair_shapes(received), hint)
    return longer_queries, longer_keys


def _distance_hint(weights, scores, dots, keys, half_key_norms, half_query_norms):
    """The hint for Exercise 4.3's ``weights`` (the softmax of the answer's dot products ``scores``) that are
    not the kernel's: the typical wrong dot products, each named once, or the general hint."""
    expected = dots - half_key_norms  # the dot products of the simplest answer
    # Most are compared by their softmax, as the answer is, so a mistake shifted by one number per query is
    # still named; -½‖q‖² is named by its dot products, since its weights are those of plain qᵀk.
    by_weights = [
        (dots, (_("the appended coordinates add nothing to the weights: the dot products are plain qᵀk, or qᵀk "
                  "plus a number that is the same for every key of a query, which the softmax drops"),
                _("the appended pair must multiply to -½‖k‖², a number that changes from key to key"))),
        (dots - 2 * half_key_norms, (_("halve the squared norm of the keys"), _("-½‖k‖², not -‖k‖²"))),
        (dots - 0.5 * keys.norm(dim=-1).unsqueeze(1),
         (_("‖k‖² is the squared length: square the norm, or sum the squared entries"),
          _("a norm is ‖k‖, the square root of the sum of squares; ‖k‖² takes no root"))),
        (dots + half_key_norms,
         (_("check the sign of the key's appended number"), _("the bias is -½‖k‖², not +½‖k‖²"))),
        (-expected, (_("check the signs"), _("+qᵀk and -½‖k‖²"))),
    ]
    by_scores = [
        (dots - half_query_norms, (_("the appended pair must give -½‖k‖² (one value per key), not -½‖q‖²"),
                                   _("the key's norm changes along a row of scores; the query's does not"))),
    ]
    hint = hint_for(weights, (_("the score is qᵀk - ½‖k‖², whose softmax is the kernel's weights: the first d "
                                "coordinates already give qᵀk, so the appended pair must multiply to -½‖k‖²"),
                              _("the query's appended number must be the same for every query, since the bias "
                                "belongs to the key alone; the key's appended number is then its bias"),
                              _("append 1 to every query and -½‖k‖² to every key")),
                    [(masked_softmax(wrong, None), hint) for wrong, hint in by_weights])
    return hint_for(scores, hint, by_scores)


def _require_one_coordinate(received, scores, expected, half_query_norms):
    """Exercise 4.3's right weights from vectors one coordinate longer, not more."""
    appended = received[0].shape[-1] - 4
    if torch.allclose(scores, expected - half_query_norms, atol=1e-5, rtol=1e-4):
        hint = (_("your vectors give the full -½‖q - k‖²: its softmax is right, but one appended coordinate is "
                  "enough"),
                _("drop the -½‖q‖² part: it is the same for every key of a row, so it cancels in the softmax"))
    else:
        hint = (_("your weights are right, but you appended {count} coordinates: one is enough").format(count=appended),
                _("the first d coordinates already give qᵀk; one appended pair can multiply to -½‖k‖²"))
    require(appended == 1, DISTANCE, _("shapes (2, 3, 5) and (2, 5, 5): one appended coordinate"),
            _pair_shapes(received), hint)


@check(DISTANCE)
def check_distance_scores(distance_as_dot_product):
    """Exercise 4.3: one appended coordinate gives dot products whose softmax is the Gaussian kernel's weights.

    The weights are what the check compares: dot products that differ from qᵀk - ½‖k‖² by one number per query
    give the same softmax, so they pass, and the success line says so.
    """
    with seeded(41):
        queries, keys = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    received = distance_as_dot_product(queries.clone(), keys.clone())
    longer_queries, longer_keys = _require_longer_pair(received)
    dots = torch.bmm(queries, keys.transpose(1, 2))  # (2, 3, 5)
    half_key_norms = 0.5 * (keys ** 2).sum(-1).unsqueeze(1)  # (2, 1, 5)
    half_query_norms = 0.5 * (queries ** 2).sum(-1).unsqueeze(2)  # (2, 3, 1)
    expected = dots - half_key_norms  # the dot products of the simplest answer
    scores = torch.bmm(longer_queries.detach().double(), longer_keys.detach().double().transpose(1, 2)).float()
    kernel_weights = torch.softmax(-0.5 * torch.cdist(queries, keys) ** 2, dim=-1)  # (2, 3, 5)
    weights = masked_softmax(scores, None)
    require(torch.allclose(weights, kernel_weights, atol=1e-5, rtol=1e-4), DISTANCE,
            _("the Gaussian kernel's weights softmax(-½‖q - k‖²) = {weights}").format(weights=describe(kernel_weights)),
            _("the softmax of your dot products = {weights}").format(weights=describe(weights)),
            _distance_hint(weights, scores, dots, keys, half_key_norms, half_query_norms))
    _require_one_coordinate(received, scores, expected, half_query_norms)
    shift = scores - expected  # (2, 3, 5): one number per query when the weights are right
    detail = _("The softmax of their dot products is the Gaussian kernel's weights, softmax(-½‖q - k‖²): "
               "Gaussian-kernel attention is dot-product attention on vectors one coordinate longer.")
    if not torch.allclose(shift, torch.zeros_like(shift), atol=1e-5, rtol=1e-4):
        detail += " " + _("Your dot products are qᵀk - ½‖k‖² plus {shift}: the softmax drops such a number, as it "
                          "dropped the query's sum in Exercise 4.1.").format(shift=_describe_shift(shift))
    passed(DISTANCE, detail)



@check(SUMMATION)
def check_sum_scores(sum_scores):
    """Exercise 4.1: Σ(qᵢ + kᵢ), and the discovery that it ignores the query."""
    with seeded(42):
        queries, keys = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    expected = queries.sum(-1).unsqueeze(2) + keys.sum(-1).unsqueeze(1)  # (2, 3, 1) + (2, 1, 5)
    received = sum_scores(queries, keys)
    hint = (_("the score of q and k is Σᵢ (qᵢ + kᵢ), which is the sum of q's features plus the sum of k's"),
            _("sum each query over its features, shape (B, n_q, 1), and each key, shape (B, 1, n_k); adding the two "
              "broadcasts to one score per pair"))
    if isinstance(received, torch.Tensor) and received.dim() == 4:
        hint = _("a score is one number per (query, key) pair: also sum over the feature axis")
    query_sums, key_sums = queries.sum(-1).unsqueeze(2), keys.sum(-1).unsqueeze(1)  # (2, 3, 1), (2, 1, 5)
    hint = hint_for(received, hint, [
        (key_sums.expand(-1, 3, -1), (_("the query's sum is missing: it changes no weight, but the score "
                                        "Σᵢ (qᵢ + kᵢ) contains it"), _("add each query's sum to its row of scores"))),
        (query_sums * key_sums, (_("you multiplied the two sums: the score adds them"),
                                 "Σᵢ (qᵢ + kᵢ) = Σᵢ qᵢ + Σᵢ kᵢ")),
    ])
    expect_close(received, expected, SUMMATION, hint)
    weights = masked_softmax(received.detach(), None)  # (2, 3, 5)
    spread = (weights - weights[:, :1]).abs().max().item()  # how far any query's row is from the first's
    passed(SUMMATION, _("Largest difference between the weights of two queries: {spread:.3f}. The query's "
                        "sum adds the same number to every score of its row, so the softmax drops it: "
                        "every query attends the same way, which makes it a useless score.").format(spread=spread))


@check(COST)
def check_attention_cost(attention_cost):
    """Exercise 4.2: 2·n_q·n_k·d multiply-adds and n_q·n_k weights, checked against a real call."""
    num_queries, num_keys, d = 6, 9, 5
    attention = DotProductAttention(dropout=0.0)
    with seeded(43):
        attention(torch.randn(1, num_queries, d), torch.randn(1, num_keys, d), torch.randn(1, num_keys, d))
    weights = attention.attention_weights
    measured_bytes = weights.numel() * weights.element_size()
    received = attention_cost(num_queries, num_keys, d)
    require(isinstance(received, tuple) and len(received) == 2, COST,
            _("a pair (multiply_adds, weight_bytes)"), repr(received), _("return two numbers, as a tuple"))
    multiply_adds, weight_bytes = received
    require(weight_bytes == measured_bytes, COST,
            _("{bytes} bytes, measured on the weights of a real call with {queries} queries "
              "and {keys} keys in float32").format(bytes=measured_bytes, queries=num_queries, keys=num_keys),
            number(weight_bytes),
            (_("the weight matrix holds one float32 (4 bytes) per (query, key) pair"),
             _("it has num_queries rows and num_keys columns")))
    expected_adds = 2 * num_queries * num_keys * d
    hints = {num_queries * num_keys * d: (_("you counted QKᵀ only"), _("the product αV costs as much again")),
             2 * (num_queries + num_keys) * d: (_("every query meets every key: the count grows with "
                                                  "num_queries × num_keys, not their sum"),
                                                _("each of the n_q·n_k scores is a dot product of length d, "
                                                  "and αV costs as much again")),
             2 * expected_adds: (_("you counted two operations per multiply-add: count each multiply-add once"),
                                 _("a multiply-add is one multiplication and the addition that follows it, "
                                   "counted together"))}
    require(multiply_adds == expected_adds, COST,
            _("{count} multiply-adds for n_q={queries}, n_k={keys}, d={d}").format(
                count=expected_adds, queries=num_queries, keys=num_keys, d=d), number(multiply_adds),
            hints.get(multiply_adds, (_("count the multiply-adds of the two matrix products, QKᵀ and αV"),
                                      _("QKᵀ is (n_q × d) times (d × n_k): n_q·n_k·d multiply-adds; then αV is "
                                        "(n_q × n_k) times (n_k × d)"))))
    half_precision_bytes = attention_cost(4, 4, 1, bytes_per_element=2)[1]
    require(half_precision_bytes == 32, COST,
            _("32 bytes for a 4 × 4 weight matrix in float16"), number(half_precision_bytes),
            (_("use the bytes_per_element argument instead of assuming 4"), _("multiply by bytes_per_element")))
    small, large = attention_cost(1024, 1024, 64), attention_cost(2048, 2048, 64)
    passed(COST, _("At n = 1024 and d = 64 the weights of one example take {mebibytes:.0f} MiB; "
                   "doubling n multiplies both costs by {factor:.0f}.").format(mebibytes=small[1] / 2 ** 20,
                                                                               factor=large[0] / small[0]))


# The typical mistakes of causal attention, named once for the two exercises that build it.
_CAUSAL_HINTS = {
    "general": (N_("query i may attend to keys j ≤ i only: the scores of later keys must be -inf before the softmax"),
                N_("torch.tril of an (n, n) matrix of True keeps the entries on and below the diagonal, the allowed "
                   "pairs; set the scores outside it to -inf")),
    "flipped": (N_("your mask keeps the future and hides the past: use torch.tril, not torch.triu"),
                N_("the allowed keys of query i are 0 to i: on and below the diagonal")),
    "diagonal": (N_("the diagonal is masked: query i may also attend to itself, key i"),
                 N_("without it query 0 has no key left, and its row is softmax(-inf, ..., -inf) = NaN")),
    "one_too_many": (N_("one key too many: query i also sees key i + 1, one step into the future"),
                     N_("the allowed keys of query i are 0 to i, so the mask is on and below the main diagonal")),
    "unscaled": (N_("divide the scores by √d before the softmax"), N_("d is the size of a query, its last axis")),
    "by_d": (N_("you divided the scores by d: the scale is √d"), N_("torch.sqrt or math.sqrt of the query size")),
    "after_softmax": (N_("you zeroed the weights after the softmax, so the rows no longer sum to 1"),
                      N_("mask the scores with -inf before the softmax: then the weight the future keys would "
                         "have taken goes to the allowed ones")),
    "zero_scores": (N_("a score of 0 is not a masked score: exp(0) = 1 still gives the future keys weight"),
                    N_("fill the scores of the future keys with -inf, whose exp is 0")),
    "key_axis": (N_("your softmax runs over the queries, axis 1: each row of weights, one per query, must sum to 1"),
                 N_("the keys are the last axis of the scores: softmax over dim=-1")),
    "as_given": (N_("this is still the function as given: the past gets the right pattern, but each row's weights "
                    "no longer sum to 1"),
                 N_("look at the order of the steps: what happens to the weight the future keys had?"),
                 N_("compare a row of the given function's output with the same row of the softmax over the allowed "
                    "keys alone")),
    "unmasked": (N_("the mask has no effect on the result"),
                 N_("masked_fill returns a new tensor: use what it returns, and apply it to the scores before the "
                    "softmax")),
}


def _scaled_scores(queries, keys):
    return torch.bmm(queries, keys.transpose(1, 2)) / queries.shape[-1] ** 0.5  # (B, n, n)


def _causal_weight_mistakes(queries, keys):
    """The weights of each typical wrong causal attention, with its hint from ``_CAUSAL_HINTS``."""
    scores = _scaled_scores(queries, keys)
    n, d = scores.shape[-1], queries.shape[-1]
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    minus_inf = float("-inf")

    def weights(scores, allowed, dim=-1):
        return torch.softmax(scores.masked_fill(~allowed, minus_inf), dim)

    wrong = {
        "flipped": weights(scores, allowed.T.clone()),
        "diagonal": weights(scores, allowed.tril(-1)),
        "one_too_many": weights(scores, torch.ones(n, n, dtype=torch.bool).tril(1)),
        "unscaled": weights(scores * d ** 0.5, allowed),
        "by_d": weights(scores / d ** 0.5, allowed),
        "after_softmax": torch.softmax(scores, -1) * allowed,
        "zero_scores": torch.softmax(scores.masked_fill(~allowed, 0.0), -1),
        "key_axis": weights(scores, allowed, dim=1),
    }
    return [(wrong[name], _CAUSAL_HINTS[name]) for name in wrong]


# The typical mistakes of a prefix, the step of Exercise 4.5 beyond the plain causal mask.
_PREFIX_KEYS = N_("a prefix of p tokens is keys 0 to p - 1")
_PREFIX_HINTS = {
    "general": (N_("query i may attend to keys 0 to max(i, p - 1): the whole prefix, then the past and itself"),
                N_("start from the causal triangle of torch.tril, then allow the first p keys in every row")),
    "ignored": (N_("the prefix changes nothing in your output: its queries still see only the keys up to "
                   "themselves"),
                N_("the first p tokens are given at once, so each of them may see all p; allow the first p columns "
                   "in every row")),
    "sees_all": (N_("your prefix queries see the whole sequence, the later tokens too: they may see the prefix "
                    "only"),
                 N_("a prefix query may attend to keys 0 to p - 1; the causal triangle still holds for every key "
                    "after the prefix")),
    "too_long": (N_("your prefix is one token too long"), _PREFIX_KEYS),
    "too_short": (N_("your prefix is one token too short"), _PREFIX_KEYS),
    "rows": (N_("you allowed the prefix's rows, its queries, to see every key, the future included: with the default "
                "prefix=1 query 0 already sees the whole sequence. The prefix is a set of keys that every query may "
                "see"),
             N_("a row of the mask is a query and a column a key: allow the first p columns, and leave the rows of "
                "the prefix to the causal triangle")),
    "no_argument": (N_("your function takes no prefix: add the argument prefix=1 after values"),
                    N_("with prefix=1 it is the plain causal attention you have; the check then calls it with "
                       "prefix=3")),
}


# The shape of an answer to Exercise 4.5, for each call the check makes.
_OUTPUT_SHAPE = (N_("return the output, (B, n, d_v): one row of the values' size for each query"),
                 N_("the weights, (B, n, n), are one step before it: multiply them by the values"))
_WEIGHTS_RETURNED = (N_("that is the weights, one per query and key: the exercise asks for the output"),
                     _OUTPUT_SHAPE[1])


def _expect_output_shape(received, expected, call):
    """The output of ``call`` has the shape of ``expected``, with a hint that names returning the weights."""
    require(isinstance(received, torch.Tensor), CAUSAL, _("a torch.Tensor from {call}").format(call=call),
            type(received).__name__, _OUTPUT_SHAPE)
    batch, n = expected.shape[:2]
    require(received.shape == expected.shape, CAUSAL,
            _("shape {shape} from {call}").format(shape=tuple(expected.shape), call=call),
            _("shape {shape}").format(shape=tuple(received.shape)),
            _WEIGHTS_RETURNED if tuple(received.shape) == (batch, n, n) else _OUTPUT_SHAPE)


def _prefix_allowed(n, prefix):
    """The (n, n) mask of a prefix of ``prefix`` tokens: the causal triangle, plus the first columns."""
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    allowed[:, :prefix] = True
    return allowed


def _example_query(index):
    """An output row of (batch, queries, values) named as the learner's call sees it."""
    return _("example {example}, query {query}").format(example=index[0], query=index[1])


@check(CAUSAL)
def check_causal_attention(causal_attention):
    """Exercise 4.5: the tril mask equals DotProductAttention with causal valid lengths; a prefix of p tokens
    equals it with the valid lengths max(i + 1, p)."""
    batch, n, prefix = 2, 5, 3
    with seeded(44):
        queries, keys, values = torch.randn(batch, n, 4), torch.randn(batch, n, 4), torch.randn(batch, n, 3)
    attention = DotProductAttention(dropout=0.0)
    expected = attention(queries, keys, values, causal_valid_lens(batch, n))
    prefix_lens = causal_valid_lens(batch, n).clamp(min=prefix)  # (batch, queries): 3, 3, 3, 4, 5
    expected_with_prefix = attention(queries, keys, values, prefix_lens)
    blocked = ((DotProductAttention, "forward", "d2l.DotProductAttention"),
               (F, "scaled_dot_product_attention", "F.scaled_dot_product_attention"),
               (d2lmini, "attention_mask", "d2l.attention_mask"),
               (d2lmini, "causal_valid_lens", "d2l.causal_valid_lens"))
    with without(CAUSAL, _("build the mask with torch.tril and apply it to the scores"), *blocked):
        received = causal_attention(queries, keys, values)

    plain_call = "causal_attention(queries, keys, values)"
    prefix_call = f"causal_attention(queries, keys, values, prefix={prefix})"
    _expect_output_shape(received, expected, plain_call)
    scores = _scaled_scores(queries, keys)

    def output(allowed):
        return torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1) @ values

    rows = torch.ones(n, n, dtype=torch.bool).tril()
    rows[:1] = True  # the prefix's rows allowed, not its columns, at the default prefix=1
    mistakes = [(weights @ values, hint) for weights, hint in _causal_weight_mistakes(queries, keys)]
    mistakes.append((torch.softmax(scores, -1) @ values, _CAUSAL_HINTS["unmasked"]))
    mistakes.append((output(rows), _PREFIX_HINTS["rows"]))
    hint = hint_for(received, _CAUSAL_HINTS["general"], mistakes)
    expect_close(received, expected, _("{exercise}, {call}").format(exercise=_(CAUSAL), call=plain_call), hint,
                 name_row=_example_query)

    try:
        inspect.signature(causal_attention).bind(queries, keys, values, prefix=prefix)
    except TypeError:
        raise ExerciseError(CAUSAL, _("a function that takes {signature}").format(
                                signature="(queries, keys, values, prefix=1)"),
                            _("a function that takes {signature}").format(
                                signature=inspect.signature(causal_attention)),
                            _PREFIX_HINTS["no_argument"]) from None
    with without(CAUSAL, _("build the mask with torch.tril and apply it to the scores"), *blocked):
        received = causal_attention(queries, keys, values, prefix=prefix)
    _expect_output_shape(received, expected_with_prefix, prefix_call)
    sees_all = _prefix_allowed(n, prefix)
    sees_all[:prefix] = True
    wrong = {"ignored": output(_prefix_allowed(n, 1)), "sees_all": output(sees_all),
             "too_long": output(_prefix_allowed(n, prefix + 1)), "too_short": output(_prefix_allowed(n, prefix - 1))}
    hint = hint_for(received, _PREFIX_HINTS["general"], [(wrong[name], _PREFIX_HINTS[name]) for name in wrong])
    expect_close(received, expected_with_prefix, _("{exercise}, {call}").format(exercise=_(CAUSAL), call=prefix_call),
                 hint, name_row=_example_query)
    passed(CAUSAL, _("Equal to DotProductAttention with causal_valid_lens, and with a prefix of {prefix} to "
                     "DotProductAttention with the valid lengths {lengths}: a prefix is one more set of valid "
                     "lengths, max(i + 1, p).").format(prefix=prefix,
                                                       lengths=", ".join(map(str, prefix_lens[0].tolist()))))


@check(SPOT_THE_BUG)
def check_fixed_causal_weights(causal_weights):
    """Exercise 4.4: the given function zeroes the future after the softmax; the fix masks the scores before it."""
    with seeded(45):
        queries, keys = torch.randn(2, 5, 4), torch.randn(2, 5, 4)
    expected = masked_softmax(_scaled_scores(queries, keys), causal_valid_lens(2, 5))  # (2, 5, 5)
    with without(SPOT_THE_BUG, _("fix the given function's own steps"),
                 (DotProductAttention, "forward", "d2l.DotProductAttention"),
                 (F, "scaled_dot_product_attention", "F.scaled_dot_product_attention"),
                 (d2lmini, "masked_softmax", "d2l.masked_softmax"),
                 (d2lmini, "attention_mask", "d2l.attention_mask"),
                 (d2lmini, "causal_valid_lens", "d2l.causal_valid_lens")):
        received = causal_weights(queries, keys)
    mistakes = _causal_weight_mistakes(queries, keys)
    as_given = next(weights for weights, hint in mistakes if hint is _CAUSAL_HINTS["after_softmax"])
    hint = hint_for(received, _CAUSAL_HINTS["general"], [(as_given, _CAUSAL_HINTS["as_given"]), *mistakes])
    expect_close(received, expected, SPOT_THE_BUG, hint, weights=True)
    passed(SPOT_THE_BUG, _("Each row sums to 1 over keys 0..i, as masked_softmax gives it."))
