"""Load test of a class on one hub: N learners at once, through JupyterHub's REST API and kernel websockets.

    python -m benchmarks.hub_load                       # N = 5, 10, 20 over every chapter; each chapter alone
    python -m benchmarks.hub_load --learners 2 --chapters 00 02 --moves 2 --memory-chapters 00   # the smoke test's size

It starts the hub of `make hub` (tools/class_hub.py) on 127.0.0.1 with a fresh
learner repository, then for each N, all learners at once, spread over the
chapters as a class working through the collection is (learner i takes the
i-th of --chapters, modulo their count): log in, follow the nbgitpuller link
to their chapter (server start, clone), run every cell of it in a kernel of
their own server, and move a slider of its explorer through the kernel's comm
messages, as the browser's widget manager does. Measured:

- time from the link to the first heatmap (the first PNG a cell outputs), in
  all and chapter by chapter;
- slider to image: from sending the slider's new value to the kernel's update
  of the explorer image, median and 95th percentile over all learners' moves;
- peak memory (RSS) of each learner's server and kernel (so of each chapter's
  kernel under load), and the hub's own (hub, proxy, idle culler), memory and
  CPU, sampled every 0.5 s;
- then, alone, one learner's kernel chapter by chapter: the peak RSS while
  each chapter runs in a fresh kernel.

Traffic stays on 127.0.0.1, the number of requests is bounded by the
arguments, and every wait has a deadline; the run stops by itself. Prints
Markdown tables and writes the figures as JSON (--out).
"""

import argparse
import json
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

import psutil

from tools import learner_repo
from tools.class_hub import Hub, nbgitpuller_link
from tools.hub_client import Learner
from tools.local_servers import free_port

REPO = Path(__file__).resolve().parent.parent

PASSWORD = "load-test-password"
SLIDERS = {"IntSliderModel", "FloatSliderModel"}
MB = 2**20


class Sampler(threading.Thread):
    """Every 0.5 s: RSS of each learner's server and kernels, and of the hub's own processes, with CPU."""

    def __init__(self, hub_pid):
        super().__init__(daemon=True)
        self.hub = psutil.Process(hub_pid)
        self.stopping = threading.Event()
        self.servers, self.kernels, self.hub_rss, self.hub_cpu = {}, {}, [], []

    def run(self):
        self.hub.cpu_percent()
        while not self.stopping.wait(0.5):
            self.sample()

    def sample(self):
        own = self.hub.memory_info().rss
        for child in self.hub.children(recursive=True):
            try:
                command = " ".join(child.cmdline())
                if "jupyterhub-singleuser" in command:
                    user = child.environ().get("JUPYTERHUB_USER", "?")
                    self._peak(self.servers, user, child.memory_info().rss)
                elif "ipykernel" in command:
                    parent = child.parent()
                    user = parent.environ().get("JUPYTERHUB_USER", "?") if parent else "?"
                    self._peak(self.kernels, user, child.memory_info().rss)
                elif "configurable-http-proxy" in command or "jupyterhub_idle_culler" in command:
                    own += child.memory_info().rss
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        self.hub_rss.append(own)
        self.hub_cpu.append(self.hub.cpu_percent())

    @staticmethod
    def _peak(table, user, rss):
        table[user] = max(table.get(user, 0), rss)

    def stop(self):
        self.stopping.set()
        self.join()


def comms_of(kernel, nb):
    """Run every code cell; return (seconds to the first PNG output, the widget models the kernel opened)."""
    models, first_png = {}, None
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        msg_id = kernel.send("execute_request", {"code": cell.source, "silent": False, "store_history": True,
                                                 "user_expressions": {}, "allow_stdin": False,
                                                 "stop_on_error": False})
        idle = replied = False
        for msg in kernel.replies(msg_id):
            kind = msg["header"]["msg_type"]
            if kind == "comm_open":
                models[msg["content"]["comm_id"]] = msg["content"]["data"].get("state", {})
            elif kind in ("display_data", "execute_result") and "image/png" in msg["content"]["data"]:
                first_png = first_png or time.monotonic()
            elif kind == "status":
                idle = msg["content"]["execution_state"] == "idle"
            elif kind == "execute_reply":
                replied = True
            if idle and replied:
                break
    return first_png, models


