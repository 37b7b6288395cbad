"""Calls as the d2l book's attention chapters make them, after import d2lmini as d2l."""

import math

import numpy as np
import torch
from torch import nn

import d2lmini as d2l


def test_masked_softmax_calls_from_the_book():
    assert d2l.masked_softmax(torch.rand(2, 2, 4), torch.tensor([2, 3])).shape == (2, 2, 4)
    assert d2l.masked_softmax(torch.rand(2, 2, 4), torch.tensor([[1, 3], [2, 4]])).shape == (2, 2, 4)


def test_batch_matrix_multiplication_shapes():
    Q, K = d2l.ones((2, 3, 4)), d2l.ones((2, 4, 6))
    d2l.check_shape(torch.bmm(Q, K), (2, 3, 6))


def test_older_book_style_with_explicit_sizes_and_reshape():
    queries, keys = d2l.normal(0, 1, (2, 1, 20)), d2l.ones((2, 10, 2))
    values = d2l.reshape(d2l.arange(40, dtype=d2l.float32), (1, 10, 4)).repeat(2, 1, 1)
    valid_lens = d2l.tensor([2, 6])
    attention = d2l.AdditiveAttention(key_size=2, query_size=20, num_hiddens=8, dropout=0.1)
    attention.eval()
    out = attention(queries, keys, values, valid_lens)
    fig = d2l.show_heatmaps(d2l.reshape(attention.attention_weights, (1, 1, 2, 10)),
                            xlabel="Keys", ylabel="Queries")
    assert out.shape == (2, 1, 4) and fig is not None


def test_the_devices_a_training_loop_asks_for():
    devices = d2l.try_all_gpus()
    net = d2l.DotProductAttention(0.1).to(devices[0])
    assert net(torch.ones(1, 1, 2, device=devices[0]), torch.ones(1, 3, 2, device=devices[0]),
               torch.ones(1, 3, 4, device=devices[0])).shape == (1, 1, 4)


# The five sections of the book's chapter "Attention Mechanisms and Transformers"
# (d2l-en release 1.0.3), each as its PyTorch cells make their calls: the same
# d2l names, the same inputs, in the same order. Each test asserts the shapes
# and numbers that the section's text states. The classes a section defines for
# itself are written here in this project's words, with the same d2l calls.


def test_section_queries_keys_values():
    d2l.use_svg_display()
    attention_weights = d2l.reshape(d2l.eye(10), (1, 1, 10, 10))
    # The section draws its heatmap with d2l.plt and d2l.numpy, as d2l.show_heatmaps then does.
    fig, axes = d2l.plt.subplots(1, 1, figsize=(2.5, 2.5), sharex=True, sharey=True, squeeze=False)
    image = axes[0, 0].imshow(d2l.numpy(attention_weights[0, 0]), cmap="Reds")
    fig.colorbar(image, ax=axes, shrink=0.6)
    fig = d2l.show_heatmaps(attention_weights, xlabel="Keys", ylabel="Queries")
    drawn = fig.axes[0].get_images()[0].get_array()
    # "the attention weight is one only when the query and the key are the same"
    assert drawn.shape == (10, 10) and (drawn == np.eye(10)).all()
    assert fig.axes[0].get_xlabel() == "Keys" and fig.axes[0].get_ylabel() == "Queries"


def _book_kernels():
    """The four kernels of the attention-pooling section, written with the d2l names it uses."""
    def gaussian(x):
        return d2l.exp(-x ** 2 / 2)

    def boxcar(x):
        return d2l.abs(x) < 1.0

    def constant(x):
        return 1.0 + 0 * x

    def epanechikov(x):
        return torch.max(1 - d2l.abs(x), torch.zeros_like(x))

    return gaussian, boxcar, constant, epanechikov


def _book_nadaraya_watson(x_train, y_train, x_val, kernel):
    """Keys down the rows, queries across the columns; each column normalised, as the section does it."""
    dists = d2l.reshape(x_train, (-1, 1)) - d2l.reshape(x_val, (1, -1))  # (keys, queries)
    k = d2l.astype(kernel(dists), d2l.float32)
    attention_w = k / d2l.reduce_sum(k, 0)
    return y_train @ attention_w, attention_w


