"""benchmarks/page_explorers.py runs, and prints the rows and the budget line it promises."""

import sys
from pathlib import Path

from conftest import require_chromium

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import page_explorers  # noqa: E402


def test_the_page_benchmark_measures_an_explorer_against_its_budgets(capsys):
    require_chromium()
    page_explorers.main(["--only", "QueryPooling", "--moves", "4"])
    printed = capsys.readouterr().out
    row = next(line for line in printed.splitlines() if line.startswith("| QueryPoolingExplorer | stored states |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2].endswith(" MB") and 0 < float(cells[2].split()[0]) <= 1.0
    median, p95 = (float(part.split()[0]) for part in cells[4].split(" / "))
    assert 0 < median <= p95 and cells[6] == "4"
    assert "Largest median, input to picture:" in printed and "(budget 16.7 ms)" in printed
