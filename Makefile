# The two commands a learner needs are `make lab` and `make test`; both set up
# ./.venv first and reuse it afterwards.

VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
JUPYTER := $(VENV)/bin/jupyter
NOTEBOOK_SOURCES := $(wildcard notebooks/*.py)
PYTEST_NOTEBOOKS := --nbval --sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=120

.PHONY: install install-browser lab test lint unit-test browser-test notebook-test notebooks student \
	solutions bench bench-widgets bench-notebooks bench-overhead clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --progress-bar off -r requirements.txt -e '.[test]' 2>&1 \
		| { grep -v 'is ignored: it is neither a file nor a directory' || true; }
	$(PY) -c "import torch, d2lmini, jupytext, nbval, ipywidgets"
	# nbgrader (a test extra) is for its command line only: keep its menus and
	# server extensions out of the learners' JupyterLab.
	$(JUPYTER) labextension disable --level=sys_prefix --log-level=ERROR @jupyter/nbgrader
	$(JUPYTER) server extension disable --sys-prefix --log-level=WARN $(addprefix \
		nbgrader.server_extensions.,formgrader validate_assignment assignment_list course_list)
	touch $@

# Jupyter settings the project ships (binder/overrides.json, also installed by
# binder/postBuild): arrow keys move a focused slider in Notebook 7 as they do
# in JupyterLab. Defaults for this environment only; a user's own settings win.
OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
$(OVERRIDES): binder/overrides.json $(STAMP)
	install -D -m 644 $< $@

install: $(STAMP) $(OVERRIDES)

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

lab: install
	$(JUPYTER) lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=notebooks $(ALLOW_ROOT)

# Unit tests with coverage, the pair-sync check, then every notebook under
# strict nbval (outputs must match a fresh run), and every notebook in a real
# browser (JupyterLab and Notebook 7, screenshots in build/screenshots).
test: install install-browser lint
	$(PY) -m pytest $(PYTEST_NOTEBOOKS) --cov=d2lmini --cov-report=term-missing:skip-covered \
		--cov-fail-under=90 tests notebooks

# ruff's rules and exceptions are in pyproject.toml.
lint: install
	$(VENV)/bin/ruff check d2lmini tests benchmarks tools notebooks

unit-test: install
	$(PY) -m pytest -p no:nbval --ignore=tests/browser tests

browser-test: install install-browser lint
	$(PY) -m pytest -p no:nbval tests/browser

notebook-test: install
	$(PY) -m pytest $(PYTEST_NOTEBOOKS) notebooks

# The .py sources are edited by hand. For each one: copy its cells into the
# .ipynb (outputs kept), execute that notebook and store the new outputs, then
# write the .py back from it so the pair is byte-for-byte in sync.
notebooks: install
	for py in $(NOTEBOOK_SOURCES); do \
		$(VENV)/bin/jupytext --quiet --set-kernel python3 --update --to ipynb "$$py" || exit 1; \
	done
	# nbgrader's cell metadata, derived from the exercise/check tags; Jupytext
	# keeps it in the .ipynb and out of the .py.
	$(PY) tools/instructor.py nbgrader-metadata $(NOTEBOOK_SOURCES:.py=.ipynb)
	$(JUPYTER) nbconvert --log-level=WARN --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=300 $(NOTEBOOK_SOURCES:.py=.ipynb)
	# Drop cell timings and give widget models stable ids, so that a re-run
	# changes the .ipynb only where an output changed.
	$(PY) tools/stable_outputs.py $(NOTEBOOK_SOURCES:.py=.ipynb)
	$(VENV)/bin/jupytext --quiet --to py:percent $(NOTEBOOK_SOURCES:.py=.ipynb)

# Student notebooks (solutions replaced by stubs, no outputs) with d2lmini
# and requirements.txt beside them; the solution key (executed, with HTML).
student: install
	rm -rf build/student
	$(PY) tools/instructor.py student --out build/student $(NOTEBOOK_SOURCES:.py=.ipynb)

solutions: install
	rm -rf build/solutions
	$(PY) tools/instructor.py solutions --out build/solutions $(NOTEBOOK_SOURCES:.py=.ipynb)

# Speed and peak memory of the attention paths against PyTorch's (a few
# minutes on 2 CPU cores); prints Markdown tables.
bench: install
	$(PY) benchmarks/attention.py

clean:
	rm -rf build .pytest_cache .coverage

# Latency of the widget explorers against a new figure per change (prints Markdown tables).
bench-widgets: install
	$(PY) benchmarks/widget_latency.py

# Per-notebook execution time in a fresh kernel (and through nbconvert), against
# a baseline notebook that only imports torch and d2lmini.
bench-notebooks: install
	$(PY) benchmarks/notebook_times.py --cli

# Per-call overhead and host reads of the attention modules against an earlier
# revision, in one run: make bench-overhead BEFORE=<git revision>.
BEFORE ?= HEAD~1
bench-overhead: install
	$(PY) benchmarks/overhead.py --before $(BEFORE)
