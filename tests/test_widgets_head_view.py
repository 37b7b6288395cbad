"""The head-view explorer draws the model's own attention maps, for every control, and stays usable."""

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from d2lmini.pretrained import CachedMiniLM, RoundedMiniLM
from d2lmini.widgets import HeadView, explore_head_view
from d2lmini.widgets.head_view import LINE_FLOOR, MAX_TOKENS, figure_size

CACHE = CachedMiniLM()
TIRED = CACHE.sentences[0]


@pytest.fixture(scope="module")
def explorer():
    return explore_head_view(CACHE)


def drawn(explorer):
    """What the figure shows now: the 12 thumbnails, the big heatmap, the lines' weights, the framed head."""
    _, view = explorer.views[explorer.controls["sentence"].value]
    assert view is explorer.view
    return {"thumbnails": np.stack([np.asarray(t.get_array()) for t in view.thumbnails]),
            "heatmap": np.asarray(view.heatmap.get_array()),
            "lines": np.asarray(view.lines.get_array()),
            "framed": [h for h, frame in enumerate(view.frames) if frame.get_visible()],
            "title": view.map_title.get_text()}


def test_a_fresh_explorer_has_a_short_fixed_text_form_and_leaks_nothing():
    plt.close("all")
    torch.manual_seed(123)
    expected_random = torch.rand(3)
    torch.manual_seed(123)
    explorer = explore_head_view(CACHE)
    torch.testing.assert_close(torch.rand(3), expected_random)
    bundle, _ = explorer._repr_mimebundle_()
    assert bundle["text/plain"] == repr(explorer) == (
        "HeadViewExplorer(sentence=\"The animal didn't cross the street because it was too tired.\", layer=3, head=1)")
    assert set(bundle) == {"text/plain", "application/vnd.jupyter.widget-view+json", "image/png"}
    assert plt.get_fignums() == []
    assert bytes(explorer.image.value).startswith(b"\x89PNG\r\n\x1a\n")


def test_every_layer_and_head_draws_the_models_own_weights(explorer):
    maps = CACHE.attention(TIRED)  # (layers, heads, T, T)
    pictures = set()
    for layer in range(6):
        explorer.controls["layer"].value = layer
        for head in (0, 5, 11):
            explorer.controls["head"].value = head
            assert explorer.last_error is None
            shown = drawn(explorer)
            np.testing.assert_array_equal(shown["thumbnails"], maps[layer].numpy())
            np.testing.assert_array_equal(shown["heatmap"], maps[layer, head].numpy())
            assert shown["framed"] == [head] and shown["title"] == f"layer {layer}, head {head}"
            torch.testing.assert_close(explorer.weights, maps[layer])
            pictures.add(bytes(explorer.image.value))
    assert len(pictures) == 18  # every change changed the picture


def test_the_lines_carry_the_weights_of_the_head_above_the_floor(explorer):
    explorer.controls["layer"].value, explorer.controls["head"].value = 0, 2  # the previous-token head
    head_map = CACHE.attention(TIRED)[0, 2]
    _, view = explorer.views[TIRED]
    kept = head_map.flatten() >= LINE_FLOOR
    np.testing.assert_array_equal(drawn(explorer)["lines"], head_map.flatten()[kept].numpy())
    np.testing.assert_allclose(view.lines.get_linewidths(), 4 * head_map.flatten()[kept].numpy())
    segments = view.lines.get_segments()
    rows, cols = np.nonzero(head_map.numpy() >= LINE_FLOOR)
    assert [(s[0][1], s[1][1]) for s in segments] == list(zip(rows, cols))  # from query i on the left to key j


def test_a_query_keeps_that_tokens_lines_only(explorer):
    tokens = CACHE.tokenize(TIRED)
    it = tokens.index("it")
    explorer.controls["layer"].value, explorer.controls["head"].value = 3, 1
    explorer.controls["query"].value = it
    lines = explorer.views[TIRED][1].lines.get_segments()
    assert {segment[0][1] for segment in lines} == {it}  # every line leaves "it"
    assert "token 10 ('it')" in explorer.caption_text
    explorer.controls["query"].value = "all"
    assert len({segment[0][1] for segment in explorer.views[TIRED][1].lines.get_segments()}) == len(tokens)


