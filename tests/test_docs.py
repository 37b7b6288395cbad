"""The docs say only what the repository holds: links, make targets, tool options, paths and counts.

Each check is a function from a document's text to what it gets wrong, run on
every document (README.md, docs/*.md, tests/README.md, benchmarks/README.md)
and, as a control, on a planted error that it must catch. Nothing here runs a
notebook, and only the test of the counts imports the package (to compare the
explorers read from the source with d2lmini.widgets.DECLARATIONS): the facts
come from the files themselves.
"""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "tests" / "README.md",
        REPO / "benchmarks" / "README.md"]
CHAPTERS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py"))
# What a build or a hub creates, or an administrator fills in, and git ignores: named in the docs, absent
# from a fresh clone.
GENERATED = ("hub/state", "hub/lti.json")
# A path with a placeholder in it names a file to write, not one that exists.
PLACEHOLDER = re.compile(r"NN|…|\.\.\.|[<>{}$]|/x\.py$")
NUMBER_WORDS = {word: number for number, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen".split())}

FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`([^`]+)`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def doc_id(path):
    return str(path.relative_to(REPO))


def snippets(text):
    """The code of a document: each line of its fenced blocks, and each inline code span (one line)."""
    blocks = FENCE.findall(text)
    lines = [line for block in blocks for line in block.splitlines()[1:-1]]
    spans = [" ".join(span.split()) for span in INLINE_CODE.findall(FENCE.sub("", text))]
    return lines + spans


def prose(text):
    """The text with code removed, so that a link or a number written as code is not read as one."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


# --- links ------------------------------------------------------------------------------------------------

def github_slug(heading):
    """The anchor GitHub gives a heading: its rendered text, lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text):
    """Every heading's anchor; a repeated one gets -1, -2, ... as on GitHub."""
    seen, result = {}, set()
    for heading in HEADING.findall(FENCE.sub("", text)):
        slug = github_slug(heading)
        result.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return result


def broken_links(path, text):
    """Internal links of a document whose file, or whose #anchor in that file, does not exist."""
    broken = []
    for target in LINK.findall(prose(text)):
        if re.match(r"[a-z]+:", target):  # https:, mailto: and the like: not this repository's
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no file {linked}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text()):
            broken.append(f"{target}: no heading with anchor #{anchor} in {linked.name}")
    return broken


def test_the_link_check_catches_a_missing_file_and_a_missing_anchor():
    doc = REPO / "docs" / "planted.md"
    assert broken_links(doc, "[fine](explorers.md#on-the-web-page) [fine](../README.md)") == []
    assert len(broken_links(doc, "[moved](docs/explorers.md) [gone](explorers.md#no-such-heading)")) == 2
    assert broken_links(doc, "`[code](nowhere.md)` and https://example.org/x.md") == []


def test_anchors_follow_githubs_heading_slugs():
    text = "# A `make` target: it's (fast)\n## Speed\n## Speed\n```\n# not a heading\n```\n"
    assert anchors(text) == {"a-make-target-its-fast", "speed", "speed-1"}


# --- make targets -----------------------------------------------------------------------------------------

def makefile_targets():
    text = (REPO / "Makefile").read_text()
    targets = set()
    for names in re.findall(r"^([A-Za-z][\w./ -]*?)\s*:(?!=)", text, flags=re.MULTILINE):
        targets.update(names.split())
    return targets - {".PHONY"}


def unknown_make_targets(text, targets):
    named = {match for snippet in snippets(text) for match in re.findall(r"\bmake\s+([a-z][\w-]*)", snippet)}
    return sorted(named - targets)


def test_the_target_check_reads_the_makefile_and_catches_an_unknown_target():
    targets = makefile_targets()
    assert {"lab", "test", "site", "hub", "bench-widgets", "clean", "distclean", "bench-page"} <= targets
    assert unknown_make_targets("Run `make lab PORT=8899`, then\n```\nmake test\n```", targets) == []
    assert unknown_make_targets("Run `make labs` or `make -n present`.", targets) == ["labs"]


# --- tool options -----------------------------------------------------------------------------------------

