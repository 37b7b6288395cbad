"""Sphinx settings of the collection's web site (docs/site.md).

`make site` (tools/build_site.py) copies this file into each book's source folder
(one per language) with the chapters, the guides, the landing page and the table
of contents, then runs sphinx-build. The packages are Jupyter Book 1's (Sphinx, MyST-NB, the book
theme, the external table of contents); a plain conf.py, rather than Jupyter
Book's _config.yml, keeps the extensions to those the site uses (no Thebe,
whose configuration script Jupyter Book adds twice) and every list as written.
tools/build_site.py passes the launch buttons' repository, branch and JupyterHub
address (empty: no hub button), the repository's folder, the landing page's
substitutions and the book's language, place and language links in the environment.
"""

import html
import json
import os
import subprocess
from pathlib import Path

import yaml
from docutils import nodes
from sphinx import addnodes

project = "attention-notebooks"
author = os.environ.get("SITE_AUTHOR", "the attention-notebooks contributors")  # in the book's language
copyright = "2026, " + author
# The book's language ("en", "pt_BR"): Sphinx's and the theme's words, <html lang>, and the search's stemmer.
language = os.environ.get("SITE_LANGUAGE", "en")
# The theme's words that its own catalogues leave untranslated: locale/<language>/LC_MESSAGES/sphinx.po
# (pydata-sphinx-theme's, which Sphinx reads from here) and booktheme.po (setup, below).
locale_dirs = ["locale"]

# sphinx.ext.githubpages writes .nojekyll, without which GitHub Pages drops the
# folders whose names start with "_" (_static, _images).
extensions = ["myst_nb", "sphinx_external_toc", "sphinx_copybutton", "sphinx_book_theme", "sphinx.ext.githubpages"]
external_toc_path = "_toc.yml"
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# The chapters are stored executed; the site never runs them again.
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath", "html_image", "substitution"]
# The landing page's {{ name }} fields: its chapter map, its edition's sentence, ... (tools/build_site.py).
myst_substitutions = yaml.safe_load(os.environ["SITE_SUBSTITUTIONS"])
# Markdown links to a heading (page.md#a-heading) resolve, as they do on GitHub.
myst_heading_anchors = 4

# layout.html: what a phone's first view waits for (docs/site.md); the theme's colour-mode and search
# buttons, given names that hold their visible labels (WCAG 2.5.3); the language switch.
templates_path = ["_templates"]
html_theme = "sphinx_book_theme"
html_title = project
html_static_path = ["_static"]
html_css_files = ["site.css", "explorers/explorers.css"]
# The live explorers (d2lmini.widgets.page): the colour maps and the page's shell on every page, its
# parts in order (page.SHELL_SCRIPTS, which tests/test_page_js_node.py holds this list to); a chapter's
# own explorers load their data where they appear (tools/build_site.py).
html_js_files = ["explorers/colours.js", *[(f"explorers/{src}", {"defer": "defer"})
                                          for src in ("words.js", "paint.js", "controls.js", "explorers.js")]]
# Every formula is drawn when the site is built (setup, below): no page loads MathJax.
html_math_renderer = "prerendered"
# Search results without a page summary: a summary fetches each result's page,
# which a browser refuses for pages opened from disk.
html_show_search_summary = False
html_theme_options = {
    # Launch buttons open a chapter's learner edition: the `learner` branch of
    # the repository (make learner-repo), where each English chapter sits at the
    # top level and each translated one in its folder (path_to_docs: "pt").
    "repository_url": os.environ["SITE_REPOSITORY_URL"],
    "repository_branch": os.environ["SITE_BRANCH"],
    "path_to_docs": os.environ.get("SITE_PATH_TO_DOCS", ""),
    "launch_buttons": {
        "notebook_interface": "jupyterlab",
        "binderhub_url": "https://mybinder.org",
        "colab_url": "https://colab.research.google.com",
        "jupyterhub_url": os.environ["SITE_HUB_URL"],
    },
    "use_download_button": True,
    "use_repository_button": True,
    "home_page_in_toc": True,
    # The link to this page in the other language, first in the article's header (_templates/language-switch.html).
    "article_header_end": ["language-switch.html", "article-header-buttons.html"],
}
# A first visit starts in light mode: with no stored choice, the theme logs an error otherwise.
html_context = {"default_mode": "light"}


# --- Formulas drawn at build time --------------------------------------------------------------
# MathJax (npm's package, which `make site` installs; tools/build_site.py passes its path) draws
# every formula of the site once, as SVG in the text's colour followed by its MathML for screen
# readers (tools/render_math.js). A page then needs no script and no font for its maths, and does
# not move while they are drawn.


def _display_tex(node):
    """The TeX of a displayed formula, as Sphinx's MathJax renderer gives it to MathJax."""
    if node["nowrap"]:
        return node.astext()
    parts = [part for part in node.astext().split("\n\n") if part.strip()]
    parts = [rf"\begin{{split}}{part}\end{{split}}" if r"\\" in part else part for part in parts]
    if len(parts) == 1:
        return parts[0]
    return r"\begin{align}\begin{aligned}" + r"\\".join(parts) + r"\end{aligned}\end{align}"


