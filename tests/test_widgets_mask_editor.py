"""The mask editor: a click toggles one cell, presets are attention_mask's masks, the weights are masked_softmax's."""

import dataclasses

import numpy as np
import pytest
import torch

from d2lmini.masking import attention_mask, masked_softmax
from d2lmini.widgets import Explorer, MaskEditor, explore_mask_editor
from d2lmini.widgets.mask_editor import CUSTOM, PRESETS, SIZE, mask_of


@pytest.fixture
def explorer():
    return explore_mask_editor()


def grid(explorer):
    """The mask the buttons show, (queries, keys)."""
    return torch.tensor([[explorer.controls[f"cell_{i}_{j}"].value for j in range(SIZE)] for i in range(SIZE)])


def drawn(explorer):
    """The heatmap's masked array: (weights, hidden cells)."""
    array = explorer.view.heatmap.get_array()
    return torch.from_numpy(np.ma.getdata(array)).reshape(SIZE, SIZE), np.ma.getmaskarray(array).reshape(SIZE, SIZE)


def assert_draws_masked_softmax(explorer):
    mask = grid(explorer)
    assert torch.equal(mask_of(explorer.settings), mask) and torch.equal(explorer.result.mask, mask[None])
    expected = masked_softmax(explorer.declaration.scores, mask=mask[None])[0]  # (queries, keys)
    weights, hidden = drawn(explorer)
    torch.testing.assert_close(explorer.weights[0], expected)
    torch.testing.assert_close(weights, expected)
    np.testing.assert_array_equal(hidden, ~mask.numpy())


def count_redraws(explorer):
    """A list that grows by one on every redraw (``refresh``) of ``explorer``."""
    redraws, refresh = [], explorer.refresh

    def counted():
        redraws.append(explorer.settings)
        refresh()

    explorer.refresh = counted
    return redraws


@pytest.mark.parametrize("cell", [(0, 5), (3, 1), (5, 5), (2, 0)])
def test_a_click_toggles_exactly_that_cell_and_redraws_once(explorer, cell):
    i, j = cell
    before = grid(explorer)
    picture = explorer.image.value
    redraws = count_redraws(explorer)
    button = explorer.controls[f"cell_{i}_{j}"]
    assert button.tooltip == f"query {i}, key {j}"
    button.value = not button.value
    assert explorer.last_error is None
    after = grid(explorer)
    assert (after != before).nonzero().tolist() == [[i, j]]
    assert button.description == ("✓" if button.value else "")
    assert len(redraws) == 1 and explorer.image.value != picture
    assert explorer.controls["preset"].value == CUSTOM
    assert_draws_masked_softmax(explorer)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_is_attention_masks_mask_and_redraws_once(preset):
    explorer = explore_mask_editor(preset=CUSTOM)  # all True, so that every preset but "no mask" changes it
    redraws = count_redraws(explorer)
    explorer.controls["preset"].value = preset
    assert explorer.last_error is None
    valid_lens, causal = PRESETS[preset]
    expected = attention_mask(valid_lens, 1, SIZE, SIZE, causal=causal)
    expected = torch.ones(SIZE, SIZE, dtype=torch.bool) if expected is None else expected.expand(1, SIZE, SIZE)[0]
    assert torch.equal(grid(explorer), expected)
    assert [[explorer.controls[f"cell_{i}_{j}"].description == "✓" for j in range(SIZE)] for i in range(SIZE)
            ] == expected.tolist()
    assert len(redraws) == 1  # not one per button
    assert_draws_masked_softmax(explorer)


def test_the_presets_are_the_ones_the_chapter_names():
    masks = {name: explore_mask_editor(preset=name).result.mask[0] for name in PRESETS}
    assert masks["no mask"].all()
    assert masks["padding: 4 valid keys"].tolist() == [[True] * 4 + [False] * 2] * SIZE
    assert torch.equal(masks["causal"], torch.ones(SIZE, SIZE, dtype=torch.bool).tril())
    assert torch.equal(masks["causal + padding: 4 valid keys"], masks["causal"] & masks["padding: 4 valid keys"])
    assert masks["a whole row masked: query 2"].all(dim=1).tolist() == [True, True, False, True, True, True]
    assert not masks["a whole row masked: query 2"][2].any()


