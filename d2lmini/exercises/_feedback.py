"""How a check talks to a learner: one line on success, a few lines otherwise.

A wrong answer raises ``ExerciseError``, an unattempted stub
``ExerciseNotAttempted``. Both render themselves in place of a traceback
(IPython shows ``_render_traceback_()`` instead of the frames), so the learner
reads what went wrong and no line of d2lmini's code; both are still
exceptions, so nbgrader's autograder gives the check cell no point. An error
raised in the learner's own code is left alone, with its traceback.

Hints come in steps: the error shows the first, a nudge that names the
mistake; ``hint()`` shows the next one for the last check that failed.

When the answer is a matrix of attention weights, the error also carries a
picture, the learner's weights beside the expected ones, which IPython
displays (as one PNG) just before the error's lines.

Every word a learner reads is in their language (``d2lmini.i18n``). A check
may hand the exercise's label and its hints over in English, marked ``N_`` in
a module-level table: the error translates them when it is made (translating
a text twice changes nothing).
"""

import contextlib
import functools
import inspect
import io
import sysconfig
import traceback
from pathlib import Path
from typing import NamedTuple

import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from ..i18n import _, number, numbers
from ..plotting import CMAP


def said(text):
    """``text`` in the learner's language, if it is a message; anything else as it is."""
    return _(text) if isinstance(text, str) and text else text


class ExerciseError(AssertionError):
    """An answer that is not yet right: what was expected, what was received, and hints in steps.

    ``hint`` is one text or a sequence of steps, the first a nudge; no step
    gives the answer's code.
    """

    def __init__(self, exercise, expected, received, hint):
        super().__init__(exercise, expected, received, hint)
        self.exercise, self.expected, self.received = said(exercise), said(expected), said(received)
        self.hints = tuple(said(step) for step in ((hint,) if isinstance(hint, str) else hint))
        self.help_call = None  # set by the check that raised it, e.g. "ch02.hint()"
        self.hints_shown = 1
        self.picture = None  # (received, expected) weights, drawn beside each other where IPython shows the error

    def lines(self):
        """The learner's view: four lines whatever the fields hold, a fifth when more hints wait."""
        # Translators: "expected:" and "received:" start two lines whose values line up (masks row under row):
        # keep their translations the same length.
        lines = [_("✗ {exercise}: not yet.").format(exercise=self.exercise),
                 "  " + _("expected: {expected}").format(expected=_one_line(self.expected)),
                 "  " + _("received: {received}").format(received=_one_line(self.received)),
                 "  " + _("hint: {hint}").format(hint=_one_line(self.hints[0], limit=None))]
        if self.help_call and len(self.hints) > 1:
            # The hint above is the first of the steps: say so, since hint() goes on counting from it.
            lines.append("  " + _("That was hint 1 of {steps}. For the next, run {call} in a new cell.").format(
                steps=len(self.hints), call=self.help_call))
        return lines

    def __str__(self):
        return "\n".join(self.lines())

    def _render_traceback_(self):
        if self.picture is not None:  # shown once: the kernel may render an error more than once
            from IPython.display import Image, display
            received, expected = self.picture
            self.picture = None
            display(Image(data=weights_png(received, expected)))
        return self.lines()


class LearnerCodeError(ExerciseError):
    """The learner's function raised a Python error, or returned what the check could not use.

    IPython would show the whole traceback, the check's frames with their
    lines among them, and those lines hold the expected answer. This error
    shows the learner's own frames only (the lines of their code that led to
    the error), then the usual lines; ``python_error`` is Python's own
    "Type: message", which a class report counts.
    """

    def __init__(self, exercise, expected, received, hint, frames, python_error):
        super().__init__(exercise, expected, received, hint)
        self.frames, self.python_error = frames, python_error

    def _render_traceback_(self):
        return [line.rstrip("\n") for line in self.frames] + self.lines()


