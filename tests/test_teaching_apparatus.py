"""What every chapter carries for teaching: exercises labelled by difficulty and ordered by it, further
reading, and worked answers to the explorers' things to try, collapsed until a learner opens them."""

import functools
import re
from pathlib import Path

import jupytext
import pytest

from tools import editions

REPO = Path(__file__).resolve().parent.parent
SOURCES = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py"))
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


# ---------------------------------------------------------------- worked answers, on demand

BULLET = re.compile(r"^\* ", re.MULTILINE)  # a top-level item of a Markdown list
NUMBERED = re.compile(r"^(\d+)\. ", re.MULTILINE)  # a top-level item of a numbered list
ANSWERS = re.compile(r"<details>\n<summary>[^\n]+</summary>\n\n(.*?)\n</details>", re.DOTALL)


@functools.cache
def main_part(path):
    """The cells of a chapter before its exercises (or, without any, its further reading)."""
    cells = jupytext.read(path).cells
    end = next(i for i, cell in enumerate(cells)
               if cell.cell_type == "markdown" and re.search(r"^## (Exercises|Further reading)", cell.source, re.M))
    return cells[:end]


def prompt_lists(cells):
    """(index, number of prompts) of each Markdown cell that asks things to try.

    Such a cell holds a bulleted list and either says "things to try" or sits
    just above an explorer (a code cell calling ``explore_…``)."""
    found = []
    for index, cell in enumerate(cells):
        if cell.cell_type != "markdown" or not BULLET.search(cell.source):
            continue
        following = cells[index + 1] if index + 1 < len(cells) else None
        above_explorer = following is not None and following.cell_type == "code" and "explore_" in following.source
        if "things to try" in " ".join(cell.source.lower().split()) or above_explorer:
            found.append((index, len(BULLET.findall(cell.source.split("<details>")[0]))))
    return found


def answers_after(cells, index):
    """The worked answers in cell ``index`` after its list, or else in the next Markdown cell."""
    own = cells[index].source.split("<details>", 1)
    if len(own) == 2:
        return "<details>" + own[1]
    following = next((cell for cell in cells[index + 1:] if cell.cell_type == "markdown"), None)
    return following.source if following is not None and following.source.startswith("<details>") else ""


@pytest.mark.parametrize("path", SOURCES, ids=[path.stem for path in SOURCES])
def test_every_list_of_things_to_try_is_followed_by_one_worked_answer_per_prompt(path):
    cells = main_part(path)
    for index, prompts in prompt_lists(cells):
        block = ANSWERS.match(answers_after(cells, index))
        assert block, f"{path.name}, cell {index}: no closed <details><summary>…</summary> block after its prompts"
        numbers = [int(n) for n in NUMBERED.findall(block.group(1))]
        assert numbers == list(range(1, prompts + 1)), (
            f"{path.name}, cell {index}: {prompts} prompts, but the answers are numbered {numbers}")


def test_every_chapter_with_an_explorer_asks_things_to_try():
    with_explorer = {path.stem for path in SOURCES
                     if any(cell.cell_type == "code" and "explore_" in cell.source for cell in main_part(path))}
    with_prompts = {path.stem for path in SOURCES if prompt_lists(main_part(path))}
    assert len(with_explorer) >= 9  # 06 alone has none
    assert with_prompts == with_explorer


def test_the_answer_rule_finds_a_prompt_list_without_answers():
    cells = jupytext.reads("# %% [markdown]\n# Things to try:\n#\n# * one?\n# * two\n\n# %%\nx = 1\n",
                           fmt="py:percent").cells
    assert prompt_lists(cells) == [(0, 2)]
    assert answers_after(cells, 0) == ""


@pytest.mark.parametrize("path", SOURCES, ids=[path.stem for path in SOURCES])
def test_no_worked_answer_is_open_by_default(path):
    text = path.read_text()
    assert not re.search(r"<details\s+open", text), f"{path.name}: a <details> block shown open"
    assert text.count("<details>") == text.count("</details>"), f"{path.name}: a <details> block left unclosed"


def test_the_worked_answers_render_as_a_closed_block_holding_a_numbered_list():
    # nbconvert's Markdown renderer: what an HTML export, and Voilà's lecture mode, show.
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    for path in SOURCES:
        for index, prompts in prompt_lists(main_part(path)):
            html = markdown2html_mistune(answers_after(main_part(path), index))
            assert html.startswith("<details>\n<summary>"), f"{path.name}, cell {index}: {html[:60]!r}"
            items = re.search(r"<ol>(.*?)</ol>\s*</details>", html, re.DOTALL)
            assert items and items.group(1).count("<li>") == prompts, (
                f"{path.name}, cell {index}: the answers do not render as a list of {prompts} items")


def test_the_learner_edition_keeps_the_worked_answers_collapsed():
    path = REPO / "notebooks" / "04_scaled_dot_product.py"
    nb = editions.add_nbgrader_metadata(jupytext.read(path), path.name)
    blocks = [cell.source for cell in nb.cells if "<details>" in cell.source]
    learner = editions.learner_notebook(nb, path.name)
    assert blocks and [cell.source for cell in learner.cells if "<details>" in cell.source] == blocks
