"""Checks for chapter 07, self-attention and positional encoding."""

import math

import torch
from torch import nn

from ..attention import MultiHeadAttention
from ..i18n import N_, _, number
from ..positional import PositionalEncoding
from ._feedback import (
    ExerciseNotAttempted,
    check,
    expect_close,
    passed,
    raised_by,  # an error asks the learner to run ch07.hint()
    require,
)
from ._feedback import hint as hint
from ._support import explained, hint_for, seeded

ROTATION = N_("Exercise 7.1 · an offset as a rotation")
LEARNED = N_("Exercise 7.2 · a learned positional embedding")
EQUIVARIANCE = N_("Exercise 7.3 · which layers ignore the order?")
MEAN = N_("the mean of the tokens, given to each")


def _rotation(angle):
    """The 2 × 2 matrix that maps (sin a, cos a) to (sin(a + angle), cos(a + angle)), in float64."""
    c, s = math.cos(angle), math.sin(angle)
    return torch.tensor([[c, s], [-s, c]], dtype=torch.float64)


@check(ROTATION)
def check_offset_rotation(offset_rotation):
    """Exercise 7.1: M(δ, ω) moves each (sin, cos) pair of the encoding δ positions on."""
    num_hiddens, base = 8, 10000
    omegas = [base ** (-2 * j / num_hiddens) for j in range(num_hiddens // 2)]  # 1, 0.1, 0.01, 0.001
    offsets = [1, 3, -2, 10, 0]
    cases = [(delta, omega) for delta in offsets for omega in omegas]
    first = offset_rotation(*cases[0])
    require(isinstance(first, torch.Tensor), ROTATION, _("a torch.Tensor"), type(first).__name__,
            _("return a 2 × 2 tensor of the four entries (torch.tensor takes a list of rows)"))
    require(first.shape == (2, 2), ROTATION, _("shape (2, 2)"), _("shape {shape}").format(shape=tuple(first.shape)),
            _("one 2 × 2 matrix: it maps the column (sin ωi, cos ωi) to (sin ω(i + δ), cos ω(i + δ))"))
    received = torch.stack([offset_rotation(delta, omega).detach().double() for delta, omega in cases])
    expected = torch.stack([_rotation(omega * delta) for delta, omega in cases])  # (cases, 2, 2)

    def wrong(angle_of, layout):
        return torch.stack([layout(angle_of(delta, omega)) for delta, omega in cases])

    hint = hint_for(received, (
        _("expand sin(a + b) and cos(a + b) with a = ωi and b = ωδ"),
        _("sin(a + b) = sin a cos b + cos a sin b and cos(a + b) = cos a cos b - sin a sin b: read the matrix off "
          "these two lines, with (sin a, cos a) as the column it multiplies")), [
        (wrong(lambda delta, omega: omega * delta, lambda a: _rotation(a).T),
         (_("your matrix moves the pair back by δ (a rotation by -ωδ): the sign of sin(ωδ) sits in the wrong "
            "corner. If it is the chapter's A, that one multiplies a row from the right (p_i A = p_(i+δ)); "
            "M multiplies a column (M p_i = p_(i+δ)), and M = Aᵀ"),
          _("either the matrix is transposed (the chapter's row-vector A, transposed), or it is written for "
            "(cos, sin) pairs, while P stores the sine first: (sin ωi, cos ωi)"))),
        (wrong(lambda delta, omega: omega * delta,
               lambda a: torch.tensor([[math.sin(a), math.cos(a)], [-math.cos(a), math.sin(a)]],
                                      dtype=torch.float64)),
         (_("cos(ωδ) belongs on the diagonal: at δ = 0 the matrix must be the identity"),
          _("sin and cos of the angle are swapped"))),
        (wrong(lambda delta, omega: math.radians(omega * delta), _rotation),
         (_("ωδ is already an angle in radians, and math.sin, math.cos and torch.sin take radians: "
            "convert nothing"), _("drop the conversion to radians (or from degrees)"))),
        (wrong(lambda delta, omega: omega, _rotation),
         (_("your matrix turns each pair by ω whatever the offset, so only δ = 1 comes out right: the angle grows "
            "with δ"), _("the angle is ω·δ: the offset times the pair's frequency"))),
        (wrong(lambda delta, omega: delta, _rotation),
         (_("the angle is ω·δ: each pair turns at its own frequency ω"), _("multiply the offset by omega"))),
    ])

    def case(index):
        delta, omega = cases[index[0]]
        return _("δ = {delta}, ω = {omega}, row {row}").format(delta=delta, omega=number(omega, "g"), row=index[1])

    expect_close(received, expected, _("{exercise} (δ in {offsets}, ω in {omegas})").format(
        exercise=_(ROTATION), offsets=offsets, omegas=omegas), hint, name_row=case)

    P = PositionalEncoding(num_hiddens, 0.0, max_len=40).P[0].double()  # (positions, num_hiddens)
    for delta in (1, 5, 17):
        for j, omega in enumerate(omegas):
            pairs = P[:40 - delta, 2 * j:2 * j + 2]  # (positions, 2): rows (sin ωi, cos ωi)
            moved = pairs @ offset_rotation(delta, omega).detach().double().T  # M p, for every row p
            expect_close(moved, P[delta:, 2 * j:2 * j + 2],
                         _("{exercise} (on the table, δ = {delta})").format(exercise=_(ROTATION), delta=delta),
                         _("M should move every row of the table δ positions on"))
    passed(ROTATION, _("On every row of d2l.PositionalEncoding(8, 0.0, max_len=40).P, M(δ, ω) gives the row δ "
                       "positions on, for δ = 1, 5 and 17: one matrix, whatever the position i."))


def _table(module, max_len, num_hiddens):
    """The learned table of ``module``, (max_len, num_hiddens), or None: its one parameter of that many numbers."""
    candidates = [p for p in module.parameters() if p.numel() == max_len * num_hiddens]
    return candidates[0] if len(candidates) == 1 else None


def _require_table(module, max_len, num_hiddens):
    """Exercise 7.2's learned table: the one parameter of ``module``, (max_len, num_hiddens), once it is."""
    require(isinstance(module, nn.Module), LEARNED, _("an nn.Module"), type(module).__name__,
            _("subclass torch.nn.Module and call super().__init__() first"))
    parameters = list(module.parameters())
    buffers = [name for name, _buffer in module.named_buffers()]
    # nn.Parameter(t) * 0.01 is a plain tensor again (one that requires a gradient), which the module does not
    # register: the learner did wrap the table, then scaled the wrapper.
    computed = [name for name, value in vars(module).items()
                if isinstance(value, torch.Tensor) and not isinstance(value, nn.Parameter) and value.requires_grad]
    require(parameters or not computed, LEARNED, _("at least one learnable parameter: the table"),
            _("no parameters; {names} is a tensor computed from one").format(names=", ".join(computed)), (
                _("nn.Parameter(t) * 0.01 is a plain tensor again, computed from the parameter, and the module "
                  "does not keep it as a parameter: scale inside, nn.Parameter(torch.randn(...) * 0.01)"),
                _("an optimiser only updates module.parameters(): the attribute itself must be the nn.Parameter")))
    require(parameters, LEARNED, _("at least one learnable parameter: the table"),
            _("no parameters (buffers: {buffers})").format(buffers=buffers) if buffers else _("no parameters"), (
                _("the table is not learnable: an optimiser only updates module.parameters()"),
                _("wrap the table in torch.nn.Parameter, or use a torch.nn.Embedding with one row per position; "
                  "a plain tensor attribute or a buffer (like PositionalEncoding's P) is never trained")))
    count = sum(p.numel() for p in parameters)
    require(_table(module, max_len, num_hiddens) is not None and count == max_len * num_hiddens, LEARNED,
            _("one learned vector per position: {max_len} × {num_hiddens} = {numbers} numbers, "
              "for max_len={max_len}, num_hiddens={num_hiddens}").format(
                max_len=max_len, num_hiddens=num_hiddens, numbers=max_len * num_hiddens),
            _("{count} numbers in parameters of shapes {shapes}").format(
                count=count, shapes=[tuple(p.shape) for p in parameters]),
            (_("the table has one row of num_hiddens numbers for each of the max_len positions"),
             _("build it with shape (max_len, num_hiddens), from the constructor's two arguments, in that order")))
    table = _table(module, max_len, num_hiddens)
    require(table.shape[-1] == num_hiddens, LEARNED,
            _("a table of shape ({max_len}, {num_hiddens})").format(max_len=max_len, num_hiddens=num_hiddens),
            _("shape {shape}").format(shape=tuple(table.shape)), (
                _("the table is transposed: one row per position, so its shape is (max_len, num_hiddens) = "
                  "({max_len}, {num_hiddens})").format(max_len=max_len, num_hiddens=num_hiddens),
                _("swap the two sizes where you build it")))
    return table


def _require_rows_added(module, X, rows):
    """Exercise 7.2's forward: ``X`` plus the first rows of the learned table ``rows`` (max_len, num_hiddens),
    which is not the sinusoidal one; returns the output."""
    (batch, steps, num_hiddens), max_len = X.shape, rows.shape[0]
    with explained(LEARNED, "forward(X)", (RuntimeError, r"The size of tensor a \(\d+\) must match", (
            _("X has {steps} positions (axis 1) and the table {max_len} rows: only the first {steps} rows of the "
              "table are added").format(steps=steps, max_len=max_len),
            _("the table's rows are positions: take as many of them as X has steps, and let them broadcast "
              "over the batch")))):
        received = module(X)
    require(isinstance(received, torch.Tensor), LEARNED, _("a torch.Tensor"), type(received).__name__,
            _("forward returns X with the positions added: a tensor"))
    require(received.shape == X.shape, LEARNED, _("shape {shape}, the shape of X").format(shape=tuple(X.shape)),
            _("shape {shape}").format(shape=tuple(received.shape)), (
                _("the output has the shape of X, (batch, steps, num_hiddens): one row of the table added at each "
                  "position"), _("take the rows of the first steps positions (steps is the length of X's axis 1), "
                                 "and let them broadcast over the batch")))
    added = received.detach() - X  # (batch, steps, num_hiddens): what the module added
    sinusoidal = PositionalEncoding(num_hiddens, 0.0, max_len=max_len).P[0, :steps]
    hint = hint_for(added, (
        _("add row i of the table to position i of every example: the table's first steps rows, broadcast "
          "over the batch"), _("the rows to add are those of positions 0 to steps - 1, the same for every example")), [
        (sinusoidal.expand(batch, -1, -1),
         (_("that is the fixed sinusoidal table: a learned one starts from random numbers and is shaped by "
            "training"), _("initialise the parameter with small random values, for example 0.02 times randn"))),
        (rows[:steps].expand(batch, -1, -1) - X,
         (_("the module returns the embedding alone: add it to X"), _("the output is X plus the rows"))),
        (torch.zeros_like(X), (_("nothing was added to X"), _("add the table's first steps rows to X"))),
        (rows[:batch, None].expand(-1, steps, -1),
         (_("example b got row b of the table at every position: the rows belong to the positions, axis 1 of X, "
            "not to the examples of axis 0"),
          _("position i of every example gets row i: the same rows for each example"))),
    ])
    expect_close(added, rows[:steps].expand(batch, -1, -1), LEARNED, hint,
                 name_row=lambda index: _("example {example}, position {position}").format(
                     example=index[0], position=index[1]))
    require(not torch.allclose(added[0], sinusoidal, atol=1e-4), LEARNED, _("a table learned from random numbers"),
            _("the sinusoidal table"),
            (_("that is the fixed sinusoidal table: a learned one starts from random numbers"),
             _("initialise the parameter with small random values")))
    return received


def _require_gradient(received, upstream, table, max_len):
    """Exercise 7.2's gradient: backward() through the output ``received`` (``upstream``, (batch, steps,
    num_hiddens), its ∂loss) reaches each row in use of the ``max_len`` rows of ``table``, once per example."""
    _batch, steps, num_hiddens = upstream.shape
    no_gradient = (_("the output does not depend on the parameter through autograd"),
                   _("use the parameter itself in forward, not .data, .detach() or a copy made in __init__"))
    require(received.requires_grad, LEARNED, _("an output that autograd can trace back to the table"),
            _("an output with requires_grad=False"), no_gradient)
    (received * upstream).sum().backward()
    require(table.grad is not None, LEARNED, _("a gradient on the table after backward()"), _("none"), no_gradient)
    expected_grad = torch.zeros(max_len, num_hiddens)
    expected_grad[:steps] = upstream.sum(dim=0)  # each row is used once per example
    expect_close(table.grad.reshape(-1, num_hiddens), expected_grad, LEARNED, (
        _("each used row of the table should receive the sum over the batch of the gradient at its position, "
          "and unused rows nothing"), _("add the rows once, to every example: no scaling, no mean over the batch")))


@check(LEARNED)
def check_learned_embedding(LearnedPositionalEmbedding):
    """Exercise 7.2: X + E[:steps] with E an nn.Parameter (or nn.Embedding) of shape (max_len, num_hiddens)."""
    max_len, num_hiddens, batch, steps = 10, 6, 3, 7
    with seeded(72):
        module = LearnedPositionalEmbedding(max_len, num_hiddens)
        X = torch.randn(batch, steps, num_hiddens)
        upstream = torch.randn(batch, steps, num_hiddens)  # ∂loss/∂output for the gradient check
    table = _require_table(module, max_len, num_hiddens)
    received = _require_rows_added(module, X, table.detach().reshape(max_len, num_hiddens))
    _require_gradient(received, upstream, table, max_len)
    passed(LEARNED, _("{numbers} learned numbers, and the gradient reaches the {steps} rows in use. "
                      "It has no row for position {max_len} or later (max_len={max_len}), and a new one would need "
                      "training, while the sinusoidal formula gives a row for any position.").format(
                          numbers=max_len * num_hiddens, steps=steps, max_len=max_len))


def _layers():
    """(name, layer, equivariant?) for layers from (batch, tokens, 8) to the same shape, weights seeded.

    A name is the English one, marked for the catalogue: a message translates it where it shows it.
    """
    num_hiddens = 8
    with seeded(73):
        attention = MultiHeadAttention(num_hiddens, 2, 0.0, query_size=num_hiddens, key_size=num_hiddens,
                                       value_size=num_hiddens).eval()
        causal = MultiHeadAttention(num_hiddens, 2, 0.0, query_size=num_hiddens, key_size=num_hiddens,
                                    value_size=num_hiddens, causal=True).eval()
        mlp = nn.Sequential(nn.Linear(num_hiddens, 16), nn.ReLU(), nn.Linear(16, num_hiddens))
        conv = nn.Conv1d(num_hiddens, num_hiddens, kernel_size=3, padding=1)
        rnn = nn.RNN(num_hiddens, num_hiddens, batch_first=True)
    positions = PositionalEncoding(num_hiddens, 0.0)

    def with_positions(X):
        X = positions(X)
        return attention(X, X, X)

    return [
        (N_("self-attention"), lambda X: attention(X, X, X), True),
        (N_("self-attention after adding P"), with_positions, False),
        (N_("causal self-attention"), lambda X: causal(X, X, X), False),
        (N_("a position-wise MLP"), mlp, True),
        (MEAN, lambda X: X.mean(dim=1, keepdim=True).expand_as(X), True),
        (N_("a convolution over the tokens"), lambda X: conv(X.transpose(1, 2)).transpose(1, 2), False),
        (N_("an RNN"), lambda X: rnn(X)[0], False),
    ]


# Shuffling axis 0, the batch, with a permutation of the six tokens indexes past its two examples.
_SHUFFLED_BATCH = (IndexError, r"out of bounds for dimension 0", (
    N_("perm holds positions of tokens, 0 to 5, and you used it on axis 0 of X, which holds the 2 examples of the "
       "batch: X is (batch, tokens, features)"),
    N_("the tokens are axis 1: keep every example, and reorder that axis by perm, before the layer and after it")))


def _as_bool(value, name):
    """The learner's answer as a bool, or an ExerciseError saying what a yes-or-no answer looks like."""
    if isinstance(value, torch.Tensor) and value.numel() == 1 and value.dtype == torch.bool:
        return bool(value)
    require(isinstance(value, bool), EQUIVARIANCE, _("True or False for {name}").format(name=_(name)),
            _("{type} of shape {shape}").format(type=type(value).__name__, shape=tuple(value.shape))
            if isinstance(value, torch.Tensor) else f"{type(value).__name__}",
            (_("return one True or False for the whole comparison"),
             _("torch.allclose compares two tensors and returns one bool")))
    return value


def _prediction(value, name):
    """A prediction as a bool: True or False, or yes or no (in English or the learner's language)."""
    if isinstance(value, str) and value.strip().lower() in {"yes", _("yes")}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"no", _("no")}:
        return False
    require(isinstance(value, bool), EQUIVARIANCE, _("yes or no (True or False) for {name}").format(name=_(name)),
            repr(value), _("write one yes or no per layer, in the order of the exercise's list"))
    return value


def _expect_predictions(predictions, layers):
    """The learner's seven predictions, in the order of the exercise's list, agree with the layers' answers."""
    names = [name for name, _layer, _flag in layers]
    require(isinstance(predictions, (list, tuple)) and len(predictions) == len(layers), EQUIVARIANCE,
            _("{count} predictions, one per layer of the list").format(count=len(layers)),
            _("{count} predictions").format(count=len(predictions)) if isinstance(predictions, (list, tuple))
            else type(predictions).__name__,
            _("write one yes or no per layer, in the order of the exercise's list"))
    guessed = [_prediction(value, name) for value, name in zip(predictions, names)]
    wrong = [_(name) for name, guess, (_name, _layer, flag) in zip(names, guessed, layers) if guess != flag]
    require(not wrong, EQUIVARIANCE, _("predictions that agree with your test"),
            _("predictions that disagree with it for {names}").format(names=wrong),
            (_("your test is right and your predictions are not, for {names}: ask of each whether it reads the "
               "positions of the tokens, or only the tokens").format(names=wrong),
             _("a layer that treats each token alone, or all tokens alike, moves its outputs with its inputs; one "
               "that reads an order (a mask on the positions, P added, a window of neighbours, a recurrence) "
               "does not")))


def _written(predictions):
    """The learner's predictions: the list itself, or what their function returns.

    The chapter has the learner write the list in a function of the exercise
    cell, so that its learner edition holds a stub there; that stub's
    NotImplementedError says the exercise is not attempted, as the test's does.
    """
    if not callable(predictions):
        return predictions
    try:
        return predictions()
    except NotImplementedError as error:
        if not raised_by(predictions, error):
            raise
        raise ExerciseNotAttempted(EQUIVARIANCE, getattr(predictions, "__name__", _("the function"))) from None


def _equivariance_hint(answers, expected, names):
    """What a wrong test of Exercise 7.3 most likely did, from its ``answers`` (permutation's label -> one
    answer per layer, for the swap and then the rotation), against the ``expected`` ones of the layers ``names``."""
    swap, rotation = answers.values()
    false_negatives = any(want and not got for row in answers.values() for got, want in zip(row, expected))
    false_positives = any(got and not want for row in answers.values() for got, want in zip(row, expected))
    if swap == expected and rotation != expected:
        hint = (_("right for a swap, wrong for a rotation: you shuffled one side with the inverse permutation"),
                _("index the output of the layer with perm itself, exactly as its input was indexed"))
    elif swap == rotation == [name == MEAN for name in names]:  # only the mean gives the unshuffled output
        hint = (_("you compared the output for the shuffled input with the unshuffled output"),
                _("an equivariant layer moves each output with its token: compare with the output of X, shuffled "
                  "by perm"))
    elif swap == rotation == [not flag for flag in expected]:
        hint = (_("every answer is the opposite: return True when the two outputs agree"), _("negate your result"))
    elif false_negatives and not false_positives:
        hint = (_("your test is too strict: float sums taken in another order differ in their last bits"),
                _("compare with a tolerance (torch.allclose, atol around 1e-5), not exact equality"))
    elif all(swap) and all(rotation):
        hint = (_("every layer passes your test, even the RNN: are you shuffling the tokens, axis 1 of X?"),
                _("shuffling axis 0 reorders the examples of the batch, which every layer here treats on their "
                  "own; the tokens are axis 1, and the comparison wants a small tolerance (around 1e-5)"))
    elif false_positives and not false_negatives:
        hint = (_("your test accepts layers whose outputs do change with the order: its tolerance is too loose"),
                _("compare the two outputs with a small tolerance, around 1e-5"))
    else:
        hint = (_("shuffle the tokens (axis 1) of X with perm, run the layer, and compare with the layer's output "
                  "for X, shuffled the same way"), _("use torch.allclose with a small tolerance for the comparison"))
    return hint


@check(EQUIVARIANCE)
def check_equivariance(is_permutation_equivariant, predictions=None):
    """Exercise 7.3: f(X[:, perm]) = f(X)[:, perm] for seven layers, with two permutations.

    ``predictions``, if given, are the learner's seven yes-or-no guesses in the
    order of the exercise's list, checked once their test is right: a list, or
    a function that returns it (called only then).
    """
    with seeded(730):
        X = torch.randn(2, 6, 8)  # (batch, tokens, features)
    perms = {_("a swap of the ends"): torch.tensor([5, 1, 2, 3, 4, 0]),  # its own inverse
             _("a rotation by one"): torch.tensor([1, 2, 3, 4, 5, 0])}  # its inverse is the rotation back
    layers = _layers()
    expected = [flag for _name, _layer, flag in layers]
    answers = {}
    with torch.no_grad():
        for label, perm in perms.items():
            with explained(EQUIVARIANCE, "is_permutation_equivariant(layer, X, perm)", _SHUFFLED_BATCH):
                answers[label] = [_as_bool(is_permutation_equivariant(layer, X, perm), name)
                                  for name, layer, _equivariant in layers]
    names = [name for name, _layer, _equivariant in layers]
    hint = _equivariance_hint(answers, expected, names)
    for label, received in answers.items():
        wrong = [_(name) for name, got, want in zip(names, received, expected) if got != want]
        require(not wrong, EQUIVARIANCE,
                _("with {label}: equivariant for {names}").format(
                    label=label, names=[_(n) for n, f in zip(names, expected) if f]),
                _("a wrong answer for {names}").format(names=wrong), hint)
    if predictions is not None:
        _expect_predictions(_written(predictions), layers)
    verdict = _("Equivariant: self-attention, the position-wise MLP and the mean. Not: self-attention after adding P, "
                "causal self-attention (its mask depends on the positions), the convolution and the RNN (they read "
                "the tokens in order).")
    if predictions is None:
        verdict += " " + _("Your predictions were not checked: pass them as predictions=, seven yes or no in the "
                           "order of the list.")
    else:
        verdict += " " + _("Your seven predictions were right too.")
    passed(EQUIVARIANCE, verdict)
