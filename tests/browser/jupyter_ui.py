"""Drive one notebook in JupyterLab or Notebook 7 the way a learner does.

`check_notebook` opens a notebook, runs all cells from the Run menu, saves it,
moves every slider of every explorer (keyboard or mouse) and takes a screenshot.
It returns what it saw as a `NotebookReport`; the tests decide what is wrong.
"""

import json
import re
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from tools.local_servers import wait_until

# Seconds. Generous for a loaded 2-core machine; a healthy notebook needs a
# fraction of each.
KERNEL_READY_TIMEOUT = 60
RUN_START_TIMEOUT = 20
RUN_TIMEOUT = 180
WIDGETS_TIMEOUT = 30
SAVE_TIMEOUT = 20
SLIDER_TIMEOUT = 15
SCREENSHOT_WAIT = 10

PROMPTS_JS = """() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]
    .map(e => e.textContent.trim())"""

# SHA-256 of the bytes behind each <img> (blob: or data: URL alike), so that a
# new URL carrying the same picture does not count as a change.
IMAGE_DIGESTS_JS = """async (root) => {
    const digests = [];
    for (const img of root.querySelectorAll('img')) {
        const bytes = await (await fetch(img.src)).arrayBuffer();
        const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
        digests.push(Array.from(hash, b => b.toString(16).padStart(2, '0')).join(''));
    }
    return digests;
}"""

IMAGE_SOURCES_JS = "root => [...root.querySelectorAll('img')].map(img => img.src)"

# The alternative text of each <img>: ipywidgets 8 renders an Image's tooltip as its title
# attribute, which screen readers read as the image's description; an alt attribute counts too.
IMAGE_TEXTS_JS = "root => [...root.querySelectorAll('img')].map(img => img.getAttribute('alt') || img.title || '')"

# Times, in the page, from the key going down on `handle` to the first new `src` of an
# image of `root`: key press to new image, as a learner sees it.
KEY_TO_IMAGE_JS = """([root, handle]) => {
    const timing = {key: null, image: null};
    window.__keyToImage = timing;
    handle.addEventListener('keydown', () => { timing.key = performance.now(); },
                            {capture: true, once: true});
    const observer = new MutationObserver(() => {
        if (timing.key !== null && timing.image === null) {
            timing.image = performance.now();
            observer.disconnect();
        }
    });
    observer.observe(root, {subtree: true, attributes: true, attributeFilter: ['src']});
}"""

# Resolves once `element` has kept its place for two animation frames running: the
# notebook has finished laying out the cells around it.
SETTLED_JS = """element => new Promise(resolve => {
    let last = null;
    const check = () => {
        const box = JSON.stringify(element.getBoundingClientRect());
        if (box === last) { resolve(true); return; }
        last = box;
        requestAnimationFrame(() => requestAnimationFrame(check));
    };
    check();
})"""

# Every image of `element` decoded, so that a screenshot shows them.
DECODED_JS = "e => Promise.all([...e.querySelectorAll('img')].map(img => img.decode()))"


def within(seconds, script, what):
    """``script`` (a function of one argument that may return a promise) raced against a timer: what
    Playwright's evaluate returns, or an error naming ``what`` after ``seconds``. Playwright's evaluate
    has no timeout of its own, and a promise that never settles (an animation frame a hidden page never
    draws, an image that never decodes) would hold the test for ever."""
    return f"""async (arg) => {{
        let timer;
        const late = new Promise((_, reject) => {{
            timer = setTimeout(() => reject(new Error({json.dumps(f"{what}: not within {seconds} s")})),
                               {seconds * 1000});
        }});
        try {{ return await Promise.race([({script})(arg), late]); }} finally {{ clearTimeout(timer); }}
    }}"""


DIGESTS_WITHIN = within(SLIDER_TIMEOUT, IMAGE_DIGESTS_JS, "the explorer's images could not be read")


