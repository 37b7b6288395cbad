"""How long from setting a control to the new picture in ``explorer.image.value``.

For each explorer, a series of control changes (cycling over the controls
named below) is applied twice, interleaved change by change so that both see
the same machine load:

* to the explorer itself, which redraws its kept figure (blitting);
* to a baseline copy, whose controls instead call what an ``interact``
  callback would do: compute the same weights, draw them with
  ``d2l.show_heatmaps`` on a new pyplot figure, save it as PNG and close it.

The baseline draws only the heatmaps (not the fit or entropy panel), and both
compute on one thread, so the speed-up compares drawing strategies alone and
errs in the baseline's favour.

Run: ``make bench-widgets`` (or ``python benchmarks/widget_latency.py``).
Prints Markdown tables: one row per explorer, then one per control.
"""

import argparse
import io
import os
import statistics
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import d2lmini as d2l  # noqa: E402
from d2lmini import widgets  # noqa: E402

KERNELS = list(d2l.KERNELS)[1:] + list(d2l.KERNELS)[:1]  # start away from the default

# (label, factory, keyword arguments, heatmap panels, [(control, values to cycle through)])
CASES = [
    ("kernel pooling", widgets.explore_kernel_pooling, {}, "1 + fit",
     [("sigma", [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]), ("kernel", KERNELS), ("n_train", [20, 40, 60])]),
    ("masked softmax", widgets.explore_masked_softmax, {}, "2",
     [("valid_len_0", [0, 3, 6, 8]), ("valid_len_1", [1, 4, 7]), ("mode", ["per query", "per example"])]),
    ("additive vs dot product", widgets.explore_additive, {}, "4",
     [("noise", [0.1, 0.5, 1.0, 2.0, 0.0]), ("seed", [1, 2, 3]), ("valid_len_0", [4, 10, 2]),
      ("valid_len_1", [3, 10, 6])]),
    ("scaled dot product", widgets.explore_dot_product, {}, "1 + entropy",
     [("d", [1, 64, 512, 16]), ("scale", [False, True]), ("temperature", [0.2, 3.0, 1.0]),
      ("valid_len", [3, 6, 8]), ("causal", [True, False])]),
    ("multi-head, 8 heads", widgets.explore_multihead, {"num_heads": 8}, "8 (2 × 4)",
     [("valid_len", [2, 4, 6, 3, 5]), ("causal", [True, False])]),
    ("multi-head, switching heads", widgets.explore_multihead, {}, "1 to 8",
     [("num_heads", [4, 8, 1, 2]), ("head", [0, "all"])]),
    # The colour scale follows the weights: a new upper end redraws the colorbar once.
    ("kernel pooling, colours fit to weights", widgets.explore_kernel_pooling, {"colour_scale": "fit"},
     "1 + fit", [("sigma", [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]), ("kernel", KERNELS)]),
]

# Worst cases: every change shows a background never drawn before.
FIRST_VISITS = [
    ("kernel pooling, a new n_train each time", widgets.explore_kernel_pooling, {}, "1 + fit",
     [("n_train", list(range(5, 105, 5)))]),
]


def _baseline_callback(explorer):
    """An interact-style callback: compute, new pyplot figure, PNG, close."""
    width, height = explorer.figure.get_size_inches()

    def update(change):
        with widgets._one_thread():
            weights = explorer._compute()["weights"]
        if weights.dim() == 3 and weights.shape[0] > 4:  # the multi-head grid: 2 rows of 4
            weights = weights.reshape(2, -1, *weights.shape[1:])
        fig = d2l.show_heatmaps(weights, "Keys", "Queries", figsize=(width, height), vmin=0, vmax=1)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=widgets.DPI)
        plt.close(fig)
        explorer.image.value = buffer.getvalue()

    return update


def _as_baseline(explorer):
    for control in explorer.controls.values():
        control.unobserve(explorer._on_change, names="value")
        control.observe(_baseline_callback(explorer), names="value")
    return explorer


def _explorer(factory, kwargs):
    """``factory(**kwargs)``, with the colour scale (a control, not an argument) set afterwards."""
    kwargs = dict(kwargs)
    colour_scale = kwargs.pop("colour_scale", "fixed")
    explorer = factory(**kwargs)
    explorer.controls["colour_scale"].value = colour_scale
    return explorer


def _timed_set(explorer, name, value):
    before = explorer.image.value
    start = time.perf_counter()
    explorer.controls[name].value = value
    elapsed = time.perf_counter() - start
    if explorer.last_error is not None:
        raise explorer.last_error
    if explorer.image.value is before:
        raise RuntimeError(f"setting {name}={value!r} did not replace the image")
    return elapsed * 1e3


def measure(case, changes):
    """Median ms per change, overall and per control, for the explorer and the baseline."""
    label, factory, kwargs, panels, plan = case
    fast, slow = _explorer(factory, kwargs), _as_baseline(_explorer(factory, kwargs))
    times = {"fast": {name: [] for name, _ in plan}, "slow": {name: [] for name, _ in plan}}
    positions = dict.fromkeys((name for name, _ in plan), 0)
    for i in range(changes):
        name, values = plan[i % len(plan)]
        value = values[positions[name] % len(values)]
        positions[name] += 1
        times["fast"][name].append(_timed_set(fast, name, value))
        times["slow"][name].append(_timed_set(slow, name, value))
    return label, panels, times


def _row(cells):
    return "| " + " | ".join(cells) + " |"


def _medians(fast, slow):
    fast_ms, slow_ms = statistics.median(fast), statistics.median(slow)
    return [f"{fast_ms:.1f}", f"{slow_ms:.1f}", f"{slow_ms / fast_ms:.1f}×"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=30, help="control changes per explorer")
    args = parser.parse_args()
    results = [measure(case, args.changes) for case in CASES]
    first_visits = [measure(case, len(case[4][0][1])) for case in FIRST_VISITS]

    print(f"{args.changes} changes per explorer; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs; figures at {widgets.DPI} dpi\n")
    print(_row(["explorer", "heatmap panels", "median ms", "baseline median ms", "speed-up"]))
    print(_row(["---", "---", "---:", "---:", "---:"]))
    for label, panels, times in results + first_visits:
        fast = [t for ts in times["fast"].values() for t in ts]
        slow = [t for ts in times["slow"].values() for t in ts]
        print(_row([label, panels, *_medians(fast, slow)]))

    print()
    print(_row(["explorer", "control", "changes", "median ms", "baseline median ms", "speed-up"]))
    print(_row(["---", "---", "---:", "---:", "---:", "---:"]))
    for label, _, times in results:
        for name in times["fast"]:
            fast, slow = times["fast"][name], times["slow"][name]
            print(_row([label, name, str(len(fast)), *_medians(fast, slow)]))


if __name__ == "__main__":
    main()
