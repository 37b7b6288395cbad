"""How a check talks to a learner: one line on success, a few lines otherwise.

A wrong answer raises ``ExerciseError``, an unattempted stub
``ExerciseNotAttempted``. Both render themselves in place of a traceback
(IPython shows ``_render_traceback_()`` instead of the frames), so the learner
reads what went wrong and no line of d2lmini's code; both are still
exceptions, so nbgrader's autograder gives the check cell no point. An error
raised in the learner's own code is left alone, with its traceback.

Hints come in steps: the error shows the first, a nudge that names the
mistake; ``hint()`` shows the next one for the last check that failed.
"""

import functools
import inspect

import torch


class ExerciseError(AssertionError):
    """An answer that is not yet right: what was expected, what was received, and hints in steps.

    ``hint`` is one text or a sequence of steps, the first a nudge; no step
    gives the answer's code.
    """

    def __init__(self, exercise, expected, received, hint):
        super().__init__(exercise, expected, received, hint)
        self.exercise, self.expected, self.received = exercise, expected, received
        self.hints = (hint,) if isinstance(hint, str) else tuple(hint)
        self.help_call = None  # set by the check that raised it, e.g. "ch02.hint()"
        self.hints_shown = 1

    def lines(self):
        """The learner's view: four lines whatever the fields hold, a fifth when more hints wait."""
        lines = [f"✗ {self.exercise}: not yet.", f"  expected: {_one_line(self.expected)}",
                 f"  received: {_one_line(self.received)}", f"  hint: {_one_line(self.hints[0], limit=None)}"]
        if self.help_call and len(self.hints) > 1:
            lines.append(f"  More help: run {self.help_call} in a new cell.")
        return lines

    def __str__(self):
        return "\n".join(self.lines())

    def _render_traceback_(self):
        return self.lines()


class ExerciseNotAttempted(NotImplementedError):
    """The check ran the student stub: the learner has not written this exercise yet.

    It stays a ``NotImplementedError`` (the stub's own error, said in one line),
    so a blank answer scores nothing.
    """

    def __init__(self, exercise, function):
        super().__init__(exercise, function)
        self.exercise, self.function = exercise, function

    def __str__(self):
        number = self.exercise.split(" · ")[0]
        return (f"{number} · not attempted yet: complete `{self.function}` above, run that cell, "
                f"then this one.")

    def _render_traceback_(self):
        return [str(self)]


def _one_line(text, limit=200):
    """A field of the error on one line, whatever its text holds, cut at ``limit`` characters (if any)."""
    text = " ".join(str(text).split())
    return text if limit is None or len(text) <= limit else text[:limit - 1] + "…"


_last_failure = None  # the ExerciseError of the last check run, if it failed


def _own_code(answer):
    """The code objects of the learner's answer: a function's body, or each method a class defines."""
    functions = vars(answer).values() if isinstance(answer, type) else [answer]
    return {getattr(inspect.unwrap(getattr(f, "__func__", f)), "__code__", None) for f in functions} - {None}


def _raised_by(answer, error):
    """Whether the answer's own body raised ``error``, as the stub does, rather than code it calls.

    The innermost frame of the traceback is where the error was raised; it is
    the stub when that frame runs the code of the function the learner handed
    to the check (or of a method of the class they handed to it). A
    NotImplementedError from deeper down (a helper of the learner's, a library)
    is the learner's own error.
    """
    frame = error.__traceback__
    while frame.tb_next is not None:
        frame = frame.tb_next
    return frame.tb_frame.f_code in _own_code(answer)


def check(exercise):
    """Make ``run(answer, ...)`` a check of ``exercise``, the label its messages carry.

    The check's first argument is the learner's function. A stub raising its
    NotImplementedError becomes ``ExerciseNotAttempted``; an ``ExerciseError``
    learns how to ask for more hints and becomes the one ``hint()`` speaks of;
    any other exception passes through unchanged.
    """
    def decorate(run):
        @functools.wraps(run)
        def checked(answer, *args, **kwargs):
            global _last_failure
            _last_failure = None
            try:
                return run(answer, *args, **kwargs)
            except ExerciseError as error:
                error.help_call = f"{run.__module__.rpartition('.')[2]}.hint()"
                _last_failure = error
                raise
            except NotImplementedError as error:
                if isinstance(error, ExerciseNotAttempted) or not _raised_by(answer, error):
                    raise
                name = getattr(answer, "__name__", "the function")
                raise ExerciseNotAttempted(exercise, name) from None
        return checked
    return decorate


def hint():
    """Print the next hint for the last check run, if it failed; the last step again once all are shown."""
    error = _last_failure
    if error is None:
        print("No hint to give: the last check you ran did not fail with a wrong answer.")
        return
    step = min(error.hints_shown, len(error.hints) - 1)
    error.hints_shown = step + 1
    last = " (the last)" if step == len(error.hints) - 1 else ""
    print(f"{error.exercise} · hint {step + 1} of {len(error.hints)}{last}: {error.hints[step]}")


def passed(exercise, detail=""):
    """Report a correct answer."""
    print(f"✓ {exercise}: correct." + (f" {detail}" if detail else ""))


def expect(condition, exercise, expected, received, hint):
    """Raise ``ExerciseError`` unless ``condition`` holds."""
    if not condition:
        raise ExerciseError(exercise, expected, received, hint)


def _describe(x):
    if isinstance(x, torch.Tensor):
        values = x.detach().cpu().flatten()[:6].tolist()
        shown = ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in values)
        more = ", ..." if x.numel() > 6 else ""
        return f"tensor of shape {tuple(x.shape)}, dtype {x.dtype}: [{shown}{more}]"
    return f"{type(x).__name__} {x!r}"


def expect_close(received, expected, exercise, hint, atol=1e-5, rtol=1e-4):
    """Check a tensor answer: its type, then its shape, then its values."""
    expect(isinstance(received, torch.Tensor), exercise, "a torch.Tensor", _describe(received),
           "return a tensor, not a number or a list")
    expect(received.shape == expected.shape, exercise, f"shape {tuple(expected.shape)}",
           f"shape {tuple(received.shape)}", hint)
    received = received.detach().to(expected.device, expected.dtype)
    expect(not received.isnan().any() or expected.isnan().any(), exercise, "no NaN values",
           _describe(received), hint)
    expect(torch.allclose(received, expected, atol=atol, rtol=rtol, equal_nan=True), exercise,
           _describe(expected), _describe(received), hint)