def set_slider(kernel, comm, value):
    """Send a slider's new value; return the seconds to the kernel's next image update, or None if none came."""
    started = time.monotonic()
    msg_id = kernel.send("comm_msg", {"comm_id": comm, "data": {"method": "update", "state": {"value": value},
                                                                "buffer_paths": []}})
    image_at = None
    for msg in kernel.replies(msg_id):
        kind = msg["header"]["msg_type"]
        data = msg["content"].get("data", {})
        if kind == "comm_msg" and data.get("method") == "update" and ["value"] in data.get("buffer_paths", []):
            image_at = image_at or time.monotonic()
        if kind == "status" and msg["content"]["execution_state"] == "idle":
            break
    return image_at - started if image_at else None


def slider_values(state, moves):
    """``moves`` values for a slider from its state, each unlike the one before (the same value redraws nothing).

    The values cycle through five stops from min to max (fewer on an integer
    slider with a short range); the first differs from the slider's value.
    """
    low, high = state["min"], state["max"]
    stops = [low + (high - low) * k / 4 for k in range(5)]
    if state["_model_name"] == "IntSliderModel":
        stops = [int(round(stop)) for stop in stops]
    stops = sorted(set(stops))
    values, previous = [], state.get("value")
    for i in range(moves if len(stops) > 1 else 0):
        choices = [stop for stop in stops if stop != previous]
        previous = choices[i % len(choices)]
        values.append(previous)
    return values


def move_slider(kernel, models, moves):
    """Move a slider that redraws an image ``moves`` times; return each move's seconds to the image update.

    The sliders are tried in the order the kernel opened them, one move each,
    until one redraws an image; that move counts as the first. A chapter
    without such a slider (06 has no explorer) gives [].
    """
    sliders = [(comm, state) for comm, state in models.items() if state.get("_model_name") in SLIDERS]
    for comm, state in sliders:
        values = slider_values(state, moves)
        first = set_slider(kernel, comm, values[0]) if values else None
        if first is not None:
            rest = (set_slider(kernel, comm, value) for value in values[1:])
            return [first, *(t for t in rest if t is not None)]
    return []


def one_learner(hub, content, name, chapter, moves):
    link = nbgitpuller_link(hub.url, content, path=chapter)
    learner = Learner(hub.url, name, PASSWORD, timeout=600).login()
    started = time.monotonic()
    learner.start()
    phase, output = learner.follow(link)
    if phase != "finished":
        raise RuntimeError(f"{name}: nbgitpuller ended in {phase}: {output[-500:]}")
    ready = time.monotonic()
    path = f"attention-notebooks/{chapter}"
    kernel = learner.kernel(path)
    try:
        first_png, models = comms_of(kernel, learner.notebook(path))
        slider_times = move_slider(kernel, models, moves)
    finally:
        kernel.close()
    return {"learner": learner, "chapter": chapter, "spawn_and_pull_s": ready - started,
            "first_heatmap_s": (first_png - started) if first_png else None, "slider_s": slider_times}


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else None


def by_chapter(results, kernels):
    """One row per chapter of a round: its learners' first heatmaps, kernel peak and slider moves."""
    rows = []
    for chapter in sorted({r["chapter"] for r in results}):
        mine = [r for r in results if r["chapter"] == chapter]
        heatmaps = [r["first_heatmap_s"] for r in mine if r["first_heatmap_s"] is not None]
        peaks = [kernels[r["learner"].name] for r in mine if r["learner"].name in kernels]
        slider = [t for r in mine for t in r["slider_s"]]
        rows.append({"chapter": chapter, "learners": len(mine),
                     "first_heatmap_s_median": statistics.median(heatmaps) if heatmaps else None,
                     "first_heatmap_s_max": max(heatmaps) if heatmaps else None,
                     "kernel_peak_mb": max(peaks) / MB if peaks else None,
                     "slider_moves": len(slider),
                     "slider_to_image_ms_median": 1000 * statistics.median(slider) if slider else None})
    return rows


