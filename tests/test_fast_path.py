"""The fast path (need_weights=False, one SDPA call) gives the explicit path's answer."""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

import d2lmini as d2l

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
TOLERANCE = {torch.float16: 4e-3, torch.bfloat16: 3e-2, torch.float32: 1e-5, torch.float64: 1e-10}
LENS_KINDS = ["none", "1d", "2d", "zeros"]


def make_lens(kind, batch, num_queries, num_keys, device):
    """valid_lens of each kind; "zeros" has examples and queries with no valid key."""
    if kind == "none":
        return None
    if kind == "1d":
        return torch.randint(1, num_keys + 1, (batch,), device=device)
    if kind == "2d":
        return torch.randint(1, num_keys + 1, (batch, num_queries), device=device)
    lens = torch.randint(0, num_keys + 1, (batch, num_queries), device=device)
    lens[0] = 0  # a whole example without keys
    lens[1, 1] = 0  # and one query without keys
    return lens


def skip_if_unsupported(dtype, device):
    if device.type == "mps" and dtype == torch.float64:
        pytest.skip("MPS has no float64")


def assert_close(actual, expected, dtype):
    tol = TOLERANCE[dtype]
    torch.testing.assert_close(actual, expected, atol=tol, rtol=tol)


def empty_queries(lens, batch, num_queries):
    """Boolean (batch, queries): True where a query has no valid key."""
    if lens is None:
        return torch.zeros(batch, num_queries, dtype=torch.bool)
    lens = lens.cpu()
    return (lens[:, None] if lens.dim() == 1 else lens).expand(batch, num_queries) <= 0


# ---- DotProductAttention -----------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind", LENS_KINDS)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("num_queries,num_keys", [(5, 5), (3, 7), (6, 4)])
def test_dot_product_fast_path_equals_explicit_path(dtype, kind, causal, num_queries, num_keys, device):
    skip_if_unsupported(dtype, device)
    B, d, v = 4, 16, 6
    queries = torch.randn(B, num_queries, d, dtype=dtype, device=device)
    keys = torch.randn(B, num_keys, d, dtype=dtype, device=device)
    values = torch.randn(B, num_keys, v, dtype=dtype, device=device)
    lens = make_lens(kind, B, num_queries, num_keys, device)
    explicit = d2l.DotProductAttention(0.3, causal=causal).eval()
    fast = d2l.DotProductAttention(0.3, need_weights=False, causal=causal).eval()
    ours = fast(queries, keys, values, lens)
    assert ours.dtype == dtype and ours.device.type == device.type
    assert not ours.isnan().any()
    assert_close(ours, explicit(queries, keys, values, lens), dtype)
    assert ours[empty_queries(lens, B, num_queries).to(device)].eq(0).all()


@pytest.mark.parametrize("num_queries,num_keys", [(4, 4), (3, 6), (6, 3)])
def test_causal_means_query_i_sees_keys_0_to_i_as_sdpa_is_causal(num_queries, num_keys, device):
    queries = torch.randn(2, num_queries, 8, device=device)
    keys, values = torch.randn(2, num_keys, 8, device=device), torch.randn(2, num_keys, 3, device=device)
    expected = F.scaled_dot_product_attention(queries, keys, values, is_causal=True)
    tril = torch.ones(num_queries, num_keys, dtype=torch.bool, device=device).tril()  # top-left aligned
    torch.testing.assert_close(F.scaled_dot_product_attention(queries, keys, values, attn_mask=tril), expected)
    for need_weights in (True, False):
        attention = d2l.DotProductAttention(0.0, need_weights=need_weights, causal=True)
        torch.testing.assert_close(attention(queries, keys, values), expected)


def test_causal_flag_equals_causal_valid_lens_on_the_explicit_path():
    X = torch.randn(3, 5, 4)
    plain = d2l.DotProductAttention(0.0)
    causal = d2l.DotProductAttention(0.0, causal=True)
    torch.testing.assert_close(causal(X, X, X), plain(X, X, X, d2l.causal_valid_lens(3, 5)))
    torch.testing.assert_close(causal.attention_weights, plain.attention_weights)


def test_causal_combines_with_valid_lens_as_the_shorter_of_the_two():
    X = torch.randn(2, 4, 4)
    lens = torch.tensor([2, 4])
    combined = torch.tensor([[1, 2, 2, 2], [1, 2, 3, 4]])  # min(valid_len, i + 1)
    for need_weights in (True, False):
        causal = d2l.DotProductAttention(0.0, need_weights=need_weights, causal=True)
        torch.testing.assert_close(causal(X, X, X, lens), d2l.DotProductAttention(0.0)(X, X, X, combined))


