"""Write the run that chapter 08's explorer replays on the web site: d2lmini/widgets/reversal_run.pt.

The page of chapter 08 has no kernel to train with, so ``Alignment.for_page()``
reads a recorded ``seq2seq.History``: the run that the notebook's
``TrainingView`` trains (reversal, dot-product attention, hidden size 32,
learning rate 0.003, positional encoding, lengths 4 to 8, 400 steps, seed 0,
500 held-out sequences), its four fixed examples snapshotted every 10 steps and
evaluated every 20 (``History.save``: about 60 kB; the held-out set itself is
not kept). It is recorded once so that the site builds in seconds, the same on
every machine (a run takes about a minute on one CPU). To remake it, from the
repository root:

    python tools/record_reversal_run.py

A CPU with another vector instruction set may give slightly other numbers:
the page and the tests read the file, so any recording is consistent.
"""

import argparse

import torch

from d2lmini.widgets import TrainingView
from d2lmini.widgets.training import RECORDED_RUN


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=RECORDED_RUN, help=f"where to write it (default {RECORDED_RUN})")
    out = parser.parse_args().out
    torch.set_num_threads(1)  # as the notebook runs
    view = TrainingView("reverse", "dot-product", num_hiddens=32, lr=3e-3, num_steps=400)  # notebook 08's cell
    view.run().save(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
