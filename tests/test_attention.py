import math

import pytest
import torch
import torch.nn.functional as F

import d2lmini as d2l


def allowed_mask(valid_lens, num_queries, num_keys):
    """Boolean (batch, queries, keys) mask, True where attention is allowed."""
    if valid_lens.dim() == 1:
        valid_lens = valid_lens[:, None].expand(-1, num_queries)
    return torch.arange(num_keys, device=valid_lens.device) < valid_lens[..., None]


# ---- additive attention ------------------------------------------------------

def test_additive_attention_hand_computed_case():
    attention = d2l.AdditiveAttention(num_hiddens=2, dropout=0.0, key_size=2, query_size=2)
    with torch.no_grad():
        attention.W_q.weight.copy_(torch.eye(2))
        attention.W_k.weight.copy_(torch.eye(2))
        attention.w_v.weight.copy_(torch.tensor([[1.0, 1.0]]))
    queries = torch.tensor([[[0.5, 0.0]]])
    keys = torch.tensor([[[0.0, 0.0], [1.0, 0.0]]])
    values = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    out = attention(queries, keys, values)
    # scores: w_v . tanh(q + k_i) = tanh(0.5), tanh(1.5); weights: their softmax
    s1, s2 = math.tanh(0.5), math.tanh(1.5)
    w1 = math.exp(s1) / (math.exp(s1) + math.exp(s2))
    torch.testing.assert_close(out, torch.tensor([[[w1, 1 - w1]]]))
    torch.testing.assert_close(attention.attention_weights, torch.tensor([[[w1, 1 - w1]]]))


@pytest.mark.parametrize("style", ["lazy", "eager"])
def test_additive_attention_book_toy_example(style, device):
    kwargs = {} if style == "lazy" else {"key_size": 2, "query_size": 20}
    attention = d2l.AdditiveAttention(num_hiddens=8, dropout=0.1, **kwargs).to(device)
    attention.eval()
    queries = torch.normal(0, 1, (2, 1, 20), device=device)
    keys = torch.ones((2, 10, 2), device=device)
    values = torch.arange(40, dtype=torch.float32, device=device).reshape(1, 10, 4).repeat(2, 1, 1)
    out = attention(queries, keys, values, torch.tensor([2, 6], device=device))
    torch.testing.assert_close(out.cpu(), torch.tensor([[[2.0, 3, 4, 5]], [[10.0, 11, 12, 13]]]))
    weights = attention.attention_weights.cpu()
    torch.testing.assert_close(weights[0, 0, :2], torch.full((2,), 0.5))
    assert weights[0, 0, 2:].eq(0).all() and weights[1, 0, 6:].eq(0).all()


def _first_call(module, device, dtype, sizes=(5, 3, 4)):
    """Seed, move ``module`` to ``device``, call it once on inputs drawn from a private generator."""
    generator = torch.Generator().manual_seed(1)
    q_size, k_size, v_size = sizes
    inputs = [torch.randn(2, n, size, generator=generator, dtype=dtype).to(device)
              for n, size in ((3, q_size), (6, k_size), (6, v_size))]
    torch.manual_seed(7)
    module = module().to(device, dtype)
    state = torch.get_rng_state()
    output = module(*inputs)
    return module, state, output


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_lazy_layers_draw_their_weights_on_the_cpu_whatever_the_device(device, dtype, bias):
    """From one seed, a lazy layer gets the same first weights on every device:
    those an nn.Linear of the inferred size draws from the CPU generator."""
    def build():
        return d2l.MultiHeadAttention(8, 2, 0.0, bias=bias)  # W_q, W_k, W_v lazy; W_o eager

    on_cpu, _, cpu_output = _first_call(build, torch.device("cpu"), dtype)
    on_device, state, output = _first_call(build, device, dtype)
    for name, parameter in on_cpu.named_parameters():
        drawn = dict(on_device.named_parameters())[name]
        assert drawn.device.type == device.type and drawn.dtype == dtype
        torch.testing.assert_close(drawn.cpu(), parameter, rtol=0, atol=0, msg=name)
    torch.testing.assert_close(output.cpu(), cpu_output)
    # The first lazy layer (W_q, 5 -> 8) drew exactly what nn.Linear(5, 8) draws from that point.
    torch.set_rng_state(state)
    reference = torch.nn.Linear(5, 8, bias=bias)
    torch.testing.assert_close(on_device.W_q.weight.cpu(), reference.weight.to(dtype), rtol=0, atol=0)
    if bias:
        torch.testing.assert_close(on_device.W_q.bias.cpu(), reference.bias.to(dtype), rtol=0, atol=0)


