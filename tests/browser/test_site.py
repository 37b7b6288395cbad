"""The web site (make site, tools/build_site.py), built here and read in Chromium with nothing from outside its folder.

The build runs with a proxy that answers nothing, so a build that needed the
network would fail. Every page, English or Portuguese, is opened from disk with
every request outside the site's folder aborted, and must show no console error
and no failed request; its images must load, sharp at a device scale factor of
2, its math must render, its internal links must resolve, and it must fit a
phone's width. The launch buttons must open the chapter's learner edition (a
Portuguese chapter's: pt/ in the learner branch), each language's search must
find its chapter 02 and only its own pages, every page must link to itself in
the other language, and no exercise's answer may appear anywhere in the folder.
Every explorer a chapter shows is live on its page, on a desktop and on a phone,
and every one of its controls moves it from the keyboard; on a phone, at 390 and
320 CSS pixels, in both languages, nothing of it scrolls sideways but its
picture's labelled frame, its controls are targets for a finger, and its
picture keeps the notebook's size. What the site adds to
a Portuguese page is Portuguese, and tools/site_words.py names every sentence of
it whose English has changed.
"""

import html
import os
import re
import statistics
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
import yaml
from conftest import SCREENSHOTS, SITE_HUB, explorer_assets, require_chromium
from matplotlib.colors import to_rgba
from page_support import grid_problems, keep_inside, phone_problems, picture_scale, press_every_control

from d2lmini import i18n
from d2lmini.dark import DARK_BACKGROUND, DARK_TEXT, TEXT_CONTRAST, contrast
from tools import build_site, site_words
from tools.editions import BEGIN, END, EXERCISE, solution_regions, tags

REPO = Path(__file__).resolve().parents[2]

ENGLISH, PORTUGUESE = build_site.BOOKS  # the English book at the site's root, the Portuguese one in pt/
assert (ENGLISH.folder, PORTUGUESE.folder, PORTUGUESE.lang) == ("en", "pt", "pt-BR")
CHAPTERS = [path.stem for path in build_site.chapter_sources()]
GUIDES = [f"docs/{guide}" for guide in build_site.GUIDES] + ["benchmarks/README"]
ENGLISH_PAGES = ["index", "search", "genindex", *CHAPTERS, *GUIDES]
PORTUGUESE_PAGES = build_site.book_pages(PORTUGUESE)  # its landing page, search, index, chapters, glossary
PAGES = ENGLISH_PAGES + [f"pt/{name}" for name in PORTUGUESE_PAGES]  # each page's path in the site, less .html
PHONE = {"width": 390, "height": 844}
# The widths a phone's explorers are checked at: PHONE's, and the narrowest WCAG 1.4.10 names.
PHONE_WIDTHS = (PHONE["width"], 320)
LOAD_MS = {}  # page -> milliseconds to its load event, reported in build/screenshots/site.txt
DESKTOP = {"width": 1400, "height": 1000}


@pytest.fixture(scope="module")
def site(built_site):
    """The learner edition's site with a hub button (conftest.built_site: built with no way out to the network)."""
    out = built_site.folder
    size = build_site.folder_size(out) / 1e6
    yield out
    loads = sorted(LOAD_MS.values())
    median = statistics.median(loads) if loads else 0
    summary = (f"site built in {built_site.seconds:.1f} s, {size:.1f} MB; {len(loads)} pages opened from disk, "
               f"load event median {median:.0f} ms, max {max(loads, default=0):.0f} ms (device scale factor 2, "
               f"load average {os.getloadavg()[0]:.1f})\n")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "site.txt").write_text(summary)


@pytest.fixture(scope="module")
def site_browser(chromium, site):
    """Two contexts: a HiDPI desktop and a phone; every request outside ``site`` is aborted and recorded."""
    contexts = {name: chromium.new_context(viewport=viewport, device_scale_factor=2)
                for name, viewport in (("desktop", DESKTOP), ("phone", PHONE))}
    outside = keep_inside(contexts.values(), site)
    yield contexts, outside
    for context in contexts.values():
        context.close()


def _open(context, url):
    """Open ``url``; return the page and the list its console errors and failed requests go into."""
    page = context.new_page()
    problems = []
    page.on("console", lambda message: message.type == "error" and problems.append(f"console: {message.text}"))
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("requestfailed", lambda request: problems.append(f"request failed: {request.url}"))
    page.goto(url, wait_until="load")
    return page, problems


def _internal_targets(page):
    return page.evaluate("""() => [...document.querySelectorAll('a[href]')]
        .map(a => a.href).filter(href => href.startsWith('file:'))""")


class _Page(HTMLParser):
    """A page of the site as a browser reads it: its text (no tags, entities decoded), the ids of its
    elements, and its links, each as {"text", "href", "title"}."""

    def __init__(self, page_html):
        super().__init__()
        self.ids, self.links, self._text, self._link = set(), [], [], None
        self.feed(page_html)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a":
            self._link = {"text": "", "href": attrs.get("href"), "title": attrs.get("title")}

    def handle_endtag(self, tag):
        if tag == "a" and self._link is not None:
            self.links.append(self._link)
            self._link = None

    def handle_data(self, data):
        self._text.append(data)
        if self._link is not None:
            self._link["text"] += data

    @property
    def text(self):
        return "".join(self._text)


def _ids(path, cache={}):  # noqa: B006 - a cache of each page's ids, for this module's run
    if path not in cache:
        cache[path] = _Page(path.read_text()).ids
    return cache[path]


