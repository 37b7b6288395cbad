"""What the chapter checks share: private random inputs, naming a typical mistake, checking and showing a mask."""

import contextlib
import re

import torch

from ..i18n import _
from ._feedback import ExerciseError, require


@contextlib.contextmanager
def seeded(seed):
    """Run a block with the CPU generator seeded, then restore the caller's state.

    A check builds its own inputs and modules in such a block, so that calling
    it never changes the random numbers the notebook draws next.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def hint_for(received, default, mistakes):
    """The hint of the first ``(wrong_answer, hint)`` pair that ``received`` equals.

    ``received`` that matches none of the typical wrong answers gets ``default``.
    A hint is one text or a tuple of steps, as ``ExerciseError`` takes it.
    Numbers match up to rounding, NaN where the wrong answer has NaN (a fully
    masked row); a boolean mask matches only exactly, and only a boolean mask.
    """
    if isinstance(received, torch.Tensor):
        received = received.detach()
        for wrong, hint in mistakes:
            if received.shape != wrong.shape:
                continue
            if wrong.dtype == torch.bool:
                if received.dtype == torch.bool and torch.equal(received.to(wrong.device), wrong):
                    return hint
            elif torch.allclose(received.to(wrong.device, wrong.dtype), wrong, atol=1e-5, rtol=1e-4,
                                equal_nan=True):
                return hint
    return default


def mask_rows(mask):
    """A boolean matrix as one group of 1s and 0s per query, on one line, for an ``ExerciseError``.

    An error shows the expected and the received mask on lines that start
    alike, so their groups line up, row under row.
    """
    return " " + " ".join("".join("1" if v else "0" for v in row) for row in mask.tolist())


def expect_mask(received, expected, exercise, call, shape_hint, default, mistakes):
    """Check the tensor ``call`` returned against the boolean mask ``expected``: its shape, its dtype, its entries.

    Wrong entries show both masks row under row, with the hint ``hint_for``
    picks from ``mistakes``, ``(wrong mask, hint)`` pairs, and ``default``.
    """
    require(received.shape == expected.shape, exercise,
            _("shape {shape} from {call}").format(shape=tuple(expected.shape), call=call),
            _("shape {shape}").format(shape=tuple(received.shape)), shape_hint)
    received = received.cpu()
    expected_rows = _("from {call}:{rows}").format(call=call, rows=mask_rows(expected))
    require(received.dtype == torch.bool, exercise, expected_rows, _("dtype {dtype}").format(dtype=received.dtype),
            (_("return a boolean mask, not numbers"),
             _("a comparison such as a < b gives booleans, and & combines two masks. SDPA adds a float "
               "attn_mask to the scores instead of masking with it")))
    require(torch.equal(received, expected), exercise, expected_rows,
            _("from {call}:{rows}").format(call=call, rows=mask_rows(received)), hint_for(received, default, mistakes))


@contextlib.contextmanager
def without(exercise, task, *targets):
    """Run the learner's code with the package functions that would do the exercise for them switched off.

    Each target is ``(owner, attribute name, what to call it in the message)``; ``task``
    says what to do, in the learner's language (or marked ``N_``).
    Calling one raises an ``ExerciseError`` that says the exercise is to do it
    by hand: the answer cannot be imported away.
    """
    def refuse(label):
        def refused(*args, **kwargs):
            raise ExerciseError(exercise, _(task), _("a call to {function}").format(function=label),
                                (_("{function} does the whole exercise for you").format(function=label),
                                 _("{task} yourself").format(task=_(task))))
        return refused

    saved = [(owner, name, owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name))
             for owner, name, _ in targets]
    try:
        for owner, name, label in targets:
            setattr(owner, name, refuse(label))
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


@contextlib.contextmanager
def explained(exercise, call, *known):
    """Run the learner's ``call`` so that a known Python error reaches them as an ``ExerciseError`` that explains it.

    Each of ``known`` is ``(exception type, regex, hint)``: an error of that
    type whose message matches the regex becomes an ``ExerciseError`` that names
    the call, quotes Python's message, and gives the hint (steps, as
    ``ExerciseError`` takes them). Any other error passes through with its
    traceback, which is where the learner's own bug is.
    """
    try:
        yield
    except Exception as error:
        for kind, pattern, hint in known:
            if isinstance(error, kind) and re.search(pattern, str(error)):
                raise ExerciseError(exercise, _("a result from {call}").format(call=call),
                                    _("{error}: {message}, raised by {call}").format(
                                        error=type(error).__name__, message=str(error).splitlines()[0],
                                        call=call), hint) from error
        raise
