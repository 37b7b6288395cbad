"""Every explorer live on a web page, with no kernel and no network: the page shows what the kernel shows.

``d2lmini.widgets.page`` writes each declaration's page data and scripts (once per test run, for every test
file that reads them: ``support.page_assets``), copied into a folder with a page of its own per explorer;
Chromium opens it from disk with every request outside the folder aborted.
For each explorer, at its default state and at ``RANDOM_STATES`` seeded random states spanning every
control (the colour scale and colour map too), the test sets the page's controls, reads its canvas,
caption and text summary, and compares them with what the kernel's shell (``Explorer``) draws for
the same settings:

* the caption and the text summary are equal, character for character;
* the pictures agree within ``PIXEL_TOLERANCE``: matplotlib's Agg and Chromium's Skia antialias the
  edges of lines, markers and text differently, and the page writes text in the browser's font, so
  a few percent of pixels near those edges differ; the background, the colorbar and every cell are
  the same pixels (within a level or two of rounding). A wrong weight, axis or colour map moves far
  more pixels than the tolerance allows;
* for an explorer whose page computes its states (``page_script``), every registered artist's look
  (cell values, points, bar ends, texts) equals the one d2lmini's own view gives, within float32
  rounding (``VALUE_TOLERANCE``): the page's arithmetic is tested against the package's.

Then every control is driven from the keyboard, and on a phone's screen by touch, where (at 390 and
320 CSS pixels) nothing scrolls sideways but the picture's frame, every control is a target of 24 × 24
CSS pixels and the picture's text stays readable; where one control sets others
(``Declaration.adjust``, ported by the page script), the page sets them as ``adjust`` does.

The page written in Brazilian Portuguese (``d2lmini.i18n.set_language("pt_BR")``) is compared with
the kernel's shell speaking Portuguese the same way, for every explorer computed in the page and one
with stored states, at its default and PORTUGUESE_STATES other seeded states: its scripts' words and
number marks are the kernel's. Its shell's own words (the
note, the colour controls, Play and Pause) are the catalogue's.
"""

import base64
import contextlib
import dataclasses
import io
import random
import re

import numpy as np
import pytest
import traitlets
from conftest import require_chromium
from matplotlib.text import Text
from page_support import (
    accessible_names,
    explorer_state,
    grid_problems,
    keep_inside,
    phone_problems,
    picture_scale,
    press_every_control,
)
from PIL import Image
from support import page_assets

from d2lmini.i18n import current_language, set_language
from d2lmini.plotting import CMAPS
from d2lmini.widgets import DECLARATIONS, page, page_states, page_words
from d2lmini.widgets.declaration import Declaration
from d2lmini.widgets.explorer import Explorer
from d2lmini.widgets.figure import DPI
from tools import build_site

RANDOM_STATES = 20
# The largest share of pixels allowed to differ by more than EDGE_LEVELS (of 255) in any channel, and
# the largest mean difference: antialiased edges and the browser's font (see the module docstring).
PIXEL_TOLERANCE, EDGE_LEVELS, MEAN_LEVELS = 0.03, 64, 2.0
# Cell values: the page sums in float32 as torch does, but MKL's order for long sums (d ≥ 256 in chapter
# 04) is its own, and an unscaled score at temperature 0.1 multiplies the difference by up to 226: measured
# 2.8e-5 at most. Positions: canvas pixels, rounded to 0.01 in the stored data.
VALUE_TOLERANCE, PIXEL_POSITION_TOLERANCE = 1e-4, 0.05
PHONE = {"width": 390, "height": 844}
# A phone's widths: PHONE's, and the narrowest WCAG 1.4.10 names (CSS pixels).
PHONE_WIDTHS = (PHONE["width"], 320)
# The smallest text a phone may show of a picture, in CSS pixels (matplotlib's "small" at figure.DPI
# is 9.3: chapter 09's tokens), unless the notebook itself shows a smaller one (then at least that).
READABLE_PX = 9
NAMES = [declaration.__name__ for declaration in DECLARATIONS]
# The explorers whose one control sets others: the scripts of those computed in the page port adjust,
# and the page's shell follows choices as adjust does for those with stored states.
ADJUSTED = [d.__name__ for d in DECLARATIONS if d.adjust is not Declaration.adjust]
# In Portuguese: every explorer computed in the page (each script says its own words), and one with
# stored states (its numbers in the captions, the colour scale's words in the shell).
PORTUGUESE = [d.__name__ for d in DECLARATIONS if d.page_script] + ["OnlineSoftmax"]
# The drawing does not depend on the language, and the English test compares it at RANDOM_STATES states:
# in Portuguese, where the words are the point, fewer, and other ones (another seed).
PORTUGUESE_STATES = 5


@contextlib.contextmanager
def speaking(language):
    """d2lmini speaks ``language`` inside, the language it spoke before after."""
    before = current_language()
    set_language(language)
    try:
        yield
    finally:
        set_language(before)


