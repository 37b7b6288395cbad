"""The explorer framework (d2lmini.widgets.explorer and the modules it imports): a new explorer is
controls, compute and draw; it redraws in place, and an artist cannot be forgotten silently."""

import asyncio
import html
from concurrent.futures import ThreadPoolExecutor

import matplotlib
import numpy as np
import pytest
import torch
from IPython.core.events import EventManager, available_events

from d2lmini.plotting import CMAPS, describe_weights
from d2lmini.widgets import KernelPoolingExplorer, MultiHeadExplorer
from d2lmini.widgets import explorer as explorer_module
from d2lmini.widgets.controls import float_slider
from d2lmini.widgets.explorer import READY_CLASS, DescribedImage, Explorer, Shown


class SharpnessExplorer(Explorer):
    """softmax(β · scores) over fixed scores: one slider, one heatmap."""

    repr_controls = ("beta",)

    def __init__(self, beta=1.0):
        self.scores = torch.randn(4, 6, generator=torch.Generator().manual_seed(0))  # (queries, keys)
        controls = {"beta": float_slider("beta", beta, 0.0, 5.0, step=0.5, description="β")}
        super().__init__(controls, figsize=(4, 3), filename="sharpness.png")

    def build(self, plot):
        ax = plot.figure.subplots()
        self.heatmap = plot.heatmap(ax, *self.scores.shape)  # registered: redrawn on every change
        plot.colorbar(ax)

    def compute(self, state):
        weights = torch.softmax(state["beta"] * self.scores, dim=-1)  # (queries, keys)
        return {"weights": weights, "caption": f"softmax({state['beta']:g} × scores)"}

    def draw(self, result):
        self.heatmap.set_array(result["weights"].numpy())


def test_a_new_explorer_is_controls_compute_and_draw():
    explorer = SharpnessExplorer()
    assert repr(explorer) == "SharpnessExplorer(beta=1.0)"
    assert bytes(explorer.image.value).startswith(b"\x89PNG\r\n\x1a\n")
    torch.testing.assert_close(explorer.weights, torch.softmax(explorer.scores, dim=-1))
    assert explorer.caption_text == "softmax(1 × scores)" and explorer.plot.full_draws == 1
    with pytest.raises(ValueError, match=r"beta must be between 0\.0 and 5\.0, got 7"):
        SharpnessExplorer(beta=7)


def test_a_new_explorer_redraws_in_place_without_drawing_the_background_again():
    explorer = SharpnessExplorer()
    figure, plot = explorer.figure, explorer.plot
    for beta in (0.0, 2.5, 5.0, 1.0):
        before = bytes(explorer.image.value)
        explorer.controls["beta"].value = beta
        assert explorer.last_error is None and explorer.image.value != before
        expected = torch.softmax(beta * explorer.scores, dim=-1)
        np.testing.assert_allclose(explorer.heatmap.get_array(), expected.numpy())
        assert explorer.figure is figure and explorer.plot is plot
    explorer.controls["beta"].value = 0.0  # uniform weights, 1/6 each
    explorer.controls["colour_scale"].value = "fit"  # a new colour scale: the colorbar is redrawn, alone
    assert explorer.caption_text == "softmax(0 × scores); colours 0 to 0.2" and plot.norm.vmax == 0.2
    assert explorer.figure is figure and plot.full_draws == 1


def test_an_animated_artist_left_unregistered_is_an_error():
    class Forgetful(SharpnessExplorer):
        def build(self, plot):
            super().build(plot)
            self.line = self.heatmap.axes.plot([0, 5], [0, 3], animated=True)[0]  # never registered

    with pytest.raises(ValueError, match=r"Line2D.* is animated but not registered.*plot\.animate"):
        Forgetful()


def test_moving_an_artist_kept_in_the_background_is_an_error_shown_in_the_explorer():
    class Stale(SharpnessExplorer):
        def build(self, plot):
            super().build(plot)
            self.title = self.heatmap.axes.set_title("")  # drawn once, in the background

        def draw(self, result):
            super().draw(result)
            self.title.set_text(f"largest weight {result['weights'].max():.2f}")

    explorer = Stale()
    image = bytes(explorer.image.value)
    explorer.controls["beta"].value = 3.0
    assert isinstance(explorer.last_error, RuntimeError)
    assert "Text" in str(explorer.last_error) and "plot.animate" in str(explorer.last_error)
    assert "RuntimeError" in explorer.message.value and explorer.image.value == image


def test_registering_twice_or_for_another_figure_is_an_error():
    explorer = SharpnessExplorer()
    with pytest.raises(ValueError, match="registered twice"):
        explorer.plot.animate(explorer.heatmap)
    other = KernelPoolingExplorer()
    with pytest.raises(ValueError, match="belongs to another figure"):
        explorer.plot.animate(other.fit)


def test_registering_an_artist_already_drawn_draws_the_background_again():
    explorer = SharpnessExplorer()
    title = explorer.heatmap.axes.set_title("β")  # not animated: in the next background
    explorer.controls["beta"].value = 2.0
    assert explorer.plot.full_draws == 1
    explorer.plot.animate(title)  # from now on drawn on every change, so out of the background
    assert title.get_animated()
    explorer.controls["beta"].value = 3.0
    assert explorer.last_error is None and explorer.plot.full_draws == 2


