import pytest
import torch

import d2lmini as d2l


def test_book_call_returns_a_figure_with_one_colorbar():
    weights = torch.rand(1, 1, 2, 10)
    fig = d2l.show_heatmaps(weights, xlabel="Keys", ylabel="Queries")
    panels = [ax for ax in fig.axes if ax.get_images()]
    assert len(panels) == 1 and len(fig.axes) == 2  # one panel plus its colorbar
    assert panels[0].get_xlabel() == "Keys" and panels[0].get_ylabel() == "Queries"


@pytest.mark.parametrize("shape,panels", [((3, 4), 1), ((2, 3, 4), 2), ((2, 3, 3, 4), 6)])
def test_accepts_2d_3d_and_4d_input(shape, panels):
    fig = d2l.show_heatmaps(torch.rand(shape), "Keys", "Queries")
    assert sum(1 for ax in fig.axes if ax.get_images()) == panels


def test_all_panels_share_one_colour_scale():
    matrices = torch.stack([torch.full((2, 2), 0.1), torch.full((2, 2), 0.9)])
    fig = d2l.show_heatmaps(matrices, "Keys", "Queries", titles=["low", "high"])
    limits = [ax.get_images()[0].get_clim() for ax in fig.axes if ax.get_images()]
    assert limits == [pytest.approx((0.1, 0.9))] * 2
    assert [ax.get_title() for ax in fig.axes[:2]] == ["low", "high"]


def test_accepts_requires_grad_and_device_tensors(device):
    weights = torch.rand(2, 3, device=device, requires_grad=True) * 1
    d2l.show_heatmaps(weights, "Keys", "Queries")


def test_constant_matrix_still_gets_a_scale():
    fig = d2l.show_heatmaps(torch.zeros(2, 2), "Keys", "Queries")
    vmin, vmax = fig.axes[0].get_images()[0].get_clim()
    assert vmax > vmin


def test_show_weights_prints_each_weight_and_leaves_masked_cells_blank():
    mask = d2l.attention_mask(torch.tensor([2]), 1, 2, 4)[0]  # (1, keys): keys 0 and 1 valid
    weights = d2l.masked_softmax(torch.zeros(1, 2, 4), torch.tensor([2]))[0]  # (2, 4)
    ax = d2l.show_weights(weights, mask=mask, xlabels=list("abcd"))
    texts = sorted(t.get_text() for t in ax.texts)
    assert texts == ["0.50"] * 4  # two queries x two valid keys; the masked cells print nothing
    assert ax.get_xlabel() == "Keys" and ax.get_ylabel() == "Queries"
    assert [t.get_text() for t in ax.get_xticklabels()] == list("abcd")
    assert ax.collections[0].get_clim() == (0, 1)
    assert ax.patch.get_hatch() == "//"  # what shows through a masked cell


def test_show_weights_shows_a_zero_weight_that_is_not_masked():
    weights = torch.tensor([[1.0, 0.0]])
    ax = d2l.show_weights(weights, mask=torch.tensor([[True, True]]))
    assert sorted(t.get_text() for t in ax.texts) == ["0.00", "1.00"]


@pytest.mark.parametrize("call,error,fragment", [
    (lambda: d2l.show_weights(torch.rand(2, 2, 2)), ValueError, "one (queries, keys) matrix"),
    (lambda: d2l.show_weights(torch.rand(2, 3), mask=torch.ones(2, 3)), TypeError, "boolean"),
    (lambda: d2l.show_weights(torch.rand(2, 3), mask=torch.ones(2, 2, dtype=torch.bool)), ValueError,
     "does not broadcast"),
])
def test_show_weights_bad_input(call, error, fragment):
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value)
