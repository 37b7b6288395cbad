"""What the hub tests share: whether the hub's parts are installed.

Without configurable-http-proxy (npm) or the `hub` extra, the tests that start a
hub are skipped, saying how to install them, except under CI=true, where they
fail: `make test` installs both (make install-hub), so a missing one there is a
broken install, not a choice.
"""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
from class_hub import PROXY  # noqa: E402

MISSING = [name for name, present in (
    (f"configurable-http-proxy ({PROXY})", PROXY.exists()),
    *((module, importlib.util.find_spec(module) is not None)
      for module in ("jupyterhub", "nbgitpuller", "jupyterhub_idle_culler", "websocket")),
) if not present]


def require_hub():
    """Skip (fail under CI=true) unless everything a hub needs is installed."""
    if not MISSING:
        return
    message = f"{', '.join(MISSING)} missing: run `make install-hub`"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI=true: {message}", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module", autouse=True)
def _hub_installed():
    require_hub()