@dataclass
class SliderMove:
    label: str
    gesture: str
    readout_before: str
    readout_after: str
    image_changed: bool
    key_to_image_ms: float | None = None  # keyboard moves: key press to a new image src
    texts_before: list = field(default_factory=list)  # the images' alternative texts (IMAGE_TEXTS_JS)
    texts_after: list = field(default_factory=list)


@dataclass
class ColourSwitch:
    caption: str  # the explorer's caption after the switch
    image_changed: bool


@dataclass
class NotebookReport:
    path: str
    ui: str
    code_cells: int
    unexecuted_cells: list = field(default_factory=list)
    error_outputs: list = field(default_factory=list)
    page_errors: list = field(default_factory=list)
    explorers: list = field(default_factory=list)  # one list of SliderMove per explorer
    colour_switches: list = field(default_factory=list)  # per explorer: a ColourSwitch, or None
    map_switches: list = field(default_factory=list)  # per explorer: whether a new colour map changed an image,
    # or None when it has no colour-map menu
    shows_weights: list = field(default_factory=list)  # per explorer: whether it says it draws weights
    image_texts: list = field(default_factory=list)  # per explorer: its images' alternative texts after Run All
    explorer_images: list = field(default_factory=list)  # per explorer: (natural, CSS width) of each image
    explorers_ready: bool | None = None  # whether every explorer had drawn its layouts before the sliders moved
    screenshot: Path | None = None
    seconds: dict = field(default_factory=dict)  # phase -> seconds spent in it

    @property
    def slider_moves(self):
        return [move for explorer in self.explorers for move in explorer]

    @property
    def key_to_image_ms(self):
        """Key press to new image, for every keyboard move that changed an image."""
        return [move.key_to_image_ms for move in self.slider_moves if move.key_to_image_ms is not None]

    @property
    def explorer_key_to_image_ms(self):
        """Per explorer: [(slider label, key press to new image in ms)] for each keyboard move that changed it."""
        return [[(move.label, move.key_to_image_ms) for move in moves if move.key_to_image_ms is not None]
                for moves in self.explorers]


