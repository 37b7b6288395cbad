"""Checks for chapter 08, attention that learns."""

import math

import torch
import torch.nn.functional as F

from ..attention import AdditiveAttention, DotProductAttention, MultiHeadAttention
from ..i18n import N_, _, numbers
from ..masking import masked_softmax
from ..seq2seq import BOS, AttentionSeq2Seq, make_batch
from ._feedback import ExerciseError, check, expect_close, passed, require
from ._feedback import hint as hint  # an error asks the learner to run ch08.hint()
from ._support import hint_for, seeded, without

REVERSAL = N_("Exercise 8.1 · the reversal's alignment")
CROSS = N_("Exercise 8.2 · cross-attention, one output step at a time")
SORTING = N_("Exercise 8.3 · the sorting task's alignment")


def _one_hot_rows(columns, real, width):
    """(batch, steps, width) floats: row t holds a 1 at ``columns[b, t]`` where ``real[b, t]``, else 0s."""
    return F.one_hot(columns.clamp(0, width - 1), width).float() * real.unsqueeze(-1)


@check(REVERSAL)
def check_reversal_alignment(reversal_alignment):
    """Exercise 8.1: the anti-diagonal of each example's n × n block, padding rows empty."""
    valid_lens, num_steps = torch.tensor([2, 5, 8, 4]), 8
    steps = torch.arange(num_steps)
    real = steps < valid_lens[:, None]  # (batch, steps)
    expected = _one_hot_rows(valid_lens[:, None] - 1 - steps, real, num_steps)
    received = reversal_alignment(valid_lens.clone(), num_steps)
    everywhere = torch.ones_like(real)
    hint = hint_for(received, (_("output step t copies source position n - 1 - t, where n is that example's "
                                 "length; rows of padding steps (t ≥ n) hold no 1"),
                               _("compare, for every (step t, position s), the position n - 1 - t with s; "
                                 "n comes from valid_lens, one per example")), [
        (_one_hot_rows(steps.expand(4, -1), real, num_steps),
         (_("that is the diagonal: step t copying position t is the identity, not a reversal"),
          _("reversal reads the source from its last digit: step 0 copies position n - 1"))),
        (_one_hot_rows((num_steps - 1 - steps).expand(4, -1), real, num_steps),
         (_("you reversed the padded row of 8: step 0 then copies the last *padding* position of a short "
            "example"),
          _("use each example's own length n from valid_lens, not num_steps"))),
        (_one_hot_rows((num_steps - 1 - steps).expand(4, -1), everywhere, num_steps),
         (_("you reversed the padded row of 8, and padding steps got a 1"),
          _("use each example's own length n from valid_lens, not num_steps; rows t ≥ n stay 0"))),
        (_one_hot_rows((valid_lens[:, None] - 1 - steps) % num_steps, everywhere, num_steps),
         (_("the real steps are right, but the padding steps (t ≥ n) got a 1 too"),
          _("a padding step copies nothing: its whole row must be 0"))),
    ])
    expect_close(received, expected, REVERSAL, hint)
    chance = numbers([1 / n for n in (2, 5, 8)], "g")  # 0.125 in full: ".2f" would print 0.12
    passed(REVERSAL, _("Uniform attention over the n real positions would put 1/n on it: {chance} for "
                       "n = 2, 5, 8. The trained model of this chapter puts most of its weight there.").format(
                           chance=chance))


def _cross_inputs():
    """A small dot-product model, a reversal batch, its encoder outputs and its decoder states."""
    with seeded(82):
        model = AttentionSeq2Seq(8, "dot-product").eval()
        batch = make_batch("reverse", 3, (3, 6), generator=torch.Generator().manual_seed(82))
    decoder_inputs = torch.cat([torch.full_like(batch.target[:, :1], BOS), batch.target[:, :-1]], dim=1)
    with torch.no_grad():
        encoder_outputs = model.encode(batch.source, batch.valid_lens)  # (3, 6, 8)
        states = model.decoder_states(decoder_inputs)  # (3, 6, 8): T = 6 output steps
        model.decode(decoder_inputs, encoder_outputs, batch.valid_lens)
    return model, batch, encoder_outputs, states


