"""How fast chapter 08's model learns its tasks, and what watching it costs.

Everything runs on one torch thread, as the notebook sets it, with the
notebook's model and settings (hidden size 32, Adam at 0.003, 128 sequences
per step, lengths 4 to 8). Held-out accuracy is measured every
``--evaluate-every`` steps on 500 sequences of the task (greedy decoding,
whole sequence right), and the time spent evaluating is left out of every
training time. The one-time import that PyTorch's first optimizer triggers
(``torch._dynamo``) is paid before the first measurement and reported on its
own. Each time is given as wall-clock seconds and as the process's CPU
seconds: on a busy machine the first grows with the load, while the second
stays close to what a quiet machine's wall clock would read.

Tables (Markdown):

1. time to a target held-out accuracy, per seed: reversal to 99%, sorting to
   95% (with positional encoding), sorting to 95% without it;
2. reversal without positional encoding, trained for ``--cap`` seconds: its
   accuracy and alignment mass against the uniform value;
3. additive against scaled dot-product cross-attention: steps to 95% per
   seed and time per training step;
4. the live view: ``TrainingView.run()`` (redrawn every 20 steps, with its
   snapshots and evaluations) against the same training without any
   callback, and against training with only the ``History`` callback,
   interleaved round by round; the ratio is view ÷ plain training;
5. the alignment explorer: milliseconds from setting a control to the new PNG.

Run: ``make bench-training`` (or ``python -m benchmarks.training``).
"""

import argparse
import datetime
import os
import platform
import statistics
import threading
import time

import torch

import d2lmini as d2l
from d2lmini import seq2seq
from d2lmini.widgets import TrainingView, explore_alignment


class Clock:
    """Wall-clock and CPU seconds of the training steps, leaving out what runs inside ``paused()``."""

    def __init__(self):
        self.wall = self.cpu = 0.0
        self._since = None

    def start(self):
        self._since = (time.perf_counter(), time.process_time())

    def lap(self):
        wall, cpu = time.perf_counter(), time.process_time()
        self.wall += wall - self._since[0]
        self.cpu += cpu - self._since[1]
        self._since = (wall, cpu)

    def paused(self):
        clock = self

        class Pause:
            def __enter__(self):
                clock.lap()

            def __exit__(self, *exc):
                clock.start()

        return Pause()


def time_to(task, target, seed, cap, *, attention="dot-product", positional=True, evaluate_every=20):
    """Train until the held-out accuracy reaches ``target`` or ``cap`` seconds of training pass.

    Returns a dict: steps, wall and cpu seconds of training, accuracy and mass at the end, reached or not.
    """
    torch.manual_seed(seed)
    model = seq2seq.AttentionSeq2Seq(32, attention, positional)
    test = seq2seq.make_batch(task, 500, generator=torch.Generator().manual_seed(1000 + seed))
    clock, stop, result = Clock(), threading.Event(), {"reached": False}

    def callback(progress):
        if result["reached"]:  # the step train() takes after the stop flag is set
            return
        if progress.step == 0:
            clock.start()  # the optimizer exists now: its construction is not training
            return
        if progress.step % evaluate_every and not progress.done:
            return
        with clock.paused():
            accuracy, mass = seq2seq.evaluate(model, test)
        result.update(steps=progress.step, wall=clock.wall, cpu=clock.cpu, accuracy=accuracy, mass=mass)
        if accuracy >= target:
            result["reached"] = True
            stop.set()
        elif clock.wall > cap:
            stop.set()

    seq2seq.train(model, task, 10 ** 7, seed=seed, callback=callback, stop=stop)
    return result


def view_cost(num_steps, rounds):
    """Seconds (wall, cpu) per round of plain training, training with a History, and TrainingView.run()."""
    times = {"plain": [], "history": [], "view": []}
    test = seq2seq.make_batch("reverse", 500, generator=torch.Generator().manual_seed(4321))
    view = TrainingView(num_steps=num_steps)  # built once: construction is not training
    views = []
    for r in range(rounds):
        order = ["plain", "history", "view"] if r % 2 == 0 else ["view", "history", "plain"]
        for kind in order:
            torch.manual_seed(0)
            model = seq2seq.AttentionSeq2Seq(32)
            callback = seq2seq.History(test[:4], test) if kind == "history" else None
            wall, cpu = time.perf_counter(), time.process_time()
            if kind == "view":
                view.run()
                views.append(view.history)
            else:
                seq2seq.train(model, "reverse", num_steps, callback=callback)
            times[kind].append((time.perf_counter() - wall, time.process_time() - cpu))
    return times, views[-1]


def explorer_latency(history, changes):
    """Milliseconds (wall, cpu) from setting a control of the alignment explorer to its new PNG.

    Its other examples' figures are prepared first, as a kernel's idle time does.
    """
    explorer = explore_alignment(history, step=0)
    explorer.prepare()
    steps = history.steps
    elapsed = []
    for i in range(changes):
        name, value = ("step", steps[(i * 7) % len(steps)]) if i % 2 == 0 else ("example", i % len(history.examples))
        if explorer.controls[name].value == value:
            continue
        wall, cpu = time.perf_counter(), time.process_time()
        explorer.controls[name].value = value
        elapsed.append(((time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3))
        assert explorer.last_error is None, explorer.last_error
    return elapsed


def _row(cells):
    return "| " + " | ".join(cells) + " |"


def _seconds(wall, cpu):
    return f"{wall:.2f} ({cpu:.2f})"


def machine():
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as info:
            model = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} CPUs, torch {torch.__version__}, one torch thread"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="seeds of the timed runs")
    parser.add_argument("--cap", type=float, default=30.0, help="seconds of training before a run gives up")
    parser.add_argument("--evaluate-every", type=int, default=20, help="steps between held-out evaluations")
    parser.add_argument("--view-steps", type=int, default=400, choices=TrainingView.STEPS,
                        help="steps of each live-view round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the live-view comparison")
    parser.add_argument("--changes", type=int, default=30, help="control changes of the explorer")
    args = parser.parse_args(argv)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run(args)
    finally:
        torch.set_num_threads(threads)


