"""Chapter 05's checks accept right answers and name the typical wrong ones."""

import pytest
import torch

import d2lmini as d2l
from d2lmini.exercises import ExerciseError, ExerciseNotAttempted, ch05


def einsum_multihead(queries, keys, values, mha, scale_width=None):
    h = mha.num_heads
    B, n_q, n_k = queries.shape[0], queries.shape[1], keys.shape[1]
    q = (queries @ mha.W_q.weight.T).reshape(B, n_q, h, -1)
    k = (keys @ mha.W_k.weight.T).reshape(B, n_k, h, -1)
    v = (values @ mha.W_v.weight.T).reshape(B, n_k, h, -1)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / (scale_width or q.shape[-1]) ** 0.5
    heads = torch.einsum("bhqk,bkhd->bqhd", torch.softmax(scores, -1), v)
    return heads.reshape(B, n_q, -1) @ mha.W_o.weight.T


def head_weights(mha, X, head, rows=None, scale_width=None):
    d_head = mha.W_q.weight.shape[0] // mha.num_heads
    rows = slice(head * d_head, (head + 1) * d_head) if rows is None else rows
    q, k = X @ mha.W_q.weight[rows].T, X @ mha.W_k.weight[rows].T
    return torch.softmax(q @ k.transpose(1, 2) / (scale_width or d_head) ** 0.5, -1)


def output_without_head(mha, X, head):
    q, k, v = (mha.transpose_qkv(layer(X)) for layer in (mha.W_q, mha.W_k, mha.W_v))
    concatenated = mha.transpose_output(mha.attention(q, k, v)).clone()
    d_head = concatenated.shape[-1] // mha.num_heads
    concatenated[..., head * d_head:(head + 1) * d_head] = 0
    return mha.W_o(concatenated)


def parameter_count(num_hiddens, num_heads, query_size, key_size, value_size, bias):
    return num_hiddens * (query_size + key_size + value_size + num_hiddens) + (4 * num_hiddens if bias else 0)


def split_heads_seq_first(X, num_heads):
    T, B, d = X.shape
    return X.reshape(T, B, num_heads, d // num_heads).permute(1, 2, 0, 3).reshape(B * num_heads, T, -1)


def test_every_check_accepts_the_reference_answers(capsys):
    ch05.check_einsum_multihead(einsum_multihead)
    ch05.check_head_weights(head_weights)
    ch05.check_output_without_head(output_without_head)
    ch05.check_parameter_count(parameter_count)
    ch05.check_split_heads_seq_first(split_heads_seq_first)
    lines = capsys.readouterr().out.splitlines()
    assert [line[:14] for line in lines] == ["✓ Exercise 5.5", "✓ Exercise 5.2", "✓ Exercise 5.3", "✓ Exercise 5.1",
                                             "✓ Exercise 5.4"]


def test_a_student_stub_is_reported_as_not_attempted():
    def stub(*args):
        raise NotImplementedError("fill me in")

    for check in (ch05.check_einsum_multihead, ch05.check_head_weights, ch05.check_output_without_head,
                  ch05.check_parameter_count, ch05.check_split_heads_seq_first):
        with pytest.raises(ExerciseNotAttempted, match="not attempted yet: complete `stub` above"):
            check(stub)


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


def split_reshape_alone(X, num_heads):
    T, B, d = X.shape
    return X.reshape(B * num_heads, T, d // num_heads)


def split_as_if_batch_first(X, num_heads):
    T, B, d = X.shape
    return X.reshape(B, T, num_heads, d // num_heads).permute(0, 2, 1, 3).reshape(B * num_heads, T, -1)


def split_heads_behind_positions(X, num_heads):
    T, B, d = X.shape
    return X.transpose(0, 1).reshape(B * num_heads, T, d // num_heads)


def split_head_major(X, num_heads):
    T, B, d = X.shape
    return X.reshape(T, B, num_heads, d // num_heads).permute(2, 1, 0, 3).reshape(B * num_heads, T, -1)


def split_positions_as_batch(X, num_heads):
    T, B, d = X.shape
    return X.reshape(T, B, num_heads, d // num_heads).permute(0, 2, 1, 3).reshape(T * num_heads, B, -1)


def split_interleaved(X, num_heads):
    T, B, d = X.shape
    return X.reshape(T, B, d // num_heads, num_heads).permute(1, 3, 0, 2).reshape(B * num_heads, T, -1)


@pytest.mark.parametrize("wrong,message", [
    (split_reshape_alone, "a reshape alone never moves a number"),
    (split_as_if_batch_first, r"as if it were \(B, T, d_model\)"),
    (split_heads_behind_positions, "the head axis still sits behind the positions"),
    (split_head_major, "merged in the wrong order: head first, then example"),
    (split_positions_as_batch, "which here is the positions, not the examples"),
    (split_interleaved, "the head index is taken from the wrong end"),
])
def test_split_heads_seq_first_names_each_typical_mistake(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        ch05.check_split_heads_seq_first(wrong)


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
