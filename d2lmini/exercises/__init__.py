"""Checks for the notebooks' exercises, one module per chapter.

An exercise is a function the learner completes; its reference body sits
between ``### BEGIN SOLUTION`` and ``### END SOLUTION``. The next cell calls a
check from here with that function. A check prints one line when the answer is
right, and otherwise raises ``ExerciseError`` saying what was expected, what
was received, and a hint. Exceptions raised by the learner's own code (such as
the ``NotImplementedError`` of a student stub) pass through unchanged.
"""

from ._feedback import ExerciseError, expect, expect_close, passed

__all__ = ["ExerciseError", "expect", "expect_close", "passed"]
