"""The collection's web site: a static folder built offline with Jupyter Book 1's packages, read offline.

    python -m tools.build_site [--out build/site] [--hub-url https://hub.example.edu] [--edition learner]

The site holds one book per language (``BOOKS``): the English one at its root,
each translation in its folder (``pt/``: the chapters of notebooks/pt/, its own
landing page site/pt/index.md and its glossary). Each book is assembled in
``<out>-src/<folder>`` (site/conf.py, a table of contents, the pages) and built
with sphinx-build, in its own language (Sphinx's words, its search), and the
books go into ``<out>`` (open ``<out>/index.html``). Every page links to itself
in the other language, or to the other book's landing page where it has no
counterpart (``language_links``). The pages are made from what is already stored:

- each chapter is its **learner edition** (tools/editions.py: exercises as
  stubs, no check output), with its stored figures; ``--edition instructor``
  builds the notebooks with their answers instead, for an instructor who wants
  them on purpose;
- an explorer is **live**: its controls move its picture in the page, with no
  kernel, from data that ``d2lmini.widgets.page`` computes here with the
  explorer's own declaration (``_static/explorers/``); without JavaScript its
  stored picture shows. The why-questions show their question and options as text;
- ``docs/`` and ``benchmarks/README.md`` are pages too, and ``site/index.md``
  is the landing page, its fields (MyST substitutions) filled here: the chapter
  map from each chapter's title and its row in docs/chapters.md;
- what the site writes around a chapter (the line of launch links, alt texts, the
  edition's sentence, ...) is in the book's language: tools/site_words.py holds it.

Nothing is executed, and nothing is fetched: MathJax comes from the npm copy
that ``make site`` installs (MATHJAX below), the theme's fonts and scripts from
the Python packages. For the web, every chapter loses what only a live
kernel uses: the widget state (whose JavaScript comes from a CDN), the
widget views' placeholders and the Colab setup cell; its Colab badge (an
image from Colab's site) becomes a line of links.
"""

import argparse
import ast
import base64
import contextlib
import dataclasses
import hashlib
import html
import io
import json
import multiprocessing
import os
import posixpath
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import yaml
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from PIL import Image

from d2lmini import i18n
from d2lmini.widgets import DECLARATIONS, page
from d2lmini.widgets._compat import WIDGET_VIEW
from d2lmini.widgets.explorer import Explorer
from d2lmini.widgets.training import RECORDED_RUNS, recorded_run_of
from tools import colab, site_words
from tools.class_hub import nbgitpuller_link
from tools.editions import TRANSLATIONS, learner_notebook, tags
from tools.learner_repo import BRANCH, chapter_sources
from tools.site_words import words

REPO = Path(__file__).resolve().parent.parent
SITE_TEMPLATE = REPO / "site"
DEFAULT_OUT = REPO / "build" / "site"
# npm's MathJax, which draws every formula when the site is built (tools/render_math.js, site/conf.py).
MATHJAX = REPO / ".venv" / "mathjax" / "node_modules" / "mathjax"
RENDER_MATH = REPO / "tools" / "render_math.js"
QUESTION_CALL = "questions.ask("  # a chapter's Why? question (d2lmini.exercises.questions)
BINDER = "https://mybinder.org/v2/gh/{repository}/{branch}?urlpath=lab/tree/{name}"
# The guides, in the order of the site's navigation; docs/chapters.md feeds the landing page's map.
GUIDES = ["learners", "instructors", "explorers", "d2lmini", "colab", "binder", "hub", "platforms",
          "pretrained", "chapter08", "architecture", "site", "chapters"]
