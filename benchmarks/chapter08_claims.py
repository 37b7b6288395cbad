"""Chapter 08's trained figures over seeds and floating-point paths: the ranges its prose quotes.

Chapter 08 trains small models, and training amplifies the last bits of
float32 sums: the same seed gives other figures on another CPU (another
vector instruction set, another order of additions). So the chapter compares
none of its trained figures as exact text; each such cell asserts the
chapter's claims instead (``seq2seq.expect``), and its prose quotes ranges.
This script measures those ranges and the margins of the claims.

Each floating-point path is a fresh process with one of these settings,
which change the kernels PyTorch picks on one machine:

* ``native``: none (on x86-64 the widest vector unit the CPU has);
* ``ATEN_CPU_CAPABILITY=avx2`` and ``=default``: PyTorch's own vectorised
  kernels limited to AVX2, or to no explicit vectorisation;
* ``MKL_ENABLE_INSTRUCTIONS=SSE4_2``: MKL's matrix products limited to SSE4.2.

In each, every seed runs the notebook's experiments as its cells do (seed 0
is the notebook's own run): the training view on reversal, sorting,
both without positional encoding, additive attention, longer sequences and
the two cases of Experiment 4. One thread, as the notebook sets it.

Run: ``python -m benchmarks.chapter08_claims`` (about 1.5 minutes a path on
one core; ``--seeds 0 1`` and ``--paths native default`` for fewer).
Prints Markdown tables: every figure's range over all runs, over the paths
for seed 0, and each claim's worst case against its threshold.
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import threading

from d2lmini.pretrained.cache import made_with

PATHS = {
    "native": {},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "default": {"ATEN_CPU_CAPABILITY": "default"},
    "mkl-sse4.2": {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},
}


def run_seed(seed):
    """The notebook's trained figures for one seed, as a dict of name -> number."""
    import torch

    import d2lmini as d2l
    from d2lmini import seq2seq
    from d2lmini.widgets import TrainingView

    torch.set_num_threads(1)
    figures = {}
    view = TrainingView("reverse", "dot-product", num_hiddens=32, lr=3e-3, num_steps=400, seed=seed,
                        draw_every=400)
    history = view.run()
    model, test = view.model, history.test
    figures["reverse: accuracy at 400"], figures["reverse: mass at 400"] = history.evaluations[400]
    uniform = d2l.masked_softmax(torch.zeros(len(test), 8, 8), test.valid_lens)
    figures["uniform mass"] = seq2seq.alignment_mass(uniform, test.alignment)
    for target in (0.5, 0.95, 0.99):
        figures[f"reverse: steps to {target:.0%}"] = history.steps_to(target)
    figures["reverse: accuracy at 100"] = history.evaluations[100][0]
    click = history.steps_to(0.5)
    figures["click: steps from 40 before it to 95%"] = history.steps_to(0.95) - (click - 40)
    figures["click: accuracy 40 steps before"] = history.evaluations[click - 40][0]
    figures["click: accuracy at the click"], figures["click: mass at the click"] = history.evaluations[click]
    figures["reverse: mass at step 0"] = history.evaluations[0][1]
    last = history.examples.valid_lens[0].item() - 1  # the fixed example's last digit
    figures["click: step 0's weight on the last digit, 40 steps before"] = (
        history.snapshots[click - 40].weights[0, 0, last].item())

    torch.manual_seed(seed)
    sorter = seq2seq.AttentionSeq2Seq(32, "dot-product")
    sort_test = seq2seq.make_batch("sort", 500, generator=torch.Generator().manual_seed(2))
    sort_history = seq2seq.History(sort_test[:3], sort_test, snapshot_every=50)
    seq2seq.train(sorter, "sort", 100, seed=seed, callback=sort_history)
    figures["sort: accuracy at 100"], figures["sort: mass at 100"] = sort_history.evaluations[100]
    figures["sort: steps to 95%"] = sort_history.steps_to(0.95)

    torch.manual_seed(seed)
    no_positions = seq2seq.AttentionSeq2Seq(32, "dot-product", positional=False)
    no_pe_history = seq2seq.History(history.examples, test, snapshot_every=50)
    seq2seq.train(no_positions, "reverse", 100, seed=seed, callback=no_pe_history)
    figures["no PE, reverse: accuracy"], figures["no PE, reverse: mass"] = no_pe_history.evaluations[100]
    no_positions.eval()
    _, weights = no_positions.predict(test.source, test.valid_lens)
    same_digit = (test.source[:, :, None] == test.source[:, None, :]) & test.real[:, :, None] & test.real[:, None, :]
    gaps = (weights[:, :, :, None] - weights[:, :, None, :]).abs()  # (B, T, S, S): weights of two positions
    figures["no PE: largest weight gap between copies"] = gaps.masked_fill(~same_digit[:, None], 0).max().item()

    torch.manual_seed(seed)
    sort_no_positions = seq2seq.AttentionSeq2Seq(32, "dot-product", positional=False)
    sort_no_pe = seq2seq.History(sort_test[:3], sort_test, snapshot_every=50)
    seq2seq.train(sort_no_positions, "sort", 80, seed=seed, callback=sort_no_pe)
    figures["no PE, sort: accuracy at 80"], figures["no PE, sort: mass at 80"] = sort_no_pe.evaluations[80]

    torch.manual_seed(seed)
    additive = seq2seq.AttentionSeq2Seq(32, "additive")
    additive_history = seq2seq.History(history.examples, test, snapshot_every=50)
    reached = threading.Event()

    def until_95(progress):
        additive_history(progress)
        if additive_history.steps_to(0.95) is not None:
            reached.set()

    seq2seq.train(additive, "reverse", 400, seed=seed, callback=until_95, stop=reached)
    figures["additive: steps to 95%"] = additive_history.steps_to(0.95)

    long_test = seq2seq.make_batch("reverse", 500, (8, 12), generator=torch.Generator().manual_seed(3))
    model.eval()
    long_predictions, long_weights = model.predict(long_test.source, long_test.valid_lens)
    looks_at = long_weights[:, 0].argmax(-1).float()
    for n in range(8, 13):
        rows = (long_test.valid_lens == n).nonzero()[:, 0]
        figures[f"length {n}: accuracy"] = seq2seq.sequence_accuracy(long_predictions[rows], long_test[rows])
        figures[f"length {n}: step 0 reads"] = looks_at[rows].mean().item()

    predictions, weights = model.predict(test.source, test.valid_lens)
    largest = weights.argmax(-1)
    looks_off = (largest != test.positions) & (test.source.gather(1, largest) == test.target)
    figures["exp. 4: right outputs whose step looks off"] = int(
        (looks_off & (predictions == test.target) & test.real).any(1).sum())
    long_looks_right = long_weights.argmax(-1) == long_test.positions
    figures["exp. 4: wrong outputs whose step looks right"] = int(
        (long_looks_right & (long_predictions != long_test.target) & long_test.real).any(1).sum())
    return figures