@pytest.mark.parametrize("name", PAGES)
def test_page_reads_offline_with_images_math_links_and_a_phone_width(site, site_browser, name):
    require_chromium()
    contexts, outside = site_browser
    blocked_before = len(outside)
    url = (site / f"{name}.html").as_uri()
    page, problems = _open(contexts["desktop"], url)
    try:
        # Figures load lazily, as the reader scrolls to them: load them all now.
        page.evaluate("() => document.querySelectorAll('img[loading=lazy]').forEach(img => { img.loading = 'eager'; })")
        page.wait_for_function("() => [...document.images].every(image => image.complete)", timeout=15_000)
        images = page.evaluate("""() => [...document.images].map(image => ({
            src: image.src, natural: image.naturalWidth, shown: image.getBoundingClientRect().width}))""")
        # Formulas are drawn when the site is built (site/conf.py): an SVG, and MathML for screen readers.
        math = page.evaluate("""() => ({source: document.querySelectorAll('.math').length,
            rendered: document.querySelectorAll('.math > mjx-container > svg + mjx-assistive-mml > math').length,
            errors: document.querySelectorAll('[data-mjx-error], mjx-merror').length,
            scripts: [...document.scripts].filter(script => /mathjax/i.test(script.src)).length})""")
        targets = _internal_targets(page)
        LOAD_MS[name] = page.evaluate("() => performance.getEntriesByType('navigation')[0].loadEventEnd")
    finally:
        page.close()
    assert not problems, f"{name}: {problems}"
    assert len(outside) == blocked_before, f"{name} asked for something outside the site: {outside[blocked_before:]}"
    assert all(image["natural"] > 0 for image in images), f"{name}: images that did not load: {images}"
    blurry = [image for image in images if image["natural"] < 1.9 * image["shown"]]
    assert not blurry, f"{name}: images with fewer than 2 pixels per CSS pixel (blurry on HiDPI): {blurry}"
    assert math["rendered"] == math["source"] and not math["errors"], f"{name}: math not rendered: {math}"
    assert not math["scripts"], f"{name} loads MathJax, although its formulas are drawn already"
    broken = []
    for target in targets:
        parts = urlsplit(target)
        path = Path(unquote(parts.path))
        if not path.is_file() or site not in path.parents:
            broken.append(target)
        elif parts.fragment and path.suffix == ".html" and unquote(parts.fragment) not in _ids(path):
            broken.append(target)
    assert not broken, f"{name}: internal links that lead nowhere: {broken}"

    phone, problems = _open(contexts["phone"], url)
    try:
        widths = phone.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    finally:
        phone.close()
    assert widths[0] <= widths[1], f"{name} is {widths[0]} px wide on a {widths[1]} px phone screen"
    assert not problems, f"{name} on a phone: {problems}"


def _explorers_stored(chapter):
    """How many explorers the chapter's stored outputs show (each is live on its page)."""
    nb = nbformat.read(REPO / "notebooks" / f"{chapter}.ipynb", as_version=4)
    return sum(build_site.explorer_name(output) is not None for cell in nb.cells for output in cell.get("outputs", []))


def _on_phones(page, roots):
    """What is wrong with the explorers ``roots`` (element ids) of ``page`` on a phone, at each of
    PHONE_WIDTHS (the page resized, not opened again): page_support.phone_problems (nothing scrolls
    sideways but the picture's labelled frame, tap targets of 24 × 24 CSS pixels, radio buttons and
    check boxes beside their labels), and a picture shown smaller than in the notebook, where its
    smallest text would be too small to read (chapter 09's tokens were 4 CSS pixels tall). At the
    narrowest width, the arrow key scrolls a picture's frame that has the focus."""
    found = []
    for width in PHONE_WIDTHS:
        page.set_viewport_size({"width": width, "height": PHONE["height"]})
        for root in roots:
            found += [f"{root} at {width} px: {problem}" for problem in phone_problems(page, f"#{root}")]
            scale = picture_scale(page, f"#{root}")
            if scale < 0.999:
                found.append(f"{root} at {width} px: its picture is shown at {scale:.2f} of its notebook size")
    for root in roots:
        frame = page.locator(f"#{root} .d2l-frame[tabindex='0']")
        if not frame.count():  # the picture fits: nothing to scroll (phone_problems checked that)
            continue
        frame.evaluate("e => { e.scrollLeft = 0; }")
        frame.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("(e) => e.scrollLeft > 0", arg=frame.element_handle(), timeout=5_000)
    return found
