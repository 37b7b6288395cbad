import os
from pathlib import Path

import numpy as np
import pytest
import torch

import d2lmini as d2l

ROOT = Path(d2l.__file__).resolve().parent.parent


def test_book_call_returns_a_figure_with_one_colorbar():
    weights = torch.rand(1, 1, 2, 10)
    fig = d2l.show_heatmaps(weights, xlabel="Keys", ylabel="Queries")
    panels = [ax for ax in fig.axes if ax.get_images()]
    assert len(panels) == 1 and len(fig.axes) == 2  # one panel plus its colorbar
    assert panels[0].get_xlabel() == "Keys" and panels[0].get_ylabel() == "Queries"


@pytest.mark.parametrize("shape,panels", [((3, 4), 1), ((2, 3, 4), 2), ((2, 3, 3, 4), 6)])
def test_accepts_2d_3d_and_4d_input(shape, panels):
    fig = d2l.show_heatmaps(torch.rand(shape), "Keys", "Queries")
    assert sum(1 for ax in fig.axes if ax.get_images()) == panels


def test_all_panels_share_one_colour_scale():
    matrices = torch.stack([torch.full((2, 2), 0.1), torch.full((2, 2), 0.9)])
    fig = d2l.show_heatmaps(matrices, "Keys", "Queries", titles=["low", "high"])
    limits = [ax.get_images()[0].get_clim() for ax in fig.axes if ax.get_images()]
    assert limits == [pytest.approx((0.1, 0.9))] * 2
    assert [ax.get_title() for ax in fig.axes[:2]] == ["low", "high"]


def test_accepts_requires_grad_and_device_tensors(device):
    """A tensor that needs grad (``* 1``: not a leaf, as a model's output), on any device, is drawn as
    its plain detached CPU copy is: the same values, colour scale and pixels."""
    weights = torch.rand(2, 3, device=device, requires_grad=True) * 1
    figures = [d2l.show_heatmaps(w, "Keys", "Queries") for w in (weights, weights.detach().cpu())]
    drawn, plain = (fig.axes[0].get_images()[0] for fig in figures)
    assert np.array_equal(drawn.get_array(), plain.get_array())
    assert drawn.get_clim() == plain.get_clim()
    for fig in figures:
        fig.canvas.draw()
    assert np.array_equal(*(np.asarray(fig.canvas.buffer_rgba()) for fig in figures))


def test_constant_matrix_still_gets_a_scale():
    fig = d2l.show_heatmaps(torch.zeros(2, 2), "Keys", "Queries")
    vmin, vmax = fig.axes[0].get_images()[0].get_clim()
    assert vmax > vmin


def test_show_weights_prints_each_weight_and_leaves_masked_cells_blank():
    mask = d2l.attention_mask(torch.tensor([2]), 1, 2, 4)[0]  # (1, keys): keys 0 and 1 valid
    weights = d2l.masked_softmax(torch.zeros(1, 2, 4), torch.tensor([2]))[0]  # (2, 4)
    ax = d2l.show_weights(weights, mask=mask, xlabels=list("abcd"))
    texts = sorted(t.get_text() for t in ax.texts)
    assert texts == ["0.50"] * 4  # two queries x two valid keys; the masked cells print nothing
    assert ax.get_xlabel() == "Keys" and ax.get_ylabel() == "Queries"
    assert [t.get_text() for t in ax.get_xticklabels()] == list("abcd")
    assert ax.collections[0].get_clim() == (0, 1)
    assert ax.patch.get_hatch() == "//"  # what shows through a masked cell


def test_show_weights_shows_a_zero_weight_that_is_not_masked():
    weights = torch.tensor([[1.0, 0.0]])
    ax = d2l.show_weights(weights, mask=torch.tensor([[True, True]]))
    assert sorted(t.get_text() for t in ax.texts) == ["0.00", "1.00"]


@pytest.mark.parametrize("call,error,fragment", [
    (lambda: d2l.show_weights(torch.rand(2, 2, 2)), ValueError, "one (queries, keys) matrix"),
    (lambda: d2l.show_weights(torch.rand(2, 3), mask=torch.ones(2, 3)), TypeError, "boolean"),
    (lambda: d2l.show_weights(torch.rand(2, 3), mask=torch.ones(2, 2, dtype=torch.bool)), ValueError,
     "does not broadcast"),
])
def test_show_weights_bad_input(call, error, fragment):
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value)


