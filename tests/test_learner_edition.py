"""The learner edition (tools/editions.py learner): what `make lab` and Binder open.

Every chapter once, as a notebook whose exercises are stubs and whose other
cells keep their outputs; no answer in any file of the folder; a rebuild never
overwrites a notebook the learner changed. That every chapter of this edition
runs top to bottom, with only its check cells reporting that the exercise is
not attempted, is tested where Binder builds it: tests/test_binder.py.
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import jupytext
import nbformat
import pytest
from leak_search import CHAPTERS, FIXTURE, FIXTURES, leaks, read

from tools import editions, start

REPO = Path(__file__).resolve().parent.parent

EXERCISE_OR_CHECK = {"exercise", "check"}


def visible(folder):
    """What JupyterLab's file browser lists in folder: hidden names are not shown."""
    return sorted(path.name for path in folder.iterdir() if not path.name.startswith("."))


def build(sources, out, capsys):
    """Run the learner build from the command line, as make lab does; return what it printed."""
    editions.main(["learner", "--out", str(out), *map(str, sources)])
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """Instructor notebooks by file name: the fixture chapter, then every chapter."""
    folder = tmp_path_factory.mktemp("instructor")
    nb = editions.add_nbgrader_metadata(jupytext.read(FIXTURES / "exercise_chapter.py"), FIXTURE)
    nbformat.write(nb, folder / FIXTURE)
    return {FIXTURE: folder / FIXTURE, **{path.name: path for path in CHAPTERS}}


@pytest.fixture(scope="module")
def edition(sources, tmp_path_factory):
    out = tmp_path_factory.mktemp("repo") / "learner"
    assert editions.build_learner(sources.values(), out) == []
    return out


# ---------------------------------------------------------------- what the learner sees

def test_the_file_browser_shows_each_chapter_once(edition, sources):
    assert visible(edition) == sorted(sources)  # no .py twins, no README, no d2lmini copy


@pytest.mark.parametrize("name", [FIXTURE] + [path.name for path in CHAPTERS])
def test_a_learner_notebook_has_stubs_and_keeps_only_the_outputs_that_show_no_answer(edition, sources, name):
    original, learner = read(sources[name]), read(edition / name)
    student = editions.student_notebook(read(sources[name]), name)
    assert learner.metadata["jupytext"] == {"formats": "ipynb"}  # never paired, even under jupytext.toml
    assert len(learner.cells) == len(original.cells)
    for index, (before, after) in enumerate(zip(original.cells, learner.cells)):
        assert after.source == student.cells[index].source, f"cell {index}"
        assert "nbgrader" not in after.metadata
        if after.cell_type != "code":
            continue
        if EXERCISE_OR_CHECK & set(editions.tags(after)):
            assert after.outputs == [] and after.execution_count is None, f"cell {index}"
        else:
            for output in before.outputs:  # all but the dark page's pictures, which only the site shows
                output.get("metadata", {}).get("image/png", {}).pop("dark", None)
            assert after.outputs == before.outputs, f"cell {index}: the reader's figures must stay"
    assert "SOLUTION" not in json.dumps(learner)
    if name != FIXTURE:
        assert any(cell.get("outputs") for cell in learner.cells), "a chapter arrives with its figures"


def test_figures_keep_their_alt_text_and_leave_the_dark_page_picture_to_the_site(edition):
    """The picture for a dark page (d2lmini.plotting.DARK_FIGURES) is the web site's; a notebook never
    shows it, so the learner's copy goes without it and stays small."""
    figures = [output["metadata"]["image/png"] for path in CHAPTERS for cell in read(edition / path.name).cells
               for output in cell.get("outputs", []) if "image/png" in output.get("metadata", {})]
    assert figures and all(metadata.get("alt") for metadata in figures if "height" in metadata)
    assert not [metadata for metadata in figures if "dark" in metadata]
    stored = read(CHAPTERS[0])
    site = editions.learner_notebook(stored, CHAPTERS[0].name, dark_pictures=True)
    assert [output for cell in site.cells for output in cell.get("outputs", [])
            if "dark" in output.get("metadata", {}).get("image/png", {})]