class NotebookDriver:
    """One notebook open in one page, served by `server` (see conftest.py)."""

    def __init__(self, page, server, path, ui="lab"):
        if ui not in ("lab", "notebook7"):
            raise ValueError(f"ui must be 'lab' or 'notebook7', got {ui!r}")
        self.page = page
        self.server = server
        self.path = path
        self.ui = ui

    # -- opening and running -------------------------------------------------

    def open(self):
        if self.ui == "lab":
            url = f"{self.server.url}/lab/tree/{self.path}?reset&token={self.server.token}"
        else:
            url = f"{self.server.url}/notebooks/{self.path}?token={self.server.token}"
        self.page.goto(url)
        self.page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=KERNEL_READY_TIMEOUT * 1000)

    def wait_for_kernel(self):
        """Idle in the status bar (Lab) and a connected, idle kernel on the server.

        The execution indicator in the notebook toolbar reads idle before the
        kernel is connected, so it is not used.
        """
        if self.ui == "lab":
            expect(self.page.locator("#jp-main-statusbar")).to_contain_text(
                "Idle", timeout=KERNEL_READY_TIMEOUT * 1000
            )
        self._wait_for(
            lambda: self._kernel_state() == ("idle", True),
            KERNEL_READY_TIMEOUT,
            lambda: f"kernel for {self.path} never connected and went idle: {self._kernel_state()}",
        )

    def run_all(self):
        self.page.get_by_role("menuitem", name="Run", exact=True).click()
        self.page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        # Cells arrive here unexecuted ("[ ]:"), so any other prompt means the run began.
        self._wait_for_js(
            f"() => ({PROMPTS_JS})().some(p => p !== '[ ]:')",
            RUN_START_TIMEOUT,
            "Run All Cells did nothing: every prompt still reads [ ]",
        )
        # Done when nothing is queued or running and the kernel is idle again.
        self._wait_for_js(
            f"() => !({PROMPTS_JS})().includes('[*]:')",
            RUN_TIMEOUT,
            "cells were still running",
        )
        self._wait_for(
            lambda: self._kernel_state()[0] == "idle",
            RUN_TIMEOUT,
            lambda: f"kernel never went idle after Run All: {self._kernel_state()}",
        )
        if self.ui == "lab":
            expect(self.page.locator("#jp-main-statusbar")).to_contain_text("Idle")
        # A widget view shows "Loading widget..." until it is drawn or fails.
        self._wait_for_js(
            "() => !document.querySelector('.jp-Notebook').textContent.includes('Loading widget...')",
            WIDGETS_TIMEOUT,
            "a widget output still reads 'Loading widget...'",
        )

    def save_and_read(self):
        """Save from the page (Ctrl+S) and return the notebook as written on disk.

        Done when the file has a new modification time and reads as a whole
        notebook with that time unchanged: on a busy machine the server may
        still be writing it when its time first changes.
        """
        file = self.server.root / self.path
        before = file.stat().st_mtime_ns
        self.page.locator(".jp-Notebook").first.focus()
        self.page.keyboard.press("Control+s")
        saved = {}

        def written():
            mtime = file.stat().st_mtime_ns
            if mtime == before:
                return False
            try:
                notebook = json.loads(file.read_text())
            except ValueError:  # half written
                return False
            saved["notebook"] = notebook
            return file.stat().st_mtime_ns == mtime

        self._wait_for(written, SAVE_TIMEOUT, lambda: f"{self.path} was not saved after Ctrl+S")
        return saved["notebook"]

    # -- what the page shows ---------------------------------------------------

    def images(self, explorer):
        """(natural width, displayed width) in pixels of each image of ``explorer``."""
        return explorer.evaluate(
            "e => [...e.querySelectorAll('img')].map(img => [img.naturalWidth, img.getBoundingClientRect().width])"
        )

    def page_errors(self):
        """Output texts that only the page produces: a widget that cannot be drawn
        (ipywidgets) or an output renderer that threw (JupyterLab)."""
        # textContent, not innerText: cells scrolled out of view are not rendered.
        texts = self.page.locator(".jp-OutputArea-output").all_text_contents()
        # ipywidgets 8 draws a model it could not build as an icon above "Click to show javascript error."
        patterns = ("Error displaying widget", "Javascript Error", "Click to show javascript error")
        return [t.strip()[:200] for t in texts if any(p in t for p in patterns)]

    def explorers(self):
        """Output areas holding a slider and an image: the chapters' explorers."""
        outputs = self.page.locator(".jp-OutputArea-output")
        return (
            outputs.filter(has=self.page.locator(".noUi-handle"))
            .filter(has=self.page.locator("img"))
            .all()
        )

    def wait_until_ready(self, explorers, timeout=WIDGETS_TIMEOUT):
        """Wait until every d2lmini explorer among ``explorers`` has drawn its layouts in the kernel's
        idle time (it then has the class ``d2l-ready``), as a learner's first key press would
        after Run All; returns whether they all did in ``timeout`` seconds.

        Until then a first view of another layout (a new number of heads) builds and draws a
        figure (0.2-0.5 s), and a key press can wait behind a layout being drawn: those are
        first views, which benchmarks/widget_latency.py times; the key-to-image times that
        follow are the learner's steady state.
        """
        try:
            for explorer in explorers:
                self.page.wait_for_function(
                    "root => [...root.querySelectorAll('.d2l-explorer')].every(e => e.classList.contains('d2l-ready'))",
                    arg=explorer.element_handle(), timeout=timeout * 1000)
        except PlaywrightError:
            return False
        return True

    def move_sliders(self, explorer, method="keyboard", timeout=SLIDER_TIMEOUT):
        """Move each slider one notch (keyboard) or a quarter of its track (mouse).

        Returns a SliderMove per slider, saying whether an image of the
        explorer changed: its URL and then the bytes behind it.
        """
        if method not in ("keyboard", "mouse"):
            raise ValueError(f"method must be 'keyboard' or 'mouse', got {method!r}")
        moves = []
        for slider in explorer.locator(".widget-slider").filter(has=self.page.locator(".noUi-handle")).all():
            handle = slider.locator(".noUi-handle").first
            label = slider.locator(".widget-label").text_content().strip()
            if slider.locator("[disabled]").count():  # inactive in this state (Declaration.inactive)
                reason = explorer.locator(".d2l-inactive")
                assert reason.count() == 1 and reason.is_visible() and reason.text_content().strip(), \
                    f"slider {label!r} is disabled and its explorer shows no reason"
                continue
            readout = slider.locator(".widget-readout")
            readout_before = readout.text_content().strip()
            upward = handle.get_attribute("aria-valuenow") != handle.get_attribute("aria-valuemax")
            sources = explorer.evaluate(IMAGE_SOURCES_JS)
            digests = explorer.evaluate(DIGESTS_WITHIN)
            texts_before = explorer.evaluate(IMAGE_TEXTS_JS)
            if method == "keyboard":
                gesture = "ArrowRight" if upward else "ArrowLeft"
                handle.focus()
                self.page.evaluate(KEY_TO_IMAGE_JS, [explorer.element_handle(), handle.element_handle()])
                self.page.keyboard.press(gesture)
            else:
                gesture = "drag " + ("up" if upward else "down")
                self._drag(slider, handle, upward)
            try:
                self.page.wait_for_function(
                    f"([root, before]) => JSON.stringify(({IMAGE_SOURCES_JS})(root)) !== JSON.stringify(before)",
                    arg=[explorer.element_handle(), sources],
                    timeout=timeout * 1000,
                )
                changed = explorer.evaluate(DIGESTS_WITHIN) != digests
            except PlaywrightError:
                changed = False
            latency = None
            if method == "keyboard" and changed:
                timing = self.page.evaluate("() => window.__keyToImage")
                if timing["key"] is not None and timing["image"] is not None:
                    latency = timing["image"] - timing["key"]
            moves.append(SliderMove(label, gesture, readout_before, readout.text_content().strip(), changed,
                                    latency, texts_before, explorer.evaluate(IMAGE_TEXTS_JS)))
        return moves

    def switch_colours(self, explorer, label="fit to weights", timeout=SLIDER_TIMEOUT):
        """Click the explorer's colour-scale button ``label``; None if it has no such button.

        Waits for the caption to name the scale, then says whether an image
        of the explorer changed.
        """
        button = explorer.locator("button.widget-toggle-button", has_text=label)
        if not button.count():
            return None
        digests = explorer.evaluate(DIGESTS_WITHIN)
        button.first.click()
        caption = explorer.locator(".widget-html").filter(has_text="colours 0 to")
        try:
            caption.first.wait_for(timeout=timeout * 1000)
        except PlaywrightError:
            return ColourSwitch("", explorer.evaluate(DIGESTS_WITHIN) != digests)
        return ColourSwitch(caption.first.text_content().strip(), explorer.evaluate(DIGESTS_WITHIN) != digests)

    def switch_colour_map(self, explorer, label="cividis (colour-blind safe)", timeout=SLIDER_TIMEOUT):
        """Pick ``label`` in the explorer's colour-map menu; whether an image changed, or None without a menu."""
        menu = explorer.locator(".widget-dropdown").filter(
            has=self.page.locator("label", has_text=re.compile(r"^map$"))).locator("select")
        if not menu.count():
            return None
        sources = explorer.evaluate(IMAGE_SOURCES_JS)
        digests = explorer.evaluate(DIGESTS_WITHIN)
        menu.first.select_option(label=label)
        try:
            self.page.wait_for_function(
                f"([root, before]) => JSON.stringify(({IMAGE_SOURCES_JS})(root)) !== JSON.stringify(before)",
                arg=[explorer.element_handle(), sources], timeout=timeout * 1000,
            )
        except PlaywrightError:
            return False
        return explorer.evaluate(DIGESTS_WITHIN) != digests

    def arrow_keys_on_a_heading(self):
        """Select the first markdown cell with a section heading (##) in command mode, press
        ArrowLeft then ArrowRight, and return how many cells were hidden before,
        after the first key (collapsed) and after the second (expanded)."""
        self.page.locator(".jp-Notebook .jp-MarkdownCell", has=self.page.locator("h2")).first.click()
        self.page.keyboard.press("Escape")
        hidden_js = ("() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')]"
                     ".filter(cell => cell.classList.contains('lm-mod-hidden')).length")
        counts = [self.page.evaluate(hidden_js)]
        for key in ("ArrowLeft", "ArrowRight"):
            self.page.keyboard.press(key)
            try:
                self.page.wait_for_function(f"before => ({hidden_js})() !== before", arg=counts[-1],
                                            timeout=SLIDER_TIMEOUT * 1000)
            except PlaywrightError:
                pass  # nothing changed: the caller sees equal counts
            counts.append(self.page.evaluate(hidden_js))
        return counts

    def _drag(self, slider, handle, upward):
        """Drag the handle a quarter of the track towards the maximum (or the minimum)."""
        handle.scroll_into_view_if_needed()
        box = handle.bounding_box()
        track = slider.locator(".noUi-base").bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        sign = 1 if upward else -1
        if "widget-vslider" in slider.get_attribute("class"):
            x_to, y_to = x, y - sign * track["height"] / 4
        else:
            x_to, y_to = x + sign * track["width"] / 4, y
        self.page.mouse.move(x, y)
        self.page.mouse.down()
        self.page.mouse.move(x_to, y_to, steps=5)
        self.page.mouse.up()

    def screenshot(self, path, explorer=None):
        """Screenshot with the first explorer, or else the first image, in view."""
        target = explorer
        if target is None:
            images = self.page.locator(".jp-OutputArea-output img")
            target = images.first if images.count() else None
        if target is not None:
            target.evaluate("e => e.scrollIntoView({block: 'start'})")
            # The notebook has finished laying out the scrolled cells and its images are decoded; a
            # picture that is not ready in time is taken as it is (the screenshot is a record, not a check).
            for script, what in ((SETTLED_JS, "the scrolled cells did not settle"),
                                 (DECODED_JS, "the images did not decode")):
                try:
                    target.evaluate(within(SCREENSHOT_WAIT, script, what))
                except PlaywrightError as error:
                    warnings.warn(f"{self.path} ({self.ui}), screenshot: {error.message}", stacklevel=1)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=path)
        return path

    # -- helpers ---------------------------------------------------------------

    def _kernel_state(self):
        """(execution_state, connected) of this notebook's kernel, or (None, False)."""
        for session in self.server.api("sessions"):
            if session["path"] == self.path:
                kernel = session["kernel"]
                return kernel["execution_state"], kernel["connections"] > 0
        return None, False

    def _wait_for_js(self, predicate, timeout, what):
        try:
            self.page.wait_for_function(predicate, timeout=timeout * 1000)
        except PlaywrightError as error:
            raise AssertionError(f"{self.path} ({self.ui}): after {timeout} s, {what}; {self._dialogs()}") from error

    def _wait_for(self, condition, timeout, message):
        try:
            wait_until(condition, timeout, "the condition did not hold")
        except TimeoutError:
            raise AssertionError(f"{self.path} ({self.ui}): {message()}; {self._dialogs()}") from None

    def _dialogs(self):
        dialogs = self.page.locator(".jp-Dialog").all_inner_texts()
        return f"open dialogs: {dialogs}" if dialogs else "no dialog open"


