"""Lecture mode: one chapter served by Voilà, as prose and live explorers with the code hidden.

    python -m tools.present 04 --port 8866

``make present CHAPTER=04`` runs this; ``CHAPTER=pt/04`` serves the chapter's
translation (notebooks/pt/, in Portuguese: its setup cell sets d2lmini's
language). A chapter that is not two digits, with or without a translation's
folder, naming one notebook is refused with the list of chapters. It writes a lecture copy of the instructor notebook to
build/present/ and serves that copy with Voilà on 127.0.0.1, behind Jupyter's
token, like ``make lab``. Voilà runs the notebook in a fresh kernel and shows
the outputs and the markdown, never the code (``strip_sources``).

The lecture copy leaves the exercises out: the cells tagged ``exercise`` and
``check``, and the markdown from the ``## Exercises`` heading to the next
heading of the same level (``## Further reading``) or the end. With the code
hidden, a lecture would otherwise show prompts that ask for code no one can
see, followed by the checks' "passed" lines, which also give away what the
exercises ask a learner to predict. The instructor notebooks are read, never
written.

The Voilà command line is built by ``voila_command`` alone, which the browser
test (tests/browser/test_lecture_mode_in_browser.py) runs too.
"""

import argparse
import os
import re
import sys
from pathlib import Path

import nbformat

from tools.editions import TRANSLATIONS, tags

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
LECTURE_DIR = REPO / "build" / "present"
LEFT_OUT_TAGS = {"exercise", "check"}
# The exercises' heading in English and in each translation (tools/editions.TRANSLATIONS).
EXERCISES_HEADING = re.compile(r"^##\s+(Exercises|Exercícios)\s*$")
# A heading at level 1 or 2 ends the exercises section.
SECTION_HEADING = re.compile(r"^#{1,2}\s")


def lecture_notebook(nb):
    """A copy of ``nb`` without its exercises (see the module's docstring); ``nb`` is unchanged."""
    lecture = nbformat.from_dict(nb)  # a deep copy
    kept, in_exercises = [], False
    for cell in lecture.cells:
        if LEFT_OUT_TAGS & set(tags(cell)):
            continue
        if cell.cell_type != "markdown":
            if not in_exercises:
                kept.append(cell)
            continue
        lines = []
        for line in cell.source.splitlines():
            if EXERCISES_HEADING.match(line):
                in_exercises = True
            elif in_exercises and SECTION_HEADING.match(line):
                in_exercises = False
            if not in_exercises:
                lines.append(line)
        cell.source = "\n".join(lines).rstrip()
        if cell.source:
            kept.append(cell)
    lecture.cells = kept
    return lecture


def write_lecture(notebook, out=LECTURE_DIR):
    """Write the lecture copy of ``notebook`` into ``out``, under the same name; return its path."""
    notebook = Path(notebook)
    if notebook.suffix != ".ipynb" or not notebook.is_file():
        raise ValueError(f"notebook must be an existing .ipynb file, got {str(notebook)!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / notebook.name
    nbformat.write(lecture_notebook(nbformat.read(notebook, as_version=4)), path)
    return path


def voila_command(notebook, port):
    """The Voilà command line that serves ``notebook`` on 127.0.0.1:``port``.

    ``auto_token`` turns Jupyter's token on (Voilà's own default is none): the
    token comes from $JUPYTER_TOKEN when set, otherwise it is generated and
    printed in the URL, as ``make lab`` prints its own.
    """
    return [
        sys.executable, "-m", "voila", str(notebook),
        "--no-browser",
        "--Voila.ip=127.0.0.1",
        f"--Voila.port={port}",
        "--Voila.port_retries=0",  # a taken port fails instead of moving silently
        "--Voila.auto_token=True",
        "--VoilaConfiguration.strip_sources=True",
        # An error shows its traceback, so the instructor can see which cell failed.
        "--VoilaConfiguration.show_tracebacks=True",
    ]  # fmt: skip


def chapter_notebook(chapter):
    """The instructor notebook of ``chapter``: two digits such as "04", or a translation's folder and two
    digits, "pt/04"; ValueError for anything else."""
    folder, _, number = chapter.strip().rpartition("/")
    notebooks = NOTEBOOKS / folder if folder in TRANSLATIONS else NOTEBOOKS
    chapters = " ".join(sorted(path.name[:2] for path in notebooks.glob("[0-9][0-9]_*.ipynb")))
    shown = f"notebooks/{folder}/" if folder in TRANSLATIONS else "notebooks/"
    if not chapter.strip():
        raise ValueError("CHAPTER is missing: expected two digits naming a chapter, e.g. make present CHAPTER=04 "
                         f"(CHAPTER=pt/04 in Portuguese); chapters: {chapters}.")
    if folder and folder not in TRANSLATIONS:
        raise ValueError(f"CHAPTER's folder must be one of {sorted(TRANSLATIONS)} (a translation), e.g. CHAPTER=pt/04; "
                         f"got CHAPTER={chapter}; chapters: {chapters}.")
    if not re.fullmatch(r"[0-9]{2}", number):
        raise ValueError(f"CHAPTER must be two digits naming a chapter, e.g. CHAPTER=04; got CHAPTER={chapter}; "
                         f"chapters: {chapters}.")
    found = sorted(notebooks.glob(f"{number}_*.ipynb"))
    if len(found) != 1:
        names = " ".join(f"{shown}{path.name}" for path in found) or "none"
        raise ValueError(f"CHAPTER={chapter} must match one notebook {shown}{number}_*.ipynb, found {names}; "
                         f"chapters: {chapters}.")
    return found[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapter", help="two digits naming a chapter, e.g. 04; pt/04 for its Portuguese translation")
    parser.add_argument("--port", type=int, default=8866)
    parser.add_argument("--out", type=Path, default=LECTURE_DIR, help="where the lecture copy goes")
    args = parser.parse_args(argv)
    try:
        notebook = chapter_notebook(args.chapter)
        # A translation's lecture copy has a folder of its own, beside the English one of the same name.
        lecture = write_lecture(notebook, args.out / notebook.parent.relative_to(NOTEBOOKS))
    except ValueError as error:
        sys.exit(f"error: {error}")
    print(f"Lecture mode: {notebook.relative_to(REPO)} without its exercises, code hidden. Stop with Ctrl+C.",
          flush=True)
    command = voila_command(lecture, args.port)
    os.execv(command[0], command)  # Voilà takes this process's place, so Ctrl+C reaches it directly


if __name__ == "__main__":
    main()
