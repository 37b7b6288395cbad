"""The translation guard itself (tools/translations.py, tools/pairs.py), on small chapters made in tmp_path.

Each kind of drift (an English Markdown cell changed, a format spec changed in English code, the English
of a cell with data of its own changed, one side of a Jupytext pair edited) is made on a copy that was in
step: the guard must fail with a message naming the file, the cell as a reader finds it, the change and
the command to run; running that command, as printed, must make it pass. The real chapters are never
edited here.
"""

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
from jupytext.cli import jupytext as jupytext_cli

from tools import pairs, translations
from tools.translations import OWN_DATA, english_hash

REPO = Path(__file__).resolve().parent.parent
HEADER = {"jupytext": {"cell_metadata_filter": "tags,jupyter,cellView,en,-all",
                       "notebook_metadata_filter": "-jupytext.text_representation.jupytext_version"},
          "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}}
ENGLISH = [
    ("markdown", "# Attention\n\nQueries meet keys.\nEach key has a value."),
    ("code", 'weights = [0.25, 0.75]\nprint(f"total weight: {sum(weights):>12.2f}")  # sums to 1'),
    ("markdown", "## Kernels\n\nA kernel turns a distance into a weight."),
    ("code", 'names = {"gaussian": "Gaussian"}\nprint(names["gaussian"], "kernel")'),
]
PORTUGUESE = [
    "# Atenção\n\nConsultas encontram chaves.\nCada chave tem um valor.",
    'weights = [0.25, 0.75]\nprint(f"peso total: {sum(weights):>12.2f}")  # soma 1',
    "## Kernels\n\nUm kernel transforma uma distância em um peso.",
    f'{OWN_DATA} o nome do kernel como o leitor o lê\n'
    'names = {"gaussian": "gaussiano"}\nprint("kernel", names["gaussian"])',
]
NAME = "01_attention.py"


def notebook(cells):
    made = nbformat.v4.new_notebook(metadata=HEADER)
    made.cells = [nbformat.v4.new_markdown_cell(text, metadata=metadata) if kind == "markdown"
                  else nbformat.v4.new_code_cell(text, metadata=metadata) for kind, text, metadata in cells]
    return made


def git(*arguments, cwd):
    subprocess.run(["git", "-c", "user.name=guard test", "-c", "user.email=guard@example.org", *arguments],
                   cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def chapters(tmp_path, monkeypatch):
    """notebooks/01_attention.py and its translation notebooks/pt/01_attention.py, each with its .ipynb,
    in step and committed to a new git repository; the working directory is its root."""
    english = notebook([(kind, text, {}) for kind, text in ENGLISH])
    translated = notebook([(kind, text, {"en": english_hash(source)} if kind == "markdown" or
                            text.startswith(OWN_DATA) else {})
                           for (kind, source), text in zip(ENGLISH, PORTUGUESE)])
    (tmp_path / "notebooks" / "pt").mkdir(parents=True)
    for path, made in ((tmp_path / "notebooks" / NAME, english), (tmp_path / "notebooks" / "pt" / NAME, translated)):
        jupytext.write(made, path, fmt="py:percent")
        jupytext.write(made, path.with_suffix(".ipynb"))
    git("init", "-q", cwd=tmp_path)
    git("add", ".", cwd=tmp_path)
    git("commit", "-q", "-m", "in step", cwd=tmp_path)
    monkeypatch.chdir(tmp_path)
    return Path("notebooks") / NAME, Path("notebooks") / "pt" / NAME


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def run_printed(message):
    """Run the last command line of ``message`` as the translator would, in this process; return its output."""
    line = message.strip().splitlines()[-1].split()
    assert line[:3] == [".venv/bin/python", "-m", "tools.translations"], message
    assert translations.main(line[3:]) == 0


def test_chapters_made_in_step_pass(chapters):
    english, translated = chapters
    assert translations.drift(translated) is None
    assert pairs.pair_problems(english) is None and pairs.pair_problems(translated) is None


def test_a_changed_english_sentence_names_the_cell_shows_the_sentence_and_records_once_translated(chapters, capsys):
    english, translated = chapters
    edit(english, "# Each key has a value.", "# Each key has a value, and the values are pooled.")
    message = translations.drift(translated)
    assert message == "\n".join([
        "notebooks/pt/01_attention.py: 1 cell was translated from a text of notebooks/01_attention.py that "
        "has since changed.",
        '  cell 1 (Markdown), in section "Atenção", beginning "# Atenção":',
        "  the English changed ('-' the text it was made from, '+' now):",
        "    - Each key has a value.",
        "    + Each key has a value, and the values are pooled.",
        "",
        "Translate each one again to say what the English now says (a cell whose change needs no new words is "
        "done as it is), then record those you have done:",
        "  .venv/bin/python -m tools.translations record notebooks/pt/01_attention.py 1",
    ])
    edit(translated, "# Cada chave tem um valor.", "# Cada chave tem um valor, e os valores são combinados.")
    run_printed(message)
    assert "cell 1: recorded" in capsys.readouterr().out
    assert translations.drift(translated) is None


def test_without_the_history_the_message_shows_the_english_now_there(chapters):
    english, translated = chapters
    edit(english, "# A kernel turns", "# A kernel function turns")
    (Path(".git") / "HEAD").rename(Path(".git") / "HEAD.away")  # no longer a git repository
    message = translations.drift(translated)
    assert "no committed version of notebooks/01_attention.py has a cell recorded" in message
    assert "    + A kernel function turns a distance into a weight." in message
    assert message.endswith("record notebooks/pt/01_attention.py 3")


def test_a_changed_format_spec_is_named_in_words_with_both_lines(chapters):
    english, translated = chapters
    edit(english, ":>12.2f}", ":>12.4f}")
    message = translations.drift(translated)
    assert message == "\n".join([
        "notebooks/pt/01_attention.py: 1 code cell differs from notebooks/01_attention.py's code beyond "
        "comments and strings.",
        '  cell 2 (code), in section "Atenção", beginning "weights = [0.25, 0.75]":',
        "      the format spec '>12.2f' where the English has '>12.4f'",
        '      the English, line 2: print(f"total weight: {sum(weights):>12.4f}")  # sums to 1',
        '      here, line 2: print(f"peso total: {sum(weights):>12.2f}")  # soma 1',
        "",
        "Make each one the English code again (only comments and the words of strings may differ). Where its "
        f"data must differ, begin it with '{OWN_DATA} <why>' and record it:",
        "  .venv/bin/python -m tools.translations record notebooks/pt/01_attention.py <cell number>",
    ])
    edit(translated, ":>12.2f}", ":>12.4f}")  # the English code again
    assert translations.drift(translated) is None


def test_code_that_must_differ_says_why_and_is_recorded_by_the_printed_command(chapters):
    english, translated = chapters
    edit(english, ":>12.2f}", ":>12.4f}")
    message = translations.drift(translated)
    edit(translated, "weights = [0.25, 0.75]\n", f"{OWN_DATA} duas casas, como no texto\nweights = [0.25, 0.75]\n")
    assert "cell 2 (code)" in translations.drift(translated)  # marked, but not recorded yet
    line = message.splitlines()[-1].replace("<cell number>", "2")
    assert translations.main(line.split()[3:]) == 0
    assert translations.drift(translated) is None


def test_a_columns_width_follows_the_words_but_the_rest_of_the_spec_is_code():
    def differs(english, translated):
        return translations.code_difference(*(nbformat.v4.new_code_cell(text) for text in (english, translated)))
    assert differs('print(f"{x:>9.2f} keys")', 'print(f"{x:>11.2f} chaves")') is None
    assert differs('print(f"{x:,} keys")', 'print(f"chaves: {x:,}")') is None  # the text may move
    assert differs('print(f"{x:>9.2f}")', 'print(f"{x:>9.3f}")').startswith("the format spec '>9.3f'")
    assert differs('print(f"{x:>9}")', 'print(f"{x:<9}")').startswith("the format spec '<9'")
    assert differs('print(f"{x:9}")', 'print(f"{x}")').startswith("`")  # a width dropped: no spec at all
    assert differs('print(f"{x!r}")', 'print(f"{x}")') == (
        "the conversion none where the English has !r\n"
        "      the English, line 1: print(f\"{x!r}\")\n      here, line 1: print(f\"{x}\")")
    assert differs('print(f"{x:{w}.2f}")', 'print(f"{x:{v}.2f}")').startswith("the name 'v' where the English has 'w'")
    assert differs('print(f"{a} and {b}")', 'print(f"{b} e {a}")').startswith("the name 'b'")


def test_code_may_differ_in_comments_and_strings_only():
    def differs(english, translated, english_tags=(), tags=()):
        cells = [nbformat.v4.new_code_cell(text, metadata={"tags": list(t)} if t else {})
                 for text, t in ((english, english_tags), (translated, tags))]
        return translations.code_difference(*cells)
    assert differs('plot(x, label="keys")  # the keys', 'plot(x, label="chaves")  # as chaves') is None
    assert differs('plot(x, label="keys")', 'plot(x, labels="chaves")').startswith(
        "the argument name 'labels' where the English has 'label'\n      the English, line 1: plot(x, label=")
    assert differs("n = 3", "n = 4").startswith("the value 4 where the English has 3")
    assert differs("y = f(x)", "y = f(x)", ["check"], []) == "its tags are [], the English's ['check']"
    assert differs("y = f(x)", "y = f(x)\nz = 1").startswith("`z = 1` is here and not in the English")
    assert differs("%time y = f(x)", "%timeit y = f(x)") == (
        "its magic lines are ['%timeit y = f(x)'], the English's ['%time y = f(x)']")


def test_an_english_change_to_a_cell_with_data_of_its_own_fails_until_recorded(chapters, capsys):
    english, translated = chapters
    edit(english, 'print(names["gaussian"], "kernel")', 'print(names["gaussian"], "kernel", sep=": ")')
    message = translations.drift(translated)
    assert '  cell 4 (code), in section "Kernels", beginning "# Dados em português: o nome do kernel como' in message
    assert ("    - print(names[\"gaussian\"], \"kernel\")\n"
            "    + print(names[\"gaussian\"], \"kernel\", sep=\": \")") in message
    assert message.endswith("record notebooks/pt/01_attention.py 4")
    edit(translated, 'print("kernel", names["gaussian"])', 'print("kernel", names["gaussian"], sep=": ")')
    run_printed(message)
    assert translations.drift(translated) is None
    assert pairs.pair_problems(translated) is not None  # its .ipynb waits for make notebooks, as record says
    assert "Then bring its .ipynb in step: make notebooks" in capsys.readouterr().out


def test_a_cell_with_data_of_its_own_keeps_the_english_tags(chapters):
    english, translated = chapters
    edit(translated, "# %% en=", '# %% tags=["check"] en=')
    message = translations.drift(translated)
    assert "      its tags are ['check'], the English's []" in message


def test_record_writes_the_cells_named_and_no_other(chapters):
    english, translated = chapters
    edit(english, "# Queries meet keys.", "# Queries meet the keys.")
    edit(english, "# A kernel turns", "# A kernel function turns")
    message = translations.drift(translated)
    assert message.endswith("record notebooks/pt/01_attention.py 1 3")
    assert translations.record(translated, [3]) == ["cell 3: recorded as following the English now there "
                                                    f"({english_hash(jupytext.read(english).cells[2].source)})"]
    message = translations.drift(translated)
    assert message.endswith("record notebooks/pt/01_attention.py 1") and "cell 3 " not in message
    before = translated.read_text()
    assert translations.record(translated, [3]) == ["cell 3: already follows the English; unchanged"]
    assert translated.read_text() == before


@pytest.mark.parametrize("cell, expected", [
    (2, "cell 2: expected a Markdown cell, or a code cell whose first line is '# Dados em português:', got a "
        "code cell that must equal the English code, which has no record"),
    (5, "cell: expected a number from 1 to 4 (the cells of notebooks/pt/01_attention.py), got 5"),
    (0, "cell: expected a number from 1 to 4 (the cells of notebooks/pt/01_attention.py), got 0"),
])
def test_record_refuses_a_cell_it_cannot_record_and_writes_nothing(chapters, cell, expected):
    english, translated = chapters
    before = translated.read_text()
    with pytest.raises(ValueError) as raised:
        translations.record(translated, [1, cell])
    assert str(raised.value).startswith(expected)
    assert translated.read_text() == before


def test_record_refuses_a_chapter_that_is_not_a_translation(chapters, capsys):
    english, _ = chapters
    with pytest.raises(SystemExit):
        translations.main(["record", str(english.with_suffix(".txt")), "1"])
    assert ("chapter: expected a translated chapter's .py beside an English one (notebooks/<language>/NN_name.py), "
            "got 'notebooks/01_attention.txt'") in capsys.readouterr().err


def test_a_cell_added_to_the_english_is_placed(chapters):
    english, translated = chapters
    edit(english, "# %% [markdown]\n# ## Kernels",
         "# %% [markdown]\n# A new paragraph.\n\n# %% [markdown]\n# ## Kernels")
    message = translations.drift(translated)
    assert message.startswith("notebooks/pt/01_attention.py: its cells no longer line up with "
                              "notebooks/01_attention.py's, cell for cell.\n"
                              "  the English's cell 3 (Markdown), in section \"Attention\", beginning "
                              "\"A new paragraph.\" has no translation: add one before cell 3 (Markdown), in section "
                              "\"Kernels\", beginning \"## Kernels\" of notebooks/pt/01_attention.py")
    with pytest.raises(ValueError, match="its cells do not line up with the English's"):
        translations.record(translated, [3])


@pytest.mark.parametrize("side", ["ipynb", "py"])
def test_an_edit_to_one_side_of_a_pair_names_the_cell_and_the_command_brings_them_in_step(chapters, side):
    _, translated = chapters
    if side == "ipynb":  # an edit saved by a notebook editor that does not pair, say
        stored = nbformat.read(translated.with_suffix(".ipynb"), as_version=4)
        stored.cells[2].source = stored.cells[2].source.replace("uma distância", "a distância")
        nbformat.write(stored, translated.with_suffix(".ipynb"))
    else:
        edit(translated, "uma distância", "a distância")
    message = pairs.pair_problems(translated)
    assert message.startswith(
        "notebooks/pt/01_attention.py and notebooks/pt/01_attention.ipynb differ: the pair was edited on one side "
        "only.\n"
        'cell 3 (Markdown), in section "Kernels", beginning "## Kernels": its text differs '
        "('-' notebooks/pt/01_attention.py, '+' notebooks/pt/01_attention.ipynb):\n")
    assert ("    - Um kernel transforma uma distância em um peso.\n"
            "    + Um kernel transforma a distância em um peso.") in message if side == "ipynb" else (
            "    - Um kernel transforma a distância em um peso.\n"
            "    + Um kernel transforma uma distância em um peso.") in message
    commands = [line.strip() for line in message.splitlines() if line.startswith("  .venv/bin/jupytext")]
    assert commands == ["  .venv/bin/jupytext --update --to ipynb notebooks/pt/01_attention.py".strip(),
                        "  .venv/bin/jupytext --to py:percent notebooks/pt/01_attention.ipynb".strip()]
    keep = commands[1] if side == "ipynb" else commands[0]
    assert jupytext_cli(["--quiet", *shlex.split(keep)[1:]]) == 0
    assert pairs.pair_problems(translated) is None
    assert "a distância" in translated.read_text()


def test_a_pair_whose_cells_agree_but_header_differs_says_so(chapters):
    _, translated = chapters
    stored = nbformat.read(translated.with_suffix(".ipynb"), as_version=4)
    stored.metadata["kernelspec"]["display_name"] = "Python 3.11"
    nbformat.write(stored, translated.with_suffix(".ipynb"))
    message = pairs.pair_problems(translated)
    assert "every cell agrees, but the header (the notebook's metadata) or the spacing differs" in message
    assert "    - #     display_name: Python 3 (ipykernel)\n    + #     display_name: Python 3.11" in message


def test_pytest_prints_the_whole_message_with_no_traceback(chapters, tmp_path):
    """The chapter's test, run by pytest on a drifted copy: the failure shows every line of the message."""
    english, translated = chapters
    edit(english, "# Each key has a value.", "# Each key has a value, and the values are pooled.")
    edit(english, ":>12.2f}", ":>12.4f}")
    (tmp_path / "test_copy.py").write_text(
        "from pathlib import Path\n"
        "from tests.test_translations import test_the_chapter_follows_the_english_now_there as follows\n\n"
        f"def test_copy():\n    follows(Path({str(translated)!r}))\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:nbval", "-q", "-rA",
                          "test_copy.py"], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "80"})
    assert run.returncode == 1, run.stdout + run.stderr
    for line in translations.drift(translated).splitlines():
        assert line in run.stdout, (line, run.stdout)
    assert "Traceback" not in run.stdout and "def test_copy" not in run.stdout


