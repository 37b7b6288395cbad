"""Every chapter opens in Colab: its badge, and a setup cell that installs d2lmini there and nothing here.

The cells come from one template (tools/colab.py). The setup cell is run
here with ``subprocess`` replaced, in a folder of its own: as it runs on this
machine, where ``d2lmini`` is installed (it must do and print nothing, so
strict nbval compares an empty output), as it runs on Colab, where it is
missing (one quiet pip call, ``--no-deps``, the collection's own version, and
one line saying what happened), and on a hub after an update renamed one of
the learner's files (one line naming it).
"""

import hashlib
import importlib.util
import re
import sys
import types
from pathlib import Path

import nbformat
import pytest

import d2lmini
from tools import colab, editions

REPO = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py"))
TRANSLATED = sorted((REPO / "notebooks").glob("*/[0-9][0-9]_*.py"))
PRELOADED = ("torch", "numpy", "matplotlib", "ipywidgets", "seaborn")



def test_every_chapter_source_has_the_badge_and_setup_cell_of_the_template():
    assert colab.main(["--check", *map(str, CHAPTERS)]) == 0


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.stem)
def test_the_title_and_goals_come_first_then_the_badge_then_the_collapsed_setup_cell(path):
    cells = nbformat.read(path.with_suffix(".ipynb"), as_version=4).cells
    name = path.with_suffix(".ipynb").name
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith(f"# {name[:2]} · ")
    assert "**In this notebook you will**" in cells[0].source, "the goals are in the title cell"
    assert cells[1].cell_type == "markdown" and colab.colab_url(name) in cells[1].source
    assert colab.colab_url(name).endswith(f"/blob/learner/{name}")
    setup = cells[2]
    assert setup.cell_type == "code" and "colab-setup" in editions.tags(setup)
    assert setup.metadata.get("jupyter") == {"source_hidden": True}, "JupyterLab shows it collapsed"
    assert setup.metadata.get("cellView") == "form" and setup.source.startswith("# @title "), "so does Colab"
    assert not setup.outputs, "here d2lmini is installed: the setup cell shows nothing"
    assert next(cell for cell in cells if cell.cell_type == "code") is setup


def test_the_setup_cell_is_code_only_what_it_does_is_said_above_it():
    for chapter in ("00", "09"):
        lines = colab.setup_cell(chapter).splitlines()
        comments = [line for line in lines if line.lstrip().startswith("#")]
        assert comments == ['# @title Setup { display-mode: "form" }']
        statements = [line.strip() for line in lines if line and not line.startswith(("#", "import ", "from "))]
        assert [statement.split("(")[0] for statement in statements] == [
            "if importlib.util.find_spec", "subprocess.run", "print", "report_renamed_files"
        ], "one line each: the check, the install of every package, what it installed, the renamed files"
    assert "installs `d2lmini`" in colab.badge_cell("00_start_here.ipynb")
    assert "model" in colab.badge_cell("09_pretrained_attention.ipynb")
    assert "model" not in colab.badge_cell("04_scaled_dot_product.ipynb")


def test_the_tool_moves_old_first_cells_after_the_title_and_refuses_a_source_without_one(tmp_path):
    header = "# ---\n# jupyter:\n#   kernelspec:\n#     name: python3\n# ---\n\n"
    old = tmp_path / "04_x.py"
    old.write_text(header + "# %% [markdown]\n# [![Open](colab-badge.svg)](x)\n\n"
                   "# %% tags=[\"colab-setup\"]\nprint('old')\n\n# %% [markdown]\n# # 04 · X\n\n# %%\nx = 1\n")
    text = colab.updated(old)
    assert text.startswith(header + "# %% [markdown]\n# # 04 · X\n\n# %% [markdown]\n# [![Open In Colab]")
    assert text.endswith(colab.setup_cell("04") + "\n\n# %%\nx = 1\n") and "print('old')" not in text
    untitled = tmp_path / "05_y.py"
    untitled.write_text(header + "# %%\nx = 1\n")
    with pytest.raises(ValueError, match=r"05_y.py does not start with its title cell"):
        colab.updated(untitled)


def run_setup(chapter, installed):
    """Execute a chapter's setup cell with find_spec and subprocess replaced; return (pip calls, printed).

    ``printed`` is what the cell's own ``print`` said; d2lmini's notice of renamed files goes to stdout.
    """
    calls, printed = [], []
    fake_subprocess = types.SimpleNamespace(run=lambda command, check: calls.append((command, check)))
    real_find_spec = importlib.util.find_spec

    def find_spec(name, *args):
        return None if (name == "d2lmini" and not installed) else real_find_spec(name, *args)

    source = colab.setup_cell(chapter).replace("import subprocess\n", "")
    namespace = {"subprocess": fake_subprocess, "print": lambda *args: printed.append(" ".join(args))}
    original, importlib.util.find_spec = importlib.util.find_spec, find_spec
    try:
        exec(compile(source, f"setup cell of {chapter}", "exec"), namespace)
    finally:
        importlib.util.find_spec = original
    return calls, printed


