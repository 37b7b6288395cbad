"""benchmarks/page_explorers.py runs, and prints the rows and the budget lines it promises."""

import subprocess
import sys
from pathlib import Path

from conftest import require_chromium

REPO = Path(__file__).resolve().parents[2]


def test_the_page_benchmark_times_key_presses_on_a_desktop_and_a_throttled_phone():
    require_chromium()
    # A process of its own: Playwright's sync API cannot start inside the session's running one.
    command = [sys.executable, "-m", "benchmarks.page_explorers", "--only", "QueryPooling", "--presses", "4"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    printed = done.stdout
    header = next(line for line in printed.splitlines() if line.startswith("| explorer |"))
    assert "desktop, 1280 px" in header and "phone, 390 px, CPU ÷ 4" in header
    assert header.count("| floor | above the floor") == 2
    row = next(line for line in printed.splitlines() if line.startswith("| QueryPoolingExplorer | stored states |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2].endswith(" MB") and 0 < float(cells[2].split()[0]) <= 1.0
    for first in (4, 7):  # per profile: the explorer, the floor page timed right after it, the difference
        explorer, floor, above = cells[first:first + 3]
        # "median / p90 ms (presses)": every press moved the explorer and was timed
        times, presses = explorer.split(" ms ")
        median, p90 = (float(part) for part in times.split(" / "))
        assert 0 < median <= p90 and presses == "(4)", explorer
        floor_median, floor_p90 = (float(part) for part in floor.removesuffix(" ms").split(" / "))
        assert 0 < floor_median <= floor_p90, floor
        # printed from the unrounded medians: within a rounding step of the printed ones' difference
        assert above.endswith(" ms") and abs(float(above[:-3]) - (median - floor_median)) <= 0.11, above
    assert "Largest median, key to frame, desktop:" in printed and "(budget 16.7 ms)" in printed
    assert "Largest median, key to frame, phone:" in printed and "(budget 33.3 ms)" in printed
