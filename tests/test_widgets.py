"""The explorers draw what d2lmini computes, for every control value, and stay usable."""

import base64
import dataclasses
import io
import json
import math
from pathlib import Path
from types import SimpleNamespace

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from PIL import Image
from support import shared

import d2lmini as d2l
from d2lmini import widgets
from d2lmini.widgets import (
    explore_additive,
    explore_dot_product,
    explore_kernel_pooling,
    explore_masked_softmax,
    explore_multihead,
    explore_one_query,
)
from d2lmini.widgets import kernel_pooling as kernel_module
from d2lmini.widgets import masked_softmax as masked_module

FACTORIES = [explore_one_query, explore_kernel_pooling, explore_masked_softmax, explore_additive,
             explore_dot_product, explore_multihead]
FIXTURE_NOTEBOOK = Path(__file__).with_name("widget_explorers.ipynb")


kernel = shared(explore_kernel_pooling)
masked = shared(explore_masked_softmax)
additive = shared(explore_additive)
dot = shared(explore_dot_product)
multihead = shared(explore_multihead)


class Sweep:
    """Set controls one change at a time and check the picture follows the weights."""

    def __init__(self, explorer):
        self.explorer = explorer
        self.weights = explorer.weights.clone()
        self.image = bytes(explorer.image.value)

    def set(self, **values):
        explorer = self.explorer
        for name, value in values.items():
            explorer.controls[name].value = value
            assert explorer.last_error is None, f"{name}={value!r} raised {explorer.last_error!r}"
        assert explorer.controls[name].value == value
        if not torch.equal(explorer.weights, self.weights):
            assert explorer.image.value != self.image, f"the weights changed with {values} but not the picture"
        self.weights, self.image = explorer.weights.clone(), bytes(explorer.image.value)
        return explorer.weights


def heatmaps(explorer):
    """The registered heatmaps (meshes and images) of the figure shown now, in panel order."""
    return [a for ax in explorer.figure.axes for a in (*ax.collections, *ax.images) if a.get_animated()]


def drawn(explorer):
    """The arrays of the heatmaps now drawn, in panel order (colorbars excluded)."""
    return torch.tensor(np.stack([m.get_array() for m in heatmaps(explorer) if m.get_visible()]))


def values_of(control):
    """The values of a menu's, toggle's or selection slider's options."""
    return [option[1] if isinstance(option, tuple) else option for option in control.options]


def row_shown(explorer, name):
    """Whether the row of controls holding ``name`` is shown."""
    return next(box for row, box in explorer.rows if name in row.names).layout.display != "none"


def assert_masked_weights(weights, valid_lens):
    """weights (batch, queries, keys): zero beyond each row's length, rows sum to 1 or are all 0."""
    lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None].expand(weights.shape[:2])
    beyond = torch.arange(weights.shape[-1]) >= lens[..., None]  # (batch, queries, keys)
    assert torch.all(weights[beyond] == 0), "weight beyond a valid length"
    expected_sums = (lens > 0).to(weights.dtype)  # 1, or 0 for a row with no valid key
    torch.testing.assert_close(weights.sum(-1), expected_sums)


# Kernel pooling --------------------------------------------------------------------------------

@pytest.mark.parametrize("kernel_name", list(d2l.KERNELS))
def test_kernel_pooling_draws_nadaraya_watson_for_every_kernel_and_width(kernel, kernel_name):
    sweep = Sweep(kernel)
    sweep.set(kernel=kernel_name)
    for sigma in (2 ** -7, 0.03, 0.1, 0.5, 2.0, 8.0):  # the slider's minimum, maximum and between
        weights = sweep.set(sigma=sigma)
        x_train, y_train = kernel_module.training_data(40)
        predictions, expected = d2l.nadaraya_watson(kernel.declaration.queries, x_train, y_train, kernel_name,
                                                    sigma)
        torch.testing.assert_close(weights, expected)
        torch.testing.assert_close(drawn(kernel)[0], weights)
        np.testing.assert_allclose(kernel.view.fit.get_ydata(), predictions.numpy())
        sums = weights.sum(dim=1)
        full_rows = (sums - 1).abs() < 1e-5
        if kernel_name in ("gaussian", "constant"):
            assert full_rows.all()
        else:  # a query outside every key's window of a compact kernel gets no weight at all
            assert (full_rows | (sums == 0)).all()
    sweep.set(sigma=0.5)


def test_kernel_pooling_small_boxcar_leaves_queries_without_keys(kernel):
    sweep = Sweep(kernel)
    weights = sweep.set(kernel="boxcar", sigma=2 ** -7)
    assert (weights.sum(dim=1) == 0).any() and (kernel.result.predictions[weights.sum(dim=1) == 0] == 0).all()
    sweep.set(kernel="gaussian", sigma=0.5)


def test_kernel_pooling_training_points_slider(kernel):
    sweep = Sweep(kernel)
    for n in (5, 20, 55, 100, 40):
        weights = sweep.set(n_train=n)
        assert weights.shape == (50, n) and drawn(kernel).shape == (1, 50, n)
        assert torch.all(kernel.result.x_train[1:] >= kernel.result.x_train[:-1]), "keys must be sorted"
        assert 0 <= kernel.result.x_train.min() and kernel.result.x_train.max() < 5


