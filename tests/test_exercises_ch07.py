"""Chapter 07's checks accept right answers and name the typical wrong ones."""

import itertools
import math

import pytest
import torch
from exercise_answers import (
    LearnedPositionalEmbedding,
    OneRowTooMany,
    PlainTensor,
    is_permutation_equivariant,
    offset_rotation,
)

import d2lmini as d2l
from d2lmini.exercises import ExerciseError, ExerciseNotAttempted, ch07


def test_a_class_whose_methods_are_stubs_is_not_attempted():
    class LearnedPositionalEmbedding(torch.nn.Module):
        def __init__(self, max_len, num_hiddens):
            super().__init__()
            raise NotImplementedError()

        def forward(self, X):
            raise NotImplementedError()

    with pytest.raises(ExerciseNotAttempted, match="Exercise 7.2 · not attempted yet: complete "
                                                   "`LearnedPositionalEmbedding` above"):
        ch07.check_learned_embedding(LearnedPositionalEmbedding)


# ---- Exercise 7.1 -------------------------------------------------------------

def test_offset_rotation_success_line_applies_the_matrix_to_the_packages_table(capsys):
    ch07.check_offset_rotation(offset_rotation)
    assert "M(δ, ω) gives the row δ positions on, for δ = 1, 5 and 17" in capsys.readouterr().out


def test_offset_rotation_accepts_float64_and_torch_functions():
    def in_torch(delta, omega):
        angle = torch.tensor(omega * delta, dtype=torch.float64)
        return torch.stack([torch.stack([angle.cos(), angle.sin()]), torch.stack([-angle.sin(), angle.cos()])])

    ch07.check_offset_rotation(in_torch)