class Pages:
    """Each explorer's page in ``language``, written into ``folder`` when a test first asks for it: its
    declaration and file URL. Its data and scripts are the test run's (``support.page_assets``, exported
    once), copied beside the page (``build_site.copied_assets``): the browser may load nothing outside the
    pages' folder, and the run's folder is shared by every test file, which only reads it."""

    def __init__(self, folder, tmp_path_factory, language="en"):
        self.folder, self.tmp_path_factory, self.language, self.made = folder, tmp_path_factory, language, {}

    def __getitem__(self, name):
        if name not in self.made:
            assets = page_assets(self.tmp_path_factory, self.language)
            path = self.folder / f"{name}.html"
            with speaking(self.language):
                declaration = next(d for d in DECLARATIONS if d.__name__ == name).for_page()
                scripts = build_site.copied_assets(assets, self.folder, [declaration])
                path.write_text(page.page_html([declaration.name], scripts, title=name))
            self.made[name] = declaration, path.as_uri()
        return self.made[name]


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return Pages(tmp_path_factory.mktemp("explorer-pages"), tmp_path_factory)


@pytest.fixture(scope="module")
def pages_pt(pages, tmp_path_factory):
    """The pages in Brazilian Portuguese, in a folder inside the English pages' (the browser may load
    nothing outside that)."""
    return Pages(pages.folder / "pt_BR", tmp_path_factory, "pt_BR")


@pytest.fixture(scope="module")
def contexts(chromium, pages):
    """A desktop and a phone, every request outside the pages' folder aborted and recorded."""
    require_chromium()
    made = {"desktop": chromium.new_context(viewport={"width": 1280, "height": 900}),
            "phone": chromium.new_context(viewport=PHONE, device_scale_factor=3, is_mobile=True, has_touch=True)}
    outside = keep_inside(made.values(), pages.folder)
    yield made, outside
    for context in made.values():
        context.close()
    assert outside == [], f"the pages asked for something outside their folder: {outside[:3]}"


def open_explorer(context, url, clock=False):
    """The page, once its explorer is drawn, and the list its errors go into. With ``clock``, the page's
    timers run on Playwright's clock, which the test can move on at once (``tab.clock.run_for``)."""
    tab = context.new_page()
    if clock:
        tab.clock.install()  # before the page's scripts start: its time still passes as it would
    problems = []
    tab.on("console", lambda message: message.type == "error" and problems.append(message.text))
    tab.on("pageerror", lambda error: problems.append(str(error)))
    tab.goto(url)
    tab.wait_for_selector("[data-d2l-explorer].d2l-ready", timeout=30_000)
    return tab, problems


def set_controls(tab, indices, scale, cmap):
    """Move the page's controls as a learner would (events included): name -> offered index. A menu
    whose options depend on the settings before it (a sentence's tokens) keeps its value where they
    do not hold the one asked. Returns the indices the page shows, and the names of those menus."""
    return tab.evaluate("""([indices, scale, cmap]) => {
        const explorer = document.querySelector('[data-d2l-explorer]').d2lExplorer;
        const kept = [];
        for (const [name, index] of Object.entries(indices)) {
            const element = explorer.elements[name];
            if (element.tagName === 'SELECT' && !element.querySelector(`option[value="${index}"]`)) {
                kept.push(name);
                continue;
            }
            if (explorer.inputs[name]() === index) continue;  // as a widget set to its own value: no event
            if (element.type === 'checkbox') {
                element.click();
            } else {
                element.value = String(index);
                element.dispatchEvent(new Event('input', {bubbles: true}));
            }
        }
        if (explorer.scaleGroup) explorer.scaleGroup.querySelector(`input[value="${scale}"]`).click();
        if (explorer.mapSelect) {
            explorer.mapSelect.value = cmap;
            explorer.mapSelect.dispatchEvent(new Event('input', {bubbles: true}));
        }
        return [Object.fromEntries(Object.keys(indices).map((name) => [name, explorer.inputs[name]()])), kept];
    }""", [indices, scale, cmap])


def page_shows(tab):
    """(canvas pixels (height, width, 4), caption, summary, the state as the page computed it)."""
    shown = tab.evaluate("""() => {
        const root = document.querySelector('[data-d2l-explorer]');
        const explorer = root.d2lExplorer;
        return {png: root.querySelector('canvas').toDataURL('image/png'),
                caption: root.querySelector('.d2l-caption').textContent,
                summary: root.querySelector('.d2l-summary').textContent,
                state: explorer.data.compute ? explorer.state() : null};
    }""")
    pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(shown["png"].split(",", 1)[1]))).convert("RGBA"))
    return pixels.astype(int), shown["caption"], shown["summary"], shown["state"]


