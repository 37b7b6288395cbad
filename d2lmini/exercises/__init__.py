"""Checks for the notebooks' exercises, one module per chapter.

An exercise is a function the learner completes; its reference body sits
between ``### BEGIN SOLUTION`` and ``### END SOLUTION``. The next cell calls a
check from here with that function. A check prints one line when the answer is
right, and otherwise raises ``ExerciseError``, which renders as a few lines:
what was expected, what was received, and the first step of a hint
(``hint()`` shows the next). A student stub's ``NotImplementedError`` becomes
``ExerciseNotAttempted``, one line; any other exception raised by the
learner's own code passes through unchanged, with its traceback.
``outcome(check, answer)`` returns what a check said as data (an ``Outcome``),
for a report on a whole class.
"""

from ._feedback import (
           ExerciseError,
           ExerciseNotAttempted,
           LearnerCodeError,
           Outcome,
           check,
           expect_close,
           hint,
           outcome,
           passed,
           require,
)

__all__ = ["ExerciseError", "ExerciseNotAttempted", "LearnerCodeError", "Outcome", "check", "require", "expect_close",
           "hint", "outcome", "passed"]
