"""How long each chapter takes to execute from a fresh kernel.

Every notebook is run the way nbval runs it in CI: start a new kernel, execute
the cells in order, shut the kernel down. Three phases are timed separately
(kernel start, cells, shutdown) and the total is what a chapter costs in
``make test``. With ``--cli`` each notebook is also run through
``jupyter nbconvert --execute``, which adds that command's own start-up (it
imports nbconvert and nbformat, about 2.5 s here) to the same work.

The baseline is a notebook with one cell, ``import torch`` and
``import d2lmini as d2l``: what every chapter pays before its first line of
teaching. Runs are interleaved (one round visits every notebook once), so
baseline and chapters see the same machine load, and the table reports
medians over the rounds plus each chapter's total as a ratio of the
baseline's.

Run: ``make bench-notebooks`` (or ``python -m benchmarks.notebook_times``).
``--record benchmarks/notebook_times.json`` also writes the medians, with the
date, the machine and its load, to the file that chapter 00's statement about
run times is tested against (``tests/test_collection_claims.py``).
"""

import argparse
import datetime
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import nbformat
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
BASELINE = "baseline (imports only)"
LIMIT_S = 10.0  # each chapter must run in under this many seconds


def baseline_notebook():
    """A one-cell notebook that only imports torch and d2lmini."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("import torch\n\nimport d2lmini as d2l")]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    return notebook


def run_in_fresh_kernel(notebook):
    """Execute every cell in a new kernel; return (start, cells, shutdown) in seconds."""
    client = NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    began = time.perf_counter()
    with client.setup_kernel():
        started = time.perf_counter()
        for index, cell in enumerate(notebook.cells):
            client.execute_cell(cell, index)
        finished = time.perf_counter()
    stopped = time.perf_counter()
    return started - began, finished - started, stopped - finished


def run_with_nbconvert(path):
    """Wall-clock seconds of ``jupyter nbconvert --execute`` on one notebook file."""
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
               "--stdout", str(path)]
    began = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=NOTEBOOKS)
    return time.perf_counter() - began


def cpu_name():
    """The CPU's model name, as a cache of d2lmini records it."""
    from d2lmini.pretrained.cache import made_with  # imports torch: only for --record

    return made_with()["processor"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of every notebook (default 3)")
    parser.add_argument("--cli", action="store_true",
                        help="also time `jupyter nbconvert --execute` on each notebook")
    parser.add_argument("--record", type=pathlib.Path,
                        help="also write the medians as JSON to this file (benchmarks/notebook_times.json)")
    parser.add_argument("names", nargs="*",
                        help="notebook names without .ipynb (default: every chapter)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")

    paths = [NOTEBOOKS / f"{name}.ipynb" for name in args.names] or sorted(NOTEBOOKS.glob("*.ipynb"))
    missing = [str(path) for path in paths if not path.exists()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")

    cases = {BASELINE: (None, baseline_notebook)}
    for path in paths:
        cases[path.stem] = (path, lambda path=path: nbformat.read(path, as_version=4))
    phases = {name: [] for name in cases}  # name -> [(start, cells, shutdown), ...]
    cli = {name: [] for name in cases if cases[name][0] is not None}
    for round_number in range(args.rounds):
        for name, (path, load) in cases.items():
            phases[name].append(run_in_fresh_kernel(load()))
            if args.cli and path is not None:
                cli[name].append(run_with_nbconvert(path))
        print(f"round {round_number + 1}/{args.rounds} done", file=sys.stderr)

    totals = {name: [sum(run) for run in runs] for name, runs in phases.items()}
    floor = statistics.median(totals[BASELINE])
    header = "| notebook | kernel start s | cells s | shutdown s | total s | max total s | ÷ baseline |"
    if args.cli:
        header += " nbconvert s | max nbconvert s |"
    print(header)
    print("|---" + "|---:" * (header.count("|") - 2) + "|")
    for name, runs in phases.items():
        start, cells, shutdown = (statistics.median(column) for column in zip(*runs))
        total = statistics.median(totals[name])
        row = (f"| {name} | {start:.2f} | {cells:.2f} | {shutdown:.2f} | {total:.2f} "
               f"| {max(totals[name]):.2f} | {total / floor:.2f} |")
        if args.cli:
            row += (f" {statistics.median(cli[name]):.2f} | {max(cli[name]):.2f} |"
                    if name in cli else " | |")
        print(row)

    chapters = [name for name in totals if name != BASELINE]
    print(f"\nslowest chapter in a fresh kernel: {max(max(totals[name]) for name in chapters):.2f} s"
          f" (limit {LIMIT_S:.0f} s, worst of {args.rounds} rounds)")
    if args.cli:
        print(f"slowest chapter through nbconvert: {max(max(cli[name]) for name in chapters):.2f} s")
    if args.record:
        record = {"date": datetime.date.today().isoformat(), "machine": cpu_name(),
                  "cpus": os.cpu_count(), "load_average": round(os.getloadavg()[0], 1), "rounds": args.rounds,
                  "fresh_kernel_seconds": {name: {"median": round(statistics.median(totals[name]), 2),
                                                  "max": round(max(totals[name]), 2)} for name in totals}}
        args.record.write_text(json.dumps(record, indent=1) + "\n")

if __name__ == "__main__":
    main()
