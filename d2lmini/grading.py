"""Grading a submitted notebook with the chapters' own checks, for platforms where no hub runs.

An exercise is graded by the check its check cell calls, ``ch02.check_masked_mean``,
run on the learner's function, ``masked_mean``: the grade and the feedback in
the notebook cannot disagree, since both come from that one call.

- ``grade(check, answer, namespace)`` runs one check on the answer found in a
  namespace (a notebook's globals) and returns a ``Result``: passed, wrong, not
  attempted or an error of the learner's code, with the check's own words.
- ``report(check, answer, namespace)`` prints the feedback of a check that did
  not pass and nothing otherwise: the body of each Otter-Grader test (Gradescope).
- ``grade_notebook(path, exercises)`` executes a notebook once in a fresh
  kernel and grades each exercise: one submission's per-exercise results.
- ``python -m d2lmini.grading NOTEBOOK CHECK ANSWER`` grades one exercise of a
  notebook, prints its feedback and exits 0 iff it passed: the command of each
  GitHub Classroom test.

Who hands out which check for which answer is the instructor's build (``make otter``,
``make classroom``), never the submitted notebook, whose check cells a learner may edit.
"""

import argparse
import contextlib
import dataclasses
import importlib
import io
import json
import re
import sys
import traceback
from pathlib import Path

from .exercises import ExerciseError, ExerciseNotAttempted, LearnerCodeError
from .i18n import _

PASSED, WRONG, NOT_ATTEMPTED, ERROR = "passed", "wrong", "not attempted", "error"
CHECK_NAME = re.compile(r"(ch\d\d)\.(check_\w+)")
ANSWER_NAME = re.compile(r"[A-Za-z_]\w*")
# The line of the grading cell's output that holds the result, after whatever the learner's code printed.
RESULT_MARK = "d2lmini-grading-result:"


@dataclasses.dataclass(frozen=True)
class Result:
    """One exercise's outcome: the check, the learner's answer's name, a status and the check's feedback."""

    check: str  # "ch02.check_masked_mean"
    answer: str  # "masked_mean"
    status: str  # PASSED, WRONG, NOT_ATTEMPTED or ERROR
    feedback: str  # the check's own words: its ✓ line, its ✗ block, its "not attempted yet" line

    @property
    def passed(self):
        return self.status == PASSED


def _check_function(check):
    found = CHECK_NAME.fullmatch(check) if isinstance(check, str) else None
    if found is None:
        raise ValueError(f"check must name a chapter check such as 'ch02.check_masked_mean', got {check!r}")
    module = importlib.import_module(f"{__package__}.exercises.{found.group(1)}")
    if not hasattr(module, found.group(2)):
        raise ValueError(f"check {check!r} names no check of d2lmini.exercises.{found.group(1)}")
    return getattr(module, found.group(2))


def _check_answer_name(answer):
    if not isinstance(answer, str) or not ANSWER_NAME.fullmatch(answer):
        raise ValueError(f"answer must be the name of the learner's function or class, such as "
                         f"'masked_mean', got {answer!r}")


def _where(error):
    """`name, line N`: the innermost frame of an error, the learner's line when their own code raised it."""
    frames = traceback.extract_tb(error.__traceback__)
    return f"{frames[-1].name}, line {frames[-1].lineno}" if frames else "?"


def grade(check, answer, namespace):
    """Run ``check`` (``"ch02.check_masked_mean"``) on ``namespace[answer]``; return a ``Result``.

    What the check prints is captured, never shown: the ✓ line becomes the
    feedback of a passed exercise. A name the namespace lacks (its cell deleted,
    or never run without error) is not attempted; an exception of the learner's
    own code is an error, named with the line that raised it.
    """
    run = _check_function(check)
    _check_answer_name(answer)
    if answer not in namespace:
        return Result(check, answer, NOT_ATTEMPTED,
                      _("`{answer}` is not defined: run the cell that defines it without an error, "
                        "then save the notebook.").format(answer=answer))
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            run(namespace[answer])
    except ExerciseNotAttempted as error:
        return Result(check, answer, NOT_ATTEMPTED, str(error))
    except LearnerCodeError as error:  # the learner's own code failed: the check says so without its lines
        raised = error.__context__ or error  # Python's error, which the check's message replaced
        return Result(check, answer, ERROR, _("`{answer}` raised an error ({where}): {error}").format(
            answer=answer, where=_where(raised), error=error.python_error))
    except ExerciseError as error:
        return Result(check, answer, WRONG, str(error))
    except Exception as error:  # the learner's own code failed: the check lets such errors through
        message = "".join(traceback.format_exception_only(type(error), error)).strip()
        return Result(check, answer, ERROR, _("`{answer}` raised an error ({where}): {error}").format(
            answer=answer, where=_where(error), error=message))
    return Result(check, answer, PASSED, printed.getvalue().strip())


def report(check, answer, namespace):
    """Print the feedback of ``grade`` unless the check passed: an Otter test case passes iff it prints nothing."""
    result = grade(check, answer, namespace)
    if not result.passed:
        print(result.feedback)


def _grading_cell(exercises):
    """The code cell appended to a submission: it grades every exercise in the kernel and prints the results."""
    pairs = [[check, answer] for check, answer in exercises]
    return (f"import json as _json\nfrom d2lmini.grading import RESULT_MARK as _MARK, grade as _grade\n"
            f"print(_MARK + _json.dumps([vars(_grade(_c, _a, globals())) for _c, _a in {pairs!r}]))")


def grade_notebook(path, exercises, timeout=300, kernel_name="python3"):
    """Execute the notebook at ``path`` once, in a fresh kernel in its folder, and grade each exercise.

    ``exercises`` lists ``(check, answer)`` pairs. Cells that fail (a check cell
    of an exercise not done, say) do not stop the run. Returns one ``Result``
    per exercise, in order.
    """
    import nbformat
    from nbclient import NotebookClient

    exercises = list(exercises)
    for check, answer in exercises:
        _check_function(check)
        _check_answer_name(answer)
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(_grading_cell(exercises)))
    NotebookClient(nb, timeout=timeout, kernel_name=kernel_name, allow_errors=True,
                   resources={"metadata": {"path": str(path.resolve().parent)}}).execute()
    for output in nb.cells[-1].outputs:
        if output.get("name") == "stdout":
            for line in output.get("text", "").splitlines():
                if line.startswith(RESULT_MARK):
                    return [Result(**fields) for fields in json.loads(line[len(RESULT_MARK):])]
    shown = "".join(output.get("text", "") or f"{output.get('ename')}: {output.get('evalue')}"
                    for output in nb.cells[-1].outputs)
    raise RuntimeError(f"grading {path} gave no result; the grading cell showed: {shown.strip() or 'nothing'}")


def _main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m d2lmini.grading",
        description="Execute a notebook and grade one exercise with its check: exit 0 iff it passes.")
    parser.add_argument("notebook", type=Path, help="the submitted notebook, e.g. 02_masked_softmax.ipynb")
    parser.add_argument("check", help="the exercise's check, e.g. ch02.check_masked_mean")
    parser.add_argument("answer", help="the learner's function or class it checks, e.g. masked_mean")
    parser.add_argument("--timeout", type=int, default=300, help="seconds one cell may run (default 300)")
    args = parser.parse_args(argv)
    try:
        _check_function(args.check)
        _check_answer_name(args.answer)
    except ValueError as error:
        parser.error(str(error))
    if not args.notebook.is_file():
        parser.error(f"notebook: no file {args.notebook}")
    (result,) = grade_notebook(args.notebook, [(args.check, args.answer)], timeout=args.timeout)
    print(result.feedback)
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(_main())
