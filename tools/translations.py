"""The translated chapters keep step with the English: what has drifted, and recording a cell once translated.

    python -m tools.translations check  [notebooks/pt/NN_name.py ...]   # exit 1, saying what to do, on drift
    python -m tools.translations record notebooks/pt/NN_name.py CELL ...  # CELL: a number the check printed

A translated chapter (``notebooks/<folder>/NN_name.py``) has the English chapter's cells in the same order
(docs/translating.md). Two kinds of cell record the English they were made from, in their ``en``
metadata (the first 12 hexadecimal digits of the English text's SHA-256): every Markdown cell, and every
code cell whose data differ on purpose (its first line is ``OWN_DATA``). When the English cell changes,
the record no longer matches, and ``check`` names the cell, shows the English change as a short diff
(the English it was made from comes from git's history of the English file) and prints the command that
records the cell once its translation follows the new English. Every other code cell must equal the
English once comments and the words of strings are set aside (``normalised``), its tags and magic lines
too; ``code_difference`` says in words what differs.

``record`` writes the record of the cells it is given, and of no other: a translator names each cell
once it is translated again, so that no cell is marked as following an English text nobody has read.
"""

import argparse
import ast
import difflib
import functools
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import jupytext

from tools import editions, pairs

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
OWN_DATA = "# Dados em português:"  # a code cell that must differ from the English says why on its first line
RECORDED_KINDS = "a Markdown cell, or a code cell whose first line is " + repr(OWN_DATA)
COLAB_SETUP = "colab-setup"  # the setup cell tools/colab.py writes in each language
HISTORY_DEPTH = 300  # how many of the English file's commits are searched for the text a record names


def english_hash(text):
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def english_of(path):
    """The English chapter a translated chapter (``notebooks/<folder>/NN_name.py``) is made from."""
    return Path(path).parent.parent / Path(path).name


def translated_chapters(notebooks=NOTEBOOKS):
    return sorted(path for folder in editions.TRANSLATIONS for path in (notebooks / folder).glob("[0-9][0-9]_*.py"))


def recorded(cell):
    """Whether a translated cell records its English (Markdown, or code with data of its own)."""
    return cell.cell_type == "markdown" or (cell.cell_type == "code" and cell.source.startswith(OWN_DATA))


def counted(count, one, many):
    return f"{count} {one if count == 1 else many}"


def command(*words):
    return " ".join([".venv/bin/python -m tools.translations", *map(str, words)])


# ---- code cells: the English code, apart from comments and strings

def parsed(source):
    """A code cell's syntax tree; IPython's magic and shell lines become blank lines (``magics`` has them)."""
    return ast.parse("\n".join("" if is_magic(line) else line for line in source.splitlines()))


def is_magic(line):
    return line.lstrip().startswith(("%", "!"))


def magics(source):
    return [line.strip() for line in source.splitlines() if is_magic(line)]


# Python's format spec: [[fill]align][sign][z][#][0][width][grouping][.precision][type]
FORMAT_SPEC = re.compile(r"(?P<head>(?:.?[<>=^])?[-+ ]?z?#?0?)(?P<width>\d*)(?P<tail>[,_]?(?:\.\d+)?[a-zA-Z%]?)",
                         re.DOTALL)


def without_width(spec):
    """A format spec with its width's number set aside: a column's width follows the length of the words
    it lines up with, which a translation changes; whether there is a width, and all the rest, is code."""
    match = FORMAT_SPEC.fullmatch(spec)
    if not match:
        return spec
    return match["head"] + ("<width>" if match["width"] else "") + match["tail"]


NUMBER_HELPERS = {"number", "d2l.number"}  # d2lmini.i18n.number: a number written with the language's marks


def number_call(node):
    """``(value, spec)`` of a call ``number(value[, spec])`` (or ``d2l.number``) whose spec, if any, is
    written out; else None."""
    if not (isinstance(node, ast.Call) and ast.unparse(node.func) in NUMBER_HELPERS and not node.keywords
            and 1 <= len(node.args) <= 2):
        return None
    spec = node.args[1] if len(node.args) == 2 else ast.Constant("")
    if isinstance(spec, ast.JoinedStr):  # a spec with fields of its own: f".{digits}f"
        return node.args[0], spec.values
    if not (isinstance(spec, ast.Constant) and isinstance(spec.value, str)):
        return None
    return node.args[0], [ast.Constant(spec.value)]