def test_additive_attention_lazy_layers_are_device_independent(device):
    def build():
        return d2l.AdditiveAttention(6, 0.0)

    on_cpu, _, cpu_output = _first_call(build, torch.device("cpu"), torch.float32, sizes=(4, 2, 3))
    on_device, _, output = _first_call(build, device, torch.float32, sizes=(4, 2, 3))
    torch.testing.assert_close(on_device.W_k.weight.cpu(), on_cpu.W_k.weight, rtol=0, atol=0)
    torch.testing.assert_close(on_device.W_q.weight.cpu(), on_cpu.W_q.weight, rtol=0, atol=0)
    torch.testing.assert_close(output.cpu(), cpu_output)


@pytest.mark.parametrize("q_size,k_size", [(20, 2), (3, 3), (1, 7)])
def test_additive_attention_matches_a_plain_torch_formula(q_size, k_size):
    attention = d2l.AdditiveAttention(5, 0.0)
    queries, keys = torch.randn(2, 3, q_size), torch.randn(2, 4, k_size)
    values, valid_lens = torch.randn(2, 4, 6), torch.tensor([3, 4])
    out = attention(queries, keys, values, valid_lens)
    Wq, Wk, wv = attention.W_q.weight, attention.W_k.weight, attention.w_v.weight[0]
    scores = torch.einsum("h,bqkh->bqk", wv, torch.tanh(
        (queries @ Wq.T)[:, :, None, :] + (keys @ Wk.T)[:, None, :, :]))
    scores = scores.masked_fill(~allowed_mask(valid_lens, 3, 4), float("-inf"))
    torch.testing.assert_close(out, torch.softmax(scores, -1) @ values)


def test_additive_attention_state_dict_has_the_books_names():
    attention = d2l.AdditiveAttention(key_size=2, query_size=20, num_hiddens=8, dropout=0.1)
    assert set(attention.state_dict()) == {"W_q.weight", "W_k.weight", "w_v.weight"}


# ---- scaled dot-product attention -------------------------------------------

@pytest.mark.parametrize("shape", [(2, 1, 10, 2, 4), (3, 5, 5, 8, 8), (1, 7, 3, 16, 2)])
@pytest.mark.parametrize("lens_kind", ["none", "1d", "2d"])
def test_dot_product_attention_matches_sdpa(shape, lens_kind, device):
    B, Q, K, d, v = shape
    queries, keys = torch.randn(B, Q, d, device=device), torch.randn(B, K, d, device=device)
    values = torch.randn(B, K, v, device=device)
    valid_lens = {"none": None,
                  "1d": torch.randint(1, K + 1, (B,), device=device),
                  "2d": torch.randint(1, K + 1, (B, Q), device=device)}[lens_kind]
    attention = d2l.DotProductAttention(dropout=0.5).eval()
    ours = attention(queries, keys, values, valid_lens)
    mask = None if valid_lens is None else allowed_mask(valid_lens, Q, K)
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(queries, keys, values, attn_mask=mask))


def test_dot_product_attention_book_example():
    queries = torch.normal(0, 1, (2, 1, 2))
    keys, values = torch.ones((2, 10, 2)), torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    attention = d2l.DotProductAttention(dropout=0.5)
    attention.eval()
    out = attention(queries, keys, values, torch.tensor([2, 6]))
    torch.testing.assert_close(out, torch.tensor([[[2.0, 3, 4, 5]], [[10.0, 11, 12, 13]]]))


def test_dropout_acts_in_training_mode_only():
    attention = d2l.DotProductAttention(dropout=0.5)
    q, k, v = torch.randn(1, 50, 4), torch.randn(1, 50, 4), torch.randn(1, 50, 4)
    train_out = attention(q, k, v)
    attention.eval()
    assert not torch.allclose(train_out, attention(q, k, v))


def test_attention_gradients_reach_every_input():
    q, k, v = (torch.randn(2, 3, 4, requires_grad=True) for _ in range(3))
    d2l.DotProductAttention(0.0)(q, k, v, torch.tensor([2, 3])).sum().backward()
    assert all(t.grad is not None and t.grad.abs().sum() > 0 for t in (q, k, v))


# ---- multi-head attention ---------------------------------------------------

@pytest.mark.parametrize("sizes", [(16, 16, 16), (16, 6, 10)])
@pytest.mark.parametrize("num_heads", [1, 2, 4])
@pytest.mark.parametrize("bias", [False, True])
def test_multihead_matches_torch_multihead(sizes, num_heads, bias, device):
    num_hiddens, key_size, value_size = sizes
    B, Q, K = 2, 3, 5
    mha = d2l.MultiHeadAttention(num_hiddens, num_heads, 0.0, bias=bias).to(device).eval()
    queries = torch.randn(B, Q, num_hiddens, device=device)
    keys, values = torch.randn(B, K, key_size, device=device), torch.randn(B, K, value_size, device=device)
    valid_lens = torch.tensor([2, 5], device=device)
    ours = mha(queries, keys, values, valid_lens)
    torch_mha = d2l.to_torch_multihead(mha).eval()
    theirs, weights = torch_mha(queries, keys, values, key_padding_mask=d2l.padding_mask(valid_lens, K),
                                average_attn_weights=False)
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(mha.attention_weights, weights, atol=1e-5, rtol=1e-4)


