"""`make help` names every command the Makefile offers (its .PHONY targets), so none is hidden."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _phony_targets():
    text = (REPO / "Makefile").read_text().replace("\\\n", " ")
    declared = [line for line in text.splitlines() if line.startswith(".PHONY:")]
    assert len(declared) == 1, f"the Makefile declares .PHONY on {len(declared)} lines, expected one"
    return set(declared[0].split(":", 1)[1].split())


def test_make_help_names_every_command():
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    shown = subprocess.run(["make", "-s", "help"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    words = set(re.findall(r"[a-z][a-z-]+", shown))
    missing = sorted(_phony_targets() - words)
    assert not missing, f"make help does not name: {missing}"