@pytest.mark.parametrize("wrong,message", [
    (lambda delta, omega: offset_rotation(-delta, omega), "a rotation by -ωδ"),
    (lambda delta, omega: torch.tensor([[math.cos(omega * delta), -math.sin(omega * delta)],  # for (cos, sin)
                                        [math.sin(omega * delta), math.cos(omega * delta)]]), "sign of sin"),
    (lambda delta, omega: torch.tensor([[math.sin(omega * delta), math.cos(omega * delta)],
                                        [-math.cos(omega * delta), math.sin(omega * delta)]]),
     "cos\\(ωδ\\) belongs on the diagonal"),
    (lambda delta, omega: offset_rotation(delta, omega) * 2, "expand sin\\(a \\+ b\\) and cos\\(a \\+ b\\)"),
])
def test_offset_rotation_names_each_typical_mistake(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        ch07.check_offset_rotation(wrong)


def test_offset_rotation_tells_the_chapters_row_vector_A_from_M():
    def chapters_A(delta, omega):  # the chapter's fitted_map: least squares for p_i A = p_(i+δ) over rows
        i = torch.arange(50, dtype=torch.float64)
        here = torch.stack([torch.sin(omega * i), torch.cos(omega * i)], dim=1)
        there = torch.stack([torch.sin(omega * (i + delta)), torch.cos(omega * (i + delta))], dim=1)
        return torch.linalg.lstsq(here, there).solution

    with pytest.raises(ExerciseError, match=r"(?s)moves the pair back by δ.*If it is the chapter's A, that one "
                                            r"multiplies a row from the right.*M = Aᵀ") as error:
        ch07.check_offset_rotation(chapters_A)
    assert "the chapter's row-vector A, transposed" in error.value.hints[1]


def test_offset_rotation_asks_for_a_tensor_of_shape_2_by_2():
    with pytest.raises(ExerciseError, match=r"(?s)expected: a torch.Tensor.*received: list"):
        ch07.check_offset_rotation(lambda delta, omega: offset_rotation(delta, omega).tolist())
    with pytest.raises(ExerciseError, match=r"(?s)expected: shape \(2, 2\).*received: shape \(4,\)"):
        ch07.check_offset_rotation(lambda delta, omega: offset_rotation(delta, omega).flatten())


# ---- Exercise 7.2 -------------------------------------------------------------

def test_learned_embedding_accepts_an_embedding_layer_and_a_batch_axis_in_the_table():
    class WithEmbedding(torch.nn.Module):
        def __init__(self, max_len, num_hiddens):
            super().__init__()
            self.embedding = torch.nn.Embedding(max_len, num_hiddens)

        def forward(self, X):
            return X + self.embedding(torch.arange(X.shape[1], device=X.device))

    class BookShaped(torch.nn.Module):
        def __init__(self, max_len, num_hiddens):
            super().__init__()
            self.P = torch.nn.Parameter(0.02 * torch.randn(1, max_len, num_hiddens))

        def forward(self, X):
            return X + self.P[:, :X.shape[1]]

    ch07.check_learned_embedding(WithEmbedding)
    ch07.check_learned_embedding(BookShaped)


def test_learned_embedding_success_line_says_what_it_cannot_do(capsys):
    ch07.check_learned_embedding(LearnedPositionalEmbedding)
    assert "no row for position 10 or later (max_len=10)" in capsys.readouterr().out


class Buffer(PlainTensor):
    def __init__(self, max_len, num_hiddens):
        torch.nn.Module.__init__(self)
        self.register_buffer("table", 0.02 * torch.randn(max_len, num_hiddens))


class Sinusoidal(torch.nn.Module):
    def __init__(self, max_len, num_hiddens):
        super().__init__()
        self.encoding = d2l.PositionalEncoding(num_hiddens, 0.0, max_len=max_len)

    def forward(self, X):
        return self.encoding(X)


class SinusoidalAdded(LearnedPositionalEmbedding):
    def forward(self, X):
        return X + d2l.PositionalEncoding(X.shape[-1], 0.0, max_len=X.shape[1]).P[0]


class ThroughData(LearnedPositionalEmbedding):
    def forward(self, X):
        return X + self.table.data[:X.shape[1]]


@pytest.mark.parametrize("wrong,message", [
    (Buffer, r"(?s)received: no parameters \(buffers: \['table'\]\).*the table is not learnable"),
    (Sinusoidal, "the table is not learnable"),
    (OneRowTooMany, r"(?s)expected: one learned vector per position: 10 × 6 = 60.*received: 66 numbers"),
    (SinusoidalAdded, "that is the fixed sinusoidal table"),
    (ThroughData, "the output does not depend on the parameter through autograd"),
])
def test_learned_embedding_names_each_typical_mistake(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        ch07.check_learned_embedding(wrong)


def test_learned_embedding_hints_go_one_step_further():
    with pytest.raises(ExerciseError) as info:
        ch07.check_learned_embedding(PlainTensor)
    assert "torch.nn.Parameter" in info.value.hints[1] and "buffer" in info.value.hints[1]


def test_learned_embedding_leaves_the_callers_random_numbers_alone():
    torch.manual_seed(3)
    before = torch.get_rng_state()
    ch07.check_learned_embedding(LearnedPositionalEmbedding)
    assert torch.equal(torch.get_rng_state(), before)


# ---- Exercise 7.3 -------------------------------------------------------------

def test_equivariance_success_line_names_the_equivariant_layers(capsys):
    ch07.check_equivariance(is_permutation_equivariant)
    out = capsys.readouterr().out
    assert "Equivariant: self-attention, the position-wise MLP and the mean." in out
    assert "causal self-attention" in out


def test_the_layers_are_what_the_check_says():
    X = torch.randn(2, 6, 8)
    perm = torch.tensor([1, 2, 3, 4, 5, 0])
    with torch.no_grad():
        for name, layer, equivariant in ch07._layers():
            assert is_permutation_equivariant(layer, X, perm) == equivariant, name


ALTERNATING = itertools.cycle([True, False])


def test_equivariance_accepts_a_zero_dimensional_bool_tensor():
    ch07.check_equivariance(lambda layer, X, perm: (layer(X[:, perm]) - layer(X)[:, perm]).abs().max() < 1e-5)


@pytest.mark.parametrize("wrong,message", [
    (lambda layer, X, perm: True, "every layer passes your test"),
    (lambda layer, X, perm: next(ALTERNATING),  # wrong both ways: true for some changed layers, false for some not
     "shuffle the tokens \\(axis 1\\) of X with perm"),
])
def test_equivariance_names_each_typical_mistake(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        ch07.check_equivariance(wrong)


def test_equivariance_asks_for_one_bool_not_a_tensor_of_comparisons():
    with pytest.raises(ExerciseError, match=r"(?s)expected: True or False for self-attention.*"
                                            r"received: Tensor of shape \(2, 6, 8\).*one True or False"):
        ch07.check_equivariance(lambda layer, X, perm: layer(X[:, perm]) == layer(X)[:, perm])


# ---- Exercise 7.3's predictions ----

TRUTH = [True, False, False, True, True, False, False]  # the order of the exercise's list


def test_right_predictions_pass_as_bools_or_as_yes_and_no(capsys):
    ch07.check_equivariance(is_permutation_equivariant, predictions=TRUTH)
    ch07.check_equivariance(is_permutation_equivariant, predictions=["Yes" if t else "no " for t in TRUTH])
    lines = capsys.readouterr().out.splitlines()
    assert all(line.endswith("Your seven predictions were right too.") for line in lines) and len(lines) == 2


def test_a_wrong_prediction_fails_and_names_its_layers():
    guesses = [True] * 7  # every layer equivariant
    with pytest.raises(ExerciseError) as info:
        ch07.check_equivariance(is_permutation_equivariant, predictions=guesses)
    assert info.value.received == ("predictions that disagree with it for ['self-attention after adding P', "
                                   "'causal self-attention', 'a convolution over the tokens', 'an RNN']")


@pytest.mark.parametrize("predictions, message", [
    (TRUTH[:6], r"(?s)expected: 7 predictions, one per layer of the list.*received: 6 predictions"),
    ("yes", r"(?s)expected: 7 predictions.*received: str"),
    (TRUTH[:6] + ["maybe"], r"(?s)expected: yes or no \(True or False\) for an RNN.*received: 'maybe'"),
], ids=["too few", "one string", "not yes or no"])
def test_predictions_of_the_wrong_form_are_explained(predictions, message):
    with pytest.raises(ExerciseError, match=message):
        ch07.check_equivariance(is_permutation_equivariant, predictions=predictions)


def test_predictions_are_checked_only_once_the_test_is_right():
    with pytest.raises(ExerciseError, match="with the unshuffled output"):
        ch07.check_equivariance(lambda layer, X, perm: torch.allclose(layer(X[:, perm]), layer(X), atol=1e-5),
                                predictions=[True] * 7)


def test_predictions_from_a_function_are_read_once_the_test_is_right(capsys):
    calls = []

    def my_predictions():
        calls.append(1)
        return ["yes", "no", "no", "yes", "yes", "no", "no"]

    with pytest.raises(ExerciseError, match="with the unshuffled output"):
        ch07.check_equivariance(lambda layer, X, perm: torch.allclose(layer(X[:, perm]), layer(X), atol=1e-5),
                                predictions=my_predictions)
    assert calls == []
    ch07.check_equivariance(is_permutation_equivariant, predictions=my_predictions)
    assert calls == [1] and capsys.readouterr().out.strip().endswith("Your seven predictions were right too.")


def test_a_stub_of_the_predictions_is_not_attempted():
    def my_predictions():
        raise NotImplementedError("Exercise 7.3 is not done yet")

    with pytest.raises(ExerciseNotAttempted, match="Exercise 7.3 · not attempted yet: complete `my_predictions` above"):
        ch07.check_equivariance(is_permutation_equivariant, predictions=my_predictions)


def test_a_not_implemented_error_from_deeper_in_the_predictions_shows_the_learners_lines():
    def helper():
        raise NotImplementedError("a helper of the learner's")

    def my_predictions():
        return helper()

    with pytest.raises(ExerciseError, match="NotImplementedError: a helper of the learner's") as info:
        ch07.check_equivariance(is_permutation_equivariant, predictions=my_predictions)
    assert not isinstance(info.value, ExerciseNotAttempted)
    assert [frame.split(", in ")[-1].split()[0] for frame in info.value.frames] == ["my_predictions", "helper"]


def test_an_error_the_check_does_not_know_shows_the_learners_line():
    def broken(layer, X, perm):
        return 1 / 0

    with pytest.raises(ExerciseError, match="ZeroDivisionError: division by zero, raised in your broken") as info:
        ch07.check_equivariance(broken)
    assert any("return 1 / 0" in frame for frame in info.value.frames)
