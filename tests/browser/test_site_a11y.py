"""The web site against WCAG 2.1 AA, in Chromium: what a checker can find, and what a keyboard shows.

* axe-core (installed from npm by `make install-test` into .venv/axe) runs on every page of the
  English site, the landing page, every chapter and every guide, and on a sample of the Portuguese
  one (pt/: its landing page, chapter 02 and the glossary; its other pages are the English ones'
  templates with other words), in light and in dark mode, once the page's explorers and maths are
  drawn, with the rules tagged WCAG 2.0 and 2.1, levels A and AA. It must report no violation.
  axe cannot judge alt text or reading order: a person does.
* The first Tab stop of a chapter is a link that skips to the main content, and it works.
* Every element a keyboard reaches on a chapter page shows that it has the focus: an outline or a
  box shadow (in light mode: the theme draws the same rings in both).
* Every live explorer is a group with a name, and its text summary is a live region that changes
  after a key press on its controls (so a screen reader reads it out), but was not one while the
  page filled it in first (every explorer would be read out as the page loads).

The site is conftest.built_site, the one test_site.py reads: built once per run.
"""

from pathlib import Path

import pytest
from conftest import require_chromium
from playwright.sync_api import expect
from support import skip_or_fail

from tools import build_site

REPO = Path(__file__).resolve().parents[2]


AXE = REPO / ".venv" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
CHAPTERS = [path.stem for path in build_site.chapter_sources()]
GUIDES = [f"docs/{guide}" for guide in build_site.GUIDES] + ["benchmarks/README"]
# The Portuguese book's pages (pt/), and those axe checks: its landing page, the chapter with explorers of
# every kind of control (as TABBED_CHAPTER below), and the glossary.
PORTUGUESE_PAGES = [f"pt/{name}" for name in build_site.book_pages(build_site.BOOKS[1])]
PORTUGUESE_CHECKED = ["pt/index", "pt/02_masked_softmax", "pt/glossario"]
PAGES = ["index", "search", "genindex", *CHAPTERS, *GUIDES, *PORTUGUESE_CHECKED]
DESKTOP = {"width": 1400, "height": 1000}
# Where a keyboard goes through a whole page: a chapter with explorers of every kind of control
# (sliders, menus, check boxes as cells, radio buttons), folded answers and a why-question.
TABBED_CHAPTER = "02_masked_softmax"
NO_TRANSITIONS = "*, *::before, *::after { transition: none !important; }"
MAX_TAB_STOPS = 2000  # more means the focus never came back to the start
TAB_BATCH = 25  # Tab presses between two looks at whether the focus came round
# Each element that gets the focus, once, and whether it shows it: an outline or a box shadow that
# is not transparent, on an element that is not clipped to nothing. cameRound: the focus came
# back to an element it had already been on.
RECORD_FOCUS = """() => {
  window.tabStops = [];
  window.cameRound = false;
  const seen = new Set();
  const transparent = (colour) => colour === 'transparent' || /rgba\\(.*, 0\\)$/.test(colour);
  document.addEventListener('focusin', (event) => {
    const element = event.target;
    if (seen.has(element)) window.cameRound = true;
    if (window.cameRound) return;
    seen.add(element);
    const style = getComputedStyle(element);
    const box = element.getBoundingClientRect();
    const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0
        && !transparent(style.outlineColor);
    const shadow = style.boxShadow !== 'none' && !transparent(style.boxShadow.split(') ')[0] + ')');
    window.tabStops.push({marked: (outline || shadow) && box.width > 1 && box.height > 1,
                          what: element.outerHTML.slice(0, 160)});
  });
}"""

# Every time an explorer's summary gets a new text, with the summary's aria-live at that moment:
# installed before the page's own scripts, so that the first text is seen too. The observer runs
# after the page's script has made its changes, so the aria-live of a change is read from the
# next change of that attribute, if there is one.
RECORD_SUMMARY_CHANGES = """
window.summaryChanges = [];
new MutationObserver((mutations) => mutations.forEach((mutation, i) => {
  const target = mutation.target;
  if (mutation.type !== 'childList' || !target.classList?.contains('d2l-summary')) return;
  const next = mutations.slice(i + 1).find(m => m.type === 'attributes' && m.target === target);
  window.summaryChanges.push({id: target.id, live: next ? next.oldValue : target.getAttribute('aria-live')});
})).observe(document, {subtree: true, childList: true, attributeFilter: ['aria-live'], attributeOldValue: true});
"""