REPOSITORY_URL = f"https://github.com/{colab.REPOSITORY}"
EDITION_SENTENCES = {edition: site_words.ENGLISH[f"{edition} edition"] for edition in ("learner", "instructor")}
EXPLORER_REPR = re.compile(r"^(\w+Explorer|TrainingView)\(")  # an explorer's text form names its declaration
# Chapter 08's training view trains a model, which needs a kernel: on the page it becomes the replay of
# the notebook's recorded run, the alignment explorer with its Play button.
REPLAYED = {"TrainingView": "AlignmentExplorer"}
EXPLORERS = "explorers"  # the live explorers' scripts, in _static
FIGURES = "figures"  # the chapters' figures, in _static
# A translation's pages other than its chapters and landing page, each at the top of its book: repository file.
TRANSLATED_GUIDES = {"pt": {"glossario": "docs/pt/glossario.md"}}


@dataclass(frozen=True)
class Book:
    """One language's book of the site."""

    folder: str  # "en", or a translation's folder under notebooks/ ("pt", tools/editions.py's TRANSLATIONS)
    language: str  # Sphinx's and d2lmini's name for it: "en", "pt_BR"

    @property
    def prefix(self):
        """Where the book sits in the site, and its chapters in the learner branch: "" or "pt/"."""
        return "" if self.folder == "en" else f"{self.folder}/"

    @property
    def lang(self):
        """The language as HTML names it: "en", "pt-BR"."""
        return self.language.replace("_", "-")

    def chapter_sources(self):
        """The book's chapters, in order."""
        if self.folder == "en":
            return chapter_sources()
        return sorted((REPO / "notebooks" / self.folder).glob("[0-9][0-9]_*.ipynb"))

    def guides(self):
        """The book's pages other than its chapters and landing page: their place in the book (a docname)
        -> their file in the repository."""
        if self.folder == "en":
            return {**{f"docs/{guide}": f"docs/{guide}.md" for guide in GUIDES},
                    "benchmarks/README": "benchmarks/README.md"}
        return dict(TRANSLATED_GUIDES.get(self.folder, {}))


BOOKS = [Book("en", "en")] + [Book(folder, language) for folder, language in TRANSLATIONS.items()]


@contextlib.contextmanager
def speaking(language):
    """d2lmini speaks ``language`` inside the block, and again the language it spoke before after it,
    even when the block fails."""
    before = i18n.current_language()
    i18n.set_language(language)
    try:
        yield
    finally:
        i18n.set_language(before)


def learner_path(name, folder="en"):
    """A chapter's path in the learner branch: "04_scaled_dot_product.ipynb", "pt/04_scaled_dot_product.ipynb"."""
    return name if folder == "en" else f"{folder}/{name}"


def launch_links(name, hub_url, folder="en"):
    """The chapter's launch links, by label: where a reader runs this chapter's learner edition, in the
    language of ``folder``."""
    path = learner_path(name, folder)
    links = {"Colab": colab.colab_url(name, folder),
             "Binder": BINDER.format(repository=colab.REPOSITORY, branch=BRANCH, name=path)}
    if hub_url:
        links[words(folder, "hub link")] = nbgitpuller_link(hub_url, REPOSITORY_URL, path)
    return links


def explorer_name(output):
    """The declaration's name ("KernelPoolingExplorer") of an explorer's stored output, or None."""
    if WIDGET_VIEW not in output.get("data", {}):
        return None
    match = EXPLORER_REPR.match(output["data"].get("text/plain", ""))
    return REPLAYED.get(match.group(1), match.group(1)) if match else None


def listed_settings(output):
    """name -> value of the settings an explorer's stored text form lists, as Python wrote them:
    "KernelPoolingExplorer(sigma=0.5, kernel='gaussian', n_train=40)" -> {"sigma": 0.5, ...}."""
    call = ast.parse(output["data"]["text/plain"], mode="eval").body
    return {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}


