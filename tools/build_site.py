"""The collection's web site: a static folder built offline with Jupyter Book 1's packages, read offline.

    python -m tools.build_site [--out build/site] [--hub-url https://hub.example.edu] [--edition learner]

It assembles a book in ``<out>-src`` (site/conf.py, a table of contents, the
pages) and builds it with sphinx-build into ``<out>`` (open
``<out>/index.html``). The pages are made from what is already stored:

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
  map from each chapter's title and its row in docs/chapters.md.

Nothing is executed, and nothing is fetched: MathJax comes from the npm copy
that ``make site`` installs (MATHJAX below), the theme's fonts and scripts from
the Python packages. For the web, every chapter loses what only a live
kernel uses: the widget state (whose JavaScript comes from a CDN), the
widget views' placeholders and the Colab setup cell; its Colab badge (an
image from Colab's site) becomes a line of links.
"""

import argparse
import base64
import hashlib
import html
import io
import os
import re
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import yaml
from PIL import Image

from d2lmini.widgets import DECLARATIONS, page
from d2lmini.widgets._compat import WIDGET_VIEW
from tools import colab
from tools.class_hub import nbgitpuller_link
from tools.editions import learner_notebook, tags
from tools.learner_repo import BRANCH, chapter_sources

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
EDITION_SENTENCES = {
    "learner": "The exercises are stubs here, as in the notebooks a learner runs: their answers are on no page "
               "of this site.",
    "instructor": "**This is the instructor edition: every exercise shows its answer.** Keep it off any address "
                  "your learners can reach.",
}
EXPLORER_REPR = re.compile(r"^(\w+Explorer|TrainingView)\(")  # an explorer's text form names its declaration
# Chapter 08's training view trains a model, which needs a kernel: on the page it becomes the replay of
# the notebook's recorded run, the alignment explorer with its Play button.
REPLAYED = {"TrainingView": "AlignmentExplorer"}
EXPLORERS = "explorers"  # the live explorers' scripts, in _static
FIGURES = "figures"  # the chapters' figures, in _static


def launch_links(name, hub_url):
    """The chapter's launch links, by label: where a reader runs this chapter's learner edition."""
    links = {"Colab": colab.colab_url(name),
             "Binder": BINDER.format(repository=colab.REPOSITORY, branch=BRANCH, name=name)}
    if hub_url:
        links["your course's hub"] = nbgitpuller_link(hub_url, REPOSITORY_URL, name)
    return links


def explorer_name(output):
    """The declaration's name ("KernelPoolingExplorer") of an explorer's stored output, or None."""
    if WIDGET_VIEW not in output.get("data", {}):
        return None
    match = EXPLORER_REPR.match(output["data"].get("text/plain", ""))
    return REPLAYED.get(match.group(1), match.group(1)) if match else None


def live_explorer(output, number, scripts, static):
    """The stored output of an explorer made live: its box, which the page's script fills with the
    controls and the picture, holding the stored picture (``static``, a file in _static) until it
    does, or for a reader without JavaScript. The box names the scripts of its data, which the page
    loads when the reader nears it (explorers.js), so that a first view never waits for them."""
    name = explorer_name(output)
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", name.removesuffix("Explorer")).lower()  # "kernel pooling"
    settings = output["data"]["text/plain"].partition("(")[2].rstrip(")")
    alt = html.escape(f"The {words} explorer's picture at its first settings ({settings}); with JavaScript "
                      "it becomes live, with a text summary of what it shows.", quote=True)
    sources = " ".join(f"_static/{EXPLORERS}/{src}" for src in scripts[name])
    width = output.get("metadata", {}).get("image/png", {}).get("width")  # CSS pixels: the PNG has twice
    picture = Image.open(io.BytesIO(base64.b64decode(output["data"]["image/png"])))
    size = f' width="{width}" height="{round(picture.height * width / picture.width)}"' if width else ""
    box = (f'<div class="d2l-explorer-page" id="explorer-{number}" data-d2l-explorer="{name}" '
           f'data-d2l-scripts="{html.escape(sources, quote=True)}">'
           f'<img src="_static/{EXPLORERS}/{static}" alt="{alt}"{size} loading="lazy" decoding="async"></div>')
    return nbformat.v4.new_output("display_data", {"text/html": box})