class ExerciseNotAttempted(NotImplementedError):
    """The check ran the student stub: the learner has not written this exercise yet.

    It stays a ``NotImplementedError`` (the stub's own error, said in one line),
    so a blank answer scores nothing.
    """

    def __init__(self, exercise, function):
        super().__init__(exercise, function)
        self.exercise, self.function = said(exercise), function

    def __str__(self):
        number = self.exercise.split(" · ")[0]
        return _("{number} · not attempted yet: complete `{function}` above, run that cell, "
                 "then this one.").format(number=number, function=self.function)

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


_PACKAGE = str(Path(__file__).resolve().parent.parent)  # d2lmini: the checks' lines hold the answers
_INSTALLED = tuple({sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")})


def _learner_frames(error):
    """The traceback's frames below the check that run the learner's code (their function, its helpers, a
    function of theirs the check calls), formatted; empty when the error rose in the check's own lines."""
    frames, below_check = [], False
    for frame, line in traceback.walk_tb(error.__traceback__):
        filename = str(Path(frame.f_code.co_filename).resolve()) if not frame.f_code.co_filename.startswith("<") \
            else frame.f_code.co_filename
        if filename.startswith(_PACKAGE):
            below_check = True
        elif below_check and not filename.startswith(_INSTALLED):
            frames.append((frame, line))
    return traceback.StackSummary.extract(frames).format()


def _learner_error(exercise, answer, error):
    """A Python error met while checking ``answer``, as a ``LearnerCodeError`` that shows no line of the check."""
    name = getattr(answer, "__name__", _("the function"))
    python_error = f"{type(error).__name__}: {_one_line(str(error))}"
    frames = _learner_frames(error)
    if frames:  # raised in the learner's function, or in what it called
        return LearnerCodeError(
            exercise, _("a result from {name}").format(name=name),
            _("{error}, raised in your {name}").format(error=python_error, name=name),
            (_("Python stopped inside your {name}: the lines above are yours, the last one raised the error; "
               "its message says what it could not do").format(name=name),
             _("try your function on a small input of your own in a new cell, and print the shapes of what it "
               "computes, step by step")),
            frames, python_error)
    # Raised by the check's own code, on what the learner's function returned.
    return LearnerCodeError(
        exercise, _("a result the check can use, as the exercise describes it"),
        _("{error}, when the check used what {name} returned").format(error=python_error, name=name),
        (_("the check could not use what {name} returned: compare its type and shape with what the exercise "
           "asks for").format(name=name),
         _("print what your function returns, and its type and shape, in a new cell")),
        [], python_error)


def raised_by(answer, error):
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
    any other Python error (a NotImplementedError from deeper in the learner's
    code included) becomes a ``LearnerCodeError``, which shows the learner's
    own lines and none of the check's (they hold the answer).
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
            except ExerciseNotAttempted:
                raise
            except Exception as error:
                if isinstance(error, NotImplementedError) and raised_by(answer, error):  # the stub itself
                    name = getattr(answer, "__name__", _("the function"))
                    raise ExerciseNotAttempted(exercise, name) from None
                failure = _learner_error(exercise, answer, error)
                failure.help_call = f"{run.__module__.rpartition('.')[2]}.hint()"
                _last_failure = failure
                raise failure from None
        return checked
    return decorate


def hint():
    """Print the next hint for the last check run, if it failed; the last step again once all are shown."""
    error = _last_failure
    if error is None:
        print(_("No hint to give: the last check you ran did not fail with a wrong answer."))
        return
    step = min(error.hints_shown, len(error.hints) - 1)
    error.hints_shown = step + 1
    if step == len(error.hints) - 1:
        line = _("{exercise} · hint {step} of {steps} (the last): {hint}")
    else:
        line = _("{exercise} · hint {step} of {steps}: {hint}")
    print(line.format(exercise=error.exercise, step=step + 1, steps=len(error.hints), hint=error.hints[step]))


class Outcome(NamedTuple):
    """What one check said of one answer, as data: how a class report counts it.

    ``status`` is one of ``PASSED``, ``NOT_ATTEMPTED``, ``MISTAKE`` (the check
    named what is wrong: ``message`` is the first hint, the words the learner
    read after "hint:") and ``ERROR`` (the learner's own code raised:
    ``message`` is the exception's type and text). ``message`` is in the
    language set when the check ran; for ``PASSED``, the line it printed.
    """

    status: str
    message: str


PASSED, NOT_ATTEMPTED, MISTAKE, ERROR = "passed", "not attempted", "mistake", "error"


def outcome(run_check, answer):
    """Run ``run_check(answer)`` and return its ``Outcome`` instead of printing it or raising.

    Whatever the check prints is kept out of the caller's output.
    """
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            run_check(answer)
    except ExerciseNotAttempted as error:
        return Outcome(NOT_ATTEMPTED, str(error))
    except LearnerCodeError as error:  # the learner's own code failed: Python's error is the outcome
        return Outcome(ERROR, error.python_error)
    except ExerciseError as error:
        return Outcome(MISTAKE, _one_line(error.hints[0], limit=None))
    except Exception as error:  # the learner's own code failed: its error is the outcome
        return Outcome(ERROR, _one_line(f"{type(error).__name__}: {error}"))
    return Outcome(PASSED, printed.getvalue().strip())


def passed(exercise, detail=""):
    """Report a correct answer; ``detail``, if any, follows on the same line."""
    detail = said(detail)
    print(_("✓ {exercise}: correct.").format(exercise=said(exercise)) + (f" {detail}" if detail else ""))


def require(condition, exercise, expected, received, hint):
    """Raise ``ExerciseError`` unless ``condition`` holds."""
    if not condition:
        raise ExerciseError(exercise, expected, received, hint)


def describe(x):
    """``x`` in words for an error's "got" line: a tensor's shape, dtype and first values, else its type and repr."""
    if isinstance(x, torch.Tensor):
        values = x.detach().cpu().flatten()[:6].tolist()
        shown = [number(v, ".4g") if isinstance(v, float) else str(v) for v in values]
        return _("tensor of shape {shape}, dtype {dtype}: [{values}]").format(
            shape=tuple(x.shape), dtype=x.dtype, values=numbers(shown + ["..."] * (x.numel() > 6)))
    return f"{type(x).__name__} {x!r}"


ROW_WIDTH = 8  # the most values of one row an error shows: enough to see a pattern, short enough for one line


def where_different(received, expected, atol=1e-5, rtol=1e-4, valid_lens=None, name_row=None):
    """Expected and received texts that show the first row where two tensors of one shape differ.

    The first values of two tensors often agree (the first example, the first
    case), so an error shows the row, along the last axis, that holds the first
    value out of tolerance, under its index, the same words on both lines so
    that the values line up. ``valid_lens``, one length per example (axis 0),
    adds that example's valid length; ``name_row(index)`` may name the row in
    the exercise's own terms instead of by its index. A row longer than
    ``ROW_WIDTH`` is shown from just before the first difference.
    """
    close = torch.isclose(received, expected, atol=atol, rtol=rtol, equal_nan=True)
    first = tuple(int(i) for i in (~close).nonzero()[0]) if not close.all() else (0,) * expected.dim()
    if expected.dim() == 0:
        place = ""
        received_row, expected_row = received.reshape(1), expected.reshape(1)
        start = 0
    else:
        index, column = first[:-1], first[-1]
        length = expected.shape[-1]
        start = max(0, min(column - 2, length - ROW_WIDTH))
        if name_row:
            place = name_row(index)
        elif valid_lens is not None and index:  # one example per length: name the example, then its query
            place = _("example {example}").format(example=index[0])
            if len(index) > 1:
                place += ", " + _("query {query}").format(query=index[1])
        else:
            place = _("row {index}").format(index=list(index)) if index else ""
        if valid_lens is not None and index:
            place += " " + _("(valid length {length})").format(length=int(valid_lens[index[0]]))
        if start > 0:
            place += (", " if place else "") + _("from column {column}").format(column=start)
        received_row, expected_row = received[index], expected[index]
    # A row named in the exercise's terms needs no shape: the shape would be the check's own stack of cases.
    shape = "" if name_row else _("shape {shape}").format(shape=tuple(expected.shape))

    def text(row):
        values = row[start:start + ROW_WIDTH].tolist()
        shown = [number(v, ".4g") if isinstance(v, float) else str(v) for v in values]
        shown = ["..."] * (start > 0) + shown + ["..."] * (start + ROW_WIDTH < row.numel())
        return f"{', '.join(part for part in (shape, place) if part)}: [{numbers(shown)}]"

    return text(expected_row.reshape(-1)), text(received_row.reshape(-1))


def expect_close(received, expected, exercise, hint, atol=1e-5, rtol=1e-4, weights=False, valid_lens=None,
                 name_row=None):
    """Check a tensor answer: its type, then its shape, then its values.

    Wrong values show the first row that differs (``where_different``, which
    takes ``valid_lens`` and ``name_row``). ``weights=True`` says the answer is
    a matrix of attention weights (or a batch of them): wrong values then also
    show the learner's matrix beside the expected one.
    """
    require(isinstance(received, torch.Tensor), exercise, _("a torch.Tensor"), describe(received),
            _("return a tensor, not a number or a list"))
    require(received.shape == expected.shape, exercise, _("shape {shape}").format(shape=tuple(expected.shape)),
            _("shape {shape}").format(shape=tuple(received.shape)), hint)
    received = received.detach().to(expected.device, expected.dtype)
    try:
        require(not received.isnan().any() or expected.isnan().any(), exercise, _("no NaN values"),
                describe(received), hint)
        if not torch.allclose(received, expected, atol=atol, rtol=rtol, equal_nan=True):
            shown_expected, shown_received = where_different(received, expected, atol, rtol, valid_lens, name_row)
            raise ExerciseError(exercise, shown_expected, shown_received, hint)
    except ExerciseError as error:
        if weights:
            error.picture = (received, expected)
        raise


def _first_difference(received, expected):
    """The two (queries, keys) matrices to draw, and the index of the example they come from (None for one matrix)."""
    if expected.dim() == 2:
        return received, expected, None
    received, expected = received.reshape(-1, *expected.shape[-2:]), expected.reshape(-1, *expected.shape[-2:])
    differs = [not torch.allclose(r, e, atol=1e-5, rtol=1e-4, equal_nan=True) for r, e in zip(received, expected)]
    example = differs.index(True) if True in differs else 0
    return received[example], expected[example], example


def weights_figure(received, expected):
    """The learner's weights beside the expected ones, on one colour scale from 0 to 1 with one colorbar.

    An Agg ``Figure``, not a pyplot one, so that nothing of it reaches the
    notebook's next inline output. For a batch, (..., queries, keys), it draws
    the first example where the two differ and names it in the titles.
    """
    received, expected, example = _first_difference(received.detach().cpu().float(),
                                                    expected.detach().cpu().float())
    figure = Figure(figsize=(5.2, 2.4), dpi=72)  # fixed axes: a layout engine would cost more than the drawing
    FigureCanvasAgg(figure)
    norm = Normalize(vmin=0, vmax=1)
    where = "" if example is None else " " + _("(example {example})").format(example=example)
    for left, matrix, title in ((0.08, received, _("yours")), (0.47, expected, _("expected"))):
        ax = figure.add_axes((left, 0.2, 0.34, 0.65))
        image = ax.imshow(matrix.numpy(), cmap=CMAP, norm=norm)
        ax.set_title(title + where, fontsize=10)
        ax.set_xlabel(_("keys"))
        ax.set_ylabel(_("queries"))
    figure.colorbar(image, cax=figure.add_axes((0.86, 0.2, 0.025, 0.65)))
    return figure


def weights_png(received, expected):
    """``weights_figure`` as PNG bytes, the one image an error shows."""
    buffer = io.BytesIO()
    weights_figure(received, expected).savefig(buffer, format="png")
    return buffer.getvalue()
