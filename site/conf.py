"""Sphinx settings of the collection's web site (docs/site.md).

`make site` (tools/build_site.py) copies this file into the book's source folder with
the chapters, the guides, the landing page and the table of contents, then runs
sphinx-build. The packages are Jupyter Book 1's (Sphinx, MyST-NB, the book
theme, the external table of contents); a plain conf.py, rather than Jupyter
Book's _config.yml, keeps the extensions to those the site uses (no Thebe,
whose configuration script Jupyter Book adds twice) and every list as written.
tools/build_site.py passes the launch buttons' repository, branch and JupyterHub
address (empty: no hub button) in the environment.
"""

import os

project = "attention-notebooks"
author = "the attention-notebooks contributors"
copyright = "2026, " + author

# sphinx.ext.githubpages writes .nojekyll, without which GitHub Pages drops the
# folders whose names start with "_" (_static, _images).
extensions = ["myst_nb", "sphinx_external_toc", "sphinx_copybutton", "sphinx_book_theme", "sphinx.ext.githubpages"]
external_toc_path = "_toc.yml"
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# The chapters are stored executed; the site never runs them again.
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath", "html_image"]
# Markdown links to a heading (page.md#a-heading) resolve, as they do on GitHub.
myst_heading_anchors = 4

html_theme = "sphinx_book_theme"
# The theme's colour-mode and search buttons, given names that hold their visible labels (WCAG 2.5.3).
templates_path = ["_templates"]
html_title = project
html_static_path = ["_static"]
html_css_files = ["site.css", "explorers/explorers.css"]
# The live explorers (d2lmini.widgets.page): the colour maps and the page's shell on every page;
# a chapter's own explorers load their data where they appear (tools/build_site.py).
html_js_files = ["explorers/colours.js", ("explorers/explorers.js", {"defer": "defer"})]
# MathJax ships with the site (tools/build_site.py copies it from npm's package): no CDN.
mathjax_path = "mathjax/tex-chtml-full.js"
# Search results without a page summary: a summary fetches each result's page,
# which a browser refuses for pages opened from disk.
html_show_search_summary = False
html_theme_options = {
    # Launch buttons open a chapter's learner edition: the `learner` branch of
    # the repository (make learner-repo), where each chapter sits at the top level.
    "repository_url": os.environ["SITE_REPOSITORY_URL"],
    "repository_branch": os.environ["SITE_BRANCH"],
    "path_to_docs": "",
    "launch_buttons": {
        "notebook_interface": "jupyterlab",
        "binderhub_url": "https://mybinder.org",
        "colab_url": "https://colab.research.google.com",
        "jupyterhub_url": os.environ["SITE_HUB_URL"],
    },
    "use_download_button": True,
    "use_repository_button": True,
    "home_page_in_toc": True,
}
# A first visit starts in light mode: with no stored choice, the theme logs an error otherwise.
html_context = {"default_mode": "light"}
