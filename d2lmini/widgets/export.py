"""Save: the picture as PNG or SVG, or the weights as ``.npz`` beside a snippet that rebuilds them.

``Recipe`` is what an explorer's ``recipe(result)`` returns: the inputs saved
beside the weights, and the plain ``d2lmini`` code that recomputes the weights
from them. ``save_picture`` and ``save_npz`` write the files (``Explorer.save``
picks one by the path's extension); an existing file is replaced only by one
of its own kind.
"""

import textwrap

import numpy as np
import torch

from ..i18n import N_
from .png import PNG_SIGNATURE

SAVE_FOLDER = "figures"  # where Save writes by default, relative to the notebook: git ignores it
SNIPPET_HEADER = "# Rebuilds attention weights saved by a d2lmini explorer"  # the first line of every snippet
SAVE_FORMATS = {
    "png": N_("the picture as shown, with its caption"),
    "svg": N_("the picture as shown, with its caption, as vector graphics"),
    "npz": N_("the weights and the inputs they come from, with a .py snippet beside it (same name) that "
              "rebuilds them with d2lmini, prints how far they are from the saved ones, and draws them"),
}


class Recipe:
    """How an explorer's weights are rebuilt from saved inputs with plain ``d2lmini`` code.

    ``inputs`` (name -> tensor, array, number, bool or str) go into the
    ``.npz`` beside the weights; ``code`` is Python that reads them from
    ``saved`` (the loaded ``.npz``; ``torch``, ``math``, ``np`` and ``d2l`` are
    imported) and sets ``weights``, the tensor the explorer draws. With
    ``rebuilt=False`` (a trained model's weights, which the inputs alone cannot
    give) the code only reads the saved weights, and the snippet says so.
    ``why`` says why not. ``drawn`` is the expression drawn (``weights`` by
    default), ``titles`` name its panels (one per column of
    ``d2l.show_heatmaps``), ``draw`` is code run after it (``fig`` is the
    figure), e.g. to label the rows and columns with tokens.
    """

    def __init__(self, inputs, code, *, rebuilt=True, why="", drawn="weights", titles=None, draw=""):
        self.inputs, self.code, self.rebuilt, self.why = inputs, textwrap.dedent(code).strip(), rebuilt, why
        self.drawn, self.titles, self.draw = drawn, titles, textwrap.dedent(draw).strip()


def _as_array(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _snippet(recipe, explorer_name, npz_name):
    """The text of the .py snippet for ``recipe``, reading ``npz_name`` beside it."""
    if recipe.rebuilt:
        compare = ('difference = (weights - torch.from_numpy(saved["weights"])).abs().max().item()\n'
                   'print(f"largest difference from the saved weights: {difference:.2g}")')
        source = "recomputes them with d2lmini from the inputs saved beside them"
    else:
        compare = 'print("drawn from the saved weights: there is nothing to recompute them from")'
        source = f"cannot recompute them ({recipe.why}), so it draws the saved weights"
    titles = "" if recipe.titles is None else f", titles={list(recipe.titles)!r}"
    lines = [
        f"{SNIPPET_HEADER} ({explorer_name}): it {source}.",
        "# Written by the explorer's Save button; run it with `python` or `%run` in a notebook.",
        "import math",
        "from pathlib import Path",
        "",
        "import numpy as np",
        "import torch",
        "",
        "import d2lmini as d2l",
        "",
        f'saved = np.load(Path(__file__).with_name("{npz_name}"))',
        "",
        recipe.code,
        "",
        compare,
        "",
        "# Rows are queries, columns keys.",
        f'fig = d2l.show_heatmaps({recipe.drawn}, xlabel="Keys", ylabel="Queries"{titles})',
        *([recipe.draw] if recipe.draw else []),
        "d2l.plt.show()",
    ]
    return "\n".join(lines) + "\n"


def _check_may_write(path, looks_right, kind):
    """Refuse to replace an existing file at ``path`` unless ``looks_right(first bytes)``."""
    if path.exists():
        with open(path, "rb") as file:
            start = file.read(256)
        if not looks_right(start):
            raise FileExistsError(f"{path} exists and is not {kind}: choose another name, or move it away")


def save_picture(blit, path, fmt, dpi, caption):
    """Write ``blit`` (a ``BlitFigure``) to ``path`` as ``fmt``, "png" or "svg", with ``caption``
    above it; returns the list of full paths written."""
    _check_may_write(path, (lambda start: start.startswith(PNG_SIGNATURE)) if fmt == "png"
                     else (lambda start: b"<svg" in start or start.startswith(b"<?xml")), f"a {fmt.upper()}")
    path.parent.mkdir(parents=True, exist_ok=True)
    blit.save(path, fmt, dpi, caption)
    return [path.resolve()]


def save_npz(path, recipe, weights, explorer_name):
    """Write ``weights`` and ``recipe``'s inputs to ``path`` (a ``.npz``), and beside it the
    snippet that rebuilds them (``explorer_name`` names the explorer in its first line);
    returns the list of full paths written."""
    snippet_path = path.with_suffix(".py")
    _check_may_write(path, lambda start: start.startswith(b"PK"), "a NumPy .npz archive")
    _check_may_write(snippet_path, lambda start: start.startswith(SNIPPET_HEADER.encode()),
                     "a snippet written by Save")
    arrays = {name: _as_array(value) for name, value in recipe.inputs.items()}
    if "weights" in arrays:
        raise ValueError("a recipe's inputs must not be named 'weights': that name holds the weights drawn")
    arrays["weights"] = _as_array(weights)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as file:  # np.savez would add ".npz" to a name ending in ".NPZ"
        np.savez(file, **arrays)
    snippet_path.write_text(_snippet(recipe, explorer_name, path.name), encoding="utf-8")
    return [path.resolve(), snippet_path.resolve()]