def test_section_attention_pooling():
    d2l.use_svg_display()
    fig, axes = d2l.plt.subplots(1, 4, sharey=True, figsize=(12, 3))
    kernels = _book_kernels()
    x = d2l.arange(-2.5, 2.5, 0.1)
    for kernel, ax in zip(kernels, axes):
        ax.plot(d2l.numpy(x), d2l.numpy(kernel(x)))
    gaussian, boxcar, constant, epanechikov = kernels
    zero = torch.tensor([0.0])
    assert gaussian(zero).item() == 1.0 and boxcar(torch.tensor([0.5, 1.5])).tolist() == [True, False]
    assert epanechikov(torch.tensor([0.5, 2.0])).tolist() == [0.5, 0.0]

    def f(x):
        return 2 * d2l.sin(x) + x

    n = 40  # "We draw 40 training examples."
    x_train, _ = torch.sort(d2l.rand(n) * 5)
    y_train = f(x_train) + d2l.randn(n)
    x_val = d2l.arange(0, 5, 0.1)
    y_val = f(x_val)
    assert x_train.shape == y_train.shape == (40,) and x_val.shape == y_val.shape == (50,)
    for kernel in kernels:
        y_hat, attention_w = _book_nadaraya_watson(x_train, y_train, x_val, kernel)
        assert y_hat.shape == (50,) and attention_w.shape == (40, 50)
        torch.testing.assert_close(attention_w.sum(0), torch.ones(50))
    # "the constant kernel ... leads to the trivial estimate f(x) = 1/n sum_i y_i"
    y_hat, _ = _book_nadaraya_watson(x_train, y_train, x_val, constant)
    torch.testing.assert_close(y_hat, y_train.mean().expand(50))
    # The Gaussian estimate is d2lmini's Nadaraya-Watson pooling with width 1.
    y_hat, attention_w = _book_nadaraya_watson(x_train, y_train, x_val, gaussian)
    expected, weights = d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", sigma=1.0)
    torch.testing.assert_close(y_hat, expected, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(attention_w, weights.T, atol=1e-6, rtol=1e-6)

    # "the narrower the kernel, the narrower the range of large attention weights"
    def gaussian_with_width(sigma):
        return lambda x: d2l.exp(-x ** 2 / (2 * sigma ** 2))

    largest = [_book_nadaraya_watson(x_train, y_train, x_val, gaussian_with_width(sigma))[1].max(0).values.mean().item()
               for sigma in (0.1, 0.2, 0.5, 1)]  # each query's largest weight, averaged over the queries
    assert largest == sorted(largest, reverse=True) and largest[0] > 5 * largest[-1]


def test_section_attention_scoring_functions():
    # masked_softmax with 1-D, then 2-D valid lengths: weights past each length are 0.
    weights = d2l.masked_softmax(torch.rand(2, 2, 4), d2l.tensor([2, 3]))
    assert (weights[0, :, 2:] == 0).all() and (weights[1, :, 3:] == 0).all()
    weights = d2l.masked_softmax(torch.rand(2, 2, 4), d2l.tensor([[1, 3], [2, 4]]))
    assert (weights[0, 0, 1:] == 0).all() and (weights[0, 1, 3:] == 0).all() and (weights[1, 0, 2:] == 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2))
    Q, K = d2l.ones((2, 3, 4)), d2l.ones((2, 4, 6))
    d2l.check_shape(torch.bmm(Q, K), (2, 3, 6))

    queries = d2l.normal(0, 1, (2, 1, 2))
    keys = d2l.normal(0, 1, (2, 10, 2))
    values = d2l.normal(0, 1, (2, 10, 4))
    valid_lens = d2l.tensor([2, 6])
    attention = d2l.DotProductAttention(dropout=0.5)
    attention.eval()
    d2l.check_shape(attention(queries, keys, values, valid_lens), (2, 1, 4))
    # "the attention weights vanish for anything beyond the second and sixth column"
    weights = attention.attention_weights
    assert (weights[0, :, 2:] == 0).all() and (weights[1, :, 6:] == 0).all() and (weights[1, :, :6] > 0).all()
    fig = d2l.show_heatmaps(d2l.reshape(attention.attention_weights, (1, 1, 2, 10)), xlabel="Keys", ylabel="Queries")
    assert fig.axes[0].get_images()[0].get_array().shape == (2, 10)

    queries = d2l.normal(0, 1, (2, 1, 20))
    attention = d2l.AdditiveAttention(num_hiddens=8, dropout=0.1)
    attention.eval()
    d2l.check_shape(attention(queries, keys, values, valid_lens), (2, 1, 4))
    weights = attention.attention_weights
    assert (weights[0, :, 2:] == 0).all() and (weights[1, :, 6:] == 0).all()
    d2l.show_heatmaps(d2l.reshape(attention.attention_weights, (1, 1, 2, 10)), xlabel="Keys", ylabel="Queries")


class BookStyleMultiHead(d2l.Module):
    """Multi-head attention as the multihead-attention section builds it: a d2l.Module, lazy layers."""

    def __init__(self, num_hiddens, num_heads, dropout, bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.attention = d2l.DotProductAttention(dropout)
        self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_o = nn.LazyLinear(num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens):
        queries = self.transpose_qkv(self.W_q(queries))  # (batch*heads, queries, hiddens/heads)
        keys = self.transpose_qkv(self.W_k(keys))
        values = self.transpose_qkv(self.W_v(values))
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)  # one per head
        output = self.attention(queries, keys, values, valid_lens)
        return self.W_o(self.transpose_output(output))  # (batch, queries, hiddens)


# The section adds the two reshaping methods after the class, with d2l.add_to_class.
@d2l.add_to_class(BookStyleMultiHead)
def transpose_qkv(self, X):
    X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1).permute(0, 2, 1, 3)  # (batch, heads, n, d/h)
    return X.reshape(-1, X.shape[2], X.shape[3])