def start_settings(output, declaration):
    """The settings (name -> value) of the page's ``declaration`` that the stored picture of ``output``
    shows, where the page starts the explorer (its box's data-d2l-start).

    An explorer's text form lists its ``repr_controls``, which hold what its ``explore_*`` function can
    set; each is applied in turn with the declaration's ``adjust`` (a mask editor's preset sets its
    cells), the rest keep their defaults. Chapter 08's training view (replayed, ``REPLAYED``) lists the
    settings that differ from its defaults and the step it showed: the page starts at the recorded run
    of those settings (``training.recorded_run_of``), at that step, on its one fixed example (0). A
    value the page does not offer is an error naming it."""
    listed = listed_settings(output)
    if EXPLORER_REPR.match(output["data"]["text/plain"]).group(1) in REPLAYED:
        # A text form stored before it gave the step is a view shown before training: step 0.
        step = listed.pop("step", 0)
        listed = {"run": recorded_run_of({name: tuple(value) if isinstance(value, list) else value
                                          for name, value in listed.items()}), "step": step, "example": 0}
    settings = declaration.Settings()
    names = {field.name for field in dataclasses.fields(settings)}
    for name, value in listed.items():
        if name not in names:
            raise ValueError(f"{declaration.name}: the stored text form {output['data']['text/plain']!r} names "
                             f"{name}, which is not a setting of the page's explorer ({sorted(names)})")
        settings = declaration.adjust(dataclasses.replace(settings, **{name: value}), name)
    offered = page.offered_values(declaration)
    for name, values in offered.items():
        if getattr(settings, name) not in values:
            raise ValueError(f"{declaration.name}: the chapter shows {name}={getattr(settings, name)!r}, which the "
                             f"page does not offer (it offers {list(values)}); offer it (page_values)")
    return dataclasses.asdict(settings)


def replay_picture(declaration, start, language):
    """PNG bytes of the replay's picture at ``start`` (as the kernel's shell draws it, in ``language``):
    what a replayed training view's box shows before its script runs, so that it is the picture the
    page then paints, not the training view's."""
    with speaking(language):
        explorer = Explorer(declaration, declaration.Settings(**start))
        try:
            return explorer.static_png()
        finally:
            explorer.close()


def live_explorer(output, number, scripts, static, folder="en", start=None):
    """The stored output of an explorer made live: its box, which the page's script fills with the
    controls and the picture, holding the stored picture (``static``, a file in _static) until it
    does, or for a reader without JavaScript. The box names the scripts of its data, which the page
    loads when the reader nears it (explorers.js), so that a first view never waits for them, the
    settings its picture shows (``start``, name -> value: the page starts there) and the kernel
    widget it shows (``data-d2l-link``, the widget view's model id: copies of one widget follow each
    other, as in the kernel). Its alt text is in the language of ``folder``."""
    name = explorer_name(output)
    settings = output["data"]["text/plain"].partition("(")[2].rstrip(")")
    if EXPLORER_REPR.match(output["data"]["text/plain"]).group(1) in REPLAYED:
        with speaking(next(book.language for book in BOOKS if book.folder == folder)):
            run = str(i18n._(RECORDED_RUNS[start["run"]][0])) if start else ""
        alt = words(folder, "training alt", run=run, step=start["step"] if start else 0)
    else:
        named = site_words.say(folder, site_words.explorer_words(name))  # "kernel pooling"
        alt = words(folder, "explorer alt", words=named, settings=settings)
    alt = html.escape(alt, quote=True)
    sources = " ".join(f"_static/{EXPLORERS}/{src}" for src in scripts[name])
    width = output.get("metadata", {}).get("image/png", {}).get("width")  # CSS pixels: the PNG has twice
    picture = Image.open(io.BytesIO(base64.b64decode(output["data"]["image/png"])))
    size = f' width="{width}" height="{round(picture.height * width / picture.width)}"' if width else ""
    model = output["data"].get(WIDGET_VIEW, {}).get("model_id")
    attributes = "".join(f' {attribute}="{html.escape(value, quote=True)}"' for attribute, value in (
        ("data-d2l-start", json.dumps(start) if start else None), ("data-d2l-link", model)) if value)
    box = (f'<div class="d2l-explorer-page" id="explorer-{number}" data-d2l-explorer="{name}" '
           f'data-d2l-scripts="{html.escape(sources, quote=True)}"{attributes}>'
           f'<img src="_static/{EXPLORERS}/{static}" alt="{alt}"{size} loading="lazy" decoding="async"></div>')
    return nbformat.v4.new_output("display_data", {"text/html": box})


