import pytest
import torch
import torch.nn.functional as F

import d2lmini as d2l

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def skip_unsupported(dtype, device):
    if device.type == "mps" and dtype == torch.float64:
        pytest.skip("Apple's MPS has no float64")


def sdpa_weights(queries, keys, allowed):
    """SDPA's attention weights, read off by attending over identity values."""
    num_keys = keys.shape[1]
    eye = torch.eye(num_keys, dtype=queries.dtype, device=queries.device)
    values = eye.expand(queries.shape[0], num_keys, num_keys)
    return F.scaled_dot_product_attention(queries, keys, values, attn_mask=allowed)


def test_sequence_mask_matches_the_book_example():
    X = torch.tensor([[1, 2, 3], [4, 5, 6]])
    out = d2l.sequence_mask(X, torch.tensor([1, 2]))
    assert out.tolist() == [[1, 0, 0], [4, 5, 0]]


def test_sequence_mask_on_3d_input_masks_whole_steps():
    X = torch.ones(2, 3, 4)
    out = d2l.sequence_mask(X, torch.tensor([1, 2]), value=-1)
    assert out[0, 1:].eq(-1).all() and out[0, 0].eq(1).all()
    assert out[1, 2].eq(-1).all() and out[1, :2].eq(1).all()


def test_sequence_mask_leaves_its_input_unchanged():
    X = torch.ones(2, 3)
    d2l.sequence_mask(X, torch.tensor([1, 2]))
    assert X.eq(1).all()


def test_masked_softmax_without_lengths_is_softmax():
    X = torch.randn(2, 3, 4)
    torch.testing.assert_close(d2l.masked_softmax(X, None), torch.softmax(X, -1))


def test_masked_softmax_hand_computed_case():
    X = torch.tensor([[[0.0, 0.0, 5.0]], [[1.0, 0.0, 0.0]]])
    out = d2l.masked_softmax(X, torch.tensor([2, 1]))
    assert out.tolist() == [[[0.5, 0.5, 0.0]], [[1.0, 0.0, 0.0]]]


def test_masked_softmax_2d_lengths_apply_per_query():
    X = torch.zeros(1, 3, 3)
    out = d2l.masked_softmax(X, torch.tensor([[1, 2, 3]]))
    expected = torch.tensor([[[1, 0, 0], [1 / 2, 1 / 2, 0], [1 / 3, 1 / 3, 1 / 3]]])
    torch.testing.assert_close(out, expected)


def test_lengths_above_the_key_count_mean_all_keys():
    X = torch.randn(2, 3, 4)
    torch.testing.assert_close(d2l.masked_softmax(X, torch.tensor([4, 100])), torch.softmax(X, -1))


def test_float_lengths_are_accepted_as_in_the_book():
    X = torch.zeros(1, 1, 4)
    out = d2l.masked_softmax(X, torch.tensor([2.0]))
    assert out.tolist() == [[[0.5, 0.5, 0.0, 0.0]]]


def test_list_lengths_are_accepted():
    X = torch.zeros(2, 1, 2)
    assert d2l.masked_softmax(X, [1, 2]).tolist() == [[[1.0, 0.0]], [[0.5, 0.5]]]


def test_masked_softmax_never_mutates_its_input():
    X = torch.randn(2, 3, 4)
    before = X.clone()
    d2l.masked_softmax(X, torch.tensor([1, 2]))
    assert torch.equal(X, before)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fully_masked_rows_are_all_zero_in_every_dtype(dtype, device):
    skip_unsupported(dtype, device)
    X = torch.randn(2, 2, 5, dtype=dtype, device=device)
    out = d2l.masked_softmax(X, torch.tensor([[0, 3], [5, 0]], device=device))
    assert not out.isnan().any()
    assert out[0, 0].eq(0).all() and out[1, 1].eq(0).all()
    assert out[0, 1, 3:].eq(0).all()
    torch.testing.assert_close(out[0, 1].sum().float(), torch.tensor(1.0, device=device),
                               atol=1e-2, rtol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_valid_rows_match_sdpa_weights(dtype, device):
    skip_unsupported(dtype, device)
    B, Q, K, d = 3, 4, 6, 8
    queries = torch.randn(B, Q, d, dtype=dtype, device=device)
    keys = torch.randn(B, K, d, dtype=dtype, device=device)
    valid_lens = torch.tensor([[1, 2, 6, 9], [3, 3, 3, 3], [5, 1, 4, 2]], device=device)
    allowed = torch.arange(K, device=device) < valid_lens[..., None]
    scores = queries @ keys.transpose(1, 2) / d ** 0.5
    ours = d2l.masked_softmax(scores, valid_lens)
    tol = {torch.float16: 2e-3, torch.bfloat16: 2e-2}.get(dtype, 1e-5)
    torch.testing.assert_close(ours, sdpa_weights(queries, keys, allowed), atol=tol, rtol=tol)


def test_1d_lengths_match_sdpa_weights_with_different_query_and_key_counts(device):
    queries, keys = torch.randn(2, 3, 4, device=device), torch.randn(2, 7, 4, device=device)
    valid_lens = torch.tensor([2, 7], device=device)
    allowed = (torch.arange(7, device=device) < valid_lens[:, None])[:, None, :]
    scores = queries @ keys.transpose(1, 2) / 2
    torch.testing.assert_close(d2l.masked_softmax(scores, valid_lens),
                               sdpa_weights(queries, keys, allowed))


def test_cpu_lengths_with_scores_on_another_device(device):
    X = torch.zeros(2, 1, 2, device=device)
    out = d2l.masked_softmax(X, torch.tensor([1, 2]))  # lengths on the CPU
    assert out.device == X.device
    assert out.cpu().tolist() == [[[1.0, 0.0]], [[0.5, 0.5]]]


def test_gradients_flow_to_valid_scores_only():
    X = torch.randn(1, 2, 3, requires_grad=True)
    weights = d2l.masked_softmax(X, torch.tensor([2]))
    (weights * torch.randn(1, 2, 3)).sum().backward()
    assert X.grad[..., 2].eq(0).all() and X.grad[..., :2].ne(0).any()


def test_causal_valid_lens_give_a_lower_triangular_mask():
    lens = d2l.causal_valid_lens(2, 4)
    assert lens.tolist() == [[1, 2, 3, 4]] * 2
    weights = d2l.masked_softmax(torch.zeros(2, 4, 4), lens)
    assert torch.equal(weights > 0, torch.ones(4, 4, dtype=torch.bool).tril().expand(2, 4, 4))


def test_padding_mask_marks_padding_as_true():
    assert d2l.padding_mask(torch.tensor([1, 3]), 3).tolist() == [[False, True, True], [False, False, False]]


def test_sequence_mask_accepts_infinite_and_dtype_minimum_fills_in_float16():
    X = torch.zeros(1, 3, dtype=torch.float16)
    assert d2l.sequence_mask(X, torch.tensor([1]), value=float("-inf"))[0, 1:].isinf().all()
    smallest = torch.finfo(torch.float16).min
    assert d2l.sequence_mask(X, torch.tensor([1]), value=smallest)[0, 2].item() == smallest
