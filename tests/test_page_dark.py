"""The live explorers' page data carries a dark variant of each figure (d2lmini.widgets.page, d2lmini.dark).

What depends on colours is exported twice (the background, the colorbar's sprites, the artists'
styles where they differ); the states are shared. The browser side is tested on the built site
(tests/browser/test_site.py).
"""

import base64
import colorsys
import io

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from matplotlib.text import Text
from PIL import Image

from d2lmini.dark import DARK_BACKGROUND, DARK_TEXT, contrast
from d2lmini.widgets import DECLARATIONS, page, page_states, png

WHITE = (255, 255, 255, 255)


def _declaration(name):
    return next(d for d in DECLARATIONS if d.__name__ == name).for_page()


def _pixels(url):
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGBA"))


def _rgba(hex_colour):
    return tuple(round(channel * 255) for channel in to_rgba(hex_colour))


@pytest.fixture(scope="module")
def exported():
    """Page data of an explorer with stored states and coloured texts, and of one computed in the page."""
    return {name: page.explorer_data(_declaration(name)) for name in ("Alignment", "MaskEditor")}


@pytest.mark.parametrize("name", ["Alignment", "MaskEditor"])
def test_each_figure_has_a_dark_background_where_the_light_one_is_white(exported, name):
    for layout, figure in exported[name]["figures"].items():
        light, dark = _pixels(figure["background"]), _pixels(figure["dark"]["background"])
        assert light.shape == dark.shape == (figure["height"], figure["width"], 4)
        for corner in ((0, 0), (0, -1), (-1, 0), (-1, -1)):
            assert tuple(light[corner]) == WHITE, f"{name} {layout}"
            assert tuple(dark[corner]) == _rgba(DARK_BACKGROUND), f"{name} {layout}"
        white = (light == WHITE).all(axis=-1)
        assert (dark[white][:, :3].mean(axis=-1) < 60).mean() > 0.95  # the white page is dark now


@pytest.mark.parametrize("name", ["Alignment", "MaskEditor"])
def test_the_dark_variant_holds_colours_only_and_the_states_are_shared(exported, name):
    data = exported[name]
    for figure in data["figures"].values():
        dark = figure["dark"]
        assert set(dark) == {"background", "artists", "colorbar"}
        assert len(dark["artists"]) == len(figure["artists"])
        for light, changed in zip(figure["artists"], dark["artists"]):
            assert set(changed) <= set(light) | {"look_colours"}  # no geometry: "axes" is never changed
            assert all(changed[key] != light[key] for key in set(changed) & set(light))
        assert set(dark["colorbar"]["ends"]) == set(figure["colorbar"]["ends"])


def test_the_dark_colorbar_writes_its_ticks_and_label_in_the_dark_pages_text_colour(exported):
    data = exported["MaskEditor"]
    figure = next(iter(data["figures"].values()))
    for end, (index, *place) in figure["colorbar"]["ends"].items():
        dark_index, *dark_place = figure["dark"]["colorbar"]["ends"][end]
        assert dark_place == place
        light, dark = _pixels(data["sprites"][index]), _pixels(data["sprites"][dark_index])
        opaque = dark[..., 3] == 255
        assert opaque.sum() > 50, end
        assert {tuple(c) for c in dark[opaque][:, :3]} == {_rgba(DARK_TEXT)[:3]}, end
        assert {tuple(c) for c in light[light[..., 3] == 255][:, :3]} == {(0, 0, 0)}, end


def test_a_text_on_the_page_turns_light_and_its_states_colours_read_better_with_their_hue_kept(exported):
    figure = next(iter(exported["Alignment"]["figures"].values()))
    pairs = [pair for changed in figure["dark"]["artists"] for pair in changed.get("look_colours", [])]
    assert pairs, "the alignment's symbols have a colour per state (green right, red wrong)"
    texts = [(light, changed) for light, changed in zip(figure["artists"], figure["dark"]["artists"])
             if light["kind"] == "text"]
    assert texts and all(changed["colour"] == list(_rgba(DARK_TEXT)[:3]) + [1.0] for _, changed in texts)
    for light, dark in pairs:
        light_rgb, dark_rgb = (np.array(c[:3]) / 255 for c in (light, dark))
        assert contrast(dark_rgb, DARK_BACKGROUND) > contrast(light_rgb, DARK_BACKGROUND) + 0.5, (light, dark)
        hues = [colorsys.rgb_to_hls(*rgb)[0] for rgb in (light_rgb, dark_rgb)]
        assert abs(hues[0] - hues[1]) < 0.02, (light, dark)


def test_a_text_with_a_halo_keeps_its_colours_in_the_dark():
    data = page.explorer_data(_declaration("QueryPooling"))
    figure = next(iter(data["figures"].values()))
    haloed = [changed for light, changed in zip(figure["artists"], figure["dark"]["artists"])
              if light["kind"] == "text" and light["stroke"]]
    assert haloed and all(changed == {} for changed in haloed)


def test_the_figure_draws_for_the_light_page_again_after_its_dark_variant():
    states = page_states.PageStates(_declaration("Alignment"))
    states.state(states.declaration.Settings())
    page_figure = next(iter(states.page_figures.values()))
    texts = [artist for artist in page_figure.blit.artists if isinstance(artist, Text)]
    shown = [(text.get_text(), text.get_color()) for text in texts]
    assert any(text for text, _ in shown) and any(page_figure.look_colours)  # a state's text, in its own colour
    artists = list(zip(page_figure.blit.artists, page_figure.kinds))
    styles = [style(artist, page_figure) for artist, (style, _) in artists]
    page_figure.fixed_parts()
    picture = np.asarray(Image.open(io.BytesIO(page_figure.blit.render())).convert("RGBA"))
    assert tuple(picture[0, 0]) == tuple(picture[-1, -1]) == WHITE
    assert [style(artist, page_figure) for artist, (style, _) in artists] == styles
    assert [(text.get_text(), text.get_color()) for text in texts] == shown


def test_an_opaque_picture_a_few_colours_past_256_is_stored_with_256_and_a_wide_one_exactly():
    greys = np.zeros((20, 300, 4), np.uint8)
    greys[..., :3] = (np.arange(300) * 255 // 299)[None, :, None]  # 256 levels, and a blue blend on each
    greys[10:, :, 2] = np.minimum(255, greys[10:, :, 2].astype(int) + 1)
    greys[..., 3] = 255
    assert len(np.unique(greys.reshape(-1, 4), axis=0)) > 256
    stored = np.asarray(Image.open(io.BytesIO(png.page_png(greys))).convert("RGBA"))
    assert Image.open(io.BytesIO(png.page_png(greys))).mode == "P"
    assert np.abs(stored.astype(int) - greys).max() <= png.REDUCED_LEVELS
    wide = np.random.default_rng(0).integers(0, 256, (40, 40, 4), dtype=np.uint8)
    wide[..., 3] = 255
    exact = np.asarray(Image.open(io.BytesIO(png.page_png(wide))).convert("RGBA"))
    assert np.array_equal(exact, wide)
