"""PositionalEncoding: P[i, 2j] = sin(i / 10000^(2j/d)), P[i, 2j+1] = cos(the same angle)."""

import math

import torch

import d2lmini as d2l


def test_a_small_encoding_by_hand():
    P = d2l.PositionalEncoding(4, 0.0, max_len=3).P[0]
    expected = torch.tensor([[math.sin(i), math.cos(i), math.sin(i / 100), math.cos(i / 100)] for i in range(3)])
    torch.testing.assert_close(P, expected)


def test_an_odd_width_ends_with_a_sine():
    P = d2l.PositionalEncoding(5, 0.0, max_len=2).P[0]
    assert P.shape == (2, 5)
    torch.testing.assert_close(P[1, 4], torch.tensor(math.sin(1 / 10000 ** (4 / 5))))


def test_adds_the_first_rows_to_any_batch_and_keeps_the_dtype():
    encoding = d2l.PositionalEncoding(6, 0.0)
    X = torch.randn(3, 7, 6)
    torch.testing.assert_close(encoding(X), X + encoding.P[:, :7])
    assert encoding(X.double()).dtype == torch.float64


def test_p_moves_with_the_module_and_is_not_saved(device):
    encoding = d2l.PositionalEncoding(8, 0.0).to(device)
    assert encoding.P.device.type == device.type
    assert encoding(torch.zeros(1, 2, 8, device=device)).device.type == device.type
    assert list(encoding.state_dict()) == []


def test_dropout_applies_in_training_only():
    encoding = d2l.PositionalEncoding(16, 0.5)
    X = torch.zeros(2, 10, 16)
    nonzero = encoding.P[:, :10] != 0
    assert ((encoding(X) == 0) & nonzero).any()  # dropout zeroes some entries of P
    torch.testing.assert_close(encoding.eval()(X), encoding.P[:, :10].expand(2, 10, 16))
