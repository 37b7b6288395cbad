"""How long from setting a control to the new picture in ``explorer.image.value``.

Three versions of every explorer see the same control changes, interleaved
change by change (their order alternating) so that all see the same machine
load:

* **this** version, the working tree's ``d2lmini.widgets``;
* the **baseline** version, ``d2lmini`` at a git revision (``--baseline``,
  default ``main``), extracted with ``git archive`` and imported as
  ``d2lmini_baseline``, so both run in one process on one load;
* an **interact**-style callback on a copy of this version: compute the same
  weights, draw them with ``d2l.show_heatmaps`` on a new pyplot figure, save
  it as PNG and close it (heatmaps only, no fit or entropy panel: it errs in
  that baseline's favour).

Tables (Markdown):

1. per explorer, the median over 30 changes cycling over its controls;
2. first views, the worst cases: a picture whose layout or colour scale has
   not been shown before (a new number of training points, a new number of
   heads, the first switch to "fit to weights");
3. construction, and the idle-time work of this version (in a Jupyter kernel
   an explorer draws its other layouts between messages; here the benchmark
   runs an event loop and waits for that before the first change, as a
   learner's first key press would);
4. per control, the medians behind table 1.

Every row gives this version ÷ baseline: the acceptance bar is 1.1.

Run: ``make bench-widgets`` (or ``python -m benchmarks.widget_latency``).
"""

import argparse
import asyncio
import contextlib
import importlib
import io
import math
import os
import statistics
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import d2lmini as d2l  # noqa: E402
from benchmarks.revision import import_at_revision  # noqa: E402
from d2lmini import widgets  # noqa: E402
from d2lmini.pretrained import EXAMPLE_SENTENCES  # noqa: E402
from d2lmini.widgets.explorer import one_thread  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KERNELS = list(d2l.KERNELS)[1:] + list(d2l.KERNELS)[:1]  # start away from the default
IDLE_TIMEOUT = 10.0  # seconds to wait for an explorer's idle-time work

# (label, factory name, keyword arguments, heatmap panels, [(control, values to cycle through)])
CASES = [
    ("kernel pooling", "explore_kernel_pooling", {}, "1 + fit",
     [("sigma", [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]), ("kernel", KERNELS), ("n_train", [20, 40, 60])]),
    ("masked softmax", "explore_masked_softmax", {}, "2",
     [("valid_len_0", [0, 3, 6, 8]), ("valid_len_1", [1, 4, 7]), ("mode", ["per query", "per example"])]),
    # Chapter 02's mask editor: a click on one grid cell, then a preset (which sets every cell, one redraw).
    ("mask editor, clicking cells", "explore_mask_editor", {}, "1",
     [("cell_0_5", [True, False]), ("cell_3_1", [False, True])]),
    ("mask editor, presets", "explore_mask_editor", {}, "1",
     [("preset", ["causal", "a whole row masked: query 2", "padding: 2 valid keys", "no mask",
                  "padding: 4 valid keys"])]),
    ("additive vs dot product", "explore_additive", {}, "4",
     [("noise", [0.1, 0.5, 1.0, 2.0, 0.0]), ("seed", [1, 2, 3]), ("valid_len_0", [4, 10, 2]),
      ("valid_len_1", [3, 10, 6])]),
    ("scaled dot product", "explore_dot_product", {}, "1 + entropy",
     [("d", [1, 64, 512, 16]), ("scale", [False, True]), ("temperature", [0.2, 3.0, 1.0]),
      ("valid_len", [3, 6, 8]), ("causal", [True, False])]),
    ("multi-head, 8 heads", "explore_multihead", {"num_heads": 8}, "8 (2 × 4)",
     [("valid_len", [2, 4, 6, 3, 5]), ("causal", [True, False])]),
    ("multi-head, switching heads", "explore_multihead", {}, "1 to 8",
     [("num_heads", [4, 8, 1, 2]), ("head", [0, "all"])]),
    # Chapter 07: the encoding (its own colour scale) beside softmax(P Pᵀ/√d), colours fitted from the start.
    ("positional encoding", "explore_positional_encoding", {"colour_scale": "fit"}, "1 + encoding",
     [("d", [64, 128, 16, 2, 32]), ("base", [100.0, 10.0, 1000.0, 100000.0, 10000.0])]),
    # Chapter 05's shape tracer: no weights, cells coloured by head (no colour controls).
    ("shape tracer", "explore_shape_tracer", {}, "0 (2 cell images)",
     [("num_heads", [4, 8, 1, 2]), ("T", [2, 5, 3, 4]), ("transpose", [False, True])]),
    ("head view (chapter 09), layer and head", "explore_head_view", {}, "12 + 1 + lines",
     [("layer", [0, 1, 2, 3, 4, 5]), ("head", [0, 2, 5, 8, 11, 1]), ("query", [10, "all"])]),
    # The colour scale follows the weights: each upper end is drawn once, then kept.
    ("kernel pooling, colours fit to weights", "explore_kernel_pooling", {"colour_scale": "fit"},
     "1 + fit", [("sigma", [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]), ("kernel", KERNELS)]),
]