def test_no_solution_text_is_in_any_file_of_the_learner_edition(edition, sources):
    assert leaks(edition, sources) == []


def test_the_learner_edition_is_never_paired_with_a_py_file_on_save(edition, tmp_path):
    """Binder serves the repository root, where jupytext.toml pairs every notebook with a .py."""
    from jupyter_server.services.contents.filemanager import FileContentsManager
    from jupytext.sync_contentsmanager import build_sync_jupytext_contents_manager_class

    shutil.copy(REPO / "jupytext.toml", tmp_path)
    shutil.copytree(edition, tmp_path / "learner")
    manager = build_sync_jupytext_contents_manager_class(FileContentsManager)(root_dir=str(tmp_path))
    path = f"learner/{CHAPTERS[0].name}"
    manager.save(manager.get(path), path)
    unpaired = read(tmp_path / path)
    unpaired.metadata.pop("jupytext")
    nbformat.write(unpaired, tmp_path / "learner" / "control.ipynb")
    manager.save(manager.get("learner/control.ipynb"), "learner/control.ipynb")
    assert sorted(p.name for p in (tmp_path / "learner").glob("*.py")) == ["control.py"]


# ---------------------------------------------------------------- a learner's work is never lost

@pytest.fixture
def collection(tmp_path):
    """Two small chapters (the fixture chapter twice) and a function that edits their sources."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    nb = editions.add_nbgrader_metadata(jupytext.read(FIXTURES / "exercise_chapter.py"), FIXTURE)
    paths = [folder / "01_one.ipynb", folder / "02_two.ipynb"]
    for path in paths:
        nbformat.write(nb, path)

    def change(text):
        for path in paths:
            changed = read(path)
            changed.cells[0].source += "\n\n" + text
            nbformat.write(changed, path)

    return paths, change


def edit(path, text="my own answer"):
    """Change a notebook as a learner would, in a way JupyterLab would save it; return its bytes."""
    nb = read(path)
    (index, cell), *_ = [(i, c) for i, c in enumerate(nb.cells) if "exercise" in editions.tags(c)]
    cell.source = cell.source.replace("raise NotImplementedError", f"# {text}\n    raise NotImplementedError")
    nbformat.write(nb, path)
    return path.read_bytes()


def test_a_rebuild_keeps_an_edited_notebook_names_it_and_updates_an_unedited_one(collection, tmp_path, capsys):
    paths, change = collection
    out = tmp_path / "learner"
    assert build(paths, out, capsys) == ""
    mine = edit(out / "01_one.ipynb")
    change("A paragraph added upstream.")

    message = build(paths, out, capsys)
    assert (out / "01_one.ipynb").read_bytes() == mine
    assert "A paragraph added upstream." in read(out / "02_two.ipynb").cells[0].source
    assert "A paragraph added upstream." in read(out / "updated" / "01_one.ipynb").cells[0].source
    assert message.splitlines() == [
        f"Kept your edited {out / '01_one.ipynb'}. The collection's newer version of it is "
        f"{out / 'updated' / '01_one.ipynb'}; to start over from that one, delete or rename yours and build "
        "again (make lab, or tools/start.py lab)."]
    assert visible(out) == ["01_one.ipynb", "02_two.ipynb", "updated"]

    assert build(paths, out, capsys) == message  # said again on every build, and nothing else changes
    assert (out / "01_one.ipynb").read_bytes() == mine

    (out / "01_one.ipynb").rename(out / "my_01_one.ipynb")  # the learner takes the new version
    assert build(paths, out, capsys) == ""
    assert (out / "01_one.ipynb").read_bytes() == (out / "02_two.ipynb").read_bytes()  # the new version
    assert visible(out) == ["01_one.ipynb", "02_two.ipynb", "my_01_one.ipynb"]  # updated/ is gone
    assert (out / "my_01_one.ipynb").read_bytes() == mine


def test_an_edited_notebook_is_kept_quietly_while_the_collection_has_nothing_new(collection, tmp_path, capsys):
    paths, _ = collection
    out = tmp_path / "learner"
    build(paths, out, capsys)
    mine = edit(out / "01_one.ipynb")
    assert build(paths, out, capsys) == ""
    assert (out / "01_one.ipynb").read_bytes() == mine
    assert visible(out) == ["01_one.ipynb", "02_two.ipynb"]


def test_an_edited_updated_copy_is_kept_too(collection, tmp_path, capsys):
    paths, change = collection
    out = tmp_path / "learner"
    build(paths, out, capsys)
    mine = edit(out / "01_one.ipynb")
    change("First change.")
    build(paths, out, capsys)
    also_mine = edit(out / "updated" / "01_one.ipynb", "working in the new version")
    change("Second change.")
    message = build(paths, out, capsys)
    assert (out / "01_one.ipynb").read_bytes() == mine
    assert (out / "updated" / "01_one.ipynb").read_bytes() == also_mine
    assert message.splitlines() == [
        f"Kept your edited {out / '01_one.ipynb'} and your edited {out / 'updated' / '01_one.ipynb'}. To get "
        f"the collection's newer version of this chapter, delete or rename {out / 'updated' / '01_one.ipynb'} "
        "and build again."]


def test_a_notebook_the_build_did_not_write_is_kept(collection, tmp_path, capsys):
    paths, _ = collection
    out = tmp_path / "learner"
    out.mkdir()
    shutil.copy(FIXTURES / "fixture_checks.py", out)
    (out / "01_one.ipynb").write_text("{}")  # no manifest: not this build's file
    message = build(paths, out, capsys)
    assert (out / "01_one.ipynb").read_text() == "{}"
    assert (out / "fixture_checks.py").is_file()
    assert f"Kept your edited {out / '01_one.ipynb'}." in message
    assert "02_two" not in message


def test_a_deleted_notebook_comes_back_fresh(collection, tmp_path, capsys):
    paths, _ = collection
    out = tmp_path / "learner"
    build(paths, out, capsys)
    fresh = (out / "02_two.ipynb").read_bytes()
    edit(out / "02_two.ipynb")
    (out / "02_two.ipynb").unlink()
    assert build(paths, out, capsys) == ""
    assert (out / "02_two.ipynb").read_bytes() == fresh


def test_a_chapter_that_leaves_the_collection_goes_unless_the_learner_changed_it(collection, tmp_path, capsys):
    paths, _ = collection
    out = tmp_path / "learner"
    build(paths, out, capsys)
    build(paths[:1], out, capsys)
    assert visible(out) == ["01_one.ipynb"]
    build(paths, out, capsys)
    mine = edit(out / "02_two.ipynb")
    build(paths[:1], out, capsys)
    assert visible(out) == ["01_one.ipynb", "02_two.ipynb"]
    assert (out / "02_two.ipynb").read_bytes() == mine


def test_the_learner_build_refuses_to_write_over_its_sources(collection):
    paths, _ = collection
    with pytest.raises(ValueError, match="holds the notebooks being read"):
        editions.build_learner(paths, paths[0].parent)


# ---------------------------------------------------------------- make, git, Binder

MAKE_DONE = ["-o", ".venv/.installed", "-o", ".venv/.installed-test"]


def make_dry_run(*targets):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # Under `make test` the outer make's MAKEFLAGS and MAKELEVEL would reach this one
    # (and add "Entering directory" lines): run it as a make of its own.
    env = {name: value for name, value in os.environ.items() if name not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    result = subprocess.run(["make", "--no-print-directory", "-n", *MAKE_DONE, *targets], cwd=REPO,
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_make_lab_builds_the_learner_edition_then_serves_it(monkeypatch):
    assert make_dry_run("lab").strip() == "python3 tools/start.py lab --port 8888"
    # That command, run for real from a fresh clone, is tests/test_start.py's; here, what it builds and serves.
    commands = []

    class Server:
        def __init__(self, command, cwd):
            commands.append(command)

        def wait(self):
            return 0

    monkeypatch.setattr(start, "install", lambda *args, **kwargs: None)
    monkeypatch.setattr(start, "run", commands.append)
    monkeypatch.setattr(start.subprocess, "Popen", Server)
    assert start.main(["lab"]) == 0
    build, build_pt, serve = commands
    assert build[1:5] == [str(REPO / "tools" / "editions.py"), "learner", "--out", "learner"]
    assert build[5:] == sorted(f"notebooks/{path.name}" for path in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    # The Portuguese chapters, in learner/pt beside the English.
    assert build_pt[1:5] == [str(REPO / "tools" / "editions.py"), "learner", "--out", "learner/pt"]
    assert build_pt[5:] == sorted(f"notebooks/pt/{path.name}"
                                  for path in (REPO / "notebooks" / "pt").glob("[0-9][0-9]_*.ipynb"))
    assert len(build_pt) - 5 == len(build) - 5 == 10
    assert serve[1:6] == ["-m", "jupyter", "lab", "--ServerApp.ip=127.0.0.1", "--ServerApp.port=8888"]
    assert "--ServerApp.root_dir=learner" in serve


def test_the_instructor_notebooks_and_their_answers_take_a_command_of_their_own():
    assert make_dry_run("lab-instructor").strip().endswith("--ServerApp.root_dir=notebooks")
    assert "build/solutions" in make_dry_run("solutions")


@pytest.mark.parametrize("edition", ["student", "solutions"])
def test_the_portuguese_chapters_get_their_own_folder_in_each_edition(edition):
    # The translations have the English file names: one folder would hold only the last written.
    english, portuguese = [line for line in make_dry_run(edition).splitlines() if "tools.editions" in line]
    assert f"--out build/{edition} notebooks/00_start_here.ipynb" in english and "notebooks/pt/" not in english
    assert f"--out build/{edition}/pt notebooks/pt/00_start_here.ipynb" in portuguese


def test_make_clean_never_deletes_the_learner_edition():
    assert "learner" not in make_dry_run("clean")


def test_git_ignores_the_learner_edition_so_a_pull_never_touches_it():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    ignored = subprocess.run(["git", "check-ignore", "-q", "learner/01_attention_pooling.ipynb"], cwd=REPO)
    assert ignored.returncode == 0


def test_postbuild_builds_the_learner_edition_into_learner():
    lines = (REPO / "binder" / "postBuild").read_text().splitlines()
    assert 'python tools/editions.py learner --out "${LEARNER_DIR:-learner}" notebooks/*.ipynb' in lines


def test_every_binder_link_of_this_repository_opens_the_learner_edition():
    # From the main branch, postBuild builds the edition into learner/; the published `learner`
    # branch (make learner-repo, the web site's buttons) holds it at its top level.
    link = re.compile(r"https://mybinder\.org/v2/gh/attention-notebooks/attention-notebooks/([^?\s]+)\?urlpath=([^)\s`|]+)")
    found = [(path.name, branch, url) for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
             for branch, url in link.findall(path.read_text())]
    opens = {"HEAD": "lab/tree/learner/", "learner": "lab/tree/"}
    assert {branch for _, branch, _ in found} == set(opens), found
    for name, branch, url in found:
        chapter = url.removeprefix(opens[branch])
        assert url.startswith(opens[branch]) and re.fullmatch(r"(\d\d_\w+|<chapter>)\.ipynb", chapter), (name, url)


def test_run_all_goes_on_past_an_exercise_not_done_yet(sources):
    # JupyterLab's Run All stops at the first cell that raises, unless it is tagged raises-exception.
    learner = editions.learner_notebook(read(sources[CHAPTERS[2].name]), CHAPTERS[2].name)
    checks = [cell for cell in learner.cells if "check" in editions.tags(cell)]
    assert checks and all("raises-exception" in editions.tags(cell) for cell in checks)
    others = [cell for cell in learner.cells if "check" not in editions.tags(cell)]
    assert not any("raises-exception" in editions.tags(cell) for cell in others)
