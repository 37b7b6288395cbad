"""Every public function answers a mistake with a message a learner can act on."""

import re

import pytest
import torch

import d2lmini as d2l
from d2lmini import diagrams, seq2seq, widgets
from d2lmini.pretrained.wordpiece import WordPieceTokenizer

X3 = torch.zeros(2, 3, 4)


def additive(**call):
    def run():
        d2l.AdditiveAttention(4, 0.0, **call.pop("init", {}))(**call)
    return run


def dot(**call):
    return lambda: d2l.DotProductAttention(0.0)(**call)


def mha(**call):
    def run():
        d2l.MultiHeadAttention(8, 2, 0.0, **call.pop("init", {}))(**call)
    return run


def qkv(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 6), **extra):
    return dict(queries=torch.zeros(q), keys=torch.zeros(k), values=torch.zeros(v), **extra)


CASES = [
    # (case id, call, error type, fragments the message must contain)
    ("scores not a tensor", lambda: d2l.masked_softmax([[1.0, 2.0]], None), TypeError, ["X", "list"]),
    ("integer scores", lambda: d2l.masked_softmax(torch.zeros(2, 3, dtype=torch.long), None), TypeError, ["X", "floating"]),
    ("2-D scores with lengths", lambda: d2l.masked_softmax(torch.zeros(3, 4), torch.tensor([1, 2, 3])), ValueError, ["X", "3-D", "(3, 4)"]),
    ("1-D lengths, wrong batch", lambda: d2l.masked_softmax(X3, torch.tensor([1, 2, 3])), ValueError, ["valid_lens", "(3,)", "(2,) or (2, 3)"]),
    ("2-D lengths, wrong shape", lambda: d2l.masked_softmax(X3, torch.ones(2, 4)), ValueError, ["valid_lens", "(2, 4)", "(2, 3)"]),
    ("3-D lengths", lambda: d2l.masked_softmax(X3, torch.ones(2, 3, 1)), ValueError, ["valid_lens", "1-D or 2-D", "(2, 3, 1)"]),
    ("negative lengths", lambda: d2l.masked_softmax(X3, torch.tensor([1, -1])), ValueError, ["valid_lens", "non-negative", "-1"]),
    ("NaN lengths", lambda: d2l.masked_softmax(X3, torch.tensor([1.0, float("nan")])), ValueError, ["valid_lens", "NaN"]),
    ("boolean lengths", lambda: d2l.masked_softmax(X3, torch.tensor([True, False])), TypeError, ["valid_lens", "bool"]),
    ("lengths as a string", lambda: d2l.masked_softmax(X3, "2"), TypeError, ["valid_lens", "str"]),
    ("sequence_mask on 1-D X", lambda: d2l.sequence_mask(torch.zeros(3), torch.tensor([1])), ValueError, ["X", "(3,)"]),
    ("sequence_mask, fill overflows float16", lambda: d2l.sequence_mask(torch.zeros(2, 3, dtype=torch.float16), torch.tensor([1, 2]), value=-1e6), ValueError, ["value=-1000000.0", "torch.float16", "65504"]),
    ("sequence_mask, wrong batch", lambda: d2l.sequence_mask(torch.zeros(2, 3), torch.tensor([1, 2, 3])), ValueError, ["valid_len", "(2,)", "(3,)"]),
    ("dot product, 2-D queries", dot(**qkv(q=(3, 4))), ValueError, ["queries", "3-D", "(3, 4)"]),
    ("dot product, batch mismatch", dot(**qkv(q=(3, 3, 4))), ValueError, ["batch", "(3, 3, 4)", "(2, 5, 4)"]),
    ("dot product, keys vs values", dot(**qkv(v=(2, 4, 6))), ValueError, ["keys", "values", "(2, 5, 4)", "(2, 4, 6)"]),
    ("dot product, query vs key size", dot(**qkv(k=(2, 5, 3), v=(2, 5, 3))), ValueError, ["query and key sizes", "(2, 3, 4)", "(2, 5, 3)"]),
    ("dot product, numpy values", lambda: d2l.DotProductAttention(0.0)(X3, X3, X3.numpy()), TypeError, ["values", "ndarray"]),
    ("dot product, lengths of wrong batch", dot(**qkv(valid_lens=torch.tensor([1, 2, 3]))), ValueError, ["valid_lens", "(3,)"]),
    ("additive, wrong query size", additive(init={"query_size": 5, "key_size": 4}, **qkv()), ValueError, ["queries", "query_size=5", "(2, 3, 4)"]),
    ("additive, wrong key size", additive(init={"query_size": 4, "key_size": 3}, **qkv()), ValueError, ["keys", "key_size=3", "(2, 5, 4)"]),
    ("additive, non-int hiddens", lambda: d2l.AdditiveAttention(4.5, 0.1), TypeError, ["num_hiddens", "float"]),
    ("additive, bad dropout", lambda: d2l.AdditiveAttention(4, 1.5), ValueError, ["dropout", "[0, 1)", "1.5"]),
    ("heads do not divide", lambda: d2l.MultiHeadAttention(10, 3, 0.0), ValueError, ["num_hiddens (10)", "num_heads (3)", "divisible"]),
    ("zero heads", lambda: d2l.MultiHeadAttention(8, 0, 0.0), ValueError, ["num_heads", "positive"]),
    ("multi-head, wrong value size", mha(init={"value_size": 7}, **qkv()), ValueError, ["values", "value_size=7", "(2, 5, 6)"]),
    ("multi-head, 2-D lengths of wrong shape", mha(**qkv(valid_lens=torch.ones(2, 5))), ValueError, ["valid_lens", "(2, 5)", "(2, 3)"]),
    ("multi-head, 3-D lengths", mha(**qkv(valid_lens=torch.ones(2, 3, 1))), ValueError, ["valid_lens", "1-D or 2-D"]),
    ("kernel name unknown", lambda: d2l.nadaraya_watson(torch.zeros(2), torch.zeros(3), torch.zeros(3), "gauss"), ValueError, ["kernel", "'gauss'", "gaussian"]),
    ("kernel not a name", lambda: d2l.nadaraya_watson(torch.zeros(2), torch.zeros(3), torch.zeros(3), 3), TypeError, ["kernel", "int"]),
    ("kernel returns a list", lambda: d2l.nadaraya_watson(torch.zeros(2), torch.zeros(3), torch.zeros(3), lambda u: [1.0]), ValueError, ["kernel", "(2, 3)", "list"]),
    ("kernel returns negatives", lambda: d2l.nadaraya_watson(torch.zeros(2), torch.zeros(3), torch.zeros(3), lambda u: -torch.ones_like(u)), ValueError, ["kernel", "non-negative"]),
    ("kernel keys vs values", lambda: d2l.nadaraya_watson(torch.zeros(2), torch.zeros(3), torch.zeros(4)), ValueError, ["keys", "values", "(3,)", "(4,)"]),
    ("kernel 2-D keys, wrong rows", lambda: d2l.nadaraya_watson(torch.zeros(2), torch.zeros(3, 4), torch.zeros(3, 4)), ValueError, ["keys", "(3, 4)", "queries", "(2,)"]),
    ("kernel sigma zero", lambda: d2l.nadaraya_watson(torch.zeros(2), torch.zeros(3), torch.zeros(3), sigma=0.0), ValueError, ["sigma", "positive"]),
    ("learnable width negative", lambda: d2l.NWKernelRegression(sigma=-1.0), ValueError, ["sigma", "-1.0"]),
    ("leave-one-out single point", lambda: d2l.leave_one_out(torch.zeros(1), torch.zeros(1)), ValueError, ["at least 2"]),
    ("heatmap of 5-D input", lambda: d2l.show_heatmaps(torch.zeros(1, 1, 1, 2, 2), "Keys", "Queries"), ValueError, ["matrices", "(1, 1, 1, 2, 2)"]),
    ("heatmap titles per column", lambda: d2l.show_heatmaps(torch.zeros(2, 2, 2), "Keys", "Queries", titles=["a"]), ValueError, ["titles", "2"]),
    ("heatmap of text", lambda: d2l.show_heatmaps("weights", "Keys", "Queries"), TypeError, ["matrices", "str"]),
    ("padding mask from 2-D lengths", lambda: d2l.padding_mask(torch.ones(2, 3), 4), ValueError, ["valid_lens", "1-D", "(2, 3)"]),
    ("multi-head, bias not a flag", lambda: d2l.MultiHeadAttention(8, 2, 0.0, "yes"), TypeError, ["bias", "True or False", "str 'yes'"]),
    ("positional encoding, wrong width", lambda: d2l.PositionalEncoding(8, 0.0)(torch.zeros(1, 3, 6)), ValueError, ["X", "(1, 3, 6)", "num_hiddens=8"]),
    ("positional encoding, too many steps", lambda: d2l.PositionalEncoding(8, 0.0, max_len=4)(torch.zeros(1, 5, 8)), ValueError, ["5 steps", "max_len=4"]),
    ("positional encoding, odd dropout", lambda: d2l.PositionalEncoding(8, 2.0), ValueError, ["dropout", "[0, 1)"]),
    ("heatmap scale not a flag", lambda: d2l.show_heatmaps(torch.zeros(2, 2), "Keys", "Queries", shared_scale="no"), TypeError, ["shared_scale", "str"]),
    ("add_to_class on an instance", lambda: d2l.add_to_class(torch.nn.Linear(2, 2)), TypeError, ["class", "Linear"]),
    ("torch multihead from another module", lambda: d2l.to_torch_multihead(torch.nn.Linear(2, 2)), TypeError, ["mha", "Linear"]),
]


