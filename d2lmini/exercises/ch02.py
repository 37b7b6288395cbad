"""Checks for chapter 02's exercises: boolean masks, causal masks, masked means.

Each check builds its own inputs from a fixed seed on the CPU, calls the
learner's function, and compares the answer with d2lmini's own computation.
"""

import torch

from ..masking import masked_softmax
from ._feedback import ExerciseError, expect, expect_close, passed


def _describe_bool(mask):
    return "\n    " + "\n    ".join("".join("1" if v else "0" for v in row) for row in mask.tolist())


# Exercise 2.1

def _reference_from_mask(X, mask):
    """Softmax over the allowed entries; a row with none allowed is all zeros."""
    weights = torch.softmax(X.masked_fill(~mask, float("-inf")), dim=-1)
    return weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)


def _same(a, b):
    """Equal up to rounding, counting NaN as 0 on both sides."""
    return torch.allclose(a.nan_to_num(nan=0.0), b.nan_to_num(nan=0.0), atol=1e-5)


def _from_mask_hint(received, X, mask):
    if not (isinstance(received, torch.Tensor) and received.shape == X.shape):
        return "return the weights, a tensor with the shape of X"
    received = received.detach().float()
    inverted = torch.softmax(X.masked_fill(mask, float("-inf")), dim=-1)
    if _same(received, inverted):
        return ("the weights sit where the mask is False. True means 'may attend' (as in SDPA's "
                "attn_mask): fill the scores where ~mask, not where mask")
    if received.isnan().any():
        return ("a row whose mask is all False is softmax(-inf, ..., -inf) = 0/0 = NaN: set such "
                "rows to zero afterwards, e.g. with .nan_to_num(nan=0.0)")
    empty = ~mask.expand_as(X).any(dim=-1)  # rows with nothing allowed
    if (received[empty] != 0).any():
        return ("a row with nothing allowed must get all-zero weights, not weight on masked "
                "entries: fill with float('-inf') rather than -1e6 or the dtype's minimum, then "
                "turn the NaN rows into zeros")
    return ("fill the scores where the mask is False with -inf, take the softmax over the last "
            "axis, and zero the rows with nothing allowed")


def check_masked_softmax_from_mask(masked_softmax_from_mask):
    """Exercise 2.1: softmax over the entries a boolean mask allows; empty rows are zeros."""
    exercise = "Exercise 2.1"
    generator = torch.Generator().manual_seed(21)
    X = torch.randn(2, 3, 5, generator=generator)  # (batch, queries, keys)
    full_mask = torch.tensor([[[1, 0, 1, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]],
                              [[0, 0, 0, 1, 0], [1, 1, 0, 0, 1], [0, 1, 1, 0, 0]]], dtype=torch.bool)
    key_mask = torch.tensor([[[1, 1, 0, 1, 0]], [[0, 1, 1, 1, 1]]], dtype=torch.bool)  # (batch, 1, keys)
    cases = [("a (2, 3, 5) mask with one all-False row", full_mask),
             ("a (2, 1, 5) mask broadcast over the queries", key_mask)]
    for what, mask in cases:
        given = X.clone()
        received = masked_softmax_from_mask(given, mask.clone())
        expect_close(received, _reference_from_mask(X, mask), f"{exercise} ({what})",
                     _from_mask_hint(received, X, mask))
        expect(torch.equal(given, X), exercise, "X left unchanged", "X was modified in place",
               "use X.masked_fill(...), which returns a new tensor, not X.masked_fill_(...)")
    prefix = torch.arange(5) < torch.tensor([[2], [4]])  # valid lengths 2 and 4 as a mask
    expect_close(masked_softmax_from_mask(X.clone(), prefix[:, None, :]),
                 masked_softmax(X, torch.tensor([2, 4])), f"{exercise} (lengths as a mask)",
                 "a mask of valid lengths must give the same weights as d2l.masked_softmax")
    passed(exercise, "Any pattern of allowed keys works, and a row with none gets zeros.")


