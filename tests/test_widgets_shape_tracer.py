"""The shape tracer draws where d2lmini's transpose_qkv (or a bare reshape) really puts each feature."""

import numpy as np
import pytest
import torch
from matplotlib.colors import to_rgba

import d2lmini as d2l
from d2lmini.plotting import HEAD_COLOURS
from d2lmini.widgets import explore_shape_tracer, shape_tracer
from d2lmini.widgets.shape_tracer import CELL, DIGIT_AT, FONT, tensor_picture

D = 8


@pytest.fixture(scope="module")
def explorer():
    return explore_shape_tracer()


def set_controls(explorer, **values):
    """Set controls one by one; return whether the picture changed."""
    before = bytes(explorer.image.value)
    for name, value in values.items():
        explorer.controls[name].value = value
        assert explorer.last_error is None, f"{name}={value!r} raised {explorer.last_error!r}"
    return bytes(explorer.image.value) != before


def read_cells(pixels):
    """(heads, digits) read back off a picture: per cell, the head whose colour fills it (-1: blank)
    and the digit painted in it (-1: none)."""
    if pixels.dtype == np.uint8:  # the explorer's images are 8-bit
        pixels = pixels / 255
    rows, width = pixels.shape[0] // CELL, pixels.shape[1] // CELL
    heads, digits = np.full((rows, width), -1), np.full((rows, width), -1)
    colours = np.array([to_rgba(c) for c in HEAD_COLOURS])
    top, left = DIGIT_AT
    for r in range(rows):
        for w in range(width):
            corner = pixels[r * CELL, w * CELL]
            if corner[3] == 0:
                continue
            [[heads[r, w]]] = np.nonzero(np.abs(colours - corner).sum(1) < 0.01)
            ink = np.abs(pixels[r * CELL + top:r * CELL + top + 5, w * CELL + left:w * CELL + left + 3] - corner
                         ).sum(-1) > 0.01
            [digits[r, w]] = [digit for digit, glyph in FONT.items() if np.array_equal(glyph, ink)]
    return heads, digits


def expected_layout(h, T, transpose):
    """The folded batch's (position, column) of block b, row t, column c, from the flat memory order by hand."""
    p = D // h
    positions, columns = np.zeros((h, T, p), int), np.zeros((h, T, p), int)
    for b in range(h):
        for t in range(T):
            for c in range(p):
                if transpose:  # block b is head b: position t, feature b·p + c
                    positions[b, t, c], columns[b, t, c] = t, b * p + c
                else:  # a reshape keeps the flat order: element b·T·p + t·p + c of X, row-major (T, D)
                    flat = b * T * p + t * p + c
                    positions[b, t, c], columns[b, t, c] = flat // D, flat % D
    return positions, columns


CASES = [(1, 4, True), (2, 4, False), (4, 3, True), (4, 3, False), (8, 5, True), (8, 5, False), (2, 2, True),
         (2, 4, True)]