# First views: (label, factory name, kwargs, [(control, value)] changes, each new to a fresh
# explorer). Every round builds a fresh pair of explorers and times each change once.
FIRST_VIEWS = [
    ("kernel pooling, a new n_train", "explore_kernel_pooling", {},
     [("n_train", n) for n in range(5, 105, 5) if n != 40]),
    ("multi-head, a new number of heads", "explore_multihead", {},
     [("num_heads", 4), ("num_heads", 8), ("num_heads", 1)]),
    ("multi-head, a single head (1 panel)", "explore_multihead", {}, [("head", 1)]),
    ("head view, another example sentence", "explore_head_view", {},
     [("sentence", text) for text in EXAMPLE_SENTENCES[1:]]),
    # Where the largest weight is under 0.5, so that the fitted scale is new (the masked
    # softmax and multi-head explorers start with weights above 0.5: their scale stays 0 to 1).
    *[(f"{label}, first switch to fit", factory, {}, [("colour_scale", "fit")])
      for label, factory in [("kernel pooling", "explore_kernel_pooling"),
                             ("additive vs dot product", "explore_additive"),
                             ("scaled dot product", "explore_dot_product")]],
    ("positional encoding, new colour-scale ends", "explore_positional_encoding", {"colour_scale": "fit"},
     [("d", 128), ("d", 64)]),  # colours 0 to 0.2, then 0 to 0.5: each end drawn for the first time
    # Each map's colorbar drawn for the first time (a baseline without the menu is not timed).
    ("kernel pooling, a new colour map", "explore_kernel_pooling", {},
     [("colour_map", "cividis"), ("colour_map", "Greys"), ("colour_map", "Reds")]),
]

CONSTRUCTION = ["explore_kernel_pooling", "explore_masked_softmax", "explore_mask_editor", "explore_additive",
                "explore_dot_product", "explore_multihead", "explore_positional_encoding",
                "explore_head_view", "explore_shape_tracer"]


def load_baseline(revision, folder):
    """The explorers of ``d2lmini`` at ``revision``, imported as ``d2lmini_baseline.widgets``."""
    import_at_revision(revision, folder, "d2lmini_baseline")
    return importlib.import_module("d2lmini_baseline.widgets")


def _interact_callback(explorer):
    """An interact-style callback: compute, new pyplot figure, PNG, close."""
    width, height = explorer.figure.get_size_inches()

    def update(change):
        with one_thread():
            weights = explorer.declaration.compute(explorer.settings).weights
        if weights.dim() == 3 and weights.shape[0] > 4:  # the multi-head grid: 2 rows of 4
            weights = weights.reshape(2, -1, *weights.shape[1:])
        with contextlib.redirect_stdout(io.StringIO()):  # the summary it prints: kept out of the tables
            fig = d2l.show_heatmaps(weights, "Keys", "Queries", figsize=(width, height), vmin=0, vmax=1)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=widgets.DPI)
        plt.close(fig)
        explorer.image.value = buffer.getvalue()

    return update


def _as_interact(explorer):
    for control in explorer.controls.values():
        control.unobserve_all("value")
        control.observe(_interact_callback(explorer), names="value")
    return explorer


