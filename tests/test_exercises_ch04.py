"""Chapter 04's checks accept right answers and name the typical wrong ones."""

import pytest
import torch
from exercise_answers import (
    attention_cost,
    causal_attention,
    causal_weights,
    causal_weights_with_a_bug,
    distance_as_dot_product,
    sum_scores,
)

import d2lmini as d2l
from d2lmini.exercises import ExerciseError, ch04


def test_the_spot_the_bug_check_accepts_a_fix_that_renormalises_the_rows(capsys):
    ch04.check_fixed_causal_weights(causal_weights)
    def renormalised(queries, keys):
        weights = causal_weights_with_a_bug(queries, keys)
        return weights / weights.sum(-1, keepdim=True)

    ch04.check_fixed_causal_weights(renormalised)
    assert capsys.readouterr().out.count("✓ Exercise 4.4") == 2


def test_the_function_as_given_is_recognised_and_nudged_without_the_fix():
    with pytest.raises(ExerciseError) as info:
        ch04.check_fixed_causal_weights(causal_weights_with_a_bug)
    assert info.value.hints[0].startswith("this is still the function as given: ")
    assert not any("-inf" in step or "before the softmax" in step for step in info.value.hints)


# ---- Exercise 4.3 -------------------------------------------------------------

def test_distance_as_dot_product_accepts_the_extra_coordinate_first(capsys):
    def first(queries, keys):
        longer_queries, longer_keys = distance_as_dot_product(queries, keys)
        return longer_queries.roll(1, -1), longer_keys.roll(1, -1)

    ch04.check_distance_scores(first)
    assert "dot-product attention on vectors one coordinate longer" in capsys.readouterr().out


def test_distance_as_dot_product_passes_a_shift_the_softmax_drops_and_says_so(capsys):
    ch04.check_distance_scores(distance_as_dot_product)
    assert "plus" not in capsys.readouterr().out  # the exact dot products: nothing to remark on
    ch04.check_distance_scores(
        lambda q, k: distance_as_dot_product(q, k, key_end=lambda k: 3 - 0.5 * (k ** 2).sum(-1, keepdim=True)))
    assert "qᵀk - ½‖k‖² plus 3, the same for every query and key: the softmax drops" in capsys.readouterr().out


def test_distance_as_dot_product_accepts_another_split_of_the_product(capsys):
    ch04.check_distance_scores(lambda q, k: distance_as_dot_product(
        q, k, query_end=lambda q: torch.full_like(q[..., :1], -0.5), key_end=lambda k: (k ** 2).sum(-1, keepdim=True)))
    out = capsys.readouterr().out
    assert out.startswith("✓ Exercise 4.3") and "plus" not in out


def test_distance_as_dot_product_names_a_mistake_even_when_it_is_shifted():
    def whole_norm_shifted(queries, keys):  # -‖k‖² + 2: wrong weights whatever the shift
        return distance_as_dot_product(queries, keys, key_end=lambda k: 2 - (k ** 2).sum(-1, keepdim=True))

    with pytest.raises(ExerciseError, match=r"halve the squared norm of the keys"):
        ch04.check_distance_scores(whole_norm_shifted)
    def minus_half_query_norm(queries, keys):  # qᵀk - ½‖q‖²: the weights of plain qᵀk
        return distance_as_dot_product(queries, keys, query_end=lambda q: -0.5 * (q ** 2).sum(-1, keepdim=True),
                                       key_end=lambda k: torch.ones_like(k[..., :1]))

    with pytest.raises(ExerciseError, match=r"not -½‖q‖²"):
        ch04.check_distance_scores(minus_half_query_norm)
    with pytest.raises(ExerciseError, match=r"the appended coordinates add nothing to the weights"):  # qᵀk + 5
        ch04.check_distance_scores(lambda q, k: distance_as_dot_product(q, k, key_end=lambda k: 5 + 0 * k[..., :1]))


def test_distance_as_dot_product_wants_one_coordinate_even_when_the_weights_are_right():
    def two_coordinates(queries, keys):
        longer_queries, longer_keys = distance_as_dot_product(queries, keys)
        return torch.cat([longer_queries, queries[..., :1]], -1), torch.cat([longer_keys, 0 * keys[..., :1]], -1)

    with pytest.raises(ExerciseError, match=r"your weights are right, but you appended 2 coordinates"):
        ch04.check_distance_scores(two_coordinates)


def test_distance_as_dot_product_explains_why_the_full_distance_is_not_asked_for():
    def full_distance(queries, keys):  # two coordinates: -½‖q‖² and -½‖k‖² both appended
        half_q, half_k = 0.5 * (queries ** 2).sum(-1, keepdim=True), 0.5 * (keys ** 2).sum(-1, keepdim=True)
        return (torch.cat([queries, torch.ones_like(half_q), -half_q], -1),
                torch.cat([keys, -half_k, torch.ones_like(half_k)], -1))

    with pytest.raises(ExerciseError, match=r"your vectors give the full -½‖q - k‖²") as info:
        ch04.check_distance_scores(full_distance)
    assert "drop the -½‖q‖² part" in info.value.hints[1]