def test_hand_computed_fast_path_with_a_query_that_sees_no_key():
    # Equal keys give uniform weights over the valid keys; length 0 gives a zero row.
    queries = torch.randn(1, 3, 2)
    keys = torch.ones(1, 4, 2)
    values = torch.tensor([[[1.0], [3.0], [5.0], [100.0]]])
    out = d2l.DotProductAttention(0.0, need_weights=False)(queries, keys, values, torch.tensor([[1, 3, 0]]))
    torch.testing.assert_close(out, torch.tensor([[[1.0], [3.0], [0.0]]]))


@pytest.mark.parametrize("kind", LENS_KINDS)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_fast_path_gradients_equal_explicit_ones_and_are_never_nan(kind, causal):
    B, Q, K = 3, 4, 5
    lens = make_lens(kind, B, Q, K, "cpu")
    inputs = [torch.randn(B, n, 6, dtype=torch.float64) for n in (Q, K, K)]
    grads = []
    for need_weights in (True, False):
        leaves = [x.clone().requires_grad_() for x in inputs]
        attention = d2l.DotProductAttention(0.0, need_weights=need_weights, causal=causal)
        (attention(*leaves, lens) * torch.arange(6.0, dtype=torch.float64)).sum().backward()
        grads.append([leaf.grad for leaf in leaves])
    for explicit, fast in zip(*grads):
        assert not fast.isnan().any()
        torch.testing.assert_close(fast, explicit)
    empty = empty_queries(lens, B, Q)
    assert grads[1][0][empty].eq(0).all()  # a query that sees nothing gets no gradient


def test_fast_path_keeps_no_weights():
    attention = d2l.DotProductAttention(0.0, need_weights=False)
    X = torch.randn(2, 3, 4)
    attention(X, X, X, torch.tensor([1, 2]))
    assert attention.attention_weights is None
    assert attention.need_weights is False and attention.causal is False


def test_explicit_path_weights_are_those_of_the_last_call():
    attention = d2l.DotProductAttention(0.0)
    assert attention.attention_weights is None
    X = torch.randn(2, 3, 4)
    attention(X, X, X, torch.tensor([1, 2]))
    assert attention.attention_weights[0, :, 1:].eq(0).all()
    attention(X, X, X)
    assert attention.attention_weights.gt(0).all()


@pytest.mark.parametrize("flag", ["need_weights", "causal"])
@pytest.mark.parametrize("module", [d2l.DotProductAttention(0.0), d2l.MultiHeadAttention(8, 2, 0.0)],
                         ids=["dot", "multihead"])
def test_paths_are_fixed_at_construction(flag, module):
    with pytest.raises(AttributeError):
        setattr(module, flag, not getattr(module, flag))


def test_a_copied_module_runs_its_own_path_with_its_own_weights():
    mha = d2l.MultiHeadAttention(8, 2, 0.0, query_size=8, key_size=8, value_size=8, need_weights=False)
    clone = copy.deepcopy(mha)
    with torch.no_grad():
        clone.W_o.weight.zero_()
    X = torch.randn(1, 3, 8)
    assert clone(X, X, X).eq(0).all() and mha(X, X, X).ne(0).any()
    assert clone.need_weights is False and clone.attention_weights is None


def test_fast_path_dropout_acts_in_training_mode_only():
    attention = d2l.DotProductAttention(0.5, need_weights=False)
    queries, keys = torch.randn(1, 400, 4), torch.randn(1, 400, 4)
    values = torch.ones(1, 400, 1)
    train_out = attention(queries, keys, values)
    # Dropped weights are zeroed and the rest scaled by 1 / (1 - p): about 1 on average.
    assert not torch.allclose(train_out, torch.ones_like(train_out))
    assert abs(train_out.mean().item() - 1.0) < 0.1
    attention.eval()
    torch.testing.assert_close(attention(queries, keys, values), torch.ones(1, 400, 1))


# ---- MultiHeadAttention -------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind", LENS_KINDS)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("num_queries,num_keys", [(5, 5), (3, 6)])
def test_multihead_fast_path_equals_explicit_path(dtype, kind, causal, num_queries, num_keys, device):
    skip_if_unsupported(dtype, device)
    B, num_hiddens, num_heads = 3, 16, 4
    sizes = dict(query_size=num_hiddens, key_size=6, value_size=10)
    explicit = d2l.MultiHeadAttention(num_hiddens, num_heads, 0.2, bias=True, **sizes, causal=causal)
    fast = d2l.MultiHeadAttention(num_hiddens, num_heads, 0.2, bias=True, **sizes, causal=causal,
                                  need_weights=False)
    fast.load_state_dict(explicit.state_dict())
    explicit, fast = (m.to(device, dtype).eval() for m in (explicit, fast))
    queries = torch.randn(B, num_queries, num_hiddens, dtype=dtype, device=device)
    keys = torch.randn(B, num_keys, 6, dtype=dtype, device=device)
    values = torch.randn(B, num_keys, 10, dtype=dtype, device=device)
    lens = make_lens(kind, B, num_queries, num_keys, device)
    ours = fast(queries, keys, values, lens)
    assert not ours.isnan().any()
    assert_close(ours, explicit(queries, keys, values, lens), dtype)
    assert fast.attention_weights is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("bias", [False, True])
