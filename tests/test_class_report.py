"""The class report (tools/class_report.py) counts every outcome of a generated class correctly.

A class of 30 submissions of chapter 02 is generated at test time from the
chapter's solution and learner editions and the wrong-variant catalogue: each
exercise of each submission holds the right answer, the stub, a catalogued
mistake or an answer no mistake matches; one submission hangs, one ends its own
process, one tries to read another submission, one renamed an exercise's
function, one asks for more memory than its limit, one is in Portuguese and one
is an Otter zip. Beside them lie a file that is not a notebook, a file that is
not JSON, a notebook of chapter 03 and nbgrader's timestamp.txt. What each exercise's table of the HTML report counts
must equal what the checks, called here in this process, say of each answer.

To keep the run short, the generated notebooks keep only the chapter's set-up,
import, exercise, check and Why? cells, and the hanging one meets a time limit
of 60 s (it runs beside the others).
"""

import collections
import copy
import html.parser
import json
import zipfile
from pathlib import Path

import exercise_answers as answers
import nbformat
import pytest
import test_wrong_variants as catalogue

from d2lmini.exercises import ch02, outcome
from d2lmini.i18n import current_language, set_language
from tools import class_report
from tools.editions import learner_notebook

REPO = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
CHAPTER = "02"
TIMEOUT = 60  # generous for a busy 2-core machine; the hanging submission costs this much
CHECKS = [ch02.check_masked_mean, ch02.check_padded_queries, ch02.check_local_causal_mask]
FUNCTIONS = {ch02.check_masked_mean: "masked_mean", ch02.check_padded_queries: "self_attention_weights",
             ch02.check_local_causal_mask: "local_causal_mask"}
RIGHT, STUB, UNRECOGNISED = "right", "stub", "unrecognised"


def _editions(language):
    path = REPO / "notebooks" / ("pt" if language == "pt_BR" else "") / "02_masked_softmax.ipynb"
    solution = nbformat.read(path, as_version=4)
    return solution, learner_notebook(copy.deepcopy(solution))


def _trimmed(nb):
    """The set-up cell, the imports' cell after it, and the exercise, check and Why? cells: quick to run."""
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    first = code[:2]  # the collapsed set-up cell, then the chapter's imports (and its device)
    assert "colab-setup" in first[0].metadata.get("tags", []) and "import d2lmini as d2l" in first[1].source

    def keep(cell):
        tags = set(cell.metadata.get("tags", []))
        return cell in first or bool(tags & {"exercise", "check"}) or "questions.ask" in cell.source

    trimmed = copy.deepcopy(nb)
    trimmed.cells = [cell for cell in nb.cells if cell.cell_type == "code" and keep(cell)]
    return trimmed


def _exercise_cell(nb, function):
    return next(cell for cell in nb.cells if "exercise" in cell.metadata.get("tags", [])
                and f"def {function}(" in cell.source)


def _from_catalogue(check, choice):
    """A cell defining the exercise's function as a wrong answer of the catalogue (or its unrecognised one)."""
    entry = f"CATALOGUE[ch02.{check.__name__}]"
    answer = f"{entry}.unrecognised" if choice == UNRECOGNISED else f"{entry}.variants[{choice!r}][0]"
    return (f"import sys\nsys.path.insert(0, {str(TESTS)!r})\nfrom d2lmini.exercises import ch02\n"
            f"from test_wrong_variants import CATALOGUE\n{FUNCTIONS[check]} = {answer}\n")


def _answer(check, choice):
    """The answer ``choice`` names, as this process calls it."""
    entry = catalogue.CATALOGUE[check]
    if choice == RIGHT:
        return answers.REFERENCE[check].answer
    if choice == UNRECOGNISED:
        return entry.unrecognised
    return entry.variants[choice][0]


