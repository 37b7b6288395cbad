"""Files of the learner's that a course update kept under a new name, named where the learner looks.

On a course hub, following the class's nbgitpuller link again brings the
course's update. If the update adds a file whose name the learner already
used for a file of their own, nbgitpuller (``rename_local_untracked`` in its
``pull.py``) first renames the learner's file: the time of the pull goes
before the extension, ``'__%Y%m%d%H%M%S'``, so ``10_extra.ipynb`` becomes
``10_extra__20261126143005.ipynb``. It says so only in its sync log, a folded
panel that the link's page leaves as soon as the pull is done.

Every chapter's first code cell (tools/colab.py) calls
``report_renamed_files()``: one line for each such file in the chapter's
folder, and nothing at all where there is none (Colab, Binder, the tests).
"""

import datetime
import os
import re
from dataclasses import dataclass

# nbgitpuller's suffix: two underscores and the local time of the pull, to the second.
TIME_FORMAT = "%Y%m%d%H%M%S"
STAMP = "__" + TIME_FORMAT
# A candidate name: a stem, the 14 digits of a stamp, then the extension os.path.splitext would split off.
_CANDIDATE = re.compile(r"(?P<stem>.+)__(?P<digits>\d{14})(?P<ext>(?:\.[^.]*)?)")


@dataclass(frozen=True)
class RenamedFile:
    """A learner's file that an update renamed: its ``original`` name, the name it was ``kept_as``, and ``when``."""

    original: str
    kept_as: str
    when: datetime.datetime

    def notice(self):
        return (f"Your file {self.original} was kept as {self.kept_as} when the course added its own "
                f"{self.original} (update of {self.when:%Y-%m-%d %H:%M}). Move yours into my-work/ or rename "
                f"it, and this line goes away.")


def nbgitpuller_name(original, when):
    """The name nbgitpuller gives a learner's file ``original`` when an update at ``when`` adds one of that name."""
    return when.strftime(STAMP).join(os.path.splitext(original))


def renamed_by_update(folder="."):
    """The files in ``folder`` (not its subfolders) that an update renamed, sorted by name.

    A file counts when its name is exactly what nbgitpuller makes of another
    name, with a real date and time, and a file of that other name (the
    course's) is in the folder beside it.
    """
    try:
        names = sorted(os.listdir(folder))
    except OSError:  # a folder that went away, or one the learner may not read: nothing to name
        return []
    present, found = set(names), []
    for name in names:
        match = _CANDIDATE.fullmatch(name)
        if match is None:
            continue
        original = match["stem"] + match["ext"]
        try:
            when = datetime.datetime.strptime(match["digits"], TIME_FORMAT)
        except ValueError:  # 14 digits that are no date, such as 20261399000000
            continue
        if original in present and nbgitpuller_name(original, when) == name:
            found.append(RenamedFile(original, name, when))
    return found


def report_renamed_files(folder="."):
    """Print one line for each file in ``folder`` that an update renamed; print nothing if there is none."""
    for renamed in renamed_by_update(folder):
        print(renamed.notice())