def kernel_explorer(declaration, shells):
    """An ``Explorer`` of ``declaration`` at its first state: the one in ``shells`` set back to it when its
    controls allow, else a new one (building one draws every layout's background: about a second)."""
    explorer = shells.get("explorer")
    if explorer is not None:
        start = declaration.Settings()
        try:
            for control in declaration.controls:
                explorer.controls[control.name].value = getattr(start, control.name)
        except traitlets.TraitError:  # a value the options shown now do not offer
            pass
        if explorer.settings == start and explorer.last_error is None:
            return explorer
        explorer.close()
    shells["explorer"] = Explorer(declaration)
    return shells["explorer"]


def kernel_shows(explorer, moves, scale, cmap):
    """What the kernel's shell shows after the learner's ``moves`` ((control name, value), in order,
    through its widgets, so that its ``adjust`` and ``choices`` act as the page's do), from its first
    state: pixels, caption, summary and the settings it ends at."""
    for name, value in moves:
        explorer.controls[name].value = value
        assert explorer.last_error is None, f"{name}={value!r}: {explorer.last_error!r}"
    if "colour_scale" in explorer.controls:
        explorer.controls["colour_scale"].value = scale
        explorer.controls["colour_map"].value = cmap
    assert explorer.last_error is None, explorer.last_error
    pixels = np.asarray(Image.open(io.BytesIO(bytes(explorer.image.value))).convert("RGBA")).astype(int)
    return pixels, explorer.caption_text, explorer.summary_text, explorer.settings


def _python(value):
    """A setting as JSON gave it back, as Python had it: a list is a tuple (a pair of lengths)."""
    return tuple(value) if isinstance(value, list) else value


# States whose summaries once contradicted their pictures, checked in every run besides the random
# ones (name -> settings that differ from the default): per-query lengths [0, 8, 1, 0] / [0, 0, 0, 0]
# (what is masked is said example by example), one block of one seen and none seen (chapter 06: "1 of 1
# block", keys "not seen yet", never "masked").
SUMMARY_STATES = {
    "MaskedSoftmax": [{"mode": "per query", "query_len_0_0": 0, "query_len_0_1": 8, "query_len_0_2": 1,
                       "query_len_0_3": 0, **{f"query_len_1_{q}": 0 for q in range(4)}}],
    "OnlineSoftmax": [{"block_size": 16, "step": 1}, {"block_size": 4, "step": 0}],
}


def states_to_check(data, seed, count):
    """The default state, the ``SUMMARY_STATES`` of the explorer and ``count`` seeded random ones:
    (control indices, colour scale, map)."""
    rng = random.Random(seed)
    names = [control["name"] for control in data["controls"]]
    stored = sorted(data["states"]) if not data["compute"] else None
    chosen = [(data["start"], data["colour_scale"], "viridis")]
    for settings in SUMMARY_STATES.get(data["name"].removesuffix("Explorer"), []):
        indices = {**data["start"], **{name: data["offered"][name].index(value) for name, value in settings.items()}}
        chosen.append((indices, data["colour_scale"], "viridis"))
    maps = [name for _, name in CMAPS]
    for _ in range(count):
        if stored:
            indices = dict(zip(names, map(int, rng.choice(stored).split(","))))
        else:
            indices = {name: rng.randrange(len(data["offered"][name])) for name in names}
        chosen.append((indices, rng.choice(["fixed", "fit"]), rng.choice(maps)))
    return chosen


def assert_looks_equal(page_look, kernel_look, where):
    """A page-computed look against the one d2lmini's view gives (both JSON-ready)."""
    if kernel_look is None or page_look is None:
        assert page_look == kernel_look, where
        return
    assert page_look.keys() == kernel_look.keys(), where
    for key, expected in kernel_look.items():
        got = page_look[key]
        if isinstance(expected, str) or key == "columns":
            assert got == expected, f"{where}: {key}"
            continue
        expected_array = np.array(expected, dtype=float)
        got_array = np.array(got, dtype=float)
        assert got_array.shape == expected_array.shape, f"{where}: {key} {got_array.shape} {expected_array.shape}"
        tolerance = VALUE_TOLERANCE if key == "values" else PIXEL_POSITION_TOLERANCE
        np.testing.assert_allclose(got_array, expected_array, atol=tolerance, rtol=0, err_msg=f"{where}: {key}")


@pytest.mark.parametrize("name", NAMES)
def test_the_page_shows_what_the_kernel_shows(name, pages, contexts):
    shows_what_the_kernel_shows(name, pages, contexts, NAMES.index(name), RANDOM_STATES)


@pytest.mark.parametrize("name", PORTUGUESE)
def test_the_portuguese_page_shows_what_the_portuguese_kernel_shows(name, pages_pt, contexts):
    with speaking("pt_BR"):
        shows_what_the_kernel_shows(name, pages_pt, contexts, len(NAMES) + NAMES.index(name), PORTUGUESE_STATES)


