"""The model: a tiny encoder–decoder whose cross-attention learns the task's alignment."""

import torch
import torch.nn.functional as F
from torch import nn

from .._checks import check_choice, check_flag, check_positive_int, check_tensor, shape_str
from ..attention import AdditiveAttention, DotProductAttention, MultiHeadAttention
from ..positional import PositionalEncoding
from .tasks import BOS, PAD, SYMBOLS, VOCAB

ATTENTIONS = ("dot-product", "additive")


class AttentionSeq2Seq(nn.Module):
    """A tiny encoder–decoder whose decoder reads the source through cross-attention.

    * Embeddings of the source and of the decoder's inputs, plus the
      sinusoidal positional encoding when ``positional`` is True.
    * The encoder: one block of multi-head self-attention over the source
      (padding masked by ``valid_lens``), then a position-wise feed-forward
      network, each with a residual connection and layer normalisation.
    * The decoder: at output step ``t`` its state is the embedding of the
      previous output symbol (``BOS`` at step 0) plus the encoding of
      position ``t``. Cross-attention takes the queries ``W_q(state)``, the keys
      ``W_k(encoder outputs)`` and the values ``encoder outputs``, with the
      source padding masked by ``valid_lens``; ``attention`` picks the
      package's ``DotProductAttention`` or ``AdditiveAttention``. A small
      network reads the state and the context and scores the next symbol.

    The decoder has no self-attention over its own earlier outputs: these
    tasks do not need it, and without it a step trains in milliseconds.
    ``attention_weights`` holds the last call's cross-attention,
    ``(batch, output steps, source positions)``.
    """

    def __init__(self, num_hiddens=32, attention="dot-product", positional=True, *, num_heads=1, max_len=64):
        super().__init__()
        check_positive_int(num_hiddens, "num_hiddens")
        check_choice(attention, "attention", ATTENTIONS)
        check_flag(positional, "positional")
        check_positive_int(max_len, "max_len")
        h = num_hiddens
        self.attention, self.max_len = attention, max_len
        self.source_embedding = nn.Embedding(VOCAB, h)
        self.target_embedding = nn.Embedding(VOCAB, h)
        self.positional = PositionalEncoding(h, 0.0, max_len) if positional else None
        self.self_attention = MultiHeadAttention(h, num_heads, 0.0, query_size=h, key_size=h, value_size=h)
        self.norm1, self.norm2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.ffn = nn.Sequential(nn.Linear(h, 2 * h), nn.ReLU(), nn.Linear(2 * h, h))
        self.W_q = nn.Linear(h, h, bias=False)
        self.W_k = nn.Linear(h, h, bias=False)
        if attention == "dot-product":
            self.cross_attention = DotProductAttention(0.0)
        else:
            self.cross_attention = AdditiveAttention(h, 0.0, key_size=h, query_size=h)
        self.output = nn.Sequential(nn.Linear(2 * h, h), nn.ReLU(), nn.Linear(h, SYMBOLS))

    @property
    def attention_weights(self):
        """The cross-attention of the last call: ``(batch, output steps, source positions)``."""
        return self.cross_attention.attention_weights

    def _embed(self, embedding, tokens):
        check_tensor(tokens, "tokens", ndim=2)
        if tokens.shape[1] > self.max_len:
            raise ValueError(f"got {tokens.shape[1]} steps (shape {shape_str(tokens)}), more than "
                             f"max_len={self.max_len}: build the model with a larger max_len")
        X = embedding(tokens)  # (batch, steps, h)
        return X if self.positional is None else self.positional(X)

    def encode(self, source, valid_lens):
        """The encoder's outputs, ``(batch, source steps, h)``: the keys and values of the cross-attention."""
        X = self._embed(self.source_embedding, source)
        X = self.norm1(X + self.self_attention(X, X, X, valid_lens))
        return self.norm2(X + self.ffn(X))

    def decoder_states(self, decoder_inputs):
        """The decoder's state at each step, ``(batch, output steps, h)``: the previous symbol at its position."""
        return self._embed(self.target_embedding, decoder_inputs)

    def _cross_attention(self, states, encoder_outputs, valid_lens):
        """Queries from the decoder, keys and values from the encoder: the context, ``(batch, steps, h)``."""
        return self.cross_attention(self.W_q(states), self.W_k(encoder_outputs), encoder_outputs, valid_lens)

    def decode(self, decoder_inputs, encoder_outputs, valid_lens):
        """Scores of the next symbol at every output step, ``(batch, output steps, SYMBOLS)``."""
        states = self.decoder_states(decoder_inputs)
        context = self._cross_attention(states, encoder_outputs, valid_lens)
        return self.output(torch.cat([states, context], dim=-1))

    def forward(self, source, decoder_inputs, valid_lens):
        return self.decode(decoder_inputs, self.encode(source, valid_lens), valid_lens)

    def loss(self, batch):
        """Cross-entropy of the next symbol on the real output steps, with the target as the decoder's
        inputs (teacher forcing)."""
        decoder_inputs = torch.cat([torch.full_like(batch.target[:, :1], BOS), batch.target[:, :-1]], dim=1)
        scores = self(batch.source, decoder_inputs, batch.valid_lens)  # (batch, steps, SYMBOLS)
        return F.cross_entropy(scores.flatten(0, 1), batch.target.flatten(), ignore_index=PAD)

    @torch.no_grad()
    def predict(self, source, valid_lens, num_steps=None):
        """Greedy decoding: each step feeds back the symbol just predicted.

        Returns the predictions ``(batch, num_steps)`` and the cross-attention
        of every step ``(batch, num_steps, source steps)``; ``num_steps`` is the
        source's width by default.
        """
        num_steps = source.shape[1] if num_steps is None else num_steps
        check_positive_int(num_steps, "num_steps")
        encoder_outputs = self.encode(source, valid_lens)
        inputs = torch.full((source.shape[0], 1), BOS, dtype=torch.long, device=source.device)
        for _step in range(num_steps):
            # Without decoder self-attention step t depends on its own input only: the
            # last row of this call is step t's prediction, the rows before it are unchanged.
            scores = self.decode(inputs, encoder_outputs, valid_lens)
            inputs = torch.cat([inputs, scores[:, -1:].argmax(dim=-1)], dim=1)
        return inputs[:, 1:], self.attention_weights