@d2l.add_to_class(BookStyleMultiHead)
def transpose_output(self, X):
    X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2]).permute(0, 2, 1, 3)  # (batch, n, heads, d/h)
    return X.reshape(X.shape[0], X.shape[1], -1)


def test_section_multihead_attention():
    num_hiddens, num_heads = 100, 5
    attention = BookStyleMultiHead(num_hiddens, num_heads, 0.5)
    batch_size, num_queries, num_kvpairs = 2, 4, 6
    valid_lens = d2l.tensor([3, 2])
    X = d2l.ones((batch_size, num_queries, num_hiddens))
    Y = d2l.ones((batch_size, num_kvpairs, num_hiddens))
    d2l.check_shape(attention(X, Y, Y, valid_lens), (batch_size, num_queries, num_hiddens))
    assert isinstance(attention, nn.Module) and BookStyleMultiHead.transpose_qkv is transpose_qkv
    # With the same weights, d2lmini's MultiHeadAttention gives the book's numbers.
    attention.eval()
    ours = d2l.MultiHeadAttention(num_hiddens, num_heads, 0.5).eval()
    ours(X, Y, Y, valid_lens)  # sizes its lazy layers
    ours.load_state_dict(attention.state_dict())
    queries, keys = torch.randn(batch_size, num_queries, num_hiddens), torch.randn(batch_size, num_kvpairs, num_hiddens)
    torch.testing.assert_close(ours(queries, keys, keys, valid_lens), attention(queries, keys, keys, valid_lens),
                               atol=1e-6, rtol=1e-6)


def test_section_self_attention_and_positional_encoding():
    num_hiddens, num_heads = 100, 5
    attention = d2l.MultiHeadAttention(num_hiddens, num_heads, 0.5)
    batch_size, num_queries, valid_lens = 2, 4, d2l.tensor([3, 2])
    X = d2l.ones((batch_size, num_queries, num_hiddens))
    d2l.check_shape(attention(X, X, X, valid_lens), (batch_size, num_queries, num_hiddens))

    encoding_dim, num_steps = 32, 60
    pos_encoding = d2l.PositionalEncoding(encoding_dim, 0)
    X = pos_encoding(d2l.zeros((1, num_steps, encoding_dim)))
    P = pos_encoding.P[:, :X.shape[1], :]
    torch.testing.assert_close(X, P)  # zeros plus P, and no dropout
    # The book formats 0-d tensors with %d in the legend.
    d2l.plot(d2l.arange(num_steps), P[0, :, 6:10].T, xlabel="Row (position)",
             figsize=(6, 2.5), legend=["Col %d" % d for d in d2l.arange(6, 10)])  # noqa: UP031
    ax = d2l.plt.gca()
    assert [line.get_ydata().shape for line in ax.get_lines()] == [(60,)] * 4
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["Col 6", "Col 7", "Col 8", "Col 9"]
    assert ax.get_xlabel() == "Row (position)" and tuple(ax.figure.get_size_inches()) == (6, 2.5)

    # p[i, 2j] = sin(i / 10000^(2j/d)) and p[i, 2j+1] = cos(i / 10000^(2j/d)), here in float64.
    i = torch.arange(num_steps, dtype=torch.float64)[:, None]
    angles = i / 10000 ** (torch.arange(0, encoding_dim, 2, dtype=torch.float64) / encoding_dim)
    torch.testing.assert_close(P[0, :, 0::2].double(), torch.sin(angles), atol=1e-5, rtol=0)
    torch.testing.assert_close(P[0, :, 1::2].double(), torch.cos(angles), atol=1e-5, rtol=0)
    # "the 6th and the 7th columns ... have a higher frequency than the 8th and the 9th columns"
    sign_changes = (torch.diff(torch.sign(P[0, :, 6:10]), dim=0) != 0).sum(0)
    assert sign_changes[0] > sign_changes[2] and sign_changes[1] > sign_changes[3]

    P = P[0, :, :].unsqueeze(0).unsqueeze(0)
    fig = d2l.show_heatmaps(P, xlabel="Column (encoding dimension)", ylabel="Row (position)", figsize=(3.5, 4),
                            cmap="Blues")
    assert fig.axes[0].get_images()[0].get_array().shape == (60, 32)

    # Relative positions: for a fixed offset delta, row i + delta of each (sin, cos) pair is
    # row i rotated by delta * omega_j, the same linear map for every i.
    delta, j = 5, 3
    omega = 1 / 10000 ** (2 * j / encoding_dim)
    c, s = math.cos(delta * omega), math.sin(delta * omega)
    rotation = torch.tensor([[c, s], [-s, c]], dtype=torch.float64)
    pairs = P[0, 0, :, 2 * j:2 * j + 2].double()  # (positions, 2)
    torch.testing.assert_close(pairs[:-delta] @ rotation.T, pairs[delta:], atol=1e-5, rtol=0)