def test_kernel_pooling_draws_each_key_at_its_position_on_a_fixed_axis(kernel):
    """Key j's column spans the inputs nearer to x_j than to any other key; query i's row is
    centred on its x. The axes never change, so a new n_train draws nothing in full."""
    sweep = Sweep(kernel)
    full_draws = kernel.blit.full_draws
    for n in (5, 15, 100, 40):
        weights = sweep.set(n_train=n)
        x = kernel.result.x_train.numpy()
        for i in (0, 17, 49):  # query x = i / 10, in the middle of its row
            row = [kernel.view.heatmap.get_cursor_data(SimpleNamespace(xdata=xj, ydata=i / 10)) for xj in x]
            np.testing.assert_array_equal(row, weights[i].numpy())
            # just short of the midpoint between two keys: still the nearer key's cell
            between = (x[1:] + x[:-1]) / 2
            left = [kernel.view.heatmap.get_cursor_data(SimpleNamespace(xdata=b - 1e-4, ydata=i / 10)) for b in between]
            np.testing.assert_array_equal(left, weights[i, :-1].numpy())
        ax = kernel.view.heatmap.axes
        assert ax.get_xlim() == (0, 5) and ax.get_ylim() == pytest.approx((4.95, -0.05))
    assert kernel.blit.full_draws == full_draws


def test_kernel_pooling_caption_names_the_values(kernel):
    Sweep(kernel).set(sigma=0.25)
    assert "gaussian kernel, σ = 0.25, 40 training points" in kernel.caption.value
    Sweep(kernel).set(sigma=0.5)


def test_a_state_drawn_again_gives_the_same_bytes(kernel):
    """Cached backgrounds: coming back to a view reproduces it exactly."""
    sweep = Sweep(kernel)
    sweep.set(sigma=0.2)
    before = bytes(kernel.image.value)
    sweep.set(n_train=60)
    sweep.set(sigma=1.0)
    sweep.set(n_train=40, sigma=0.2)
    assert kernel.image.value == before
    sweep.set(sigma=0.5)


# One query (chapter 00) ------------------------------------------------------------------------

@pytest.mark.parametrize("score", ["distance", "product"])
def test_one_query_draws_the_softmax_of_its_score_and_the_weighted_average(score):
    explorer = explore_one_query(score=score)
    keys, values = torch.tensor(kernel_module.QUERY_KEYS), torch.tensor(kernel_module.QUERY_VALUES)
    sweep = Sweep(explorer)
    for query in (-1.0, 0.0, 0.5, 2.0, 6.0):  # the slider's ends, the start, on a key
        weights = sweep.set(query=query)
        scores = -0.5 * (query - keys) ** 2 if score == "distance" else query * keys
        expected = torch.softmax(scores, dim=0)
        torch.testing.assert_close(weights, expected[None])
        torch.testing.assert_close(torch.tensor(np.asarray(explorer.view.heatmap.get_array())), weights)
        assert explorer.result.output == pytest.approx(float(expected @ values), abs=1e-6)
        assert explorer.view.answer.get_data() == ([query], [explorer.result.output])
        assert [label.get_text() for label in explorer.view.labels] == [f"{w:.2f}" for w in expected.tolist()]
        if score == "distance":  # the Gaussian kernel of width 1, as chapter 00 checks by hand
            _, package = d2l.nadaraya_watson(torch.tensor([query]), keys, values, "gaussian", 1.0)
            torch.testing.assert_close(weights, package)
    # a weighted average never leaves the range of the values, wherever the query is
    assert values.min() <= explorer.result.curve.min() and explorer.result.curve.max() <= values.max()


def test_one_query_has_a_fixed_text_form_a_static_picture_and_names_bad_arguments():
    explorer = explore_one_query()
    bundle, _ = explorer._repr_mimebundle_()
    assert bundle["text/plain"] == repr(explorer) == "QueryPoolingExplorer(query=0.5, score='distance')"
    assert set(bundle) == {"text/plain", "application/vnd.jupyter.widget-view+json", "image/png"}
    assert explorer.caption_text == "a(q, k) = −½(q − k)², q = 0.5: answer 1.064"
    with pytest.raises(ValueError, match=r"query must be between -1.0 and 6.0, got 7"):
        explore_one_query(query=7)
    with pytest.raises(ValueError, match=r"score must be one of \['distance', 'product'\], got 'dot'"):
        explore_one_query(score="dot")


def test_one_query_png_of_every_change_is_exactly_the_canvas():
    explorer = explore_one_query()
    assert_png_is_the_canvas(explorer)
    for name, value in [("query", 6.0), ("score", "product"), ("query", -1.0), ("colour_scale", "fit"),
                        ("colour_map", "Greys")]:
        explorer.controls[name].value = value
        assert explorer.last_error is None
        assert_png_is_the_canvas(explorer)


# Masked softmax --------------------------------------------------------------------------------

def test_masked_softmax_per_example_lengths(masked):
    sweep = Sweep(masked)
    for length in range(9):  # every value of the first slider, 0 (nothing valid) to 8 (all keys)
        weights = sweep.set(valid_len_0=length)
        valid_lens = torch.tensor([length, masked.controls["valid_len_1"].value])
        torch.testing.assert_close(weights, d2l.masked_softmax(masked.declaration.scores, valid_lens))
        assert_masked_weights(weights, valid_lens)
        torch.testing.assert_close(drawn(masked), weights)
    for length in (0, 1, 4, 8, 5):
        weights = sweep.set(valid_len_1=length)
        assert_masked_weights(weights, masked.result.valid_lens)
        assert masked.result.valid_lens.tolist() == [8, length]
    sweep.set(valid_len_0=2)


