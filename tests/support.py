"""What many test files need: whether this is CI, skipping a test that CI must run, the hub's parts, a
notebook's tagged cells, what a test run makes once for all its test files (``made_once``: the explorers'
page assets, ``page_assets``)."""

import importlib.util
import json
import os
import shutil

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


def made_once(tmp_path_factory, name, make):
    """The folder ``name``, filled by ``make(folder)`` once per test run, and what ``make`` returned (JSON-able).

    Under pytest-xdist the test files of a run may sit on different workers: the first to ask makes the
    folder in the run's shared folder, above each worker's own, holding a lock, and the others wait for it
    and read what it recorded. Without xdist, the session's own folder is the run's. A ``make`` that
    failed records nothing, so the next one to ask makes the folder again.
    """
    import fcntl  # POSIX only, imported here so that the other helpers load anywhere (make test runs on Linux)

    run = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run = run.parent  # one folder per run, above each worker's own
    folder, record = run / name, run / f"{name}.json"
    with open(run / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not record.exists():  # written only after a make that succeeded
            if folder.exists():
                shutil.rmtree(folder)  # what a failed make left
            record.write_text(json.dumps(make(folder)))
    return folder, json.loads(record.read_text())


def page_assets(tmp_path_factory, language):
    """A folder holding every explorer's page assets in ``language`` ("en", "pt_BR"): what ``page.write_assets``
    writes for every declaration of ``DECLARATIONS`` as the page builds them (``for_page``), made once per
    test run (``made_once``; about a minute per language, more under coverage) for the tests that read
    them: the site's builds, the page's language, the explorers' pages. Nothing else writes into it."""

    def write(folder):
        from d2lmini.widgets import DECLARATIONS, page
        from tools.build_site import speaking

        with speaking(language):
            page.write_assets(folder, [declaration.for_page() for declaration in DECLARATIONS])

    return made_once(tmp_path_factory, f"explorer-assets-{language}", write)[0]