def errors_in(notebook):
    """'cell N: Name: value' for each error output of a saved notebook."""
    found = []
    for number, cell in enumerate(notebook["cells"], start=1):
        for output in cell.get("outputs", []):
            if output["output_type"] == "error":
                found.append(f"cell {number}: {output['ename']}: {output['evalue']}")
    return found


def unexecuted_in(notebook):
    """Numbers of the code cells without an execution count."""
    cells = enumerate(notebook["cells"], start=1)
    return [n for n, cell in cells if cell["cell_type"] == "code" and cell.get("execution_count") is None]


def check_notebook(page, server, path, screenshot, ui="lab", method="keyboard", slider_timeout=SLIDER_TIMEOUT,
                   before_run=None):
    """Open, run all, save, move every explorer's sliders, screenshot; report it all.

    ``method`` is "keyboard", "mouse", or a tuple of both to move every slider
    each way in turn. ``before_run(driver)``, if given, looks at the notebook
    as opened, before its kernel runs anything.
    """
    methods = (method,) if isinstance(method, str) else tuple(method)
    driver = NotebookDriver(page, server, path, ui)
    clock = _PhaseClock()
    driver.open()
    clock.lap("open")
    if before_run is not None:
        before_run(driver)
        clock.lap("as stored")
    driver.wait_for_kernel()
    clock.lap("kernel")
    driver.run_all()
    clock.lap("run all")
    saved = driver.save_and_read()
    report = NotebookReport(
        path=path,
        ui=ui,
        code_cells=sum(cell["cell_type"] == "code" for cell in saved["cells"]),
        unexecuted_cells=unexecuted_in(saved),
        error_outputs=errors_in(saved),
        page_errors=driver.page_errors(),
    )
    clock.lap("save and check")
    explorers = driver.explorers()
    report.explorer_images = [driver.images(e) for e in explorers]
    report.shows_weights = [e.locator(".d2l-weights").count() > 0 for e in explorers]
    report.image_texts = [e.evaluate(IMAGE_TEXTS_JS) for e in explorers]
    clock.lap("explorer images")
    report.explorers_ready = driver.wait_until_ready(explorers)
    clock.lap("explorers ready")
    report.explorers = [[move for method in methods for move in driver.move_sliders(e, method, slider_timeout)]
                        for e in explorers]
    clock.lap("sliders")
    report.colour_switches = [driver.switch_colours(e, timeout=slider_timeout) for e in explorers]
    report.map_switches = [driver.switch_colour_map(e, timeout=slider_timeout) for e in explorers]
    clock.lap("colours")
    report.screenshot = driver.screenshot(screenshot, explorers[0] if explorers else None)
    clock.lap("screenshot")
    report.seconds = clock.laps
    return report


class _PhaseClock:
    def __init__(self):
        self.laps = {}
        self._last = time.monotonic()

    def lap(self, phase):
        now = time.monotonic()
        self.laps[phase] = now - self._last
        self._last = now


def chapter_number(path):
    """The two-digit chapter number a notebook's name starts with, or None."""
    match = re.match(r"(\d\d)_", Path(path).name)
    return int(match.group(1)) if match else None


def assert_runs_cleanly(report):
    where = f"{report.path} in {report.ui}"
    assert report.error_outputs == [], f"{where}: error outputs {report.error_outputs}"
    assert report.unexecuted_cells == [], f"{where}: code cells {report.unexecuted_cells} did not run"
    assert report.page_errors == [], f"{where}: the page shows {report.page_errors}"


def assert_sliders_move_heatmaps(report):
    for move in report.slider_moves:
        where = f"{report.path} in {report.ui}, slider {move.label!r}"
        assert move.readout_after != move.readout_before, f"{where}: {move.gesture} did not move it"
        assert move.image_changed, (
            f"{where}: moved {move.readout_before} -> {move.readout_after}, but no image in the explorer changed"
        )