def test_per_panel_scales_as_in_the_book():
    matrices = torch.stack([torch.tensor([[0.0, 0.1]]), torch.tensor([[0.0, 0.9]])])
    fig = d2l.show_heatmaps(matrices, "Keys", "Queries", shared_scale=False)
    panels = [ax for ax in fig.axes if ax.get_images()]
    assert [ax.get_images()[0].get_clim() for ax in panels] == [pytest.approx((0.0, 0.1)), pytest.approx((0.0, 0.9))]
    assert len(fig.axes) == 4  # two panels, each with its own colorbar


def test_plot_draws_one_curve_per_row_against_a_shared_x():
    d2l.plot(torch.arange(5), torch.stack([torch.arange(5.0), torch.arange(5.0) ** 2]), xlabel="x",
             legend=["linear", "square"], figsize=(4, 2))
    ax = d2l.plt.gca()
    lines = ax.get_lines()
    assert [list(line.get_ydata()) for line in lines] == [[0, 1, 2, 3, 4], [0, 1, 4, 9, 16]]
    assert [line.get_linestyle() for line in lines] == ["-", "--"] and lines[1].get_color() == "m"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["linear", "square"]
    assert ax.get_xlabel() == "x" and tuple(ax.figure.get_size_inches()) == (4, 2)


def test_plot_of_y_alone_uses_the_indices_and_into_given_axes():
    _, ax = d2l.plt.subplots()
    assert d2l.plot([3.0, 1.0, 2.0], axes=ax, yscale="log") is None
    line, = ax.get_lines()
    assert list(line.get_xdata()) == [0, 1, 2] and list(line.get_ydata()) == [3.0, 1.0, 2.0]
    assert ax.get_yscale() == "log"


def _run_in_a_kernel(sources):
    """Run ``sources`` as the cells of a notebook in a real kernel; return the executed notebook."""
    nbclient = pytest.importorskip("nbclient")
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("MPLBACKEND", None)  # the kernel's own default: the inline backend
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3").execute(env=env)
    return notebook


def _image_outputs_per_cell(sources):
    """The number of images each cell shows, run in a real kernel."""
    notebook = _run_in_a_kernel(sources)
    return [sum("image/png" in output.get("data", {}) for output in cell.outputs) for cell in notebook.cells]


def test_in_jupyter_figures_have_twice_the_pixels_of_their_shown_width():
    import base64
    import io

    from PIL import Image

    before, after = _run_in_a_kernel([
        # Control: before d2lmini is imported, the kernel draws at one pixel per point shown.
        "import matplotlib.pyplot as plt\nplt.figure(figsize=(2, 1)).add_subplot().plot([0, 1])",
        "import torch\nimport d2lmini as d2l\nfig = d2l.show_heatmaps(torch.eye(3), 'Keys', 'Queries')",
    ]).cells
    sizes = []
    for cell in (before, after):
        (image,) = [output for output in cell.outputs if "image/png" in output.get("data", {})]
        pixels = Image.open(io.BytesIO(base64.b64decode(image["data"]["image/png"]))).width
        sizes.append((pixels, image.get("metadata", {}).get("image/png", {}).get("width")))
    assert sizes[0][1] is None  # shown at its pixel width
    pixels, shown = sizes[1]
    assert shown and pixels in (2 * shown, 2 * shown + 1), sizes


def test_jupyter_shows_a_heatmap_once_however_the_cell_ends():
    counts = _image_outputs_per_cell([
        "import matplotlib, torch\nimport d2lmini as d2l\nassert 'inline' in matplotlib.get_backend()",
        "d2l.show_heatmaps(torch.eye(3), 'Keys', 'Queries')",  # the book's cells end this way
        "fig = d2l.show_heatmaps(torch.eye(3), 'Keys', 'Queries')",  # the notebooks' cells
        "fig",  # shown again, in a later cell, on request
        "d2l.plot(d2l.arange(5), d2l.arange(5) ** 2)",
        # Control: a plain figure that ends a cell is shown twice, so the count can see a double.
        "other = d2l.plt.figure()\nother.add_subplot().plot([1, 2])\nother",
    ])
    assert counts == [0, 1, 1, 1, 1, 2]


# The text summary for screen readers --------------------------------------------------------------

def test_the_summary_names_the_shape_and_the_keys_each_query_attends_to_most():
    weights = torch.tensor([[0.7, 0.2, 0.1, 0.0],
                            [0.25, 0.25, 0.25, 0.25]])  # (2 queries, 4 keys)
    assert d2l.describe_weights(weights) == (
        "2 queries × 4 keys. Query 0 attends mostly to keys 0 (0.70) and 1 (0.20); "
        "query 1 spreads evenly over 4 keys (0.25 each)."
    )