def figure_box(output, static_folder, folder="en"):
    """A stored figure as the page shows it: its picture for a light page and, when stored
    (d2lmini.plotting.DARK_FIGURES), the one for a dark page, each shown only in its mode (the
    theme's only-light/only-dark), with the figure's alt text, its size in CSS pixels (so the page
    does not move as it loads) and loaded lazily, as the reader scrolls to it."""
    metadata = output.get("metadata", {}).get("image/png", {})
    alt = html.escape(metadata.get("alt") or words(folder, "figure alt"), quote=True)
    size = "".join(f' {key}="{int(metadata[key])}"' for key in ("width", "height") if key in metadata)
    light = base64.b64decode(output["data"]["image/png"])
    stem = hashlib.sha256(light).hexdigest()[:20]  # one file per picture, whichever pages show it
    pictures = {"": light}
    if metadata.get("dark"):
        pictures = {"only-light": light, "only-dark": base64.b64decode(metadata["dark"])}
    images = []
    for mode, picture in pictures.items():
        file = f"{stem}{'-dark' if mode == 'only-dark' else ''}.png"
        (static_folder / file).write_bytes(picture)
        images.append(f'<img src="_static/{FIGURES}/{file}" class="{mode or "dark-light"}" alt="{alt}"{size} '
                      f'loading="lazy" decoding="async">')
    return nbformat.v4.new_output("display_data", {"text/html": f'<div class="d2l-figure">{"".join(images)}</div>'})


def web_chapter(nb, name, hub_url, edition, scripts=None, static_folder=None, figures_folder=None, folder="en",
                declarations=None):
    """A chapter as the site shows it (see the module's docstring). ``scripts`` (explorer name -> its
    scripts, from ``page.write_assets``) makes its explorers live; their stored pictures go into
    ``static_folder``, and each starts at the settings its picture shows when ``declarations``
    (explorer name -> the page's declaration) holds its declaration. ``folder`` is its language's
    ("en", "pt"): what the site adds is in it, and its launch links open the chapter of that language."""
    if edition == "learner":
        nb = learner_notebook(nb, name, dark_pictures=True)
    nb.metadata.pop("widgets", None)
    scripts = scripts or {}
    explorers = 0
    # Raw HTML: MyST escapes the "&" of a Markdown link's query twice.
    links = launch_links(name, hub_url, folder).items()
    links = " · ".join(f'<a href="{html.escape(url)}">{label}</a>' for label, url in links)
    cells = []
    for cell in nb.cells:
        if "colab-setup" in tags(cell):
            continue
        if cell.cell_type == "markdown" and colab.BADGE_MARK in cell.source:
            cell.source = f"<p>{words(folder, 'run line', links=links)}</p>"
        outputs = []
        for output in cell.get("outputs", []):
            if explorer_name(output) in scripts:
                explorers += 1
                static = f"{Path(name).stem}-{explorers}.png"
                declaration = (declarations or {}).get(explorer_name(output))
                start = None if declaration is None else start_settings(output, declaration)
                picture = base64.b64decode(output["data"]["image/png"])
                if start is not None and EXPLORER_REPR.match(output["data"]["text/plain"]).group(1) in REPLAYED:
                    language = next(book.language for book in BOOKS if book.folder == folder)
                    picture = replay_picture(declaration, start, language)
                    output = {**output, "data": {**output["data"], "image/png": base64.b64encode(picture).decode()}}
                (static_folder / static).write_bytes(picture)
                output = live_explorer(output, f"{Path(name).stem[:2]}-{explorers}", scripts, static, folder, start)
            elif figures_folder is not None and "image/png" in output.get("data", {}) \
                    and WIDGET_VIEW not in output["data"]:
                output = figure_box(output, figures_folder, folder)
            output.get("data", {}).pop(WIDGET_VIEW, None)
            outputs.append(output)
        if cell.cell_type == "code":
            cell.outputs = outputs
        cells.append(cell)
        if cell.cell_type == "code" and QUESTION_CALL in cell.source:
            cells.append(nbformat.v4.new_markdown_cell(words(folder, "question note")))
    nb.cells = cells
    return nb