def shows_what_the_kernel_shows(name, pages, contexts, seed, count):
    """The explorer ``name``'s page against the kernel's shell in the language d2lmini speaks now: its
    default state and ``count`` random ones, seeded by ``seed`` (the module's docstring)."""
    declaration, url = pages[name]
    tab, problems = open_explorer(contexts[0]["desktop"], url)
    data = tab.evaluate("() => document.querySelector('[data-d2l-explorer]').d2lExplorer.data")
    states = page_states.PageStates(declaration)
    shells = {}
    for number, (wanted, scale, cmap) in enumerate(states_to_check(data, seed, count)):
        _, kept = set_controls(tab, wanted, scale, cmap)
        moves = [(control, data["offered"][control][index]) for control, index in wanted.items() if control not in kept]
        shown = tab.evaluate("() => document.querySelector('[data-d2l-explorer]').d2lExplorer.settings()")
        settings = declaration.Settings(**{control: _python(value) for control, value in shown.items()})
        explorer = kernel_explorer(declaration, shells)
        want_pixels, want_caption, want_summary, kernel_settings = kernel_shows(explorer, moves, scale, cmap)
        assert settings == kernel_settings, f"{name}, state {number}: the page's controls {settings}, the kernel's " \
                                            f"{kernel_settings} after the same moves"
        where = f"{name}, state {number}: {settings}, {scale}, {cmap}"
        pixels, caption, summary, computed = page_shows(tab)
        assert (caption, summary) == (want_caption, want_summary), where
        assert pixels.shape == want_pixels.shape, where
        difference = np.abs(pixels - want_pixels).max(axis=-1)
        assert (difference > EDGE_LEVELS).mean() <= PIXEL_TOLERANCE, f"{where}: {(difference > EDGE_LEVELS).mean():.4f}"
        assert difference.mean() <= MEAN_LEVELS, f"{where}: mean difference {difference.mean():.2f}"
        if computed is not None:
            layout, _, _, top, looks = states.state(settings)
            assert computed[0] == layout and computed[3] == top, where
            for i, (got, want) in enumerate(zip(computed[4], looks)):
                assert_looks_equal(got, want, f"{where}, artist {i}")
    shells["explorer"].close()
    assert problems == [], problems
    tab.close()


@pytest.mark.parametrize("name", NAMES)
def test_every_control_has_a_name_and_works_from_the_keyboard(name, pages, contexts):
    tab, problems = open_explorer(contexts[0]["desktop"], pages[name][1])
    still, unnamed = press_every_control(tab, "[data-d2l-explorer]")
    assert unnamed == [], f"{name}: controls without an accessible name: {unnamed}"
    assert still == [], f"{name}: a key on these controls changed nothing: {still}"
    assert problems == [], problems
    tab.close()


def smallest_text(declaration):
    """The size of the smallest text in the kernel's picture of ``declaration`` at its first state, in CSS
    pixels at the size the notebook shows it (figure.DPI): what a phone must keep readable."""
    explorer = Explorer(declaration)
    try:
        texts = [text for text in explorer.blit.figure.findobj(Text) if text.get_visible() and text.get_text().strip()]
        return min(text.get_fontsize() for text in texts) * DPI / 72
    finally:
        explorer.close()


@pytest.mark.parametrize("name", NAMES)
def test_every_control_has_a_unique_accessible_name(name, pages, contexts):
    """Chromium's own accessible name of every control, those of another mode's rows included, is
    non-empty and said of no other control of the explorer: eight boxes all named "q0" to "q3" would
    leave a screen reader's user guessing which example a box sets."""
    tab, problems = open_explorer(contexts[0]["desktop"], pages[name][1])
    names = accessible_names(tab, "[data-d2l-explorer]")
    assert names and all(names.values()), f"{name}: controls without an accessible name: {names}"
    repeated = sorted({said for said in names.values() if list(names.values()).count(said) > 1})
    assert repeated == [], f"{name}: names said of several controls: {repeated}"
    if name == "MaskedSoftmax":  # the per-query boxes say which example and query they set
        assert names[f"{tab.locator('[data-d2l-explorer]').get_attribute('id')}-query_len_1_0"] == \
            "example 1, query 0, valid length"
    assert problems == [], problems
    tab.close()