@pytest.fixture(scope="module")
def axe_source():
    """axe-core's script; without it the checks are skipped, except under CI=true, where they fail."""
    if not AXE.is_file():
        message = f"axe-core is missing at {AXE}: run `make install-test`, which installs it from npm"
        skip_or_fail(message)
    return AXE.read_text()


@pytest.fixture(scope="module")
def light_context(chromium, built_site):
    """A desktop with light mode stored as the theme stores a reader's choice (and as a first visit
    gets it), and the summaries' changes recorded."""
    require_chromium()
    context = chromium.new_context(viewport=DESKTOP)
    context.add_init_script("localStorage.setItem('mode', 'light'); localStorage.setItem('theme', 'light');")
    context.add_init_script(RECORD_SUMMARY_CHANGES)
    yield context
    context.close()


def _open_drawn(context, url):
    """Open ``url`` and wait until its explorers are live (each loads as the reader nears it); its
    formulas were drawn when the site was built."""
    page = context.new_page()
    page.goto(url, wait_until="load")
    for root in page.evaluate("() => [...document.querySelectorAll('[data-d2l-explorer]')].map(e => e.id)"):
        page.locator(f"#{root}").scroll_into_view_if_needed()
        page.wait_for_selector(f"#{root}.d2l-ready", timeout=30_000)
    page.evaluate("() => window.scrollTo(0, 0)")
    return page


def test_every_page_of_the_site_is_checked(built_site):
    """Every English page is checked, and the Portuguese sample: a page the lists lack fails."""
    known = set(PAGES) | set(PORTUGUESE_PAGES)
    found = {path.relative_to(built_site.folder).with_suffix("").as_posix()
             for path in built_site.folder.rglob("*.html") if "_static" not in path.parts}
    assert found == known, f"pages not in PAGES: {sorted(found - known)}; gone: {sorted(known - found)}"
    assert set(PORTUGUESE_CHECKED) <= set(PORTUGUESE_PAGES)


def _axe_violations(page, axe_source):
    page.add_script_tag(content=axe_source)
    return page.evaluate("""async (tags) => {
        const results = await axe.run(document, {runOnly: {type: 'tag', values: tags}});
        return results.violations.flatMap(rule => rule.nodes.map(node =>
            `${rule.id} (${rule.impact}) at ${node.target.join(' ')}: ${rule.help}; ${node.failureSummary}`));
    }""", AXE_TAGS)


def _theme(page):
    return page.evaluate("() => document.documentElement.dataset.theme")


@pytest.mark.parametrize("name", PAGES)
def test_axe_finds_no_wcag_violation_in_light_or_dark_mode(built_site, light_context, axe_source, name):
    """The page opens in light mode, as a first visit does; then the reader's own button turns it dark
    (one page load for both modes: the theme changes colours only, by CSS)."""
    page = _open_drawn(light_context, (built_site.folder / f"{name}.html").as_uri())
    violations = {}
    try:
        themes = [_theme(page)]
        violations["light"] = _axe_violations(page, axe_source)
        # The colours the page ends in, at once: some of the theme's elements fade to the new mode's.
        page.add_style_tag(content=NO_TRANSITIONS)
        button = page.locator(".theme-switch-button:visible").first
        while _theme(page) != "dark" and len(themes) < 4:  # light -> auto (light here) -> dark
            button.click()
            themes.append(_theme(page))
        page.mouse.move(0, 0)  # away from the button, whose tooltip is not part of the page
        violations["dark"] = _axe_violations(page, axe_source)
    finally:
        page.close()
    assert themes[0] == "light" and themes[-1] == "dark", f"{name}: the themes shown were {themes}"
    found = [f"{mode} mode: {violation}" for mode, found in violations.items() for violation in found]
    assert not found, f"{name}, {len(found)} violation(s):\n" + "\n".join(found)


