"""The notebook timing benchmark runs and reports what it measured.

It times real kernels, so these tests only check the table's structure and the
relations that must hold whatever the machine's speed, never a duration.
"""

import json
import os

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError


@pytest.fixture(scope="module")
def bench():
    from benchmarks import notebook_times

    return notebook_times


def table_rows(out):
    """{first column: [numbers of the other columns]} of a Markdown table."""
    rows = {}
    for line in out.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| ") and cells[1][:1].isdigit():
            rows[cells[0]] = [float(cell) for cell in cells[1:] if cell]
    return rows


def test_one_round_reports_every_phase_and_a_ratio_to_the_baseline_and_records_the_medians(bench, capsys,
                                                                                           tmp_path):
    bench.main(["--rounds", "1", "--record", str(tmp_path / "times.json"), "00_start_here"])
    out = capsys.readouterr().out
    rows = table_rows(out)
    assert set(rows) == {bench.BASELINE, "00_start_here"}
    for start, cells, shutdown, total, worst, _ratio in rows.values():
        assert total == pytest.approx(start + cells + shutdown, abs=0.02)  # printed to 2 decimals
        assert worst == pytest.approx(total, abs=0.01)  # one round: the median is the maximum
    assert rows[bench.BASELINE][-1] == 1.0
    chapter = rows["00_start_here"]
    assert chapter[-1] == pytest.approx(chapter[3] / rows[bench.BASELINE][3], abs=0.01)
    assert f"slowest chapter in a fresh kernel: {chapter[4]:.2f} s" in out
    record = json.loads((tmp_path / "times.json").read_text())
    assert record["rounds"] == 1 and record["cpus"] == os.cpu_count() and record["machine"]
    assert record["fresh_kernel_seconds"]["00_start_here"] == {"median": chapter[3], "max": chapter[4]}


def test_a_chapter_that_raises_fails_the_benchmark(bench):
    notebook = bench.baseline_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("raise ValueError('broken chapter')")]
    with pytest.raises(CellExecutionError, match="broken chapter"):
        bench.run_in_fresh_kernel(notebook)


@pytest.mark.parametrize("argv, message", [
    (["no_such_chapter"], "no such notebook"),
    (["--rounds", "0"], "--rounds must be at least 1, got 0"),
])
def test_bad_arguments_are_named(bench, capsys, argv, message):
    with pytest.raises(SystemExit):
        bench.main(argv)
    assert message in capsys.readouterr().err