def class_round(hub, content, n, chapters, moves):
    """N learners at once, learner i on chapters[i % len(chapters)]."""
    sampler = Sampler(hub.process.pid)
    sampler.start()
    started = time.monotonic()
    with ThreadPoolExecutor(n) as pool:
        results = list(pool.map(lambda i: one_learner(hub, content, f"n{n}-learner{i}",
                                                      chapters[i % len(chapters)], moves), range(n)))
    wall = time.monotonic() - started
    sampler.stop()
    for result in results:
        learner = result["learner"]
        learner.api.delete(f"{learner.hub}/hub/api/users/{learner.name}/server", timeout=120)
    slider = [t for result in results for t in result["slider_s"]]
    heatmaps = [r["first_heatmap_s"] for r in results if r["first_heatmap_s"] is not None]
    return {
        "learners": n, "wall_s": wall,
        "spawn_and_pull_s_median": statistics.median(r["spawn_and_pull_s"] for r in results),
        "first_heatmap_s_median": statistics.median(heatmaps) if heatmaps else None,
        "first_heatmap_s_max": max(heatmaps) if heatmaps else None,
        "slider_moves": len(slider),
        "slider_to_image_ms_median": 1000 * statistics.median(slider) if slider else None,
        "slider_to_image_ms_p95": 1000 * quantile(slider, 0.95) if slider else None,
        "server_mb_median": statistics.median(sampler.servers.values()) / MB if sampler.servers else None,
        "server_mb_max": max(sampler.servers.values()) / MB if sampler.servers else None,
        "kernel_mb_median": statistics.median(sampler.kernels.values()) / MB if sampler.kernels else None,
        "kernel_mb_max": max(sampler.kernels.values()) / MB if sampler.kernels else None,
        "hub_mb_peak": max(sampler.hub_rss) / MB if sampler.hub_rss else None,
        "hub_cpu_percent_mean": statistics.mean(sampler.hub_cpu) if sampler.hub_cpu else None,
        "hub_cpu_percent_peak": max(sampler.hub_cpu) if sampler.hub_cpu else None,
        "chapters": by_chapter(results, sampler.kernels),
    }


def chapter_memory(hub, content, chapters):
    """One learner alone: each chapter in a fresh kernel, the kernel's peak and final RSS."""
    learner = Learner(hub.url, "memory-learner", PASSWORD, timeout=900).login().start()
    learner.follow(nbgitpuller_link(hub.url, content, path=chapters[0]))
    rows = []
    for chapter in chapters:
        path = f"attention-notebooks/{chapter}"
        sampler = Sampler(hub.process.pid)
        sampler.start()
        kernel = learner.kernel(path)
        started = time.monotonic()
        try:
            errors = kernel.run(learner.notebook(path))
            sampler.sample()
        finally:
            kernel.close()
            sampler.stop()
        rows.append({"chapter": chapter, "run_s": time.monotonic() - started,
                     "kernel_peak_mb": max(sampler.kernels.values()) / MB,
                     "server_mb": max(sampler.servers.values()) / MB,
                     "errors": [name for _, name in errors]})
    learner.api.delete(f"{learner.hub}/hub/api/users/{learner.name}/server", timeout=120)
    return rows


def cpu_name():
    """The CPU's model name, as a cache of d2lmini records it."""
    from d2lmini.pretrained.cache import made_with  # imports torch: only once the figures are in

    return made_with()["processor"]


def chapter_file(number):
    found = [p.name for p in learner_repo.chapter_sources() if p.name.startswith(f"{number}_")]
    if len(found) != 1:
        raise SystemExit(f"error: chapter {number!r}: expected two digits naming a chapter, found {found or 'none'}")
    return found[0]


def _figure(value, unit, digits=0):
    return "—" if value is None else f"{value:.{digits}f} {unit}"


