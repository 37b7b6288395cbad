"""The positional-encoding explorer draws d2lmini's encoding and the weights of positions alone."""

import base64
import io
import math

import numpy as np
import pytest
import torch
from PIL import Image

import d2lmini as d2l
from d2lmini import widgets
from d2lmini.widgets import explore_positional_encoding

NUM_POSITIONS = 64


@pytest.fixture(scope="module")
def explorer():
    return explore_positional_encoding()


def set_control(explorer, name, value):
    """Set one control; return whether the picture changed."""
    before = bytes(explorer.image.value)
    explorer.controls[name].value = value
    assert explorer.last_error is None, f"{name}={value!r} raised {explorer.last_error!r}"
    return bytes(explorer.image.value) != before


def expected_weights(P):
    """softmax(P Pᵀ / √d) by hand, (positions, positions)."""
    return torch.softmax(P @ P.T / math.sqrt(P.shape[1]), dim=-1)


def assert_draws_the_package(explorer, d, base):
    P = d2l.PositionalEncoding(d, 0.0, max_len=NUM_POSITIONS, base=base).P[0]  # (positions, d)
    torch.testing.assert_close(explorer.result.encoding, P)
    np.testing.assert_array_equal(explorer.view.code.get_array(), P.numpy())
    torch.testing.assert_close(explorer.weights, expected_weights(P))
    np.testing.assert_array_equal(explorer.view.heatmap.get_array(), explorer.weights.numpy())


@pytest.mark.parametrize("d", [2, 4, 16, 64, 128, 32])
def test_every_dimension_draws_the_packages_encoding_and_its_weights(explorer, d):
    changed = set_control(explorer, "d", d)
    assert changed or d == 32  # 32 is where the sweep started
    assert explorer.view.code.get_array().shape == (NUM_POSITIONS, d)
    assert_draws_the_package(explorer, d, 10000.0)


@pytest.mark.parametrize("base", [10 ** 0.5, 10.0, 100.0, 10 ** 4.25, 10 ** 5, 10000.0])
def test_every_base_draws_the_packages_encoding_and_its_weights(explorer, base):
    changed = set_control(explorer, "base", base)
    assert changed or base == 10000.0
    assert_draws_the_package(explorer, 32, base)


def test_an_odd_dimension_from_code_is_drawn_too(explorer):
    set_control(explorer, "d", 7)
    assert_draws_the_package(explorer, 7, 10000.0)
    set_control(explorer, "d", 32)


def test_a_new_dimension_changes_one_image_not_the_axes():
    explorer = explore_positional_encoding()
    draws = explorer.blit.full_draws
    for d in (2, 8, 128, 30):
        set_control(explorer, "d", d)
    assert explorer.blit.full_draws == draws
    assert tuple(explorer.view.code.get_extent()) == (0, 1, NUM_POSITIONS - 0.5, -0.5)


def test_the_rows_of_the_weights_are_positions_attending_to_positions(explorer):
    weights = explorer.weights
    assert weights.shape == (NUM_POSITIONS, NUM_POSITIONS)
    torch.testing.assert_close(weights.sum(-1), torch.ones(NUM_POSITIONS))
    torch.testing.assert_close(weights.argmax(-1), torch.arange(NUM_POSITIONS))  # a position is most like itself
    ax = explorer.view.heatmap.axes
    assert (ax.get_ylabel(), ax.get_xlabel()) == ("Queries (position i)", "Keys (position j)")


@pytest.mark.parametrize("d,base,caption", [
    (32, 10000.0, "d = 32, base = 10,000: wavelengths from 2π ≈ 6.28 to 35,300 positions"),  # 2π · 10000^(30/32)
    (32, 10 ** 4.25, "d = 32, base = 17,800: wavelengths from 2π ≈ 6.28 to 60,600 positions"),  # as the slider
    (64, 10.0, "d = 64, base = 10: wavelengths from 2π ≈ 6.28 to 58.5 positions"),  # 2π · 10^(62/64)
    (2, 100.0, "d = 2, base = 100: wavelengths from 2π ≈ 6.28 to 6.28 positions"),  # one pair: 2π only
])
def test_the_caption_names_d_the_base_and_the_longest_wavelength(d, base, caption):
    assert explore_positional_encoding(d=d, base=base).caption_text.startswith(caption + "; colours 0 to ")


def test_the_colour_scale_starts_fitted_and_can_be_fixed():
    explorer = explore_positional_encoding()
    assert explorer.controls["colour_scale"].value == "fit"
    top = widgets.scale_top(explorer.weights)
    assert top < 1 and explorer.blit.norm.vmax == top
    assert explorer.caption_text.endswith(f"; colours 0 to {top:g}")
    assert set_control(explorer, "colour_scale", "fixed")
    assert explorer.blit.norm.vmax == 1.0 and "colours" not in explorer.caption_text


def test_the_encoding_keeps_its_own_fixed_scale_whatever_the_weights_scale(explorer):
    norm = explorer.view.code.norm
    assert (norm.vmin, norm.vmax) == (-1, 1) and norm is not explorer.blit.norm
    labels = [ax.get_ylabel() for ax in explorer.figure.axes]
    assert "P[i, column]" in labels and "attention weight" in labels


