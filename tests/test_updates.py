"""d2lmini.updates: a learner's files that an nbgitpuller update renamed, named in one line each, or nothing.

Hand-made folders pin the rule (a renamed file, files that only look like
one, none at all); one case runs nbgitpuller's own pull, so that the rule
follows what nbgitpuller really does to every kind of name.
"""

import datetime

import pytest
from course_repo import commit, new_course, pull

from d2lmini.updates import RenamedFile, nbgitpuller_name, renamed_by_update, report_renamed_files

WHEN = datetime.datetime(2026, 11, 26, 14, 30, 5)


def make(folder, *names):
    for name in names:
        (folder / name).write_text(f"the text of {name}")
    return folder


def test_a_renamed_file_beside_the_courses_file_of_its_old_name_is_found_and_named_in_one_line(tmp_path, capsys):
    make(tmp_path, "00_start_here.ipynb", "10_extra.ipynb", "10_extra__20261126143005.ipynb")
    assert renamed_by_update(tmp_path) == [RenamedFile("10_extra.ipynb", "10_extra__20261126143005.ipynb", WHEN)]
    report_renamed_files(tmp_path)
    assert capsys.readouterr().out == (
        "Your file 10_extra.ipynb was kept as 10_extra__20261126143005.ipynb when the course added its own "
        "10_extra.ipynb (update of 2026-11-26 14:30). Move yours into my-work/ or rename it, and this line goes "
        "away.\n")


@pytest.mark.parametrize("original, kept_as", [
    ("notes.md", "notes__20261126143005.md"),
    ("data.tar.gz", "data.tar__20261126143005.gz"),  # the stamp goes before the last extension only
    ("Makefile", "Makefile__20261126143005"),
    (".env", ".env__20261126143005"),  # a leading dot is no extension
    ("a__b.py", "a__b__20261126143005.py"),
])
def test_the_name_is_nbgitpullers_for_every_kind_of_extension_and_is_found_back(tmp_path, original, kept_as):
    assert nbgitpuller_name(original, WHEN) == kept_as
    make(tmp_path, original, kept_as)
    assert renamed_by_update(tmp_path) == [RenamedFile(original, kept_as, WHEN)]


@pytest.mark.parametrize("names", [
    ["notes__20261126143005.md"],  # the learner's own name: no notes.md beside it
    ["plot.png", "plot__2026112614300.png"],  # 13 digits
    ["run.py", "run__20261399000000.py"],  # 14 digits that are no date (month 13)
    ["draft.ipynb", "draft_20261126143005.ipynb"],  # one underscore
    ["data.tar.gz", "data__20261126143005.tar.gz"],  # not where nbgitpuller puts the stamp
    ["10_extra.ipynb", "10_extra__20261126143005.ipynb.bak"],
], ids=["no original", "13 digits", "no date", "one underscore", "stamp before both extensions", "suffix after"])
def test_a_file_that_only_looks_renamed_is_not_named(tmp_path, names, capsys):
    make(tmp_path, *names)
    assert renamed_by_update(tmp_path) == []
    report_renamed_files(tmp_path)
    assert capsys.readouterr().out == ""


def test_a_folder_with_no_renamed_file_or_no_folder_at_all_prints_nothing(tmp_path, capsys):
    make(tmp_path, "00_start_here.ipynb", "02_masked_softmax.ipynb")
    (tmp_path / "my-work").mkdir()
    make(tmp_path / "my-work", "notes.md", "notes__20261126143005.md")  # a subfolder: not the chapter's folder
    report_renamed_files(tmp_path)
    report_renamed_files(tmp_path / "missing")
    assert capsys.readouterr().out == "" and renamed_by_update(tmp_path / "missing") == []


def test_what_nbgitpullers_own_pull_renamed_is_found_with_every_kind_of_name(tmp_path):
    course = new_course(tmp_path, {"00_start_here.txt": "chapter 00"})
    clone = tmp_path / "home" / "course"
    pull(course, clone)
    mine = ["10_new.ipynb", "data.tar.gz", "Makefile", ".env"]
    for name in mine:
        (clone / name).write_text(f"my {name}")
    commit(course, {name: f"the course's {name}" for name in mine})
    output = pull(course, clone)
    found = renamed_by_update(clone)
    assert sorted(renamed.original for renamed in found) == sorted(mine)
    for renamed in found:
        assert (clone / renamed.kept_as).read_text() == f"my {renamed.original}"
        assert f"Renamed {clone / renamed.original} to {clone / renamed.kept_as}" in output