def joined_spec(parts):
    """An f-string field's format spec made of ``parts``, adjacent texts merged as Python parses them."""
    merged = []
    for part in parts:
        if isinstance(part, ast.Constant) and merged and isinstance(merged[-1], ast.Constant):
            merged[-1] = ast.Constant(merged[-1].value + part.value)
        elif not (isinstance(part, ast.Constant) and part.value == ""):
            merged.append(part)
    return ast.JoinedStr(merged) if merged else None


class _NumbersAsEnglish(ast.NodeTransformer):
    """A translation writes a number with its language's marks through ``number``, where the English
    formats it: ``{number(x, '.2f'):>8}`` is the English's ``{x:>8.2f}``, ``number(x, spec)`` elsewhere
    is ``format(x, spec)``, and ``number(x)`` is ``x`` (a NumPy array printed as it is)."""

    def visit_FormattedValue(self, node):
        found = number_call(node.value)
        outer = node.format_spec
        if found is None or (outer is not None and not (len(outer.values) == 1
                                                         and isinstance(outer.values[0], ast.Constant))):
            return self.generic_visit(node)
        node.value = self.visit(found[0])
        node.format_spec = joined_spec(([ast.Constant(outer.values[0].value)] if outer is not None else [])
                                       + found[1])
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        found = number_call(node)
        if found is None:
            return node
        value, spec = found
        spec = joined_spec(spec)
        if spec is None:
            return value
        if len(spec.values) == 1 and isinstance(spec.values[0], ast.Constant):
            spec = spec.values[0]
        return ast.Call(ast.Name("format", ast.Load()), [value, spec], [])