def chapter_title(nb):
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^# (.+)$", cell.source, re.MULTILINE)
            if match:
                return match.group(1).strip()
    raise ValueError("a chapter has no '# ' title in its markdown cells")


def chapter_rows():
    """docs/chapters.md's table: notebook stem -> what the chapter teaches."""
    rows = {}
    for line in (REPO / "docs" / "chapters.md").read_text().splitlines():
        match = re.match(r"^\| `(\d\d_[a-z0-9_]+)` \| (.+) \|$", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


def chapter_map(titles, folder="en"):
    """The landing page's table of chapters: each chapter's title, linked, and what it teaches, from
    docs/chapters.md, or for a translation its line in tools/site_words.py (the English one until
    it has its own)."""
    rows = chapter_rows()
    missing = sorted(set(titles) - set(rows))
    if missing:
        raise ValueError(f"docs/chapters.md has no row for {missing}: add one to its table")
    if folder != "en":
        translated = site_words.CHAPTER_ROWS[folder]
        rows = {stem: translated[stem][1] if stem in translated else row for stem, row in rows.items()}
    lines = [f"| {words(folder, 'map chapter')} | {words(folder, 'map teaches')} |", "|---|---|"]
    lines += [f"| [{title}]({stem}.ipynb) | {rows[stem]} |" for stem, title in titles.items()]
    return "\n".join(lines)


def landing_substitutions(titles, hub_url, edition, folder="en"):
    """What fills the landing page's ``{{ name }}`` fields (MyST's substitutions, site/index.md and
    site/<folder>/index.md), in the language of ``folder``."""
    return {"chapter_map": chapter_map(titles, folder),
            "hub_sentence": words(folder, "hub sentence") if hub_url else "",
            "edition_sentence": words(folder, f"{edition} edition"),
            "repository_link": words(folder, "repository link", url=REPOSITORY_URL)}


def new_book(src):
    """An empty book in ``src``: the site's settings (site/conf.py), stylesheet, templates and theme
    catalogues (site/locale, compiled), no page yet."""
    if src.exists():
        shutil.rmtree(src)
    (src / "_static").mkdir(parents=True)
    shutil.copy(SITE_TEMPLATE / "conf.py", src / "conf.py")
    shutil.copy(SITE_TEMPLATE / "site.css", src / "_static" / "site.css")
    shutil.copytree(SITE_TEMPLATE / "_templates", src / "_templates")
    # The theme's words that its own catalogues leave untranslated (site/locale, docs/translating.md).
    shutil.copytree(SITE_TEMPLATE / "locale", src / "locale")
    for catalogue in (src / "locale").rglob("*.po"):
        with open(catalogue, "rb") as po, open(catalogue.with_suffix(".mo"), "wb") as mo:
            write_mo(mo, read_po(po))
    if not (MATHJAX / "package.json").exists():
        raise FileNotFoundError(f"MathJax is missing at {MATHJAX}: run `make site`, which installs it from npm")
    if shutil.which("node") is None:
        raise FileNotFoundError("node not found: the site's formulas are drawn by MathJax with Node.js 20 or newer")


def copied_assets(assets, folder, declarations):
    """What ``page.write_assets(folder, declarations)`` writes and returns, copied from ``assets``, a folder
    that it wrote for these declarations (and maybe others) in the same language: the shell's files,
    ``colours.js``, and each explorer's data and page script (``page.explorer_scripts``; a test of the
    site compares the two ways)."""
    scripts = {declaration.name: page.explorer_scripts(declaration) for declaration in declarations}
    folder.mkdir(parents=True, exist_ok=True)
    for name in dict.fromkeys([*page.SHELL_FILES, "colours.js",
                               *(src for sources in scripts.values() for src in sources)]):
        shutil.copy(Path(assets) / name, folder / name)
    return scripts


def assemble(src, hub_url, edition, book=BOOKS[0], assets=None):
    """Write ``book``'s source folder: config, table of contents, landing page, chapters, guides;
    return each chapter's title, by its notebook's stem. The explorers' data is exported in the book's
    language, or taken from ``assets``, a folder that ``page.write_assets`` wrote in it (``copied_assets``)."""
    new_book(src)

    chapters = {path: nbformat.read(path, as_version=4) for path in book.chapter_sources()}
    shown = {explorer_name(output) for nb in chapters.values() for cell in nb.cells
             for output in cell.get("outputs", [])} - {None}
    explorers = src / "_static" / EXPLORERS
    # The explorers' data in the book's language: whatever it holds in words comes from d2lmini's catalogue.
    with speaking(book.language):
        live = [declaration.for_page() for declaration in DECLARATIONS
                if declaration.name in shown]
        scripts = page.write_assets(explorers, live) if assets is None else copied_assets(assets, explorers, live)
    figures = src / "_static" / FIGURES
    figures.mkdir()
    titles = {}
    for path, nb in chapters.items():
        titles[path.stem] = chapter_title(nb)
        chapter = web_chapter(nb, path.name, hub_url, edition, scripts, explorers, figures, book.folder,
                              {declaration.name: declaration for declaration in live})
        nbformat.write(chapter, src / path.name)

    guides = book.guides()
    for source in guides.values():
        if not (REPO / source).exists():
            raise FileNotFoundError(f"the site lists {source}, which does not exist")
    # Each English guide keeps its place in the repository, so that MyST resolves its links as GitHub does
    # (site/conf.py sends a link to a file that is no page of the site to that file on GitHub).
    for docname, source in guides.items():
        target = src / (docname + ".md")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / source, target)
        # The pictures a guide shows sit in an images/ folder beside it (docs/images/class_report.png).
        images = (REPO / source).parent / "images"
        if images.is_dir() and not (target.parent / "images").exists():
            shutil.copytree(images, target.parent / "images")
    shutil.copy(SITE_TEMPLATE / book.prefix / "index.md", src / "index.md")
    pages = [{"file": docname} for docname in guides]
    if book.folder == "en":
        pages[-1]["title"] = "Benchmarks"  # benchmarks/README
    toc = {"format": "jb-book", "root": "index", "parts": [
        {"caption": words(book.folder, "chapters caption"), "chapters": [{"file": stem} for stem in titles]},
        {"caption": words(book.folder, "guides caption"), "chapters": pages},
    ]}
    (src / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    return titles


def book_pages(book):
    """Every page of ``book`` (docnames): its landing page, Sphinx's search and index, its chapters and guides."""
    return ["index", "search", "genindex", *(path.stem for path in book.chapter_sources()), *book.guides()]


def language_links(pages):
    """For each book (by folder) and each of its pages, the links to the same page in the other books:
    {"href" (from that page), "lang", "name"}. A page that another book lacks leads to its landing page.
    ``pages``: book -> its pages (``book_pages``)."""
    links = {}
    for book, docnames in pages.items():
        links[book.folder] = {}
        for docname in docnames:
            here = posixpath.dirname(book.prefix + docname) or "."
            links[book.folder][docname] = [
                {"href": posixpath.relpath(f"{other.prefix}{docname if docname in others else 'index'}.html", here),
                 "lang": other.lang, "name": site_words.LANGUAGE_NAMES[other.folder]}
                for other, others in pages.items() if other != book]
    return links


def build_book(book, src, hub_url, edition, links, assets=None):
    """Assemble ``book`` in ``src`` (its explorers' data from ``assets``, if given: ``assemble``) and build
    it; return its HTML folder, its icon fonts cut."""
    titles = assemble(src, hub_url, edition, book, assets)
    html_dir = sphinx_build(src, landing_substitutions(titles, hub_url, edition, book.folder), hub_url, book, links)
    cut_icon_fonts(html_dir)
    name_landmarks(html_dir, book.folder)
    return html_dir


# The theme's navigation landmarks, named in English in its templates (no message to translate).
LANDMARKS = {'<nav class="bd-links bd-docs-nav" aria-label="Main">': "sidebar landmark",
             '<nav aria-label="Page">': "page landmark"}


def name_landmarks(html_dir, folder):
    """Name the theme's navigation landmarks in the book's language (``LANDMARKS``, ``site_words``) on
    every page; an English book keeps the theme's names."""
    if folder == "en":
        return
    for path in Path(html_dir).rglob("*.html"):
        text = path.read_text()
        named = text
        for tag, name in LANDMARKS.items():
            english = site_words.ENGLISH[name]
            named = named.replace(tag, tag.replace(f'aria-label="{english}"',
                                                   f'aria-label="{html.escape(words(folder, name))}"'))
        if named != text:
            path.write_text(named)


def build(out=DEFAULT_OUT, hub_url=None, edition="learner", explorer_assets=None):
    """Assemble and build the site, every book of it, into ``out``; return the seconds the build took.

    Each book exports its explorers' data (``page.write_assets``, about a minute a book), unless
    ``explorer_assets`` maps each book's folder ("en", "pt") to a folder that ``write_assets`` wrote in
    that book's language, for every explorer the book shows: the book then copies its files from there
    (``copied_assets``), and the site is the same, byte for byte. The data does not depend on the edition
    or the hub, so a test run exports it once for all its builds."""
    out = Path(out)
    sources = out.with_name(out.name + "-src")
    started = time.perf_counter()
    if sources.exists():
        shutil.rmtree(sources)
    links = language_links({book: book_pages(book) for book in BOOKS})
    # The books are built side by side, each in a process of its own (d2lmini's language is the process's).
    with ProcessPoolExecutor(len(BOOKS), mp_context=multiprocessing.get_context("spawn")) as pool:
        building = {book: pool.submit(build_book, book, sources / book.folder, hub_url, edition, links[book.folder],
                                      explorer_assets[book.folder] if explorer_assets else None)
                    for book in BOOKS}
        html_dirs = {book: job.result() for book, job in building.items()}
    if out.exists():
        shutil.rmtree(out)
    for book, html_dir in html_dirs.items():
        shutil.copytree(html_dir, out / book.prefix)
    return time.perf_counter() - started


def sphinx_build(src, substitutions, hub_url=None, book=BOOKS[0], language_links=None):
    """Build the book in ``src`` with sphinx-build, in ``book``'s language; return its HTML folder.
    ``substitutions`` fill the ``{{ name }}`` fields of its pages; ``hub_url`` (or None) is the launch
    buttons' JupyterHub; ``language_links`` (docname -> its links to the other books, ``language_links``)
    make each page's language switch."""
    env = {**os.environ, "SITE_REPOSITORY_URL": REPOSITORY_URL, "SITE_REPOSITORY_ROOT": str(REPO),
           "SITE_SUBSTITUTIONS": yaml.safe_dump(substitutions), "SITE_MATHJAX": str(MATHJAX),
           "SITE_RENDER_MATH": str(RENDER_MATH), "SITE_BRANCH": BRANCH, "SITE_HUB_URL": hub_url or "",
           "SITE_LANGUAGE": book.language, "SITE_PATH_TO_DOCS": book.prefix.rstrip("/"),
           "SITE_AUTHOR": words(book.folder, "author"), "SITE_PAGE_SOURCES": yaml.safe_dump(book.guides()),
           "SITE_LANGUAGE_LINKS": yaml.safe_dump(language_links or {})}
    # -W: a warning (a broken link, a missing page) fails the build; -n: so does a missing reference.
    # Built inside ``src``: MyST-NB writes a jupyter_execute folder beside the html one, which must
    # not land in a shared folder (build/) where another edition's build could mix with it.
    html_dir = src / "_build" / "html"
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "-n", "--keep-going", "-q",
               "-d", str(src / "_build" / "doctrees"), str(src), str(html_dir)]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-6000:] + done.stderr[-6000:])
        raise RuntimeError(f"sphinx-build failed (exit {done.returncode}); its output is above")
    return html_dir


