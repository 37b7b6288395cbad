"""Chapter 05's checks accept right answers and name the typical wrong ones."""

import pytest
import torch
from exercise_answers import output_without_head, split_heads_seq_first

import d2lmini as d2l
from d2lmini.exercises import ExerciseError, ch05

# ---- Exercise 5.3 -------------------------------------------------------------

def test_output_without_head_reports_each_heads_effect(capsys):
    ch05.check_output_without_head(output_without_head)
    line = capsys.readouterr().out
    changes = [float(part.split(": ")[1]) for part in line.split("(")[1].rstrip(").\n").split(", ")]
    assert len(changes) == 3 and all(change > 0 for change in changes)


# ---- Exercise 5.1 -------------------------------------------------------------

@pytest.mark.parametrize("wrong,message", [
    (lambda n, h, q, k, v, b: n * (q + k + v + n) // h, "count the weights of the four Linear layers"),
])
def test_parameter_count_names_each_typical_mistake(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        ch05.check_parameter_count(wrong)


@pytest.mark.parametrize("shortcut", [
    lambda queries, keys, values, mha: mha(queries, keys, values),
    lambda queries, keys, values, mha: mha.attention(*(mha.transpose_qkv(w(x)) for w, x in (
        (mha.W_q, queries), (mha.W_k, keys), (mha.W_v, values)))),
])
def test_einsum_multihead_cannot_be_answered_by_calling_the_module(shortcut):
    with pytest.raises(ExerciseError, match="does the whole exercise for you"):
        ch05.check_einsum_multihead(shortcut)


def test_head_weights_cannot_be_read_off_the_module():
    def read_off(mha, X, head):
        mha(X, X, X)
        return mha.attention_weights[:, head]

    with pytest.raises(ExerciseError, match="does the whole exercise for you"):
        ch05.check_head_weights(read_off)
    with pytest.raises((ExerciseError, TypeError)):
        ch05.check_head_weights(lambda mha, X, head: mha.attention_weights[:, head])


# ---- Exercise 5.4 -------------------------------------------------------------

def test_split_heads_seq_first_on_a_hand_made_case():
    # Two positions of two examples, 4 features each, two heads of width 2: X[t, b] = 100·t + 10·b + feature.
    X = (100 * torch.arange(2.0)[:, None, None] + 10 * torch.arange(2.0)[None, :, None]
         + torch.arange(4.0)).reshape(2, 2, 4)
    torch.testing.assert_close(split_heads_seq_first(X, 2), torch.tensor([
        [[0.0, 1.0], [100.0, 101.0]],  # example 0, head 0
        [[2.0, 3.0], [102.0, 103.0]],  # example 0, head 1
        [[10.0, 11.0], [110.0, 111.0]],  # example 1, head 0
        [[12.0, 13.0], [112.0, 113.0]]]))  # example 1, head 1


def test_split_heads_seq_first_equals_transpose_qkv_of_the_batch_first_tensor():
    X = torch.randn(5, 3, 8)  # (T, B, d_model)
    torch.testing.assert_close(split_heads_seq_first(X, 4),
                               d2l.MultiHeadAttention(8, 4, 0.0).transpose_qkv(X.transpose(0, 1)))


def test_split_heads_seq_first_gives_the_general_hint_for_another_wrong_answer():
    with pytest.raises(ExerciseError) as info:
        ch05.check_split_heads_seq_first(lambda X, h: torch.zeros(X.shape[1] * h, X.shape[0], X.shape[2] // h))
    assert "work out where each axis of X has to go" in info.value.hints[0]


@pytest.mark.parametrize("shortcut", [
    lambda X, h: d2l.MultiHeadAttention(X.shape[-1], h, 0.0).transpose_qkv(X.transpose(0, 1)),
    lambda X, h: d2l.MultiHeadAttention(X.shape[-1], h, 0.0).split_heads(X.transpose(0, 1)).flatten(0, 1),
])
def test_split_heads_seq_first_cannot_be_answered_by_the_module(shortcut):
    with pytest.raises(ExerciseError, match="does the whole exercise for you"):
        ch05.check_split_heads_seq_first(shortcut)


def test_split_heads_seq_first_leaves_the_module_working_afterwards():
    with pytest.raises(ExerciseError):
        ch05.check_split_heads_seq_first(
            lambda X, h: d2l.MultiHeadAttention(X.shape[-1], h, 0.0).transpose_qkv(X.transpose(0, 1)))
    X = torch.randn(3, 2, 8)
    torch.testing.assert_close(d2l.MultiHeadAttention(8, 2, 0.0).transpose_qkv(X.transpose(0, 1)),
                               split_heads_seq_first(X, 2))
