"""What many test files need: whether this is CI, skipping a test that CI must run, the hub's parts, a
notebook's tagged cells."""

import importlib.util
import os

import pytest


def in_ci():
    """True under CI=true (or 1, yes): there, everything the tests need is installed."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def skip_or_fail(message):
    """Skip the test for want of ``message``'s tool; under CI, where nothing may be missing, fail instead."""
    if in_ci():
        pytest.fail(f"CI=true: {message}", pytrace=False)
    pytest.skip(message)


def require_hub():
    """Skip (fail under CI) unless what a hub needs is installed: the `hub` extra, and the proxy from npm.

    `make test` installs both (make install-hub), so under CI a missing one is a
    broken install, not a choice.
    """
    from tools.class_hub import PROXY  # psutil and requests: loaded for the hub tests only

    missing = [name for name, present in (
        (f"configurable-http-proxy ({PROXY})", PROXY.exists()),
        *((module, importlib.util.find_spec(module) is not None)
          for module in ("jupyterhub", "nbgitpuller", "jupyterhub_idle_culler", "websocket")),
    ) if not present]
    if missing:
        skip_or_fail(f"{', '.join(missing)} missing: run `make install-hub`")


def tagged(notebook, tag):
    """(index, cell) for each cell of ``notebook`` (nbformat or jupytext) whose tags include ``tag``."""
    from tools.editions import tags

    return [(index, cell) for index, cell in enumerate(notebook.cells) if tag in tags(cell)]


def shared(factory):
    """A module-scoped fixture holding ``factory()``, built once for every test of the file that names it.

    ``kernel = shared(explore_kernel_pooling)`` defines the fixture ``kernel``.
    """
    return pytest.fixture(scope="module")(lambda: factory())
