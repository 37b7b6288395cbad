"""The explorer framework (d2lmini.widgets.declaration, explorer and the modules they import): a new
explorer is a declaration (controls, a pure compute, a view); the shell redraws it in place, and an
artist cannot be forgotten silently."""

import asyncio
import dataclasses
import heapq
import html
import math
import types
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import ipywidgets as widgets
import matplotlib
import numpy as np
import pytest
import torch
from IPython.core.events import EventManager, available_events

from d2lmini import widgets as d2lmini_widgets
from d2lmini.plotting import CMAPS, describe_weights
from d2lmini.widgets import idle as idle_module
from d2lmini.widgets.declaration import Choice, Declaration, FloatSlider, Result, Row
from d2lmini.widgets.explorer import DescribedImage, Explorer
from d2lmini.widgets.idle import IDLE_DELAY, IDLE_STEP, READY_CLASS
from d2lmini.widgets.kernel_pooling import KernelPooling


@dataclass(frozen=True)
class SharpnessSettings:
    beta: float = 1.0


class Sharpness(Declaration):
    """softmax(β · scores) over fixed scores: one slider, one heatmap."""

    controls = (FloatSlider("beta", "β", 0.0, 5.0, 0.5),)
    Settings = SharpnessSettings
    figsize = (4, 3)
    filename = "sharpness.png"
    repr_controls = ("beta",)

    def __init__(self):
        self.scores = torch.randn(4, 6, generator=torch.Generator().manual_seed(0))  # (queries, keys)

    def compute(self, settings):
        weights = torch.softmax(settings.beta * self.scores, dim=-1)  # (queries, keys)
        return Result(weights, f"softmax({settings.beta:g} × scores)")

    def build(self, blit):
        return SharpnessView(blit, self.scores.shape)


class SharpnessView:
    def __init__(self, blit, shape):
        ax = blit.figure.subplots()
        self.heatmap = blit.heatmap(ax, *shape)  # registered: redrawn on every change
        blit.colorbar(ax)

    def update(self, result):
        self.heatmap.set_array(result.weights.numpy())


def sharpness(beta=1.0, declaration=None):
    declaration = declaration or Sharpness()
    return Explorer(declaration, declaration.checked_settings(beta=beta))


@dataclass(frozen=True)
class PanelsSettings:
    panels: int = 2
    beta: float = 1.0


class Panels(Declaration):
    """The same weights in 1, 2 or 4 panels: one figure (layout) per panel count."""

    controls = (Choice("panels", "panels", (("1", 1), ("2", 2), ("4", 4))), FloatSlider("beta", "β", 0.0, 5.0, 0.5))
    Settings = PanelsSettings
    layouts = {1: (3, 3), 2: (6, 3), 4: (10, 3)}
    broken_layout = None  # a layout whose build raises

    def __init__(self):
        self.scores = torch.randn(4, 6, generator=torch.Generator().manual_seed(1))  # (queries, keys)

    def compute(self, settings):
        weights = torch.softmax(settings.beta * self.scores, dim=-1).expand(settings.panels, 4, 6)
        return Result(weights, f"{settings.panels} panels", layout=settings.panels)

    def build(self, blit):
        if blit.layout == self.broken_layout:
            raise RuntimeError(f"no room for {blit.layout} panels")
        return PanelsView(blit)


class PanelsView:
    def __init__(self, blit):
        axes = np.atleast_1d(blit.figure.subplots(1, blit.layout))
        self.heatmaps = [blit.heatmap(ax, 4, 6) for ax in axes]
        blit.colorbar(list(axes))

    def update(self, result):
        for heatmap, weights in zip(self.heatmaps, result.weights):
            heatmap.set_array(weights.numpy())


def test_a_new_explorer_is_a_declaration_and_the_shell_draws_it():
    explorer = sharpness()
    assert repr(explorer) == "SharpnessExplorer(beta=1.0)"
    assert bytes(explorer.image.value).startswith(b"\x89PNG\r\n\x1a\n")
    torch.testing.assert_close(explorer.weights, torch.softmax(explorer.declaration.scores, dim=-1))
    assert explorer.settings == SharpnessSettings(beta=1.0)
    assert explorer.caption_text == "softmax(1 × scores)" and explorer.blit.full_draws == 1
    with pytest.raises(ValueError, match=r"beta must be between 0\.0 and 5\.0, got 7"):
        sharpness(beta=7)


