"""Chapter 06's explorer draws the online softmax that d2lmini.blockwise_attention computes."""

import dataclasses

import pytest
import torch
import torch.nn.functional as F

import d2lmini as d2l
from d2lmini.widgets import OnlineSoftmax, explore_online_softmax
from d2lmini.widgets.online_softmax import BLOCK_SIZES, NUM_KEYS


@pytest.fixture(scope="module")
def declaration():
    return OnlineSoftmax()


@pytest.mark.parametrize("block_size", BLOCK_SIZES)
def test_every_step_draws_what_blockwise_attention_gives_over_the_keys_seen(declaration, block_size):
    q, k, v = declaration.query, declaration.keys, declaration.values
    for step in range(1, NUM_KEYS // block_size + 1):
        result = declaration.compute(declaration.Settings(block_size=block_size, step=step))
        seen = step * block_size
        # After each block, o / ℓ is the attention over the keys seen up to that block.
        for i, keys_seen in enumerate(result.keys_seen.tolist()):
            expected = d2l.blockwise_attention(q, k[:, :keys_seen], v[:, :keys_seen], block_size)[0, 0]
            torch.testing.assert_close(result.partial[i], expected)
        # The weights drawn are the softmax over the keys seen; the others are hidden.
        seen_weights = torch.softmax(declaration.scores[:seen], dim=-1)
        torch.testing.assert_close(result.weights[0, :seen], seen_weights)
        assert result.mask[0].tolist() == [j < seen for j in range(NUM_KEYS)]
        # m is the largest score seen; ℓ the sum of exp(s - m) over the keys seen.
        torch.testing.assert_close(result.maxima[-1], declaration.scores[:seen].max())
        torch.testing.assert_close(result.totals[-1], torch.exp(declaration.scores[:seen] - result.maxima[-1]).sum())


@pytest.mark.parametrize("block_size", BLOCK_SIZES)
def test_the_last_partial_output_is_the_explicit_one(declaration, block_size):
    result = declaration.compute(declaration.Settings(block_size=block_size, step=NUM_KEYS // block_size))
    q, k, v = declaration.query, declaration.keys, declaration.values
    explicit = d2l.DotProductAttention(0.0)(q, k, v)[0, 0]
    torch.testing.assert_close(result.partial[-1], explicit)
    torch.testing.assert_close(result.exact, explicit)
    torch.testing.assert_close(result.exact, F.scaled_dot_product_attention(q, k, v)[0, 0])
    torch.testing.assert_close(result.weights, torch.softmax(declaration.scores, dim=-1)[None])


def test_the_explorer_shows_the_explicit_paths_weights_once_every_block_is_seen():
    explorer = explore_online_softmax(block_size=8, step=2)
    declaration = explorer.declaration
    attention = d2l.DotProductAttention(0.0)
    attention(declaration.query, declaration.keys, declaration.values)
    torch.testing.assert_close(explorer.weights, attention.attention_weights[0])
    explorer.close()


def test_step_zero_shows_nothing_seen(declaration):
    result = declaration.compute(declaration.Settings(block_size=4, step=0))
    assert not result.mask.any() and len(result.partial) == 0
    assert "0 of 4 blocks seen" in result.caption


def test_the_step_offers_the_blocks_of_the_block_size_and_follows_it(declaration):
    assert declaration.choices(declaration.Settings(block_size=4))["step"] == [0, 1, 2, 3, 4]
    settings = dataclasses.replace(declaration.Settings(block_size=1, step=12), block_size=8)
    assert declaration.adjust(settings, "block_size").step == 2
    assert len(list(declaration.page_states({"block_size": BLOCK_SIZES, "step": range(NUM_KEYS + 1)}))) == 36
    with pytest.raises(ValueError, match="step must be one of"):
        explore_online_softmax(block_size=16, step=2)
    with pytest.raises(ValueError, match="block_size must be one of"):
        explore_online_softmax(block_size=3)


def test_the_caption_agrees_in_number_with_the_blocks(declaration):
    """"1 of 1 block seen" with one block (a block of all 16 keys), "blocks" with several."""
    caption = declaration.compute(declaration.checked_settings(block_size=16, step=1)).caption
    assert caption.startswith("block size 16: 1 of 1 block seen (16 of 16 keys), m = ")
    assert declaration.compute(declaration.checked_settings(block_size=16, step=0)).caption == \
        "block size 16: 0 of 1 block seen, nothing computed yet"
    assert declaration.compute(declaration.checked_settings(block_size=4, step=2)).caption.startswith(
        "block size 4: 2 of 4 blocks seen (8 of 16 keys), m = ")


def test_the_summary_calls_the_keys_not_visited_not_seen_yet_never_masked(declaration):
    """At 0 blocks seen every key is unvisited, not masked: the summary, and the picture's legend, say so."""
    at_start = declaration.describe(declaration.compute(declaration.checked_settings(block_size=4, step=0)))
    assert at_start == ("1 query × 16 keys, keys 0-15 not seen yet (no key seen yet by query 0). "
                        "Query 0 attends to no key (all weights 0).")
    halfway = declaration.describe(declaration.compute(declaration.checked_settings(block_size=4, step=2)))
    assert halfway.startswith("1 query × 16 keys, keys 8-15 not seen yet. Query 0 attends mostly to keys ")
    every_key = declaration.describe(declaration.compute(declaration.checked_settings(block_size=16, step=1)))
    assert every_key.startswith("1 query × 16 keys. Query 0 attends mostly to keys ")
    assert "masked" not in at_start + halfway + every_key
    explorer = explore_online_softmax(block_size=4, step=0)
    legend = [text.get_text() for legend in explorer.figure.legends for text in legend.texts]
    assert "not seen yet" in legend and "masked" not in legend
    explorer.close()
