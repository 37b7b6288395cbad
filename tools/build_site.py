"""The collection's web site: a static folder built offline with Jupyter Book 1's packages, read offline.

    python tools/build_site.py [--out build/site] [--hub-url https://hub.example.edu] [--edition learner]

It assembles a book in ``<out>-src`` (site/conf.py, a table of contents, the
pages) and builds it with sphinx-build into ``<out>`` (open
``<out>/index.html``). The pages are made from what is already stored:

- each chapter is its **learner edition** (tools/instructor.py: exercises as
  stubs, no check output), with its stored figures; ``--edition instructor``
  builds the notebooks with their answers instead, for an instructor who wants
  them on purpose;
- an explorer is **live**: its controls move its picture in the page, with no
  kernel, from data that ``d2lmini.widgets.page`` computes here with the
  explorer's own declaration (``_static/explorers/``); without JavaScript its
  stored picture shows. The why-questions show their question and options as text;
- ``docs/`` and ``benchmarks/README.md`` are pages too, and ``site/index.md``
  is the landing page, its chapter map made here from each chapter's title and
  its row in docs/chapters.md.

Nothing is executed, and nothing is fetched: MathJax comes from the npm copy
that ``make site`` installs (MATHJAX below), the theme's fonts and scripts from
the Python packages. For the web, every chapter loses what only a live
kernel uses: the widget state (whose JavaScript comes from a CDN), the
widget views' placeholders and the Colab setup cell; its Colab badge (an
image from Colab's site) becomes a line of links.
"""

import argparse
import base64
import html
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import yaml

from d2lmini.widgets import DECLARATIONS, page

sys.path.insert(0, str(Path(__file__).resolve().parent))
import colab  # noqa: E402
from class_hub import nbgitpuller_link  # noqa: E402
from instructor import learner_notebook, tags  # noqa: E402
from learner_repo import chapter_sources  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SITE_TEMPLATE = REPO / "site"
DEFAULT_OUT = REPO / "build" / "site"
MATHJAX = REPO / ".venv" / "mathjax" / "node_modules" / "mathjax" / "es5"
# The TeX-to-HTML bundle and its fonts; then what MathJax's menu loads when a reader turns on
# its accessibility options (speech, the expression explorer): a11y/, sre/ and the MathML input.
MATHJAX_FILES = ["tex-chtml-full.js", "output/chtml/fonts/woff-v2", "a11y", "sre", "input/mml.js", "input/mml"]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
QUESTION_CALL = "questions.ask("  # a chapter's Why? question (d2lmini.exercises.questions)
BINDER = "https://mybinder.org/v2/gh/{repository}/{branch}?urlpath=lab/tree/{name}"
# The guides, in the order of the site's navigation; docs/chapters.md feeds the landing page's map.
GUIDES = ["learners", "instructors", "explorers", "d2lmini", "colab", "binder", "hub", "platforms",
          "pretrained", "chapter08", "architecture", "site", "chapters"]
REPOSITORY_URL = f"https://github.com/{colab.REPOSITORY}"
GITHUB_FILE = REPOSITORY_URL + "/blob/main/{path}"
EDITION_SENTENCES = {
    "learner": "The exercises are stubs here, as in the notebooks a learner runs: their answers are on no page "
               "of this site.",
    "instructor": "**This is the instructor edition: every exercise shows its answer.** Keep it off any address "
                  "your learners can reach.",
}
LINK = re.compile(r"\]\(([^)\s]+)\)")
EXPLORER_REPR = re.compile(r"^(\w+Explorer|TrainingView)\(")  # an explorer's text form names its declaration
# Chapter 08's training view trains a model, which needs a kernel: on the page it becomes the replay of
# the notebook's recorded run, the alignment explorer with its Play button.
REPLAYED = {"TrainingView": "AlignmentExplorer"}
EXPLORERS = "explorers"  # the live explorers' scripts, in _static


