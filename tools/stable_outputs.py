"""Make re-executed notebooks differ only where their outputs really changed.

    python -m tools.stable_outputs notebooks/*.ipynb

Executing a notebook writes two things that change on every run even when no
output does: the timing of each cell (``metadata.execution``) and the ids of
the widget models, which the kernel draws at random. Stored in the ``.ipynb``,
they make every ``make notebooks`` rewrite thousands of lines, which hides the
real changes in review. This tool, run by ``make notebooks`` after execution,
rewrites each notebook in place:

* the cell timings are removed;
* every widget model gets an id that depends only on the notebook's name and
  on the model's place in the widget tree (displayed widgets in cell order,
  then their children depth first). The id is replaced everywhere it appears:
  the state's keys, ``IPY_MODEL_`` references between models, and the
  widget-view outputs of the cells.

The saved widget state stays, so nbviewer and a kernel-less JupyterLab still
show each explorer's last picture. Running the tool twice changes nothing.
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

import nbformat

from d2lmini.widgets._compat import WIDGET_VIEW

STATE_MIME = "application/vnd.jupyter.widget-state+json"
REFERENCE = "IPY_MODEL_"


def _references(value):
    """Model ids referenced from a widget's state, in a fixed order (sorted keys, list order)."""
    if isinstance(value, str):
        return [value[len(REFERENCE):]] if value.startswith(REFERENCE) else []
    if isinstance(value, dict):
        return [ref for key in sorted(value) for ref in _references(value[key])]
    if isinstance(value, list):
        return [ref for item in value for ref in _references(item)]
    return []


def _displayed_ids(notebook):
    """The model ids shown by the cells' outputs, in cell order."""
    return [output["data"][WIDGET_VIEW]["model_id"]
            for cell in notebook.cells if cell.cell_type == "code"
            for output in cell.get("outputs", []) if WIDGET_VIEW in output.get("data", {})]


def _tree_order(state, roots):
    """Every model id of the state: those reachable from the roots depth first, then the rest."""
    order, seen = [], set()

    def visit(model_id):
        if model_id in seen or model_id not in state:
            return
        seen.add(model_id)
        order.append(model_id)
        for child in _references(state[model_id].get("state", {})):
            visit(child)

    for root in roots:
        visit(root)
    # Models no output displays (rare): order them by their content with the
    # random ids masked out, so that the order is the same on every run.
    rest = [model_id for model_id in state if model_id not in seen]
    masked = {model_id: json.dumps(_mask(state[model_id]), sort_keys=True) for model_id in rest}
    for model_id in sorted(rest, key=masked.get):
        visit(model_id)
    return order


def _mask(value):
    if isinstance(value, str):
        return REFERENCE if value.startswith(REFERENCE) else value
    if isinstance(value, dict):
        return {key: _mask(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask(item) for item in value]
    return value


def _renamed(value, new_ids):
    """``value`` with every ``IPY_MODEL_<id>`` reference pointing at the new id."""
    if isinstance(value, str) and value.startswith(REFERENCE):
        return REFERENCE + new_ids.get(value[len(REFERENCE):], value[len(REFERENCE):])
    if isinstance(value, dict):
        return {key: _renamed(item, new_ids) for key, item in value.items()}
    if isinstance(value, list):
        return [_renamed(item, new_ids) for item in value]
    return value


def stable_id(name, index):
    """A 32-hex-digit model id (the length the kernel uses) for model ``index`` of notebook ``name``."""
    return hashlib.sha256(f"{name}:{index}".encode()).hexdigest()[:32]


def stabilise(notebook, name):
    """Remove cell timings and give the widget models stable ids, in place; return the notebook."""
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)

    widgets = notebook.metadata.get("widgets", {}).get(STATE_MIME)
    if not widgets:
        return notebook
    state = widgets["state"]
    order = _tree_order(state, _displayed_ids(notebook))
    new_ids = {old: stable_id(name, index) for index, old in enumerate(order)}
    widgets["state"] = {new_ids[old]: _renamed(state[old], new_ids) for old in order}
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is not None and view["model_id"] in new_ids:
                view["model_id"] = new_ids[view["model_id"]]
    return notebook


def main(argv=None):
    parser = argparse.ArgumentParser(description="Remove cell timings and make widget ids stable.")
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for path in args.notebooks:
        if path.suffix != ".ipynb" or not path.is_file():
            parser.error(f"expected existing .ipynb files, got {str(path)!r}")
    for path in args.notebooks:
        notebook = nbformat.read(path, as_version=4)
        nbformat.write(stabilise(notebook, path.stem), path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
