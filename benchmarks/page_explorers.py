"""The live explorers on the web page (d2lmini.widgets.page): speed on a desktop and a phone, size, build time.

    python -m benchmarks.page_explorers [--presses 40] [--profiles desktop phone] [--site] [--only QueryPooling ...]

For every declaration it writes the page data and a page of its own (as ``make site`` does), opens it in
Chromium from disk (file://) in each profile (a desktop at full speed; a phone's 390 px screen with the
CPU slowed 4 times through the DevTools protocol), and presses a key on a random visible control
``--presses`` times, as a learner does from the keyboard. Each press is timed inside the page from the
key's event to the end of the first frame that shows the new state (see ARM). Each row gives the
median and the 90th percentile per profile; the budgets are one frame at 60 Hz (16.7 ms) on the desktop
and two (33.3 ms) on the phone, for the median. It also reports each explorer's data (the ``<name>.js``
a page loads: 1 MB or less), its export time, and with ``--site`` the whole site's build time and size
(``make site``). Prints Markdown tables and the machine.
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

# The key press's measure: from the key going down to the end of the first frame that shows the
# state it set. A listener on the window sees the control's input or change event after the
# explorer's own handlers (they sit on the control or its box, nearer the target); from there the next
# animation frames are watched until the explorer's state (data-state, written when it has drawn) is
# the new one, and a message posted from that frame's animation callback arrives once the frame's
# style, layout and paint are done: the whole cost of the press, whether it draws in its handler
# or in a frame.
ARM = """(timeout) => {
    const root = document.querySelector('[data-d2l-explorer]');
    const before = root.dataset.state;
    window.d2lPress = new Promise((resolve) => {
        let pressed = null, moved = false;
        // The key that acts: an arrow moves a control as it goes down, a space bar ticks a check box
        // as it comes up.
        const key = (event) => { if (!moved) pressed = event.timeStamp; };
        const look = () => {
            if (root.dataset.state === before) return requestAnimationFrame(look);
            const channel = new MessageChannel();
            channel.port1.onmessage = () => { stop(); resolve(performance.now() - pressed); };
            channel.port2.postMessage(null);
        };
        const first = () => { // input or change, whichever comes first: a check box fires both
            if (moved) return;
            moved = true;
            requestAnimationFrame(look);
        };
        const kinds = ['keydown', 'keyup', 'input', 'change'];
        const listeners = [key, key, first, first];
        const stop = () => {
            clearTimeout(timer);
            kinds.forEach((kind, i) => window.removeEventListener(kind, listeners[i], i < 2));
        };
        const timer = setTimeout(() => { stop(); resolve(null); }, timeout);
        kinds.forEach((kind, i) => window.addEventListener(kind, listeners[i], i < 2));
    });
}"""

# The key that moves a control from where it is (as tests/browser/page_support.py presses them).
KEY = """(name) => {
    const element = document.querySelector('[data-d2l-explorer]').d2lExplorer.elements[name];
    if (element.closest('[hidden]')) return null;
    if (element.type === 'range') return element.value === element.max ? 'ArrowLeft' : 'ArrowRight';
    if (element.type === 'checkbox') return 'Space';
    if (element.tagName === 'SELECT') {
        const shown = [...element.options].filter((o) => !o.disabled);
        return shown[shown.length - 1] === element.selectedOptions[0] ? 'ArrowUp' : 'ArrowDown';
    }
    return 'ArrowRight'; // a group of radio buttons: the next one
}"""


# The floor: what any page pays for a key press on a slider, whatever it draws. One slider, a line of
# text and a canvas of the explorer's own size (given in the address: width and height in pixels),
# which each press fills with one colour, so that the whole canvas is handed over with the frame, as
# an explorer's is. It answers the benchmark as an explorer does (data-state, d2lExplorer), and is
# timed right after each explorer, in the same profile, so that both see the same load.
FLOOR = """<!doctype html><html lang="en"><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>floor</title>
<div data-d2l-explorer data-state="0"><input type="range" min="0" max="100" value="0" aria-label="value">
<p>value 0</p><div style="overflow-x: auto"><canvas role="img" aria-label="one colour"></canvas></div></div>
<script>
const root = document.querySelector("[data-d2l-explorer]"), input = root.querySelector("input");
const text = root.querySelector("p"), canvas = root.querySelector("canvas"), context = canvas.getContext("2d");
const [width, height] = location.hash.slice(1).split("x").map(Number);
Object.assign(canvas, { width, height });
canvas.style.width = `${width / devicePixelRatio}px`;
root.d2lExplorer = { data: { controls: [{ name: "value" }] }, elements: { value: input } };
input.addEventListener("input", () => {
  context.fillStyle = `rgb(${input.value * 2}, 80, 120)`;
  context.fillRect(0, 0, width, height);
  text.textContent = `value ${input.value}`;
  root.dataset.state = input.value;
});
root.classList.add("d2l-ready");
</script></html>
"""


def focus(tab, name):
    """Focus control ``name`` as a learner's Tab would: a group of radio buttons by its checked one."""
    tab.evaluate("""(name) => {
        const element = document.querySelector('[data-d2l-explorer]').d2lExplorer.elements[name];
        (element.matches('[role=radiogroup]') ? element.querySelector('input:checked') : element).focus();
    }""", name)