@pytest.mark.parametrize("defined", [(), ("compute",), ("compute", "build")])
def test_a_subclass_missing_build_compute_or_draw_fails_at_construction(defined):
    methods = {name: getattr(SharpnessExplorer, name) for name in defined}
    Partial = type("Partial", (Explorer,), methods)
    Partial.scores = torch.zeros(2, 3)
    with pytest.raises(NotImplementedError):
        Partial({"beta": float_slider("beta", 1.0, 0.0, 5.0)})


def test_shown_attributes_read_the_result_drawn_now():
    assert isinstance(KernelPoolingExplorer.x_train, Shown)
    explorer = KernelPoolingExplorer()
    explorer.controls["n_train"].value = 10
    assert explorer.x_train is explorer.result["x_train"] and explorer.x_train.shape == (10,)


# Layouts: each is a figure of its own, drawn ahead ----------------------------------------------

def test_every_layout_is_drawn_ahead_so_a_first_view_draws_nothing_in_full():
    explorer = MultiHeadExplorer()
    assert set(explorer.plots) == {2}  # a script: no event loop, so nothing was done ahead
    explorer.prepare()
    assert set(explorer.plots) == {1, 2, 4, 8}
    assert [plot.full_draws for plot in explorer.plots.values()] == [1, 1, 1, 1]
    for num_heads, head in [(4, "all"), (8, "all"), (8, 5), (1, "all"), (2, "all")]:
        explorer.controls["num_heads"].value = num_heads
        explorer.controls["head"].value = head
        assert explorer.last_error is None
        assert explorer.plot is explorer.plots[num_heads if head == "all" else 1]
    assert [plot.full_draws for plot in explorer.plots.values()] == [1, 1, 1, 1]


def test_without_an_event_loop_a_layout_is_built_when_first_shown():
    explorer = MultiHeadExplorer()
    explorer.controls["num_heads"].value = 4
    assert set(explorer.plots) == {2, 4} and explorer.last_error is None


def _run_in_event_loop(scenario, monkeypatch, delay=0.05):
    monkeypatch.setattr(explorer_module, "IDLE_DELAY", delay)
    monkeypatch.setattr(explorer_module, "IDLE_STEP", 0.01)
    # Playwright's sync API (the browser tests, same session) keeps an event loop
    # running in the main thread: give the scenario a thread and a loop of its own.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, scenario()).result()


async def _until(condition, timeout=20.0):
    waited = 0.0
    while not condition():
        assert waited < timeout, "the idle-time work did not finish"
        await asyncio.sleep(0.02)
        waited += 0.02


def test_in_an_event_loop_the_layouts_are_drawn_in_idle_time(monkeypatch):
    async def scenario():
        explorer = MultiHeadExplorer()
        assert set(explorer.plots) == {2}  # construction builds the layout shown, no more
        await _until(lambda: len(explorer.plots) == 4)
        return explorer

    explorer = _run_in_event_loop(scenario, monkeypatch)
    assert [plot.full_draws for plot in explorer.plots.values()] == [1, 1, 1, 1]
    explorer.controls["num_heads"].value = 8
    assert explorer.plots[8].full_draws == 1 and explorer.last_error is None


def test_idle_time_work_waits_while_controls_move_or_cells_run(monkeypatch):
    events = EventManager(shell=None, available_events=available_events)
    monkeypatch.setattr(explorer_module, "get_ipython", lambda: type("Shell", (), {"events": events})())

    async def scenario():
        explorer = MultiHeadExplorer()
        for step in range(6):  # activity every 0.05 s, under the 0.2 s of quiet needed
            await asyncio.sleep(0.05)
            if step % 2:
                events.trigger("pre_execute")  # a cell starts
            else:
                explorer.controls["valid_len"].value = 5 - step % 3
        assert set(explorer.plots) == {2}, "prepared while the kernel was busy"
        await _until(lambda: len(explorer.plots) == 4)
        return explorer

    explorer = _run_in_event_loop(scenario, monkeypatch, delay=0.2)
    assert explorer.last_error is None
    assert events.callbacks["pre_execute"] == [] and events.callbacks["post_execute"] == []


def test_a_layout_that_fails_in_idle_time_fails_again_when_shown(monkeypatch):
    class Broken(MultiHeadExplorer):
        def build(self, plot):
            if plot.layout == 8:
                raise RuntimeError("no room for 8 panels")
            super().build(plot)

    async def scenario():
        explorer = Broken()
        await _until(lambda: len(explorer.plots) == 3)
        await asyncio.sleep(0.1)
        return explorer

    explorer = _run_in_event_loop(scenario, monkeypatch)
    assert set(explorer.plots) == {1, 2, 4}
    explorer.controls["num_heads"].value = 8
    assert isinstance(explorer.last_error, RuntimeError) and "no room" in explorer.message.value


