"""PositionalEncoding: P[i, 2j] = sin(i / 10000^(2j/d)), P[i, 2j+1] = cos(the same angle)."""

import math

import pytest
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


def test_base_sets_the_wavelengths():
    P = d2l.PositionalEncoding(4, 0.0, max_len=3, base=100).P[0]
    expected = torch.tensor([[math.sin(i), math.cos(i), math.sin(i / 10), math.cos(i / 10)] for i in range(3)])
    torch.testing.assert_close(P, expected)


def test_the_default_base_is_the_books_10000():
    torch.testing.assert_close(d2l.PositionalEncoding(6, 0.0, max_len=5).P,
                               d2l.PositionalEncoding(6, 0.0, max_len=5, base=10000.0).P)


def test_base_is_keyword_only_so_the_books_positional_call_is_unchanged():
    with pytest.raises(TypeError):
        d2l.PositionalEncoding(4, 0.0, 10, 100)


@pytest.mark.parametrize("base,error,fragments", [
    (1, ValueError, ["base must be a finite number greater than 1", "got 1"]),
    (0.5, ValueError, ["greater than 1", "got 0.5"]),
    (-10, ValueError, ["greater than 1", "got -10"]),
    (math.inf, ValueError, ["finite", "got inf"]),
    (math.nan, ValueError, ["got nan"]),
    ("10000", TypeError, ["base must be a number", "str '10000'"]),
    (True, TypeError, ["base must be a number", "bool True"]),
])
def test_a_base_of_one_or_less_is_refused_with_a_clear_error(base, error, fragments):
    with pytest.raises(error) as info:
        d2l.PositionalEncoding(8, 0.0, base=base)
    for fragment in fragments:
        assert fragment in str(info.value)
