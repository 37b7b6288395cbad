"""Per-call overhead of the attention modules: this checkout against an earlier revision.

Run: ``make bench-overhead`` (or ``python -m benchmarks.overhead --before REV``).

On tiny inputs (batch 2, 8 tokens, width 16) the arithmetic costs almost
nothing, so the time per call is the Python-side overhead: argument checks,
building the mask, dispatching ops. The earlier revision's ``d2lmini`` is
extracted with ``git archive`` and imported under another name, and both are
timed in the same run, call by call interleaved, so that both see the same
machine load. The table gives medians in microseconds and their ratio.

It also counts, per call, the ops that read a value back to the host
(``aten._local_scalar_dense``, behind ``.item()`` and ``bool(tensor)``, and
``aten.nonzero``). On the CPU they are free; on a GPU each one makes the host
wait for the device.
"""

import argparse
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import d2lmini as current
from benchmarks.revision import import_at_revision

REPO = Path(__file__).resolve().parent.parent
HOST_READS = {"_local_scalar_dense", "nonzero"}


class HostReads(TorchDispatchMode):
    """Counts the ops that bring a tensor's value back to the host."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ in HOST_READS:
            self.count += 1
        return func(*args, **(kwargs or {}))


def calls(d2l):
    """(label, zero-argument call) pairs on fixed tiny inputs, for one version of the package."""
    torch.manual_seed(0)
    X = torch.randn(2, 8, 16)
    scores = torch.randn(2, 8, 8)
    lens_1d, lens_2d = torch.tensor([3, 8]), torch.randint(1, 9, (2, 8))
    modules = {}
    for need_weights in (True, False):
        torch.manual_seed(0)
        modules["dot", need_weights] = d2l.DotProductAttention(0.0, need_weights=need_weights)
        modules["causal", need_weights] = d2l.DotProductAttention(0.0, need_weights=need_weights, causal=True)
        modules["mha", need_weights] = d2l.MultiHeadAttention(
            16, 4, 0.0, query_size=16, key_size=16, value_size=16, need_weights=need_weights).eval()
    path = {True: "explicit", False: "fast"}
    rows = [("masked_softmax, 1-D lengths", lambda: d2l.masked_softmax(scores, lens_1d)),
            ("masked_softmax, 2-D lengths", lambda: d2l.masked_softmax(scores, lens_2d))]
    for need_weights in (True, False):
        dot, causal, mha = (modules[kind, need_weights] for kind in ("dot", "causal", "mha"))
        rows += [
            (f"DotProductAttention, {path[need_weights]}, 1-D lengths", lambda m=dot: m(X, X, X, lens_1d)),
            (f"DotProductAttention, {path[need_weights]}, 2-D lengths", lambda m=dot: m(X, X, X, lens_2d)),
            (f"DotProductAttention, {path[need_weights]}, causal + 1-D", lambda m=causal: m(X, X, X, lens_1d)),
            (f"MultiHeadAttention, {path[need_weights]}, 1-D lengths", lambda m=mha: m(X, X, X, lens_1d)),
        ]
    return rows


def host_reads(call):
    with torch.no_grad(), HostReads() as mode:
        call()
    return mode.count


def measure(before, after, repeats):
    """Median µs per call for each row, both versions interleaved call by call."""
    times = {label: ([], []) for label, _ in after}
    for round_ in range(repeats + 1):  # round 0 warms up
        for (label, old), (_, new) in zip(before, after):
            for version, call in enumerate((old, new)):
                with torch.no_grad():
                    start = time.perf_counter()
                    call()
                    elapsed = time.perf_counter() - start
                if round_:
                    times[label][version].append(elapsed * 1e6)
    return {label: (statistics.median(old), statistics.median(new)) for label, (old, new) in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="HEAD~1", help="git revision to compare with (default HEAD~1)")
    parser.add_argument("--repeats", type=int, default=2000, help="timed calls per row and version")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # tiny tensors: thread wake-ups would dominate
    with tempfile.TemporaryDirectory() as folder:
        before = calls(import_at_revision(args.before, folder, "d2lmini_before"))
        after = calls(current)
        reads = {label: (host_reads(old), host_reads(new)) for (label, old), (_, new) in zip(before, after)}
        medians = measure(before, after, args.repeats)
    revision = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.before],
                              capture_output=True, text=True).stdout.strip()
    print(f"{time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, torch {torch.__version__}, "
          f"one thread; medians of {args.repeats} interleaved calls; before = {revision}\n")
    print("| call | before µs | after µs | after ÷ before | host reads before | host reads after |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, (old, new) in medians.items():
        print(f"| {label} | {old:.1f} | {new:.1f} | {new / old:.2f} | {reads[label][0]} | {reads[label][1]} |")


if __name__ == "__main__":
    main()