def test_masked_softmax_per_query_mode(masked):
    sweep = Sweep(masked)
    sweep.set(mode="per query")
    assert [row_shown(masked, name) for name in ("mode", "valid_len_0", "query_len_0_0", "query_len_1_0")] == [
        True, False, True, True]
    for b in range(2):
        for q in range(4):
            for length in (0, 3, 8):
                weights = sweep.set(**{f"query_len_{b}_{q}": length})
                valid_lens = masked.result.valid_lens
                assert valid_lens.shape == (2, 4) and valid_lens[b, q] == length
                torch.testing.assert_close(weights, d2l.masked_softmax(masked.declaration.scores, valid_lens))
                assert_masked_weights(weights, valid_lens)
    assert "valid_lens=[[8, 8, 8, 8], [8, 8, 8, 8]]" in masked.caption.value
    sweep.set(mode="per example")
    assert [row_shown(masked, name) for name in ("mode", "valid_len_0", "query_len_0_0", "query_len_1_0")] == [
        True, True, False, False]
    assert masked.result.valid_lens.tolist() == [2, 5]


def test_masked_softmax_ignores_per_query_lengths_in_per_example_mode(masked):
    sweep = Sweep(masked)
    before = masked.weights.clone()
    sweep.set(query_len_0_0=2)
    torch.testing.assert_close(masked.weights, before)


# Additive ------------------------------------------------------------------------------------

def expected_additive(explorer, keys, valid_lens):
    """Additive weights from the module's parameters, written out: w_v · tanh(W_q q + W_k k)."""
    attention = explorer.declaration.additive()
    q = explorer.declaration.queries @ attention.W_q.weight.T  # (batch, queries, h)
    k = keys @ attention.W_k.weight.T  # (batch, keys, h)
    scores = torch.tanh(q[:, :, None, :] + k[:, None, :, :]) @ attention.w_v.weight[0]  # (batch, queries, keys)
    return d2l.masked_softmax(scores, valid_lens)


def test_additive_identical_keys_give_uniform_weights_for_both_scores(additive):
    sweep = Sweep(additive)
    for lengths in ((2, 6), (1, 10), (0, 3)):
        weights = sweep.set(noise=0.0, valid_len_0=lengths[0], valid_len_1=lengths[1])
        for b, length in enumerate(lengths):
            expected = torch.zeros(4, 10)
            expected[:, :length] = 1 / length if length else 0
            torch.testing.assert_close(weights[b, 0], expected)  # additive
            torch.testing.assert_close(weights[b, 1], expected)  # scaled dot product
    sweep.set(valid_len_0=2, valid_len_1=6)


def test_additive_sweep_matches_both_scoring_functions(additive):
    sweep = Sweep(additive)
    plan = [("noise", v) for v in (0.05, 0.5, 1.3, 2.0)] + [("seed", v) for v in (0, 3, 9)] + \
           [("valid_len_0", v) for v in (0, 1, 5, 10)] + [("valid_len_1", v) for v in (0, 4, 10)]
    for name, value in plan:
        weights = sweep.set(**{name: value})
        noise, seed = additive.controls["noise"].value, additive.controls["seed"].value
        generator = torch.Generator().manual_seed(seed)
        keys = torch.ones(2, 10, 2) + noise * torch.randn(2, 10, 2, generator=generator)
        torch.testing.assert_close(additive.result.noisy_keys, keys)
        valid_lens = additive.result.valid_lens
        torch.testing.assert_close(weights[:, 0], expected_additive(additive, keys, valid_lens))
        dot_scores = additive.declaration.queries @ keys.transpose(1, 2) / math.sqrt(2)
        torch.testing.assert_close(weights[:, 1], d2l.masked_softmax(dot_scores, valid_lens))
        for method in range(2):
            assert_masked_weights(weights[:, method], valid_lens)
        torch.testing.assert_close(drawn(additive), weights.flatten(0, 1))
    assert not torch.allclose(weights[:, 0], weights[:, 1]), "noisy keys: the two scores disagree"
    sweep.set(noise=0.0, seed=0, valid_len_0=2, valid_len_1=6)


# Scaled dot product ----------------------------------------------------------------------------

def expected_dot_product(explorer, d, scale, temperature, valid_len, causal):
    q, k = explorer.declaration.all_queries[..., :d], explorer.declaration.all_keys[..., :d]
    scores = q @ k.transpose(1, 2) / temperature  # (1, queries, keys)
    if scale:
        scores = scores / math.sqrt(d)
    lens = torch.clamp(torch.arange(1, 9), max=valid_len)[None] if causal else torch.tensor([valid_len])
    return d2l.masked_softmax(scores, lens)[0], lens


def check_dot_product(explorer, weights):
    expected, lens = expected_dot_product(explorer, **dataclasses.asdict(explorer.settings))
    torch.testing.assert_close(weights, expected, rtol=1e-4, atol=1e-6)
    assert_masked_weights(weights[None], lens)
    entropy = -torch.where(weights > 0, weights * weights.log(), torch.zeros(())).sum(-1)
    torch.testing.assert_close(explorer.result.entropy, entropy)
    widths = [bar.get_width() for bar in explorer.view.bars]
    np.testing.assert_allclose(widths, entropy.numpy(), rtol=1e-6)
    torch.testing.assert_close(drawn(explorer)[0], weights)