def test_the_summary_says_what_is_masked_and_which_rows_have_no_key():
    mask = torch.tensor([[True, True, False], [False, False, False]])  # (2 queries, 3 keys)
    weights = torch.tensor([[0.6, 0.4, 0.0], [0.0, 0.0, 0.0]])
    assert d2l.describe_weights(weights, mask, query_labels=["a", "b"], key_labels=["x", "y", "z"]) == (
        '2 queries × 3 keys, 4 of 6 cells masked (no key left for query 1). '
        'Query 0 "a" attends mostly to keys 0 "x" (0.60) and 1 "y" (0.40); query 1 "b" attends to no key '
        '(all weights 0).'
    )
    padding = d2l.attention_mask(torch.tensor([2]), 1, 2, 4)[0]  # (1, keys): keys 2 and 3 are padding
    weights = d2l.masked_softmax(torch.zeros(1, 2, 4), torch.tensor([2]))[0]
    assert d2l.describe_weights(weights, padding).startswith("2 queries × 4 keys, keys 2-3 masked for every query.")


def test_the_summary_lists_weights_equal_to_4_decimals_in_key_order():
    """Keys whose weights agree to 4 decimals are listed in key order, whatever their last bits: weights
    equal in exact arithmetic come out a bit apart on one machine or in the page's arithmetic. Weights
    that the summary shows equal but that differ in the third decimal are listed by size."""
    weights = torch.tensor([[0.4, 0.3, 0.0, 0.3000001]])  # key 3 a few float32 steps above key 1
    assert weights[0, 3] > weights[0, 1]
    assert d2l.describe_weights(weights) == "1 query × 4 keys. Query 0 attends mostly to keys 0 (0.40) and 1 (0.30)."
    weights = torch.tensor([[0.3, 0.0, 0.304, 0.396]])  # 0.30 against 0.30 as shown: the larger one first
    assert d2l.describe_weights(weights) == "1 query × 4 keys. Query 0 attends mostly to keys 3 (0.40) and 2 (0.30)."


def test_the_summary_of_many_queries_describes_a_few_and_says_so():
    weights = torch.eye(10)  # query i attends to key i alone
    assert d2l.describe_weights(weights) == (
        "10 queries × 10 keys. Query 0 attends mostly to key 0 (1.00); query 4 attends mostly to key 4 (1.00); "
        "query 9 attends mostly to key 9 (1.00). (3 queries of 10 described.)"
    )
    assert "query 7 attends mostly to key 7" in d2l.describe_weights(weights, queries=[7]).lower()


def test_the_summary_of_a_grid_describes_one_query_per_panel_for_its_first_panels():
    panels = torch.eye(3).repeat(6, 1, 1)  # (6 panels, 3 queries, 3 keys)
    text = d2l.describe_weights(panels, titles=[f"head {h}" for h in range(6)])
    assert text.startswith("6 panels of 3 queries × 3 keys. Head 0: query 1 attends mostly to key 1 (1.00).")
    assert "Head 3:" in text and "Head 4:" not in text and text.endswith("(First 4 of 6 panels described.)")
    with pytest.raises(ValueError, match=r"titles must have one entry per panel \(6\), got 2"):
        d2l.describe_weights(panels, titles=["a", "b"])
    with pytest.raises(ValueError, match=r"key_labels must have one entry per key \(3\), got 1"):
        d2l.describe_weights(panels, key_labels=["a"])


def per_query_lengths_0_8_1_0_and_0_0_0_0():
    """Chapter 02's per-query case by hand: example 0's queries keep 0, 8, 1 and 0 keys of 8, example 1's
    none. Query 2 of example 0 keeps key 0 alone (weight 1); query 1 spreads over its 8 keys."""
    lengths = torch.tensor([[0, 8, 1, 0], [0, 0, 0, 0]])  # (examples, queries)
    mask = torch.arange(8) < lengths[..., None]  # (examples, queries, keys)
    weights = torch.zeros(2, 4, 8)
    weights[0, 1] = 1 / 8
    weights[0, 2, 0] = 1.0
    return weights, mask