def _expect_rows_close(received, expected, name, hint):
    """Check a (B, T, ·) answer of Exercise 8.2 row by row; a wrong one shows a row where the two differ.

    The error's two lines show the same row, ``name[b, t]``, of the expected and
    the received tensor: a row holding NaN where the expected row has none if
    there is one, else the first row that differs. For the weights each line
    also gives the row's sum, and the error carries the picture of that
    example.
    """
    require(isinstance(received, torch.Tensor), CROSS, _("a torch.Tensor"), f"{type(received).__name__}",
            _("return tensors, not numbers or lists"))
    require(received.shape == expected.shape, CROSS, _("shape {shape}").format(shape=tuple(expected.shape)),
            _("shape {shape}").format(shape=tuple(received.shape)), hint)
    received = received.detach().to(expected.device, expected.dtype)
    close = torch.isclose(received, expected, atol=1e-5, rtol=1e-4, equal_nan=True).all(dim=-1)  # (B, T)
    if close.all():
        return
    new_nan = received.isnan().any(dim=-1) & ~expected.isnan().any(dim=-1)
    b, t = (new_nan if new_nan.any() else ~close).nonzero()[0].tolist()

    def row(tensor):
        values = numbers(tensor[b, t].tolist(), ".3f")
        total = _(" (sum {total:.3f})").format(total=tensor[b, t].sum()) if name == "weights" else ""
        return _("{name}[{b}, {t}], example {b}'s output step {t}: [{values}]{total}").format(
            name=name, b=b, t=t, values=values, total=total)

    error = ExerciseError(CROSS, row(expected), row(received), hint)
    if name == "weights":
        error.picture = (received[b], expected[b])
    raise error


class _Counted(torch.nn.Module):
    """A projection that counts how often it runs, then runs the real layer."""

    def __init__(self, layer):
        super().__init__()
        self.layer, self.runs = layer, 0

    def forward(self, x):
        self.runs += 1
        return self.layer(x)

    @property
    def weight(self):  # reading the matrix to multiply by it yourself counts as a run too
        self.runs += 1
        return self.layer.weight


def _expect_step_result(result, expected_shapes):
    """One step's answer must be a pair (context, weights) of the given shapes."""
    require(isinstance(result, tuple) and len(result) == 2, CROSS, _("a pair (context, weights)"),
            f"{type(result).__name__}", _("step returns the context and the weights, as a tuple"))
    for name, value, shape in zip(("context", "weights"), result, expected_shapes):
        require(isinstance(value, torch.Tensor), CROSS, _("{name}: a torch.Tensor").format(name=name),
                f"{type(value).__name__}", _("return tensors, not numbers or lists"))
        extra_axis = value.shape == (shape[0], 1, shape[1])
        require(value.shape == shape, CROSS,
                _("{name} of one step: shape {shape}").format(name=name, shape=tuple(shape)),
                _("{name} of one step: shape {shape}").format(name=name, shape=tuple(value.shape)),
                _("drop the axis of size 1 that holds the one query: {name} is (B, {size})").format(
                    name=name, size=shape[1]) if extra_axis else
                _("one step gives one row per example: {name} is (B, {size})").format(name=name, size=shape[1]))