def launch_links(name, hub_url):
    """The chapter's launch links, by label: where a reader runs this chapter's learner edition."""
    links = {"Colab": colab.colab_url(name),
             "Binder": BINDER.format(repository=colab.REPOSITORY, branch=colab.LEARNER_BRANCH, name=name)}
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
    does, or for a reader without JavaScript; and the scripts of its data."""
    name = explorer_name(output)
    alt = html.escape(f"The explorer's first picture: {output['data']['text/plain']}", quote=True)
    tags = "".join(f'<script src="_static/{EXPLORERS}/{src}"></script>' for src in scripts[name])
    width = output.get("metadata", {}).get("image/png", {}).get("width", "")  # CSS pixels: the PNG has twice
    box = (f'<div class="d2l-explorer-page" id="explorer-{number}" data-d2l-explorer="{name}">'
           f'<img src="_static/{EXPLORERS}/{static}" alt="{alt}" width="{width}"></div>')
    return nbformat.v4.new_output("display_data", {"text/html": box + tags})


def web_chapter(nb, name, hub_url, edition, scripts=None, static_folder=None):
    """A chapter as the site shows it (see the module's docstring). ``scripts`` (explorer name -> its
    scripts, from ``page.write_assets``) makes its explorers live; their stored pictures go into
    ``static_folder``."""
    if edition == "learner":
        nb = learner_notebook(nb, name)
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


def _relink(text, page, pages):
    """Links from a copied Markdown page: kept when they reach a page of the site, else to the file on GitHub."""

    def relink(match):
        target = match.group(1)
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve()
        if resolved in pages:
            return match.group(0)
        relative = resolved.relative_to(REPO).as_posix()
        url = GITHUB_FILE.format(path=relative)
        return f"]({url}{'#' + anchor if anchor else ''})"

    return LINK.sub(relink, text)


def assemble(src, hub_url, edition):
    """Write the book's source folder: config, table of contents, landing page, chapters, guides."""
    if src.exists():
        shutil.rmtree(src)
    (src / "_static").mkdir(parents=True)
    shutil.copy(SITE_TEMPLATE / "conf.py", src / "conf.py")
    shutil.copy(SITE_TEMPLATE / "site.css", src / "_static" / "site.css")
    shutil.copytree(SITE_TEMPLATE / "_templates", src / "_templates")
    for relative in MATHJAX_FILES:
        source = MATHJAX / relative
        if not source.exists():
            raise FileNotFoundError(f"MathJax is missing at {source}: run `make site`, which installs it from npm")
        target = src / "_static" / "mathjax" / relative
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)

    chapters = {path: nbformat.read(path, as_version=4) for path in chapter_sources()}
    shown = {explorer_name(output) for nb in chapters.values() for cell in nb.cells
             for output in cell.get("outputs", [])} - {None}
    live = [declaration.for_page() for declaration in DECLARATIONS if declaration.__name__ + "Explorer" in shown]
    explorers = src / "_static" / EXPLORERS
    scripts = page.write_assets(explorers, live)
    titles = {}
    for path, nb in chapters.items():
        titles[path.stem] = chapter_title(nb)
        nbformat.write(web_chapter(nb, path.name, hub_url, edition, scripts, explorers), src / path.name)

    guides = [REPO / "docs" / f"{guide}.md" for guide in GUIDES] + [REPO / "benchmarks" / "README.md"]
    for guide in guides:
        if not guide.exists():
            raise FileNotFoundError(f"the site lists {guide.relative_to(REPO)}, which does not exist")
    pages = {guide.resolve() for guide in guides}
    for guide in guides:
        target = src / guide.relative_to(REPO)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_relink(guide.read_text(), guide, pages))

    hub_sentence = ", or on your course's **JupyterHub**" if hub_url else ""
    landing = (SITE_TEMPLATE / "index.md").read_text()
    fields = {"chapter_map": chapter_map(titles), "hub_sentence": hub_sentence,
              "edition_sentence": EDITION_SENTENCES[edition], "repository": REPOSITORY_URL}
    for field, value in fields.items():
        landing = landing.replace("{" + field + "}", value)
    (src / "index.md").write_text(landing)
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
    assemble(src, hub_url, edition)
    env = {**os.environ, "SITE_REPOSITORY_URL": REPOSITORY_URL,
           "SITE_BRANCH": colab.LEARNER_BRANCH, "SITE_HUB_URL": hub_url or ""}
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
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(html_dir, out)
    return time.perf_counter() - started


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
