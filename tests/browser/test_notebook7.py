"""A notebook also runs in Notebook 7 (the /tree interface), and its slider moves the heatmap."""

import re
from pathlib import Path

from jupyter_ui import assert_runs_cleanly, assert_sliders_move_heatmaps, check_notebook

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _notebook_with_explorer():
    """The first chapter that builds an explorer, else the suite's slider fixture."""
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        if re.search(r"explore_\w+\(", notebook.read_text()):  # calls an explorer
            return f"notebooks/{notebook.name}"
    return "selftest/slider_fixture.ipynb"


def test_a_slider_moves_the_heatmap_in_notebook7(page, lab_server, screenshots, reports):
    """Dragged with the mouse: Notebook 7 listens for shortcuts before the page's
    widgets do, so its ArrowRight binding (expand a heading) swallows the arrow
    keys that move a focused slider in JupyterLab."""
    path = _notebook_with_explorer()
    screenshot = screenshots / f"notebook7-{Path(path).stem}.png"
    report = check_notebook(page, lab_server, path, screenshot, ui="notebook7", method="mouse")
    reports.append(report)
    assert_runs_cleanly(report)
    assert report.explorers, f"{path} shows no explorer in Notebook 7 after Run All"
    assert_sliders_move_heatmaps(report)
