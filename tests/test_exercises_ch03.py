"""Chapter 03's checks accept right answers and name the typical wrong ones."""

import pytest
import torch
from exercise_answers import bilinear_scores, concat_scores, weight_gap

import d2lmini as d2l
from d2lmini.exercises import ExerciseError, ch03
from d2lmini.exercises._support import expect_mask, hint_for, seeded

# ---- the shared support -----------------------------------------------------

def test_seeded_blocks_repeat_and_leave_the_callers_generator_alone():
    torch.manual_seed(5)
    expected_next = torch.rand(3)
    torch.manual_seed(5)
    with seeded(1):
        first = torch.rand(2)
    with seeded(1):
        second = torch.rand(2)
    assert torch.equal(first, second)
    assert torch.equal(torch.rand(3), expected_next)


def test_hint_for_names_the_matching_mistake_or_falls_back():
    wrong = torch.tensor([1.0, 2.0])
    assert hint_for(wrong + 1e-7, "default", [(wrong, "that mistake")]) == "that mistake"
    assert hint_for(wrong + 1, "default", [(wrong, "that mistake")]) == "default"
    assert hint_for(wrong[:1], "default", [(wrong, "that mistake")]) == "default"
    assert hint_for([1.0, 2.0], "default", [(wrong, "that mistake")]) == "default"


def test_expect_mask_checks_the_shape_the_dtype_then_the_entries_shown_row_under_row():
    expected = torch.tensor([[True, False], [True, True]])

    def shown(received):
        with pytest.raises(ExerciseError) as info:
            expect_mask(received, expected, "Exercise 0.1", "mask(2)", "one row per query", "the default hint",
                        [(expected.T, "that mistake")])
        return info.value.lines()[1:4]

    expect_mask(expected.clone(), expected, "Exercise 0.1", "mask(2)", "one row per query", "the default hint", [])
    assert shown(expected[0]) == ["  expected: shape (2, 2) from mask(2)", "  received: shape (2,)",
                                  "  hint: one row per query"]
    assert shown(expected.float())[:2] == ["  expected: from mask(2): 10 11", "  received: dtype torch.float32"]
    assert shown(expected.T) == ["  expected: from mask(2): 10 11", "  received: from mask(2): 11 01",
                                 "  hint: that mistake"]
    assert shown(~expected)[2] == "  hint: the default hint"


# ---- Exercise 3.3 -------------------------------------------------------------

def test_concat_scores_reports_a_leftover_axis():
    with pytest.raises(ExerciseError, match=r"(?s)expected: shape \(2, 3, 4\).*received: shape \(2, 3, 4, 1\)"
                                            r".*drop the last axis of length 1"):
        ch03.check_concat_scores(lambda q, k, W_a, w_v: concat_scores(q, k, W_a, w_v).unsqueeze(-1))


# ---- Exercise 3.2 -------------------------------------------------------------

def test_weight_gap_accepts_the_right_gap_and_reports_all_three(capsys):
    ch03.check_weight_gap(weight_gap)
    line = capsys.readouterr().out
    assert line.startswith("✓ Exercise 3.2") and "identical keys: 0.000" in line
    random_gap = float(line.split("random keys: ")[1].split(";")[0])
    sideways_gap = float(line.split("keys (1, t): ")[1].split(". ")[0])
    assert random_gap > 0.05 and sideways_gap > 0.05


def test_weight_gap_keys_1_t_are_uniform_for_the_dot_product_and_not_for_the_additive_one():
    queries = (torch.tensor([0.5, 1.0, 2.0])[:, None] * torch.tensor([1.0, 0.0])).expand(2, 3, 2)
    keys = torch.stack([torch.ones(8), torch.linspace(-2, 2, 8)], dim=-1).expand(2, 8, 2)
    values, valid_lens = torch.zeros(2, 8, 4), torch.tensor([3, 6])
    dot_product = d2l.DotProductAttention(dropout=0.0)
    dot_product(queries, keys, values, valid_lens)
    torch.testing.assert_close(dot_product.attention_weights[1, :, :6], torch.full((3, 6), 1 / 6))
    with seeded(0):
        additive = d2l.AdditiveAttention(num_hiddens=8, dropout=0.0, key_size=2, query_size=2)
    additive(queries, keys, values, valid_lens)
    assert additive.attention_weights[1, :, :6].std(dim=-1).min() > 0.01


def test_weight_gap_with_only_two_key_sets_right_is_caught_on_the_third():
    def always_the_random_queries(additive, queries, keys, values, valid_lens):
        return weight_gap(additive, torch.randn(2, 3, 2, generator=torch.Generator().manual_seed(32)),
                          keys, values, valid_lens)

    with pytest.raises(ExerciseError, match=r"\(keys \(1, t\)\)"):  # the random queries are the check's own
        ch03.check_weight_gap(always_the_random_queries)


def test_weight_gap_names_comparing_outputs():
    def output_gap(additive, queries, keys, values, valid_lens):
        dot_product = d2l.DotProductAttention(dropout=0.0)
        gap = additive(queries, keys, values, valid_lens) - dot_product(queries, keys, values, valid_lens)
        return gap.abs().max()

    with pytest.raises(ExerciseError, match=r"\(random keys\).*(?s:.*)you compared the outputs"):
        ch03.check_weight_gap(output_gap)


# ---- Exercise 3.1 -------------------------------------------------------------

def test_bilinear_scores_accepts_q_W_k_and_names_it_only_then(capsys):
    ch03.check_bilinear_scores(bilinear_scores)
    assert capsys.readouterr().out.startswith("✓ Exercise 3.1 · a score from matrix products only: correct. "
                                              "This is the bilinear score qᵀ W k")


def test_bilinear_scores_first_hint_asks_rather_than_gives_the_formula():
    with pytest.raises(ExerciseError) as info:
        ch03.check_bilinear_scores(lambda queries, keys, W: torch.zeros(2, 3, 4))
    assert "qᵀ W k" not in str(info.value)  # the title and the first hint leave the design to the learner
    assert "qᵀ W k" in info.value.hints[1]


def test_bilinear_scores_reports_a_keys_by_queries_result():
    def keys_first(queries, keys, W):
        return keys @ W.T @ queries.transpose(1, 2)  # (B, K, Q): one row per key

    with pytest.raises(ExerciseError, match=r"(?s)expected: shape \(2, 3, 4\).*received: shape \(2, 4, 3\)"
                                            r".*your result has one row per key"):
        ch03.check_bilinear_scores(keys_first)
