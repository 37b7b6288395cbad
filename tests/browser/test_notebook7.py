"""A notebook also runs in Notebook 7 (the /tree interface), and its slider moves the heatmap."""

import re
from pathlib import Path

import pytest
from jupyter_ui import NotebookDriver, assert_runs_cleanly, assert_sliders_move_heatmaps, check_notebook

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _notebook_with_explorer():
    """The first chapter that builds an explorer, else the suite's slider fixture."""
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        if re.search(r"explore_\w+\(", notebook.read_text()):  # calls an explorer
            return f"notebooks/{notebook.name}"
    return "selftest/slider_fixture.ipynb"


def test_sliders_move_the_heatmap_in_notebook7_by_keyboard_and_mouse(page, lab_server, screenshots, reports):
    """Notebook 7 binds ArrowLeft/ArrowRight to heading navigation for any focused
    element of a notebook in command mode, and it sees the keys before the
    slider does. binder/overrides.json (installed by `make install` and by
    Binder's postBuild) keeps those bindings off elements inside a widget."""
    path = _notebook_with_explorer()
    screenshot = screenshots / f"notebook7-{Path(path).stem}.png"
    report = check_notebook(page, lab_server, path, screenshot, ui="notebook7", method=("keyboard", "mouse"))
    reports.append(report)
    assert_runs_cleanly(report)
    assert report.explorers, f"{path} shows no explorer in Notebook 7 after Run All"
    gestures = {move.gesture.split()[0] for move in report.slider_moves}
    assert gestures == {"ArrowRight", "drag"} or gestures == {"ArrowLeft", "ArrowRight", "drag"}
    assert_sliders_move_heatmaps(report)
    for switch in report.colour_switches:  # the caption names the fitted scale: no wait ran out
        assert switch is not None and "colours 0 to" in switch.caption


@pytest.mark.parametrize("ui", ["lab", "notebook7"])
def test_arrow_keys_still_fold_a_section_on_a_heading_cell(page, lab_server, ui):
    """The narrowed bindings still collapse and expand a section from its heading."""
    driver = NotebookDriver(page, lab_server, "notebooks/02_masked_softmax.ipynb", ui)
    driver.open()
    driver.wait_for_kernel()
    before, collapsed, expanded = driver.arrow_keys_on_a_heading()
    assert collapsed > before, f"{ui}: ArrowLeft on a heading hid no cell ({before} -> {collapsed})"
    assert expanded == before, f"{ui}: ArrowRight did not show the section again ({collapsed} -> {expanded})"