async def settle(explorer):
    """Let the event loop run until the explorer's idle-time work is done."""
    deadline = time.perf_counter() + IDLE_TIMEOUT
    while len(explorer.views) < len(explorer.layouts):
        if time.perf_counter() > deadline:
            raise RuntimeError(f"{explorer!r} did not prepare its layouts in {IDLE_TIMEOUT} s")
        await asyncio.sleep(0.05)


async def build(module, factory, kwargs):
    """``factory(**kwargs)`` of ``module`` with its colour scale set (a control, not an
    argument), once its idle-time work is done."""
    kwargs = dict(kwargs)
    colour_scale = kwargs.pop("colour_scale", "fixed")
    explorer = getattr(module, factory)(**kwargs)
    if "colour_scale" in explorer.controls:  # an explorer of no weights has none
        explorer.controls["colour_scale"].value = colour_scale
    await settle(explorer)
    return explorer


def timed_set(explorer, name, value):
    before = explorer.image.value
    start = time.perf_counter()
    explorer.controls[name].value = value
    elapsed = time.perf_counter() - start
    if getattr(explorer, "last_error", None) is not None:
        raise explorer.last_error
    if explorer.image.value is before:
        raise RuntimeError(f"setting {name}={value!r} did not replace the image")
    return elapsed * 1e3


def interleaved(explorers, name, value, times, step, sizes=None):
    """Set ``name`` on every explorer, in an order that alternates with ``step``; with
    ``sizes``, note the bytes of each new PNG."""
    order = list(explorers) if step % 2 == 0 else list(reversed(explorers))
    for version in order:
        times[version].append(timed_set(explorers[version], name, value))
        if sizes is not None:
            sizes[version].append(len(explorers[version].image.value))


def having(versions, factory):
    """The versions that have ``factory``: an explorer newer than the baseline is timed without it."""
    return {version: module for version, module in versions.items() if hasattr(module, factory)}


async def measure_medians(case, versions, changes):
    label, factory, kwargs, panels, plan = case
    versions = having(versions, factory)
    explorers = {version: await build(module, factory, kwargs) for version, module in versions.items()}
    explorers["interact"] = _as_interact(await build(versions["this"], factory, kwargs))
    times = {name: {version: [] for version in explorers} for name, _ in plan}
    sizes = {version: [] for version in explorers}
    positions = dict.fromkeys(times, 0)
    for i in range(changes):
        name, values = plan[i % len(plan)]
        value = values[positions[name] % len(values)]
        positions[name] += 1
        interleaved(explorers, name, value, times[name], i, sizes)
    return label, panels, times, sizes


async def measure_first_views(case, versions, rounds):
    label, factory, kwargs, plan = case
    versions = having(versions, factory)
    times = {version: [] for version in versions}
    for r in range(rounds):
        explorers = {version: await build(module, factory, kwargs) for version, module in versions.items()}
        explorers = {version: explorer for version, explorer in explorers.items()  # those with the controls
                     if all(name in explorer.controls for name, _ in plan)}
        for i, (name, value) in enumerate(plan):
            interleaved(explorers, name, value, times, r + i)
    return label, times


async def measure_construction(factory, versions, rounds):
    """Construction ms per version, and this version's idle-time work (ms of `prepare`)."""
    versions = having(versions, factory)
    times = {version: [] for version in versions}
    idle = []
    for r in range(rounds):
        order = list(versions) if r % 2 == 0 else list(reversed(versions))
        for version in order:
            start = time.perf_counter()
            explorer = getattr(versions[version], factory)()
            times[version].append((time.perf_counter() - start) * 1e3)
            if version == "this":
                start = time.perf_counter()
                explorer.prepare()  # what the event loop would do, here timed in one go
                idle.append((time.perf_counter() - start) * 1e3)
        await asyncio.sleep(0)
    return factory, times, idle


_BASELINE_DPI = {}  # revision -> the dpi its figures are drawn at


def versions_dpi(revision):
    return f"{_BASELINE_DPI.get(revision, '?')} dpi"


def _row(cells):
    return "| " + " | ".join(cells) + " |"