def test_a_cell_added_beside_a_changed_one_is_the_one_placed(chapters):
    english, translated = chapters
    edit(english, "# Queries meet keys.", "# Queries meet the keys.")
    edit(english, "# %% [markdown]\n# # Attention",
         "# %% [markdown]\n# A first word.\n\n# %% [markdown]\n# # Attention")
    problems = translations.misaligned(jupytext.read(english), jupytext.read(translated), "en", "pt",
                                       translations.english_history(english))
    assert len(problems) == 1 and problems[0].startswith("the English's cell 1 (Markdown), before the first heading, "
                                                         'beginning "A first word." has no translation: add one '
                                                         "before cell 1 (Markdown)")


def test_a_cell_removed_beside_a_changed_one_is_the_one_named():
    english = notebook([("markdown", "# Attention\n\nQueries meet the keys, all of them.", {}),
                        ("code", "x = 1", {})])
    translated = notebook([("markdown", "Uma palavra que saiu.", {"en": english_hash("A word that went.")}),
                           ("markdown", "# Atenção\n\nConsultas encontram chaves.",
                            {"en": english_hash("# Attention\n\nQueries meet keys.")}),
                           ("code", "x = 1", {})])
    history = {english_hash("A word that went."): "A word that went.",
               english_hash("# Attention\n\nQueries meet keys."): "# Attention\n\nQueries meet keys."}
    assert translations.misaligned(english, translated, "en", "pt", history.get) == [
        'cell 1 (Markdown), before the first heading, beginning "Uma palavra que saiu." of pt has no English cell '
        "in en any more: remove it"]
    assert translations.misaligned(english, translated, "en", "pt") == [  # no history: by kind, in order
        'cell 2 (Markdown), in section "Atenção", beginning "# Atenção" of pt has no English cell in en any more: '
        "remove it"]


