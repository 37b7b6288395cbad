"""Every notebook runs on Colab's package versions (``make test-colab``, in ``.venv-colab``).

Strict nbval runs the notebooks on ipywidgets 8 in ``make test``. Here, in the
environment built from ``constraints/colab.txt``, each notebook is executed in
a fresh kernel (nbclient, as ``nbconvert --execute`` does) and must raise no
error; its outputs are not compared, since a widget's text may differ between
versions. On ipywidgets 8 these tests are skipped: they belong to the
Colab-like environment.
"""

import re
from importlib.metadata import version
from pathlib import Path

import ipywidgets
import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints" / "colab.txt"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

pytestmark = pytest.mark.skipif(
    int(ipywidgets.__version__.split(".")[0]) >= 8,
    reason="runs in the Colab-like environment (make test-colab); strict nbval runs the notebooks on ipywidgets 8")


def pinned():
    """package -> version, as ``constraints/colab.txt`` pins them."""
    pins = {}
    for line in CONSTRAINTS.read_text().splitlines():
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", line.split("#")[0].strip())
        if match:
            pins[match[1]] = match[2]
    return pins


def test_this_environment_has_the_pinned_colab_versions():
    pins = pinned()
    assert {"ipywidgets", "matplotlib", "numpy", "torch"} <= set(pins)
    for package, wanted in pins.items():
        installed = version(package)
        assert installed.split("+")[0] == wanted, f"{package}: {installed} installed, {wanted} pinned"


def test_every_chapter_is_run():
    assert len(NOTEBOOKS) == 10 and NOTEBOOKS[0].name.startswith("00_")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_notebook_runs_without_error_on_colab_versions(path):
    notebook = nbformat.read(path, as_version=4)
    # A last cell reports the kernel's versions: the notebook really ran on Colab's.
    notebook.cells.append(nbformat.v4.new_code_cell("import ipywidgets, matplotlib, numpy\n"
                                                    "print(ipywidgets.__version__, matplotlib.__version__, "
                                                    "numpy.__version__)"))
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError, naming the cell, on the first error
    errors = [output for cell in notebook.cells for output in cell.get("outputs", [])
              if output.output_type == "error"]
    assert errors == []
    tracebacks = [output.text for cell in notebook.cells for output in cell.get("outputs", [])
                  if output.output_type == "stream" and output.name == "stderr" and "Traceback" in output.text]
    assert tracebacks == []
    # The kernel may send one print in several stream messages (it flushes on a timer): join them.
    versions = "".join(output.text for output in notebook.cells[-1].outputs
                       if output.output_type == "stream" and output.name == "stdout").split()
    assert versions == [ipywidgets.__version__, version("matplotlib"), version("numpy")]