def test_dot_product_sweep(dot):
    sweep = Sweep(dot)
    plan = ([("d", d) for d in dot.declaration.control("d").values()]
            + [("scale", False), ("scale", True)]
            + [("temperature", t) for t in (0.1, 0.5, 3.0, 10.0, 1.0)]
            + [("valid_len", n) for n in (0, 1, 4, 8)]
            + [("causal", True), ("valid_len", 3), ("causal", False)])
    for name, value in plan:
        check_dot_product(dot, sweep.set(**{name: value}))
    sweep.set(d=16)


def test_the_temperature_undoes_the_missing_scale_at_every_d(dot):
    """Unscaled at d = 512 with T = √512 is the scaled picture: the slider must reach that far."""
    sweep = Sweep(dot)
    largest = max(dot.declaration.control("d").values())
    slider = dot.controls["temperature"]  # a FloatLogSlider: its bounds are exponents
    assert slider.base ** slider.max >= math.sqrt(largest)
    scaled = sweep.set(d=largest, scale=True, temperature=1.0).clone()
    unscaled = sweep.set(scale=False, temperature=math.sqrt(largest))
    check_dot_product(dot, unscaled)
    torch.testing.assert_close(unscaled, scaled, atol=1e-5, rtol=1e-4)
    sweep.set(d=16, scale=True, temperature=1.0)


def test_dot_product_unscaled_large_d_saturates(dot):
    sweep = Sweep(dot)
    scaled = sweep.set(d=512, scale=True).clone()
    unscaled = sweep.set(scale=False)
    check_dot_product(dot, unscaled)
    assert unscaled.max(dim=-1).values.mean() > 0.9 > scaled.max(dim=-1).values.mean()
    assert dot.result.entropy.mean() < 0.3
    sweep.set(d=16, scale=True)


def test_dot_product_causal_first_query_sees_only_itself(dot):
    sweep = Sweep(dot)
    weights = sweep.set(causal=True)
    check_dot_product(dot, weights)
    assert weights[0, 0] == 1 and torch.all(weights.triu(diagonal=1) == 0)
    sweep.set(causal=False)


def test_causal_masking_is_the_packages_causal_module_with_the_valid_length(dot, multihead):
    """No explorer builds causal lengths itself: the module built with causal=True combines
    them with the valid length, and the explorer passes that length alone."""
    assert dot.declaration.attention(True).causal and not dot.declaration.attention(False).causal
    weights = Sweep(dot).set(causal=True, valid_len=5)
    assert dot.result.valid_lens.tolist() == [5] and "valid_lens = [5], causal" in dot.caption.value
    reference = d2l.DotProductAttention(0.0, causal=True)
    q, k = dot.declaration.all_queries[..., :16], dot.declaration.all_keys[..., :16]
    reference(q, k, k, torch.tensor([5]))
    torch.testing.assert_close(weights, reference.attention_weights[0])
    Sweep(dot).set(causal=False, valid_len=8)
    Sweep(multihead).set(causal=True)
    assert multihead.declaration.attention(2, causal=True).causal and multihead.result.valid_lens.tolist() == [6]
    Sweep(multihead).set(causal=False)


# Multi-head ------------------------------------------------------------------------------------

def expected_multihead(explorer, num_heads, causal, valid_len):
    torch.manual_seed(explorer.declaration.seed)
    attention = d2l.MultiHeadAttention(16, num_heads, 0.0, query_size=16, key_size=16, value_size=16)
    lens = torch.clamp(torch.arange(1, 7), max=valid_len)[None] if causal else torch.tensor([valid_len])
    X = explorer.declaration.X  # (1, positions, 16)
    with torch.no_grad():
        attention(X, X, X, lens)
    return attention.attention_weights[0], lens  # (heads, queries, keys)


def test_multihead_offers_only_divisors_of_num_hiddens(multihead):
    assert values_of(multihead.controls["num_heads"]) == [1, 2, 4, 8]
    twelve = widgets.Explorer(widgets.MultiHead(num_hiddens=12))
    assert values_of(twelve.controls["num_heads"]) == [1, 2, 3, 4, 6] and twelve.layouts.keys() == {1, 2, 3, 4, 6}
    with pytest.raises(ValueError, match=r"num_heads must be one of \[1, 2, 4, 8\], got 3"):
        explore_multihead(num_heads=3)


def test_multihead_sweep_heads_and_head_choice(multihead):
    sweep = Sweep(multihead)
    for num_heads in (1, 2, 4, 8):
        weights = sweep.set(num_heads=num_heads)
        values = [value for _, value in multihead.controls["head"].options]
        assert values == ["all", *range(num_heads)]
        expected, lens = expected_multihead(multihead, num_heads, False, 6)
        torch.testing.assert_close(weights, expected)
        torch.testing.assert_close(drawn(multihead), weights)
        titles = [ax.get_title() for ax in multihead.figure.axes if ax.get_title()]
        assert titles == [f"head {h}" for h in range(num_heads)]
        # Every option of the head menu with 8 heads; the first and last with fewer.
        for head in range(num_heads) if num_heads == 8 else sorted({0, num_heads - 1}):
            weights = sweep.set(head=head)
            torch.testing.assert_close(weights, expected[head:head + 1])
            assert [ax.get_title() for ax in multihead.figure.axes if ax.get_title()] == [f"head {head}"]
        sweep.set(head="all")
    sweep.set(head=5)
    sweep.set(num_heads=2)  # head 5 no longer exists: back to all heads
    assert multihead.controls["head"].value == "all" and multihead.weights.shape == (2, 6, 6)