def _notebook(choices, language="en"):
    """Chapter 02 with each exercise answered as ``choices`` says: right, stub, or a catalogue entry."""
    solution, learner = _editions(language)
    nb = copy.deepcopy(solution)
    for check, choice in zip(CHECKS, choices):
        cell = _exercise_cell(nb, FUNCTIONS[check])
        if choice == STUB:
            cell.source = _exercise_cell(learner, FUNCTIONS[check]).source
        elif choice != RIGHT:
            cell.source = _from_catalogue(check, choice)
    return _trimmed(nb)


def _why(nb, option):
    """Record ``option`` as picked in the notebook's saved widget state (as JupyterLab saves it)."""
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    radio = next(model for model in state.values() if model["model_name"] == "RadioButtonsModel")
    radio["state"]["index"] = option


def _expected_message(check, choice, language):
    if choice == RIGHT:
        return class_report.PASSED, ""
    if choice == STUB:
        return class_report.NOT_ATTEMPTED, ""
    before = current_language()
    set_language(language)
    try:
        found = outcome(check, _answer(check, choice))
    finally:
        set_language(before)
    assert found.status == class_report.MISTAKE, (check, choice, found)
    return found.status, str(found.message)


class Tables(html.parser.HTMLParser):
    """Each table of the page as rows of cell texts, with the table's and the row's data attributes."""

    def __init__(self):
        super().__init__()
        self.tables, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append((attrs, []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append((attrs, []))
        elif tag in ("td", "th") and self.tables:
            self.cell = []

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][1][-1][1].append("".join(self.cell))
            self.cell = None


def _tables(text):
    parser = Tables()
    parser.feed(text)
    return parser.tables


@pytest.fixture(scope="module")
def a_class(tmp_path_factory):
    """The generated class (nbgrader's submitted/ layout), what each answer should give, and the report's run."""
    root = tmp_path_factory.mktemp("course") / "submitted"
    options = [[RIGHT, STUB, UNRECOGNISED, *catalogue.CATALOGUE[check].variants] for check in CHECKS]
    expected = {check: collections.Counter() for check in CHECKS}
    why = collections.Counter()

    def submit(learner, nb, name="02_masked_softmax.ipynb"):
        folder = root / learner / "ch02"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / name)
        (folder / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
        return folder / name

    for index in range(26):
        choices = [choice[(index + 4 * column) % len(choice)] for column, choice in enumerate(options)]
        language = "pt_BR" if index == 25 else "en"
        nb = _notebook(choices, language)
        if index < 9:
            _why(nb, index % 4)
        why[index % 4 if index < 9 else "none"] += 1
        learner = f"learner{index:02d}"
        if index == 1:  # 5 GiB at once: within reach without a limit (never touched), past the report's 4096 MB
            nb.cells.append(nbformat.v4.new_code_cell("too_much = bytearray(5 * 2 ** 30)"))
        if index == 24:  # an Otter export: the notebook zipped with a log file
            with zipfile.ZipFile(root / f"{learner}.zip", "w") as archive:
                archive.writestr("02_masked_softmax.ipynb", nbformat.writes(nb))
                archive.writestr(".OTTER_LOG", b"\x00")
        else:
            submit(learner, nb)
        for check, choice in zip(CHECKS, choices):
            expected[check][_expected_message(check, choice, language)] += 1
    right = _notebook([RIGHT] * 3)
    hanging = copy.deepcopy(right)
    hanging.cells.append(nbformat.v4.new_code_cell("while True:\n    pass"))
    submit("hangs", hanging)
    crashing = copy.deepcopy(right)
    crashing.cells.append(nbformat.v4.new_code_cell("import os\nos._exit(3)"))
    submit("crashes", crashing)
    peeking = copy.deepcopy(right)
    peeking.cells.append(nbformat.v4.new_code_cell(
        f"print(open({str(root / 'learner00' / 'ch02' / '02_masked_softmax.ipynb')!r}).read())"))
    submit("peeks", peeking)
    renamed = copy.deepcopy(right)
    cell = _exercise_cell(renamed, "masked_mean")
    cell.source = cell.source.replace("def masked_mean(", "def mean_of_valid_steps(")
    submit("renames", renamed)
    for check in CHECKS:
        expected[check][(class_report.NOT_CHECKED, "")] += 2  # the hanging and the crashing ones
        ran_to_the_end = (class_report.MISSING, "") if check is ch02.check_masked_mean else (class_report.PASSED, "")
        expected[check][ran_to_the_end] += 1
        expected[check][(class_report.PASSED, "")] += 1  # the peeking one: its read is refused, its answers pass
    why["none"] += 4
    (root / "learner03" / "ch02" / "notes.txt").write_text("not a notebook")
    (root / "learner04" / "ch02" / "draft.ipynb").write_text("{ this is not JSON")
    submit("other-chapter", learner_notebook(nbformat.read(REPO / "notebooks" / "03_additive_attention.ipynb",
                                                          as_version=4)), "03_additive_attention.ipynb")
    chapter, ours, others = class_report.collect(root, timeout=TIMEOUT, jobs=2)
    return {"root": root, "expected": expected, "why": why, "chapter": chapter, "ours": ours, "others": others,
            "page": class_report.page(chapter, ours, others, language="en", timeout=TIMEOUT)}


def _outcome_rows(page):
    """{check name: Counter((status, message) -> count)} from the exercise tables of the page."""
    counted = {}
    for attrs, rows in _tables(page):
        if attrs.get("class") != "outcomes":
            continue
        table = collections.Counter()
        for row_attrs, cells in rows[1:]:
            status = row_attrs["data-status"]
            message = cells[1]
            if status == class_report.MISSING or status == class_report.NOT_CHECKED:
                message = ""  # the report's own words, checked apart
            table[(status, message)] += int(cells[2])
        counted[attrs["data-exercise"]] = table
    return counted


def test_the_class_is_the_chapter_of_most_notebooks_and_has_thirty_submissions(a_class):
    assert a_class["chapter"] == CHAPTER
    assert len(a_class["ours"]) == 30


def test_every_outcome_of_every_exercise_is_counted(a_class):
    counted = _outcome_rows(a_class["page"])
    assert set(counted) == {check.__name__ for check in CHECKS}
    for check in CHECKS:
        assert counted[check.__name__] == a_class["expected"][check], check.__name__
        assert sum(counted[check.__name__].values()) == 30


def test_the_catalogue_mistakes_appear_in_the_checks_own_words_and_languages(a_class):
    counted = _outcome_rows(a_class["page"])
    words = {message for status, message in counted["check_local_causal_mask"] if status == class_report.MISTAKE}
    assert "one key too many: query i sees `window` keys, itself included" in words
    assert "the diagonal is missing: query i may attend to itself" in words
    portuguese = [s for s in a_class["ours"] if s.learner == "learner25"][0]
    assert portuguese.language == "pt_BR"
    said = portuguese.results["check_padded_queries"]  # the answer no mistake matches: the check's generic hint
    english = _expected_message(ch02.check_padded_queries, UNRECOGNISED, "en")
    assert said["status"] == class_report.MISTAKE and said["message"] != english[1]
    assert said["message"] == _expected_message(ch02.check_padded_queries, UNRECOGNISED, "pt_BR")[1]
    assert "consulta" in said["message"]


def test_the_hanging_crashing_greedy_and_peeking_submissions_are_reported_and_the_report_goes_on(a_class):
    by_learner = {s.learner: s for s in a_class["ours"]}
    assert by_learner["hangs"].status == "timed out"
    assert by_learner["crashes"].status == "crashed"
    assert by_learner["peeks"].status == "checked"
    assert by_learner["peeks"].refused == [str((a_class["root"] / "learner00" / "ch02" /
                                                "02_masked_softmax.ipynb").resolve())]
    assert by_learner["peeks"].cell_errors == 1
    assert by_learner["renames"].results["check_masked_mean"]["status"] == class_report.MISSING
    assert by_learner["learner01"].memory_error and by_learner["learner01"].status == "checked"
    problems = {cells[0]: int(cells[1]) for attrs, rows in _tables(a_class["page"])
                if attrs.get("class") == "problems" for _, cells in rows[1:]}
    assert problems == {
        "stopped at the time limit (it hangs, or is too slow)": 1,
        "its process ended before the checks ran (a crash, or the memory limit)": 1,
        "tried to read files of the submissions or to start a process: refused": 1,
        "ran out of its memory limit in a cell": 1,
        "not a notebook": 2,
        "a notebook of chapter 03, not of chapter 02: not run": 1,
    }


def test_the_why_answers_saved_in_the_notebooks_are_counted(a_class):
    rows = next(rows for attrs, rows in _tables(a_class["page"]) if attrs.get("class") == "why")
    counted = {row_attrs["data-option"]: int(cells[1]) for row_attrs, cells in rows[1:]}
    assert counted == {"0": 3, "1": 2, "2": 2, "3": 2, "none": 21}
    assert a_class["why"] == collections.Counter({0: 3, 1: 2, 2: 2, 3: 2, "none": 21})
    assert "✓" in rows[4][1][0]  # option (d) is chapter 02's right one


def test_learners_appear_only_as_counts_unless_names_are_asked_for(a_class):
    assert "learner0" not in a_class["page"] and "peeks" not in a_class["page"]
    named = class_report.page(a_class["chapter"], a_class["ours"], a_class["others"], names=True, language="en")
    assert "learner07" in named and "peeks" in named and "notes.txt" in named


def test_the_page_needs_no_network_and_each_chart_has_a_text_alternative(a_class):
    page = a_class["page"]
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    assert "<link" not in page and "<script" not in page and "<img" not in page
    assert page.count('<svg role="img" aria-labelledby=') == 3
    assert page.count("<title id=") == 3 and page.count("<desc id=") == 3


def test_the_page_speaks_portuguese_when_asked(a_class):
    page = class_report.page(a_class["chapter"], a_class["ours"], a_class["others"], language="pt_BR")
    set_language("en")
    assert '<html lang="pt-BR">' in page and "Exercício 2.1" in page


def test_an_empty_folder_gives_a_page_that_says_so(tmp_path):
    page = class_report.report(tmp_path)
    assert "the folder holds no submission" in page


def test_the_command_line_refuses_bad_arguments_by_name(tmp_path, capsys):
    for argv, words in (([str(tmp_path / "absent")], "SUBMISSIONS must be a folder"),
                        ([str(tmp_path), "--chapter", "2"], "--chapter must be a chapter's two digits"),
                        ([str(tmp_path), "--timeout", "0"], "--timeout must be a whole number of at least 1"),
                        ([str(tmp_path), "--language", "fr"], "--language must be one of")):
        with pytest.raises(SystemExit):
            class_report.main(argv)
        assert words in capsys.readouterr().err
    class_report.main([str(tmp_path), "--out", str(tmp_path / "out" / "report.html")])
    assert "no submission" in (tmp_path / "out" / "report.html").read_text()


def test_a_submission_is_a_learner_by_its_nbgrader_folder_or_its_file_name():
    assert class_report.learner_of(Path("submitted/ana/ch02/02_masked_softmax.ipynb")) == "ana"
    assert class_report.learner_of(Path("course/autograded/ana/ch02/02_x.ipynb")) == "ana"
    assert class_report.learner_of(Path("ana/02_masked_softmax.ipynb")) == "ana"
    assert class_report.learner_of(Path("submitted/ana.zip")) == "ana"
    assert class_report.learner_of(Path("ana.ipynb")) == "ana"


def test_a_saved_why_answer_is_read_in_either_language():
    solution, _ = _editions("pt_BR")
    _why(solution, 3)
    assert class_report.why_answer(json.loads(nbformat.writes(solution)), CHAPTER) == 3
    _why(solution, None)
    assert class_report.why_answer(json.loads(nbformat.writes(solution)), CHAPTER) is None