def normalised(source):
    """A code cell's syntax tree with its words set aside: string constants emptied, an f-string's literal
    text dropped (so a translation may move the text around its fields). What in a string is code stays:
    an f-string's fields, their conversions and their format specs (``:>12.2f``, nested fields too), but
    for a width's number (``without_width``). A number written through ``number`` is the English's number
    formatted alike (``_NumbersAsEnglish``)."""
    tree = _NumbersAsEnglish().visit(parsed(source))
    specs = {id(node) for spec in ast.walk(tree) if isinstance(spec, ast.FormattedValue) and spec.format_spec
             for node in ast.walk(spec.format_spec)}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and id(node) not in specs:
            node.values = [value for value in node.values if not isinstance(value, ast.Constant)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.spec = node.value  # as written, for a message
            node.value = without_width(node.value) if id(node) in specs else ""
    return tree


FIELD_WORDS = {"id": "the name", "attr": "the attribute", "arg": "the argument name", "name": "the name",
               "module": "the module", "value": "the value", "level": "the import level", "is_async": "async"}
CONVERSIONS = {-1: "none", ord("r"): "!r", ord("s"): "!s", ord("a"): "!a"}  # an f-string field's, as ast has it


def first_difference(english, translated, context=(None, None), in_spec=False, field=None):
    """Where two normalised trees first differ: (English node, translated node, a phrase in words); the
    nodes are the innermost with a line number, or None."""
    if hasattr(english, "lineno"):
        context = (english, context[1])
    if hasattr(translated, "lineno"):
        context = (context[0], translated)
    if type(english) is not type(translated):
        return (*context, f"`{unparsed(translated)}` where the English has `{unparsed(english)}`")
    if isinstance(english, ast.AST):
        in_spec = in_spec or field == "format_spec"
        if in_spec and isinstance(english, ast.Constant) and english.value != translated.value:
            return (*context, f"the format spec {translated.spec!r} where the English has {english.spec!r}")
        for name in english._fields:
            found = first_difference(getattr(english, name, None), getattr(translated, name, None), context,
                                     in_spec, name)
            if found:
                return found
        return None
    if isinstance(english, list):
        for item, other in zip(english, translated):
            found = first_difference(item, other, context, in_spec, field)
            if found:
                return found
        if len(english) > len(translated):
            return (*context, f"the English's `{unparsed(english[len(translated)])}` is missing here")
        if len(translated) > len(english):
            return (*context, f"`{unparsed(translated[len(english)])}` is here and not in the English")
        return None
    if english == translated:
        return None
    if field == "conversion":
        return (*context, f"the conversion {CONVERSIONS[translated]} where the English has {CONVERSIONS[english]}")
    return (*context, f"{FIELD_WORDS.get(field, f'the {field}')} {translated!r} where the English has {english!r}")


def unparsed(node):
    try:
        text = ast.unparse(node) if isinstance(node, ast.AST) else repr(node)
    except Exception:  # noqa: BLE001 - a fragment ast cannot write back (an operator alone): name its kind
        text = type(node).__name__
    return pairs.first_words(text, 50) or type(node).__name__


def tag_difference(english, translated):
    """How a code cell's tags differ from the English's (they are code: exercise, check, …), or None."""
    tags = english.metadata.get("tags", []), translated.metadata.get("tags", [])
    return None if tags[0] == tags[1] else f"its tags are {tags[1]}, the English's {tags[0]}"


def code_difference(english, translated):
    """What differs between an English code cell and its translation beyond comments and strings, in words
    (with the line of each side), or None."""
    if tag_difference(english, translated):
        return tag_difference(english, translated)
    if magics(english.source) != magics(translated.source):
        return f"its magic lines are {magics(translated.source)}, the English's {magics(english.source)}"
    try:
        trees = normalised(english.source), normalised(translated.source)
    except SyntaxError as error:
        return f"it cannot be read as Python ({error.msg}, line {error.lineno})"
    found = first_difference(*trees)
    if found is None:
        return None
    english_node, translated_node, what = found
    lines = [what]
    for name, source, node in (("the English", english.source, english_node), ("here", translated.source,
                                                                                translated_node)):
        if node is not None:
            lines.append(f"{name}, line {node.lineno}: {source.splitlines()[node.lineno - 1].strip()}")
    return "\n      ".join(lines)


# ---- the English a record names, from git's history

def git(*arguments, cwd):
    result = subprocess.run(["git", *arguments], cwd=cwd, capture_output=True, text=True)
    return result.stdout if result.returncode == 0 else None


def english_history(path):
    """A lookup, record -> the English text of the chapter ``path`` that it names (None if no committed
    version has it), searching git's history newest first and reading no further than needed. Outside a
    git checkout, or where git is missing, it finds nothing."""
    path = Path(path).resolve()
    return lambda record: next((cells[record] for cells in _versions(path) if record in cells), None)


def _versions(path):
    """Each committed version of ``path``, newest first, as {record: cell text}, read one by one."""
    commits, root = _commits(path)
    for commit in commits:
        yield _cells(root, commit, path.relative_to(root).as_posix())


@functools.cache
def _commits(path):
    try:
        root = git("rev-parse", "--show-toplevel", cwd=path.parent)
    except OSError:
        return (), None
    if not root:
        return (), None
    root = Path(root.strip()).resolve()
    log = git("log", f"-{HISTORY_DEPTH}", "--format=%H", "--", path.relative_to(root).as_posix(), cwd=root)
    return tuple((log or "").split()), root


@functools.cache
def _cells(root, commit, relative):
    version = git("show", f"{commit}:{relative}", cwd=root)
    cells = jupytext.reads(version, fmt="py:percent").cells if version is not None else []
    return {english_hash(cell.source): cell.source for cell in cells}


def english_change(english_path, record, now):
    """The English change since the text ``record`` names, as a short diff, or why it cannot be shown."""
    if not record:
        return "it has no record yet; the English now:\n" + pairs.short_diff("", now)
    before = english_history(english_path)(record)
    if before is None:
        return (f"no committed version of {pairs.shown(english_path)} has a cell recorded {record!r}; "
                "the English now:\n" + pairs.short_diff("", now))
    return "the English changed ('-' the text it was made from, '+' now):\n" + pairs.short_diff(before, now)


# ---- a chapter's drift, as messages that say what to do

def key(cell, record):
    """What lines up an English cell with a translated one: the kind, and a Markdown cell's text."""
    return (cell.cell_type, record if cell.cell_type == "markdown" else None)


def paired(english_indices, translated_indices, similarity):
    """Pairs (English index, translated index) in order, each side's unpaired cells with None: each cell of
    the shorter side takes, after the last one paired, the most similar cell of the same kind."""
    flip = len(english_indices) > len(translated_indices)
    shorter, longer = (translated_indices, english_indices) if flip else (english_indices, translated_indices)
    score = (lambda one, other: similarity(other, one)) if flip else similarity
    found, start = [], 0
    for one in shorter:
        candidates = [at for at in range(start, len(longer)) if score(one, longer[at]) is not None]
        if not candidates:
            found.append((one, None))
            continue
        best = max(candidates, key=lambda at: score(one, longer[at]))  # the first of the best, on a tie
        found += [(None, longer[at]) for at in range(start, best)] + [(one, longer[best])]
        start = best + 1
    found += [(None, longer[at]) for at in range(start, len(longer))]
    return [(other, one) if flip else (one, other) for one, other in found]


def misaligned(english, translated, english_name, translated_name, history=lambda record: None):
    """Where the translation's cells no longer line up with the English's (a cell added, removed or of
    another kind), one entry each; [] when they line up.

    Cells are matched by kind and, for Markdown, by record, so that an added cell is placed among cells
    whose English is unchanged. Among cells changed around it, a translated cell is matched to the English
    cell nearest the text it was made from (``history``: record -> English text, english_history's), else
    by kind alone."""
    english_keys = [key(cell, english_hash(cell.source)) for cell in english.cells]
    translated_keys = [key(cell, cell.metadata.get("en")) for cell in translated.cells]
    if [kind for kind, _ in english_keys] == [kind for kind, _ in translated_keys]:
        return []
    problems = []

    def unmatched(e1, e2, t1, t2):
        place = f"before {pairs.cell_label(translated, t1)}" if t1 < len(translated.cells) else "at the end"
        problems.extend(f"the English's {pairs.cell_label(english, index)} has no translation: add one {place} of "
                        f"{translated_name}" for index in range(e1, e2))
        problems.extend(f"{pairs.cell_label(translated, index)} of {translated_name} has no English cell in "
                        f"{english_name} any more: remove it" for index in range(t1, t2))

    def similarity(english_index, translated_index):
        """How near a translated cell's English (where its record is known) is to an English cell; None for
        cells of two kinds."""
        cell, source = translated.cells[translated_index], english.cells[english_index]
        if cell.cell_type != source.cell_type:
            return None
        before = history(cell.metadata.get("en")) if cell.cell_type == "markdown" else None
        return 0.0 if before is None else difflib.SequenceMatcher(None, before, source.source).ratio()

    for tag, e1, e2, t1, t2 in difflib.SequenceMatcher(None, english_keys, translated_keys,
                                                       autojunk=False).get_opcodes():
        kinds = [kind for kind, _ in english_keys[e1:e2]], [kind for kind, _ in translated_keys[t1:t2]]
        if kinds[0] == kinds[1]:
            continue  # the same kinds: changed cells, which the records name once the cells line up
        if tag != "replace":
            unmatched(e1, e2, t1, t2)
            continue
        pairing = paired(range(e1, e2), range(t1, t2), similarity)
        for at, (english_index, translated_index) in enumerate(pairing):
            if english_index is None:
                unmatched(e2, e2, translated_index, translated_index + 1)
            elif translated_index is None:  # placed before the next translated cell that has its English
                place = next((index for _, index in pairing[at + 1:] if index is not None), t2)
                unmatched(english_index, english_index + 1, place, place)
    return problems


def drift(path, english=None, translated=None):
    """What keeps a translated chapter from following its English, as one message, or None.

    The message names the chapter, then each cell as a reader finds it, what changed, and the one command
    that records the cells once they are translated (or what to change, for code)."""
    path = Path(path)
    english_path = english_of(path)
    english = english if english is not None else jupytext.read(english_path)
    translated = translated if translated is not None else jupytext.read(path)
    name, english_name = pairs.shown(path), pairs.shown(english_path)
    out_of_line = misaligned(english, translated, english_name, name, english_history(english_path))
    if out_of_line:
        return "\n".join([f"{name}: its cells no longer line up with {english_name}'s, cell for cell.",
                          *(f"  {problem}" for problem in out_of_line),
                          "Add or remove those cells at the same place as the English; the check then names "
                          "the cells to record."])
    stale, differing = [], []
    for index, (source, cell) in enumerate(zip(english.cells, translated.cells)):
        label = pairs.cell_label(translated, index)
        if recorded(cell):
            if cell.cell_type == "code" and tag_difference(source, cell):  # data of its own, the English's tags
                differing.append(f"  {label}:\n      {tag_difference(source, cell)}")
            if cell.metadata.get("en") != english_hash(source.source):
                stale.append((index, f"  {label}:\n  "
                              + english_change(english_path, cell.metadata.get("en"), source.source)))
        elif cell.cell_type == "code" and COLAB_SETUP not in cell.metadata.get("tags", []):
            difference = code_difference(source, cell)
            if difference:
                differing.append(f"  {label}:\n      {difference}")
    if not stale and not differing:
        return None
    lines = []
    if stale:
        lines += [f"{name}: {counted(len(stale), 'cell was', 'cells were')} translated from a text of "
                  f"{english_name} that has since changed.", *(text for _, text in stale), "",
                  "Translate each one again to say what the English now says (a cell whose change needs no new "
                  "words is done as it is), then record those you have done:",
                  "  " + command("record", name, *(index + 1 for index, _ in stale))]
    if differing:
        lines += ["" if lines else None,
                  f"{name}: {counted(len(differing), 'code cell differs', 'code cells differ')} from "
                  f"{english_name}'s code beyond comments and strings.", *differing, "",
                  "Make each one the English code again (only comments and the words of strings may differ). "
                  f"Where its data must differ, begin it with '{OWN_DATA} <why>' and record it:",
                  "  " + command("record", name, "<cell number>")]
    return "\n".join(line for line in lines if line is not None)


# ---- recording

def record(path, numbers, english=None):
    """Record, for each cell numbered in ``numbers`` (from 1), the English it now follows; write the .py.
    Returns what it did, one line per cell. Only those cells are touched."""
    path = Path(path)
    english = english if english is not None else jupytext.read(english_of(path))
    translated = jupytext.read(path)
    out_of_line = misaligned(english, translated, pairs.shown(english_of(path)), pairs.shown(path),
                             english_history(english_of(path)))
    if out_of_line:
        raise ValueError(f"{pairs.shown(path)}: its cells do not line up with the English's, so no cell can be "
                         "recorded yet:\n" + "\n".join(f"  {problem}" for problem in out_of_line))
    done = []
    for number in numbers:
        if not 1 <= number <= len(translated.cells):
            raise ValueError(f"cell: expected a number from 1 to {len(translated.cells)} (the cells of "
                             f"{pairs.shown(path)}), got {number}")
        cell = translated.cells[number - 1]
        if not recorded(cell):
            raise ValueError(f"cell {number}: expected {RECORDED_KINDS}, got a code cell that must equal the "
                             f"English code, which has no record ({pairs.cell_label(translated, number - 1)})")
    for number in numbers:
        cell, source = translated.cells[number - 1], english.cells[number - 1]
        now = english_hash(source.source)
        if cell.metadata.get("en") == now:
            done.append(f"cell {number}: already follows the English; unchanged")
        else:
            cell.metadata["en"] = now
            done.append(f"cell {number}: recorded as following the English now there ({now})")
        # In the order the .ipynb keeps them (nbformat sorts its keys), so that the pair stays byte for byte.
        cell.metadata = type(cell.metadata)(sorted(cell.metadata.items()))
    jupytext.write(translated, path, fmt="py:percent")
    return done


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.translations",
                                     description="Check the translated chapters against the English, or record "
                                                 "cells once translated (docs/translating.md).")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="say what drifted, and what to do; exit 1 if anything did")
    check.add_argument("chapters", nargs="*", type=Path, help="translated chapters' .py (default: all)")
    write = commands.add_parser("record", help="record that the cells named follow the English now there")
    write.add_argument("chapter", type=Path, help="a translated chapter's .py, e.g. notebooks/pt/04_....py")
    write.add_argument("cells", nargs="+", type=int, metavar="CELL", help="a cell's number, as the check names it")
    args = parser.parse_args(argv)
    chapters = (args.chapters or translated_chapters()) if args.command == "check" else [args.chapter]
    for chapter in chapters:
        if chapter.suffix != ".py" or not chapter.is_file() or not english_of(chapter).is_file():
            parser.error(f"chapter: expected a translated chapter's .py beside an English one "
                         f"(notebooks/<language>/NN_name.py), got {str(chapter)!r}")
    if args.command == "record":
        try:
            print("\n".join(record(args.chapter, args.cells)))
        except ValueError as error:
            parser.error(str(error))
        print(f"Then bring its .ipynb in step: make notebooks (or .venv/bin/jupytext --update --to ipynb "
              f"{pairs.shown(args.chapter)} where no code changed).")
        return 0
    messages = [message for chapter in chapters if (message := drift(chapter))]
    print("\n\n".join(messages) if messages else f"{len(chapters)} translated chapter(s) follow the English.")
    return 1 if messages else 0


if __name__ == "__main__":
    sys.exit(main())
