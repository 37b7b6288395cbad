"""What every exercise check promises, tested once for every public check of every chapter module.

The checks are found by walking ``d2lmini.exercises``, so a new check is under
this contract at once, and fails it until ``tests/exercise_answers.py`` holds
its reference answer. A check's own mistakes and messages are tested in
``test_exercises_chNN.py``; that each named mistake gets a hint of its own, in
the wrong-variant catalogue (``test_wrong_variants.py``).
"""

import re

import pytest
from exercise_answers import REFERENCE, check_name, public_checks

from d2lmini.exercises import ExerciseNotAttempted

CHECKS = public_checks()


def test_every_public_check_has_a_reference_answer_and_only_those():
    assert len(CHECKS) >= 30
    missing = sorted(check_name(check) for check in CHECKS if check not in REFERENCE)
    assert not missing, f"checks with no reference answer in tests/exercise_answers.py: {missing}"
    stale = sorted(check_name(check) for check in set(REFERENCE) - set(CHECKS))
    assert not stale, f"reference answers for checks that are not public checks: {stale}"


@pytest.mark.parametrize("check", CHECKS, ids=check_name)
def test_the_reference_answer_passes_with_one_line_naming_its_exercise(check, capsys):
    reference = REFERENCE[check]
    check(reference.answer)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1, lines
    assert re.match(rf"✓ Exercise {re.escape(reference.exercise)}\b.*: correct\.", lines[0]), lines[0]


def stub_with_a_message(*args, **kwargs):
    raise NotImplementedError("fill me in")  # the student build's stub


def bare_stub(*args, **kwargs):
    raise NotImplementedError()  # nbgrader's stub


@pytest.mark.parametrize("stub", [stub_with_a_message, bare_stub], ids=["student build", "nbgrader"])
@pytest.mark.parametrize("check", CHECKS, ids=check_name)
def test_a_stub_is_reported_as_not_attempted(check, stub):
    with pytest.raises(ExerciseNotAttempted) as info:
        check(stub)
    assert str(info.value) == (f"Exercise {REFERENCE[check].exercise} · not attempted yet: complete "
                               f"`{stub.__name__}` above, run that cell, then this one.")
