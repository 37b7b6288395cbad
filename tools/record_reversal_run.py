"""Write the runs that chapter 08's explorers replay on the web site: d2lmini/widgets/reversal_run*.pt.

The page of chapter 08 has no kernel to train with, so ``Alignment.for_page()``
reads recorded ``seq2seq.History``s (``training.RECORDED_RUNS``): the run that
the notebook's ``TrainingView`` trains (reversal, dot-product attention, hidden
size 32, learning rate 0.003, positional encoding, lengths 4 to 8, 400 steps,
seed 0, 500 held-out sequences), and the changes its "Your turn" section
suggests, one each: positional encoding off, additive attention, learning rate
0.03. Each keeps its four fixed examples snapshotted every 10 steps and
evaluated every 20 (``History.save``: about 83 kB a run, float32; the held-out
set itself is not kept). They are recorded once, so that the site builds in
seconds, the same on every machine: on one thread, as the notebook runs, a run
took 5 to 10 s on the 2-core machine the last three were recorded on, and 35 to
47 s while other jobs shared its cores; it never runs in CI or in the site's
build. On one machine a new recording is the same file, bit for bit
(``D2L_RECORD_RUNS=1`` runs the test that checks them against a new
recording). To remake them, from the repository root:

    python tools/record_reversal_run.py [--only NAME ...] [--folder FOLDER]

A CPU with another vector instruction set may give slightly other numbers:
the page and the tests read the files, so any recording is consistent.
"""

import argparse
import time
from pathlib import Path

import torch

from d2lmini.widgets import TrainingView
from d2lmini.widgets.training import RECORDED_RUNS, recorded_run_file


def record(name):
    """The ``History`` of the recorded run ``name``: notebook 08's TrainingView cell, with its changes."""
    torch.set_num_threads(1)  # as the notebook runs, and the same result on every run of this tool
    arguments = {"num_hiddens": 32, "lr": 3e-3, "num_steps": 400, **RECORDED_RUNS[name][1]}
    return TrainingView("reverse", arguments.pop("attention", "dot-product"), **arguments).run()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", choices=list(RECORDED_RUNS), default=list(RECORDED_RUNS),
                        help="the runs to record (default: all)")
    parser.add_argument("--folder", type=Path, default=None,
                        help="where to write them (default: beside d2lmini/widgets/training.py)")
    arguments = parser.parse_args(argv)
    for name in arguments.only:
        out = recorded_run_file(name)
        out = out if arguments.folder is None else arguments.folder / out.name
        started = time.perf_counter()
        record(name).save(out)
        print(f"{name}: wrote {out} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