def print_tables(rounds, memory):
    """The figures as Markdown: one row per class size, then one per chapter (alone, and in each round)."""
    print("| learners | link → first heatmap, median (max) | spawn + pull, median | slider → image, median / p95 "
          "| server MB | kernel MB, median (max) | hub MB | hub CPU %, mean / peak |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rounds:
        print(f"| {r['learners']} | {r['first_heatmap_s_median']:.1f} s ({r['first_heatmap_s_max']:.1f} s) "
              f"| {r['spawn_and_pull_s_median']:.1f} s | {_figure(r['slider_to_image_ms_median'], '')}/ "
              f"{_figure(r['slider_to_image_ms_p95'], 'ms')} | {r['server_mb_median']:.0f} "
              f"| {r['kernel_mb_median']:.0f} ({r['kernel_mb_max']:.0f}) | {r['hub_mb_peak']:.0f} "
              f"| {r['hub_cpu_percent_mean']:.0f} / {r['hub_cpu_percent_peak']:.0f} |")
    alone = {row["chapter"]: row for row in memory}
    names = sorted({row["chapter"] for r in rounds for row in r["chapters"]} | set(alone))
    print("\nEach chapter: alone (one learner, a fresh kernel), then in each round its learners' first heatmap "
          "(median), their kernels' peak and the slider → image median.\n")
    print("| chapter | alone: run, kernel peak | " + " | ".join(f"N = {r['learners']}" for r in rounds) + " |")
    print("|---|---|" + "---|" * len(rounds))
    for name in names:
        cells = [f"{alone[name]['run_s']:.1f} s, {alone[name]['kernel_peak_mb']:.0f} MB" if name in alone else "—"]
        for r in rounds:
            row = next((row for row in r["chapters"] if row["chapter"] == name), None)
            cells.append("—" if row is None else f"{_figure(row['first_heatmap_s_median'], 's', 1)}, "
                         f"{_figure(row['kernel_peak_mb'], 'MB')}, {_figure(row['slider_to_image_ms_median'], 'ms')}")
        print(f"| {name.removesuffix('.ipynb')} | " + " | ".join(cells) + " |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, nargs="+", default=[5, 10, 20], help="class sizes, in turn")
    parser.add_argument("--chapters", nargs="+", default=[p.name[:2] for p in learner_repo.chapter_sources()],
                        help="the chapters a class spreads over (two digits each): learner i takes the i-th, "
                             "modulo their count; default every chapter")
    parser.add_argument("--moves", type=int, default=20, help="slider moves per learner")
    parser.add_argument("--memory-chapters", nargs="*",
                        default=[p.name[:2] for p in learner_repo.chapter_sources()])
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    if any(n < 1 or n > 50 for n in args.learners):
        raise SystemExit(f"error: --learners: expected class sizes from 1 to 50, got {args.learners}")
    if not 0 <= args.moves <= 200:
        raise SystemExit(f"error: --moves: expected 0 to 200 slider moves per learner, got {args.moves}")
    chapters = [chapter_file(number) for number in args.chapters]
    memory_chapters = [chapter_file(number) for number in args.memory_chapters]
    with tempfile.TemporaryDirectory(prefix="hub-load-") as folder:
        content = Path(folder) / "attention-notebooks"
        learner_repo.build_learner_repo(learner_repo.chapter_sources(), content)
        # The load test measures classes beyond this machine's planned size: no server limit below the largest.
        hub = Hub(Path(folder) / "hub", free_port(), PASSWORD, max_servers=max(args.learners)).wait_ready()
        try:
            rounds = [class_round(hub, content, n, chapters, args.moves) for n in args.learners]
            memory = chapter_memory(hub, content, memory_chapters) if memory_chapters else []
        finally:
            hub.stop()
    figures = {"date": date.today().isoformat(), "machine": f"{cpu_name()}, "
               f"{psutil.cpu_count()} CPUs, {psutil.virtual_memory().total / 2**30:.0f} GiB",
               "chapters": chapters, "rounds": rounds, "memory": memory}
    print(f"Measured {figures['date']} on {figures['machine']}; learners spread over {len(chapters)} chapters, "
          f"{args.moves} slider moves each.\n")
    print_tables(rounds, memory)
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1) + "\n")
    return figures


if __name__ == "__main__":
    main()