def _first_paint_is_the_stored_picture(page, root, html_path, language):
    """The explorer ``root`` (just drawn, untouched) starts where its chapter's picture is: its controls
    show its box's data-d2l-start, and its canvas is the picture a reader without JavaScript sees
    (the box's <img>, read from the built page: the stored picture, or a replay's own for chapter
    08's training view), between its caption and its hint rows (``Explorer.static_png``), within the
    page-vs-kernel tolerance of tests/browser/test_page_explorers.py. Returns the settings shown."""
    import base64
    import io
    import json

    import numpy as np
    from PIL import Image
    from test_page_explorers import EDGE_LEVELS, MEAN_LEVELS, PIXEL_TOLERANCE

    from d2lmini.widgets.explorer import HINT, _text_rows

    assert page.evaluate("() => document.documentElement.dataset.theme") != "dark", \
        f"{html_path.name}: the page opened dark, and the picture without JavaScript is the light one"
    box = re.search(rf'<div [^>]*id="{root}"[^>]*>\s*<img src="([^"]+)"', html_path.read_text())
    start = page.get_attribute(f"#{root}", "data-d2l-start")
    shown = page.evaluate("""(id) => {
        const explorer = document.getElementById(id).d2lExplorer;
        return {settings: explorer.settings(), caption: explorer.caption.textContent,
                png: explorer.canvas.toDataURL('image/png')};
    }""", root)
    assert start is not None, f"{root}: no data-d2l-start"
    assert {name: shown["settings"][name] for name in json.loads(start)} == json.loads(start), root
    canvas = np.asarray(Image.open(io.BytesIO(base64.b64decode(shown["png"].split(",", 1)[1]))).convert("RGBA"))
    stored = np.asarray(Image.open(html_path.parent / box.group(1)).convert("RGBA"))
    with build_site.speaking(language):
        top = _text_rows(stored.shape[1], shown["caption"], weight="bold").shape[0]
        bottom = _text_rows(stored.shape[1], i18n._(HINT), style="italic", color="#555555").shape[0]
    assert stored.shape[0] == top + canvas.shape[0] + bottom and stored.shape[1] == canvas.shape[1], root
    difference = np.abs(stored[top:top + canvas.shape[0]].astype(int) - canvas.astype(int)).max(axis=-1)
    where = f"{html_path.name} {root} at {shown['settings']}"
    assert (difference > EDGE_LEVELS).mean() <= PIXEL_TOLERANCE, f"{where}: {(difference > EDGE_LEVELS).mean():.4f}"
    assert difference.mean() <= MEAN_LEVELS, f"{where}: mean difference {difference.mean():.2f}"
    return shown["settings"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_explorer_of_a_chapter_is_live_on_its_page_and_every_control_moves_it(site, site_browser, chapter):
    """On a desktop and a phone: every explorer the chapter stores is live, and each of its controls
    moves it from the keyboard, with a name; on the phone, at 390 and 320 CSS pixels, nothing of it
    scrolls sideways but its picture, every control is a target for a finger, and the picture keeps
    the notebook's size."""
    require_chromium()
    contexts, outside = site_browser
    blocked_before = len(outside)
    for device in ("desktop", "phone"):
        page, problems = _open(contexts[device], (site / f"{chapter}.html").as_uri())
        try:
            roots = page.evaluate("() => [...document.querySelectorAll('[data-d2l-explorer]')].map(e => e.id)")
            assert len(roots) == _explorers_stored(chapter), f"{chapter}: {roots}"
            starts = []
            for root in roots:
                page.locator(f"#{root}").scroll_into_view_if_needed()  # its data loads as the reader nears it
                page.wait_for_selector(f"#{root}.d2l-ready", timeout=20_000)
                if device == "desktop":  # each, before any control moves (copies of one widget move together)
                    starts.append(_first_paint_is_the_stored_picture(page, root, site / f"{chapter}.html", "en"))
            for root in roots:
                still, unnamed = press_every_control(page, f"#{root}")
                assert still == [] and unnamed == [], f"{chapter} {root} on a {device}: {still} {unnamed}"
                assert grid_problems(page, f"#{root}") == [], f"{chapter} {root} on a {device}"
            widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
            assert widths[0] <= widths[1], f"{chapter} is {widths[0]} px wide on a {widths[1]} px {device} screen"
            if device == "phone":
                assert _on_phones(page, roots) == [], chapter
            if device == "desktop" and chapter.startswith("08_"):
                _chapter_08_starts_and_links(page, roots, starts)
        finally:
            page.close()
        assert not problems, f"{chapter} on a {device}: {problems}"
    assert len(outside) == blocked_before, f"{chapter} asked for something outside the site"


def _chapter_08_starts_and_links(page, roots, starts):
    """Chapter 08: the alignment explorer starts at the click (step 140) and the training view's two copies
    at a recorded run (the notebook's); choosing a run and a step in one copy moves the other, as the
    kernel's copies (one widget) move together, and leaves the alignment explorer (another widget) alone."""
    links = [page.get_attribute(f"#{root}", "data-d2l-link") for root in roots]
    assert starts[1]["step"] == 140 and starts[0]["run"] == starts[2]["run"] == "notebook", starts
    assert links[0] == links[2] != links[1], links
    first, alignment, last = roots
    options = page.evaluate("""(id) => [...document.getElementById(id).d2lExplorer.elements.run.options]
        .map((option) => option.textContent)""", first)
    assert len(options) == 4, options
    before = page.evaluate("(id) => document.getElementById(id).d2lExplorer.settings()", alignment)
    page.select_option(f"#{first}-run", index=3)  # learning rate 0.03
    page.locator(f"#{first}-step").focus()
    page.keyboard.press("End")
    shown = page.evaluate("""(ids) => ids.map((id) => [document.getElementById(id).d2lExplorer.settings(),
        document.getElementById(id).dataset.state])""", [first, alignment, last])
    assert shown[0][0]["run"] == "learning rate 0.03" and shown[0][0]["step"] == 400, shown
    assert shown[2] == shown[0], "the other copy did not follow"
    assert shown[1][0] == before, "the alignment explorer, another widget, moved"


def _chapter_links(page, line_start, goals_words):
    """The theme's launch buttons and the chapter's first line of links (the paragraph that starts with
    ``line_start``), as [label, url] pairs, and whether that line comes after the chapter's title and
    goals (the paragraph holding ``goals_words``)."""
    launch = page.evaluate("""() => [...document.querySelectorAll('.dropdown-launch-buttons a')]
        .map(a => [a.textContent.trim(), a.href])""")
    run_line, after_goals = page.evaluate("""([start, goalsWords]) => {
        const paragraphs = [...document.querySelectorAll('.bd-article p')];
        const line = paragraphs.findIndex(p => p.textContent.startsWith(start));
        const goals = paragraphs.findIndex(p => p.textContent.includes(goalsWords));
        return [line < 0 ? [] : [...paragraphs[line].querySelectorAll('a')]
            .map(a => [a.textContent.trim(), a.href]), goals >= 0 && line > goals];
    }""", [line_start, goals_words])
    return launch, run_line, after_goals


def _assert_launches(launch, run_line, after_goals, notebook, hub_label):
    """The theme's launch buttons (``launch``: [label, url]) open ``notebook`` of the learner branch on
    Colab, Binder and the hub, and the line under the chapter's title and goals (``run_line``) links the
    same places, its hub link named ``hub_label``; return the buttons by lower-case label."""
    buttons = {label.lower(): url for label, url in launch}
    assert set(buttons) == {"binder", "jupyterhub", "colab"}, launch
    assert buttons["colab"] == f"https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/{notebook}"
    assert buttons["binder"] == f"https://mybinder.org/v2/gh/attention-notebooks/attention-notebooks/learner?urlpath=lab/tree/{notebook}"
    hub = urlsplit(buttons["jupyterhub"])
    assert f"{hub.scheme}://{hub.netloc}" == SITE_HUB and hub.path == "/hub/user-redirect/git-pull"
    query = dict(part.split("=", 1) for part in unquote(hub.query).split("&"))
    assert query == {"repo": "https://github.com/attention-notebooks/attention-notebooks", "branch": "learner",
                     "urlpath": f"lab/tree/attention-notebooks/{notebook}"}
    assert after_goals, "the title and the goals come before the line of links"
    assert [label for label, _ in run_line] == ["Colab", "Binder", hub_label]
    assert run_line[0][1] == buttons["colab"] and run_line[1][1] == buttons["binder"]
    assert dict(part.split("=", 1) for part in unquote(urlsplit(run_line[2][1]).query).split("&")) == query
    return buttons


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_page_launches_its_learner_edition_and_links_on(site, site_browser, chapter):
    require_chromium()
    contexts, _ = site_browser
    page, _ = _open(contexts["desktop"], (site / f"{chapter}.html").as_uri())
    try:
        # The chapter's title and goals come first; the line of links follows them.
        launch, run_line, after_goals = _chapter_links(page, "Run this chapter", "In this notebook you will")
        next_link = page.evaluate("() => document.querySelector('.prev-next-area a.right-next')?.href || ''")
        headings = page.evaluate("""() => [...document.querySelectorAll('.bd-article section > :is(h1, h2, h3, h4)')]
            .map(h => [h.parentElement.id, h.querySelector('a.headerlink')?.getAttribute('href') || ''])""")
    finally:
        page.close()
    _assert_launches(launch, run_line, after_goals, f"{chapter}.ipynb", "your course's hub")
    position = CHAPTERS.index(chapter)
    expected_next = f"{CHAPTERS[position + 1]}.html" if position + 1 < len(CHAPTERS) else "docs/learners.html"
    assert next_link.endswith("/" + expected_next), next_link
    assert headings and all(section and link == f"#{section}" for section, link in headings), headings


def test_answers_folded_and_why_question_without_feedback(site, site_browser):
    require_chromium()
    contexts, _ = site_browser
    page, _ = _open(contexts["desktop"], (site / "02_masked_softmax.html").as_uri())
    try:
        folds = page.evaluate("() => [...document.querySelectorAll('.bd-article details')].map(d => d.open)")
        summaries = page.evaluate("""() => [...document.querySelectorAll('.bd-article details > summary')]
            .map(s => s.textContent)""")
        question = page.evaluate("""() => [...document.querySelectorAll('.cell_output')]
            .map(o => o.textContent).filter(text => text.includes('Why? question 02'))""")
    finally:
        page.close()
    assert folds and not any(folds), "the worked answers must start folded"
    assert all("Worked answers" in summary for summary in summaries), summaries
    assert len(question) == 1 and "(a)" in question[0] and "(d)" in question[0]
    assert "✓" not in question[0] and "✗" not in question[0] and "correct" not in question[0].lower()


def _answer_lines(nb, name):
    """Lines found only inside the notebook's solution regions: what a learner must not be shown."""
    secret, given = set(), []
    for cell in nb.cells:
        lines = cell.source.splitlines()
        inside = set()
        if EXERCISE in tags(cell):
            for begin, end in solution_regions(cell.source, name):
                inside.update(range(begin, end + 1))
                secret.update(line.strip() for line in lines[begin + 1:end] if len(line.strip()) >= 24)
        given += [line for number, line in enumerate(lines) if number not in inside]
    given_text = "\n".join(given)
    return {line for line in secret if line not in given_text}


def _all_answer_lines():
    """The answer lines of every chapter, English and Portuguese."""
    answers = set()
    for book in build_site.BOOKS:
        for path in book.chapter_sources():
            answers |= _answer_lines(nbformat.read(path, as_version=4), path.name)
    return answers


def _answers_shown(site):
    """The lines that only a reference answer holds which appear in ``site``, pages or sources (both books)."""
    texts = [_Page(path.read_text()).text for path in site.rglob("*.html")]
    texts += [path.read_text() for book in build_site.BOOKS
              for path in (site / book.prefix / "_sources").rglob("*") if path.is_file()]
    answers = _all_answer_lines()
    assert len(answers) >= 20, "too few answer lines found: is the exercise tag still 'exercise'?"
    # A whole line, not the tail of a longer name: dot_product(...) is not scaled_dot_product(...).
    patterns = {answer: re.compile(r"(?<![\w.])" + re.escape(answer)) for answer in answers}
    return sorted(answer for answer, pattern in patterns.items() if any(pattern.search(text) for text in texts))


def test_no_exercise_answer_anywhere_in_the_site(site):
    """Neither in the English book nor in the Portuguese one (pt/): pages and downloadable sources."""
    chapters = [(site / book.prefix / f"{chapter}.html").read_text() for book in build_site.BOOKS
                for chapter in CHAPTERS]
    chapters += [(site / book.prefix / "_sources" / f"{chapter}.ipynb").read_text() for book in build_site.BOOKS
                 for chapter in CHAPTERS]
    assert len(chapters) == 4 * len(CHAPTERS)
    assert not any(BEGIN in text or END in text for text in chapters), "a solution marker is on a chapter page"
    shown = _answers_shown(site)
    assert not shown, f"answers on the site: {shown[:5]}"


def test_instructor_edition_shows_the_answers_on_purpose(tmp_path, tmp_path_factory):
    """EDITION=instructor builds the notebooks with their answers, in both languages: the same check
    finds them all, and the Portuguese landing page says which edition it is. Its explorers' data is the
    learner build's (conftest.explorer_assets): it does not depend on the edition."""
    site = tmp_path / "site"
    build_site.build(site, edition="instructor", explorer_assets=explorer_assets(tmp_path_factory))
    assert _answers_shown(site) == sorted(_all_answer_lines())
    assert "Esta é a edição do instrutor" in _Page((site / "pt" / "index.html").read_text()).text


def test_a_guide_links_pages_and_repository_files_but_not_inside_code(tmp_path):
    """A guide's links, as MyST reads them: to a page of the site, resolved; to another file of the
    repository, to that file on GitHub, title and anchor kept; inside a code span, left as text."""
    src = tmp_path / "book"
    build_site.new_book(src)
    (src / "index.md").write_text("# A book\n\nHello, {{ reader }}.\n")
    (src / "docs").mkdir()
    (src / "docs" / "links.md").write_text(
        "# Links\n\n"
        "In code: `[the builder](../tools/build_site.py)`.\n\n"
        'To a page, with a title: [the landing page](../index.md "where to start").\n\n'
        'To a file, with a title: [the builder](../tools/build_site.py#L1 "how the site is built").\n')
    toc = {"format": "jb-book", "root": "index", "chapters": [{"file": "docs/links"}]}
    (src / "_toc.yml").write_text(yaml.safe_dump(toc))
    html_dir = build_site.sphinx_build(src, {"reader": "**reader**"})

    page = _Page((html_dir / "docs" / "links.html").read_text())
    assert "In code: [the builder](../tools/build_site.py)." in page.text
    named = [link for link in page.links if link["text"] in ("the landing page", "the builder")]
    assert [link["text"] for link in named] == ["the landing page", "the builder"], page.links  # none in code
    landing, builder = named
    assert landing["href"] == "../index.html"
    assert builder == {
        "text": "the builder", "title": "how the site is built",
        "href": "https://github.com/attention-notebooks/attention-notebooks/blob/main/tools/build_site.py#L1"}
    assert "Hello, reader." in _Page((html_dir / "index.html").read_text()).text  # a substitution, in Markdown


def test_the_landing_page_is_filled_in(site):
    """Every {{ name }} of site/index.md is replaced: the chapter map links every chapter, the hub is named."""
    page = _Page((site / "index.html").read_text())
    assert "{{" not in page.text and "}}" not in page.text
    assert "Colab, or on your course’s JupyterHub, and each chapter" in page.text
    assert build_site.EDITION_SENTENCES["learner"] in page.text
    hrefs = {link["href"] for link in page.links}
    assert {f"{chapter}.html" for chapter in CHAPTERS} <= hrefs
    assert "https://github.com/attention-notebooks/attention-notebooks" in hrefs


def _figures(page):
    return page.evaluate("""() => [...document.querySelectorAll('.d2l-figure img')].map(image => ({
        src: image.getAttribute('src'), alt: image.alt, shown: image.getBoundingClientRect().width > 0,
        width: image.getAttribute('width'), height: image.getAttribute('height'), lazy: image.loading}))""")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_figures_say_what_they_show_and_show_the_picture_drawn_for_the_mode(site, site_browser, chapter):
    """Every figure has its alt text, its size and lazy loading; in light mode the page shows the
    light picture, in dark mode the dark one, not dimmed, and a screenshot of the first figure in each
    mode goes to build/screenshots."""
    require_chromium()
    contexts, _ = site_browser
    page, problems = _open(contexts["desktop"], (site / f"{chapter}.html").as_uri())
    try:
        shown = {}
        for mode in ("light", "dark"):
            page.evaluate(f"() => document.documentElement.setAttribute('data-theme', '{mode}')")
            figures = _figures(page)
            shown[mode] = [figure["src"] for figure in figures if figure["shown"]]
            first = page.locator(".d2l-figure").first
            if figures:
                first.scroll_into_view_if_needed()
                page.wait_for_function("() => [...document.querySelectorAll('.d2l-figure img')].filter("
                                       "image => image.getBoundingClientRect().width > 0)[0].complete")
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                first.screenshot(path=SCREENSHOTS / f"site-{chapter}-figure-{mode}.png")
                shown[f"{mode} filter"] = page.evaluate("""() => [...document.querySelectorAll('.d2l-figure img')]
                    .filter(image => image.getBoundingClientRect().width > 0)
                    .map(image => getComputedStyle(image).filter)""")
    finally:
        page.close()
    assert not problems, f"{chapter}: {problems}"
    assert figures, f"{chapter} shows no figure"
    for figure in figures:
        assert len(figure["alt"].split()) >= 5 and not re.search(r"\.(png|jpe?g|svg)\b|_images/", figure["alt"]), \
            f"{chapter}: a figure without a real alt text: {figure}"
        assert figure["width"] and figure["height"] and figure["lazy"] == "lazy", f"{chapter}: {figure}"
    assert len(shown["light"]) == len(shown["dark"]) == len(figures) // 2, f"{chapter}: one picture per mode: {shown}"
    assert all(src.endswith("-dark.png") for src in shown["dark"]), shown["dark"]
    assert not any(src.endswith("-dark.png") for src in shown["light"]), shown["light"]
    assert set(shown["light filter"]) == set(shown["dark filter"]) == {"none"}, f"{chapter}: dimmed: {shown}"


LIVE_CHAPTERS = [chapter for chapter in CHAPTERS if _explorers_stored(chapter)]


def _explorer_looks(page, root):
    """What the explorer ``root`` (an id) shows now: the mode it drew, its canvas's top-left pixel and
    how many pixels are the dark page's text colour, the colours and backgrounds of its texts, the
    background of the output holding it, and the filters on its canvas and on a stored picture."""
    return page.evaluate("""([id, text]) => {
        const root = document.getElementById(id);
        const canvas = root.querySelector('canvas');
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let inText = 0;
        for (let i = 0; i < pixels.length; i += 4) {
            const off = Math.abs(pixels[i] - text[0]) + Math.abs(pixels[i + 1] - text[1])
                + Math.abs(pixels[i + 2] - text[2]);
            if (off <= 6) inText++;
        }
        const behind = (element) => {  // the first background that is not transparent, up to the page's
            for (let e = element; e; e = e.parentElement) {
                const colour = getComputedStyle(e).backgroundColor;
                if (colour !== 'rgba(0, 0, 0, 0)' && colour !== 'transparent') return colour;
            }
            return 'rgb(255, 255, 255)';
        };
        const texts = [...root.querySelectorAll('.d2l-caption, .d2l-summary, .d2l-note, label, legend')]
            .filter((e) => e.textContent.trim() && !e.closest('[hidden]'))
            .map((e) => [e.textContent.trim().slice(0, 40), getComputedStyle(e).color, behind(e)]);
        const stored = document.createElement('img');  // a stored picture, as the page holds it before the script
        const box = document.createElement('div');
        box.className = 'd2l-explorer-page';
        box.append(stored);
        root.parentElement.append(box);
        const storedFilter = getComputedStyle(stored).filter;
        box.remove();
        return {mode: root.dataset.mode, corner: [...pixels.slice(0, 4)], inText, texts,
                output: getComputedStyle(root.closest('.text_html')).backgroundColor,
                filters: [getComputedStyle(canvas).filter, storedFilter]};
    }""", [root, list(_rgb255(DARK_TEXT))])


def _rgb255(colour):
    return tuple(round(channel * 255) for channel in to_rgba(colour)[:3])


def _css_colour(text):
    return tuple(int(number) / 255 for number in re.findall(r"[\d.]+", text)[:3])


@pytest.mark.parametrize("chapter", LIVE_CHAPTERS)
def test_every_explorer_draws_for_the_dark_page_and_follows_the_theme_without_a_reload(site, site_browser, chapter,
                                                                                          screenshots):
    """The theme's dark mode (stored in localStorage, as its button does): each explorer paints its
    figure's dark variant, its texts read at WCAG AA on the page, its output is off the theme's grey
    card and undimmed; switching the theme (data-theme on <html>) redraws it. Screenshots of each
    explorer in both modes go into build/screenshots/."""
    require_chromium()
    contexts, _ = site_browser
    page = contexts["desktop"].new_page()
    page.add_init_script("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');")
    try:
        page.goto((site / f"{chapter}.html").as_uri(), wait_until="load")
        assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
        roots = page.evaluate("() => [...document.querySelectorAll('[data-d2l-explorer]')].map(e => e.id)")
        dark_corner = list(_rgb255(DARK_BACKGROUND)) + [255]
        for root in roots:
            page.locator(f"#{root}").scroll_into_view_if_needed()  # its data loads as the reader nears it
            page.wait_for_selector(f"#{root}.d2l-ready", timeout=20_000)
            looks = _explorer_looks(page, root)
            where = f"{chapter} {root}"
            assert looks["mode"] == "dark" and looks["corner"] == dark_corner, (where, looks["corner"])
            assert looks["inText"] > 100, f"{where}: the figure's text is not in the dark page's text colour"
            assert looks["output"] == "rgba(0, 0, 0, 0)", f"{where} sits on a {looks['output']} card"
            assert looks["filters"] == ["none", "none"], where
            for text, colour, behind in looks["texts"]:
                ratio = contrast(_css_colour(colour), _css_colour(behind))
                assert ratio >= TEXT_CONTRAST, f"{where}: {text!r} is {colour} on {behind} ({ratio:.1f}:1)"
            page.locator(f"#{root}").screenshot(path=screenshots / f"explorer-{chapter}-{root}-dark.png")
        page.evaluate("() => { document.documentElement.dataset.theme = 'light'; }")
        for root in roots:
            looks = _explorer_looks(page, root)
            assert looks["mode"] == "light" and looks["corner"] == [255, 255, 255, 255], (chapter, root, looks)
            page.locator(f"#{root}").screenshot(path=screenshots / f"explorer-{chapter}-{root}-light.png")
        page.evaluate("() => { document.documentElement.dataset.theme = 'dark'; }")
        assert all(_explorer_looks(page, root)["corner"] == dark_corner for root in roots)
    finally:
        # The mode stays in the context's localStorage for every page of the site: the pages other tests
        # open after this one must find the theme's default (light), not this test's dark.
        page.evaluate("() => { localStorage.removeItem('mode'); localStorage.removeItem('theme'); }")
        page.close()


def test_the_icon_fonts_are_cut_to_the_icons_the_pages_show_and_hold_every_one(site):
    """build_site.cut_icon_fonts keeps every icon a page names by its class (and those the theme's
    stylesheets draw), and the fonts are a few kilobytes instead of about 400 KB."""
    from fontTools.ttLib import TTFont

    fonts = sorted((site / build_site.ICON_FONTS).glob("fa-*.woff2"))
    assert fonts and sum(font.stat().st_size for font in fonts) < 20_000, [f.stat().st_size for f in fonts]
    held = {code for font in fonts for code in TTFont(font).getBestCmap()}
    css = "".join((site / sheet).read_text() for sheet in build_site.ICON_STYLESHEETS)
    by_class = {name: int(code, 16) for selectors, code in build_site.ICON_RULE.findall(css)
                for name in re.findall(r"\.fa-([a-z0-9-]+)", selectors)}
    classes = build_site._Classes()
    for page in site.rglob("*.html"):
        classes.feed(page.read_text())
    shown = {name[3:] for name in classes.names if name.startswith("fa-") and name[3:] in by_class}
    assert {"bars", "github", "sun", "moon", "magnifying-glass"} <= shown  # the header's icons, found
    assert not [name for name in shown if by_class[name] not in held], "icons the cut fonts lack"


# --- The two languages ----------------------------------------------------------------------------------------


class _Switches(HTMLParser):
    """A page's <html lang> and its language switch's links, each {"href", "hreflang", "lang", "text"}."""

    def __init__(self, page_html):
        super().__init__()
        self.lang, self.links, self._link = None, [], None
        self.feed(page_html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.lang = attrs.get("lang")
        if tag == "a" and "d2l-language-switch" in (attrs.get("class") or "").split():
            self._link = {"href": attrs.get("href"), "hreflang": attrs.get("hreflang"), "lang": attrs.get("lang"),
                          "text": ""}

    def handle_endtag(self, tag):
        if tag == "a" and self._link is not None:
            self._link["text"] = self._link["text"].strip()
            self.links.append(self._link)
            self._link = None

    def handle_data(self, data):
        if self._link is not None:
            self._link["text"] += data


def _counterpart(name):
    """Where a page's language switch must lead (a path in the site, less .html): the same page in the
    other language, or that language's landing page where it has none (a guide, the glossary)."""
    if name.startswith("pt/"):
        return name[3:] if name[3:] in ENGLISH_PAGES else "index"
    return f"pt/{name}" if name in PORTUGUESE_PAGES else "pt/index"


def test_every_page_says_its_language_and_links_to_itself_in_the_other_one(site):
    """<html lang> is en or pt-BR; one switch per page, with a relative link (it works from disk) to the
    counterpart page, lang and hreflang set, and the other language's name in that language."""
    problems = []
    for name in PAGES:
        path = site / f"{name}.html"
        page = _Switches(path.read_text())
        portuguese = name.startswith("pt/")
        other = {"lang": "en", "text": "English"} if portuguese else {"lang": "pt-BR", "text": "Português"}
        if page.lang != ("pt-BR" if portuguese else "en"):
            problems.append(f"{name}: <html lang={page.lang!r}>")
        if len(page.links) != 1:
            problems.append(f"{name}: {len(page.links)} language switches")
            continue
        link = page.links[0]
        if urlsplit(link["href"]).scheme or link["href"].startswith("/"):
            problems.append(f"{name}: the switch's link is not relative: {link['href']}")
        target = (path.parent / link["href"]).resolve()
        if target != (site / f"{_counterpart(name)}.html").resolve():
            problems.append(f"{name}: the switch leads to {target}, not to {_counterpart(name)}.html")
        if (link["lang"], link["hreflang"], link["text"]) != (other["lang"], other["lang"], other["text"]):
            problems.append(f"{name}: the switch reads {link}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("name", "device"), [("02_masked_softmax", "phone"), ("pt/glossario", "desktop")])
def test_the_language_switch_is_seen_at_the_top_and_reached_from_the_keyboard(site, site_browser, name, device):
    """On a phone and on a desktop: the switch shows at the top of the page; Tab reaches it (after the
    sidebar's links, on a desktop), and Enter opens the other language's page. The header's line,
    switch included, fits a 320-pixel screen."""
    require_chromium()
    contexts, _ = site_browser
    page, problems = _open(contexts[device], (site / f"{name}.html").as_uri())
    try:
        switch = page.locator("a.d2l-language-switch")
        box = switch.bounding_box()
        viewport = page.viewport_size
        stops = 0
        while stops < 60 and not page.evaluate("() => document.activeElement.matches('a.d2l-language-switch')"):
            page.keyboard.press("Tab")
            stops += 1
        reached = page.evaluate("() => document.activeElement.matches('a.d2l-language-switch')")
        if reached:
            with page.expect_navigation():
                page.keyboard.press("Enter")
        landed = page.url
        page.set_viewport_size({"width": 320, "height": 640})  # the narrowest screen WCAG 1.4.10 names
        page.goto((site / f"{name}.html").as_uri(), wait_until="load")
        narrowest = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    finally:
        page.close()
    assert not problems, problems
    assert narrowest[0] <= narrowest[1], f"{name} is {narrowest[0]} px wide on a 320 px screen"
    assert box and box["width"] > 0 and box["height"] > 0, f"{name}: the switch is not shown on a {device}"
    assert box["y"] + box["height"] <= 120 and box["x"] + box["width"] <= viewport["width"], (name, device, box)
    assert reached, f"{name}: 60 Tab presses do not reach the language switch on a {device}"
    assert landed == (site / f"{_counterpart(name)}.html").as_uri(), landed


def test_the_portuguese_landing_page_maps_the_portuguese_chapters(site):
    """pt/index.html: every field filled in, in Portuguese; its map links the ten Portuguese chapters by
    their titles, with each chapter's line from tools/site_words.py; the English guides are linked
    on the English site and said to be in English."""
    page_html = (site / "pt" / "index.html").read_text()
    page = _Page(page_html)
    assert "{{" not in page.text and "}}" not in page.text
    assert "Colab, ou no JupyterHub do seu curso" in page.text
    assert site_words.words("pt", "learner edition") in page.text
    chapter_map = _Page(re.search(r"<table.*?</table>", page_html, re.DOTALL).group(0))
    assert re.sub(r"\s+", " ", chapter_map.text).strip().startswith("Capítulo O que ensina")
    titles = [build_site.chapter_title(nb) for nb in (nbformat.read(REPO / "notebooks" / "pt" / f"{chapter}.ipynb",
                                                                    as_version=4) for chapter in CHAPTERS)]
    assert [(link["href"], link["text"]) for link in chapter_map.links] == \
        [(f"{chapter}.html", title) for chapter, title in zip(CHAPTERS, titles)]
    for chapter in CHAPTERS:
        row = site_words.CHAPTER_ROWS["pt"][chapter][1]
        assert row.replace("`", "")[:60] in chapter_map.text, f"{chapter}'s line is not on the map"
    titles = {link["href"]: link["text"] for link in page.links}
    assert titles.get("glossario.html") == "glossário"
    for guide in ("learners", "instructors", "explorers", "d2lmini", "site"):
        assert f"../docs/{guide}.html" in titles, guide
    assert "Guias (em inglês)" in page.text and "em inglês" in page.text
    assert "https://github.com/attention-notebooks/attention-notebooks" in titles


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_portuguese_chapter_launches_its_portuguese_learner_edition_and_its_explorers_are_live(site, site_browser,
                                                                                              chapter):
    """pt/NN.html: the launch buttons and the first line open pt/NN.ipynb of the learner branch; every
    explorer the Portuguese chapter shows becomes live, with no console error, and fits a phone's
    screen as the English ones do (its words are longer); the question's note is in Portuguese."""
    require_chromium()
    contexts, outside = site_browser
    blocked_before = len(outside)
    page, problems = _open(contexts["desktop"], (site / "pt" / f"{chapter}.html").as_uri())
    try:
        launch, run_line, after_goals = _chapter_links(page, "Execute este capítulo", "Neste notebook você vai")
        roots = page.evaluate("() => [...document.querySelectorAll('[data-d2l-explorer]')].map(e => e.id)")
        for root in roots:
            page.locator(f"#{root}").scroll_into_view_if_needed()  # its data loads as the reader nears it
            page.wait_for_selector(f"#{root}.d2l-ready", timeout=20_000)
            _first_paint_is_the_stored_picture(page, root, site / "pt" / f"{chapter}.html", "pt_BR")
        text = page.evaluate("() => document.querySelector('.bd-article').textContent")
        on_phones = _on_phones(page, roots)
    finally:
        page.close()
    assert not problems, f"pt/{chapter}: {problems}"
    assert len(outside) == blocked_before, f"pt/{chapter} asked for something outside the site"
    nb = nbformat.read(REPO / "notebooks" / "pt" / f"{chapter}.ipynb", as_version=4)
    stored = [output for cell in nb.cells for output in cell.get("outputs", []) if build_site.explorer_name(output)]
    assert len(roots) == len(stored), f"pt/{chapter}: {roots}"
    assert on_phones == [], f"pt/{chapter}"
    buttons = _assert_launches(launch, run_line, after_goals, f"pt/{chapter}.ipynb", "o hub do seu curso")
    assert buttons["colab"] == build_site.colab.colab_url(f"{chapter}.ipynb", "pt")
    assert site_words.words("pt", "question note").strip("*") in text


@pytest.mark.parametrize(("book", "query", "found"), [("", "masked softmax", "02_masked_softmax"),
                                                      ("pt/", "softmax mascarado", "pt/02_masked_softmax")],
                         ids=["english", "portuguese"])
def test_each_language_searches_its_own_pages(site, site_browser, book, query, found):
    """Each book has its own search index: a search in the Portuguese book finds its chapter 02 and
    Portuguese pages only; the English search finds no page of pt/."""
    require_chromium()
    contexts, _ = site_browser
    url = (site / book / "search.html").as_uri() + "?q=" + query.replace(" ", "+")
    page, problems = _open(contexts["desktop"], url)
    try:
        page.wait_for_selector("#search-results ul.search li", timeout=20_000)
        results = page.evaluate("""() => [...document.querySelectorAll('#search-results ul.search li a')]
            .map(a => a.href)""")
    finally:
        page.close()
    assert not problems, problems
    assert f"{site.as_uri()}/{found}.html" in [result.split("?")[0].split("#")[0] for result in results], results
    in_portuguese = [result for result in results if result.startswith(f"{site.as_uri()}/pt/")]
    assert in_portuguese == (results if book else []), results
    assert (site / "pt" / "searchindex.js").read_text() != (site / "searchindex.js").read_text()


def _fixed_parts(text):
    """The parts of a sentence of site_words around its {fields}, HTML and Markdown marks removed."""
    parts = re.split(r"\{\w+\}", re.sub(r"<[^>]+>|\*\*?|\[|\]", "", text))
    return [part.strip(" ,.:;()") for part in parts if len(part.strip(" ,.:;()")) >= 12]


def _readable(path):
    """What a reader of the page reads: its text and its images' alt texts."""
    page_html = path.read_text()
    alts = [html.unescape(alt) for alt in re.findall(r'alt="([^"]*)"', page_html)]
    return "\n".join([_Page(page_html).text, *alts]).replace("’", "'")  # the English's typographic apostrophes


def test_what_the_site_adds_to_a_portuguese_page_is_portuguese(site):
    """No English sentence of tools/site_words.py on a page of pt/ (text and alt texts), each
    Portuguese one where it belongs, and the explorers' data written in d2lmini's Portuguese."""
    english = [part for text in site_words.ENGLISH.values() for part in _fixed_parts(text)]
    assert len(english) >= 8
    found = []
    for name in PORTUGUESE_PAGES:
        page = _readable(site / "pt" / f"{name}.html")
        found += [f"pt/{name}: {part!r}" for part in english if part in page]
    assert not found, found
    chapter = _readable(site / "pt" / "02_masked_softmax.html")
    for name in ("run line", "question note", "explorer alt"):
        assert all(part in chapter for part in _fixed_parts(site_words.words("pt", name))), name
    assert "“softmax mascarado”" in chapter and "“editor de máscaras”" in chapter
    data = {book: (site / book / "_static" / "explorers" / "QueryPoolingExplorer.js").read_text()
            for book in ("", "pt")}
    assert ": answer " in data[""] and ": answer " not in data["pt"] and ": resposta " in data["pt"]


def test_the_theme_speaks_portuguese_on_the_portuguese_pages(site):
    """The theme's words that its catalogues lack (site/locale) are Portuguese on pt/'s pages, and
    every one of them is a message the theme still writes: a message it renamed would show in English."""
    import pydata_sphinx_theme
    import sphinx_book_theme
    from babel.messages.pofile import read_po

    chapter = _Page((site / "pt" / "04_scaled_dot_product.html").read_text())
    assert "Pular para o conteúdo principal" in chapter.text and "Skip to main content" not in chapter.text
    page_html = (site / "pt" / "04_scaled_dot_product.html").read_text()
    for english, portuguese in [("Toggle primary sidebar", "Mostrar ou ocultar a barra lateral principal"),
                                ("Launch interactive content", "Abrir o conteúdo interativo"),
                                ("Color mode", "Modo de cor"), ("previous page", "página anterior")]:
        assert f'"{english}"' not in page_html and f'"{portuguese}"' in page_html, english
    # The navigation landmarks, which the theme names in English in its templates (build_site.name_landmarks).
    english_html = (site / "04_scaled_dot_product.html").read_text()
    for tag, name in build_site.LANDMARKS.items():
        assert tag in english_html and tag not in page_html, tag
        assert f'aria-label="{site_words.words("pt", name)}"' in page_html, name
    themes = [Path(package.__file__).parent for package in (pydata_sphinx_theme, sphinx_book_theme)]
    theme_text = "".join(path.read_text(errors="replace") for theme in themes for path in theme.rglob("*")
                         if path.suffix in (".html", ".py", ".pot"))
    theme_text = theme_text.replace('"\n"', "")  # a message that the .pot wraps over lines
    for catalogue in sorted((REPO / "site" / "locale").rglob("*.po")):
        with open(catalogue, "rb") as po:
            messages = [message for message in read_po(po) if message.id]
        assert messages and all(message.string for message in messages), catalogue
        gone = [message.id for message in messages if message.id not in theme_text]
        assert not gone, f"{catalogue.relative_to(REPO)}: the theme no longer writes {gone}"


def test_the_site_words_and_the_map_lines_follow_the_english():
    """tools/site_words.py: every English sentence of the site has its Portuguese, with the same {fields},
    and each Portuguese line of the chapter map was made from the line now in docs/chapters.md. A
    change to the English fails, naming what to translate again."""
    assert site_words.untranslated("pt") == []
    rows = build_site.chapter_rows()
    assert site_words.stale_rows("pt", rows) == []

    changed = dict(site_words.ENGLISH, **{"question note": "*The options cannot be picked on this page.*"})
    english = list(changed.values()) + [site_words.explorer_words(name) for name in site_words.EXPLORER_NAMES]
    lines = site_words.untranslated("pt", english)
    assert len(lines) == 2, lines  # the new sentence lacks its Portuguese; the old one's is left over
    assert "The options cannot be picked" in lines[0] and "On this page the options" in lines[1]
    no_field = dict(site_words.TRANSLATED["pt"], **{site_words.ENGLISH["run line"]: "Execute este capítulo"})
    lines = site_words.untranslated("pt", translated=no_field)
    assert len(lines) == 1 and "has the fields [], the English ['links']" in lines[0], lines
    assert site_words.words("pt", "run line", links="L") == site_words.TRANSLATED["pt"][
        site_words.ENGLISH["run line"]].format(links="L")
    assert site_words.say("pt", "a sentence with no translation yet") == "a sentence with no translation yet"

    edited = dict(rows, **{"04_scaled_dot_product": rows["04_scaled_dot_product"] + "; a new section"})
    lines = site_words.stale_rows("pt", edited)
    assert len(lines) == 1 and lines[0].startswith("04_scaled_dot_product: made from another English line")
    assert site_words.english_record(edited["04_scaled_dot_product"]) in lines[0]
    assert site_words.stale_rows("pt", dict(rows, **{"10_new_chapter": "a new row"})) == [
        "10_new_chapter: no translated line in CHAPTER_ROWS['pt'] in tools/site_words.py"]

    landing = (build_site.REPO / "site" / "index.md").read_text()
    assert site_words.stale_landing("pt", landing) is None
    stale = site_words.stale_landing("pt", landing + "\nA new paragraph.\n")
    assert stale.startswith("site/pt/index.md was made from another English landing page")
    assert site_words.english_record(landing + "\nA new paragraph.\n") in stale


def test_the_portuguese_book_is_assembled_with_d2lmini_speaking_portuguese(tmp_path, monkeypatch):
    """The explorers' data of pt/ is written with d2lmini's language set to pt_BR, and the language it
    spoke before is back afterwards, even when writing fails."""
    spoken = []

    def write_assets(folder, declarations):
        spoken.append(i18n.current_language())
        raise OSError("disk full")

    monkeypatch.setattr(build_site.page, "write_assets", write_assets)
    before = i18n.current_language()
    with pytest.raises(OSError, match="disk full"):
        build_site.assemble(tmp_path / "pt", None, "learner", PORTUGUESE)
    assert spoken == ["pt_BR"] and i18n.current_language() == before


def test_a_book_given_explorer_assets_copies_what_it_would_export(tmp_path, monkeypatch):
    """A book given a folder that ``page.write_assets`` wrote in its language for every explorer (what
    ``build_site.build`` takes as ``explorer_assets``: a test run's, made once for all its builds) is
    assembled as the book that exports its explorers' data, file for file and byte for byte, its chapters
    naming the same scripts, and exports nothing. The data itself is a stub here, to be cheap: the files
    and the scripts are write_assets' own."""
    monkeypatch.setattr(build_site.page, "explorer_data", lambda declaration: {"name": declaration.name})
    build_site.assemble(tmp_path / "exported", None, "learner", PORTUGUESE)
    with build_site.speaking(PORTUGUESE.language):
        build_site.page.write_assets(tmp_path / "assets", [d.for_page() for d in build_site.DECLARATIONS])

    def write_assets(folder, declarations):
        raise AssertionError("a book given the explorers' assets exported them again")

    monkeypatch.setattr(build_site.page, "write_assets", write_assets)
    build_site.assemble(tmp_path / "copied", None, "learner", PORTUGUESE, tmp_path / "assets")

    def files(src):
        """Each file's bytes, but the id of a cell the site adds (the question's note), which nbformat draws
        at random in every build."""
        return {path.relative_to(src).as_posix(): re.sub(rb'"id": "[0-9a-f]{8}"', b'"id"', path.read_bytes())
                for path in src.rglob("*") if path.is_file()}

    exported, copied = files(tmp_path / "exported"), files(tmp_path / "copied")
    data = [name for name in exported if re.fullmatch(r"_static/explorers/\w+Explorer\.js", name)]
    assert data and "_static/explorers/colours.js" in exported  # the book shows live explorers
    assert sorted(copied) == sorted(exported)
    assert [name for name in exported if copied[name] != exported[name]] == []