def script_options(script):
    """Every option string that a script's argparse parsers (subcommands included) define."""
    options = set()
    for node in ast.walk(ast.parse(script.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
            options.update(arg.value for arg in node.args
                           if isinstance(arg, ast.Constant) and str(arg.value).startswith("-"))
    return options | {"-h", "--help"}


TOOL_COMMAND = re.compile(r"(?:(?<![\w-])-m\s+(?P<module>(?:tools|benchmarks)\.\w+)|(?P<python>python3?\s+)?\b"
                          r"(?P<path>(?:tools|benchmarks)/\w+\.py))"
                          r"(?P<rest>(?:\s+[^\s|;&]+)*)")
PROJECT_IMPORT = re.compile(r"^\s*(?:from|import) (?:tools|benchmarks)\b", re.MULTILINE)


def unknown_tool_options(text):
    """`tools/x.py --option`, `-m tools.x --option` (or benchmarks) where the script defines no such option.

    A script that imports the project's tools or benchmarks runs only as a module:
    `python tools/x.py` for one is reported too.
    """
    unknown = []
    for snippet in snippets(text):
        for found in TOOL_COMMAND.finditer(snippet):
            script = found["path"] or found["module"].replace(".", "/") + ".py"
            if not (REPO / script).exists():
                unknown.append(f"{script}: no such script")
                continue
            if found["python"] and PROJECT_IMPORT.search((REPO / script).read_text()):
                unknown.append(f"{script}: run it as python -m {script[:-3].replace('/', '.')}")
            options = script_options(REPO / script)
            rest = re.sub(r"\"[^\"]*\"|'[^']*'", "", found["rest"])  # a quoted value is not an option of the script
            unknown += [f"{script} {option}" for option in re.findall(r"(?<![\w-])--?[a-z][\w-]*", rest)
                        if option.split("=")[0] not in options]
    return unknown


def test_the_option_check_reads_argparse_and_catches_an_unknown_option():
    assert {"--check"} <= script_options(REPO / "tools" / "colab.py")
    assert unknown_tool_options('`python tools/start.py lab --pip-args="--extra-index-url https://x"`') == []
    assert unknown_tool_options('`python tools/start.py lab --pip "--x"`') == ["tools/start.py --pip"]
    assert {"--out", "--baseline"} & script_options(REPO / "benchmarks" / "widget_latency.py") == {"--baseline"}
    assert unknown_tool_options("`python -m tools.colab --check notebooks/*.py`") == []
    assert unknown_tool_options("`python -m tools.colab --fix notebooks/*.py`") == ["tools/colab.py --fix"]
    assert unknown_tool_options("`python -m benchmarks.widget_latency --baseline 937c25e`") == []
    assert unknown_tool_options("`python tools/nothing.py`") == ["tools/nothing.py: no such script"]
    assert unknown_tool_options("`python -m tools.nothing`") == ["tools/nothing.py: no such script"]
    # colab.py imports the learner repository's branch from tools.learner_repo: it runs only as a module.
    assert unknown_tool_options("`python tools/colab.py --check notebooks/*.py`") == [
        "tools/colab.py: run it as python -m tools.colab"]


# --- paths ------------------------------------------------------------------------------------------------

TOP_LEVEL = {path.name for path in REPO.iterdir() if path.is_dir() and not path.name.startswith(".")} - {
    "build", "learner"}


def named_paths(text):
    """Repository paths in a document's code: a token with a slash whose first folder is one of the repository's."""
    paths = set()
    for snippet in snippets(text):
        for token in snippet.split():
            token = token.strip("()[],;:'\"").split("::")[0]
            if "/" in token and token.split("/")[0] in TOP_LEVEL and not PLACEHOLDER.search(token):
                paths.add(token)
    return paths


def missing_paths(path, text):
    missing = []
    for name in sorted(named_paths(text)):
        if name.startswith(GENERATED):
            continue
        if any(char in name for char in "*?["):
            found = list(REPO.glob(name))
        else:
            found = [place for place in (REPO / name, path.parent / name) if place.exists()]
        if not found:
            missing.append(name)
    return missing


def test_the_path_check_catches_a_missing_file_and_skips_what_a_build_makes():
    doc = REPO / "docs" / "planted.md"
    fine = "`tests/test_docs.py`, `d2lmini/widgets/page.py`, `notebooks/*.py`, `learner/00.ipynb`, `.venv/chp`"
    assert missing_paths(doc, fine) == []
    assert missing_paths(doc, "Open `notebooks/NN_topic.py`; the homes are in `hub/state/home/`.") == []
    assert missing_paths(doc, "See `tools/colabs.py` and `tests/test_nothing*.py`.") == [
        "tests/test_nothing*.py", "tools/colabs.py"]


# --- numbers ----------------------------------------------------------------------------------------------

def number(word):
    return int(word) if word.isdigit() else NUMBER_WORDS[word.lower()]


def tagged_cells(source, tag):
    return len(re.findall(rf'^# %%.*tags=\[[^\]]*"{tag}"', source, flags=re.MULTILINE))


def declarations():
    """How many explorers d2lmini.widgets.DECLARATIONS lists, read from the source: the classes of
    d2lmini/widgets/ that set a chapter, ``chapter = 2`` (Declaration's own is None)."""
    count = 0
    for path in (REPO / "d2lmini" / "widgets").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                count += any(isinstance(line, ast.Assign) and isinstance(line.value, ast.Constant)
                             and type(line.value.value) is int
                             and [getattr(target, "id", None) for target in line.targets] == ["chapter"]
                             for line in node.body)
    return count


def bad_input_cases():
    tree = ast.parse((REPO / "tests" / "test_bad_input.py").read_text())
    (value,) = [node.value for node in tree.body if isinstance(node, ast.Assign)
                and any(getattr(target, "id", None) == "CASES" for target in node.targets)]
    return len(value.elts)


def facts():
    """The counts the docs state, each computed from the file that holds it."""
    with_exercises = [path.name[:2] for path in CHAPTERS if tagged_cells(path.read_text(), "exercise")]
    fixture = (REPO / "tests" / "widget_explorers.ipynb").read_text()
    return {
        "chapters": len(CHAPTERS),
        "explorers": declarations(),
        "bad-input cases": bad_input_cases(),
        "chapter 08's ignored cells": tagged_cells(
            (REPO / "notebooks" / "08_attention_that_learns.py").read_text(), "nbval-ignore-output"),
        "chapters with exercises": f"{with_exercises[0]}–{with_exercises[-1]}"
        if len(with_exercises) == int(with_exercises[-1]) - int(with_exercises[0]) + 1 else with_exercises,
        "explorers in the fixture notebook": len(set(re.findall(r"explore_\w+\(\)", fixture))),
    }


WORD = r"(\d+|" + "|".join(NUMBER_WORDS) + r")"
# (document, pattern, fact): each pattern's groups, read as one number or a range, must equal the fact.
CLAIMS = [
    ("README.md", rf"\b{WORD} Jupyter notebooks", "chapters"),
    ("*", rf"\b(?:all|the) {WORD} chapters\b", "chapters"),
    ("tests/README.md", rf"\b{WORD} bad-input cases", "bad-input cases"),
    # Stated nowhere now (a new explorer would change them), but checked wherever a document says them.
    ("*", rf"of the\s+{WORD} explorers", "explorers"),
    ("tests/README.md", rf"showing {WORD} of the", "explorers in the fixture notebook"),
    ("docs/chapter08.md", rf"\b{WORD} tagged cells in all", "chapter 08's ignored cells"),
    ("docs/instructors.md", r"Chapters (\d\d–\d\d) end with exercises", "chapters with exercises"),
]


def wrong_numbers(name, text, known):
    """Each claim in one document whose number differs from the file's, as 'fact: says X, file holds Y'."""
    wrong, text = [], " ".join(text.split())
    for document, pattern, fact in CLAIMS:
        if document not in ("*", name):
            continue
        for said in re.findall(pattern, text, flags=re.IGNORECASE):
            value = said if "–" in said else number(said)
            if value != known[fact]:
                wrong.append(f"{fact}: says {said}, the files hold {known[fact]}")
    return wrong


# Facts whose claims only guard: no document states them, so that adding an explorer changes no sentence.
UNSTATED = {"explorers", "explorers in the fixture notebook"}


def test_every_claimed_count_is_stated_where_the_docs_say_it():
    texts = {doc_id(path): " ".join(path.read_text().split()) for path in DOCS}
    for document, pattern, fact in CLAIMS:
        if fact in UNSTATED:
            continue
        places = texts.values() if document == "*" else [texts[document]]
        assert any(re.search(pattern, text, flags=re.IGNORECASE) for text in places), (document, pattern)


# --- every document, every check ---------------------------------------------------------------------------

# What each check reports for one document: a list of what it names that does not exist or does not match.
DOC_CHECKS = {
    "links": lambda path, text: broken_links(path, text),
    "make-targets": lambda path, text: unknown_make_targets(text, makefile_targets()),
    "tool-options": lambda path, text: unknown_tool_options(text),
    "paths": lambda path, text: missing_paths(path, text),
    "counts": lambda path, text: wrong_numbers(doc_id(path), text, facts()),
}


@pytest.mark.parametrize("check", DOC_CHECKS)
@pytest.mark.parametrize("path", DOCS, ids=doc_id)
def test_every_document_names_only_what_exists(path, check):
    assert DOC_CHECKS[check](path, path.read_text()) == []


def test_the_counts_are_read_from_the_files_and_a_wrong_one_is_caught():
    known = facts()
    from d2lmini.widgets import DECLARATIONS  # here only: the other checks import nothing of the package

    # The explorers counted from __init__.py's source are the ones d2lmini.widgets lists, however many.
    assert known["explorers"] == len(DECLARATIONS) and known["explorers in the fixture notebook"] >= 1
    assert known["chapters"] == 10 and known["chapters with exercises"] == "01–09"
    assert known["bad-input cases"] >= 20 and known["chapter 08's ignored cells"] >= 1
    # Each sample is wrong whatever the files hold: one more explorer than each count.
    fixture, explorers = known["explorers in the fixture notebook"] + 1, known["explorers"] + 1
    planted = {
        "README.md": "Nine Jupyter notebooks take you",
        "docs/instructors.md": "Chapters 01–06 end with exercises.",
        "tests/README.md": f"- 7 bad-input cases, and a fixture showing {fixture} of the\n  {explorers} explorers",
        "docs/chapter08.md": "(two tagged cells in all, the timing's included)",
        "docs/d2lmini.md": "a browser test checks all nine chapters",
    }
    caught = {name: wrong_numbers(name, text, known) for name, text in planted.items()}
    assert {name: len(found) for name, found in caught.items()} == {
        "README.md": 1, "docs/instructors.md": 1, "tests/README.md": 3, "docs/chapter08.md": 1, "docs/d2lmini.md": 1}