@pytest.mark.parametrize("chapter", ["00", "04", "09"])
def test_where_d2lmini_is_installed_the_setup_cell_does_and_prints_nothing(chapter, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "00_start_here.ipynb").write_text("{}")
    assert run_setup(chapter, installed=True) == ([], [])
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("installed", [True, False], ids=["hub", "colab"])
def test_after_an_update_renamed_a_learners_file_the_setup_cell_names_it(installed, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("10_extra.ipynb", "10_extra__20261126143005.ipynb"):
        (tmp_path / name).write_text("{}")
    run_setup("02", installed)
    assert capsys.readouterr().out.startswith(
        "Your file 10_extra.ipynb was kept as 10_extra__20261126143005.ipynb when the course added its own "
        "10_extra.ipynb (update of 2026-11-26 14:30).")


@pytest.mark.parametrize("chapter", ["00", "04", "09"])
def test_on_colab_it_installs_this_version_of_d2lmini_and_leaves_the_preloaded_packages_alone(
        chapter, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    calls, printed = run_setup(chapter, installed=False)
    assert capsys.readouterr().out == ""  # Colab's folder holds no file an update renamed
    assert len(calls) == 1 and len(printed) == 1
    command, check = calls[0]
    assert check is True and command[:4] == [sys.executable, "-m", "pip", "install"]
    assert "--no-deps" in command and "--quiet" in command
    packages = [argument for argument in command[4:] if not argument.startswith("-")]
    assert packages[0] == f"d2lmini @ git+https://github.com/{colab.REPOSITORY}@v{d2lmini.__version__}"
    for name in PRELOADED:
        assert not any(re.match(rf"{name}\b", package) for package in packages), f"{name} must stay Colab's own"
    if chapter == "09":
        lines = (REPO / "requirements-model.txt").read_text().splitlines()
        pinned = [line.split()[0] for line in lines if line.strip() and not line.startswith("#")]
        assert packages[1:] == pinned == [colab.MODEL_REQUIREMENT]
        assert "the model wheel" in printed[0]
    else:
        assert packages[1:] == []
    assert printed[0].startswith(f"Installed d2lmini {d2lmini.__version__}")


def test_the_learner_edition_keeps_the_badge_and_the_setup_cell():
    path = REPO / "notebooks" / "02_masked_softmax.ipynb"
    learner = editions.learner_notebook(nbformat.read(path, as_version=4), path.name)
    assert colab.colab_url(path.name) in learner.cells[1].source
    assert learner.cells[2].source == colab.setup_cell("02")
    assert learner.cells[2].metadata["jupyter"] == {"source_hidden": True}


def test_the_tool_names_a_file_that_is_not_a_chapter_source(tmp_path, capsys):
    with pytest.raises(SystemExit):
        colab.main([str(tmp_path / "notes.py")])
    assert "is not a chapter source: expected notebooks/NN_name.py" in capsys.readouterr().err
    bad = tmp_path / "05_x.py"
    bad.write_text("print(1)\n")
    with pytest.raises(ValueError, match=r"05_x.py has no Jupytext header"):
        colab.main([str(bad)])


def test_every_translated_chapter_has_the_cells_in_its_language():
    assert TRANSLATED and colab.main(["--check", *map(str, TRANSLATED)]) == 0


def test_a_translated_setup_cell_speaks_its_language_and_sets_d2lminis():
    cell = colab.setup_cell("04", "pt")
    assert cell.startswith("# @title Configuração") and cell.endswith('set_language("pt_BR")')
    assert "instalado neste ambiente" in cell and "Installed" not in cell
    english = colab.setup_cell("04")
    assert "set_language" not in english and english.startswith("# @title Setup")
    # The same install, whatever the language: only the words and the language differ.
    assert re.findall(r"subprocess.run\(.*\)", cell) == re.findall(r"subprocess.run\(.*\)", english)


def test_a_translated_badge_opens_its_own_learner_edition_and_records_the_english_badge():
    path = REPO / "notebooks" / "pt" / "09_pretrained_attention.py"
    url = colab.colab_url("09_pretrained_attention.ipynb", "pt")
    assert url.endswith("/blob/learner/pt/09_pretrained_attention.ipynb")
    assert "pacote do modelo" in colab.badge_cell("09_pretrained_attention.ipynb", "pt")
    english = colab.badge_cell("09_pretrained_attention.ipynb")
    recorded = hashlib.sha256(english.encode()).hexdigest()[:12]
    assert f'# %% [markdown] en="{recorded}"' in colab.setup_cells(path)