def _run_steps(make_cross_attention, encoder_outputs, lens, states, W_q, W_k):
    """(context (B, T, d), weights (B, T, S)) of the learner's cross-attention, one step per output step of
    ``states`` (B, T, d), no attention module of the library in use."""
    B, T, d = states.shape
    S = encoder_outputs.shape[1]
    with without(CROSS, _("compute the scores, the masked softmax and the weighted sum"),
                 (DotProductAttention, "forward", "d2l.DotProductAttention"),
                 (AdditiveAttention, "forward", "d2l.AdditiveAttention"),
                 (MultiHeadAttention, "forward", "d2l.MultiHeadAttention"),
                 (F, "scaled_dot_product_attention", "F.scaled_dot_product_attention")), torch.no_grad():
        step = make_cross_attention(encoder_outputs.clone(), lens.clone(), W_q, W_k)
        require(callable(step), CROSS, _("a function step(decoder_state)"), f"{type(step).__name__}",
                _("define step inside make_cross_attention and return it (the function itself, not a call)"))
        results = []
        for t in range(T):
            result = step(states[:, t].clone())
            _expect_step_result(result, ((B, d), (B, S)))
            results.append(result)
    context = torch.stack([c for c, _weights in results], dim=1)  # (B, T, d_model)
    weights = torch.stack([w for _context, w in results], dim=1)  # (B, T, S)
    return context, weights


def _weights_mistakes(model, states, encoder_outputs, lens):
    """Exercise 8.2's typical wrong weights (B, T, S), each with its hint, for ``hint_for``."""
    S = encoder_outputs.shape[1]
    with torch.no_grad():
        queries, keys = model.W_q(states), model.W_k(encoder_outputs)
        scale = math.sqrt(queries.shape[-1])
        scores = queries @ keys.transpose(1, 2) / scale  # (B, T, S)
        padding = (torch.arange(S) >= lens[:, None])[:, None, :]  # (B, 1, S): the padding keys
        masked = scores.masked_fill(padding, float("-inf"))
        return [
            (masked_softmax(scores * scale, lens), (_("divide the scores by √d before the softmax"),
                                                    _("d is the size of a query, its last axis (num_hiddens)"))),
            (torch.softmax(scores, dim=-1), (_("padding source positions get weight: mask them"),
                                             _("pass the source lengths to the masked softmax"))),
            (torch.softmax(scores, dim=-1).masked_fill(padding, 0.0),
             (_("you masked after the softmax: the padding positions got 0, but the other weights of the row "
                "were not scaled up, so the row sums to less than 1"),
              _("mask the scores before the softmax (padding set to −inf, or d2l.masked_softmax with the source "
                "lengths): the softmax then shares the whole weight among the real positions"))),
            (torch.ones_like(scores),
             (_("every weight is 1: your softmax ran over an axis of size 1. One step's scores are (B, 1, S), "
                "and axis 1 holds the step's one query"),
              _("normalise each row over the source positions: the last axis"))),
            (torch.ones_like(scores).masked_fill(padding, float("nan")),
             (_("your softmax ran over axis 1, which holds the step's one query: each real position got 1, and "
                "a padding position, −inf alone, got 0/0, NaN"),
              _("the mask was right; normalise over the source positions: the last axis"))),
            (torch.softmax(masked, dim=0),
             (_("your softmax runs over the examples (axis 0): each weight is shared with the other examples of "
                "the batch"),
              _("normalise each example's row over its source positions: the last axis"))),
            (masked_softmax(states @ keys.transpose(1, 2) / scale, lens),
             (_("project the decoder states with W_q to get the queries"),
              _("the queries are W_q applied to the decoder states, not the states themselves"))),
            (masked_softmax(queries @ encoder_outputs.transpose(1, 2) / scale, lens),
             (_("project the encoder outputs with W_k to get the keys"),
              _("the keys are W_k applied to the encoder outputs; the values are the outputs as they are"))),
        ]