@pytest.mark.parametrize("num_heads,head", [(8, 7), (4, 3)])
def test_multihead_starts_at_any_head_of_its_number_of_heads(num_heads, head):
    """The head menu offers the heads of num_heads alone, and starts at the head asked for."""
    explorer = explore_multihead(num_heads=num_heads, head=head)
    assert repr(explorer) == f"MultiHeadExplorer(num_heads={num_heads}, head={head}, causal=False, valid_len=6)"
    assert values_of(explorer.controls["head"]) == ["all", *range(num_heads)]
    assert explorer.result.heads == [head] and explorer.blit.layout == 1
    assert [ax.get_title() for ax in explorer.figure.axes if ax.get_title()] == [f"head {head}"]


@pytest.mark.parametrize("causal", [False, True])
def test_multihead_masks_match_the_package(multihead, causal):
    sweep = Sweep(multihead)
    sweep.set(num_heads=4, head="all", causal=causal)
    for valid_len in (0, 1, 3, 6):
        weights = sweep.set(valid_len=valid_len)
        expected, lens = expected_multihead(multihead, 4, causal, valid_len)
        torch.testing.assert_close(weights, expected)
        for head in weights:
            assert_masked_weights(head[None], lens)
    sweep.set(num_heads=2, causal=False)


def test_multihead_panels_share_one_scale_and_colorbar(multihead):
    Sweep(multihead).set(num_heads=8)
    meshes = [c for ax in multihead.figure.axes for c in ax.collections if c.get_animated()]
    assert len(meshes) == 8 and {m.get_clim() for m in meshes} == {(0.0, 1.0)}
    colorbars = [ax for ax in multihead.figure.axes if ax.get_label() == "<colorbar>"]
    assert len(colorbars) == 1 and colorbars[0].get_ylim() == (0.0, 1.0)
    Sweep(multihead).set(num_heads=2)


# The colour scale ----------------------------------------------------------------------------

@pytest.mark.parametrize("largest,top", [
    (1.0, 1.0), (0.6, 1.0), (0.5, 0.5), (0.3, 0.5), (0.1, 0.1), (0.11, 0.2), (0.025, 0.05),
    (0.0004, 0.001), (0.0, 1.0),  # a fully masked picture keeps the fixed scale
])
def test_scale_top_rounds_the_largest_weight_up_to_a_readable_end(largest, top):
    weights = torch.tensor([[0.0, largest / 2], [largest, 0.0]])
    assert widgets.scale_top(weights) == top
    assert widgets.scale_top(torch.empty(0, 3)) == 1.0


def colorbar_top(explorer):
    colorbar, = [ax for ax in explorer.figure.axes if ax.get_label() == "<colorbar>"]
    return colorbar.get_ylim()[1]


@pytest.mark.parametrize("name", ["kernel", "masked", "additive", "dot", "multihead"])
def test_fit_to_weights_recolours_heatmaps_and_colorbar_together(name, request):
    explorer = request.getfixturevalue(name)
    fixed_image, fixed_caption = bytes(explorer.image.value), explorer.caption.value
    Sweep(explorer).set(colour_scale="fit")
    top = widgets.scale_top(explorer.weights)
    assert explorer.blit.norm.vmax == top == colorbar_top(explorer)
    assert f"colours 0 to {top:g}" in explorer.caption.value
    meshes = heatmaps(explorer)
    assert meshes and {m.get_clim() for m in meshes} == {(0.0, top)}
    # the darkest cell is the largest weight, at the top of the colour map
    mesh = next(m for m in meshes if m.get_visible())
    colours = mesh.to_rgba(mesh.get_array())
    largest = np.unravel_index(np.argmax(mesh.get_array()), mesh.get_array().shape)
    expected = plt.get_cmap(widgets.CMAP)(float(mesh.get_array()[largest]) / top)
    np.testing.assert_allclose(colours[largest], expected, atol=1e-6)
    if top < 1:
        assert explorer.image.value != fixed_image
    Sweep(explorer).set(colour_scale="fixed")
    assert explorer.blit.norm.vmax == 1.0 == colorbar_top(explorer)
    assert explorer.image.value == fixed_image and explorer.caption.value == fixed_caption


@pytest.mark.parametrize("name", ["kernel", "masked", "additive", "dot", "multihead"])
def test_a_new_colour_scale_redraws_the_colorbar_not_the_whole_figure(name, request):
    explorer = request.getfixturevalue(name)
    sweep = Sweep(explorer)
    sweep.set(colour_scale="fixed")
    full_draws = explorer.blit.full_draws
    sweep.set(colour_scale="fit")
    sweep.set(colour_scale="fixed")
    assert explorer.blit.full_draws == full_draws


def test_fit_to_weights_makes_a_wide_kernel_visible(kernel):
    sweep = Sweep(kernel)
    sweep.set(sigma=8.0)  # nearly uniform weights over 40 keys
    assert kernel.weights.max() < 0.05
    sweep.set(colour_scale="fit")
    assert colorbar_top(kernel) == 0.05
    sweep.set(n_train=100)  # the scale follows the weights it draws
    assert kernel.weights.max() < 0.02 and colorbar_top(kernel) == 0.02
    sweep.set(n_train=40, sigma=0.5, colour_scale="fixed")