def test_repr_names_the_controls():
    assert repr(explore_positional_encoding(d=16, base=100.0)) == "PositionalEncodingExplorer(d=16, base=100.0)"


def assert_png_is_the_canvas(explorer):
    decoded = np.asarray(Image.open(io.BytesIO(bytes(explorer.image.value))))
    np.testing.assert_array_equal(decoded, np.asarray(explorer.figure.canvas.buffer_rgba()))


def test_the_png_of_every_change_is_exactly_the_canvas():
    explorer = explore_positional_encoding()
    assert_png_is_the_canvas(explorer)
    for name, value in (("d", 128), ("base", 10.0), ("colour_scale", "fixed"), ("d", 2), ("base", 10000.0)):
        set_control(explorer, name, value)
        assert_png_is_the_canvas(explorer)


def test_the_picture_has_twice_the_pixels_of_its_css_size(explorer):
    picture = Image.open(io.BytesIO(bytes(explorer.image.value)))
    width, height = explorer.blit.css_size
    assert explorer.image.layout.width == f"{width}px" and explorer.image.layout.height == f"{height}px"
    assert picture.size == (widgets.PIXEL_RATIO * width, widgets.PIXEL_RATIO * height)


def test_both_colorbars_fit_in_the_figure_for_every_scale_end():
    explorer = explore_positional_encoding()
    blit = explorer.blit
    renderer = blit.canvas.get_renderer()
    for top in widgets.SCALE_TOPS:
        blit.render(top)
        for ax in explorer.figure.axes:
            box = ax.get_tightbbox(renderer)
            assert box.x0 >= 0 and box.x1 <= blit.figure.bbox.x1 and box.y0 >= 0, f"colours 0 to {top}: {ax}"


def test_the_display_data_carries_a_static_picture_beside_the_widget(explorer):
    data, metadata = explorer._repr_mimebundle_()
    assert data["text/plain"] == repr(explorer)
    assert "application/vnd.jupyter.widget-view+json" in data
    picture = Image.open(io.BytesIO(base64.b64decode(data["image/png"])))
    assert metadata == {"image/png": {"width": explorer.blit.css_size[0]}}
    assert picture.width == widgets.PIXEL_RATIO * explorer.blit.css_size[0]


@pytest.mark.parametrize("call,error,fragments", [
    (lambda: explore_positional_encoding(d=0), ValueError, ["d must be between 2 and 128", "got 0"]),
    (lambda: explore_positional_encoding(d=32.0), TypeError, ["d must be an int", "float"]),
    (lambda: explore_positional_encoding(base=1), ValueError, ["base must be between", "100000", "got 1"]),
    (lambda: explore_positional_encoding(base="10000"), TypeError, ["base must be a number", "str"]),
])
def test_bad_arguments_are_named(call, error, fragments):
    with pytest.raises(error) as info:
        call()
    for fragment in fragments:
        assert fragment in str(info.value)


@pytest.mark.parametrize("d", [2, 5, 128])
def test_each_cell_is_drawn_in_its_colour_at_its_place(d):
    """Both panels are drawn cell by cell (no resampling): the pixel at the centre of every cell of
    the encoding, and of the weights' diagonal, has the colour of its value."""
    explorer = explore_positional_encoding(d=d)
    canvas = np.asarray(explorer.figure.canvas.buffer_rgba())  # (height, width, 4), as last rendered
    height = canvas.shape[0]
    for image, cells in ((explorer.view.code, [(i, c) for i in range(0, NUM_POSITIONS, 7) for c in range(d)]),
                         (explorer.view.heatmap, [(i, i) for i in range(NUM_POSITIONS)])):
        data = image.get_array()
        left, right, bottom, top = image.get_extent()
        rows, columns = data.shape
        for row, column in cells:
            x = left + (column + 0.5) * (right - left) / columns
            y = top + (row + 0.5) * (bottom - top) / rows
            px, py = image.axes.transData.transform((x, y))
            expected = image.to_rgba(np.array([[data[row, column]]]), bytes=True)[0, 0]
            np.testing.assert_array_equal(canvas[int(height - py), int(px)], expected, err_msg=f"cell {row, column}")


def test_the_declaration_keeps_its_page_name_on_the_class_and_its_instances():
    # The site's tools read the name from the class (tools/site_words.py, tools/build_site.py).
    assert widgets.SinusoidalPositions.name == widgets.SinusoidalPositions().name == "PositionalEncodingExplorer"
    assert widgets.KernelPooling.name == widgets.KernelPooling().name == "KernelPoolingExplorer"


def test_the_declaration_computes_the_packages_encoding_without_a_shell():
    declaration = widgets.SinusoidalPositions()
    result = declaration.compute(declaration.checked_settings(d=16, base=100.0))
    P = d2l.PositionalEncoding(16, 0.0, max_len=NUM_POSITIONS, base=100.0).P[0]  # (positions, d)
    torch.testing.assert_close(result.encoding, P)
    torch.testing.assert_close(result.weights, expected_weights(P))
    assert declaration.recipe(result).inputs == {"d": 16, "base": 100.0, "num_positions": NUM_POSITIONS}