def child(seeds):
    """Run every seed in this process (one floating-point path) and print one JSON line per seed."""
    import torch

    for seed in seeds:
        figures = run_seed(seed)
        print(json.dumps({"seed": seed, "capability": torch.backends.cpu.get_cpu_capability(),
                          "figures": figures}), flush=True)


def measure(paths, seeds):
    """{path: [{seed, capability, figures}]}, one subprocess per path, two at a time."""
    results, processes = {}, {}
    pending = list(paths)
    while pending or processes:
        while pending and len(processes) < 2:
            path = pending.pop(0)
            env = {**os.environ, **PATHS[path]}
            command = [sys.executable, __file__, "--child", *map(str, seeds)]
            processes[path] = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
        path, process = next(iter(processes.items()))
        out, _ = process.communicate()
        if process.returncode:
            raise SystemExit(f"the {path} run failed (exit {process.returncode})")
        results[path] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        del processes[path]
    return results


def span(values, percent=False):
    """'low–high' of the values (one number when they agree as printed); 'never' for a target not reached."""
    values = [v for v in values if v is not None]
    if not values:
        return "never"
    low, high = min(values), max(values)
    if percent:
        text = lambda v: f"{v:.0%}"  # noqa: E731
    elif all(float(v).is_integer() for v in values):
        text = lambda v: f"{v:.0f}"  # noqa: E731
    else:
        text = lambda v: f"{v:.2f}"  # noqa: E731
    return text(low) if text(low) == text(high) else f"{text(low)}–{text(high)}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--paths", nargs="+", choices=list(PATHS), default=list(PATHS))
    parser.add_argument("--child", type=int, nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        return child(args.child)
    results = measure(args.paths, args.seeds)
    print(f"Chapter 08 over seeds {args.seeds} and floating-point paths, {datetime.date.today()}, "
          f"{made_with()['processor']}, Python {platform.python_version()}")
    print("capability per path:", {path: runs[0]["capability"] for path, runs in results.items()})
    names = list(results[args.paths[0]][0]["figures"])
    print(f"\n| figure | seed 0, every path | every seed and path | {' | '.join(f'seed {s}' for s in args.seeds)} |")
    print("|---|---|---|" + "---|" * len(args.seeds))
    for name in names:
        percent = "accuracy" in name
        seed_0 = [run["figures"][name] for runs in results.values() for run in runs if run["seed"] == 0]
        every = [run["figures"][name] for runs in results.values() for run in runs]
        per_seed = [span([run["figures"][name] for runs in results.values() for run in runs if run["seed"] == s],
                         percent) for s in args.seeds]
        print(f"| {name} | {span(seed_0, percent)} | {span(every, percent)} | {' | '.join(per_seed)} |")


if __name__ == "__main__":
    main()