def run(args):
    load_before = os.getloadavg()
    start = time.perf_counter()
    import_wall, import_cpu = time.perf_counter(), time.process_time()
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])  # imports torch._dynamo, once per process
    import_wall, import_cpu = time.perf_counter() - import_wall, time.process_time() - import_cpu
    print(f"{datetime.date.today()}; {machine()}; load average before {load_before[0]:.1f}; "
          f"first optimizer (imports torch._dynamo, once per process): {_seconds(import_wall, import_cpu)} s\n")

    targets = [("reversal", "reverse", 0.99, True), ("sorting", "sort", 0.95, True),
               ("sorting, no positional encoding", "sort", 0.95, False)]
    print(_row(["task", "target", "seed", "reached", "steps", "training s, wall (cpu)", "accuracy", "mass"]))
    print(_row(["---", "---:", "---:", "---", "---:", "---:", "---:", "---:"]))
    for label, task, target, positional in targets:
        for seed in args.seeds:
            r = time_to(task, target, seed, args.cap, positional=positional, evaluate_every=args.evaluate_every)
            print(_row([label, f"{target:.0%}", str(seed), "yes" if r["reached"] else "no", str(r["steps"]),
                        _seconds(r["wall"], r["cpu"]), f"{r['accuracy']:.1%}", f"{r['mass']:.2f}"]))

    print()
    r = time_to("reverse", 1.01, args.seeds[0], args.cap, positional=False, evaluate_every=args.evaluate_every)
    test = seq2seq.make_batch("reverse", 500, generator=torch.Generator().manual_seed(1000 + args.seeds[0]))
    uniform = seq2seq.alignment_mass(d2l.masked_softmax(torch.zeros(500, 8, 8), test.valid_lens), test.alignment)
    print(_row(["reversal without positional encoding", "steps", "training s, wall (cpu)", "accuracy", "mass",
                "uniform mass"]))
    print(_row(["---", "---:", "---:", "---:", "---:", "---:"]))
    print(_row([f"seed {args.seeds[0]}, {args.cap:g} s", str(r["steps"]), _seconds(r["wall"], r["cpu"]),
                f"{r['accuracy']:.1%}", f"{r['mass']:.2f}", f"{uniform:.2f}"]))

    print()
    print(_row(["cross-attention", "seed", "steps to 95%", "training s, wall (cpu)", "ms per step, wall (cpu)"]))
    print(_row(["---", "---:", "---:", "---:", "---:"]))
    per_step = {}
    for seed in args.seeds:
        for attention in seq2seq.ATTENTIONS:
            r = time_to("reverse", 0.95, seed, args.cap, attention=attention, evaluate_every=args.evaluate_every)
            per_step.setdefault(attention, []).append((r["wall"] / r["steps"], r["cpu"] / r["steps"]))
            steps = str(r["steps"]) if r["reached"] else f"not in {r['steps']}"
            print(_row([attention, str(seed), steps, _seconds(r["wall"], r["cpu"]),
                        _seconds(*(1e3 * t for t in per_step[attention][-1]))]))
    medians = {a: [statistics.median(t[i] for t in v) for i in (0, 1)] for a, v in per_step.items()}
    ratio = [medians["additive"][i] / medians["dot-product"][i] for i in (0, 1)]
    print(f"\nadditive ÷ dot-product, time per step (medians over the seeds): {ratio[0]:.2f} wall, "
          f"{ratio[1]:.2f} cpu\n")

    times, history = view_cost(args.view_steps, args.rounds)
    print(_row([f"{args.view_steps} steps of reversal", "median s, wall (cpu)", "÷ plain training, wall (cpu)"]))
    print(_row(["---", "---:", "---:"]))
    plain = [statistics.median(t[i] for t in times["plain"]) for i in (0, 1)]
    for kind, label in [("plain", "train() alone"), ("history", "train() with a History callback"),
                        ("view", "TrainingView.run(), drawn every 20 steps")]:
        median = [statistics.median(t[i] for t in times[kind]) for i in (0, 1)]
        print(_row([label, _seconds(*median), f"{median[0] / plain[0]:.2f} ({median[1] / plain[1]:.2f})"]))

    latency = explorer_latency(history, args.changes)
    medians = [statistics.median(t[i] for t in latency) for i in (0, 1)]
    print(f"\nAlignmentExplorer, {len(latency)} changes of step or example: median {medians[0]:.1f} ms wall "
          f"({medians[1]:.1f} ms cpu), max {max(t[0] for t in latency):.1f} ms wall")
    print(f"\nload average after {os.getloadavg()[0]:.1f}; the whole benchmark took "
          f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
