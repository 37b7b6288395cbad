import math

import torch

import d2lmini as d2l


def test_kernel_shapes_by_hand():
    u = torch.tensor([0.0, 0.5, 1.0, 2.0])
    torch.testing.assert_close(d2l.gaussian(u), torch.tensor([1.0, math.exp(-0.125), math.exp(-0.5), math.exp(-2)]))
    assert d2l.boxcar(u).tolist() == [1.0, 1.0, 0.0, 0.0]
    assert d2l.constant(u).tolist() == [1.0] * 4
    assert d2l.epanechnikov(u).tolist() == [1.0, 0.75, 0.0, 0.0]


def test_weights_are_queries_by_keys_and_rows_sum_to_one():
    queries, keys = torch.linspace(0, 5, 7), torch.linspace(0, 5, 11)
    preds, weights = d2l.nadaraya_watson(queries, keys, torch.sin(keys), "gaussian", 0.5)
    assert preds.shape == (7,) and weights.shape == (7, 11)
    torch.testing.assert_close(weights.sum(1), torch.ones(7))


def test_gaussian_weights_by_hand():
    preds, weights = d2l.nadaraya_watson(torch.tensor([0.0]), torch.tensor([0.0, 1.0]),
                                         torch.tensor([2.0, 4.0]), "gaussian", 1.0)
    w0 = 1 / (1 + math.exp(-0.5))
    torch.testing.assert_close(weights, torch.tensor([[w0, 1 - w0]]))
    torch.testing.assert_close(preds, torch.tensor([2 * w0 + 4 * (1 - w0)]))


def test_constant_kernel_is_average_pooling():
    keys, values = torch.rand(9), torch.randn(9)
    preds, _ = d2l.nadaraya_watson(torch.rand(4), keys, values, "constant")
    torch.testing.assert_close(preds, values.mean().expand(4))


def test_tiny_sigma_gives_no_nan_and_picks_the_nearest_key():
    keys = torch.tensor([0.0, 1.0, 2.0])
    queries = torch.tensor([0.1, 1.9])
    naive = d2l.gaussian((queries[:, None] - keys) / 0.001)
    assert (naive / naive.sum(1, keepdim=True)).isnan().all()  # the problem being solved
    preds, weights = d2l.nadaraya_watson(queries, keys, torch.tensor([5.0, 6.0, 7.0]), "gaussian", 0.001)
    assert not weights.isnan().any()
    assert weights.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    assert preds.tolist() == [5.0, 7.0]


def test_boxcar_query_outside_every_window_gets_zero_weights():
    preds, weights = d2l.nadaraya_watson(torch.tensor([0.0, 10.0]), torch.tensor([0.0, 0.5]),
                                         torch.tensor([1.0, 3.0]), "boxcar", 1.0)
    assert weights.tolist() == [[0.5, 0.5], [0.0, 0.0]]
    assert preds.tolist() == [2.0, 0.0]


def test_leave_one_out_drops_each_point_from_its_own_row():
    keys, values = d2l.leave_one_out(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([10.0, 20.0, 30.0]))
    assert keys.tolist() == [[2.0, 3.0], [1.0, 3.0], [1.0, 2.0]]
    assert values.tolist() == [[20.0, 30.0], [10.0, 30.0], [10.0, 20.0]]


def test_learnable_width_trains_towards_a_better_fit():
    torch.manual_seed(0)
    x = torch.sort(torch.rand(50) * 5).values
    y = 2 * torch.sin(x) + x + torch.normal(0.0, 0.5, (50,))
    keys, values = d2l.leave_one_out(x, y)
    net = d2l.NWKernelRegression(sigma=3.0)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = ((net(x, keys, values) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert 0 < net.sigma.item() < 3.0
    assert net.attention_weights.shape == (50, 49)


def test_without_leave_one_out_the_width_collapses_to_copying_y():
    x = torch.linspace(0, 5, 30)
    y = torch.randn(30)
    net = d2l.NWKernelRegression(sigma=0.01)
    preds = net(x, x, y)
    torch.testing.assert_close(preds, y)  # each query finds itself: zero training loss


def test_a_learners_own_kernel_function_works_like_the_named_one():
    queries, keys, values = torch.rand(5), torch.rand(8), torch.randn(8)
    own = d2l.nadaraya_watson(queries, keys, values, lambda u: torch.clamp(1 - u.abs(), min=0), 2.0)
    _, weights = own
    direct = torch.clamp(1 - ((queries[:, None] - keys) / 2).abs(), min=0)
    torch.testing.assert_close(weights, direct / direct.sum(1, keepdim=True))
