"""The tasks: generated digit sequences whose alignment is known, in padded batches.

A source is a row of digits 0–9 of a random length, padded with ``PAD``; the
target has the same length, and each output step copies one source position
(see the package's docstring for the two tasks).
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .._checks import check_choice, check_number, check_positive_int
from ..masking import attention_mask

SYMBOLS = 10  # the digits 0..9
PAD = 10  # fills a source and a target beyond their length
BOS = 11  # the decoder's first input: "begin the output"
VOCAB = 12  # digits, PAD and BOS
TASKS = ("reverse", "sort")


def check_lengths(lengths, task):
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
    check_lengths(lengths, task)
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

