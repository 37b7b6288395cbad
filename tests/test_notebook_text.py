"""The chapters' text is where a reader sees it: no prose or heading hides in a code cell.

A paragraph written as comments in a code cell never renders as text: its
heading is missing from the table of contents, from the learner edition's
outline and from every HTML rendering, and a reader skimming the prose skips
it. (Chapter 03's "Checking against d2lmini" section once lived in one.)
Comments in code say why or give a shape, in a few lines at most.
"""

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))
HEADING = re.compile(r"^\s*#\s*#{1,6}\s")  # "# ## Title": a Markdown heading commented out
SOLUTION_MARKERS = re.compile(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")  # nbgrader's, not headings
LONGEST_COMMENT = 4  # full-line comments in a row: more is a paragraph, which belongs in a Markdown cell


def hidden_prose(source):
    """The problems of one code cell's source: headings and paragraphs written as comments."""
    problems, run = [], []
    for number, line in enumerate(source.splitlines() + [""], start=1):
        if HEADING.match(line) and not SOLUTION_MARKERS.match(line):
            problems.append(f"line {number} is a heading: {line.strip()!r}")
        if line.strip().startswith("#") and not SOLUTION_MARKERS.match(line):
            run.append(number)
            continue
        if len(run) > LONGEST_COMMENT:
            problems.append(f"lines {run[0]}-{run[-1]} are {len(run)} comment lines in a row: a paragraph")
        run = []
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_no_prose_or_heading_hides_in_a_code_cell(path):
    notebook = nbformat.read(path, as_version=4)
    found = [f"cell {index}: {problem}" for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
             for problem in hidden_prose(cell.source)]
    assert not found, f"{path.name}: write these as a Markdown cell:\n" + "\n".join(found)


def test_the_rule_finds_a_hidden_section_and_spares_code_comments():
    hidden = ("x = 1\n# ## Checking against `d2lmini`\n#\n# The package's version gives the same weights\n"
              "# for the same inputs,\n# as the cell below shows.\n")
    assert hidden_prose(hidden) == ["line 2 is a heading: '# ## Checking against `d2lmini`'",
                                    "lines 2-6 are 5 comment lines in a row: a paragraph"]
    assert hidden_prose("# (batch, queries, keys)\nscores = q @ k.T  # one score per pair\n") == []
    assert hidden_prose("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n") == []
    assert hidden_prose("# one reason\n# and a second line\n# and a third\nx = 1\n") == []
