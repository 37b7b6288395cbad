"""Every figure says what it shows (alt text) and has a picture drawn for a dark page.

d2lmini.figure_alt makes the alt text from the figure; d2lmini.dark recolours a figure for a dark
page and puts it back; d2lmini.plotting stores both with each figure a notebook shows; the stored
chapters carry them for every figure (the web site shows them: tests/browser/test_site.py).
"""

import base64
import io
import json
import re
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import torch
from matplotlib.colors import to_rgba
from PIL import Image

import d2lmini as d2l
from d2lmini import diagrams, plotting, seq2seq
from d2lmini.dark import DARK_BACKGROUND, DARK_TEXT, contrast, drawn_dark, luminance, mirrored
from d2lmini.figure_alt import describe_figure, set_alt

matplotlib.use("Agg")
NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _png(fig, tight=False):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=50, bbox_inches="tight" if tight else None)
    return buffer.getvalue()


def _pixels(png):
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


# --- alt text --------------------------------------------------------------------------------------

def test_a_heatmap_grid_names_its_panels_axes_and_shared_scale():
    weights = torch.tensor([[[0.5, 0.5], [0.1, 0.9], [1.0, 0.0]]] * 2)
    fig = d2l.show_heatmaps(weights, xlabel="Keys", ylabel="Queries", titles=["left", "right"])
    text = plotting.alt_text(fig)
    assert text.startswith("Figure of 2 panels. Panel 1, “left”: a heatmap of 3 × 2 cells")
    assert "x axis “Keys”, y axis “Queries”" in text
    assert "Colour scale from 0 to 1, shared by every panel." in text
    assert text.endswith("A text summary of the weights follows the figure.")  # the printed summary


def test_curves_are_named_from_the_legend_with_where_they_start_and_end():
    fig = d2l.plt.figure()
    d2l.plot(torch.arange(5.0), [torch.tensor([3.0, 2.0, 1.0, 0.5, 0.25]), torch.ones(5)],
             xlabel="epoch", ylabel="loss", legend=["train", "held out"])
    text = describe_figure(fig)
    assert "2 curves: “train” from 3 to 0.25 (lowest 0.25, highest 3); “held out” from 1 to 1" in text
    assert "(x axis “epoch”, y axis “loss”)" in text
    d2l.plt.close(fig)


def test_word_tick_labels_are_read_out_and_numbers_are_not():
    fig, ax = d2l.plt.subplots()
    ax.imshow(np.eye(3))
    ax.set_xticks(range(3), ["the", "cat", "sat"])
    ax.set_title("layer 2, head 5")
    text = describe_figure(fig)
    assert text == "Figure: “layer 2, head 5”: a heatmap of 3 × 3 cells (x axis labelled the, cat, sat)."
    d2l.plt.close(fig)


def test_set_alt_overrides_the_description_and_checks_its_text():
    fig = d2l.plt.figure()
    assert describe_figure(set_alt(fig, "  A   red\nsquare. ")) == "A red square."
    with pytest.raises(TypeError, match="text must be a str .* got int"):
        set_alt(fig, 3)
    with pytest.raises(ValueError, match="text must say what the figure shows; got an empty string"):
        set_alt(fig, "  ")
    d2l.plt.close(fig)


@pytest.mark.parametrize("draw", [diagrams.draw_queries_keys_values, diagrams.draw_additive_scorer,
                                  diagrams.draw_causal_mask, diagrams.draw_multihead_split_merge])
def test_every_diagram_says_what_it_shows(draw):
    text = describe_figure(draw())
    assert len(text.split()) >= 40 and not text.startswith("Figure")  # its own words, not the generic ones


def test_the_first_diagram_reads_out_its_numbers():
    scores, weights = diagrams._example_weights()
    text = describe_figure(diagrams.draw_queries_keys_values())
    assert f"k2 = 1: score {float(scores[1]):.2f}, weight {float(weights[1]):.2f}, value 2" in text


# --- the dark page's picture -----------------------------------------------------------------------

def test_contrast_and_luminance_follow_wcag():
    assert contrast("black", "white") == pytest.approx(21.0)
    assert luminance("#777777") == pytest.approx(0.184, abs=1e-3)  # WCAG's worked grey
    assert contrast(DARK_TEXT, DARK_BACKGROUND) >= 7  # the theme's own pair
    assert mirrored("white")[:3] == to_rgba(DARK_BACKGROUND)[:3]
    assert mirrored((0, 0, 0, 0.5)) == (*to_rgba(DARK_TEXT)[:3], 0.5)  # alpha kept