def measure(tab, data, presses, rng):
    """Milliseconds from a key press to the first frame that shows its new state, per press of a
    random visible control (a press that changes no state is left out)."""
    names = [control["name"] for control in data["controls"]]
    timings = []
    for _ in range(presses):
        name = rng.choice(names)
        key = tab.evaluate(KEY, name)
        if key is None:
            continue  # hidden in the state reached
        focus(tab, name)
        tab.evaluate(ARM, 5000)
        tab.keyboard.press(key)
        ms = tab.evaluate("() => window.d2lPress")
        if ms is not None:
            timings.append(ms)
    return timings


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# Where the key presses are timed: a desktop at full speed, and a mid-range phone as Chromium emulates
# one (its screen, touch, and its CPU 4 times slower than this machine's, through the DevTools protocol).
PROFILES = {
    "desktop": {"context": {"viewport": {"width": 1280, "height": 900}, "device_scale_factor": 2}, "throttle": 1},
    "phone": {"context": {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
                          "has_touch": True}, "throttle": 4},
}
BUDGET_MS = {"desktop": FRAME_MS, "phone": 2 * FRAME_MS}  # one frame at 60 Hz; two on the phone


def open_explorer(context, html, throttle, fragment=""):
    """The page of one explorer once it is drawn, its CPU slowed ``throttle`` times from then on."""
    tab = context.new_page()
    tab.goto(html.as_uri() + fragment)
    tab.wait_for_selector("[data-d2l-explorer].d2l-ready", timeout=120_000)
    if throttle != 1:
        context.new_cdp_session(tab).send("Emulation.setCPUThrottlingRate", {"rate": throttle})
    return tab


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=40, help="key presses per explorer and profile (default 40)")
    parser.add_argument("--profiles", nargs="*", choices=sorted(PROFILES), default=sorted(PROFILES),
                        help="where to time them (default: desktop and phone)")
    parser.add_argument("--site", action="store_true", help="also time make site's build and size the site")
    parser.add_argument("--only", nargs="*", help="the declarations to measure, by class name (default: all)")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="page-explorers-"))
    chosen = [d for d in DECLARATIONS if not args.only or d.__name__ in args.only]
    if args.only and len(chosen) != len(args.only):
        parser.error(f"--only takes names from {[d.__name__ for d in DECLARATIONS]}, got {args.only}")
    rows = []
    floor = folder / "floor.html"
    floor.write_text(FLOOR)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-background-networking"])
        contexts = {name: browser.new_context(**PROFILES[name]["context"]) for name in args.profiles}
        for declaration_class in chosen:
            started = time.perf_counter()
            declaration = declaration_class.for_page()
            scripts = page.write_assets(folder, [declaration])
            export_s = time.perf_counter() - started
            data_bytes = (folder / f"{declaration.name}.js").stat().st_size
            html = folder / f"{declaration.name}.html"
            html.write_text(page.page_html([declaration.name], scripts))
            timings, floors = {}, {}
            for name, context in contexts.items():
                tab = open_explorer(context, html, PROFILES[name]["throttle"])
                data = tab.evaluate("() => document.querySelector('[data-d2l-explorer]').d2lExplorer.data")
                timings[name] = measure(tab, data, args.presses, random.Random(0))
                size = tab.evaluate("() => { const c = document.querySelector('[data-d2l-explorer] canvas');"
                                    " return `${c.width}x${c.height}`; }")
                tab.close()
                tab = open_explorer(context, floor, PROFILES[name]["throttle"], f"#{size}")
                floors[name] = measure(tab, {"controls": [{"name": "value"}]}, args.presses, random.Random(0))
                tab.close()
            rows.append((declaration.name, "page script" if declaration.page_script else "stored states",
                         data_bytes, export_s, timings, floors))
        version = browser.version
        browser.close()
    print(f"Measured {time.strftime('%Y-%m-%d')} on {made_with()['processor']} ({os.cpu_count()} cores, "
          f"Python {platform.python_version()}), Chromium {version} headless from file://, load average "
          f"{os.getloadavg()[0]:.1f}. Key press to the first frame that shows its state, median / 90th "
          f"percentile (presses); the floor: the same presses on a page with one slider, a line of text and a "
          f"canvas of the explorer's size, timed right after it:\n")
    heads = {"desktop": "desktop, 1280 px", "phone": "phone, 390 px, CPU ÷ 4"}
    print("| explorer | states | data (.js) | export | "
          + " | ".join(f"{heads[name]}, key to frame | floor | above the floor" for name in args.profiles) + " |")
    print("|---|---|---:|---:|" + "---:|---:|---:|" * len(args.profiles))
    worst = {name: 0.0 for name in args.profiles}
    for name, mode, size, export_s, timings, floors in rows:
        cells = []
        for profile in args.profiles:
            values, floor_values = timings[profile], floors[profile]
            median, floor_median = statistics.median(values), statistics.median(floor_values)
            worst[profile] = max(worst[profile], median)
            cells.append(f"{median:.1f} / {percentile(values, 0.9):.1f} ms ({len(values)}) | "
                         f"{floor_median:.1f} / {percentile(floor_values, 0.9):.1f} ms | "
                         f"{median - floor_median:+.1f} ms")
        print(f"| {name} | {mode} | {size / 1e6:.2f} MB | {export_s:.1f} s | " + " | ".join(cells) + " |")
    print()
    for profile in args.profiles:
        print(f"Largest median, key to frame, {profile}: {worst[profile]:.1f} ms "
              f"(budget {BUDGET_MS[profile]:.1f} ms).")
    print(f"Largest data: {max(row[2] for row in rows) / 1e6:.2f} MB (budget 1 MB).")
    if args.site:
        from tools import build_site

        out = folder / "site"
        seconds = build_site.build(out)
        explorers = build_site.folder_size(out / "_static" / "explorers") / 1e6
        print(f"\n`make site`'s build: {seconds:.1f} s; the site: {build_site.folder_size(out) / 1e6:.1f} MB "
              f"(budget 40 MB), of which the explorers' data {explorers:.1f} MB.")


if __name__ == "__main__":
    main()