def _ms(values):
    return statistics.median(values) if values else math.nan


def _cell(value, digits=1):
    """A number for a table; "—" where the baseline has no such explorer."""
    return "—" if math.isnan(value) else f"{value:.{digits}f}"


def _ratio(this, baseline):
    if not baseline:  # an explorer the baseline does not have
        return "new"
    ratio = _ms(this) / _ms(baseline)
    return f"{ratio:.2f}" + ("" if ratio <= 1.1 else " ⚠")


async def run(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=30, help="control changes per explorer")
    parser.add_argument("--rounds", type=int, default=5, help="fresh explorers per first-view row")
    parser.add_argument("--baseline", default="main", help="git revision of d2lmini to compare with")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        versions = {"this": widgets, "baseline": load_baseline(args.baseline, folder)}
        baseline = versions["baseline"]
        _BASELINE_DPI[args.baseline] = baseline.DPI * getattr(baseline, "PIXEL_RATIO", 1)
        medians = [await measure_medians(case, versions, args.changes) for case in CASES]
        first_views = [await measure_first_views(case, versions, args.rounds) for case in FIRST_VIEWS]
        constructions = [await measure_construction(f, versions, args.rounds) for f in CONSTRUCTION]

    print(f"{args.changes} changes per explorer, {args.rounds} rounds per first view and construction; "
          f"baseline: {args.baseline}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          f"figures shown at {widgets.DPI} dpi, drawn at {widgets.DPI * getattr(widgets, 'PIXEL_RATIO', 1)}; "
          f"{args.baseline}: at {versions_dpi(args.baseline)}\n")
    print(_row(["explorer", "heatmap panels", "median ms", f"{args.baseline} ms", f"÷ {args.baseline}",
                "interact-style ms", "speed-up", "PNG kB", f"{args.baseline} PNG kB"]))
    print(_row(["---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]))
    for label, panels, times, sizes in medians:
        this, baseline, interact = ([t for ts in times.values() for t in ts.get(version, ())]
                                    for version in ("this", "baseline", "interact"))
        print(_row([label, panels, f"{_ms(this):.1f}", _cell(_ms(baseline)), _ratio(this, baseline),
                    f"{_ms(interact):.1f}", f"{_ms(interact) / _ms(this):.1f}×",
                    f"{_ms(sizes['this']) / 1e3:.0f}", _cell(_ms(sizes.get('baseline', [])) / 1e3, 0)]))

    print()
    print(_row(["first view", "changes", "median ms", "max ms", f"{args.baseline} median ms",
                f"{args.baseline} max ms", f"÷ {args.baseline}"]))
    print(_row(["---", "---:", "---:", "---:", "---:", "---:", "---:"]))
    for label, times in first_views:
        this, baseline = times["this"], times.get("baseline", [])
        print(_row([label, str(len(this)), f"{_ms(this):.1f}", f"{max(this):.1f}", _cell(_ms(baseline)),
                    _cell(max(baseline, default=math.nan)), _ratio(this, baseline)]))

    print()
    print(_row(["construction", "median ms", f"{args.baseline} median ms", f"÷ {args.baseline}",
                "idle-time work ms"]))
    print(_row(["---", "---:", "---:", "---:", "---:"]))
    for factory, times, idle in constructions:
        baseline = times.get("baseline", [])
        print(_row([f"`{factory}()`", f"{_ms(times['this']):.0f}", _cell(_ms(baseline), 0),
                    _ratio(times["this"], baseline), f"{_ms(idle):.0f}"]))

    print()
    print(_row(["explorer", "control", "changes", "median ms", f"{args.baseline} ms", f"÷ {args.baseline}"]))
    print(_row(["---", "---", "---:", "---:", "---:", "---:"]))
    for label, _, times, _ in medians:
        for name, by_version in times.items():
            this, baseline = by_version["this"], by_version.get("baseline", [])
            if not this:  # fewer changes than controls
                continue
            print(_row([label, name, str(len(this)), f"{_ms(this):.1f}", _cell(_ms(baseline)),
                        _ratio(this, baseline)]))


def main(argv=None):
    asyncio.run(run(argv))


if __name__ == "__main__":
    main()