# The package's declarations in chapter order, as they were listed by hand before the package found them.
CHAPTER_ORDER = ["QueryPooling", "KernelPooling", "MaskedSoftmax", "MaskEditor", "Additive", "DotProduct",
                 "ShapeTracer", "MultiHead", "OnlineSoftmax", "SinusoidalPositions", "Alignment", "HeadView"]


def test_the_package_finds_and_exports_its_declarations_in_chapter_order():
    declarations = d2lmini_widgets.DECLARATIONS
    assert [declaration.__name__ for declaration in declarations] == CHAPTER_ORDER
    places = [(declaration.chapter, declaration.place) for declaration in declarations]
    assert places == sorted(places) and len(set(places)) == len(places)
    for declaration in declarations:
        assert declaration.__name__ in d2lmini_widgets.__all__
        assert getattr(d2lmini_widgets, declaration.__name__) is declaration


def explorer_module(name, **exports):
    """A module as the package reads one of its explorer modules: ``exports``, all in its ``__all__``."""
    module = types.ModuleType(f"d2lmini.widgets.{name}")
    vars(module).update(exports, __all__=list(exports))
    return module


def test_a_module_added_to_the_package_is_found_and_its_declaration_placed_by_chapter():
    """What the package makes of its modules (``_explorers``), given them and one more."""

    class Sharper(Sharpness):
        chapter = 4
        place = 1  # after the dot-product explorer

    added = explorer_module("sharper", Sharper=Sharper, explore_sharper=sharpness)
    exported, declarations = d2lmini_widgets._explorers([*d2lmini_widgets._explorer_modules(), added])
    assert [declaration.__name__ for declaration in declarations] == [*CHAPTER_ORDER[:6], "Sharper",
                                                                      *CHAPTER_ORDER[6:]]
    assert set(exported) - set(d2lmini_widgets.__all__) == {"Sharper", "explore_sharper"}
    assert exported["Sharper"] is Sharper and exported["explore_sharper"] is sharpness


def test_a_declaration_without_a_chapter_or_a_place_of_its_own_or_a_name_exported_twice_is_refused():
    modules = d2lmini_widgets._explorer_modules()
    with pytest.raises(ValueError, match="Sharpness sets no chapter"):
        d2lmini_widgets._explorers([*modules, explorer_module("sharpness", Sharpness=Sharpness)])
    twin = type("Twin", (Sharpness,), {"chapter": 2, "place": 1})
    with pytest.raises(ValueError, match="MaskEditor and Twin both have place 1 in chapter 2"):
        d2lmini_widgets._explorers([*modules, explorer_module("twin", Twin=twin)])
    with pytest.raises(ValueError, match="d2lmini.widgets.additive and d2lmini.widgets.copy both export"):
        d2lmini_widgets._explorers([*modules, explorer_module("copy", explore_additive=sharpness)])


class Counted(Explorer):
    """A subclass whose ``show`` reads what it adds: it exists before the first picture."""

    def __init__(self, declaration):
        super().__init__(declaration, refresh_now=False)
        self.shown = []
        self.button = widgets.Button(description="act")
        self.status = widgets.Label("status")
        self.add_actions(self.button)
        self.add_status(self.status)
        self.first_refresh()

    def show(self, result):
        super().show(result)
        self.shown.append(result.caption)


def test_a_subclass_adds_its_widgets_before_the_first_picture_and_the_shell_arranges_them():
    declaration = Sharpness()
    unrefreshed = Explorer(declaration, refresh_now=False)
    assert unrefreshed.result is None and unrefreshed.children == ()
    explorer = Counted(declaration)
    assert explorer.shown == ["softmax(1 × scores)"] and explorer.blit.full_draws == 1
    assert explorer.rows[-1][1].children[-1] is explorer.button
    assert explorer.children[0] is explorer.rows[-1][1]  # the actions sit in the last row
    beside_caption = [child for child in explorer.children if explorer.caption in getattr(child, "children", ())]
    assert [box.children for box in beside_caption] == [(explorer.status, explorer.caption)]
    for add in (lambda: explorer.add_actions(widgets.Button()), lambda: explorer.add_status(widgets.Label()),
                explorer.first_refresh):
        with pytest.raises(RuntimeError, match="comes before the first refresh"):
            add()
    explorer.controls["beta"].value = 2.0  # the controls are followed once, by the first refresh
    assert explorer.shown == ["softmax(1 × scores)", "softmax(2 × scores)"]


