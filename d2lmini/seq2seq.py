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

``expect`` checks a claim about a trained run. Training amplifies the last
bits of float32 sums, so the same seed gives slightly different figures on
another CPU; chapter 08 compares none of them as text, and asserts what it
claims instead, with margins measured over seeds and floating-point paths
(``benchmarks/chapter08_claims.py``).
"""

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from ._checks import check_choice, check_flag, check_number, check_positive, check_positive_int, check_tensor, shape_str
from .attention import AdditiveAttention, DotProductAttention, MultiHeadAttention
from .i18n import _
from .masking import attention_mask
from .plotting import CMAP, attach_summary, describe_weights, plt, sentence
from .positional import PositionalEncoding

__all__ = [
    "SYMBOLS", "PAD", "BOS", "VOCAB", "TASKS", "ATTENTIONS", "Batch", "make_batch", "as_text",
    "AttentionSeq2Seq", "Progress", "train", "History", "sequence_accuracy", "alignment_mass", "evaluate",
    "Snapshot", "show_attention", "ClaimNotShown", "expect",
]

SYMBOLS = 10  # the digits 0..9
PAD = 10  # fills a source and a target beyond their length
BOS = 11  # the decoder's first input: "begin the output"
VOCAB = 12  # digits, PAD and BOS
TASKS = ("reverse", "sort")
ATTENTIONS = ("dot-product", "additive")


class ClaimNotShown(AssertionError):
    """A trained run that does not show what the chapter claims about it."""


def expect(holds, claim, measured):
    """Raise ``ClaimNotShown`` unless ``holds``: ``claim`` says what the chapter claims, ``measured`` what
    this run gave (both text). The figures of a run vary a little from machine to machine; a claim holds
    on all of them, with a margin."""
    check_flag(holds, "holds (the claim's condition)")
    for value, name in [(claim, "claim"), (measured, "measured")]:
        if not isinstance(value, str) or not value:
            raise TypeError(f"{name} must be a non-empty str, got {type(value).__name__} {value!r:.60}")
    if not holds:
        raise ClaimNotShown(f"this run does not show what the chapter claims: {claim}; it measured {measured}. "
                            f"Trained figures vary from machine to machine, but this claim held on every "
                            f"seed and floating-point path measured (benchmarks/chapter08_claims.py). If you "
                            f"did not change the notebook's settings, please report it with your CPU and "
                            f"PyTorch version.")


def _check_lengths(lengths, task):
    """``lengths`` is a pair ``(shortest, longest)`` of positive ints; a sort needs distinct digits."""
    if not isinstance(lengths, (tuple, list)) or len(lengths) != 2:
        raise TypeError(f"lengths must be a pair of ints (shortest, longest), got {lengths!r}")
    shortest, longest = lengths
    check_number(shortest, "lengths[0] (the shortest)", integer=True)
    check_number(longest, "lengths[1] (the longest)", integer=True)
    if not 1 <= shortest <= longest:
        raise ValueError(f"lengths must satisfy 1 <= shortest <= longest, got {tuple(lengths)}")
    if task == "sort" and longest > SYMBOLS:
        raise ValueError(f"the sort task uses distinct digits, so at most {SYMBOLS} per sequence; "
                         f"got lengths {tuple(lengths)}")


@dataclass
class Batch:
    """A padded batch: ``source``, ``target`` and ``positions`` are ``(batch, steps)``, ``valid_lens`` ``(batch,)``.

    ``positions[b, t]`` is the source position that output step ``t`` copies
    (for a padding step, a padding position).
    """

    source: torch.Tensor
    target: torch.Tensor
    valid_lens: torch.Tensor
    positions: torch.Tensor

    def __len__(self):
        return self.source.shape[0]

    def __getitem__(self, index):
        """The examples ``index`` picks (an int, a slice or a tensor of indices), as a batch."""
        if isinstance(index, int):
            index = [index]  # keeps the batch axis
        return Batch(self.source[index], self.target[index], self.valid_lens[index], self.positions[index])

    @classmethod
    def cat(cls, batches):
        """The examples of several batches of one width, as one batch."""
        return cls(*(torch.cat([getattr(b, name) for b in batches]) for name in
                     ("source", "target", "valid_lens", "positions")))

    def to(self, device):
        return Batch(self.source.to(device), self.target.to(device), self.valid_lens.to(device),
                     self.positions.to(device))

    @property
    def real(self):
        """True for the output steps that hold a symbol, False for padding: ``(batch, steps)``."""
        return self.target != PAD

    @property
    def alignment(self):
        """The cross-attention a perfect model draws: 1 at (step ``t``, position ``positions[t]``) for every
        real output step, rows of zeros for padding steps; ``(batch, steps, steps)`` floats."""
        width = self.source.shape[1]
        return F.one_hot(self.positions, width).float() * self.real.unsqueeze(-1)


def make_batch(task, batch_size, lengths=(4, 8), *, width=None, generator=None):
    """``batch_size`` random examples of ``task`` with lengths drawn uniformly from ``lengths``.

    ``width`` is the padded number of steps (at least the longest length; by
    default that length). ``generator`` (a ``torch.Generator``) makes the batch
    reproducible. The tensors are on the CPU: move them with ``batch.to(device)``.
    """
    check_choice(task, "task", TASKS)
    check_positive_int(batch_size, "batch_size")
    _check_lengths(lengths, task)
    shortest, longest = lengths
    width = longest if width is None else width
    check_positive_int(width, "width")
    if width < longest:
        raise ValueError(f"width must be at least the longest length {longest}, got {width}")
    valid_lens = torch.randint(shortest, longest + 1, (batch_size,), generator=generator)
    real = attention_mask(valid_lens, batch_size, 1, width)[:, 0]  # (batch, width): True on the symbols
    steps = torch.arange(width).expand(batch_size, width)
    if task == "reverse":
        symbols = torch.randint(0, SYMBOLS, (batch_size, width), generator=generator)
        key = -steps  # the last symbol first
    else:
        symbols = torch.rand(batch_size, SYMBOLS, generator=generator).argsort(dim=1)[:, :width]  # distinct digits
        key = symbols  # the smallest digit first
    source = symbols.masked_fill(~real, PAD)
    # A stable sort by the key, padding last (its key is larger than any other): positions[b, t] is
    # the source position that output step t copies.
    positions = torch.sort(key.masked_fill(~real, SYMBOLS + width), dim=1, stable=True).indices
    return Batch(source, source.gather(1, positions), valid_lens, positions)


def as_text(tokens):
    """One row of tokens as text, digits separated by spaces, padding left out: ``"3 1 4"``."""
    return " ".join(str(token) for token in tokens.tolist() if token < SYMBOLS)


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


def sequence_accuracy(predictions, batch):
    """The share of examples whose every real output step is right (padding steps are not compared)."""
    correct = (predictions == batch.target) | ~batch.real  # (batch, steps)
    return correct.all(dim=1).float().mean().item()


def alignment_mass(weights, alignment, by_step=False):
    """The attention weight on the correct source position, averaged over the real output steps.

    ``weights`` and ``alignment`` are ``(batch, output steps, source steps)``;
    a row of ``alignment`` marks the correct position(s) with 1 and is all
    zeros for a padding step, which is left out. 1 means every step looks
    only where it should; uniform attention over ``n`` keys gives ``1/n``.
    With ``by_step=True``, one average per output step, ``(output steps,)``
    (NaN for a step that no example reaches).
    """
    check_tensor(weights, "weights", ndim=3, floating=True)
    check_tensor(alignment, "alignment", ndim=3, floating=True)
    if weights.shape != alignment.shape:
        raise ValueError(f"weights {shape_str(weights)} and alignment {shape_str(alignment)} must have one shape")
    mass = (weights * alignment).sum(dim=-1)  # (batch, steps)
    real = alignment.sum(dim=-1)  # (batch, steps): 1 for a real step, 0 for padding
    if by_step:
        return mass.sum(dim=0) / real.sum(dim=0)
    return (mass.sum() / real.sum()).item()


def _predict(model, batch):
    """``model.predict`` on ``batch`` (moved to the model's device) in evaluation mode, then the mode it had."""
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        return model.predict(batch.source.to(device), batch.valid_lens.to(device))
    finally:
        model.train(was_training)


def evaluate(model, batch):
    """``(sequence accuracy, alignment mass)`` of ``model``'s greedy predictions on ``batch``."""
    predictions, weights = _predict(model, batch)
    batch = batch.to(predictions.device)
    return sequence_accuracy(predictions, batch), alignment_mass(weights, batch.alignment)


@dataclass
class Progress:
    """What ``train`` tells its callback: after ``step`` of ``num_steps`` (0: before the first), the loss of
    that step (None at step 0), the model, and whether this is the last call (finished or stopped)."""

    step: int
    num_steps: int
    loss: float | None
    model: AttentionSeq2Seq
    done: bool


def train(model, task, num_steps, *, lr=3e-3, batch_size=128, lengths=(4, 8), seed=0, callback=None, stop=None):
    """Train ``model`` on ``task`` with Adam, a fresh random batch per step; return the losses.

    The batches come from a ``torch.Generator`` seeded with ``seed``, so a
    run is reproducible once the model's initial weights are. ``callback``
    (optional) receives a ``Progress`` before the first step and after every
    step. ``stop`` (optional, e.g. a ``threading.Event``) is read after every
    step: once it is set, training ends there, and the last ``Progress`` says
    ``done``.
    """
    if not isinstance(model, AttentionSeq2Seq):
        raise TypeError(f"model must be an AttentionSeq2Seq, got {type(model).__name__}")
    check_choice(task, "task", TASKS)
    check_number(num_steps, "num_steps", low=0, integer=True)
    check_positive(lr, "lr")
    check_positive_int(batch_size, "batch_size")
    check_number(seed, "seed", integer=True)
    _check_lengths(lengths, task)
    if stop is not None and not callable(getattr(stop, "is_set", None)):
        raise TypeError(f"stop must have an is_set() method, like threading.Event; got {type(stop).__name__}")
    notify = callback if callback is not None else (lambda progress: None)
    generator = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    notify(Progress(0, num_steps, None, model, done=num_steps == 0))
    for step in range(1, num_steps + 1):
        batch = make_batch(task, batch_size, lengths, generator=generator).to(device)
        loss = model.loss(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        done = step == num_steps or (stop is not None and stop.is_set())
        notify(Progress(step, num_steps, losses[-1], model, done))
        if done:
            break
    return losses


@dataclass
class Snapshot:
    """The greedy predictions ``(examples, steps)`` and cross-attention ``(examples, steps, steps)`` of the
    fixed examples at one step of training."""

    predictions: torch.Tensor
    weights: torch.Tensor


@dataclass
class History:
    """A ``train`` callback that records a run.

    * ``losses``: the loss of every step (step 1 first);
    * ``snapshots``: step -> ``Snapshot`` of the fixed ``examples``, at step 0,
      every ``snapshot_every`` steps and at the last step;
    * ``evaluations``: step -> ``(accuracy, alignment mass)`` on ``test``, at
      the same steps as the snapshots but every ``evaluate_every`` steps.

    Everything recorded is on the CPU.
    """

    examples: Batch
    test: Batch | None = None
    snapshot_every: int = 10
    evaluate_every: int = 20
    losses: list = field(default_factory=list)
    snapshots: dict = field(default_factory=dict)
    evaluations: dict = field(default_factory=dict)

    def __post_init__(self):
        check_positive_int(self.snapshot_every, "snapshot_every")
        check_positive_int(self.evaluate_every, "evaluate_every")

    def __call__(self, progress):
        step, model = progress.step, progress.model
        if progress.loss is not None:
            self.losses.append(progress.loss)
        if step % self.snapshot_every == 0 or progress.done:
            predictions, weights = _predict(model, self.examples)
            self.snapshots[step] = Snapshot(predictions.cpu(), weights.cpu())
        if self.test is not None and (step % self.evaluate_every == 0 or progress.done):
            self.evaluations[step] = evaluate(model, self.test)

    @property
    def steps(self):
        """The steps with a snapshot, in order."""
        return sorted(self.snapshots)

    def steps_to(self, accuracy):
        """The first evaluated step whose held-out accuracy reached ``accuracy`` (None if none did)."""
        return next((step for step in sorted(self.evaluations) if self.evaluations[step][0] >= accuracy), None)

    def reached(self, accuracy):
        """A ``stop`` flag for ``train``: set once this history has evaluated ``accuracy`` or more."""
        return _Reached(self, accuracy)

    def mass(self, step):
        """The alignment mass of the fixed examples at a snapshot ``step``."""
        return alignment_mass(self.snapshots[step].weights, self.examples.alignment)

    def save(self, path):
        """Write the record to ``path`` (``torch.save``; ``History.load`` reads it back): the examples, the
        losses, the snapshots and the evaluations. The held-out set itself is left out: its results are kept."""
        torch.save({"examples": dict(vars(self.examples)),  # its tensors, by name
                    "snapshot_every": self.snapshot_every, "evaluate_every": self.evaluate_every,
                    "losses": list(self.losses),
                    "snapshots": {step: [s.predictions, s.weights] for step, s in self.snapshots.items()},
                    "evaluations": {step: list(result) for step, result in self.evaluations.items()}}, path)

    @classmethod
    def load(cls, path):
        """The ``History`` that ``save`` wrote to ``path`` (its ``test`` None)."""
        saved = torch.load(path, weights_only=True)
        return cls(Batch(**saved["examples"]), None, saved["snapshot_every"], saved["evaluate_every"],
                   saved["losses"], {step: Snapshot(*s) for step, s in saved["snapshots"].items()},
                   {step: tuple(result) for step, result in saved["evaluations"].items()})


@dataclass(frozen=True)
class _Reached:
    """What ``History.reached`` returns: ``is_set()``, as a ``threading.Event`` has, reads the history."""

    history: History
    accuracy: float

    def is_set(self):
        return self.history.steps_to(self.accuracy) is not None


def show_attention(weights, batch, predictions=None, titles=None, figsize=None):
    """A row of cross-attention heatmaps, one per example of ``batch``, on one colour scale from 0 to 1.

    ``weights`` is ``(examples, output steps, source steps)``, for instance a
    model's ``attention_weights`` or ``batch.alignment`` itself. Each panel is
    cropped to its example's length: rows are the output steps (queries),
    labelled with ``predictions`` (red where they are wrong) or else with the
    target; columns are the source positions (keys), labelled with the source
    symbols; a circle marks the correct position of each step. Returns the
    figure (a pyplot figure: ``plt.show()`` shows it), with a text summary for
    screen readers printed under it in Jupyter (``plotting.attach_summary``). A
    wrong prediction is marked ✗ as well as red, for readers who cannot tell
    red from green.
    """
    check_tensor(weights, "weights", ndim=3, floating=True)
    if weights.shape[0] != len(batch) or weights.shape[2] != batch.source.shape[1]:
        raise ValueError(f"weights {shape_str(weights)} must have one (output steps, source steps) matrix per "
                         f"example of the batch, source {shape_str(batch.source)}")
    if titles is not None and len(titles) != len(batch):
        raise ValueError(f"titles must have one entry per example ({len(batch)}), got {len(titles)}")
    weights = weights.detach().cpu()
    batch = batch.to("cpu")
    shown = batch.target if predictions is None else predictions.detach().cpu()
    num = len(batch)
    figsize = figsize or (2.3 * num + 0.9, 2.5)
    fig, axes = plt.subplots(1, num, figsize=figsize, squeeze=False, layout="constrained")
    summaries = []
    for b, ax in enumerate(axes[0]):
        n = int(batch.real[b].sum())
        image = ax.imshow(weights[b, :n, :n].numpy(), cmap=CMAP, vmin=0, vmax=1)
        rows, columns = batch.alignment[b, :n, :n].nonzero(as_tuple=True)
        ax.plot(columns, rows, "o", markersize=5, markerfacecolor="none", markeredgecolor="#1f6feb",
                markeredgewidth=1.5)
        sources, outputs = [str(s) for s in batch.source[b, :n].tolist()], [str(s) for s in shown[b, :n].tolist()]
        right = [True] * n if predictions is None else (shown[b, :n] == batch.target[b, :n]).tolist()
        ax.set_xticks(range(n), sources)
        ax.set_yticks(range(n), [s if ok else f"{s} ✗" for s, ok in zip(outputs, right)])
        if predictions is not None:
            for label, ok in zip(ax.get_yticklabels(), right):
                label.set_color("#1a7f37" if ok else "#cf222e")
        title = " ".join(titles[b].split()) if titles is not None else _("example {b}").format(b=b)
        # A sentence of its own after the previous example's: its title begins with a capital.
        summaries.append(sentence(f"{title}: ") + describe_weights(weights[b, :n, :n], query_labels=outputs,
                                                                    key_labels=sources, max_queries=1))
        ax.set_xlabel(_("source (keys)"))
        if b == 0:
            ax.set_ylabel(_("output (queries)"))
        if titles is not None:
            ax.set_title(titles[b], fontsize="medium")
    fig.colorbar(image, ax=axes[0], shrink=0.8, label=_("attention weight"))
    return attach_summary(fig, " ".join(summaries))