def test_an_uneven_last_row_has_no_empty_panels():
    """6 heads in a 2 × 4 grid: 6 panels, and the tokens under the lowest panel of each column."""
    explorer = MultiHeadExplorer(num_heads=6, num_hiddens=12)
    panels = [ax for ax in explorer.figure.axes if ax.get_label() != "<colorbar>"]
    assert [ax.get_title() for ax in panels] == [f"head {h}" for h in range(6)]
    tokens_below = [ax.xaxis.get_tick_params()["labelbottom"] for ax in panels]
    assert tokens_below == [False, False, True, True, True, True]
    assert [ax.get_xlabel() for ax in panels] == ["", ""] + ["Key position"] * 4


def test_a_colour_map_recolours_heatmap_and_colorbar_in_place_and_is_kept_per_scale_end():
    explorer = SharpnessExplorer()
    plot, heatmap = explorer.plot, explorer.heatmap
    viridis = bytes(explorer.image.value)
    assert [value for _, value in explorer.controls["colour_map"].options] == [name for _, name in CMAPS]
    for name in ("cividis", "Greys", "Reds"):
        explorer.controls["colour_map"].value = name
        assert explorer.last_error is None and heatmap.get_cmap().name == name
        assert plot.colorbar_mappable.get_cmap().name == name
        largest = np.unravel_index(np.argmax(heatmap.get_array()), heatmap.get_array().shape)
        top_colour = matplotlib.colormaps[name](heatmap.norm(explorer.weights.max().item()))
        np.testing.assert_allclose(heatmap.to_rgba(heatmap.get_array())[largest], top_colour)
    explorer.controls["colour_scale"].value = "fit"
    assert plot.cmap == "Reds" and ((explorer.top, "Reds") in plot._with_colorbar)
    explorer.controls["colour_scale"].value = "fixed"
    explorer.controls["colour_map"].value = "viridis"
    assert bytes(explorer.image.value) == viridis  # the kept viridis colorbar, the same pixels
    assert plot.full_draws == 1  # every map drew its colorbar alone, over the kept background


def test_the_summary_under_the_picture_and_its_tooltip_follow_every_redraw():
    explorer = SharpnessExplorer()
    seen = set()
    for beta in (0.0, 2.5, 5.0):
        explorer.controls["beta"].value = beta
        expected = describe_weights(explorer.weights)
        assert explorer.summary_text == expected and explorer.image.tooltip == expected
        assert html.escape(expected) in explorer.summary.value
        seen.add(expected)
    assert len(seen) == 3
    # ipywidgets 8's front end reads the model's description before it sets the title: an Image
    # without one is never drawn, so the explorer's image syncs an empty one.
    assert explorer.image.get_state()["description"] == "" and isinstance(explorer.image, DescribedImage)
    assert describe_weights(torch.full((4, 6), 1 / 6)) in seen  # β = 0: uniform
    assert explorer.summary in explorer.children and explorer.children.index(explorer.summary) == \
        explorer.children.index(explorer.image) + 1  # right under the picture


def test_an_explorer_without_weights_has_no_colour_controls_and_says_what_it_shows():
    class Positions(SharpnessExplorer):
        SHOWS_WEIGHTS = False

        def describe(self, result):
            return "positions, not weights"

    explorer = Positions()
    assert set(explorer.controls) == {"beta"} and explorer.colour_controls == ()
    assert explorer.image.tooltip == "positions, not weights"
    assert "d2l-weights" not in explorer._dom_classes and "d2l-explorer" in explorer._dom_classes
    assert "d2l-weights" in SharpnessExplorer()._dom_classes


def test_an_explorer_says_when_its_layouts_are_drawn(monkeypatch):
    """The class ``d2l-ready`` marks an explorer with nothing left to draw ahead: the browser
    tests wait for it before timing key presses (a first view is a benchmark case of its own)."""
    assert READY_CLASS in SharpnessExplorer()._dom_classes  # one figure: ready at once
    scripted = MultiHeadExplorer()
    assert READY_CLASS not in scripted._dom_classes
    scripted.prepare()
    assert READY_CLASS in scripted._dom_classes

    async def scenario():
        explorer = MultiHeadExplorer()
        assert READY_CLASS not in explorer._dom_classes
        await _until(lambda: READY_CLASS in explorer._dom_classes)
        return explorer

    assert len(_run_in_event_loop(scenario, monkeypatch).plots) == 4


def test_idle_time_work_waits_while_another_explorer_is_used(monkeypatch):
    """A layout drawn in idle time holds up every message behind it: while the learner moves
    another explorer's controls, no explorer draws ahead."""
    monkeypatch.setattr(explorer_module, "_last_change_anywhere", [float("-inf")])

    async def scenario():
        other = SharpnessExplorer()  # first: building it takes longer than the quiet needed
        explorer = MultiHeadExplorer()
        for step in range(8):  # a change every 0.05 s, under the 0.2 s of quiet needed
            await asyncio.sleep(0.05)
            other.controls["beta"].value = 1.0 + step % 2
        assert set(explorer.plots) == {2}, "drew ahead while another explorer was being used"
        await _until(lambda: len(explorer.plots) == 4)
        return explorer

    assert _run_in_event_loop(scenario, monkeypatch, delay=0.2).last_error is None
