"""BERT's uncased WordPiece tokenizer, as the reference (Hugging Face ``tokenizers``) runs it.

Four steps turn a text into word pieces:

1. **special tokens**: a literal ``[CLS]``, ``[SEP]``, ``[MASK]``, ``[PAD]`` or
   ``[UNK]`` in the text stays one token, matched as written, before anything else;
2. **normalise** the rest: delete NUL, U+FFFD and control and format characters
   (a zero-width space or a soft hyphen joins the words around it), turn every
   whitespace character into a space, put spaces around each CJK ideograph,
   decompose (NFD) and drop the combining accents, and lower-case each character;
3. **split into words** at spaces, and cut every punctuation character out as a
   word of its own;
4. **WordPiece** each word: the longest prefix found in the vocabulary, then the
   longest ``##``-prefixed continuation of what is left, and so on. A word with
   a piece that cannot be matched, or longer than 100 characters, becomes one
   ``[UNK]``.
"""

import re
import unicodedata
from pathlib import Path

from .._checks import check_positive_int

__all__ = ["SPECIAL_TOKENS", "WordPieceTokenizer"]

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

# BERT's "Chinese characters": the CJK Unified Ideographs blocks and their extensions,
# and the compatibility ideographs. Kana and Hangul are not among them. The reference
# (Rust) starts extension F at 0x2B920 where Google's BERT has 0x2B820; we follow the reference.
_CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
               (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _is_cjk(char):
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _is_control(char):
    """Deleted by normalisation: control, format and private-use characters, except the tab and
    the line breaks, which are whitespace. Unassigned code points are kept, as the reference keeps them."""
    return char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cf", "Co")


def _is_punctuation(char):
    """ASCII punctuation (which includes $, +, <, =, >, ^, `, | and ~) or any Unicode punctuation."""
    return (char.isascii() and not char.isalnum() and char.isprintable() and not char.isspace()) \
        or unicodedata.category(char).startswith("P")


class WordPieceTokenizer:
    """Text to BERT word pieces and ids, for an uncased vocabulary.

    ``vocab`` is the list of tokens in id order (a token's id is its index),
    as the lines of BERT's ``vocab.txt``. ``tokenize`` gives the word pieces of
    a text, ``wordpiece`` those of one word, ``encode`` the ids with ``[CLS]``
    first and ``[SEP]`` last. There is no padding and no truncation.
    """

    def __init__(self, vocab, unk_token="[UNK]", max_chars_per_word=100):
        vocab = list(vocab)
        if not all(isinstance(token, str) for token in vocab):
            raise TypeError("vocab must be a sequence of strings, one token per id")
        if unk_token not in vocab:
            raise ValueError(f"unk_token {unk_token!r} is not in the vocabulary")
        check_positive_int(max_chars_per_word, "max_chars_per_word")
        self.vocab = vocab
        self.ids = {token: i for i, token in enumerate(vocab)}
        self.unk_token, self.max_chars_per_word = unk_token, max_chars_per_word
        specials = [token for token in SPECIAL_TOKENS if token in self.ids]
        # Longest first, so that a special token that starts another is never cut short.
        self._special = re.compile("|".join(re.escape(t) for t in sorted(specials, key=len, reverse=True))) \
            if specials else None

    @classmethod
    def from_file(cls, path):
        """The tokenizer of a ``vocab.txt``: one token per line, the line number is the id."""
        return cls(Path(path).read_text(encoding="utf-8").splitlines())

    def __len__(self):
        return len(self.vocab)

    @staticmethod
    def normalize(text):
        """Clean, space out CJK ideographs, strip accents and lower-case, in that order."""
        kept = []
        for char in text:
            if char in "\x00\ufffd" or _is_control(char):
                continue
            if char.isspace():
                kept.append(" ")
            elif _is_cjk(char):
                kept.append(f" {char} ")
            else:
                kept.append(char)
        decomposed = unicodedata.normalize("NFD", "".join(kept))
        without_accents = "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
        # Character by character, as the reference does: a final capital sigma becomes σ, not ς.
        return "".join(char.lower() for char in without_accents)

    @staticmethod
    def split_words(text):
        """Words of a normalised text: split at spaces, each punctuation character a word of its own."""
        words = []
        for chunk in text.split():
            start = 0
            for i, char in enumerate(chunk):
                if _is_punctuation(char):
                    if i > start:
                        words.append(chunk[start:i])
                    words.append(char)
                    start = i + 1
            if start < len(chunk):
                words.append(chunk[start:])
        return words

    def wordpiece(self, word):
        """Greedy longest-match-first pieces of one word; ``[UNK]`` if any part cannot be matched."""
        if len(word) > self.max_chars_per_word:
            return [self.unk_token]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.ids:
                    break
                end -= 1
            if end == start:  # not even one character matched
                return [self.unk_token]
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text):
        """The word pieces of ``text``, without ``[CLS]`` and ``[SEP]``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__} {text!r:.60}")
        tokens, start = [], 0
        matches = self._special.finditer(text) if self._special else ()
        for match in matches:
            tokens += self._plain_tokens(text[start:match.start()])
            tokens.append(match.group())
            start = match.end()
        return tokens + self._plain_tokens(text[start:])

    def _plain_tokens(self, text):
        return [piece for word in self.split_words(self.normalize(text)) for piece in self.wordpiece(word)]

    def convert_tokens_to_ids(self, tokens):
        """Each token's id; a token outside the vocabulary gets the id of ``[UNK]``."""
        unk = self.ids[self.unk_token]
        return [self.ids.get(token, unk) for token in tokens]

    def encode(self, text):
        """``(tokens, ids)`` of ``text``, ``[CLS]`` first and ``[SEP]`` last."""
        tokens = ["[CLS]", *self.tokenize(text), "[SEP]"]
        return tokens, self.convert_tokens_to_ids(tokens)
