"""Lecture mode, `make present CHAPTER=NN`: the command line, the errors for a bad
CHAPTER (tools/present.py's), the lecture copy without exercises, and Voilà's command line.
The page itself is tested in a real browser (tests/browser/test_lecture_mode_in_browser.py)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tools import present
from tools.editions import tags

REPO = Path(__file__).resolve().parent.parent
MAKE_DONE = ["-o", ".venv/.installed", "-o", ".venv/.installed-test",
             "-o", ".venv/share/jupyter/lab/settings/overrides.json"]




def make_present(*arguments):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # Under `make test` the outer make's MAKEFLAGS and MAKELEVEL would reach this one: run a make of its own.
    env = {name: value for name, value in os.environ.items() if name not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return subprocess.run(["make", "--no-print-directory", "-n", *MAKE_DONE, "present", *arguments], cwd=REPO,
                          capture_output=True, text=True, env=env)


def existing_chapters():
    return " ".join(sorted(path.name[:2] for path in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")))


def test_make_present_serves_the_chapter_through_tools_present():
    result = make_present("CHAPTER=04")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ".venv/bin/python -m tools.present '04' --port 8866"


def test_make_present_takes_a_port_as_make_lab_does():
    result = make_present("CHAPTER=09", "PORT=9001")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("-m tools.present '09' --port 9001")


def test_a_chapter_names_its_instructor_notebook():
    assert present.chapter_notebook("04") == REPO / "notebooks" / "04_scaled_dot_product.ipynb"
    assert present.chapter_notebook("09").name == "09_pretrained_attention.ipynb"
    assert present.chapter_notebook("pt/04") == REPO / "notebooks" / "pt" / "04_scaled_dot_product.ipynb"


def test_a_portuguese_lecture_leaves_out_the_exercicios_and_keeps_the_language_setting(tmp_path):
    lecture = present.write_lecture(present.chapter_notebook("pt/04"), tmp_path / "pt")
    nb = nbformat.read(lecture, as_version=4)
    text = "\n".join(sources(nb))
    assert lecture == tmp_path / "pt" / "04_scaled_dot_product.ipynb"
    assert "## Exercícios" not in text and "### Exercício" not in text and "## Resumo" in text
    assert 'set_language("pt_BR")' in text  # the setup cell: the explorers speak Portuguese under Voilà


@pytest.mark.parametrize(
    "chapter, message",
    [
        ("", "CHAPTER is missing: expected two digits naming a chapter, e.g. make present CHAPTER=04"),
        (" ", "CHAPTER is missing"),
        ("4", "CHAPTER must be two digits naming a chapter, e.g. CHAPTER=04; got CHAPTER=4;"),
        ("004", "got CHAPTER=004;"),
        ("0a", "got CHAPTER=0a;"),
        ("04 05", "got CHAPTER=04 05;"),
        ("04_scaled", "got CHAPTER=04_scaled;"),
        ("98", "CHAPTER=98 must match one notebook notebooks/98_*.ipynb, found none;"),
        ("pt/98", "CHAPTER=pt/98 must match one notebook notebooks/pt/98_*.ipynb, found none;"),
        ("fr/04", "CHAPTER's folder must be one of ['pt'] (a translation), e.g. CHAPTER=pt/04; got CHAPTER=fr/04;"),
        ("pt/4", "got CHAPTER=pt/4;"),
    ],
)
def test_a_bad_chapter_is_refused_naming_what_it_got_and_the_chapters(chapter, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        present.main([chapter])
    said = str(stopped.value.code)
    assert said.startswith("error: ") and message in said
    assert f"chapters: {existing_chapters()}." in said


def test_make_present_refuses_a_bad_chapter_before_voila_starts():
    result = subprocess.run([sys.executable, "-m", "tools.present", "4x"], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.startswith("error: CHAPTER must be two digits naming a chapter, e.g. CHAPTER=04; "
                                    "got CHAPTER=4x;")


def chapter(cells):
    return nbformat.v4.new_notebook(cells=cells)


def md(source):
    return nbformat.v4.new_markdown_cell(source)


def code(source, *tags):
    cell = nbformat.v4.new_code_cell(source)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def sources(nb):
    return [cell.source for cell in nb.cells]


def test_the_lecture_leaves_out_exercise_prose_answers_and_checks_and_keeps_what_follows():
    nb = chapter([
        md("# Title"),
        code("x = 1"),
        md("## Summary\n\n* a point\n\n## Exercises\n\n### Exercise 1 · One (★)\n\nWrite `f`."),
        code("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION", "exercise"),
        code("ch.check_f(f)", "check"),
        md("### Exercise 2 · Two (★★)\n\nWrite `g`."),
        code("print('a helper the exercise uses')"),
        md("## Further reading\n\n* a paper"),
        code("y = 2", "nbval-ignore-output"),
    ])
    lecture = present.lecture_notebook(nb)
    assert sources(lecture) == ["# Title", "x = 1", "## Summary\n\n* a point", "## Further reading\n\n* a paper",
                                "y = 2"]
    assert len(nb.cells) == 9  # the instructor notebook is left as it was


def test_a_chapter_ending_with_its_exercises_ends_at_its_summary():
    nb = chapter([md("## Summary\n\n* a point"), md("## Exercises\n\n### Exercise 1\n\nWrite `f`."),
                  code("def f(): ...", "exercise"), code("check(f)", "check"), md("### Exercise 2")])
    assert sources(present.lecture_notebook(nb)) == ["## Summary\n\n* a point"]


def test_every_chapters_lecture_has_no_exercise_and_keeps_every_explorer():
    for path in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        lecture = present.lecture_notebook(nb)
        text = "\n".join(sources(lecture))
        assert "BEGIN SOLUTION" not in text and "### Exercise" not in text, path.name
        assert not any({"exercise", "check"} & set(tags(cell)) for cell in lecture.cells)
        explorers = [cell.source for cell in nb.cells if cell.cell_type == "code" and "= explore_" in cell.source]
        assert [s for s in explorers if s in text] == explorers, path.name
        assert ("## Further reading" in text) == any("## Further reading" in cell.source for cell in nb.cells)
        if path.name.startswith("04_"):
            assert explorers and "## Summary" in text


def test_write_lecture_writes_a_copy_and_refuses_what_is_not_a_notebook(tmp_path):
    source = REPO / "notebooks" / "04_scaled_dot_product.ipynb"
    before = source.read_bytes()
    written = present.write_lecture(source, tmp_path / "out")
    assert written == tmp_path / "out" / source.name
    assert nbformat.read(written, as_version=4).cells
    assert source.read_bytes() == before
    for wrong in (REPO / "notebooks" / "04_scaled_dot_product.py", tmp_path / "missing.ipynb"):
        with pytest.raises(ValueError, match=f"notebook must be an existing .ipynb file, got '{wrong}'"):
            present.write_lecture(wrong, tmp_path)


def test_voila_listens_on_localhost_only_with_a_token_and_hides_the_code():
    command = present.voila_command("build/present/04_x.ipynb", 8123)
    assert command[:4] == [sys.executable, "-m", "voila", "build/present/04_x.ipynb"]
    for option in ("--no-browser", "--Voila.ip=127.0.0.1", "--Voila.port=8123", "--Voila.port_retries=0",
                   "--Voila.auto_token=True", "--VoilaConfiguration.strip_sources=True"):
        assert option in command