def _formula(node):
    return (_display_tex(node), True) if isinstance(node, nodes.math_block) else (node.astext(), False)


def _draw_formulas(app, env):
    """Draw every formula of every page in one run of MathJax; their stylesheet ends site.css."""
    is_formula = lambda node: isinstance(node, (nodes.math, nodes.math_block))  # noqa: E731
    formulas = sorted({_formula(node) for docname in sorted(env.found_docs)
                       for node in env.get_doctree(docname).findall(is_formula)})
    done = subprocess.run(["node", os.environ["SITE_RENDER_MATH"], os.environ["SITE_MATHJAX"]],
                          input=json.dumps({"formulas": formulas}), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"drawing the formulas failed: {done.stderr.strip()}")
    drawn = json.loads(done.stdout)
    app.env.d2l_formulas = dict(zip(map(tuple, formulas), drawn["html"]))
    with open(Path(app.confdir) / "_static" / "site.css", "a") as css:  # one stylesheet fewer to wait for
        css.write("\n/* The formulas' own rules (MathJax's SVG output), added when the site is built. */\n")
        css.write(drawn["css"])


def _visit_math(self, node):
    self.body.append(self.starttag(node, "span", "", CLASS="math"))
    self.body.append(self.builder.env.d2l_formulas[_formula(node)] + "</span>")
    raise nodes.SkipNode


def _visit_display_math(self, node):
    self.body.append(self.starttag(node, "div", CLASS="math"))
    if node["number"]:
        self.body.append(f'<span class="eqno">({html.escape(str(node["number"]))})</span>')
    self.body.append(self.builder.env.d2l_formulas[_formula(node)] + "</div>\n")
    raise nodes.SkipNode


# --- Links to the repository's other files ----------------------------------------------------
# A guide sits in the book where it sits in the repository (docs/hub.md), so MyST resolves its links
# to other pages as GitHub does. A link to a file that is no page of the site (../tools/colab.py)
# is left unresolved by MyST; it leads to that file on GitHub instead.
# A page that sits elsewhere in the book (a translation's glossary, docs/pt/glossario.md, at the top of its
# book) resolves its links from its own place in the repository: tools/build_site.py gives it, by docname.
REPOSITORY_ROOT = Path(os.environ["SITE_REPOSITORY_ROOT"])
GITHUB_FILE = os.environ["SITE_REPOSITORY_URL"] + "/blob/main/{path}"
PAGE_SOURCES = yaml.safe_load(os.environ.get("SITE_PAGE_SOURCES") or "{}")


def _link_repository_files(app, doctree):
    page = REPOSITORY_ROOT / PAGE_SOURCES.get(app.env.docname, app.env.doc2path(app.env.docname, base=False))
    for link in list(doctree.findall(addnodes.pending_xref)):
        if link["reftype"] != "myst" or link["refdomain"] is not None:
            continue
        path, hash_mark, anchor = link["reftarget"].partition("#")
        target = (page.parent / path).resolve()
        if not target.exists() or REPOSITORY_ROOT not in target.parents:
            continue
        url = GITHUB_FILE.format(path=target.relative_to(REPOSITORY_ROOT).as_posix()) + hash_mark + anchor
        title = {"reftitle": link["title"]} if "title" in link else {}
        link.replace_self(nodes.reference("", "", *link.children, refuri=url, **title))


# --- Scripts that do not hold the page up ------------------------------------------------------
# Every script file of a page loads with defer: in order, after the page is parsed, without keeping
# the first view waiting. documentation_options.js stays as it is: the page's inline scripts read it.
BLOCKING = {"_static/documentation_options.js"}


def _defer_scripts(app, pagename, templatename, context, doctree):
    if pagename == "search":  # Sphinx's search page runs searchtools.js at once, which needs doctools.js
        return
    deferred = []
    for script in context.get("script_files", []):  # shared by every page: copied, never changed
        if script.filename and script.filename not in BLOCKING and not {"async", "defer"} & set(script.attributes):
            script = type(script)(script.filename, priority=script.priority, **script.attributes, defer="defer")
        deferred.append(script)
    context["script_files"] = deferred


# --- The language switch -------------------------------------------------------------------------
# Each page links to itself in the other language, or to the other language's landing page where it
# has no counterpart: tools/build_site.py (language_links) gives every page's links, relative to it.
LANGUAGE_LINKS = yaml.safe_load(os.environ.get("SITE_LANGUAGE_LINKS") or "{}")


def _language_links(app, pagename, templatename, context, doctree):
    context["language_links"] = LANGUAGE_LINKS.get(pagename, [])


def setup(app):
    # After the book theme's own catalogue, which keeps the words it translates.
    app.add_message_catalog("booktheme", str(Path(app.confdir) / "locale"))
    app.connect("doctree-read", _link_repository_files)
    app.connect("html-page-context", _defer_scripts)
    app.connect("html-page-context", _language_links)
    app.add_html_math_renderer("prerendered", (_visit_math, None), (_visit_display_math, None))
    app.connect("env-updated", _draw_formulas)