@check(CROSS)
def check_cross_attention_steps(make_cross_attention):
    """Exercise 8.2: the keys projected once, then one cross-attention step per output step."""
    model, batch, encoder_outputs, states = _cross_inputs()
    lens = batch.valid_lens
    T = states.shape[1]  # the output steps
    expected_weights = model.attention_weights
    with torch.no_grad():
        expected_context = DotProductAttention(0.0)(model.W_q(states), model.W_k(encoder_outputs),
                                                    encoder_outputs, lens)
    W_q, W_k = _Counted(model.W_q), _Counted(model.W_k)
    context, weights = _run_steps(make_cross_attention, encoder_outputs, lens, states, W_q, W_k)
    _expect_rows_close(weights, expected_weights, "weights", hint_for(weights, (
        _("scores = query · keysᵀ / √d, one per source position; softmax over the source positions, with the "
          "padding positions masked"),
        _("the query is W_q(decoder_state), the keys W_k(encoder outputs); then d2l.masked_softmax with the "
          "source lengths")), _weights_mistakes(model, states, encoder_outputs, lens)))
    with torch.no_grad():
        projected_values = expected_weights @ model.W_k(encoder_outputs)
    _expect_rows_close(context, expected_context, "context", hint_for(context, (
        _("the context of a step is the weighted sum of the values: the weights times the encoder outputs"),
        _("a batched product of the step's weights with the (B, S, d) values")), [
        (projected_values, (_("the values are the encoder outputs themselves, not W_k of them"),
                            _("this model has no W_v: multiply the weights by the encoder outputs"))),
    ]))
    require(W_k.runs == 1, CROSS, _("W_k run once for the {steps} steps").format(steps=T),
            _("W_k run {runs} times").format(runs=W_k.runs),
            (_("project the encoder outputs once, in make_cross_attention; step reuses them"),
             _("the keys do not depend on the output step: compute them before defining step, and step "
               "sees them as a variable of make_cross_attention")))
    passed(CROSS, _("Equal to the model's own cross-attention, step by step. W_k ran once and W_q "
                    "{runs} times for T = {steps} steps: the keys were projected once for the whole output, "
                    "as a decoder that caches the encoder's keys does.").format(runs=W_q.runs, steps=T))


def _sort_inputs():
    """Sources of distinct digits padded with PAD, their lengths, and the expected alignment."""
    batch = make_batch("sort", 6, (3, 7), generator=torch.Generator().manual_seed(83))
    return batch.source, batch.valid_lens, batch.alignment


@check(SORTING)
def check_sort_alignment(sort_alignment):
    """Exercise 8.3: output step t copies the position of the t-th smallest digit."""
    source, valid_lens, expected = _sort_inputs()
    received = sort_alignment(source.clone(), valid_lens.clone())
    real = expected.sum(-1) > 0  # (batch, steps): the real output steps
    everywhere = torch.ones_like(real)
    width = source.shape[1]
    order = source.argsort(dim=1)  # padding (PAD = 10) sorts after every digit
    descending = source.masked_fill(~real, -1).argsort(dim=1, descending=True)
    hint = hint_for(received, (
        _("row t holds a 1 in the column of the source position whose digit is the t-th smallest; padding rows "
          "are 0"),
        _("argsort the digits (keep padding last): its result lists, for each output step, the position it "
          "copies; turn those positions into one-hot rows")), [
        (expected.transpose(1, 2),
         (_("you marked where each source position goes (its rank): that is the transpose of the alignment"),
          _("one argsort is enough: it says which position output step t copies. A second argsort inverts the "
            "permutation"))),
        (_one_hot_rows(descending, real, width),
         (_("that sorts in decreasing order: output step 0 must copy the smallest digit"),
          _("sort ascending"))),
        (_one_hot_rows(order, everywhere, width),
         (_("the real steps are right, but the padding steps got a 1 too"),
          _("a padding step copies nothing: multiply its row by 0 (the lengths say which steps are real)"))),
    ])
    expect_close(received, expected, SORTING, hint)
    permutations = {tuple(row.argmax(-1)[: int(n)].tolist()) for row, n in zip(expected, valid_lens)}
    passed(SORTING, _("These {sources} sources need {alignments} different alignments; reversal "
                      "needs one per length. The model reads the digits to find them.").format(
                          sources=len(source), alignments=len(permutations)))