def test_the_summary_says_what_is_masked_example_by_example_when_their_masks_differ():
    """Example 0 has 8 + 0 + 7 + 8 = 23 of its 32 cells masked, and queries 0 and 3 left with no key;
    example 1 every key of every query. One count over both (55 of 64, "queries 0-3" with no key) held
    for neither; every sentence begins with a capital, the panels' titles too."""
    weights, mask = per_query_lengths_0_8_1_0_and_0_0_0_0()
    assert d2l.describe_weights(weights, mask, titles=["example 0", "example 1"]) == (
        "2 panels of 4 queries × 8 keys. "
        "Example 0: 23 of 32 cells masked (no key left for queries 0, 3); query 2 attends mostly to key 0 (1.00). "
        "Example 1: keys 0-7 masked for every query (no key left for queries 0-3); "
        "query 2 attends to no key (all weights 0). "
        "(1 query of 4 described.)")
    # One mask for every panel: said once, for all of them (2 × 2 keys masked of 2 × 2 × 3 cells).
    shared = torch.tensor([[True, True, False], [True, True, False]])  # (queries, keys)
    same = torch.tensor([[0.5, 0.5, 0.0], [0.9, 0.1, 0.0]]).repeat(2, 1, 1)
    assert d2l.describe_weights(same, shared, titles=["head 0", "head 1"]) == (
        "2 panels of 2 queries × 3 keys, key 2 masked for every query. "
        "Head 0: query 1 attends mostly to keys 0 (0.90) and 1 (0.10). "
        "Head 1: query 1 attends mostly to keys 0 (0.90) and 1 (0.10). (1 query of 2 described.)")
    # A panel with nothing masked beside one with a masked key says so.
    differ = torch.stack([torch.ones(2, 3, dtype=torch.bool), shared])
    assert d2l.describe_weights(same, differ).startswith(
        "2 panels of 2 queries × 3 keys. Panel 0: nothing masked; query 1 attends mostly to keys 0 (0.90) and "
        "1 (0.10). Panel 1: key 2 masked for every query; query 1 ")


def test_a_sentence_capitalises_a_word_never_a_symbol():
    """A panel's title begins its sentence with a capital where it is a word ("example 0" -> "Example 0",
    also after an opening parenthesis); a symbol keeps its case, which is its meaning: chapter 01's
    panels are "σ = 0.05", and Σ would be a sum; chapter 04's "qᵀk" would become a matrix."""
    from d2lmini.plotting import sentence
    assert sentence("example 0: query 2") == "Example 0: query 2"
    assert sentence("(first 2 of 4 panels described.)") == "(First 2 of 4 panels described.)"
    assert sentence("σ = 0.05: query 25") == "σ = 0.05: query 25"
    assert sentence("d = 16: query 3") == "d = 16: query 3"
    assert sentence("qᵀk / √64 com escala: consulta 3") == "qᵀk / √64 com escala: consulta 3"  # q, not Q
    assert sentence("unscaled qᵀk: query 3") == "Unscaled qᵀk: query 3"
    assert sentence("a consulta 0 presta atenção") == "A consulta 0 presta atenção"  # a word of one letter
    assert sentence("d_head = 4: query 0") == "d_head = 4: query 0"
    assert sentence("4 panels of 2 queries") == "4 panels of 2 queries"
    weights = torch.tensor([[[0.9, 0.1]], [[0.5, 0.5]]])
    assert d2l.describe_weights(weights, titles=["σ = 0.05", "σ = 3.0"]) == (
        "2 panels of 1 query × 2 keys. σ = 0.05: query 0 attends mostly to keys 0 (0.90) and 1 (0.10). "
        "σ = 3.0: query 0 spreads evenly over 2 keys (0.50 each).")


def test_the_summary_calls_unvisited_keys_not_seen_yet():
    """``unseen``: the keys left out are keys not visited yet (an online softmax), never "masked"."""
    weights, seen = torch.tensor([[0.75, 0.25, 0.0, 0.0]]), torch.tensor([[True, True, False, False]])
    assert d2l.describe_weights(weights, seen, unseen=True) == (
        "1 query × 4 keys, keys 2-3 not seen yet. Query 0 attends mostly to keys 0 (0.75) and 1 (0.25).")
    nothing = torch.zeros(1, 4, dtype=torch.bool)
    assert d2l.describe_weights(torch.zeros(1, 4), nothing, unseen=True) == (
        "1 query × 4 keys, keys 0-3 not seen yet (no key seen yet by query 0). "
        "Query 0 attends to no key (all weights 0).")


def test_static_heatmaps_print_their_summary_and_other_matrices_none(capsys):
    weights = torch.tensor([[0.9, 0.1], [0.5, 0.5]])
    d2l.show_heatmaps(weights, "Keys", "Queries")
    assert capsys.readouterr().out == d2l.describe_weights(weights) + "\n"
    d2l.show_heatmaps(torch.tensor([[-1.0, 2.0]]), "Column", "Row")  # not weights: no summary
    assert capsys.readouterr().out == ""
    d2l.show_weights(weights, xlabels=["p", "q"])
    assert capsys.readouterr().out == d2l.describe_weights(weights, key_labels=["p", "q"]) + "\n"


