"""Chapter 08's checks accept right answers and name the typical wrong ones."""

import math
import re

import pytest
import torch
import torch.nn.functional as F
from exercise_answers import (
    make_cross_attention,
    masked_after_softmax,
    masked_then_softmax_over_steps,
    reversal_alignment,
    sort_alignment,
)

import d2lmini as d2l
from d2lmini import seq2seq
from d2lmini.exercises import ExerciseError, ch08

# ---- Exercise 8.1 -------------------------------------------------------------

def test_reversal_success_line_gives_the_chance_level(capsys):
    ch08.check_reversal_alignment(reversal_alignment)
    assert "0.5, 0.2, 0.125 for n = 2, 5, 8" in capsys.readouterr().out


def test_reversal_accepts_a_boolean_answer():
    ch08.check_reversal_alignment(lambda lens, n: reversal_alignment(lens, n).bool())


def test_reversal_gives_the_general_hint_for_an_unknown_mistake():
    with pytest.raises(ExerciseError, match="output step t copies source position n - 1 - t") as info:
        ch08.check_reversal_alignment(lambda lens, n: torch.zeros(len(lens), n, n))
    assert "n comes from valid_lens" in info.value.hints[1]


def test_reversal_names_a_wrong_shape():
    with pytest.raises(ExerciseError, match=r"(?s)expected: shape \(4, 8, 8\).*received: shape \(4, 8\)"):
        ch08.check_reversal_alignment(lambda lens, n: lens[:, None] - 1 - torch.arange(n))


# ---- Exercise 8.2 -------------------------------------------------------------

def _shown_rows(error):
    """The row an error shows on its expected and received lines: (where, values, sum)."""
    rows = []
    for line in error.lines()[1:3]:
        where, values, total = re.fullmatch(r"  \w+: (weights\[\d, \d\]).*: \[(.*)\] \(sum (.*)\)", line).groups()
        rows.append((where, [float(v) for v in values.split(", ")], float(total)))
    return rows


def _with(**options):
    return lambda *args: make_cross_attention(*args, **options)


def test_cross_attention_success_line_counts_the_projections(capsys):
    ch08.check_cross_attention_steps(make_cross_attention)
    assert "W_k ran once and W_q 6 times for T = 6 steps" in capsys.readouterr().out


def test_cross_attention_keys_projected_in_every_step_are_named():
    with pytest.raises(ExerciseError, match="project the encoder outputs once, in make_cross_attention") as info:
        ch08.check_cross_attention_steps(_with(keys_in_step=True))
    assert "received: W_k run 6 times" in str(info.value)


def test_cross_attention_keys_from_the_weight_matrix_count_as_runs():
    def by_hand(outputs, lens, W_q, W_k):
        return make_cross_attention(outputs, lens, W_q, lambda x: x @ W_k.weight.T, keys_in_step=True)

    with pytest.raises(ExerciseError, match="received: W_k run 6 times"):
        ch08.check_cross_attention_steps(by_hand)


def test_cross_attention_a_kept_query_axis_is_named():
    with pytest.raises(ExerciseError, match=r"(?s)expected: context of one step: shape \(3, 8\).*"
                                            r"received: context of one step: shape \(3, 1, 8\).*"
                                            r"drop the axis of size 1"):
        ch08.check_cross_attention_steps(_with(keep_axis=True))


def test_cross_attention_step_must_be_returned():
    with pytest.raises(ExerciseError, match="define step inside make_cross_attention and return it"):
        ch08.check_cross_attention_steps(lambda *args: None)


def test_cross_attention_mask_after_softmax_shows_a_row_that_differs():
    with pytest.raises(ExerciseError, match="you masked after the softmax") as info:
        ch08.check_cross_attention_steps(_with(softmax=masked_after_softmax))
    (where, expected, expected_sum), (received_where, received, received_sum) = _shown_rows(info.value)
    assert where == received_where  # the same row of both
    assert max(abs(e - r) for e, r in zip(expected, received)) > 0.01
    assert expected_sum == 1.0 and received_sum < 0.99
    assert info.value.picture is not None