def test_the_mask_grid_is_one_tab_stop_moved_through_with_the_arrow_keys(pages, contexts):
    """The ARIA grid pattern: Tab enters the mask editor's grid once, at its current cell; the arrow keys,
    Home and End move the focus between cells; Space toggles the cell in focus, and the picture and the
    summary change; Tab leaves the grid for the next control, and Shift+Tab comes back to the same cell."""
    tab, problems = open_explorer(contexts[0]["desktop"], pages["MaskEditor"][1])
    root = "[data-d2l-explorer]"
    prefix = tab.locator(root).get_attribute("id")
    grid = tab.locator(f"{root} [role=grid]")
    assert grid.locator("[role=row]").count() == 6 and grid.locator("[role=gridcell]").count() == 36
    assert grid.get_attribute("aria-labelledby") and grid.get_attribute("aria-describedby")
    focused = "() => document.activeElement.id"
    tab.locator(f"#{prefix}-preset").focus()
    tab.keyboard.press("Tab")
    assert tab.evaluate(focused) == f"{prefix}-cell_0_0"
    moves = [("ArrowRight", "cell_0_1"), ("ArrowDown", "cell_1_1"), ("ArrowDown", "cell_2_1"),
             ("ArrowLeft", "cell_2_0"), ("ArrowLeft", "cell_2_0"), ("End", "cell_2_5"), ("ArrowRight", "cell_2_5"),
             ("Home", "cell_2_0"), ("ArrowUp", "cell_1_0"), ("Control+End", "cell_5_5"), ("ArrowDown", "cell_5_5"),
             ("Control+Home", "cell_0_0"), ("ArrowDown", "cell_1_0"), ("ArrowRight", "cell_1_1")]
    for key, cell in moves:
        tab.keyboard.press(key)
        assert tab.evaluate(focused) == f"{prefix}-{cell}", key
    label = tab.evaluate("() => document.activeElement.getAttribute('aria-label')")
    assert label == "query 1, key 1"
    before = explorer_state(tab, root), tab.locator(f"{root} .d2l-summary").text_content()
    checked = tab.evaluate("() => document.activeElement.checked")
    tab.keyboard.press("Space")
    assert tab.evaluate("() => document.activeElement.checked") is (not checked)
    after = explorer_state(tab, root), tab.locator(f"{root} .d2l-summary").text_content()
    assert after[0][2] != before[0][2] and after[1] != before[1], "Space changed neither the picture nor the summary"
    assert tab.evaluate("(id) => document.getElementById(id).value", f"{prefix}-preset") == \
        str(pages["MaskEditor"][0].control("preset").values().index("edited by hand"))
    # Every other cell is out of the Tab order: the next Tab stop is the first control after the grid.
    assert tab.locator(f"{root} .d2l-cell[tabindex='0']").count() == 1
    tab.keyboard.press("Tab")
    after_grid = tab.evaluate(focused)
    assert "cell_" not in after_grid and after_grid, after_grid
    tab.keyboard.press("Shift+Tab")
    assert tab.evaluate(focused) == f"{prefix}-cell_1_1"
    assert problems == [], problems
    tab.close()


def test_a_control_that_changes_nothing_is_disabled_and_says_why(pages, contexts):
    """Chapter 03's noise seed while the key noise is 0 (Declaration.inactive): the slider is disabled and
    a line tied to it (aria-describedby) says why; once the noise moves it is enabled and the line gone."""
    declaration, url = pages["Additive"]
    reason = declaration.control("seed").inactive_when[2]
    tab, problems = open_explorer(contexts[0]["desktop"], url)
    prefix = tab.locator("[data-d2l-explorer]").get_attribute("id")
    seed, noise = tab.locator(f"#{prefix}-seed"), tab.locator(f"#{prefix}-noise")
    described = "(e) => document.getElementById(e.getAttribute('aria-describedby') || '')?.textContent || ''"
    assert seed.is_disabled() and seed.evaluate(described) == reason
    assert tab.locator(f"#{prefix}-seed-reason").is_visible()
    noise.focus()
    tab.keyboard.press("ArrowRight")
    assert seed.is_enabled() and seed.evaluate(described) == ""
    assert not tab.locator(f"#{prefix}-seed-reason").is_visible()
    before = explorer_state(tab, "[data-d2l-explorer]")
    seed.focus()
    tab.keyboard.press("ArrowRight")
    assert explorer_state(tab, "[data-d2l-explorer]") != before, "the seed, enabled, changed nothing"
    noise.focus()
    tab.keyboard.press("ArrowLeft")
    assert seed.is_disabled()
    assert problems == [], problems
    tab.close()


@pytest.mark.parametrize("name", NAMES)
def test_on_a_phone_controls_answer_touch_and_nothing_scrolls_sideways(name, pages, contexts):
    """A tap moves the explorer; at 390 and 320 CSS pixels nothing scrolls sideways but the picture's
    labelled frame, every control is a target of 24 × 24 CSS pixels with each radio button and check box
    beside its label (page_support.phone_problems), and the picture's smallest text is READABLE_PX."""
    declaration, url = pages[name]
    tab, problems = open_explorer(contexts[0]["phone"], url)
    assert tab.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    slider = tab.locator("[data-d2l-explorer] input[type=range]").first
    target = slider if slider.count() else tab.locator("[data-d2l-explorer] input, [data-d2l-explorer] select").first
    before = explorer_state(tab, "[data-d2l-explorer]")
    box = target.bounding_box()
    tab.touchscreen.tap(box["x"] + box["width"] * 0.9, box["y"] + box["height"] / 2)
    if target.evaluate("e => e.tagName") == "SELECT":  # a tap opens a menu: pick with the keys instead
        target.press("ArrowDown")
        target.press("Enter")  # a phone's menu takes the option highlighted only then
    assert explorer_state(tab, "[data-d2l-explorer]") != before, f"{name}: a tap changed nothing"
    smallest = smallest_text(declaration)
    for width in PHONE_WIDTHS:
        tab.set_viewport_size({"width": width, "height": PHONE["height"]})
        assert phone_problems(tab, "[data-d2l-explorer]") == [], f"{name} at {width} px"
        shown = smallest * picture_scale(tab, "[data-d2l-explorer]")
        assert shown >= min(READABLE_PX, smallest) - 0.01, \
            f"{name} at {width} px: its smallest text is {shown:.1f} CSS px (in the notebook {smallest:.1f})"
    assert problems == [], problems
    tab.close()


