"""Answers that must not leak: the solution lines of the chapters and of the fixture chapter, and where they show.

The edition tests (test_editions.py, test_learner_edition.py, test_learner_repo.py)
build a folder and ask ``leaks`` whether any solution line, one that appears
nowhere a learner sees anyway, ended up in it.
"""

import json
from pathlib import Path

import nbformat

from tools import editions

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE = "99_fixture_chapter.ipynb"
CHAPTERS = sorted((REPO / "notebooks").glob("*.ipynb"))


def read(path):
    return nbformat.read(path, as_version=4)


def solution_regions(nb, name=""):
    """The lines of each solution region of ``nb``'s exercise cells, as written, read with
    tools/editions.py's own parser (``name`` is the notebook its errors name)."""
    for cell in nb.cells:
        if editions.EXERCISE not in editions.tags(cell):
            continue
        lines = cell.source.splitlines()
        for begin, end in editions.solution_regions(cell.source, name):
            yield lines[begin + 1 : end]


def solution_lines(nb):
    """Each solution region of ``nb``, as its non-empty lines, stripped."""
    for region in solution_regions(nb):
        yield [line.strip() for line in region if line.strip()]


def public_text(sources):
    """What a learner sees anyway: every notebook outside its solution regions, and d2lmini's code."""
    parts = [path.read_text() for path in sorted((REPO / "d2lmini").rglob("*.py"))]
    for path in sources.values():
        for cell in read(path).cells:
            lines = cell.source.splitlines()
            if "exercise" in editions.tags(cell):
                for begin, end in reversed(editions.solution_regions(cell.source, "")):
                    del lines[begin : end + 1]
            parts.append("\n".join(lines))
    return "\n".join(parts)


def texts(folder):
    """(file, text) for every file under folder; a notebook's text is all its JSON strings."""
    def strings(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            yield from (s for value in node.values() for s in strings(value))
        elif isinstance(node, list):
            yield from (s for item in node for s in strings(item))

    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        if path.suffix == ".ipynb":
            yield path, "\n".join(strings(json.loads(path.read_text())))
        else:
            yield path, path.read_text(errors="replace")


def leaks(folder, sources):
    """Solution lines, seen nowhere outside solution regions, that appear somewhere under folder."""
    public = public_text(sources)
    secret = {line for path in sources.values() for region in solution_lines(read(path))
              for line in region if line not in public}
    return [(path.name, line) for path, text in texts(folder) for line in sorted(secret) if line in text]