def test_multihead_fast_path_equals_torch_multihead(dtype, causal, bias, device):
    skip_if_unsupported(dtype, device)
    B, T, num_hiddens, num_heads = 2, 6, 24, 3
    mha = d2l.MultiHeadAttention(num_hiddens, num_heads, 0.0, bias=bias, query_size=num_hiddens,
                                 key_size=num_hiddens, value_size=num_hiddens,
                                 need_weights=False, causal=causal).to(device, dtype).eval()
    X = torch.randn(B, T, num_hiddens, dtype=dtype, device=device)
    lens = torch.tensor([4, 6], device=device)
    future = torch.ones(T, T, dtype=torch.bool, device=device).triu(1) if causal else None
    theirs, _ = d2l.to_torch_multihead(mha).eval()(X, X, X, key_padding_mask=d2l.padding_mask(lens, T),
                                                   attn_mask=future, need_weights=False)
    torch.testing.assert_close(mha(X, X, X, lens), theirs)


def test_multihead_fast_path_with_lazy_layers_and_2d_lengths():
    mha = d2l.MultiHeadAttention(8, 2, 0.0, need_weights=False)
    queries, keys = torch.randn(2, 3, 5), torch.randn(2, 4, 7)
    out = mha(queries, keys, keys, torch.tensor([[1, 2, 0], [4, 4, 4]]))
    assert out.shape == (2, 3, 8) and mha.W_k.in_features == 7
    torch.testing.assert_close(out[0, 2], mha.W_o(torch.zeros(8)))  # no key: zero before W_o


def test_split_heads_is_transpose_qkv_before_the_fold():
    mha = d2l.MultiHeadAttention(12, 3, 0.0)
    X = torch.randn(2, 5, 12)
    heads = mha.split_heads(X)
    assert heads.shape == (2, 3, 5, 4)
    torch.testing.assert_close(heads[1, 2], X[1, :, 8:12])
    torch.testing.assert_close(heads.reshape(6, 5, 4), mha.transpose_qkv(X))


# ---- what the fast path allocates ----------------------------------------------

class LargestTensor(TorchDispatchMode):
    """Records every op called, the largest tensor any of them returns, and the largest boolean one."""

    def __init__(self):
        super().__init__()
        self.largest, self.largest_bool, self.ops = 0, 0, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.ops.append(func.__name__)
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor):
                self.largest = max(self.largest, t.numel())
                if t.dtype == torch.bool:
                    self.largest_bool = max(self.largest_bool, t.numel())
        return out


