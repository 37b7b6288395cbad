"""all-MiniLM-L6-v2 as a BERT encoder built on d2lmini's own ``MultiHeadAttention``.

BERT (Devlin et al., 2019) is a stack of Transformer encoder layers. Each layer is

    Y = LayerNorm(X + MultiHeadAttention(X, X, X))        # self-attention, then add & norm
    Z = LayerNorm(Y + W_2 GELU(W_1 Y + b_1) + b_2)        # position-wise feed-forward, add & norm

and its input is the sum of a token's word, position and segment embeddings,
layer-normalised. The attention is chapter 05's ``d2lmini.MultiHeadAttention``
with biases, its ``W_q``, ``W_k``, ``W_v`` and ``W_o`` holding the trained
weights: its ``attention_weights`` are the maps the chapter draws.

all-MiniLM-L6-v2 has 6 layers of 12 heads, hidden size 384 (heads of 32
features) and a feed-forward size of 1536. As a sentence encoder its output
is the mean of the last layer's token vectors, L2-normalised.
"""

import dataclasses

import torch
import torch.nn.functional as F
from torch import nn

from ..attention import MultiHeadAttention


@dataclasses.dataclass(frozen=True)
class BertConfig:
    """The sizes of a BERT encoder; the defaults are all-MiniLM-L6-v2's ``config.json``."""

    vocab_size: int = 30522
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    @classmethod
    def from_dict(cls, config):
        """The fields of a Hugging Face ``config.json`` that this encoder uses; an activation other
        than exact GELU or another position scheme is refused rather than run wrongly."""
        if config.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"this encoder uses exact (erf) GELU, the config asks for {config['hidden_act']!r}")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"this encoder uses absolute positions, the config asks for "
                             f"{config['position_embedding_type']!r}")
        return cls(**{field.name: config[field.name] for field in dataclasses.fields(cls) if field.name in config})


class BertEmbeddings(nn.Module):
    """Word + position + segment embeddings, then LayerNorm: (batch, T) ids -> (batch, T, hidden)."""

    def __init__(self, config):
        super().__init__()
        hidden = config.hidden_size
        # Zeros until load_bert_weights: a random start (nn.Embedding's default) would be drawn only to be
        # thrown away, and on the meta device that draw imports much of torch's compiler (4 s).
        self.word_embeddings = nn.Embedding(config.vocab_size, hidden, _weight=torch.zeros(config.vocab_size, hidden))
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, hidden,
                                                _weight=torch.zeros(config.max_position_embeddings, hidden))
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, hidden,
                                                  _weight=torch.zeros(config.type_vocab_size, hidden))
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)  # (T,)
        # One sentence per input: every token is in segment 0.
        X = self.word_embeddings(ids) + self.position_embeddings(positions) + self.token_type_embeddings.weight[0]
        return self.norm(X)  # (batch, T, hidden)


class EncoderLayer(nn.Module):
    """Self-attention then a feed-forward network, each added to its input and layer-normalised."""

    def __init__(self, config):
        super().__init__()
        hidden = config.hidden_size
        self.attention = MultiHeadAttention(hidden, config.num_attention_heads, 0.0, bias=True,
                                            query_size=hidden, key_size=hidden, value_size=hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=config.layer_norm_eps)
        self.intermediate = nn.Linear(hidden, config.intermediate_size)
        self.output = nn.Linear(config.intermediate_size, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=config.layer_norm_eps)

    def forward(self, X, valid_lens=None):
        Y = self.attention_norm(X + self.attention(X, X, X, valid_lens))  # (batch, T, hidden)
        return self.output_norm(Y + self.output(F.gelu(self.intermediate(Y))))  # exact GELU, as BERT

    @property
    def attention_weights(self):
        """(batch, heads, T, T) of the last call: row i is how token i spreads its attention."""
        return self.attention.attention_weights


class BertEncoder(nn.Module):
    """Embeddings and a stack of encoder layers: ids -> the last layer's token vectors."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.num_hidden_layers))

    def forward(self, ids, valid_lens=None):
        """(batch, T) token ids and optional (batch,) lengths -> (batch, T, hidden).

        With ``valid_lens`` the keys past each example's length (padding) get
        no attention; the padded positions' outputs are meaningless.
        """
        X = self.embeddings(ids)
        for layer in self.layers:
            X = layer(X, valid_lens)
        return X

    def attention_weights(self):
        """(layers, batch, heads, T, T): every layer's weights from the last call."""
        return torch.stack([layer.attention_weights for layer in self.layers])

    def load_bert_weights(self, tensors):
        """Take the weights of a Hugging Face ``BertModel`` (name -> tensor), sharing their memory.

        The pooler, which a sentence encoder does not use, and the stored
        position ids are left out. Missing or unexpected names raise.
        """
        state = {}
        prefix = "bert." if any(name.startswith("bert.") for name in tensors) else ""
        names = {
            "embeddings.word_embeddings.weight": "embeddings.word_embeddings.weight",
            "embeddings.position_embeddings.weight": "embeddings.position_embeddings.weight",
            "embeddings.token_type_embeddings.weight": "embeddings.token_type_embeddings.weight",
            "embeddings.LayerNorm.weight": "embeddings.norm.weight",
            "embeddings.LayerNorm.bias": "embeddings.norm.bias",
        }
        pieces = {"attention.self.query": "attention.W_q", "attention.self.key": "attention.W_k",
                  "attention.self.value": "attention.W_v", "attention.output.dense": "attention.W_o",
                  "attention.output.LayerNorm": "attention_norm", "intermediate.dense": "intermediate",
                  "output.dense": "output", "output.LayerNorm": "output_norm"}
        for i in range(len(self.layers)):
            for theirs, ours in pieces.items():
                for kind in ("weight", "bias"):
                    names[f"encoder.layer.{i}.{theirs}.{kind}"] = f"layers.{i}.{ours}.{kind}"
        missing = [name for name in names if prefix + name not in tensors]
        if missing:
            raise ValueError(f"the weights lack {len(missing)} tensors this encoder needs, e.g. {missing[0]!r}")
        for theirs, ours in names.items():
            state[ours] = tensors[prefix + theirs]
        self.load_state_dict(state, strict=True, assign=True)
        self.requires_grad_(False)
        return self



def build_encoder(config):
    """A ``BertEncoder`` on the meta device: no memory and no random draws, built in milliseconds,
    for ``load_bert_weights`` to fill with trained weights."""
    with torch.device("meta"):
        return BertEncoder(config)
