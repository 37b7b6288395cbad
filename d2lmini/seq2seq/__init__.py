"""A toy translation task whose alignment is known, and a tiny encoder–decoder whose cross-attention learns it.

The tasks are generated in code, with no download. A source is a row of
digits 0–9 of a random length, padded with ``PAD``; the target has the same
length, and each output step copies one source position:

* ``"reverse"``: the source backwards. Output step ``t`` copies source
  position ``n - 1 - t``: the alignment is the anti-diagonal of each
  example's ``n × n`` block, the same for every input of a length.
* ``"sort"``: distinct digits, in increasing order. Output step ``t`` copies
  the position of the ``t``-th smallest digit: a permutation that changes
  with the content of every input.

Both are a stable sort of the source positions by a key (the position
descending, or the digit), with the padding sorted last; ``Batch.positions``
holds the result and ``Batch.alignment`` the one-hot (output step, source
position) matrix that a perfect cross-attention would draw.

``AttentionSeq2Seq`` is the model: embeddings plus the sinusoidal positional
encoding (optional), an encoder of one self-attention block, and a decoder
whose queries come from the previous output symbol at its position and whose
keys and values are the encoder's outputs (cross-attention). Both attentions
are the package's own (``MultiHeadAttention``, and ``DotProductAttention`` or
``AdditiveAttention``), and padding reaches them only as ``valid_lens``.

``train`` fits a model on freshly drawn batches and reports every step to a
callback; ``History`` is such a callback, recording what a learner wants to
watch: the loss, held-out accuracy and alignment mass, and the
cross-attention of a few fixed examples.

``expect`` checks a claim about a trained run, with a margin, since the figures
of a run vary a little from machine to machine.

One concern a module: ``tasks`` (the tasks and their batches), ``model``
(``AttentionSeq2Seq``), ``measures`` (accuracy and alignment mass),
``training`` (``train``), ``history`` (``History``), ``claims`` (``expect``)
and ``plots`` (``show_attention``). Every name is re-exported here, so
``seq2seq.X`` reads the same whichever module holds ``X``.
"""

from .claims import ClaimNotShown, expect
from .history import History, Snapshot
from .measures import alignment_mass, evaluate, sequence_accuracy
from .model import ATTENTIONS, AttentionSeq2Seq
from .plots import show_attention
from .tasks import BOS, PAD, SYMBOLS, TASKS, VOCAB, Batch, as_text, make_batch
from .training import Progress, train

__all__ = [
    "SYMBOLS", "PAD", "BOS", "VOCAB", "TASKS", "ATTENTIONS", "Batch", "make_batch", "as_text",
    "AttentionSeq2Seq", "Progress", "train", "History", "sequence_accuracy", "alignment_mass", "evaluate",
    "Snapshot", "show_attention", "ClaimNotShown", "expect",
]
