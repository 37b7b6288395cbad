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