def test_fit_to_weights_follows_the_multihead_panel_layout(multihead):
    sweep = Sweep(multihead)
    sweep.set(colour_scale="fit", num_heads=8)
    assert multihead.blit.norm.vmax == widgets.scale_top(multihead.weights) == colorbar_top(multihead)
    sweep.set(num_heads=2, colour_scale="fixed")
    assert colorbar_top(multihead) == 1.0


# Every explorer ------------------------------------------------------------------------------

REPRS = {
    explore_one_query: "QueryPoolingExplorer(query=0.5, score='distance')",
    explore_kernel_pooling: "KernelPoolingExplorer(sigma=0.5, kernel='gaussian', n_train=40)",
    explore_masked_softmax: "MaskedSoftmaxExplorer(mode='per example', valid_len_0=2, valid_len_1=5)",
    explore_additive: "AdditiveExplorer(noise=0.0, seed=0, valid_len_0=2, valid_len_1=6)",
    explore_dot_product: "DotProductExplorer(d=16, scale=True, temperature=1.0, valid_len=8, causal=False)",
    explore_multihead: "MultiHeadExplorer(num_heads=2, head='all', causal=False, valid_len=6)",
}


# The explorers tested in a file of their own rather than by the shared checks of FACTORIES.
OWN_FILES = {"MaskEditor": "test_widgets_mask_editor.py", "ShapeTracer": "test_widgets_shape_tracer.py",
             "OnlineSoftmax": "test_widgets_online_softmax.py", "SinusoidalPositions": "test_widgets_positional.py",
             "Alignment": "test_widgets_training.py", "HeadView": "test_widgets_head_view.py"}


def test_every_declaration_is_in_factories_or_in_a_file_of_its_own():
    """A new explorer is named here until it is in FACTORIES (with its REPRS and its cell in the fixture
    notebook) or in OWN_FILES."""
    in_factories = {type(factory().declaration).__name__ for factory in FACTORIES}
    assert set(REPRS) == set(FACTORIES)
    assert [d.__name__ for d in widgets.DECLARATIONS if d.__name__ not in in_factories | set(OWN_FILES)] == []
    for name, file in OWN_FILES.items():
        assert name in (Path(__file__).parent / file).read_text(), f"{file} does not test {name}"


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
def test_fresh_explorer_has_a_short_fixed_text_form_and_leaks_nothing(factory):
    """Its text form is what nbval compares; it makes no pyplot figure and leaves the
    caller's random numbers alone."""
    plt.close("all")
    torch.manual_seed(123)
    expected_random = torch.rand(3)
    torch.manual_seed(123)
    explorer = factory()
    torch.testing.assert_close(torch.rand(3), expected_random)
    bundle, _ = explorer._repr_mimebundle_()
    assert bundle["text/plain"] == repr(explorer) == REPRS[factory]
    assert set(bundle) == {"text/plain", "application/vnd.jupyter.widget-view+json", "image/png"}
    assert plt.get_fignums() == [], "an explorer must not create pyplot figures"
    assert bytes(explorer.image.value).startswith(b"\x89PNG\r\n\x1a\n")
    assert isinstance(explorer.image, ipywidgets.Image) and explorer.weights is not None


@pytest.mark.parametrize("name", ["kernel", "masked", "additive", "dot", "multihead"])
def test_error_in_a_callback_is_shown_escaped_and_the_next_change_works(name, monkeypatch, request):
    explorer = request.getfixturevalue(name)
    before_image, before_weights = bytes(explorer.image.value), explorer.weights.clone()

    def broken(settings):
        raise RuntimeError("scores <b>exploded</b>")

    monkeypatch.setattr(explorer.declaration, "compute", broken)
    control = next(c for n, c in explorer.controls.items() if n != "mode")
    first = control.value
    control.value = _another_value(control)
    assert isinstance(explorer.last_error, RuntimeError)
    assert "RuntimeError: scores &lt;b&gt;exploded&lt;/b&gt;" in explorer.message.value
    assert "<b>exploded" not in explorer.message.value
    assert "broken" in explorer.message.value  # the traceback is there, folded
    assert explorer.image.value == before_image and torch.equal(explorer.weights, before_weights)

    monkeypatch.undo()
    control.value = first
    assert explorer.last_error is None and explorer.message.value == ""
    torch.testing.assert_close(explorer.weights, before_weights)


def _another_value(control):
    if hasattr(control, "options") and control.options:
        return next(v for v in values_of(control) if v != control.value)
    if isinstance(control.value, bool):
        return not control.value
    return control.max if control.value != control.max else control.min


def test_an_error_from_the_package_shows_in_the_explorer(masked, monkeypatch):
    def failing_softmax(X, valid_lens):
        raise ValueError("valid_lens must be non-negative, got [-1]")

    monkeypatch.setattr(masked_module, "masked_softmax", failing_softmax)
    masked.controls["valid_len_0"].value = 3
    assert isinstance(masked.last_error, ValueError)
    assert "ValueError: valid_lens must be non-negative" in masked.message.value
    monkeypatch.undo()
    Sweep(masked).set(valid_len_0=2)
    assert masked.last_error is None


