"""tools/stable_outputs.py: re-executing a notebook changes only the outputs that changed."""

import copy
import re
import uuid
from pathlib import Path

import nbformat
import pytest

from d2lmini.widgets._compat import WIDGET_VIEW
from tools import stable_outputs

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WITH_WIDGETS = [path for path in NOTEBOOKS if '"IPY_MODEL_' in path.read_text()]
ADDRESS = re.compile(r" at 0x[0-9a-f]{6,}")



def widget_state(notebook):
    return notebook.metadata["widgets"][stable_outputs.STATE_MIME]["state"]


def with_random_ids_and_timings(notebook):
    """A copy of ``notebook`` as a fresh execution would leave it: new random ids, cell timings."""
    notebook = copy.deepcopy(notebook)
    new_ids = {old: uuid.uuid4().hex for old in widget_state(notebook)}
    state = widget_state(notebook)
    notebook.metadata["widgets"][stable_outputs.STATE_MIME]["state"] = {
        new_ids[old]: stable_outputs._renamed(value, new_ids) for old, value in reversed(state.items())}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        cell.metadata["execution"] = {"iopub.execute_input": "2026-01-01T00:00:00.000000Z"}
        for output in cell.outputs:
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view:
                view["model_id"] = new_ids[view["model_id"]]
    return notebook


def test_there_are_notebooks_with_saved_widget_state():
    assert len(WITH_WIDGETS) >= 5  # 00-05 each display an explorer


@pytest.mark.parametrize("path", WITH_WIDGETS, ids=[p.stem for p in WITH_WIDGETS])
def test_stable_ids_do_not_depend_on_the_kernels_random_ids(path):
    notebook = nbformat.read(path, as_version=4)
    first = stable_outputs.stabilise(with_random_ids_and_timings(notebook), path.stem)
    second = stable_outputs.stabilise(with_random_ids_and_timings(notebook), path.stem)
    assert first == second
    assert first.cells == notebook.cells  # the committed notebook is already stable
    assert widget_state(first) == widget_state(notebook)


@pytest.mark.parametrize("path", WITH_WIDGETS, ids=[p.stem for p in WITH_WIDGETS])
def test_every_reference_still_points_at_a_saved_model(path):
    notebook = stable_outputs.stabilise(
        with_random_ids_and_timings(nbformat.read(path, as_version=4)), path.stem)
    state = widget_state(notebook)
    references = [ref for value in state.values() for ref in stable_outputs._references(value)]
    displayed = stable_outputs._displayed_ids(notebook)
    assert references and displayed
    assert set(references) | set(displayed) <= set(state)
    assert all(len(model_id) == 32 and int(model_id, 16) >= 0 for model_id in state)
    # the ids are the notebook's own: another notebook's models never collide with them
    assert stable_outputs.stable_id(path.stem, 0) in state
    assert stable_outputs.stable_id("another notebook", 0) not in state


def test_models_no_output_displays_keep_a_content_order():
    notebook = nbformat.v4.new_notebook()
    layout = {"model_name": "LayoutModel", "state": {"width": "10px"}}
    button = {"model_name": "ButtonModel", "state": {"layout": "IPY_MODEL_aaa"}}
    notebook.metadata["widgets"] = {stable_outputs.STATE_MIME: {
        "state": {"zzz": button, "aaa": layout}, "version_major": 2, "version_minor": 0}}
    stable_outputs.stabilise(notebook, "orphans")
    state = widget_state(notebook)
    first, second = (stable_outputs.stable_id("orphans", i) for i in range(2))
    assert state[first]["model_name"] == "ButtonModel"  # sorted by content, then children
    assert state[first]["state"]["layout"] == f"IPY_MODEL_{second}"
    assert state[second] == layout


def test_a_notebook_without_widgets_only_loses_its_timings():
    notebook = nbformat.v4.new_notebook()
    timing = {"shell.execute_reply": "2026-01-01T00:00:00Z"}
    notebook.cells = [nbformat.v4.new_code_cell("1", metadata={"execution": timing, "tags": ["t"]})]
    stable_outputs.stabilise(notebook, "plain")
    assert notebook.cells[0].metadata == {"tags": ["t"]}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebooks_carry_no_timings_or_memory_addresses(path):
    notebook = nbformat.read(path, as_version=4)
    for index, cell in enumerate(notebook.cells):
        assert "execution" not in cell.metadata, f"{path.name} cell {index}: run make notebooks"
        for output in cell.get("outputs", []):
            text = output.get("text", "") + output.get("data", {}).get("text/plain", "")
            assert not ADDRESS.search(text), f"{path.name} cell {index} prints a memory address: {text!r}"


def test_the_command_line_rejects_what_is_not_a_notebook(tmp_path, capsys):
    source = tmp_path / "chapter.py"
    source.write_text("print(1)\n")
    with pytest.raises(SystemExit):
        stable_outputs.main([str(source)])
    assert "expected existing .ipynb files" in capsys.readouterr().err