@pytest.mark.parametrize("name", ADJUSTED)
def test_a_control_that_sets_others_sets_them_on_the_page_as_adjust_does(name, pages, contexts):
    """From the default state, every control moved to each of its other offered values: the page's
    settings afterwards are ``adjust``'s."""
    declaration, url = pages[name]
    tab, problems = open_explorer(contexts[0]["desktop"], url)
    data = tab.evaluate("() => document.querySelector('[data-d2l-explorer]').d2lExplorer.data")
    start = declaration.Settings()
    for control in declaration.controls:
        for index, value in enumerate(data["offered"][control.name]):
            if value == getattr(start, control.name):
                continue
            tab.evaluate("(settings) => document.querySelector('[data-d2l-explorer]').d2lExplorer.show(settings)",
                         dataclasses.asdict(start))  # back to the default state, quietly
            set_controls(tab, {control.name: index}, "fixed", "viridis")
            shown = tab.evaluate("() => document.querySelector('[data-d2l-explorer]').d2lExplorer.settings()")
            moved = dataclasses.replace(start, **{control.name: value})
            assert shown == dataclasses.asdict(declaration.adjust(moved, control.name)), f"{name}: {control.name}"
    assert problems == [], problems
    tab.close()


@pytest.mark.parametrize("name", [declaration.__name__ for declaration in DECLARATIONS if declaration.page_play])
def test_play_moves_the_slider_step_by_step_and_pauses(name, pages, chromium):
    """A recorded run replays: Play (a named button) moves its slider a step at a time and the picture
    with it; Pause stops it where it is, and so does any other control the learner moves. In a context
    of its own: Playwright's clock is the whole context's, and a page opened later in a shared one would
    wait for timers nobody runs."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    outside = keep_inside([context], pages.folder)
    tab, problems = open_explorer(context, pages[name][1], clock=True)
    play = tab.locator("[data-d2l-explorer] button.d2l-play")
    slider_id = play.get_attribute("aria-controls")
    slider = tab.locator(f"#{slider_id}")
    moved_past = "([id, at]) => Number(document.getElementById(id).value) > at"
    assert play.text_content() == "Play"
    start, before = int(slider.input_value()), explorer_state(tab, "[data-d2l-explorer]")
    play.click()
    assert play.text_content() == "Pause"
    tab.wait_for_function(moved_past, arg=[slider_id, start + 1])
    assert explorer_state(tab, "[data-d2l-explorer]") != before
    play.click()
    paused = int(slider.input_value())
    tab.clock.run_for(1000)  # a second of the page's time, at once: four steps, were it still playing
    assert int(slider.input_value()) == paused and play.text_content() == "Play"
    play.click()
    tab.clock.run_for(1000)  # the same second moves it while it plays: the clock runs the page's timer
    assert int(slider.input_value()) > paused
    other = tab.locator(f"[data-d2l-explorer] input:not(#{slider_id}), [data-d2l-explorer] select").first
    other.focus()
    tab.keyboard.press("ArrowRight" if other.evaluate("e => e.type") == "range" else "ArrowDown")
    moved = int(slider.input_value())
    tab.clock.run_for(1000)
    assert int(slider.input_value()) == moved and play.text_content() == "Play", "another control did not pause it"
    assert problems == [] and outside == [], (problems, outside)
    context.close()


@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_the_pages_number_formats_and_summaries_are_pythons(language, pages, pages_pt, contexts):
    """D2L.formatG, D2L.fixed and D2L.describeWeights against Python's format and plotting.describe_weights,
    on exact ties (0.125, 0.03125), powers of ten and seeded random weights with masks and labels; in
    Portuguese too, whose summaries write 0,41 for 0.41. A message said of a count takes the form
    Python's gettext takes: "0 consulta" in Portuguese (its plural rule is n > 1), "0 queries" in English."""
    with speaking(language):
        number_formats_and_summaries_are_pythons(pages if language == "en" else pages_pt, contexts)