@pytest.mark.parametrize("call,error,fragments", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_a_clear_error(call, error, fragments):
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error  # never a raw IndexError or RuntimeError from torch
    for fragment in fragments:
        assert fragment in str(info.value), f"{fragment!r} missing from: {info.value}"


def tokens():
    return torch.zeros(1, 3, dtype=torch.long)


# True == 1 in Python, so a flag passed where a count, a size or a rate belongs would run as 1 (or 0).
# Every entry point that takes a number refuses a bool, naming the argument, the bool and what it expects.
BOOL_AS_NUMBER = [
    # (case id, call, argument named, what is expected)
    ("additive hiddens", lambda: d2l.AdditiveAttention(True, 0.0), "num_hiddens", "an int"),
    ("additive dropout", lambda: d2l.AdditiveAttention(4, False), "dropout", "a number"),
    ("dot product dropout", lambda: d2l.DotProductAttention(True), "dropout", "a number"),
    ("multi-head hiddens", lambda: d2l.MultiHeadAttention(True, 1, 0.0), "num_hiddens", "an int"),
    ("multi-head heads", lambda: d2l.MultiHeadAttention(8, True, 0.0), "num_heads", "an int"),
    ("multi-head dropout", lambda: d2l.MultiHeadAttention(8, 2, True), "dropout", "a number"),
    ("blockwise block size", lambda: d2l.blockwise_attention(X3, X3, X3, True), "block_size", "an int"),
    ("positional hiddens", lambda: d2l.PositionalEncoding(True, 0.0), "num_hiddens", "an int"),
    ("positional dropout", lambda: d2l.PositionalEncoding(8, True), "dropout", "a number"),
    ("positional max_len", lambda: d2l.PositionalEncoding(8, 0.0, max_len=True), "max_len", "an int"),
    ("positional base", lambda: d2l.PositionalEncoding(8, 0.0, base=True), "base", "a number"),
    ("kernel width", lambda: d2l.nadaraya_watson(torch.zeros(2), torch.zeros(3), torch.zeros(3), sigma=True),
     "sigma", "a number"),
    ("learnable width", lambda: d2l.NWKernelRegression(sigma=True), "sigma", "a number"),
    ("padding mask keys", lambda: d2l.padding_mask(torch.tensor([1, 2]), True), "num_keys", "an int"),
    ("causal lengths batch", lambda: d2l.causal_valid_lens(True, 3), "batch_size", "an int"),
    ("causal lengths queries", lambda: d2l.causal_valid_lens(2, True), "num_queries", "an int"),
    ("causal mask diagram", lambda: diagrams.draw_causal_mask(True), "num_steps", "an int"),
    ("batch size", lambda: seq2seq.make_batch("reverse", True), "batch_size", "an int"),
    ("batch lengths", lambda: seq2seq.make_batch("reverse", 4, (True, 4)), "lengths[0] (the shortest)", "an int"),
    ("batch width", lambda: seq2seq.make_batch("reverse", 4, width=True), "width", "an int"),
    ("seq2seq hiddens", lambda: seq2seq.AttentionSeq2Seq(True), "num_hiddens", "an int"),
    ("seq2seq heads", lambda: seq2seq.AttentionSeq2Seq(8, num_heads=True), "num_heads", "an int"),
    ("seq2seq max_len", lambda: seq2seq.AttentionSeq2Seq(8, max_len=True), "max_len", "an int"),
    ("prediction steps", lambda: seq2seq.AttentionSeq2Seq(8).predict(tokens(), None, num_steps=True),
     "num_steps", "an int"),
    ("training steps", lambda: seq2seq.train(seq2seq.AttentionSeq2Seq(8), "reverse", True), "num_steps", "an int"),
    ("training rate", lambda: seq2seq.train(seq2seq.AttentionSeq2Seq(8), "reverse", 1, lr=True), "lr", "a number"),
    ("training batch", lambda: seq2seq.train(seq2seq.AttentionSeq2Seq(8), "reverse", 1, batch_size=True),
     "batch_size", "an int"),
    ("training seed", lambda: seq2seq.train(seq2seq.AttentionSeq2Seq(8), "reverse", 1, seed=True), "seed", "an int"),
    ("history snapshots", lambda: seq2seq.History(seq2seq.make_batch("reverse", 1), snapshot_every=True),
     "snapshot_every", "an int"),
    ("word length", lambda: WordPieceTokenizer(["[UNK]"], max_chars_per_word=True), "max_chars_per_word", "an int"),
    ("explorer slider", lambda: widgets.explore_positional_encoding(d=True), "d", "an int"),
    ("explorer width", lambda: widgets.explore_positional_encoding(base=True), "base", "a number"),
    ("explorer lengths", lambda: widgets.explore_masked_softmax(valid_lens=(True, 5)), "valid_lens[0]", "an int"),
    ("explorer seed", lambda: widgets.explore_mask_editor(seed=True), "seed", "an int"),
    ("explorer noise", lambda: widgets.explore_additive(noise=True), "noise", "a number"),
    ("explorer temperature", lambda: widgets.explore_dot_product(temperature=True), "temperature", "a number"),
    # A choice among numbers: True is in (1, 2, 4) for Python, so a bool is refused there too.
    ("explorer heads", lambda: widgets.explore_shape_tracer(num_heads=True), "num_heads", "one of [1, 2, 4, 8]"),
    ("explorer dimension", lambda: widgets.explore_dot_product(d=True), "d", "one of [1, 2, 4, 8, 16"),
    ("explorer head shown", lambda: widgets.explore_multihead(head=True), "head", "one of ['all', 0, 1"),
]


@pytest.mark.parametrize("call,name,expected", [c[1:] for c in BOOL_AS_NUMBER], ids=[c[0] for c in BOOL_AS_NUMBER])
def test_a_bool_is_refused_where_a_number_belongs(call, name, expected):
    error = ValueError if expected.startswith("one of") else TypeError
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert type(info.value) is error
    assert message.startswith(f"{name} must be {expected}"), message
    assert re.search(r"got (bool )?(True|False)$", message), message


def test_there_are_at_least_twenty_cases():
    assert len(CASES) >= 20


def test_the_classic_positional_multihead_call_names_the_signature():
    with pytest.raises(TypeError) as info:  # the book's v0.17: key, query and value sizes first
        d2l.MultiHeadAttention(100, 100, 100, 100, 5, 0.5)
    message = str(info.value)
    for fragment in ["bias must be True or False, got int 100",
                     "MultiHeadAttention(num_hiddens, num_heads, dropout, bias=False, query_size=None",
                     "classic edition (v0.17)",
                     "MultiHeadAttention(num_hiddens, num_heads, dropout, key_size=key_size"]:
        assert fragment in message, f"{fragment!r} missing from: {message}"