def test_settings_and_results_are_frozen_dataclasses_and_compute_needs_no_shell():
    declaration = Sharpness()
    result = declaration.compute(SharpnessSettings(beta=2.0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.caption = "changed"
    with pytest.raises(dataclasses.FrozenInstanceError):
        SharpnessSettings().beta = 3.0
    again = declaration.compute(SharpnessSettings(beta=2.0))
    torch.testing.assert_close(again.weights, result.weights)
    assert again.caption == result.caption == "softmax(2 × scores)"


def test_a_declaration_checks_each_setting_by_its_control_and_names_it():
    declaration = Sharpness()
    assert declaration.checked_settings(beta=2.5) == SharpnessSettings(beta=2.5)
    with pytest.raises(TypeError, match=r"beta must be a number, got str '2'"):
        declaration.checked_settings(beta="2")
    with pytest.raises(ValueError, match=r"Sharpness has no control 'gamma'; its controls: beta"):
        declaration.checked_settings(gamma=1.0)


def test_the_shell_never_writes_into_the_declaration():
    declaration = Sharpness()
    scores = declaration.scores.clone()
    explorer = sharpness(declaration=declaration)
    for beta in (0.0, 2.5, 5.0):
        explorer.controls["beta"].value = beta
    assert torch.equal(declaration.scores, scores) and vars(declaration).keys() == {"scores"}
    assert Sharpness.controls == (FloatSlider("beta", "β", 0.0, 5.0, 0.5),)


def test_a_new_explorer_redraws_in_place_without_drawing_the_background_again():
    explorer = sharpness()
    figure, blit = explorer.figure, explorer.blit
    for beta in (0.0, 2.5, 5.0, 1.0):
        before = bytes(explorer.image.value)
        explorer.controls["beta"].value = beta
        assert explorer.last_error is None and explorer.image.value != before
        expected = torch.softmax(beta * explorer.declaration.scores, dim=-1)
        np.testing.assert_allclose(explorer.view.heatmap.get_array(), expected.numpy())
        assert explorer.figure is figure and explorer.blit is blit
    explorer.controls["beta"].value = 0.0  # uniform weights, 1/6 each
    explorer.controls["colour_scale"].value = "fit"  # a new colour scale: the colorbar is redrawn, alone
    assert explorer.caption_text == "softmax(0 × scores); colours 0 to 0.2" and blit.norm.vmax == 0.2
    assert explorer.figure is figure and blit.full_draws == 1


def test_an_animated_artist_left_unregistered_is_an_error():
    class ForgetfulView(SharpnessView):
        def __init__(self, blit, shape):
            super().__init__(blit, shape)
            self.line = self.heatmap.axes.plot([0, 5], [0, 3], animated=True)[0]  # never registered

    class Forgetful(Sharpness):
        def build(self, blit):
            return ForgetfulView(blit, self.scores.shape)

    with pytest.raises(ValueError, match=r"Line2D.* is animated but not registered.*blit\.animate"):
        Explorer(Forgetful())


def test_moving_an_artist_kept_in_the_background_is_an_error_shown_in_the_explorer():
    class StaleView(SharpnessView):
        def __init__(self, blit, shape):
            super().__init__(blit, shape)
            self.title = self.heatmap.axes.set_title("")  # drawn once, in the background

        def update(self, result):
            super().update(result)
            self.title.set_text(f"largest weight {result.weights.max():.2f}")

    class Stale(Sharpness):
        def build(self, blit):
            return StaleView(blit, self.scores.shape)

    explorer = Explorer(Stale())
    image = bytes(explorer.image.value)
    explorer.controls["beta"].value = 3.0
    assert isinstance(explorer.last_error, RuntimeError)
    assert "Text" in str(explorer.last_error) and "blit.animate" in str(explorer.last_error)
    assert "RuntimeError" in explorer.message.value and explorer.image.value == image


def test_registering_twice_or_for_another_figure_is_an_error():
    explorer = sharpness()
    with pytest.raises(ValueError, match="registered twice"):
        explorer.blit.animate(explorer.view.heatmap)
    other = Explorer(KernelPooling())
    with pytest.raises(ValueError, match="belongs to another figure"):
        explorer.blit.animate(other.view.fit)


def test_registering_an_artist_already_drawn_draws_the_background_again():
    explorer = sharpness()
    title = explorer.view.heatmap.axes.set_title("β")  # not animated: in the next background
    explorer.controls["beta"].value = 2.0
    assert explorer.blit.full_draws == 1
    explorer.blit.animate(title)  # from now on drawn on every change, so out of the background
    assert title.get_animated()
    explorer.controls["beta"].value = 3.0
    assert explorer.last_error is None and explorer.blit.full_draws == 2


@pytest.mark.parametrize("missing", ["compute", "build"])
def test_a_declaration_missing_compute_or_build_fails_at_construction(missing):
    Partial = type("Partial", (Sharpness,), {missing: Declaration.__dict__[missing]})
    with pytest.raises(NotImplementedError):
        Explorer(Partial())


# Dependent controls ---------------------------------------------------------------------------

@dataclass(frozen=True)
class PairSettings:
    mode: str = "one"
    low: float = 1.0
    high: float = 2.0


class Pair(Declaration):
    """Two sliders kept in order (adjust), a menu whose options follow a setting (choices),
    and a row shown in one mode only (Row.when)."""

    controls = (Choice("mode", "mode", (("one", "one"), ("two", "two"))),
                FloatSlider("low", "low", 0.0, 5.0, 0.5), FloatSlider("high", "high", 0.0, 5.0, 0.5))
    Settings = PairSettings
    rows = (Row(("mode", "low")), Row(("high",), label="second:", when=("mode", "two")))

    def adjust(self, settings, changed):
        if changed == "low" and settings.high < settings.low:
            return dataclasses.replace(settings, high=settings.low)
        return settings

    def compute(self, settings):
        return Result(torch.full((2, 3), 1 / 3), f"{settings.mode}: {settings.low:g} to {settings.high:g}")

    def build(self, blit):
        return SharpnessView(blit, (2, 3))


def test_adjust_sets_other_controls_and_one_redraw_follows():
    explorer = Explorer(Pair())
    explorer.controls["low"].value = 3.5
    assert explorer.settings == PairSettings("one", 3.5, 3.5) and explorer.last_error is None
    assert explorer.caption_text == "one: 3.5 to 3.5"


def test_a_row_is_shown_only_while_its_condition_holds():
    explorer = Explorer(Pair())
    (_, first), (_, second) = explorer.rows
    assert first.layout.display is None and second.layout.display == "none"
    explorer.controls["mode"].value = "two"
    assert second.layout.display is None
    assert [child.value for child in second.children[:1]] == ["second:"]


# Layouts: each is a figure of its own, drawn ahead ----------------------------------------------

def test_every_layout_is_drawn_ahead_so_a_first_view_draws_nothing_in_full():
    explorer = Explorer(Panels())
    assert set(explorer.views) == {2}  # a script: no event loop, so nothing was done ahead
    explorer.prepare()
    assert set(explorer.views) == {1, 2, 4}
    assert [blit.full_draws for blit, _ in explorer.views.values()] == [1, 1, 1]
    for panels in (4, 1, 2):
        explorer.controls["panels"].value = panels
        assert explorer.last_error is None and explorer.blit is explorer.views[panels][0]
    assert [blit.full_draws for blit, _ in explorer.views.values()] == [1, 1, 1]


def test_without_an_event_loop_a_layout_is_built_when_first_shown():
    explorer = Explorer(Panels())
    explorer.controls["panels"].value = 4
    assert set(explorer.views) == {2, 4} and explorer.last_error is None


class FakeClock:
    """``LoopClock``'s stand-in: its time moves only when ``advance`` moves it, and then it runs the
    timers that fall due, in order, each at its own time."""

    def __init__(self):
        self.time = 0.0
        self.timers = []  # (due, order set, callback), a heap
        self.set_so_far = 0

    def now(self):
        return self.time

    def running(self):
        return True

    def call_later(self, delay, callback):
        # Later than now however small the delay, as on a real loop, whose time moves on: a float sum
        # can lose a delay of 1e-17, and a timer set again at the same time would run for ever.
        due = max(self.time + delay, math.nextafter(self.time, math.inf))
        heapq.heappush(self.timers, (due, self.set_so_far, callback))
        self.set_so_far += 1

    def advance(self, seconds):
        end = self.time + seconds
        while self.timers and self.timers[0][0] <= end:
            self.time, _, callback = heapq.heappop(self.timers)
            callback()
        self.time = end


@pytest.fixture
def clock(monkeypatch):
    """Every explorer's idle-time work on a fake clock, with no change of any explorer seen yet."""
    fake = FakeClock()
    monkeypatch.setattr(Explorer, "clock", fake)
    monkeypatch.setattr(idle_module, "_last_change_anywhere", [float("-inf")])
    return fake


# Margins around a moment the explorer waits for: far above the rounding of the fake clock's sums,
# far below IDLE_STEP, so that one layout at most is drawn between two checks.
JUST_BEFORE, JUST_AFTER = IDLE_DELAY - 0.01, 0.02


def test_in_an_event_loop_the_layouts_are_drawn_in_idle_time(clock):
    explorer = Explorer(Panels())
    assert set(explorer.views) == {2}  # construction builds the layout shown, no more
    clock.advance(JUST_BEFORE)
    assert set(explorer.views) == {2}, "drawn ahead before the quiet period ended"
    clock.advance(JUST_AFTER)
    assert set(explorer.views) == {1, 2}, "one layout per turn of the event loop"
    clock.advance(IDLE_STEP)
    assert set(explorer.views) == {1, 2, 4}
    assert [blit.full_draws for blit, _ in explorer.views.values()] == [1, 1, 1]
    explorer.controls["panels"].value = 4
    assert explorer.views[4][0].full_draws == 1 and explorer.last_error is None


def test_idle_time_work_waits_while_controls_move_or_cells_run(clock, monkeypatch):
    events = EventManager(shell=None, available_events=available_events)
    monkeypatch.setattr(idle_module, "get_ipython", lambda: type("Shell", (), {"events": events})())
    explorer = Explorer(Panels())
    for step in range(6):  # activity every 0.3 s, under the 0.5 s of quiet needed
        clock.advance(0.3)
        if step % 2:
            events.trigger("pre_execute")  # a cell starts
        else:
            explorer.controls["beta"].value = 2.0 + step / 2  # never the value it has
        assert set(explorer.views) == {2}, "prepared while the kernel was busy"
    clock.advance(JUST_BEFORE)
    assert set(explorer.views) == {2}, "prepared before the quiet period after the last cell ended"
    clock.advance(JUST_AFTER + IDLE_STEP)
    assert set(explorer.views) == {1, 2, 4} and explorer.last_error is None
    assert events.callbacks["pre_execute"] == [] and events.callbacks["post_execute"] == []


def test_a_layout_that_fails_in_idle_time_fails_again_when_shown(clock):
    declaration = Panels()
    declaration.broken_layout = 4
    explorer = Explorer(declaration)
    clock.advance(IDLE_DELAY + IDLE_STEP + JUST_AFTER)  # both layouts tried
    assert set(explorer.views) == {1, 2} and clock.timers == []
    explorer.controls["panels"].value = 4
    assert isinstance(explorer.last_error, RuntimeError) and "no room" in explorer.message.value


def test_in_a_running_event_loop_the_real_clock_sets_the_timers(monkeypatch):
    """A Jupyter kernel's case, with no waiting: the loop runs the timers as soon as it can."""
    monkeypatch.setattr(idle_module, "IDLE_DELAY", 0)
    monkeypatch.setattr(idle_module, "IDLE_STEP", 0)

    async def scenario():
        assert Explorer.clock.running()
        explorer = Explorer(Panels())
        assert set(explorer.views) == {2}  # the timers run once this coroutine lets the loop go on
        ready = asyncio.Event()

        def note_ready(change):
            if READY_CLASS in change["new"]:
                ready.set()

        explorer.observe(note_ready, names="_dom_classes")
        await asyncio.wait_for(ready.wait(), timeout=60)  # a bound on a failure, not a pause
        return explorer

    # Playwright's sync API (the browser tests, same session) keeps an event loop
    # running in the main thread: give the scenario a thread and a loop of its own.
    with ThreadPoolExecutor(max_workers=1) as pool:
        assert not pool.submit(Explorer.clock.running).result()  # no loop, as in a script: no timer is set
        explorer = pool.submit(asyncio.run, scenario()).result()
    assert set(explorer.views) == {1, 2, 4} and explorer.last_error is None


def test_a_colour_map_recolours_heatmap_and_colorbar_in_place_and_is_kept_per_scale_end():
    explorer = sharpness()
    blit, heatmap = explorer.blit, explorer.view.heatmap
    viridis = bytes(explorer.image.value)
    assert [value for _, value in explorer.controls["colour_map"].options] == [name for _, name in CMAPS]
    for name in ("cividis", "Greys", "Reds"):
        explorer.controls["colour_map"].value = name
        assert explorer.last_error is None and heatmap.get_cmap().name == name
        assert blit.colorbar_mappable.get_cmap().name == name
        largest = np.unravel_index(np.argmax(heatmap.get_array()), heatmap.get_array().shape)
        top_colour = matplotlib.colormaps[name](heatmap.norm(explorer.weights.max().item()))
        np.testing.assert_allclose(heatmap.to_rgba(heatmap.get_array())[largest], top_colour)
    explorer.controls["colour_scale"].value = "fit"
    assert blit.cmap == "Reds" and ((explorer.top, "Reds") in blit.kept)
    explorer.controls["colour_scale"].value = "fixed"
    explorer.controls["colour_map"].value = "viridis"
    assert bytes(explorer.image.value) == viridis  # the kept viridis colorbar, the same pixels
    assert blit.full_draws == 1  # every map drew its colorbar alone, over the kept background


def test_the_summary_under_the_picture_and_its_tooltip_follow_every_redraw():
    explorer = sharpness()
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
    class Positions(Sharpness):
        shows_weights = False

        def describe(self, result):
            return "positions, not weights"

    explorer = Explorer(Positions())
    assert set(explorer.controls) == {"beta"}
    assert explorer.image.tooltip == "positions, not weights"
    assert "d2l-weights" not in explorer._dom_classes and "d2l-explorer" in explorer._dom_classes
    assert "d2l-weights" in sharpness()._dom_classes


def test_an_explorer_says_when_its_layouts_are_drawn(clock):
    """The class ``d2l-ready`` marks an explorer with nothing left to draw ahead: the browser
    tests wait for it before timing key presses (a first view is a benchmark case of its own)."""
    assert READY_CLASS in sharpness()._dom_classes  # one figure: ready at once
    explorer = Explorer(Panels())
    clock.advance(IDLE_DELAY)
    assert READY_CLASS not in explorer._dom_classes and len(explorer.views) == 2  # one layout still to draw
    clock.advance(IDLE_STEP)
    assert READY_CLASS in explorer._dom_classes and len(explorer.views) == 3


def test_in_a_script_an_explorer_is_ready_once_prepared():
    scripted = Explorer(Panels())
    assert READY_CLASS not in scripted._dom_classes
    scripted.prepare()
    assert READY_CLASS in scripted._dom_classes


def test_idle_time_work_waits_while_another_explorer_is_used(clock):
    """A layout drawn in idle time holds up every message behind it: while the learner moves
    another explorer's controls, no explorer draws ahead."""
    other = sharpness()
    explorer = Explorer(Panels())
    for step in range(8):  # a change every 0.3 s, under the 0.5 s of quiet needed
        clock.advance(0.3)
        other.controls["beta"].value = 2.0 + step % 2  # never the value it has
        assert set(explorer.views) == {2}, "drew ahead while another explorer was being used"
    clock.advance(JUST_BEFORE)
    assert set(explorer.views) == {2}, "drew ahead before the quiet period after the last change ended"
    clock.advance(JUST_AFTER + IDLE_STEP)
    assert set(explorer.views) == {1, 2, 4} and explorer.last_error is None