def test_skip_link_is_the_first_tab_stop_and_leads_to_the_main_content(built_site, light_context):
    page = _open_drawn(light_context, (built_site.folder / f"{TABBED_CHAPTER}.html").as_uri())
    try:
        page.keyboard.press("Tab")
        link = page.locator("a[href='#main-content']")
        expect(link).to_be_focused()
        expect(link).to_have_text("Skip to main content")
        expect(link).to_be_in_viewport(ratio=1)  # it slides in when focused
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        after = page.evaluate("""() => ({hash: location.hash,
            inMain: Boolean(document.activeElement.closest('#main-content'))})""")
    finally:
        page.close()
    assert after == {"hash": "#main-content", "inMain": True}, after


def test_focus_is_visible_on_every_element_the_keyboard_reaches(built_site, light_context):
    page = _open_drawn(light_context, (built_site.folder / f"{TABBED_CHAPTER}.html").as_uri())
    try:
        # The focus style each element ends in, at once: Bootstrap's buttons fade their ring in.
        page.add_style_tag(content=NO_TRANSITIONS)
        page.evaluate(RECORD_FOCUS)
        ended = False
        while not ended and page.evaluate("() => window.tabStops.length") < MAX_TAB_STOPS:
            for _ in range(TAB_BATCH):
                page.keyboard.press("Tab")
            ended = page.evaluate("() => window.cameRound || document.activeElement === document.body")
        stops = page.evaluate("() => window.tabStops")
    finally:
        page.close()
    assert 50 < len(stops) < MAX_TAB_STOPS, f"{len(stops)} tab stops on {TABBED_CHAPTER}"
    unmarked = [stop["what"] for stop in stops if not stop["marked"]]
    assert not unmarked, f"{len(unmarked)} of {len(stops)} tab stops show no focus: {unmarked}"


def _press_once(page, control):
    """A key press that moves ``control`` (an element handle) from where it is."""
    kind = control.evaluate("e => e.tagName === 'SELECT' ? 'select' : e.type")
    control.focus()
    if kind == "range":
        page.keyboard.press("ArrowLeft" if control.evaluate("e => e.value === e.max") else "ArrowRight")
    elif kind == "select":
        page.keyboard.press("ArrowUp" if control.evaluate("e => e.selectedIndex === e.options.length - 1")
                            else "ArrowDown")
    elif kind in ("checkbox", "radio"):
        page.keyboard.press("Space")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_explorers_are_named_groups_whose_summary_is_announced_after_a_key_press(built_site, light_context,
                                                                                chapter):
    page = _open_drawn(light_context, (built_site.folder / f"{chapter}.html").as_uri())
    try:
        roots = page.evaluate("() => [...document.querySelectorAll('[data-d2l-explorer]')].map(e => e.id)")
        if not roots:
            pytest.skip(f"{chapter} shows no explorer")
        labels = [page.locator(f"#{root}").get_attribute("aria-label") or "" for root in roots]
        # Named as a screen reader finds it: by its role and accessible name.
        named = [page.locator(f"#{root}").and_(page.get_by_role("group", name=label, exact=True)).count()
                 for root, label in zip(roots, labels)]
        announced = {}
        for root in roots:
            summary = page.locator(f"#{root} .d2l-summary")
            before = summary.text_content()
            # Play buttons are left alone: their steps come on a timer, not from the key press.
            for control in page.locator(f"#{root} :is(input, select):not([hidden] *)").element_handles():
                _press_once(page, control)
                if summary.text_content() != before:
                    break
            announced[root] = summary.text_content() != before
        changes = page.evaluate("() => window.summaryChanges")
    finally:
        page.close()
    assert named == [1] * len(roots) and all(label.endswith(" explorer") for label in labels), labels
    assert all(announced.values()), f"{chapter}: no key press changed these explorers' summaries: {announced}"
    for root in roots:
        seen = [change["live"] for change in changes if change["id"] == f"{root}-summary"]
        assert seen and seen[0] is None, f"{root}: its first summary was read out as the page loaded: {seen}"
        assert seen[1:] and all(live == "polite" for live in seen[1:]), f"{root}: later summaries silent: {seen}"
