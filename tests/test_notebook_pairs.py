"""Every notebook is a .py percent source paired with an .ipynb in sync with it.

The pair rule (tools/pairs.py): the .ipynb written back as a percent script is the .py, byte for byte.
When it is not, the failure names the file and each differing cell as a reader finds it, with a short
diff, and the command for each direction (an edit made to the .py only, or to the .ipynb only).
"""

import re
from pathlib import Path

import jupytext
import pytest

from tools import pairs

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("*.py")) + sorted(NOTEBOOKS.glob("*/[0-9][0-9]_*.py"))  # the translations too
ENGLISH = sorted(NOTEBOOKS.glob("*.py"))


def test_there_are_notebooks():
    assert SOURCES, "notebooks/ has no .py sources"


@pytest.mark.parametrize("source", SOURCES, ids=[str(p.relative_to(NOTEBOOKS).with_suffix("")) for p in SOURCES])
def test_ipynb_is_in_sync_with_its_py_source(source):
    message = pairs.pair_problems(source)
    if message:
        pytest.fail(message, pytrace=False)  # the whole message, with no traceback around it


@pytest.mark.parametrize("source", SOURCES, ids=[str(p.relative_to(NOTEBOOKS).with_suffix("")) for p in SOURCES])
def test_ipynb_has_executed_outputs_and_a_kernel(source):
    notebook = jupytext.read(source.with_suffix(".ipynb"))
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    code_cells = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code_cells), (
        f"{source.stem}.ipynb has unexecuted cells: run make notebooks"
    )


def test_the_map_in_00_names_every_chapter():
    source = (NOTEBOOKS / "00_start_here.py").read_text()
    map_rows = re.findall(r"^# \| (\d\d) · ", source, flags=re.MULTILINE)
    chapters = sorted(path.stem[:2] for path in ENGLISH if path.stem[:2] != "00")
    assert map_rows == chapters


def test_the_map_in_each_translated_00_names_every_chapter():
    for start in sorted(NOTEBOOKS.glob("*/00_start_here.py")):
        map_rows = re.findall(r"^# \| (\d\d) · ", start.read_text(), flags=re.MULTILINE)
        assert map_rows == sorted(path.stem[:2] for path in ENGLISH if path.stem[:2] != "00"), start
