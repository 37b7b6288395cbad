"""A chapter's Jupytext pair: its .ipynb holds the cells its .py says, and how to name a cell to a reader.

Each chapter is a pair (jupytext.toml): ``NN_name.py``, the source, and ``NN_name.ipynb``, which holds the
stored outputs. The rule is that writing the .ipynb back as a percent script gives the .py byte for byte
(what ``make notebooks`` leaves behind). When it does not, ``pair_problems`` says where, in a reader's
terms: which cell (its number, its section's heading and its first words) differs in kind, text or kept
metadata, or that only the header (the notebook's metadata) differs, and the command for each direction.
``tests/test_notebook_pairs.py`` runs it on every chapter in both languages; ``tools/translations.py``
names cells the same way.
"""

import difflib
import re
from pathlib import Path

import jupytext

HEADING = re.compile(r"^\s*#{1,6}\s+(.+?)\s*#*\s*$")
DIFF_LINES = 12  # a longer change is cut, saying how many lines were left out


def headings(cell):
    """The Markdown headings of a cell, in order, without their marks."""
    if cell.cell_type != "markdown":
        return []
    return [match.group(1) for line in cell.source.splitlines() if (match := HEADING.match(line))]


def first_words(text, width=60):
    """The first line of ``text`` that says something, shortened to ``width`` characters."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= width else line[:width - 1].rstrip() + "…"


def cell_label(notebook, index):
    """A cell as a reader finds it: 'cell 15 (Markdown), in section "…", beginning "…"' (numbered from 1)."""
    cell = notebook.cells[index]
    kind = "Markdown" if cell.cell_type == "markdown" else cell.cell_type
    section = next((found[0] for found in [headings(cell)] if found), None)
    for earlier in reversed(notebook.cells[:index]):
        if section is not None:
            break
        section = next(iter(reversed(headings(earlier))), None)
    where = f', in section "{section}"' if section else ", before the first heading"
    return f'cell {index + 1} ({kind}){where}, beginning "{first_words(cell.source)}"'


def short_diff(old, new, indent="    "):
    """The lines that differ between two texts, '- ' old and '+ ' new, without context; cut past DIFF_LINES."""
    lines = [f"{indent}{line[0]} {line[1:]}" for line in difflib.unified_diff(
        old.splitlines(), new.splitlines(), n=0, lineterm="") if not line.startswith(("---", "+++", "@@"))]
    if len(lines) > DIFF_LINES:
        lines = lines[:DIFF_LINES] + [f"{indent}… and {len(lines) - DIFF_LINES} more changed lines"]
    return "\n".join(lines)


def shown(path):
    """A path as the messages print it: relative to the working directory where it can be."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def cell_problems(source_cells, stored_cells, source_name, stored_name, most=5):
    """What differs between two notebooks' cells, one entry each (at most ``most``), or [] when they agree.

    Both are read through the .py's own header, so only what the .py keeps is compared: each cell's kind,
    text and kept metadata (tags, en, …), in order. The cells are named as ``source_cells`` has them."""
    problems = []
    for index, (cell, stored) in enumerate(zip(source_cells.cells, stored_cells.cells)):
        label = cell_label(source_cells, index)
        if cell.cell_type != stored.cell_type:
            problems.append(f"{label}: a {cell.cell_type} cell in {source_name}, {stored.cell_type} in {stored_name}")
            break  # the cells after it are likely shifted: the first one shows where
        if cell.source != stored.source:
            problems.append(f"{label}: its text differs ('-' {source_name}, '+' {stored_name}):\n"
                            + short_diff(cell.source, stored.source))
        if list(cell.metadata.items()) != list(stored.metadata.items()):  # the order is written too
            problems.append(f"{label}: its metadata differs: {dict(cell.metadata)} in {source_name}, "
                            f"{dict(stored.metadata)} in {stored_name}"
                            + (" (the same keys in another order: an .ipynb keeps them sorted)"
                               if cell.metadata == stored.metadata else ""))
    if len(problems) > most:
        problems = problems[:most] + [f"… and {len(problems) - most} more cells"]
    counts = len(source_cells.cells), len(stored_cells.cells)
    if counts[0] != counts[1]:
        longer, name = (source_cells, source_name) if counts[0] > counts[1] else (stored_cells, stored_name)
        problems.append(f"{source_name} has {counts[0]} cells and {stored_name} {counts[1]}; only in {name}:\n"
                        + "\n".join(f"    {cell_label(longer, index)}" for index in range(min(counts), max(counts))))
    return problems


def pair_problems(source):
    """Why the .ipynb of the pair ``source`` (a .py) is not what the .py says, as one message; None if it is."""
    source = Path(source)
    ipynb = source.with_suffix(".ipynb")
    py_name, ipynb_name = shown(source), shown(ipynb)
    if not ipynb.exists():
        return f"{ipynb_name} is missing: run `make notebooks` to write it from {py_name}."
    text = source.read_text(encoding="utf-8")
    regenerated = jupytext.writes(jupytext.read(ipynb), fmt="py:percent")
    if regenerated == text:
        return None
    problems = cell_problems(jupytext.reads(text, fmt="py:percent"), jupytext.reads(regenerated, fmt="py:percent"),
                             py_name, ipynb_name)
    if not problems:
        problems = [f"every cell agrees, but the header (the notebook's metadata) or the spacing differs "
                    f"('-' {py_name}, '+' {ipynb_name} written as a .py):\n" + short_diff(text, regenerated)]
    return "\n".join([
        f"{py_name} and {ipynb_name} differ: the pair was edited on one side only.",
        *problems,
        "",
        "If the .py is right (it is the source), copy its cells into the .ipynb, keeping the outputs:",
        f"  .venv/bin/jupytext --update --to ipynb {py_name}",
        "  (then `make notebooks`, which also stores the outputs, if a code cell changed).",
        "If the edit in the .ipynb is the one to keep, write the .py from it:",
        f"  .venv/bin/jupytext --to py:percent {ipynb_name}",
    ])
