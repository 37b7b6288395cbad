"""benchmarks/page_explorers.py runs, and prints the rows and the budget line it promises."""

import subprocess
import sys
from pathlib import Path

from conftest import require_chromium

REPO = Path(__file__).resolve().parents[2]

def test_the_page_benchmark_measures_an_explorer_against_its_budgets():
    require_chromium()
    # A process of its own: Playwright's sync API cannot start inside the session's running one.
    done = subprocess.run([sys.executable, "-m", "benchmarks.page_explorers", "--only", "QueryPooling", "--moves", "4"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    printed = done.stdout
    row = next(line for line in printed.splitlines() if line.startswith("| QueryPoolingExplorer | stored states |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2].endswith(" MB") and 0 < float(cells[2].split()[0]) <= 1.0
    median, p95 = (float(part.split()[0]) for part in cells[4].split(" / "))
    assert 0 < median <= p95 and cells[6] == "4"
    assert "Largest median, input to picture:" in printed and "(budget 16.7 ms)" in printed