@pytest.mark.parametrize("name", ["kernel", "multihead"])
@pytest.mark.parametrize("suffix,magic", [(".png", b"\x89PNG\r\n\x1a\n"), (".svg", b"<?xml")])
def test_save_writes_png_or_svg_by_extension(name, suffix, magic, request, tmp_path):
    explorer = request.getfixturevalue(name)
    image = bytes(explorer.image.value)
    [path] = explorer.save(tmp_path / f"view{suffix.upper()}", dpi=40)
    content = path.read_bytes()
    assert content.startswith(magic)
    if suffix == ".svg":
        assert b"<svg" in content and explorer.caption_text.encode() in content
    assert plt.get_fignums() == []
    control = next(c for n, c in explorer.controls.items() if n != "mode")
    first = control.value
    control.value = _another_value(control)
    control.value = first
    assert explorer.image.value == image  # saving left the drawing as it was


def test_save_rejects_other_extensions(kernel, tmp_path):
    with pytest.raises(ValueError, match=r"path must end in \.png, \.svg or \.npz, got '.*view\.pdf'"):
        kernel.save(tmp_path / "view.pdf")


def test_save_button_writes_into_an_ignored_figures_folder_and_says_where(tmp_path, monkeypatch):
    """Save writes beside the notebook into figures/, which git ignores, never among the sources."""
    monkeypatch.chdir(tmp_path)  # a notebook's kernel runs in the notebook's folder
    kernel = explore_kernel_pooling()
    assert kernel.save_path.value == "figures/kernel_pooling.png"
    kernel.save_button.click()
    written = (tmp_path / "figures" / "kernel_pooling.png").resolve()
    assert written.read_bytes().startswith(b"\x89PNG")
    assert kernel.message.value == f"saved {written}" and kernel.last_error is None
    ignored = (Path(__file__).parents[1] / ".gitignore").read_text().split()
    assert "figures/" in ignored


def test_save_button_saves_to_the_named_file_and_reports_errors(kernel, tmp_path):
    kernel.save_path.value = str(tmp_path / "from_button.png")
    kernel.save_button.click()
    assert (tmp_path / "from_button.png").read_bytes().startswith(b"\x89PNG")
    assert "saved" in kernel.message.value and kernel.last_error is None
    kernel.save_path.value = str(tmp_path / "from_button.jpg")
    kernel.save_button.click()
    assert isinstance(kernel.last_error, ValueError) and "from_button.jpg" in kernel.message.value
    Sweep(kernel).set(sigma=0.3)
    assert kernel.last_error is None and kernel.message.value == ""
    Sweep(kernel).set(sigma=0.5)


def assert_png_is_the_canvas(explorer):
    decoded = np.asarray(Image.open(io.BytesIO(bytes(explorer.image.value))))
    canvas = np.asarray(explorer.figure.canvas.buffer_rgba())
    assert decoded.shape == canvas.shape
    np.testing.assert_array_equal(decoded, canvas)


def test_the_png_is_exactly_the_canvas(dot):
    assert_png_is_the_canvas(dot)


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
def test_the_png_of_every_change_is_exactly_the_canvas(factory):
    """Only the rows the registered artists cover are compressed again: every other row
    must still be the canvas's, for every control, colour scale and layout."""
    explorer = factory()
    assert_png_is_the_canvas(explorer)
    for control in explorer.controls.values():
        if isinstance(control, ipywidgets.BoundedIntText):
            continue
        first = control.value
        for value in (_another_value(control), first):
            control.value = value
            assert explorer.last_error is None
            assert_png_is_the_canvas(explorer)
    explorer.controls["colour_scale"].value = "fit"
    assert_png_is_the_canvas(explorer)


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
def test_the_picture_has_twice_the_pixels_of_its_css_size(factory):
    explorer = factory()
    picture = Image.open(io.BytesIO(bytes(explorer.image.value)))
    width, height = explorer.blit.css_size
    assert explorer.image.layout.width == f"{width}px" and explorer.image.layout.height == f"{height}px"
    assert picture.size == (widgets.PIXEL_RATIO * width, widgets.PIXEL_RATIO * height)


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
def test_the_colorbar_label_fits_in_the_figure_for_every_scale_end(factory):
    explorer = factory()
    blit = explorer.blit
    blit.render()
    renderer = blit.canvas.get_renderer()
    for top in widgets.SCALE_TOPS:
        blit.render(top)
        box = blit.colorbar_axes.get_tightbbox(renderer)
        assert box.x1 <= blit.figure.bbox.x1 and box.y0 >= 0, f"colours 0 to {top}: {box} outside the figure"


def test_the_explorers_descriptions_are_not_cut_off():
    """A slider's description wider than ipywidgets' default label column gets its own width."""
    for factory in FACTORIES:
        for control in factory().controls.values():
            unlabelled = isinstance(control, ipywidgets.BoundedIntText | ipywidgets.Checkbox)
            if len(control.description) > 8 and not unlabelled:
                assert control.style.description_width == "initial", control.description


@pytest.mark.parametrize("name", ["masked", "additive", "dot", "multihead"])
def test_masked_cells_are_left_out_of_the_heatmap_and_named_in_a_legend(name, request):
    """A masked cell shows the hatched background, never the colour of weight 0."""
    explorer = request.getfixturevalue(name)
    Sweep(explorer).set(valid_len_0=3) if name in ("masked", "additive") else Sweep(explorer).set(valid_len=3)
    meshes = heatmaps(explorer)
    mask = explorer.result.mask
    assert mask.shape == explorer.weights.shape
    for mesh, panel_mask in zip(meshes, mask.reshape(-1, *mask.shape[-2:])):
        np.testing.assert_array_equal(np.ma.getmaskarray(mesh.get_array()), ~panel_mask.numpy())
        assert mesh.axes.patch.get_hatch()
    assert mask.sum() < mask.numel()
    [legend] = explorer.figure.legends
    assert [text.get_text() for text in legend.get_texts()] == ["masked"]
    Sweep(explorer).set(valid_len_0=2) if name in ("masked", "additive") else Sweep(explorer).set(
        valid_len=8 if name == "dot" else 6)


