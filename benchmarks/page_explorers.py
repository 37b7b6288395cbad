"""The live explorers on the web page (d2lmini.widgets.page): speed, size and build time.

    python -m benchmarks.page_explorers [--moves 40] [--site] [--only QueryPooling ...]

For every declaration it writes the page data and a page of its own (as ``make site`` does), opens
it in Chromium from disk (file://) at a device scale factor of 2, and moves random controls
``--moves`` times. For each move it measures, inside the page, the time from the control's input
event to the new picture on the canvas (the handler computes or looks up the state and paints it,
synchronously), and to the next animation frame after it (the picture on screen). Each row is
the median and the 95th percentile; the budget is one frame at 60 Hz, 16 ms, for the median of
the first. It also reports each explorer's data (the ``<name>.js`` a page loads: 1 MB or less),
its export time, and with ``--site`` the whole site's build time and size (``make site``).
Prints Markdown tables and the machine.
"""

import argparse
import os
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from d2lmini.pretrained.cache import made_with
from d2lmini.widgets import DECLARATIONS, page

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
FRAME_MS = 1000 / 60

MOVE = """async ([name, index]) => {
    const explorer = document.querySelector('[data-d2l-explorer]').d2lExplorer;
    const element = explorer.elements[name];
    const start = performance.now();
    if (element.type === 'checkbox') element.click();
    else {
        element.value = String(index);
        element.dispatchEvent(new Event('input', {bubbles: true}));
    }
    const drawn = performance.now();
    await new Promise(requestAnimationFrame);
    return [drawn - start, performance.now() - start];
}"""


def measure(tab, data, moves, rng):
    """(handler ms, to the next frame ms) per move of a random control to a random offered value."""
    names = [control["name"] for control in data["controls"]]
    timings = []
    for _ in range(moves):
        name = rng.choice(names)
        visible = tab.evaluate("(name) => !document.querySelector('[data-d2l-explorer]').d2lExplorer"
                               ".elements[name].closest('[hidden]')", name)
        if not visible:
            continue
        timings.append(tab.evaluate(MOVE, [name, rng.randrange(len(data["offered"][name]))]))
    return timings


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=40, help="control moves per explorer (default 40)")
    parser.add_argument("--site", action="store_true", help="also time make site's build and size the site")
    parser.add_argument("--only", nargs="*", help="the declarations to measure, by class name (default: all)")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="page-explorers-"))
    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-background-networking"])
        context = browser.new_context(device_scale_factor=2, viewport={"width": 1280, "height": 900})
        chosen = [d for d in DECLARATIONS if not args.only or d.__name__ in args.only]
        if args.only and len(chosen) != len(args.only):
            parser.error(f"--only takes names from {[d.__name__ for d in DECLARATIONS]}, got {args.only}")
        for declaration_class in chosen:
            started = time.perf_counter()
            declaration = declaration_class.for_page()
            scripts = page.write_assets(folder, [declaration])
            export_s = time.perf_counter() - started
            data_bytes = (folder / f"{declaration.name}.js").stat().st_size
            html = folder / f"{declaration.name}.html"
            html.write_text(page.page_html([declaration.name], scripts))
            tab = context.new_page()
            tab.goto(html.as_uri())
            tab.wait_for_selector("[data-d2l-explorer].d2l-ready", timeout=60_000)
            data = tab.evaluate("() => document.querySelector('[data-d2l-explorer]').d2lExplorer.data")
            timings = measure(tab, data, args.moves, random.Random(0))
            tab.close()
            handler, frame = [t[0] for t in timings], [t[1] for t in timings]
            rows.append((declaration.name, "page script" if declaration.page_script else "stored states",
                         data_bytes, export_s, statistics.median(handler), percentile(handler, 0.95),
                         statistics.median(frame), len(timings)))
        browser.close()
    print(f"Measured {time.strftime('%Y-%m-%d')} on {made_with()['processor']} ({os.cpu_count()} cores, "
          f"{platform.python_version()}), Chromium headless from file://, device scale factor 2, "
          f"load average {os.getloadavg()[0]:.1f}.\n")
    print("| explorer | states | data (.js) | export | input to picture, median / p95 "
          "| to the next frame, median | moves |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, mode, size, export_s, median, p95, frame, count in rows:
        print(f"| {name} | {mode} | {size / 1e6:.2f} MB | {export_s:.1f} s | {median:.1f} / {p95:.1f} ms "
              f"| {frame:.1f} ms | {count} |")
    worst = max(row[4] for row in rows)
    print(f"\nLargest median, input to picture: {worst:.1f} ms (budget {FRAME_MS:.1f} ms); "
          f"largest data: {max(row[2] for row in rows) / 1e6:.2f} MB (budget 1 MB).")
    if args.site:
        from tools import build_site

        out = folder / "site"
        seconds = build_site.build(out)
        explorers = build_site.folder_size(out / "_static" / "explorers") / 1e6
        print(f"\n`make site`'s build: {seconds:.1f} s; the site: {build_site.folder_size(out) / 1e6:.1f} MB "
              f"(budget 40 MB), of which the explorers' data {explorers:.1f} MB.")


if __name__ == "__main__":
    main()
