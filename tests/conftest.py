import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from minilm_support import loaded_model  # noqa: E402
from support import require_hub  # noqa: E402

# One torch thread in the test workers: `make test` runs two workers on two cores, and a second thread only
# spins waiting for a core the other worker holds. Measured 2026-12-06 on the 2-core machine at load 5:
# tests/test_answers_not_in_package.py took 139 s of CPU with torch's default two threads, 70 s with one.
# The processes the tests start (kernels, servers) keep their own defaults: the notebooks' stored outputs
# are compared at the thread count a learner's machine gives (tests/test_float_paths.py tries 1 and 3).
torch.set_num_threads(1)


def _available(name):
    if name == "cuda":
        return torch.cuda.is_available()
    if name == "mps":
        return getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    return True


@pytest.fixture(params=["cpu", "cuda", "mps"])
def device(request):
    """Every test that takes ``device`` runs on the CPU and on each GPU present."""
    if not _available(request.param):
        pytest.skip(f"no {request.param} device on this machine")
    return torch.device(request.param)


@pytest.fixture(scope="module")
def hub_installed():
    """Skip a module's tests, or fail them under CI, when the hub's parts are missing.

    A hub test module asks for it with ``pytestmark = pytest.mark.usefixtures("hub_installed")``.
    """
    require_hub()


@pytest.fixture(scope="session")
def minilm():
    """all-MiniLM-L6-v2, loaded once for the session (skipped, or failed under CI, without it)."""
    return loaded_model()


@pytest.fixture
def portuguese():
    """d2lmini speaks Brazilian Portuguese for the test, and English again after it, whatever it raised."""
    from d2lmini import i18n

    i18n.set_language("pt_BR")
    try:
        yield
    finally:
        i18n.set_language("en")


@pytest.fixture
def training_on_one_thread():
    """Training takes one torch thread, as the notebooks do: these tensors are tiny, and several threads on
    a busy machine make a step many times slower (measured: 30 times at load 4 on 2 cores).

    A training test module asks for it with ``pytestmark = pytest.mark.usefixtures("training_on_one_thread")``.
    """
    from d2lmini.widgets.explorer import one_thread

    with one_thread():
        yield


@pytest.fixture
def callers_threads():
    """A caller with three torch threads, for a test that checks a function gives the caller's count back
    (with the workers' one thread, a function that set one and never restored would pass); the
    worker's count again afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        yield 3
    finally:
        torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _seed_and_close_figures():
    torch.manual_seed(0)
    yield
    plt.close("all")


# Test files whose tests' own calls run without coverage's tracer (pytest-cov's no_cover; their fixtures
# are still measured, and that is where the explorers' page data are made, once per run): under the tracer,
# in-process work takes about half as long again (measured 2026-12-06: tests/browser/test_page_explorers.py,
# three explorers, 111 s of CPU without it and 161 s with it). The browser tests compare the page with the
# kernel's shell, on paths the unit tests measure; test_answers_not_in_package.py calls every public
# callable with every check's arguments, and what it reaches with the wrong arguments is not tested there.
# tests/README.md ("Where the time goes") lists the lines that only these calls reach.
UNMEASURED = ("tests/browser/", "tests/test_answers_not_in_package.py")


# The longest test files, started first. `make test` hands whole files to two
# workers in collection order; when one of these came last, one worker ran it
# alone for minutes while the other sat idle.
LONGEST_FIRST = ("tests/test_binder.py", "tests/test_hub_nbgrader.py", "tests/test_float_paths.py",
                 "tests/test_otter_run.py", "tests/browser/test_jupyterlab.py", "tests/test_hub_class.py",
                 "tests/test_hub_lti.py", "tests/browser/test_training_view.py")


def pytest_collection_modifyitems(config, items):
    if config.pluginmanager.hasplugin("pytest_cov"):  # its marker, where pytest-cov is installed (not on Colab's)
        for item in items:
            if item.nodeid.startswith(UNMEASURED):
                item.add_marker(pytest.mark.no_cover)

    def rank(item):
        path = item.nodeid.split("::")[0]
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)
    items.sort(key=rank)  # stable: each file keeps its own order