def test_every_colour_map_offered_is_a_matplotlib_map_and_viridis_comes_first():
    import matplotlib

    from d2lmini.plotting import CMAP, CMAPS

    assert CMAPS[0][1] == CMAP == "viridis"
    for label, name in CMAPS:
        matplotlib.colormaps[name]  # raises for an unknown name
        assert ("colour-blind safe" in label) == (name != "Reds")


def test_in_jupyter_each_heatmaps_summary_comes_right_after_its_picture():
    nbclient = pytest.importorskip("nbclient")
    import nbformat

    source = ("import torch\nimport d2lmini as d2l\n"
              "for top in (0.9, 0.6):  # two figures, both shown when the cell ends\n"
              "    d2l.show_heatmaps(torch.tensor([[top, 1 - top], [0.5, 0.5]]), 'Keys', 'Queries')\n"
              "d2l.plt.show()")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("MPLBACKEND", None)
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3").execute(env=env)
    outputs = notebook.cells[0].outputs
    kinds = ["image" if "image/png" in output.get("data", {}) else output.get("text", "") for output in outputs]
    assert kinds == ["image", "2 queries × 2 keys. Query 0 attends mostly to keys 0 (0.90) and 1 (0.10); "
                              "query 1 spreads evenly over 2 keys (0.50 each).\n",
                     "image", "2 queries × 2 keys. Query 0 attends mostly to keys 0 (0.60) and 1 (0.40); "
                              "query 1 spreads evenly over 2 keys (0.50 each).\n"]


def tick_texts(fig, axis):
    fig.canvas.draw()
    return [label.get_text() for label in axis.get_ticklabels()]


def test_tick_labels_write_the_languages_decimal_mark_with_no_system_locale(portuguese):
    import locale

    import matplotlib

    # The operating system's locale stays C (most machines have no pt_BR one); matplotlib's use_locale is off.
    assert locale.localeconv()["decimal_point"] == "." and not matplotlib.rcParams["axes.formatter.use_locale"]
    fig, ax = d2l.plt.subplots()
    ax.plot([0, 1], [0, 0.5])
    assert tick_texts(fig, ax.xaxis)[1:4] == ["0,0", "0,2", "0,4"]
    ax.cla()  # an explorer clears its axes to redraw: the labels keep the mark
    ax.plot([1e-5, 2e-5], [1, 2])
    assert "1,0" in tick_texts(fig, ax.xaxis)
    assert ax.xaxis.get_offset_text().get_text() == "1e−5"
    from d2lmini import i18n

    i18n.set_language("en")  # read when the figure is drawn, so a change of language is followed
    assert "1.0" in tick_texts(fig, ax.xaxis)
    d2l.plt.close(fig)


def test_another_copy_of_d2lmini_imported_beside_it_leaves_the_tick_scales_ours(portuguese, tmp_path):
    """The overhead benchmark imports d2lmini as it was at a revision; that copy registers its own
    scales, which spoke its own (English) language until this copy's were registered again."""
    from benchmarks.revision import import_at_revision

    import_at_revision("HEAD", tmp_path, "d2lmini_at_head")
    import d2lmini_at_head.plotting  # noqa: F401  its scales, registered as it runs

    fig, ax = d2l.plt.subplots()
    ax.plot([0, 1], [0, 0.5])
    assert tick_texts(fig, ax.xaxis)[1:4] == ["0,0", "0,2", "0,4"]
    d2l.plt.close(fig)


def test_every_figure_d2lmini_draws_has_the_marks_a_colorbar_and_a_log_axis_too(portuguese):
    fig = d2l.show_heatmaps(torch.tensor([[0.25, 0.75]]), "Keys", "Queries")
    colorbar = fig.axes[-1]
    assert tick_texts(fig, colorbar.yaxis) == ["0,2", "0,4", "0,6", "0,8"]
    fig, ax = d2l.plt.subplots()
    ax.set_yscale("log")
    ax.set_ylim(1, 10 ** 0.5)
    assert ax.get_yscale() == "log"
    from d2lmini.plotting import marked_label

    assert marked_label("$\\mathdefault{10^{0.5}}$") == "$\\mathdefault{10^{0{,}5}}$"  # braced in mathtext
    assert marked_label("−0.25") == "−0,25" and marked_label("1e−5") == "1e−5"
    d2l.plt.close("all")


def test_show_weights_writes_each_weight_with_the_languages_decimal_mark(portuguese, capsys):
    ax = d2l.show_weights(torch.tensor([[0.25, 0.75]]), mask=torch.tensor([[True, True]]))
    assert [text.get_text() for text in ax.texts] == ["0,25", "0,75"]
    d2l.plt.close("all")