@pytest.mark.parametrize("causal", [False, True])
def test_the_uniform_entropy_follows_the_keys_each_row_may_attend_to(dot, causal):
    sweep = Sweep(dot)
    sweep.set(valid_len=5, causal=causal)
    xs, _ = dot.view.uniform.get_data()
    expected = [math.log(min(5, row + 1) if causal else 5) for row in range(8)]
    np.testing.assert_allclose(np.asarray(xs, dtype=float)[0::3], expected)
    sweep.set(valid_len=0)
    assert np.isnan(np.asarray(dot.view.uniform.get_data()[0], dtype=float)).all()
    sweep.set(valid_len=8, causal=False)


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
def test_the_display_data_carries_a_static_picture_beside_the_widget(factory):
    explorer = factory()
    data, metadata = explorer._repr_mimebundle_()
    assert data["text/plain"] == repr(explorer)
    assert "application/vnd.jupyter.widget-view+json" in data
    picture = Image.open(io.BytesIO(base64.b64decode(data["image/png"])))
    width, height = explorer.blit.css_size
    assert metadata == {"image/png": {"width": width}}
    # the picture drawn now, with the caption above it and the hint below it
    assert picture.width == widgets.PIXEL_RATIO * width and picture.height > widgets.PIXEL_RATIO * height
    drawn = np.asarray(Image.open(io.BytesIO(bytes(explorer.image.value))).convert("RGB"))
    rows = np.asarray(picture.convert("RGB"))
    offset = next(i for i in range(rows.shape[0]) if np.array_equal(rows[i:i + drawn.shape[0]], drawn))
    assert offset > 0 and (rows[:offset] < 128).any() and (rows[offset + drawn.shape[0]:] < 200).any()


def test_updates_leave_torch_thread_count_alone(dot, callers_threads):
    Sweep(dot).set(d=64)
    Sweep(dot).set(d=16)
    assert torch.get_num_threads() == callers_threads


@pytest.mark.parametrize("call,error,fragments", [
    (lambda: explore_kernel_pooling(kernel="gauss"), ValueError, ["kernel", "'gauss'", "gaussian"]),
    (lambda: explore_kernel_pooling(sigma=0), ValueError, ["sigma", "between 0.0078125 and 8.0", "got 0"]),
    (lambda: explore_kernel_pooling(n_train=40.0), TypeError, ["n_train", "an int", "float"]),
    (lambda: explore_masked_softmax(valid_lens=(1, 2, 3)), ValueError, ["valid_lens", "2 lengths", "(1, 2, 3)"]),
    (lambda: explore_additive(valid_lens=6), ValueError, ["valid_lens", "list or tuple", "got 6"]),
    (lambda: explore_masked_softmax(valid_lens=(1, 9)), ValueError, ["valid_lens[1]", "between 0 and 8", "9"]),
    (lambda: explore_additive(noise="0.5"), TypeError, ["noise", "a number", "str"]),
    (lambda: explore_dot_product(d=3), ValueError, ["d must be one of", "512", "got 3"]),
    (lambda: explore_dot_product(scale=1), ValueError, ["scale", "[True, False]", "got 1"]),
    (lambda: explore_multihead(head=2), ValueError, ["head", "['all', 0, 1]", "got 2"]),
])
def test_bad_arguments_are_named(call, error, fragments):
    with pytest.raises(error) as info:
        call()
    for fragment in fragments:
        assert fragment in str(info.value)


# The notebook design ---------------------------------------------------------------------------

def test_fixture_notebook_cells_output_only_the_explorer():
    """In the strict-nbval fixture, a cell showing an explorer outputs the widget and nothing
    else (no figure, no image), and moving a slider from code outputs nothing either."""
    notebook = json.loads(FIXTURE_NOTEBOOK.read_text())
    shown = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        for output in cell["outputs"]:
            data = output.get("data", {})
            assert "Figure size" not in "".join(data.get("text/plain", ""))
            if "application/vnd.jupyter.widget-view+json" in data:
                assert len(cell["outputs"]) == 1 and set(data) == {
                    "text/plain", "application/vnd.jupyter.widget-view+json", "image/png"}
                shown.append("".join(data["text/plain"]))
            else:
                assert "image/png" not in data
    assert shown == [REPRS[factory] for factory in FACTORIES if factory is not explore_one_query]


@pytest.mark.parametrize("path", sorted(Path(__file__).parents[1].glob("notebooks/*.ipynb")) + [FIXTURE_NOTEBOOK],
                         ids=lambda path: path.stem)
def test_every_stored_explorer_output_carries_its_static_picture(path):
    """GitHub, and an export without the widget state, show the PNG beside the widget view."""
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "application/vnd.jupyter.widget-view+json" in data and "Explorer(" in "".join(data["text/plain"]):
                png = base64.b64decode("".join(data["image/png"]))
                width = output["metadata"]["image/png"]["width"]
                assert Image.open(io.BytesIO(png)).width == widgets.PIXEL_RATIO * width