@pytest.mark.parametrize("h,T,transpose", CASES)
def test_what_is_drawn_is_where_the_tensor_puts_each_feature(explorer, h, T, transpose):
    changed = set_controls(explorer, num_heads=h, T=T, transpose=transpose)
    assert changed or (h, T, transpose) == (2, 4, True)
    p = D // h
    positions, columns = expected_layout(h, T, transpose)
    np.testing.assert_array_equal(explorer.result.positions.numpy(), positions)
    np.testing.assert_array_equal(explorer.result.columns.numpy(), columns)
    if transpose:  # the explorer's tensors come from d2lmini's own fold
        X = torch.arange(T * D).reshape(1, T, D)
        folded = d2l.MultiHeadAttention(D, h, 0.0).transpose_qkv(X)
        np.testing.assert_array_equal(folded.numpy() // D, positions)
    heads, digits = read_cells(explorer.view.images["fold"].get_array())
    for b in range(h):
        block = np.s_[:T, b * (p + 1):b * (p + 1) + p]
        np.testing.assert_array_equal(heads[block], columns[b] // p)
        np.testing.assert_array_equal(digits[block], positions[b])
    assert (heads[T:] == -1).all() and (heads[:, h * (p + 1) - 1:] == -1).all()  # the rest is blank
    x_heads, x_digits = read_cells(explorer.view.images["X"].get_array())
    np.testing.assert_array_equal(x_heads[:T], np.arange(D)[None].repeat(T, 0) // p)
    np.testing.assert_array_equal(x_digits[:T], np.arange(T)[:, None].repeat(D, 1))
    legend_heads, legend_digits = read_cells(explorer.view.images["legend"].get_array())
    np.testing.assert_array_equal(legend_heads[0, :2 * h:2], np.arange(h))  # one cell per head, one blank apart
    np.testing.assert_array_equal(legend_digits[0, :2 * h:2], np.arange(h))
    assert (legend_heads[0, 2 * h - 1:] == -1).all()
    assert f"({h}, {T}, {p})" in explorer.caption_text


def test_without_the_transpose_a_block_mixes_heads_and_positions(explorer):
    set_controls(explorer, num_heads=2, T=4, transpose=False)
    assert explorer.result.positions[0, :, 0].tolist() == [0, 0, 1, 1]
    assert sorted(set((explorer.result.columns[0] // 4).flatten().tolist())) == [0, 1]
    assert "heads mix positions" in explorer.caption_text
    set_controls(explorer, transpose=True)
    assert explorer.result.positions[0, :, 0].tolist() == [0, 1, 2, 3]


def test_one_head_needs_no_transpose(explorer):
    set_controls(explorer, num_heads=1, T=3, transpose=True)
    with_transpose = bytes(explorer.image.value)
    assert not set_controls(explorer, transpose=False)
    assert bytes(explorer.image.value) == with_transpose


def test_moving_the_controls_leaves_the_notebooks_generator_alone():
    shape_tracer._layer.cache_clear()  # each layer is built anew, drawing its W_o
    explorer = explore_shape_tracer()
    before = torch.get_rng_state()
    for h in (1, 4, 8, 2):
        set_controls(explorer, num_heads=h)
    assert torch.equal(torch.get_rng_state(), before)


def test_tensor_picture_draws_blocks_side_by_side():
    positions = torch.tensor([[[0, 1]], [[2, 3]]])  # (2 blocks, 1 row, 2 columns)
    columns = torch.tensor([[[0, 1]], [[2, 3]]])
    pixels = tensor_picture(positions, columns, head_width=2)
    assert pixels.shape == (CELL, 5 * CELL, 4)  # 2 + 1 blank + 2 cells across
    heads, digits = read_cells(pixels)
    assert heads.tolist() == [[0, 0, -1, 1, 1]]
    assert digits.tolist() == [[0, 1, -1, 2, 3]]


@pytest.mark.parametrize("kwargs,message", [
    ({"num_heads": 3}, r"num_heads must be one of \[1, 2, 4, 8\], got 3"),
    ({"T": 6}, "T must be between 2 and 5, got 6"),
    ({"transpose": "yes"}, r"transpose must be one of \[True, False\], got 'yes'"),
])
def test_bad_starting_values_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        explore_shape_tracer(**kwargs)


def test_a_bad_type_for_T_is_named():
    with pytest.raises(TypeError, match="T must be an int, got float 2.5"):
        explore_shape_tracer(T=2.5)


def test_a_fresh_tracer_has_a_short_text_form_and_makes_no_pyplot_figure():
    import matplotlib.pyplot as plt

    plt.close("all")
    explorer = explore_shape_tracer()
    bundle, _ = explorer._repr_mimebundle_()
    assert bundle["text/plain"] == "ShapeTracerExplorer(num_heads=2, T=4, transpose=True)"
    assert set(bundle) == {"text/plain", "application/vnd.jupyter.widget-view+json", "image/png"}
    assert plt.get_fignums() == []


def test_the_tracer_has_no_colour_controls_and_its_summary_says_where_the_heads_go(explorer):
    """Its colours are heads, not weights: a colour-scale or colour-map control would change nothing."""
    assert "colour_scale" not in explorer.controls and "colour_map" not in explorer.controls
    set_controls(explorer, num_heads=2, T=4, transpose=True)
    assert explorer.image.tooltip == ("2 heads of width 4: block 0 holds head 0 at positions 0, 1, 2, 3; "
                                      "block 1 holds head 1 at positions 0, 1, 2, 3.")
    set_controls(explorer, transpose=False)  # reshape alone: block 0 takes positions 0-1, all 8 columns
    assert explorer.image.tooltip == ("2 heads of width 4: block 0 holds heads 0, 1 at positions 0, 1; "
                                      "block 1 holds heads 0, 1 at positions 2, 3.")
    set_controls(explorer, num_heads=4, transpose=True)
    assert explorer.summary_text.endswith("(first 2 of 4 blocks).")


def test_the_declaration_folds_without_a_shell_and_keeps_nothing():
    declaration = shape_tracer.ShapeTracer()
    settings = declaration.checked_settings(num_heads=4, T=3, transpose=False)
    result = declaration.compute(settings)
    positions, columns = expected_layout(4, 3, False)
    np.testing.assert_array_equal(result.positions.numpy(), positions)
    np.testing.assert_array_equal(result.columns.numpy(), columns)
    assert result.caption == "h = 4, d_head = 2, T = 3: (1, 3, 8) → (4, 3, 2) by reshape alone: heads mix positions"
    again = declaration.compute(settings)
    assert torch.equal(again.positions, result.positions) and vars(declaration) == {}