class _Classes(HTMLParser):
    """Every class name that a page's elements carry."""

    def __init__(self):
        super().__init__()
        self.names = set()

    def handle_starttag(self, tag, attrs):
        self.names.update((dict(attrs).get("class") or "").split())


ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+::?before,?)+)\{content:"\\([0-9a-f]+)"\}')
ICON_FONTS = Path("_static") / "vendor" / "fontawesome" / "webfonts"
ICON_STYLESHEETS = [Path("_static") / "styles" / "pydata-sphinx-theme.css",
                    Path("_static") / "styles" / "sphinx-book-theme.css"]


def cut_icon_fonts(site):
    """Cut the theme's icon fonts (Font Awesome: about 400 KB, which a phone loads on every first view)
    to the icons the site's pages show and those the theme's stylesheets draw themselves; return the
    number of icons kept. An icon a page names by its class (``fa-bars``) is found in its HTML."""
    from fontTools import subset

    css = "".join((site / sheet).read_text() for sheet in ICON_STYLESHEETS)
    by_class = {}
    for selectors, code in ICON_RULE.findall(css):
        for name in re.findall(r"\.fa-([a-z0-9-]+)", selectors):
            by_class[name] = int(code, 16)
    own = {int(code, 16) for code in re.findall(r'"\\((?:f|e)[0-9a-f]{3})"', ICON_RULE.sub("", css))}
    classes = _Classes()
    for html_page in site.rglob("*.html"):
        classes.feed(html_page.read_text())
    icons = {by_class[name[3:]] for name in classes.names if name.startswith("fa-") and name[3:] in by_class} | own
    for font in sorted((site / ICON_FONTS).glob("fa-*")):
        options = subset.Options()
        options.flavor = "woff2" if font.suffix == ".woff2" else None
        options.notdef_outline = True
        cut = subset.Subsetter(options)
        loaded = subset.load_font(str(font), options)
        cut.populate(unicodes=icons)
        cut.subset(loaded)
        subset.save_font(loaded, str(font), options)
    return len(icons)


def folder_size(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the site's folder (default build/site)")
    parser.add_argument("--hub-url", default="",
                        help="a JupyterHub's address for the launch buttons, e.g. https://hub.example.edu "
                             "(default: no hub button)")
    parser.add_argument("--edition", choices=["learner", "instructor"], default="learner",
                        help="learner (default): exercises as stubs; instructor: with the answers")
    args = parser.parse_args(argv)
    if args.hub_url and not re.match(r"^https?://[^/\s]+", args.hub_url):
        parser.error(f"--hub-url must be an http(s) address such as https://hub.example.edu; got {args.hub_url!r}")
    seconds = build(args.out, args.hub_url, args.edition)
    print(f"Built the site ({args.edition} edition) in {seconds:.0f} s: {folder_size(args.out) / 1e6:.1f} MB "
          f"in {args.out}. Open {args.out / 'index.html'} in a browser.")


if __name__ == "__main__":
    main()
