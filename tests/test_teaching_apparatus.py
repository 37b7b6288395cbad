"""What every chapter carries for teaching: exercises labelled by difficulty and ordered by it, and further reading."""

import re
from pathlib import Path

import pytest

SOURCES = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.py"))
HEADING = re.compile(r"^# ### Exercise (\d+)\.(\d+) · .+ \((★{1,3})\)$", re.MULTILINE)


@pytest.mark.parametrize("path", SOURCES, ids=[path.stem for path in SOURCES])
def test_exercises_are_numbered_in_order_labelled_and_ordered_by_difficulty(path):
    text = path.read_text()
    headings = [line for line in text.splitlines() if line.startswith("# ### Exercise ")]
    labelled = HEADING.findall(text)
    assert len(labelled) == len(headings), f"{path.name}: a heading without '· title (★…)': {headings}"
    chapter = str(int(path.stem[:2]))
    assert [(c, int(n)) for c, n, _ in labelled] == [(chapter, n) for n in range(1, len(labelled) + 1)]
    stars = [len(s) for _, _, s in labelled]
    assert stars == sorted(stars), f"{path.name}: exercises not ordered by difficulty: {stars}"
    if path.stem[:2] != "00":
        assert len(labelled) >= 3, f"{path.name} has {len(labelled)} exercises, fewer than three"


@pytest.mark.parametrize("path", SOURCES, ids=[path.stem for path in SOURCES])
def test_every_chapter_ends_with_further_reading(path):
    cells = path.read_text().split("\n# %%")
    assert "# ## Further reading" in cells[-1], f"{path.name} does not end with a 'Further reading' cell"
    if path.stem[:2] != "06":  # the book has no section on fused kernels
        assert re.search(r"d2l book|Dive into Deep Learning", cells[-1]), (
            f"{path.name}: the further reading names no section of the d2l book")