def test_a_new_sentence_gets_its_own_figure_with_its_tokens_and_resets_the_query(explorer):
    explorer.controls["query"].value = 3
    fox = CACHE.sentences[2]
    explorer.controls["sentence"].value = fox
    assert explorer.last_error is None and explorer.result.tokens == CACHE.tokenize(fox)
    assert explorer.controls["query"].value == "all"
    assert [label for label, _ in explorer.controls["query"].options][1:3] == ["0: [CLS]", "1: the"]
    ax = explorer.views[fox][1].heatmap.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == CACHE.tokenize(fox)
    np.testing.assert_array_equal(drawn(explorer)["heatmap"], CACHE.attention(fox)[explorer.controls["layer"].value,
                                                                                 explorer.controls["head"].value])
    explorer.controls["sentence"].value = TIRED


@pytest.mark.parametrize("num_tokens", range(2, MAX_TOKENS + 1))
def test_every_picture_is_a_whole_number_of_css_pixels(num_tokens):
    width, height = figure_size(num_tokens)
    for inches in (width, height):
        assert abs(inches * 80 - round(inches * 80)) < 1e-9  # widgets.DPI: the static PNG is exactly 2x


def test_without_the_model_the_sentence_is_a_menu_of_the_cached_examples(explorer):
    box = explorer.controls["sentence"]
    assert isinstance(box, ipywidgets.Dropdown) and [value for _, value in box.options] == list(CACHE.sentences)
    assert box.layout.width == "95%"  # wide enough for a whole sentence


def test_each_sentences_attention_is_asked_of_the_model_once(monkeypatch):
    calls = []
    real = CACHE.attention

    def counted(text):
        calls.append(text)
        return real(text)

    monkeypatch.setattr(CACHE, "attention", counted)
    explorer = explore_head_view(CACHE)
    for layer in range(6):
        explorer.controls["layer"].value = layer
    explorer.controls["sentence"].value = CACHE.sentences[1]
    explorer.controls["sentence"].value = TIRED
    explorer.controls["head"].value = 7
    assert sorted(calls) == sorted([TIRED, CACHE.sentences[1]])


def test_the_fitted_colour_scale_follows_the_layer(explorer):
    explorer.controls["layer"].value, explorer.controls["head"].value = 3, 1
    explorer.controls["colour_scale"].value = "fit"
    assert explorer.caption_text.endswith("colours 0 to 1")  # layer 3 has weights near 1
    explorer.controls["colour_scale"].value = "fixed"


@pytest.mark.parametrize("kwargs, error, message", [
    ({"sentence": "Not cached."}, KeyError, r"'Not cached.' is not among the cached sentences"),
    ({"layer": 6}, ValueError, r"layer must be between 0 and 5, got 6"),
    ({"head": -1}, ValueError, r"head must be between 0 and 11, got -1"),
    ({"head": 1.5}, TypeError, r"head must be an int, got float 1.5"),
    ({"query": 99}, ValueError, r"query must be one of \['all', 0, 1,"),
], ids=["uncached sentence", "layer", "head", "head type", "query"])
def test_bad_arguments_get_a_clear_error(kwargs, error, message):
    with pytest.raises(error, match=message):
        HeadView(CACHE).checked_settings(**kwargs)
    if "query" not in kwargs:  # explore_head_view checks its arguments the same way, before any widget
        with pytest.raises(error, match=message):
            explore_head_view(CACHE, **kwargs)


def test_the_query_is_checked_against_the_sentences_own_tokens():
    declaration = HeadView(CACHE)
    last = len(CACHE.tokenize(TIRED)) - 1
    assert declaration.checked_settings(sentence=TIRED, query=last).query == last
    with pytest.raises(ValueError, match=rf"query must be one of \['all', 0, 1, .*, {last}\], got {last + 1}$"):
        declaration.checked_settings(sentence=TIRED, query=last + 1)


def test_with_the_model_any_sentence_can_be_typed_and_errors_show_in_the_explorer(minilm):
    explorer = explore_head_view(RoundedMiniLM(minilm))
    box = explorer.controls["sentence"]
    assert isinstance(box, ipywidgets.Combobox) and not box.continuous_update
    box.value = "A sentence of my own."
    assert explorer.last_error is None
    assert explorer.result.tokens == ["[CLS]", "a", "sentence", "of", "my", "own", ".", "[SEP]"]
    np.testing.assert_array_equal(drawn(explorer)["heatmap"], RoundedMiniLM(minilm).attention(box.value)[3, 1].numpy())
    before = bytes(explorer.image.value)
    box.value = "word " * MAX_TOKENS
    assert isinstance(explorer.last_error, ValueError) and "at most 40" in explorer.message.value
    assert bytes(explorer.image.value) == before  # the previous picture stays, and the query menu with it
    assert len(explorer.controls["query"].options) == 1 + len(explorer.result.tokens)
    box.value = TIRED
    assert explorer.last_error is None and explorer.message.value == ""