def figure_box(output, static_folder):
    """A stored figure as the page shows it: its picture for a light page and, when stored
    (d2lmini.plotting.DARK_FIGURES), the one for a dark page, each shown only in its mode (the
    theme's only-light/only-dark), with the figure's alt text, its size in CSS pixels (so the page
    does not move as it loads) and loaded lazily, as the reader scrolls to it."""
    metadata = output.get("metadata", {}).get("image/png", {})
    alt = html.escape(metadata.get("alt") or "A figure (its chapter's notebook has no alt text for it).", quote=True)
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


def web_chapter(nb, name, hub_url, edition, scripts=None, static_folder=None, figures_folder=None):
    """A chapter as the site shows it (see the module's docstring). ``scripts`` (explorer name -> its
    scripts, from ``page.write_assets``) makes its explorers live; their stored pictures go into
    ``static_folder``."""
    if edition == "learner":
        nb = learner_notebook(nb, name, dark_pictures=True)
    nb.metadata.pop("widgets", None)
    scripts = scripts or {}
    explorers = 0
    # Raw HTML: MyST escapes the "&" of a Markdown link's query twice.
    links = launch_links(name, hub_url).items()
    links = " · ".join(f'<a href="{html.escape(url)}">{label}</a>' for label, url in links)
    cells = []
    for cell in nb.cells:
        if "colab-setup" in tags(cell):
            continue
        if cell.cell_type == "markdown" and colab.BADGE_MARK in cell.source:
            cell.source = f"<p><strong>Run this chapter</strong> (its learner edition, sliders live): {links}</p>"
        outputs = []
        for output in cell.get("outputs", []):
            if explorer_name(output) in scripts:
                explorers += 1
                static = f"{Path(name).stem}-{explorers}.png"
                (static_folder / static).write_bytes(base64.b64decode(output["data"]["image/png"]))
                output = live_explorer(output, f"{Path(name).stem[:2]}-{explorers}", scripts, static)
            elif figures_folder is not None and "image/png" in output.get("data", {}) \
                    and WIDGET_VIEW not in output["data"]:
                output = figure_box(output, figures_folder)
            output.get("data", {}).pop(WIDGET_VIEW, None)
            outputs.append(output)
        if cell.cell_type == "code":
            cell.outputs = outputs
        cells.append(cell)
        if cell.cell_type == "code" and QUESTION_CALL in cell.source:
            cells.append(nbformat.v4.new_markdown_cell(
                "*On this page the options cannot be picked: run the chapter (links at the top) to choose one "
                "and see what the check says about it.*"))
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


def chapter_map(titles):
    rows = chapter_rows()
    missing = sorted(set(titles) - set(rows))
    if missing:
        raise ValueError(f"docs/chapters.md has no row for {missing}: add one to its table")
    lines = ["| Chapter | What it teaches |", "|---|---|"]
    lines += [f"| [{title}]({stem}.ipynb) | {rows[stem]} |" for stem, title in titles.items()]
    return "\n".join(lines)


def landing_substitutions(titles, hub_url, edition):
    """What fills the landing page's ``{{ name }}`` fields (MyST's substitutions, site/index.md)."""
    return {"chapter_map": chapter_map(titles),
            "hub_sentence": ", or on your course's **JupyterHub**" if hub_url else "",
            "edition_sentence": EDITION_SENTENCES[edition],
            "repository_link": f"[the repository]({REPOSITORY_URL})"}


