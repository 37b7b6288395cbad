"""Save as .npz: the weights and their inputs, and a d2lmini snippet beside them that rebuilds the figure.

Every explorer that shows attention weights is saved once, in a state away from its defaults;
one Python process (Agg backend, no explorer imported) then runs every snippet and hands back
the weights each one computed.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from d2lmini import seq2seq, widgets
from d2lmini.widgets.export import SNIPPET_HEADER

ROOT = Path(__file__).resolve().parents[1]

# Runs each snippet given on the command line as a script would run, its output after a line
# "== <path>", and saves the weights it computed to the .npz named first.
RUNNER = """
import runpy, sys
import numpy as np
weights = {}
for number, path in enumerate(sys.argv[2:]):
    print("==", path)
    namespace = runpy.run_path(path, run_name="__main__")
    weights[str(number)] = namespace["weights"].detach().numpy()
np.savez(sys.argv[1], **weights)
"""


def _alignment():
    history = seq2seq.History(seq2seq.make_batch("reverse", 2, generator=torch.Generator().manual_seed(0)))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        seq2seq.train(seq2seq.AttentionSeq2Seq(8), "reverse", 3, callback=history)
    return widgets.explore_alignment(history, step=history.steps[0], example=1)


# Each explorer with weights, and control values that take it away from where it starts.
EXPLORERS = {
    "one query": (widgets.explore_one_query, {"query": 1.5, "score": "product"}),
    "kernel": (widgets.explore_kernel_pooling, {"kernel": "epanechnikov", "sigma": 0.25, "n_train": 15}),
    "masked softmax": (widgets.explore_masked_softmax, {"mode": "per query"}),
    "additive": (widgets.explore_additive, {"noise": 0.5, "seed": 3, "valid_len_1": 9}),
    "dot product": (widgets.explore_dot_product, {"d": 64, "scale": False, "temperature": 2.0, "causal": True,
                                                  "valid_len": 6}),
    "multi-head": (widgets.explore_multihead, {"num_heads": 4, "causal": True, "valid_len": 5}),
    # Some blocks not yet seen (6 of 16 keys): the snippet's weights cover every key, 0 where unseen.
    "online softmax": (widgets.explore_online_softmax, {"block_size": 2, "step": 3}),
    "positional": (widgets.explore_positional_encoding, {"d": 16, "base": 100.0}),
    "mask editor": (widgets.explore_mask_editor, {"preset": "a whole row masked: query 2"}),
    "head view": (widgets.explore_head_view, {"layer": 1, "head": 4}),
    "alignment": (_alignment, {}),
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """name -> (explorer, the paths Save wrote, the weights its snippet computed, what it printed)."""
    folder = tmp_path_factory.mktemp("export")
    explorers, written = {}, {}
    for name, (make, values) in EXPLORERS.items():
        explorer = make()
        for control, value in values.items():
            explorer.controls[control].value = value
        assert explorer.last_error is None, f"{name}: {explorer.last_error}"
        explorers[name] = explorer
        written[name] = explorer.save(folder / name.replace(" ", "_") / "weights.npz")
    results = folder / "rebuilt.npz"
    environment = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT)}
    output = subprocess.run([sys.executable, "-c", RUNNER, str(results), *(str(py) for _, py in written.values())],
                            check=True, env=environment, cwd=folder, capture_output=True, text=True).stdout
    printed = dict(re.findall(r"^== .*?([^/]+)/weights\.py\n(.*?)(?=^== |\Z)", output, re.M | re.S))
    with np.load(results) as rebuilt:
        return {name: (explorers[name], written[name], torch.from_numpy(rebuilt[str(number)]),
                       printed[name.replace(" ", "_")].splitlines())
                for number, name in enumerate(EXPLORERS)}


def test_every_declaration_with_a_recipe_is_saved_here(saved):
    """A new explorer whose Save writes a .npz is named until it has its entry in EXPLORERS."""
    here = {type(explorer.declaration) for explorer, *_ in saved.values()}
    with_recipe = [d for d in widgets.DECLARATIONS if d.recipe is not widgets.Declaration.recipe]
    assert [d.__name__ for d in with_recipe if d not in here] == []
    assert len(with_recipe) >= 11


@pytest.mark.parametrize("name", EXPLORERS)
def test_the_snippet_rebuilds_the_explorers_weights(saved, name):
    explorer, _, rebuilt, _ = saved[name]
    torch.testing.assert_close(rebuilt, explorer.weights.float())


@pytest.mark.parametrize("name", EXPLORERS)
def test_the_npz_holds_what_the_snippet_reads_and_the_weights_drawn(saved, name):
    explorer, (npz, py), _, printed = saved[name]
    assert (npz.name, py.name) == ("weights.npz", "weights.py") and npz.parent == py.parent
    snippet = py.read_text()
    assert snippet.startswith(SNIPPET_HEADER) and "import d2lmini as d2l" in snippet
    assert "d2l.show_heatmaps(" in snippet and 'xlabel="Keys", ylabel="Queries"' in snippet
    assert "widgets" not in snippet  # plain d2lmini: the explorer is not needed
    with np.load(npz) as archive:
        read = set(re.findall(r'saved\["([^"]+)"\]', snippet))
        assert read <= set(archive.files), f"the snippet reads {read - set(archive.files)}, not saved"
        np.testing.assert_array_equal(archive["weights"], explorer.weights.numpy())
    rebuilt = name not in ("head view", "alignment")
    assert ("largest difference from the saved weights" in snippet) == rebuilt
    assert ("cannot recompute them" in snippet) == (not rebuilt)
    assert printed[0].startswith("largest difference from the saved weights: " if rebuilt else "drawn from the saved")
    assert re.search(r"\b\d+ quer(y|ies) × \d+ keys", printed[1])  # show_heatmaps' summary of what it drew


def test_the_dot_product_snippet_recomputes_with_the_packages_attention(saved):
    _, (_, py), _, printed = saved["dot product"]
    snippet = py.read_text()
    assert "d2l.DotProductAttention(dropout=0.0, causal=bool(saved[\"causal\"]))" in snippet
    assert "weights = attention.attention_weights[0]" in snippet
    assert printed[0] == "largest difference from the saved weights: 0"


def test_save_reports_both_paths_and_never_replaces_another_kind_of_file(tmp_path):
    explorer = widgets.explore_masked_softmax()
    explorer.save_path.value = str(tmp_path / "mine.npz")
    explorer.save_button.click()
    written = [(tmp_path / "mine.npz").resolve(), (tmp_path / "mine.py").resolve()]
    assert explorer.message.value == f"saved {written[0]} and {written[1]}"
    assert explorer.save(tmp_path / "mine.npz") == written  # its own files: replaced
    notes = tmp_path / "notes.py"
    notes.write_text("my own code\n")
    with pytest.raises(FileExistsError, match=r"notes\.py exists and is not a snippet written by Save"):
        explorer.save(tmp_path / "notes.npz")
    assert notes.read_text() == "my own code\n" and not (tmp_path / "notes.npz").exists()
    picture = tmp_path / "picture.png"
    picture.write_text(json.dumps({"not": "a png"}))
    with pytest.raises(FileExistsError, match=r"picture\.png exists and is not a PNG"):
        explorer.save(picture)


def test_an_explorer_without_weights_saves_pictures_only(tmp_path):
    tracer = widgets.explore_shape_tracer()
    with pytest.raises(ValueError, match=r"path must end in \.png or \.svg, got '.*tracer\.npz'"):
        tracer.save(tmp_path / "tracer.npz")
    assert ".npz" not in tracer.save_button.tooltip
    assert ".npz: the weights" in widgets.explore_masked_softmax().save_button.tooltip


def test_an_explorer_of_weights_without_a_recipe_names_why_it_saves_no_npz(tmp_path):
    class Unrecorded(widgets.MaskedSoftmax):  # shows weights, but nothing says how to rebuild them
        def recipe(self, result):
            return None

    declaration = Unrecorded()
    explorer = widgets.Explorer(declaration, declaration.checked_settings())
    assert ".npz: the weights" in explorer.save_button.tooltip  # offered, as to every explorer of weights
    with pytest.raises(ValueError, match=r"path: UnrecordedExplorer saves no \.npz, as its declaration has no "
                                         r"recipe; use \.png or \.svg, got '.*mine\.npz'"):
        explorer.save(tmp_path / "mine.npz")
    assert not list(tmp_path.iterdir())
    assert explorer.save(tmp_path / "mine.png") == [(tmp_path / "mine.png").resolve()]