def test_cross_attention_softmax_over_the_query_axis_shows_its_nan():
    with pytest.raises(ExerciseError, match=r"your softmax ran over axis 1, which holds the step's one") as info:
        ch08.check_cross_attention_steps(_with(softmax=masked_then_softmax_over_steps))
    (where, expected, _), (received_where, received, _) = _shown_rows(info.value)
    assert where == received_where and "NaN" not in info.value.lines()[1]
    assert any(math.isnan(v) for v in received) and not any(math.isnan(v) for v in expected)


def test_cross_attention_no_scale_and_no_mask_get_their_own_hints():
    with pytest.raises(ExerciseError, match="divide the scores by √d"):
        ch08.check_cross_attention_steps(_with(scale=False))
    with pytest.raises(ExerciseError, match="padding source positions get weight"):
        ch08.check_cross_attention_steps(_with(softmax=lambda scores, lens: torch.softmax(scores, -1)))


def test_cross_attention_wrong_context_shows_a_row_that_differs():
    with pytest.raises(ExerciseError, match="the values are the encoder outputs themselves") as info:
        ch08.check_cross_attention_steps(_with(values=lambda outputs, W_k: W_k(outputs)))
    expected, received = (line.split(": [")[1] for line in info.value.lines()[1:3])
    assert expected != received and info.value.lines()[1].split(": [")[0].endswith("output step 0")


def test_cross_attention_names_unprojected_queries_and_keys():
    def no_W_q(outputs, lens, W_q, W_k):
        return make_cross_attention(outputs, lens, torch.nn.Identity(), W_k)

    def no_W_k(outputs, lens, W_q, W_k):
        return make_cross_attention(outputs, lens, W_q, torch.nn.Identity())

    with pytest.raises(ExerciseError, match="project the decoder states with W_q"):
        ch08.check_cross_attention_steps(no_W_q)
    with pytest.raises(ExerciseError, match="project the encoder outputs with W_k"):
        ch08.check_cross_attention_steps(no_W_k)


def _shortcut(attend):
    def make(outputs, lens, W_q, W_k):
        return lambda state: (attend(state[:, None], outputs, lens, W_q, W_k)[:, 0], None)
    return make


@pytest.mark.parametrize("attend", [
    lambda q, e, lens, W_q, W_k: d2l.DotProductAttention(0.0)(W_q(q), W_k(e), e, lens),
    lambda q, e, lens, W_q, W_k: F.scaled_dot_product_attention(W_q(q), W_k(e), e),
    lambda q, e, lens, W_q, W_k: d2l.MultiHeadAttention(8, 1, 0.0)(q, e, e, lens),
    lambda q, e, lens, W_q, W_k: d2l.AdditiveAttention(8, 0.0)(W_q(q), W_k(e), e, lens),
])
def test_cross_attention_cannot_be_imported_away(attend):
    with pytest.raises(ExerciseError, match="does the whole exercise for you"):
        ch08.check_cross_attention_steps(_shortcut(attend))
    X = torch.randn(1, 3, 8)
    assert d2l.DotProductAttention(0.0)(X, X, X).shape == (1, 3, 8)  # switched back on afterwards


# ---- Exercise 8.3 -------------------------------------------------------------

def test_sort_success_line_counts_the_permutations(capsys):
    ch08.check_sort_alignment(sort_alignment)
    assert "These 6 sources need 6 different alignments" in capsys.readouterr().out


def test_sort_rejects_the_sorted_digits_themselves():
    def digits(source, valid_lens):
        return F.one_hot(source.sort(dim=1).values, seq2seq.VOCAB).float()  # columns = digits, not positions

    with pytest.raises(ExerciseError, match=r"expected: shape \(6, 7, 7\)"):
        ch08.check_sort_alignment(digits)