# Exercise 2.2

def _causal_hint(received, expected):
    n = expected.shape[0]
    if received.dtype != torch.bool:
        return ("return a boolean mask (a comparison such as a < b gives one). SDPA adds a float "
                "attn_mask to the scores instead of masking with it")
    if torch.equal(received, expected.T):
        return "rows are queries and columns are keys: query 0 may see key 0 only, so row 0 is 1000..."
    if torch.equal(received, expected & ~torch.eye(n, dtype=torch.bool)):
        return ("the diagonal is missing: query i may attend to itself, so its valid length is "
                "i + 1, not i (use torch.arange(1, num_steps + 1))")
    if torch.equal(received, ~expected):
        return ("True should mark the keys a query MAY attend to, as in SDPA's attn_mask "
                "(nn.MultiheadAttention's boolean attn_mask uses the opposite convention)")
    return "query i has valid length i + 1: compare torch.arange(num_steps) with the lengths 1..num_steps"


def check_causal_mask(causal_mask):
    """Exercise 2.2: the learner's mask is the lower triangle, diagonal included."""
    exercise = "Exercise 2.2"
    for n in (4, 7, 1):
        expected = torch.ones(n, n, dtype=torch.bool).tril()
        received = causal_mask(n)
        expect(isinstance(received, torch.Tensor), exercise, "a torch.Tensor",
               f"{type(received).__name__}", "return the comparison's result, a boolean tensor")
        expect(received.shape == expected.shape, exercise, f"shape ({n}, {n}) for num_steps={n}",
               f"shape {tuple(received.shape)}", "one row per query and one column per key")
        received = received.cpu()
        if received.dtype != torch.bool or not torch.equal(received, expected):
            shown = (f"for num_steps={n}:{_describe_bool(received)}" if received.dtype == torch.bool
                     else f"dtype {received.dtype}")
            raise ExerciseError(exercise, f"for num_steps={n}:{_describe_bool(expected)}",
                                shown, _causal_hint(received, expected))
    passed(exercise, "Query i attends to keys 0..i: the lower triangle, diagonal included.")


# Exercise 2.3

def _masked_mean_hint(received, values, valid_lens, expected):
    if not (isinstance(received, torch.Tensor) and received.shape == expected.shape):
        if isinstance(received, torch.Tensor) and received.shape == (values.shape[0], 1, values.shape[2]):
            return "drop the query axis of length 1: .squeeze(1) turns (batch, 1, dim) into (batch, dim)"
        return "return one mean vector per example: shape (batch, dim)"
    received = received.detach().float()
    if received.isnan().any():
        return ("an example of length 0 gives 0/0 = NaN when you divide a sum by its length; "
                "d2l.masked_softmax gives that example all-zero weights, hence a zero vector")
    if torch.allclose(received, values.mean(dim=1), atol=1e-5):
        return ("that is the mean over every step, padding included: only the first valid_lens[b] "
                "steps may count")
    return "weights = d2l.masked_softmax(zeros of shape (batch, 1, steps), valid_lens), then weights @ values"


def check_masked_mean(masked_mean):
    """Exercise 2.3: the mean over each example's valid steps, zeros for an empty example."""
    exercise = "Exercise 2.3"
    generator = torch.Generator().manual_seed(23)
    values = torch.randn(4, 5, 3, generator=generator)  # (batch, steps, dim)
    valid_lens = torch.tensor([2, 5, 0, 1])
    expected = torch.stack([values[b, :n].mean(dim=0) if n > 0 else torch.zeros(3)
                            for b, n in enumerate(valid_lens.tolist())])  # (batch, dim)
    given = values.clone()
    received = masked_mean(given, valid_lens.clone())
    expect_close(received, expected, exercise, _masked_mean_hint(received, values, valid_lens, expected))
    expect(torch.equal(given, values), exercise, "values left unchanged", "values was modified in place",
           "compute new tensors instead of writing into values")
    passed(exercise, "Padding does not count, and the empty example gives a zero vector.")