def number_formats_and_summaries_are_pythons(pages, contexts):
    import torch

    from d2lmini.plotting import SUMMARY_WORDS, describe_weights

    tab, problems = open_explorer(contexts[0]["desktop"], pages["QueryPooling"][1])
    counts = [0, 1, 2, 5]
    said = tab.evaluate("(counts) => counts.map((n) => D2L.say(D2L_SETTINGS.summary.words, 'queries', {count: n}, n))",
                        counts)
    assert said == [SUMMARY_WORDS["queries"](n).format(count=n) for n in counts]
    rng = np.random.default_rng(0)
    numbers = [0.125, 0.375, 0.03125, 0.0078125, 1e-5, 17800.0, 1e5, 0.5, 2.5, 0.015, 0.045]
    numbers += [float(x) for x in 10.0 ** rng.uniform(-6, 6, 200)]
    got = tab.evaluate("(xs) => xs.map(x => [D2L.formatG(x, 3), D2L.formatG(x, 6), D2L.fixed(x, 2), D2L.fixed(x, 1)])",
                       numbers)
    assert got == [[f"{x:.3g}", f"{x:g}", f"{x:.2f}", f"{x:.1f}"] for x in numbers]
    for case in range(40):
        panels, queries, keys = int(rng.integers(1, 6)), int(rng.integers(1, 9)), int(rng.integers(1, 9))
        scores = torch.from_numpy(rng.normal(size=(panels, queries, keys)) * rng.uniform(0, 4)).float()
        mask = torch.from_numpy(rng.random((panels, queries, keys)) > rng.uniform(0, 0.6))
        weights = torch.softmax(scores.masked_fill(~mask, -torch.inf), -1).nan_to_num(0.0)
        if case % 4 == 0:
            weights, mask = torch.full((1, queries, keys), 1 / keys), None  # uniform: exact ties
        labels = {"queryLabels": [f"q{i}" for i in range(queries)], "keyLabels": [f"k {j}" for j in range(keys)]}
        titles = [f"head  {p}" for p in range(len(weights))]
        expected = describe_weights(weights, mask, query_labels=labels["queryLabels"],
                                    key_labels=labels["keyLabels"], titles=titles)
        shown = tab.evaluate("([w, m, options]) => D2L.describeWeights(w, m, options)",
                             [weights.tolist(), None if mask is None else mask.tolist(), {**labels, "titles": titles}])
        assert shown == expected, case
    assert problems == [], problems
    tab.close()


def test_the_portuguese_pages_own_words_are_the_catalogues(pages_pt, contexts):
    """The words of the page's shell, in Portuguese: the explorer's name, the note under it, the colour
    controls, Play and Pause, a slider's number with a decimal comma, and what a state not offered says."""
    with speaking("pt_BR"):
        declaration, url = pages_pt["Alignment"]
        words = page_words.said(page_words.SHELL_WORDS)
        labels = list(page_words.said({name: label for label, name in CMAPS}).values())
        title = page_words.title(declaration)
    tab, problems = open_explorer(contexts[0]["desktop"], url)
    root = tab.locator("[data-d2l-explorer]")
    assert tab.evaluate("() => document.documentElement.lang") == "pt-BR"
    assert root.get_attribute("aria-label") == title == "Explorador dos alinhamentos"
    with speaking("pt_BR"):
        recorded = declaration.page_note  # the runs recorded, every how many steps, what needs a kernel
    assert recorded.startswith("Execuções gravadas")
    assert root.locator(".d2l-note").text_content() == f"{words['stored']} {words['run']} {recorded}"
    assert root.locator(f"#{root.get_attribute('id')}-colour-scale").text_content() == "cores"
    colours = tab.evaluate("""() => {
        const explorer = document.querySelector('[data-d2l-explorer]').d2lExplorer;
        return [[...explorer.scaleGroup.querySelectorAll('label')].map((label) => label.textContent),
                explorer.mapSelect.labels[0].textContent, [...explorer.mapSelect.options].map((o) => o.textContent)];
    }""")
    assert colours == [["0 a 1", "ajustar aos pesos"], "mapa", labels]
    play = root.locator("button.d2l-play")
    assert play.text_content() == "Reproduzir"
    play.click()
    assert play.text_content() == "Pausar"
    play.click()
    assert play.text_content() == "Reproduzir"
    tab.evaluate("() => { const explorer = document.querySelector('[data-d2l-explorer]').d2lExplorer;"
                 " explorer.data.states = {}; explorer.render(); }")
    assert root.locator(".d2l-summary").text_content() == words["not offered"]
    assert problems == [], problems
    tab.close()
    tab, problems = open_explorer(contexts[0]["desktop"], pages_pt["DotProduct"][1])
    slider = tab.locator("[data-d2l-explorer] input[type=range]").nth(1)  # the temperature, on a log scale
    slider.evaluate("(element) => { element.value = '14'; element.dispatchEvent(new Event('input')); }")
    assert tab.locator("[data-d2l-explorer] output").nth(1).text_content() == "0,5"  # 10^-0.3, to 2 digits
    assert problems == [], problems
    tab.close()



GRIDS = [d.__name__ for d in DECLARATIONS if any(row.columns for row in d.for_page().arrangement())]