@pytest.mark.parametrize("kind", ["none", "1d", "2d", "zeros"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_fast_path_never_builds_a_queries_by_keys_tensor_per_head(kind, causal):
    B, T, num_hiddens, num_heads = 2, 64, 32, 4
    X = torch.randn(B, T, num_hiddens)
    lens = make_lens(kind, B, T, T, "cpu")
    scores_size = B * num_heads * T * T
    with torch.no_grad(), LargestTensor() as fast:
        d2l.MultiHeadAttention(num_hiddens, num_heads, 0.0, need_weights=False, causal=causal)(X, X, X, lens)
    with torch.no_grad(), LargestTensor() as explicit:
        d2l.MultiHeadAttention(num_hiddens, num_heads, 0.0, causal=causal)(X, X, X, lens)
    assert explicit.largest >= scores_size  # the control: the explicit path does build the scores
    assert fast.largest < scores_size
    if kind == "none" or (kind == "1d" and not causal):
        assert fast.largest < B * T * T  # not even one queries x keys mask per example
    assert "repeat_interleave" not in " ".join(fast.ops)


# ---- the masked softmax underneath the explicit path ------------------------------

def test_1d_lengths_build_a_mask_of_one_row_per_example():
    X = torch.randn(4, 50, 60)
    with LargestTensor() as mode:
        d2l.masked_softmax(X, torch.tensor([1, 20, 3, 60]))
    assert mode.largest_bool == 4 * 60  # (batch, 1, keys), broadcast over the 50 queries
    copies = [op for op in mode.ops if op.startswith(("repeat_interleave", "nonzero", "index_put"))]
    assert copies == []  # no copies of the lengths, no index assignment


def test_clean_up_of_empty_rows_runs_only_when_a_length_is_zero():
    X = torch.randn(2, 3, 4)
    with LargestTensor() as without_empty:
        d2l.masked_softmax(X, torch.tensor([1, 2]))
    with LargestTensor() as with_empty:
        weights = d2l.masked_softmax(X, torch.tensor([0, 2]))
    def writes(mode):
        return [op for op in mode.ops if op.startswith(("masked_fill", "index_put"))]

    assert writes(without_empty) == ["masked_fill.Scalar"]  # the -inf fill only
    # and, without gradients, zeros written into the empty rows alone
    assert writes(with_empty) == ["masked_fill.Scalar", "index_put_.default"]
    assert weights[0].eq(0).all() and weights[1].sum(-1).allclose(torch.ones(3))


@pytest.mark.parametrize("lens", [torch.tensor([0, 2, 0]), torch.tensor([[0, 1], [2, 0], [0, 0]])])
def test_clean_up_with_and_without_gradients_gives_the_same_weights(lens):
    X = torch.randn(3, 2, 4)
    without_grad = d2l.masked_softmax(X, lens)
    with_grad = d2l.masked_softmax(X.clone().requires_grad_(), lens)
    torch.testing.assert_close(with_grad.detach(), without_grad)
    empty = (lens[:, None] if lens.dim() == 1 else lens).expand(3, 2) == 0
    assert without_grad[empty].eq(0).all() and without_grad[~empty].sum(-1).allclose(torch.ones(1))


def test_inplace_masked_softmax_fills_the_scores_it_is_given():
    X = torch.randn(2, 3, 4)
    scratch = X.clone()
    expected = d2l.masked_softmax(X, torch.tensor([1, 3]))
    assert torch.equal(X, scratch)  # the public call leaves its input alone ...
    torch.testing.assert_close(d2l.masked_softmax(scratch, torch.tensor([1, 3]), inplace=True), expected)
    assert scratch[0, :, 1:].eq(float("-inf")).all()  # ... the internal one fills it in place
    assert torch.equal(scratch[1, :, :3], X[1, :, :3])


# ---- bad input -----------------------------------------------------------------------

@pytest.mark.parametrize("build", [
    lambda **flag: d2l.DotProductAttention(0.0, **flag),
    lambda **flag: d2l.MultiHeadAttention(8, 2, 0.0, **flag),
], ids=["dot", "multihead"])
@pytest.mark.parametrize("flag,value", [("need_weights", "no"), ("need_weights", 0), ("causal", 1),
                                        ("causal", None)])
def test_flags_must_be_booleans(build, flag, value):
    with pytest.raises(TypeError) as info:
        build(**{flag: value})
    assert flag in str(info.value) and "True or False" in str(info.value) and repr(value) in str(info.value)


def test_flags_are_keyword_only():
    with pytest.raises(TypeError):
        d2l.DotProductAttention(0.0, False)


@pytest.mark.parametrize("lens,fragments", [
    (torch.tensor([1, 2, 3]), ["valid_lens", "(3,)", "(2,) or (2, 3)"]),
    (torch.ones(2, 5), ["valid_lens", "(2, 5)", "3 queries"]),
    (torch.tensor([1, -1]), ["valid_lens", "non-negative"]),
    (torch.ones(2, 3, 1), ["valid_lens", "1-D or 2-D"]),
])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_fast_path_checks_valid_lens_like_the_explicit_path(lens, fragments, causal):
    X = torch.zeros(2, 3, 8)
    for module in (d2l.DotProductAttention(0.0, need_weights=False, causal=causal),
                   d2l.MultiHeadAttention(8, 2, 0.0, need_weights=False, causal=causal)):
        with pytest.raises(ValueError) as info:
            module(X, X, X, lens)
        for fragment in fragments:
            assert fragment in str(info.value), f"{fragment!r} missing from: {info.value}"


# ---- the benchmark script --------------------------------------------------------------

def test_benchmark_runs_end_to_end_on_a_tiny_workload(capsys):
    from benchmarks import attention as benchmark

    benchmark.main(["--device", "cpu", "--batch", "2", "--tokens", "16", "--width", "8", "--heads", "2",
                    "--repeats", "1", "--warmup", "0", "--pair-repeats", "2", "--sweep", "8",
                    "--mask-small", "2", "3", "4", "--mask-large", "2", "3", "4"])
    out = capsys.readouterr().out
    assert out.count("| book-style explicit (d2l book code) |") == 1
    assert "| d2lmini fast path (need_weights=False) |" in out and "| 8 |" in out
    assert "masked_softmax, inplace=True" in out
    difference = float(out.split("within ")[1].split(" ")[0])
    assert difference < 1e-5  # every implementation computed the same attention
