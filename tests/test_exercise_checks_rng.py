"""Running a chapter's checks never changes the random numbers the notebook draws next.

Each check builds its own random inputs; drawing them from the notebook's
generator would make every cell after a check depend on whether, and how many
times, the learner ran it.
"""

from pathlib import Path

import jupytext
import pytest
import torch
from support import tagged

from tools.editions import tags

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.py"))
WITH_CHECKS = [path for path in NOTEBOOKS if tagged(jupytext.read(path), "check")]


def test_the_chapters_with_exercises_are_found():
    assert [path.stem[:2] for path in WITH_CHECKS] == ["01", "02", "03", "04", "05", "06", "07", "08", "09"]


@pytest.mark.parametrize("path", WITH_CHECKS, ids=[p.stem for p in WITH_CHECKS])
def test_checks_leave_the_notebooks_generator_alone(path, capsys):
    notebook = jupytext.read(path)
    imports = next(cell.source for cell in notebook.cells if cell.cell_type == "code"
                      and "colab-setup" not in tags(cell))
    namespace = {}
    threads = torch.get_num_threads()
    try:
        exec(imports, namespace)  # the chapter's imports cell: torch, d2l, its checks module
        for _, cell in tagged(notebook, "exercise"):
            exec(cell.source, namespace)  # the reference answers
        torch.manual_seed(1234)
        for _, cell in tagged(notebook, "check"):
            before = torch.get_rng_state()
            exec(cell.source, namespace)
            assert torch.equal(torch.get_rng_state(), before), \
                f"{path.stem}: {cell.source!r} drew from torch's generator"
    finally:
        torch.set_num_threads(threads)
    assert capsys.readouterr().out.count("✓") == len(tagged(notebook, "check"))  # and every check passed