def test_a_fully_masked_row_draws_zeros_and_is_named_in_the_caption(explorer):
    assert "every query sees at least one key" in explorer.caption_text
    explorer.controls["preset"].value = "a whole row masked: query 2"
    weights, hidden = drawn(explorer)
    assert torch.equal(weights[2], torch.zeros(SIZE)) and hidden[2].all()
    assert not weights.isnan().any()
    assert explorer.caption_text.startswith("6 of 36 cells masked; fully masked: query 2,")
    assert "all-zero" in explorer.caption_text
    for j in range(SIZE):  # mask row 4 by hand too
        explorer.controls[f"cell_4_{j}"].value = False
    assert explorer.caption_text.startswith("12 of 36 cells masked; fully masked: queries 2, 4,")
    assert torch.equal(drawn(explorer)[0][4], torch.zeros(SIZE))
    explorer.controls["cell_2_3"].value = True  # one key back: query 2 puts all its weight there
    weights, _ = drawn(explorer)
    assert weights[2].tolist() == [0, 0, 0, 1, 0, 0]
    assert "fully masked: query 4," in explorer.caption_text
    assert_draws_masked_softmax(explorer)


def test_picking_the_preset_again_after_a_click_restores_it(explorer):
    start = grid(explorer)
    explorer.controls["cell_0_5"].value = True
    assert explorer.controls["preset"].value == CUSTOM
    explorer.controls["preset"].value = "causal + padding: 4 valid keys"
    assert torch.equal(grid(explorer), start)
    assert repr(explorer) == "MaskEditorExplorer(preset='causal + padding: 4 valid keys')"


def test_anti_causal_by_hand_lets_the_first_query_see_the_future(explorer):
    explorer.controls["preset"].value = "causal"
    for i in range(SIZE):
        for j in range(SIZE):
            explorer.controls[f"cell_{i}_{j}"].value = j >= i
    assert torch.equal(explorer.result.mask[0], torch.ones(SIZE, SIZE, dtype=torch.bool).triu())
    assert explorer.weights[0, SIZE - 1].tolist() == [0] * (SIZE - 1) + [1]  # the last query sees itself alone
    assert_draws_masked_softmax(explorer)


def test_the_colour_scale_keeps_the_grid(explorer):
    before = grid(explorer)
    explorer.controls["colour_scale"].value = "fit"
    assert explorer.last_error is None and torch.equal(grid(explorer), before)
    assert explorer.controls["preset"].value != CUSTOM


def test_the_grid_sits_beside_the_picture_with_its_legend(explorer):
    row = explorer.children[2]
    [editor], picture = (box.children for box in row.children)
    assert explorer.image in picture and explorer.caption in picture
    label, grid, legend = editor.children
    assert label.value == "mask (rows: queries 0-5, columns: keys 0-5)"
    assert list(grid.children) == [explorer.controls[f"cell_{i}_{j}"] for i in range(SIZE) for j in range(SIZE)]
    assert "may attend" in legend.value and "all-zero weights" in legend.value


def test_another_seed_draws_other_scores():
    assert not torch.equal(explore_mask_editor(seed=1).declaration.scores, explore_mask_editor().declaration.scores)
    explorer = explore_mask_editor()
    assert isinstance(explorer, Explorer) and isinstance(explorer.declaration, MaskEditor)


def test_the_computation_alone_follows_the_cells_and_the_preset():
    """The declaration without its shell: a preset sets every cell, a cell sets the preset to "edited by hand"."""
    declaration = MaskEditor()
    settings = declaration.adjust(declaration.Settings(preset="causal"), "preset")
    assert torch.equal(mask_of(settings), torch.ones(SIZE, SIZE, dtype=torch.bool).tril())
    clicked = declaration.adjust(dataclasses.replace(settings, cell_0_5=True), "cell_0_5")
    assert clicked.preset == CUSTOM and mask_of(clicked)[0].tolist() == [True] + [False] * 4 + [True]
    assert declaration.adjust(dataclasses.replace(clicked, preset=CUSTOM), "preset") == clicked
    result = declaration.compute(clicked)
    torch.testing.assert_close(result.weights, masked_softmax(declaration.scores, mask=mask_of(clicked)[None]))
    assert result.caption == "14 of 36 cells masked; every query sees at least one key"
    assert torch.equal(declaration.compute(clicked).weights, result.weights)  # pure: nothing kept between calls


@pytest.mark.parametrize("call, error, fragments", [
    (lambda: explore_mask_editor(preset="causal plus padding"), ValueError, ["preset must be one of", "'causal'",
                                                                              "'causal plus padding'"]),
    (lambda: explore_mask_editor(seed=-1), ValueError, ["seed must be between", "got -1"]),
    (lambda: explore_mask_editor(seed=1.5), TypeError, ["seed must be an int", "float 1.5"]),
])
def test_bad_arguments_are_named(call, error, fragments):
    with pytest.raises(error) as info:
        call()
    for fragment in fragments:
        assert fragment in str(info.value)