def test_a_dark_picture_keeps_the_colour_map_and_makes_text_and_axes_readable():
    fig, ax = d2l.plt.subplots()
    cells = np.linspace(0, 1, 12).reshape(3, 4)
    image = ax.imshow(cells, cmap="viridis")
    on_cell = ax.text(0, 0, "0.00", color="white", ha="center", va="center")
    label = ax.set_xlabel("keys")
    boxed = ax.text(2, 1, "pale box", bbox={"facecolor": "#cfe2ff"})
    fig.colorbar(image)
    light = _png(fig)
    with drawn_dark(fig):
        assert to_rgba(fig.get_facecolor())[:3] == to_rgba(DARK_BACKGROUND)[:3]
        assert contrast(label.get_color(), DARK_BACKGROUND) >= 4.5
        assert contrast(ax.spines["left"].get_edgecolor(), DARK_BACKGROUND) >= 3
        assert on_cell.get_color() == "white"  # chosen for its cell
        assert to_rgba(boxed.get_color()) == to_rgba("black")  # already readable on its pale box
        assert image.get_cmap().name == "viridis" and np.array_equal(image.get_array(), cells)
        dark = _png(fig)
    assert _png(fig) == light  # every colour put back
    light_pixels, dark_pixels = _pixels(light), _pixels(dark)
    assert light_pixels.shape == dark_pixels.shape
    assert (light_pixels[5, 5] > 240).all() and (dark_pixels[5, 5] < 40).all()  # the corner: page colour
    d2l.plt.close(fig)


def test_text_in_a_pale_box_stays_dark_and_text_on_the_page_turns_light():
    fig = diagrams.draw_queries_keys_values()
    texts = {text.get_text(): text for text in fig.axes[0].texts}
    with drawn_dark(fig):
        assert to_rgba(texts["$k_1$ = 0"].get_color()) == to_rgba("black")  # in its pale key box
        assert contrast(texts["scores"].get_color(), DARK_BACKGROUND) >= 4.5  # on the page


def _shown(fig):
    """The PNG and metadata that Jupyter's formatter would store for ``fig``."""
    def draw(figure):
        return base64.b64encode(_png(figure, tight=True)).decode(), {"width": 10, "height": 5}

    return plotting._with_alt_text(draw, fig)


@pytest.mark.parametrize("make", [diagrams.draw_additive_scorer, lambda: seq2seq.show_attention(
    *(lambda batch: (batch.alignment.float(), batch))(seq2seq.make_batch("reverse", 4, generator=torch.manual_seed(0))),
    titles=list("abcd"))], ids=["additive scorer", "show_attention"])
def test_a_figure_drawn_for_both_pages_has_one_size(make):
    """Some figures' layout moves over their first drawings (the additive scorer's note widens it;
    show_attention's constrained layout settles on the third): with DARK_FIGURES the figure is drawn
    until it settles, and both pictures match."""
    fig = make()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(plotting.DARK_FIGURES, "1")
        data, metadata = _shown(fig)
    light, dark = (_pixels(base64.b64decode(picture)) for picture in (data, metadata["dark"]))
    assert light.shape == dark.shape


def test_a_shown_figure_carries_its_alt_text_and_its_dark_picture_only_when_asked(monkeypatch):
    fig = diagrams.draw_causal_mask()
    monkeypatch.delenv(plotting.DARK_FIGURES, raising=False)
    _, metadata = _shown(fig)
    assert metadata == {"width": 10, "height": 5, "alt": describe_figure(fig)}
    monkeypatch.setenv(plotting.DARK_FIGURES, "1")
    data, metadata = _shown(fig)
    dark = base64.b64decode(metadata["dark"])
    assert dark != base64.b64decode(data)
    assert _pixels(dark).shape == _pixels(base64.b64decode(data)).shape


# --- the stored chapters ---------------------------------------------------------------------------

def _figures(path):
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data and "application/vnd.jupyter.widget-view+json" not in data:
                yield output


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem[:2])
def test_every_stored_figure_has_a_real_alt_text_and_a_dark_picture_of_its_size(path):
    figures = list(_figures(path))
    assert figures, f"{path.name} stores no figure"
    for output in figures:
        metadata = output["metadata"]["image/png"]
        alt = metadata.get("alt", "")
        assert len(alt.split()) >= 5, f"{path.name}: a figure's alt text is too short to say what it shows: {alt!r}"
        assert not re.search(r"(^|/)[\w.-]+\.(png|jpe?g|svg)\b|_images/", alt), f"{path.name}: a file as alt: {alt!r}"
        light = _pixels(base64.b64decode(output["data"]["image/png"]))
        dark = _pixels(base64.b64decode(metadata["dark"]))
        assert light.shape == dark.shape, f"{path.name}: the dark picture's size differs: {light.shape} {dark.shape}"
        assert dark.mean() < light.mean(), f"{path.name}: the dark picture is not darker: {alt[:60]}"
