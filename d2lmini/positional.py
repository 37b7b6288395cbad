"""Sinusoidal positional encoding: X + P, with P fixed by position and dimension.

Row i of P is position i, and columns 2j and 2j + 1 hold
sin(i / base^(2j/d)) and cos(i / base^(2j/d)) for an encoding of width d,
with base = 10000 as in the Transformer paper. Low columns change fast along
the positions, high columns slowly: their wavelengths run from 2π to almost
2π · base positions.
"""

import math

import torch
from torch import nn

from ._checks import check_dropout, check_number, check_positive_int, check_tensor, shape_str


def _check_base(base):
    """``base`` is a real number above 1: base ** (2j/d) must grow with j for the wavelengths to spread."""
    check_number(base, "base")
    if not 1 < base < math.inf:  # NaN fails this too
        raise ValueError(f"base must be a finite number greater than 1, got {base}: with base 1 every column "
                         f"pair has the same wavelength, and below 1 the wavelengths shrink along the columns")


class PositionalEncoding(nn.Module):
    """Add the sinusoidal encoding ``P`` to a ``(batch, steps, num_hiddens)`` input, then dropout.

    ``P`` has shape ``(1, max_len, num_hiddens)`` and is computed once, in
    float32, at construction. It is a buffer, so ``.to(device)`` moves it, and
    it is not saved in the ``state_dict`` (it carries no learned value).
    ``base`` (10000 in the book and the paper) sets the longest wavelength.
    """

    def __init__(self, num_hiddens, dropout, max_len=1000, *, base=10000):
        super().__init__()
        check_positive_int(num_hiddens, "num_hiddens")
        check_dropout(dropout)
        check_positive_int(max_len, "max_len")
        _check_base(base)
        self.dropout = nn.Dropout(dropout)
        positions = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1)  # (max_len, 1)
        frequencies = torch.pow(base, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        angles = positions / frequencies  # (max_len, ceil(num_hiddens / 2))
        P = torch.zeros(1, max_len, num_hiddens)
        P[0, :, 0::2] = torch.sin(angles)
        P[0, :, 1::2] = torch.cos(angles[:, : num_hiddens // 2])  # an odd width has one sine more
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        check_tensor(X, "X", ndim=3, floating=True)
        max_len, num_hiddens = self.P.shape[1:]
        if X.shape[-1] != num_hiddens:
            raise ValueError(f"X has last dimension {X.shape[-1]} (shape {shape_str(X)}), "
                             f"but this encoding was built for num_hiddens={num_hiddens}")
        if X.shape[1] > max_len:
            raise ValueError(f"X has {X.shape[1]} steps (shape {shape_str(X)}), more than "
                             f"max_len={max_len}: build the encoding with a larger max_len")
        return self.dropout(X + self.P[:, : X.shape[1], :].to(X.device, X.dtype))