def test_multihead_book_example_shapes():
    num_hiddens, num_heads = 100, 5
    attention = d2l.MultiHeadAttention(num_hiddens, num_heads, 0.5)
    batch_size, num_queries, num_kvpairs = 2, 4, 6
    X = torch.ones((batch_size, num_queries, num_hiddens))
    Y = torch.ones((batch_size, num_kvpairs, num_hiddens))
    d2l.check_shape(attention(X, Y, Y, torch.tensor([3, 2])), (batch_size, num_queries, num_hiddens))
    assert attention.attention_weights.shape == (batch_size, num_heads, num_queries, num_kvpairs)
    assert attention.attention_weights[0, :, :, 3:].eq(0).all()


def test_multihead_explicit_sizes_build_eager_layers():
    mha = d2l.MultiHeadAttention(8, 2, 0.0, query_size=3, key_size=4, value_size=5)
    assert (mha.W_q.in_features, mha.W_k.in_features, mha.W_v.in_features) == (3, 4, 5)
    assert mha(torch.randn(1, 2, 3), torch.randn(1, 6, 4), torch.randn(1, 6, 5)).shape == (1, 2, 8)


def test_transpose_output_inverts_transpose_qkv():
    mha = d2l.MultiHeadAttention(12, 3, 0.0)
    X = torch.randn(2, 5, 12)
    folded = mha.transpose_qkv(X)
    assert folded.shape == (6, 5, 4)
    torch.testing.assert_close(folded[1], X[0, :, 4:8])  # example 0, head 1
    torch.testing.assert_close(mha.transpose_output(folded), X)


def test_multihead_2d_lengths_reach_every_head():
    mha = d2l.MultiHeadAttention(8, 2, 0.0)
    X = torch.randn(1, 3, 8)
    mha(X, X, X, d2l.causal_valid_lens(1, 3))
    tril = torch.ones(3, 3, dtype=torch.bool).tril()
    assert torch.equal(mha.attention_weights[0] > 0, tril.expand(2, 3, 3))


def test_to_torch_multihead_needs_initialised_weights():
    with pytest.raises(ValueError, match="no weights yet"):
        d2l.to_torch_multihead(d2l.MultiHeadAttention(8, 2, 0.0))


# ---- blockwise attention (the online softmax) --------------------------------

@pytest.mark.parametrize("block_size", [1, 3, 7, 16, 50, 64])  # 3 and 7 do not divide 50; 64 > 50
def test_blockwise_attention_matches_the_explicit_path_and_sdpa(block_size, device):
    generator = torch.Generator().manual_seed(0)
    queries = torch.randn(2, 5, 8, generator=generator).to(device)
    keys = torch.randn(2, 50, 8, generator=generator).to(device)
    values = torch.randn(2, 50, 3, generator=generator).to(device)
    explicit = d2l.DotProductAttention(0.0)(queries, keys, values)
    out = d2l.blockwise_attention(queries, keys, values, block_size)
    torch.testing.assert_close(out, explicit)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(queries, keys, values))


def test_blockwise_attention_survives_scores_that_would_overflow_exp():
    # exp(200) overflows float32: the running maximum keeps every exponent at or below 0.
    queries = torch.tensor([[[20.0, 0.0]]])
    keys = torch.tensor([[[1.0, 0.0], [10.0, 0.0], [14.0, 0.0]]]) * math.sqrt(2)  # scores 20, 200, 280
    values = torch.tensor([[[1.0], [2.0], [3.0]]])
    out = d2l.blockwise_attention(queries, keys, values, 1)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, d2l.DotProductAttention(0.0)(queries, keys, values))


def test_blockwise_attention_errors_name_the_argument():
    q, k, v = torch.randn(1, 2, 4), torch.randn(1, 6, 4), torch.randn(1, 6, 3)
    with pytest.raises(ValueError, match="block_size must be positive"):
        d2l.blockwise_attention(q, k, v, 0)
    with pytest.raises(TypeError, match="block_size must be an int"):
        d2l.blockwise_attention(q, k, v, 2.0)
    with pytest.raises(ValueError, match="query and key sizes"):
        d2l.blockwise_attention(torch.randn(1, 2, 5), k, v, 2)
    with pytest.raises(ValueError, match="keys must hold at least one key"):
        d2l.blockwise_attention(q, torch.randn(1, 0, 4), torch.randn(1, 0, 3), 2)