@pytest.mark.parametrize("name", GRIDS)
def test_a_grid_of_cells_puts_each_cell_at_its_row_and_column(name, pages, contexts):
    """The mask editor's cell (i, j) sits in row i and column j of its grid, on a desktop and a phone: a
    cell shifted by one would have the learner mask one key and see another masked. (The site's test
    checks the same under the site's theme, whose styles once shifted every cell.)"""
    for device in ("desktop", "phone"):
        tab, problems = open_explorer(contexts[0][device], pages[name][1])
        assert tab.locator("[data-d2l-explorer] [role=grid] .d2l-cell").count() >= 1
        assert grid_problems(tab, "[data-d2l-explorer]") == [], f"{name} on a {device}"
        assert problems == [], problems
        tab.close()


def _boxes(pages, boxes, file):
    """A page of the alignment explorer's boxes, each with its attributes (``boxes``: a dict of
    data-* attributes each), beside the explorer's scripts in ``pages``' folder; its file URL."""
    import html as html_module
    import json

    declaration, _ = pages["Alignment"]
    text = page.page_html([declaration.name], {declaration.name: [f"{declaration.name}.js"]})
    tags = "\n".join(f'<div id="explorer-{i}" data-d2l-explorer="{declaration.name}"'
                     + "".join(f" {key}='{html_module.escape(json.dumps(value) if key.endswith('start') else value)}'"
                               for key, value in attributes.items()) + "></div>"
                     for i, attributes in enumerate(boxes))
    text = re.sub(r'<div id="explorer-0"[^>]*></div>', lambda _: tags, text)
    path = pages.folder / file
    path.write_text(text)
    return declaration, path.as_uri()


@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_each_box_starts_where_its_chapter_shows_it_and_copies_of_one_widget_follow_each_other(
        language, pages, pages_pt, contexts):
    """Three boxes of chapter 08's replay on one page: two copies of one kernel widget (one data-d2l-link)
    that start at other settings (data-d2l-start), and another widget. Each first paints what the
    kernel's shell draws at its start and its controls show it; a run and a step chosen in one copy move
    the other, as the kernel's copies are one widget, and leave the other widget alone."""
    chosen = pages if language == "en" else pages_pt
    starts = [{"run": "notebook", "step": 0, "example": 0}, {"run": "additive", "step": 140, "example": 2},
              {"run": "notebook", "step": 400, "example": 0}]
    boxes = [{"data-d2l-start": starts[0], "data-d2l-link": "view"}, {"data-d2l-start": starts[1]},
             {"data-d2l-start": starts[2], "data-d2l-link": "view"}]
    declaration, url = _boxes(chosen, boxes, "alignment-boxes.html")
    tab = contexts[0]["desktop"].new_page()
    problems = []
    tab.on("pageerror", lambda error: problems.append(str(error)))
    tab.goto(url)
    tab.wait_for_function("() => document.querySelectorAll('.d2l-ready').length === 3", timeout=30_000)
    shown = tab.evaluate("""() => [...document.querySelectorAll('[data-d2l-explorer]')].map((root) => ({
        settings: root.d2lExplorer.settings(), caption: root.querySelector('.d2l-caption').textContent,
        png: root.querySelector('canvas').toDataURL('image/png')}))""")
    with speaking(language):
        for start, box in zip(starts, shown):
            assert box["settings"] == start
            explorer = Explorer(declaration, declaration.Settings(**start))
            want = np.asarray(Image.open(io.BytesIO(bytes(explorer.image.value))).convert("RGBA")).astype(int)
            assert box["caption"] == explorer.caption_text, start
            explorer.close()
            got = np.asarray(Image.open(io.BytesIO(base64.b64decode(box["png"].split(",", 1)[1])))).astype(int)
            difference = np.abs(got - want).max(axis=-1)
            assert (difference > EDGE_LEVELS).mean() <= PIXEL_TOLERANCE and difference.mean() <= MEAN_LEVELS, start
    tab.select_option("#explorer-2-run", index=3)  # the second copy: learning rate 0.03
    tab.locator("#explorer-2-step").focus()
    tab.keyboard.press("Home")
    settings = tab.evaluate("() => [...document.querySelectorAll('[data-d2l-explorer]')].map((root) => "
                            "[root.d2lExplorer.settings(), root.dataset.state])")
    assert settings[2][0] == {"run": "learning rate 0.03", "step": 0, "example": 0}
    assert settings[0] == settings[2], "the other copy of the widget did not follow"
    assert settings[1][0] == starts[1], "another widget moved"
    assert problems == [], problems
    tab.close()


def test_a_start_the_page_does_not_offer_is_an_error_naming_it(pages, contexts):
    """The site's build refuses such a start (build_site.start_settings); a page given one anyway says
    which setting and what it offers, rather than start somewhere else."""
    _, url = _boxes(pages, [{"data-d2l-start": {"step": 5}}], "alignment-bad-start.html")
    tab = contexts[0]["desktop"].new_page()
    with tab.expect_event("pageerror") as error:
        tab.goto(url)
    message = str(error.value)
    assert "AlignmentExplorer: data-d2l-start gives step = 5, expected one of [0,20,40," in message, message
    tab.close()
