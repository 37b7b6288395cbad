"""The chapters' text is where a reader sees it: no prose or heading hides in a code cell.

A paragraph written as comments in a code cell never renders as text: its
heading is missing from the table of contents, from the learner edition's
outline and from every HTML rendering, and a reader skimming the prose skips
it. (Chapter 03's "Checking against d2lmini" section once lived in one.)
Comments in code say why or give a shape, in a few lines at most. An
explanation longer than that, even in two long comment lines or at the end of
a line of code, is prose too: the reader who needs it most is the one who
skims the code.
"""

import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))
HEADING = re.compile(r"^\s*#\s*#{1,6}\s")  # "# ## Title": a Markdown heading commented out
SOLUTION_MARKERS = re.compile(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")  # nbgrader's, not headings
LONGEST_COMMENT = 4  # full-line comments in a row: more is a paragraph, which belongs in a Markdown cell
MOST_WORDS = 30  # in one run of full-line comments: more is an explanation, which belongs there too
MOST_WORDS_AFTER_CODE = 20  # in a comment after code on its line


def _comments(source):
    """The comments of a cell as (first line, last line, words): a run of full-line comments is one comment;
    a comment after code has no last line."""
    comments, run = [], []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and not SOLUTION_MARKERS.match(token.string):
            words = len(token.string.lstrip("#").split())
            if token.line.strip() == token.string.strip():  # a full-line comment
                run.append((token.start[0], words))
                continue
            comments.append((token.start[0], None, words))
        if token.type not in (tokenize.NL, tokenize.COMMENT) and run:
            comments.append((run[0][0], run[-1][0], sum(words for _, words in run)))
            run = []
    if run:
        comments.append((run[0][0], run[-1][0], sum(words for _, words in run)))
    return comments


def hidden_prose(source):
    """The problems of one code cell's source: headings, paragraphs and long explanations written as comments."""
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
    for first, last, words in _comments(source):
        if last is None and words > MOST_WORDS_AFTER_CODE:
            problems.append(f"line {first}: a comment of {words} words after code, an explanation")
        elif last is not None and words > MOST_WORDS:
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            problems.append(f"{where}: a comment of {words} words, an explanation")
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
    # chapter 01's thread-count rationale, once three comment lines above its code
    rationale = ("# Every tensor here is small: the largest, in the grid search near the end, holds 101 × 40 × 39\n"
                 "# numbers. For such sizes a pool of threads costs more in waking up than it saves, so this\n"
                 "# notebook uses one thread, which also keeps every printed sum in one order.\n"
                 "torch.set_num_threads(1)\n")
    assert hidden_prose(rationale) == ["lines 1-3: a comment of 51 words, an explanation"]
    told = ("x.retain_grad()  # keep the gradient at x too: autograd keeps only the gradients of the leaves it"
            " was given, unless asked, and this chapter needs both\n")
    assert hidden_prose(told) == [
        "line 1: a comment of 24 words after code, an explanation"]
    assert hidden_prose("torch.set_num_threads(1)  # tiny tensors: one thread is fastest, sums in one order\n") == []
    assert hidden_prose("s = '# not a comment, ' * 40\n") == []
    assert hidden_prose("# (batch, queries, keys)\nscores = q @ k.T  # one score per pair\n") == []
    assert hidden_prose("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n") == []
    assert hidden_prose("# one reason\n# and a second line\n# and a third\nx = 1\n") == []