# ---- the test extra installs what the translation tests import

LOCAL = {"tools", "tests", "d2lmini", "support", "minilm_support"}  # the repository's own, not installed


def imported_modules(node):
    """The module names an import statement at a file's top level brings in (``from tools import pairs``
    brings ``tools.pairs``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return []


def imported_distributions(path, providers, seen):
    """The distributions whose modules ``path`` imports at its top level, following the repository's own
    tools and tests (d2lmini is the project itself: its needs are its dependencies)."""
    if path in seen:
        return set()
    seen.add(path)
    found = set()
    for node in ast.parse(path.read_text()).body:
        for name in imported_modules(node):
            top = name.split(".")[0]
            local = REPO / (name.replace(".", "/") + ".py")
            if top in ("tools", "tests") and local.exists():
                found |= imported_distributions(local, providers, seen)
            elif top not in LOCAL and top not in sys.stdlib_module_names and top in providers:
                found |= {canonical(dist) for dist in providers[top]}
            elif top not in LOCAL and top not in sys.stdlib_module_names:
                found.add(f"{top} (no installed distribution provides it)")
    return found


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_test_extra_installs_what_the_translation_tests_import():
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11 reads pyproject.toml itself")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {canonical(re.split(r"[<>=!~;\[ ]", requirement)[0])
                for requirement in project["dependencies"] + project["optional-dependencies"]["test"]}
    import importlib.metadata
    providers, seen, needed = importlib.metadata.packages_distributions(), set(), set()
    for test in ("test_translations.py", "test_translation_guard.py", "test_notebook_pairs.py"):
        needed |= imported_distributions(REPO / "tests" / test, providers, seen)
    assert {"jupytext", "nbformat", "babel", "pytest"} <= needed  # the walk finds them
    assert needed - declared == set()


def test_a_record_is_written_where_the_ipynb_keeps_it_so_the_pair_can_agree(chapters):
    english, translated = chapters
    edit(english, "# %%\nnames =", '# %% tags=["nbval-ignore-output"]\nnames =')
    edit(translated, '# %% en="', '# %% tags=["nbval-ignore-output"] en="')
    translations.record(translated, [4])  # unchanged record, but its keys sorted as an .ipynb has them
    assert '# %% en="' + english_hash(ENGLISH[3][1]) + '" tags=["nbval-ignore-output"]\n' in translated.read_text()
    assert jupytext_cli(["--quiet", "--update", "--to", "ipynb", str(translated)]) == 0
    assert pairs.pair_problems(translated) is None


def test_a_number_written_with_the_languages_marks_is_the_english_number_formatted_alike():
    def differs(english, translated):
        return translations.code_difference(*(nbformat.v4.new_code_cell(text) for text in (english, translated)))
    assert differs('print(f"{x:.2f} keys")', 'print(f"{d2l.number(x, \'.2f\')} chaves")') is None
    assert differs('print(f"{x:>9.2f}")', 'print(f"{number(x, \'.2f\'):>11}")') is None  # the width follows
    assert differs('print(f"σ = {s}")', 'print(f"σ = {d2l.number(s)}")') is None
    assert differs('print("out:", y.numpy().round(3))', 'print("saídas:", d2l.number(y.numpy().round(3)))') is None
    assert differs('t = format(x, ",")', 't = d2l.number(x, ",")') is None
    assert differs('print(f"{x:>8.{n}f}")', 'print(f"{d2l.number(x, f\'.{n}f\'):>8}")') is None  # a spec's field
    assert differs('print(f"{x:>8.{n}f}")', 'print(f"{d2l.number(x, f\'.{m}f\'):>8}")').startswith("the name 'm'")
    # The spec is still code: another precision, or the number of another value, is named.
    assert differs('print(f"{x:.2f}")', 'print(f"{d2l.number(x, \'.3f\')}")').startswith(
        "the format spec '.3f' where the English has '.2f'")
    assert differs('print(f"{x:.2f}")', 'print(f"{d2l.number(y, \'.2f\')}")').startswith(
        "the name 'y' where the English has 'x'")
    assert differs('print(f"{x}")', 'print(f"{d2l.numbers(x)}")').startswith("`")