def new_book(src):
    """An empty book in ``src``: the site's settings (site/conf.py), stylesheet and templates, no page yet."""
    if src.exists():
        shutil.rmtree(src)
    (src / "_static").mkdir(parents=True)
    shutil.copy(SITE_TEMPLATE / "conf.py", src / "conf.py")
    shutil.copy(SITE_TEMPLATE / "site.css", src / "_static" / "site.css")
    shutil.copytree(SITE_TEMPLATE / "_templates", src / "_templates")
    if not (MATHJAX / "package.json").exists():
        raise FileNotFoundError(f"MathJax is missing at {MATHJAX}: run `make site`, which installs it from npm")
    if shutil.which("node") is None:
        raise FileNotFoundError("node not found: the site's formulas are drawn by MathJax with Node.js 20 or newer")


def assemble(src, hub_url, edition):
    """Write the book's source folder: config, table of contents, landing page, chapters, guides;
    return each chapter's title, by its notebook's stem."""
    new_book(src)

    chapters = {path: nbformat.read(path, as_version=4) for path in chapter_sources()}
    shown = {explorer_name(output) for nb in chapters.values() for cell in nb.cells
             for output in cell.get("outputs", [])} - {None}
    live = [declaration.for_page() for declaration in DECLARATIONS if declaration.__name__ + "Explorer" in shown]
    explorers = src / "_static" / EXPLORERS
    scripts = page.write_assets(explorers, live)
    figures = src / "_static" / FIGURES
    figures.mkdir()
    titles = {}
    for path, nb in chapters.items():
        titles[path.stem] = chapter_title(nb)
        nbformat.write(web_chapter(nb, path.name, hub_url, edition, scripts, explorers, figures), src / path.name)

    guides = [REPO / "docs" / f"{guide}.md" for guide in GUIDES] + [REPO / "benchmarks" / "README.md"]
    for guide in guides:
        if not guide.exists():
            raise FileNotFoundError(f"the site lists {guide.relative_to(REPO)}, which does not exist")
    # Each guide keeps its place in the repository, so that MyST resolves its links as GitHub does
    # (site/conf.py sends a link to a file that is no page of the site to that file on GitHub).
    for guide in guides:
        target = src / guide.relative_to(REPO)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(guide, target)
    shutil.copy(SITE_TEMPLATE / "index.md", src / "index.md")
    toc = {"format": "jb-book", "root": "index", "parts": [
        {"caption": "Chapters", "chapters": [{"file": stem} for stem in titles]},
        {"caption": "Guides", "chapters": [{"file": f"docs/{guide}"} for guide in GUIDES]
         + [{"file": "benchmarks/README", "title": "Benchmarks"}]},
    ]}
    (src / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    return titles


def build(out=DEFAULT_OUT, hub_url=None, edition="learner"):
    """Assemble and build the site into ``out``; return the seconds the build took."""
    out = Path(out)
    src = out.with_name(out.name + "-src")
    started = time.perf_counter()
    titles = assemble(src, hub_url, edition)
    html_dir = sphinx_build(src, landing_substitutions(titles, hub_url, edition), hub_url)
    cut_icon_fonts(html_dir)
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(html_dir, out)
    return time.perf_counter() - started


def sphinx_build(src, substitutions, hub_url=None):
    """Build the book in ``src`` with sphinx-build; return its HTML folder. ``substitutions`` fill the
    ``{{ name }}`` fields of its pages; ``hub_url`` (or None) is the launch buttons' JupyterHub."""
    env = {**os.environ, "SITE_REPOSITORY_URL": REPOSITORY_URL, "SITE_REPOSITORY_ROOT": str(REPO),
           "SITE_SUBSTITUTIONS": yaml.safe_dump(substitutions), "SITE_MATHJAX": str(MATHJAX),
           "SITE_RENDER_MATH": str(RENDER_MATH), "SITE_BRANCH": BRANCH, "SITE_HUB_URL": hub_url or ""}
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
