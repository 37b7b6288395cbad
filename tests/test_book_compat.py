"""Calls as the d2l book's attention chapters make them, after import d2lmini as d2l."""

import torch

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
