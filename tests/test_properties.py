"""Property tests: masked softmax over random shapes, lengths and dtypes."""

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import d2lmini as d2l

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
SUM_TOL = {torch.float16: 5e-3, torch.bfloat16: 3e-2, torch.float32: 1e-5, torch.float64: 1e-10}


@st.composite
def scores_and_lengths(draw):
    B, Q, K = draw(st.integers(1, 4)), draw(st.integers(1, 5)), draw(st.integers(1, 7))
    dtype = draw(st.sampled_from(DTYPES))
    scale = draw(st.sampled_from([1.0, 100.0, 1e4]))
    seed = draw(st.integers(0, 2**16))
    X = torch.randn(B, Q, K, generator=torch.Generator().manual_seed(seed)) * scale
    X = X.clamp(-6e4, 6e4).to(dtype)  # stay finite in float16
    per_query = draw(st.booleans())
    shape = (B, Q) if per_query else (B,)
    lens = draw(st.lists(st.integers(0, K + 2), min_size=B * Q if per_query else B,
                         max_size=B * Q if per_query else B))
    return X, torch.tensor(lens).reshape(shape)


@settings(max_examples=150, deadline=None)
@given(scores_and_lengths())
def test_masked_softmax_properties(case):
    X, valid_lens = case
    weights = d2l.masked_softmax(X, valid_lens)
    assert weights.dtype == X.dtype and weights.shape == X.shape
    assert not weights.isnan().any()
    lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None].expand(X.shape[:2])
    keys = torch.arange(X.shape[-1])
    beyond = keys >= lens[..., None]
    assert weights[beyond].eq(0).all(), "weight leaked beyond a valid length"
    sums = weights.double().sum(-1)
    has_valid = lens > 0
    assert torch.allclose(sums[has_valid], torch.ones_like(sums[has_valid]), atol=SUM_TOL[X.dtype])
    assert sums[~has_valid].eq(0).all()
    assert (weights >= 0).all()
