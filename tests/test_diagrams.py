"""The labelled diagrams: the labels they promise, masks from the package, cheap, and none left open in pyplot."""

import io
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.colors import to_hex
from matplotlib.patches import Rectangle
from matplotlib.text import Text

import d2lmini as d2l
from d2lmini import diagrams
from d2lmini.plotting import head_colour

DIAGRAMS = [diagrams.draw_queries_keys_values, diagrams.draw_additive_scorer, diagrams.draw_causal_mask,
            diagrams.draw_multihead_split_merge]


def texts(fig):
    """Every non-empty string drawn in the figure: titles, axis labels, box labels, legend entries."""
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def has_label(fig, label):
    return any(label in text for text in texts(fig))


def test_queries_keys_values_labels_every_box():
    fig = diagrams.draw_queries_keys_values()
    for label in ["$q$", "$a(q, k_1)$", "$\\sum_i \\alpha_i v_i$", "softmax over the keys", "keys", "values"]:
        assert has_label(fig, label), label
    for i in range(1, 5):
        for label in [f"$k_{i}$", f"$v_{i}$", f"$a(q, k_{i})$", f"$\\alpha_{i}$"]:
            assert has_label(fig, label), label


def test_queries_keys_values_prints_the_hand_computed_weights_and_output():
    # q = 1.2, keys 0..3, a(q, k) = -(q - k)^2 / 2, values 0, 2, 1, 4
    exps = [math.exp(-0.5 * (1.2 - k) ** 2) for k in (0, 1, 2, 3)]
    alphas = [e / sum(exps) for e in exps]
    output = sum(a * v for a, v in zip(alphas, (0, 2, 1, 4)))
    fig = diagrams.draw_queries_keys_values()
    for i, alpha in enumerate(alphas, start=1):
        assert has_label(fig, f"$\\alpha_{i}$ = {alpha:.2f}")
    assert has_label(fig, f"= {output:.2f}")
    assert has_label(fig, "$\\sum_i \\alpha_i$ = 1.00")
    assert [round(a, 2) for a in alphas] == [0.2, 0.41, 0.3, 0.08]  # the figure's numbers, checked by hand


def test_additive_scorer_labels_each_piece_with_its_size():
    fig = diagrams.draw_additive_scorer()
    for label in ["$q \\in \\mathbb{R}^{d_q}$", "$k \\in \\mathbb{R}^{d_k}$", "$W_q$: $d_h \\times d_q$",
                  "$W_k$: $d_h \\times d_k$", "$W_q\\, q \\in \\mathbb{R}^{d_h}$",
                  "$W_k\\, k \\in \\mathbb{R}^{d_h}$", "+", "tanh", "$w_v^\\top$: $1 \\times d_h$", "a scalar",
                  "(B, n_q, 1, d_h)", "(B, 1, n_k, d_h)", "(B, n_q, n_k)"]:
        assert has_label(fig, label), label


def test_multihead_diagram_labels_the_split_the_heads_and_the_merge():
    fig = diagrams.draw_multihead_split_merge()
    for label in ["$X$", "$W_q, W_k, W_v$", "split", "transpose_qkv", "(B·h, n, d_head)", "merge", "transpose_output",
                  "(B, n, h·d_head)", "the concatenation", "$W_o$", "output"]:
        assert has_label(fig, label), label
    for i in range(4):
        assert has_label(fig, f"head {i}: attention")


def test_multihead_diagram_colours_each_feature_by_its_head_as_chapter_05_does():
    ax = diagrams.draw_multihead_split_merge().axes[0]
    cells = sorted((patch for patch in ax.patches if type(patch) is Rectangle), key=lambda patch: patch.get_x())
    assert len(cells) == 2 * 16  # the projected features, then the merged heads
    for strip in (cells[:16], cells[16:]):
        assert [to_hex(cell.get_facecolor()) for cell in strip] == [to_hex(head_colour(j // 4)) for j in range(16)]


@pytest.mark.parametrize("draw", DIAGRAMS)
def test_every_axes_is_turned_off_or_labelled(draw):
    fig = draw()
    for ax in fig.axes:
        assert not ax.axison or (ax.get_xlabel() and ax.get_ylabel())


def drawn_grid(ax, n):
    """(allowed, outlined): two (n, n) boolean grids read back from a causal panel."""
    cells = ax.get_images()[0].get_array()
    assert cells.shape == (n, n)
    allowed = torch.from_numpy(~np.isnan(cells.filled(np.nan)))  # masked cells are not drawn
    assert ax.patch.get_hatch() == "//"  # what shows through a masked cell, as plotting.MASKED_CELLS
    outlined = torch.zeros(n, n, dtype=torch.bool)
    for patch in ax.patches:
        x, y = patch.get_xy()
        outlined[round(y + 0.45), round(x + 0.45)] = True
    return allowed, outlined


@pytest.mark.parametrize("n", [2, 5, 7])
def test_causal_panels_match_the_package_mask_and_its_two_mistakes(n):
    right = d2l.attention_mask(None, 1, n, n, causal=True)[0]  # (queries, keys)
    expected = [right, right & ~torch.eye(n, dtype=torch.bool), right.T]
    fig = diagrams.draw_causal_mask(n)
    panels = [ax for ax in fig.axes if ax.get_images()]
    assert len(panels) == 3
    for ax, mask in zip(panels, expected):
        allowed, outlined = drawn_grid(ax, n)
        assert torch.equal(allowed, mask)
        assert torch.equal(outlined, mask != right)  # the red outlines are exactly the wrong cells
    assert torch.equal(right, torch.ones(n, n, dtype=torch.bool).tril())


def test_causal_diagram_takes_its_mask_from_the_package(monkeypatch):
    n = 4
    upper = torch.ones(n, n, dtype=torch.bool).triu()
    monkeypatch.setattr(diagrams, "attention_mask", lambda *args, **kwargs: upper[None])
    allowed, outlined = drawn_grid(diagrams.draw_causal_mask(n).axes[0], n)
    assert torch.equal(allowed, upper) and not outlined.any()


def test_causal_diagram_labels_time_and_the_mistakes():
    fig = diagrams.draw_causal_mask()
    for label in ["key $j$ (time →)", "query $i$ (time ↓)", "right", "wrong: diagonal masked",
                  "wrong: flipped", "may attend", "masked", "wrong cell"]:
        assert has_label(fig, label), label


@pytest.mark.parametrize("num_steps, error, message", [
    (1, ValueError, "num_steps must be between 2 and 12, got 1"),
    (13, ValueError, "num_steps must be between 2 and 12, got 13"),
    (2.0, TypeError, "num_steps must be an int, got float 2.0"),
    (True, TypeError, "num_steps must be an int, got bool True"),
    ("5", TypeError, "num_steps must be an int, got str '5'"),
])
def test_causal_diagram_rejects_a_bad_size_naming_it(num_steps, error, message):
    with pytest.raises(error, match=message):
        diagrams.draw_causal_mask(num_steps)


@pytest.mark.parametrize("draw", DIAGRAMS)
def test_each_diagram_leaves_nothing_in_pyplot(draw):
    before = plt.get_fignums()
    draw().savefig(io.BytesIO(), format="png")
    assert plt.get_fignums() == before


@pytest.mark.parametrize("draw", DIAGRAMS)
def test_each_diagram_is_the_same_on_every_call(draw):
    first, second = io.BytesIO(), io.BytesIO()
    draw().savefig(first, format="png")
    draw().savefig(second, format="png")
    assert first.getvalue() == second.getvalue()