def test_distance_as_dot_product_wants_a_pair_and_one_more_coordinate():
    with pytest.raises(ExerciseError, match=r"(?s)received: one tensor of shape \(2, 3, 5\).*as a tuple"):
        ch04.check_distance_scores(lambda queries, keys: queries @ keys.transpose(1, 2))
    with pytest.raises(ExerciseError, match=r"nothing was appended"):
        ch04.check_distance_scores(lambda queries, keys: (queries, keys))
    with pytest.raises(ExerciseError, match=r"append along the last axis"):
        ch04.check_distance_scores(lambda queries, keys: (queries.transpose(1, 2), keys.transpose(1, 2)))


# ---- Exercise 4.1 -------------------------------------------------------------

def test_sum_scores_success_line_shows_that_queries_do_not_matter(capsys):
    ch04.check_sum_scores(sum_scores)
    assert "between the weights of two queries: 0.000" in capsys.readouterr().out


def test_sum_scores_names_an_unsummed_feature_axis():
    def per_feature(queries, keys):
        return queries.unsqueeze(2) + keys.unsqueeze(1)  # (B, Q, K, d)

    with pytest.raises(ExerciseError, match=r"(?s)received: shape \(2, 3, 5, 4\).*also sum over the feature axis"):
        ch04.check_sum_scores(per_feature)


# ---- Exercise 4.2 -------------------------------------------------------------

def test_attention_cost_success_line_reports_quadratic_growth(capsys):
    ch04.check_attention_cost(attention_cost)
    assert "the weights of one example take 4 MiB; doubling n multiplies both costs by 4" in capsys.readouterr().out


# ---- Exercise 4.5 -------------------------------------------------------------

def test_causal_attention_success_line_gives_the_prefix_as_valid_lengths(capsys):
    ch04.check_causal_attention(causal_attention)
    assert "with the valid lengths 3, 3, 3, 4, 5: a prefix is one more set of valid lengths" in capsys.readouterr().out


def _with_prefix(n, prefix, rows=None, columns=None):
    """A prefix mask with one mistake: the first ``rows`` rows see every key, or ``columns`` columns are allowed."""
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    allowed[:, :prefix if columns is None else columns] = True
    if rows is not None:
        allowed[:rows] = True
    return allowed


@pytest.mark.parametrize("prefix_mask, message", [
    (lambda n, p: torch.ones(n, n, dtype=torch.bool).tril(), r"the prefix changes nothing in your output"),
    (lambda n, p: _with_prefix(n, p, rows=p), r"your prefix queries see the whole sequence"),
    (lambda n, p: _with_prefix(n, p, columns=p + 1), r"your prefix is one token too long"),
    (lambda n, p: _with_prefix(n, p, columns=p - 1), r"your prefix is one token too short"),
])
def test_causal_attention_names_the_mistakes_of_a_prefix(prefix_mask, message):
    with pytest.raises(ExerciseError, match=message):
        ch04.check_causal_attention(lambda q, k, v, prefix=1: causal_attention(q, k, v, prefix, prefix_mask))


def test_causal_attention_names_the_differing_row_by_example_and_query():
    # Unmasked attention differs first at example 0's query 0, which may see key 0 only.
    with pytest.raises(ExerciseError, match=r"expected: example 0, query 0: \[") as info:
        ch04.check_causal_attention(lambda q, k, v, prefix=1: torch.softmax(q @ k.transpose(1, 2) / 2, -1) @ v)
    assert "row [" not in str(info.value)


def test_causal_attention_without_a_prefix_argument_is_asked_for_one():
    with pytest.raises(ExerciseError, match=r"(?s)expected: a function that takes \(queries, keys, values, prefix=1\)"
                                            r".*add the argument prefix=1 after values"):
        ch04.check_causal_attention(lambda queries, keys, values: causal_attention(queries, keys, values))


def test_causal_attention_checks_the_plain_causal_mask_first():
    def prefix_from_two(queries, keys, values, prefix=1):  # right with a prefix, wrong without one
        return causal_attention(queries, keys, values, max(prefix, 2))

    with pytest.raises(ExerciseError, match=r"query i may attend to keys j ≤ i only"):  # the causal hint
        ch04.check_causal_attention(prefix_from_two)


@pytest.mark.parametrize("shortcut", [
    lambda q, k, v: d2l.DotProductAttention(0.0, causal=True)(q, k, v),
    lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
    lambda q, k, v: d2l.DotProductAttention(0.0)(q, k, v, d2l.causal_valid_lens(2, 5)),
    lambda q, k, v: d2l.masked_softmax(
        q @ k.transpose(1, 2) / 2, mask=d2l.attention_mask(None, 2, 5, 5, causal=True)) @ v,
])
def test_causal_attention_cannot_be_imported_away(shortcut):
    with pytest.raises(ExerciseError, match="does the whole exercise for you"):
        ch04.check_causal_attention(shortcut)


def test_the_package_is_whole_again_after_a_refused_shortcut():
    with pytest.raises(ExerciseError):
        ch04.check_causal_attention(lambda q, k, v: d2l.DotProductAttention(0.0, causal=True)(q, k, v))
    X = torch.randn(1, 3, 4)
    assert d2l.DotProductAttention(0.0, causal=True)(X, X, X).shape == (1, 3, 4)
    assert d2l.attention_mask(None, 1, 2, 2, causal=True).shape == (1, 2, 2)
