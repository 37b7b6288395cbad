"""Load test of a class on one hub: N learners at once, through JupyterHub's REST API and kernel websockets.

    python benchmarks/hub_load.py                       # N = 5, 10, 20; every chapter's memory
    python benchmarks/hub_load.py --learners 1 --moves 2 --memory-chapters 00   # the smoke test's size

It starts the hub of `make hub` (tools/class_hub.py) on 127.0.0.1 with a fresh
learner repository, then for each N, all learners at once: log in, follow the
nbgitpuller link (server start, clone), run every cell of one chapter in a
kernel of their own server, and move the explorer's first slider through the
kernel's comm messages, as the browser's widget manager does. Measured:

- time from the link to the first heatmap (the first PNG a cell outputs);
- slider to image: from sending the slider's new value to the kernel's update
  of the explorer image, median and 95th percentile over all learners' moves;
- peak memory (RSS) of each learner's server and kernel, and the hub's own (hub,
  proxy, idle culler), memory and CPU, sampled every 0.5 s;
- then, alone, one learner's kernel chapter by chapter: the peak RSS while
  each chapter runs in a fresh kernel.

Traffic stays on 127.0.0.1, the number of requests is bounded by the
arguments, and every wait has a deadline; the run stops by itself. Prints
Markdown tables and writes the figures as JSON (--out).
"""

import argparse
import json
import platform
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import learner_repo  # noqa: E402
from class_hub import Hub, free_port, nbgitpuller_link  # noqa: E402
from hub_client import Learner  # noqa: E402

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


def move_slider(kernel, models, moves):
    """Set the first slider's value ``moves`` times; return each move's seconds to the next image update."""
    sliders = [(comm, state) for comm, state in models.items() if state.get("_model_name") in SLIDERS]
    if not sliders:
        return []
    comm, state = sliders[0]
    low, high = state["min"], state["max"]
    values = [low + (high - low) * ((i % 4) + 1) / 5 for i in range(moves)]
    if state["_model_name"] == "IntSliderModel":
        values = [int(round(v)) for v in values]
    times = []
    for value in values:
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
        if image_at:
            times.append(image_at - started)
    return times


def one_learner(hub, name, link, chapter, moves):
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
    return {"learner": learner, "spawn_and_pull_s": ready - started,
            "first_heatmap_s": (first_png - started) if first_png else None, "slider_s": slider_times}


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else None


def class_round(hub, link, n, chapter, moves):
    sampler = Sampler(hub.process.pid)
    sampler.start()
    started = time.monotonic()
    with ThreadPoolExecutor(n) as pool:
        results = list(pool.map(lambda i: one_learner(hub, f"n{n}-learner{i}", link, chapter, moves), range(n)))
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
        "kernel_mb_median": statistics.median(sampler.kernels.values()) / MB if sampler.kernels else None,
        "hub_mb_peak": max(sampler.hub_rss) / MB if sampler.hub_rss else None,
        "hub_cpu_percent_mean": statistics.mean(sampler.hub_cpu) if sampler.hub_cpu else None,
        "hub_cpu_percent_peak": max(sampler.hub_cpu) if sampler.hub_cpu else None,
    }


def chapter_memory(hub, link, chapters):
    """One learner alone: each chapter in a fresh kernel, the kernel's peak and final RSS."""
    learner = Learner(hub.url, "memory-learner", PASSWORD, timeout=900).login().start()
    learner.follow(link)
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
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        return next(line.split(":", 1)[1].strip() for line in lines if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def chapter_file(number):
    found = [p.name for p in learner_repo.chapter_sources() if p.name.startswith(f"{number}_")]
    if len(found) != 1:
        raise SystemExit(f"error: chapter {number!r}: expected two digits naming a chapter, found {found or 'none'}")
    return found[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, nargs="+", default=[5, 10, 20], help="class sizes, in turn")
    parser.add_argument("--chapter", default="00", help="the chapter every learner runs (two digits)")
    parser.add_argument("--moves", type=int, default=20, help="slider moves per learner")
    parser.add_argument("--memory-chapters", nargs="*",
                        default=[p.name[:2] for p in learner_repo.chapter_sources()])
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    if any(n < 1 or n > 50 for n in args.learners):
        raise SystemExit(f"error: --learners: expected class sizes from 1 to 50, got {args.learners}")
    if not 0 <= args.moves <= 200:
        raise SystemExit(f"error: --moves: expected 0 to 200 slider moves per learner, got {args.moves}")
    chapter = chapter_file(args.chapter)
    memory_chapters = [chapter_file(number) for number in args.memory_chapters]
    with tempfile.TemporaryDirectory(prefix="hub-load-") as folder:
        content = Path(folder) / "attention-notebooks"
        learner_repo.build_learner_repo(learner_repo.chapter_sources(), content)
        hub = Hub(Path(folder) / "hub", free_port(), PASSWORD).wait_ready()
        try:
            link = nbgitpuller_link(hub.url, content, path=chapter)
            rounds = [class_round(hub, link, n, chapter, args.moves) for n in args.learners]
            memory = chapter_memory(hub, link, memory_chapters) if memory_chapters else []
        finally:
            hub.stop()
    figures = {"date": date.today().isoformat(), "machine": f"{cpu_name()}, "
               f"{psutil.cpu_count()} CPUs, {psutil.virtual_memory().total / 2**30:.0f} GiB",
               "chapter": chapter, "rounds": rounds, "memory": memory}
    print(f"Measured {figures['date']} on {figures['machine']}; chapter {chapter}, {args.moves} slider moves each.\n")
    print("| learners | link → first heatmap, median (max) | spawn + pull, median | slider → image, median / p95 "
          "| server MB | kernel MB | hub MB | hub CPU %, mean / peak |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rounds:
        print(f"| {r['learners']} | {r['first_heatmap_s_median']:.1f} s ({r['first_heatmap_s_max']:.1f} s) "
              f"| {r['spawn_and_pull_s_median']:.1f} s | {r['slider_to_image_ms_median'] or 0:.0f} / "
              f"{r['slider_to_image_ms_p95'] or 0:.0f} ms | {r['server_mb_median']:.0f} | {r['kernel_mb_median']:.0f} "
              f"| {r['hub_mb_peak']:.0f} | {r['hub_cpu_percent_mean']:.0f} / {r['hub_cpu_percent_peak']:.0f} |")
    if memory:
        print("\n| chapter | run, s | kernel peak MB | server MB | cells that raised (unfinished exercises) |")
        print("|---|---|---|---|---|")
        for row in memory:
            print(f"| {row['chapter']} | {row['run_s']:.1f} | {row['kernel_peak_mb']:.0f} "
                  f"| {row['server_mb']:.0f} | {len(row['errors'])} |")
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1) + "\n")
    return figures


if __name__ == "__main__":
    main()
