"""Chapter 08's widgets: the live training view and the explorer of a run's snapshots."""

import base64
import inspect
import io
import threading

import numpy as np
import pytest
import torch
from PIL import Image

import d2lmini as d2l
from d2lmini import seq2seq
from d2lmini.widgets import Alignment, Explorer, TrainingView, explore_alignment
from d2lmini.widgets import training as training_module
from d2lmini.widgets.figure import BACKGROUND

pytestmark = pytest.mark.usefixtures("training_on_one_thread")  # as the notebooks train (conftest.py says why)


class Recorder:
    """Every new picture of a view, with the state of its controls at that moment."""

    def __init__(self, view):
        self.view, self.pictures, self.locked, self.stop_enabled = view, [], [], []
        view.image.observe(self.seen, names="value")

    def seen(self, change):
        self.pictures.append(bytes(change["new"]))
        self.locked.append(all(c.disabled for c in self.view.controls.values()) and self.view.train_button.disabled)
        self.stop_enabled.append(not self.view.stop_button.disabled)


def assert_circles_on_top(blit, shown):
    """The circles are drawn after the heatmap on every render, so they show over it."""
    artists = blit.artists
    assert shown.circles in artists and artists.index(shown.circles) > artists.index(shown.heatmap)


def live(view):
    """The registered artists of the picture shown now."""
    return view.view


# ---- the live view ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def trained():
    """A view after one run of 100 steps, shared by the tests that only read it."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        view = TrainingView(num_steps=100)
        view.run()
    finally:
        torch.set_num_threads(threads)
    return view


def test_a_new_view_shows_the_untrained_model_and_waits():
    view = TrainingView(num_steps=100)
    # The settings not at their defaults, and the step shown (the web site starts its replay there).
    assert repr(view) == "TrainingView(task='reverse', num_steps=100, step=0)"
    assert repr(TrainingView("sort", lr=0.01, positional=False, lengths=(6, 10), seed=2)) == (
        "TrainingView(task='sort', lr=0.01, positional=False, lengths=(6, 10), seed=2, step=0)")
    assert bytes(view.image.value).startswith(b"\x89PNG") and view.progress.value == 0
    assert view.caption_text.startswith("step 0 of 100") and view.model is None and view.history is None
    assert not view.is_training and view.stop_button.disabled and not view.train_button.disabled
    assert all("Slider" not in type(c).__name__ for c in view.controls.values())  # nothing to draw until Train


def test_run_redraws_every_few_steps_in_place_with_the_controls_locked():
    torch.manual_seed(123)
    expected_random = torch.rand(3)
    torch.manual_seed(123)
    view = TrainingView(num_steps=100, draw_every=20)
    image = view.image
    seen = Recorder(view)
    history = view.run()
    torch.testing.assert_close(torch.rand(3), expected_random)  # the notebook's random numbers are left alone
    assert view.image is image  # the same widget, new bytes
    assert len(seen.pictures) == 6  # steps 0, 20, 40, 60, 80, 100: not every step
    assert len(set(seen.pictures)) == 6 and all(seen.locked) and all(seen.stop_enabled)
    assert not view.is_training and not view.train_button.disabled and view.stop_button.disabled
    assert view.progress.value == view.progress.max == 100
    assert history is view.history and len(history.losses) == 100 and view.model is not None
    assert "held-out accuracy" in view.caption_text and "step 100 of 100" in view.caption_text


def test_what_the_view_draws_is_what_the_model_computes(trained):
    view, history = trained, trained.history
    picture = live(view)
    example = history.examples[0]
    view.model.eval()
    predictions, weights = view.model.predict(example.source, example.valid_lens)
    np.testing.assert_allclose(picture.map.heatmap.get_array(), weights[0].numpy(), atol=1e-6)
    np.testing.assert_allclose(picture.loss.get_ydata(), history.losses)
    steps, accuracy = picture.accuracy.get_data()
    assert list(steps) == sorted(history.evaluations)
    np.testing.assert_allclose(accuracy, [100 * history.evaluations[s][0] for s in steps])
    assert [t.get_text() for t in picture.map.outputs] == [str(d) for d in predictions[0].tolist()]
    assert [t.get_text() for t in picture.map.sources] == [str(d) for d in example.source[0].tolist()]
    columns, rows = picture.map.circles.get_data()
    assert list(zip(rows, columns)) == [(t, 7 - t) for t in range(8)]  # the anti-diagonal of length 8
    assert_circles_on_top(view.blit, picture.map)
    mass = seq2seq.alignment_mass(weights, example.alignment)
    assert view.caption_text.endswith(f"weight on the circles {mass:.2f}")


def test_every_setting_reaches_the_model_and_the_run():
    view = TrainingView("sort", "additive", num_hiddens=16, lr=1e-2, positional=False, lengths=(3, 6),
                        num_steps=100, seed=3)
    history = view.run()
    model = view.model
    assert isinstance(model.cross_attention, d2l.AdditiveAttention) and model.positional is None
    assert model.W_q.in_features == 16 and history.examples.source.shape[1] == 6
    assert set(history.test.valid_lens.tolist()) == {3, 4, 5, 6}
    # the seed control fixes the weights, and lr reaches the optimizer: the same run by hand gives the same losses
    torch.manual_seed(3)
    by_hand = seq2seq.AttentionSeq2Seq(16, "additive", positional=False)
    assert seq2seq.train(by_hand, "sort", 100, lr=1e-2, lengths=(3, 6), seed=3) == history.losses
    columns, rows = live(view).map.circles.get_data()
    assert [columns[i] for i in np.argsort(rows)] == history.examples.positions[0].tolist()  # the sort's permutation


def test_the_train_button_trains_in_the_background_and_stop_ends_the_run():
    view = TrainingView(num_steps=800)
    drawn_step_20 = threading.Event()  # set by the training thread, as it moves the bar

    def note_progress(change):
        if change["new"] >= 20:
            drawn_step_20.set()

    view.progress.observe(note_progress, names="value")
    view.train_button.click()
    thread = view._thread
    assert view.is_training and view.stop_button.disabled is False
    assert view.start() is thread  # a second press while training starts nothing
    with pytest.raises(RuntimeError, match="a run is in progress"):
        view.run()
    assert drawn_step_20.wait(timeout=60), "the run drew no step 20 within 60 s"
    view.stop_button.click()
    thread.join(timeout=60)
    assert not thread.is_alive() and not view.is_training
    assert 20 <= len(view.history.losses) < 800 and view.progress.value == len(view.history.losses)
    assert all(not c.disabled for c in view.controls.values()) and view.stop_button.disabled
    assert view.last_error is None and view.message.value == ""


def test_a_new_setting_draws_on_a_figure_of_its_own():
    view = TrainingView(num_steps=100)
    first = live(view)
    view.controls["num_steps"].value = 200
    view.controls["task"].value = "sort"
    view.run()
    assert live(view) is not first and view.figure.axes[0].get_xlim() == (0, 200)
    assert view.progress.max == 200


def test_a_new_setting_shows_the_untrained_model_it_would_train():
    view = TrainingView(num_steps=100)
    before = bytes(view.image.value)
    view.controls["seed"].value = 7
    assert view.last_error is None and bytes(view.image.value) != before
    with torch.random.fork_rng(devices=[]):  # the seed control draws the weights shown
        torch.manual_seed(7)
        untrained = seq2seq.AttentionSeq2Seq(32)
    example = view.result.example
    untrained.eval()
    _, weights = untrained.predict(example.source, example.valid_lens)
    np.testing.assert_allclose(live(view).map.heatmap.get_array(), weights[0].numpy(), atol=1e-6)
    assert view.caption_text.startswith("step 0 of 100 · weight on the circles") and view.progress.value == 0
    view.run()
    view.controls["num_steps"].value = 200  # after a run, the bar starts again on the new scale
    assert (view.progress.value, view.progress.max) == (0, 200) and view.caption_text.startswith("step 0 of 200")


def test_the_view_is_the_explorer_shell_over_its_settings():
    view = TrainingView(num_steps=100)
    assert isinstance(view, Explorer) and isinstance(view.declaration, training_module.Training)
    defaults = training_module.TrainingSettings()
    for name, parameter in inspect.signature(TrainingView).parameters.items():
        if hasattr(defaults, name):  # the repr leaves out the settings at these defaults
            assert parameter.default == getattr(defaults, name), name
    assert "colour_scale" not in view.controls  # the scale stays 0 to 1: a run's picture is not recomputed
    assert live(view).map.legend is None  # the example drawn has no padding: nothing hatched


def test_an_error_in_a_background_run_is_shown_and_the_view_recovers(monkeypatch):
    view = TrainingView(num_steps=100)

    def broken(*args, **kwargs):
        raise RuntimeError("loss <b>exploded</b>")

    monkeypatch.setattr(training_module, "train", broken)
    view.start().join(timeout=60)
    assert isinstance(view.last_error, RuntimeError)
    assert "RuntimeError: loss &lt;b&gt;exploded&lt;/b&gt;" in view.message.value
    assert not view.is_training and not view.train_button.disabled
    with pytest.raises(RuntimeError, match="exploded"):  # run() shows it and raises it
        view.run()
    monkeypatch.undo()
    view.run()
    assert view.last_error is None and view.message.value == ""


def test_an_error_while_drawing_is_shown_too(monkeypatch):
    view = TrainingView(num_steps=100)
    monkeypatch.setattr(training_module.LiveView, "update", lambda self, result: 1 / 0)
    view.start().join(timeout=60)
    assert isinstance(view.last_error, ZeroDivisionError) and "ZeroDivisionError" in view.message.value


def test_the_display_data_holds_the_widget_its_text_and_a_static_picture(trained):
    view = trained
    data, metadata = view._repr_mimebundle_()
    assert data["text/plain"] == repr(view)
    assert data["text/plain"].endswith(f", step={view.history.steps[-1]})")  # the step its picture shows
    assert "application/vnd.jupyter.widget-view+json" in data
    picture = Image.open(io.BytesIO(base64.b64decode(data["image/png"])))
    assert picture.width == 2 * metadata["image/png"]["width"]


def test_the_static_picture_says_how_to_train_not_to_move_sliders(trained):
    """The training view has menus, a box and a Train button: its line under the static picture says so."""
    from d2lmini.widgets.explorer import HINT, _text_rows

    hint = training_module.Training.static_hint
    assert hint == "run the notebook to train the model; the Train button trains a new one"
    picture = np.asarray(Image.open(io.BytesIO(trained.static_png())).convert("RGBA"))
    own = _text_rows(picture.shape[1], hint, style="italic", color="#555555")
    sliders = _text_rows(picture.shape[1], HINT, style="italic", color="#555555")
    assert np.array_equal(picture[-own.shape[0]:], own)
    assert not np.array_equal(picture[-sliders.shape[0]:], sliders)


@pytest.mark.parametrize("options,error,fragments", [
    ({"task": "copy"}, ValueError, ["task", "'reverse', 'sort'", "'copy'"]),
    ({"attention": "dot"}, ValueError, ["attention", "'dot-product', 'additive'", "'dot'"]),
    ({"num_hiddens": 24}, ValueError, ["num_hiddens", "[16, 32, 64]", "24"]),
    ({"lr": 0.5}, ValueError, ["lr", "0.001", "0.5"]),
    ({"positional": 1}, ValueError, ["positional", "[True, False]", "1"]),
    ({"lengths": (4, 9)}, ValueError, ["lengths", "(4, 8)", "(4, 9)"]),
    ({"num_steps": 50}, ValueError, ["num_steps", "[100, 200, 400, 800]", "50"]),
    ({"seed": -1}, ValueError, ["seed", "between 0 and 9999", "-1"]),
    ({"draw_every": 15}, ValueError, ["draw_every", "multiple of 10", "15"]),
    ({"draw_every": 5}, ValueError, ["draw_every", "between 10", "5"]),
    ({"test_size": 0}, ValueError, ["test_size", "between 1", "0"]),
])
def test_bad_settings_are_named(options, error, fragments):
    with pytest.raises(error) as info:
        TrainingView(**options)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


def test_lengths_may_be_given_as_a_list():
    assert TrainingView(lengths=[3, 6], num_steps=100).settings.lengths == (3, 6)


# ---- the explorer of a run ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def run(trained):
    return trained.history


def test_the_explorer_draws_each_recorded_step_and_example(run):
    explorer = explore_alignment(run, step=0)
    assert repr(explorer) == "AlignmentExplorer(step=0, example=0)"
    pictures = {bytes(explorer.image.value)}
    for step in run.steps:
        for example in range(len(run.examples)):
            explorer.controls["step"].value = step
            explorer.controls["example"].value = example
            assert explorer.last_error is None
            snapshot, batch = run.snapshots[step], run.examples[example]
            n = int(batch.valid_lens)
            shown = explorer.view.map
            drawn = shown.heatmap.get_array()
            np.testing.assert_allclose(drawn[:n, :n], snapshot.weights[example, :n, :n].numpy())
            if n < 8:  # padding hatched, the rest drawn
                assert np.ma.getmaskarray(drawn)[n:].all() and np.ma.getmaskarray(drawn)[:, n:].all()
            assert not np.ma.getmaskarray(drawn)[:n, :n].any()
            columns, rows = shown.circles.get_data()
            assert list(zip(rows, columns)) == [(t, n - 1 - t) for t in range(n)]
            assert_circles_on_top(explorer.blit, shown)
            sources = [t.get_text() for t in shown.sources]
            assert sources[:n] == [str(d) for d in batch.source[0, :n].tolist()] and sources[n:] == [""] * (8 - n)
            assert shown.legend.get_visible() == (n < 8)  # "masked" named where padding is hatched
            outputs = [t.get_text() for t in shown.outputs]
            assert outputs[:n] == [str(d) for d in snapshot.predictions[example, :n].tolist()]
            assert outputs[n:] == [""] * (8 - n)
            wrong = (snapshot.predictions[example, :n] != batch.target[0, :n]).tolist()
            assert [t.get_color() == "#cf222e" for t in shown.outputs[:n]] == wrong
            assert list(explorer.view.now_line.get_xdata()) == [step, step]
            assert f"step {step}, example {example}: " in explorer.caption_text
            pictures.add(bytes(explorer.image.value))
    assert len(pictures) == len(run.steps) * len(run.examples)
    assert list(explorer.views) == [None] and explorer.blit.full_draws == 1  # nothing redrawn in full


def _encoders(blit):
    """The PNG encoders that ``blit`` keeps, one per colour-scale end and map it rendered."""
    return [kept.encoder for key, kept in blit.kept.items() if key != BACKGROUND and kept.encoder is not None]


def test_a_new_example_redraws_no_more_than_a_new_step(run):
    """Every example is drawn on the one figure built with the explorer: a new example, like a
    new step, redraws the registered artists over the kept background and re-encodes the same
    band of rows; no figure is built or drawn in full (which cost 0.2-0.5 s per example)."""
    explorer = explore_alignment(run, step=0)
    blit = explorer.blit
    [encoder] = _encoders(blit)
    for step in run.steps[:3]:
        for example in range(len(run.examples)):
            explorer.controls["example"].value = example
            explorer.controls["step"].value = step
    assert explorer.last_error is None and explorer.blit is blit and list(explorer.views) == [None]
    assert blit.full_draws == 1 and _encoders(blit) == [encoder]


def test_the_explorer_caption_gives_the_examples_own_mass(run):
    explorer = explore_alignment(run)
    last = run.steps[-1]
    mass = seq2seq.alignment_mass(run.snapshots[last].weights[:1], run.examples[0].alignment)
    assert explorer.caption_text.endswith(f"weight on the correct position {mass:.2f}")
    assert explorer.controls["step"].value == last  # the last step by default


def test_the_explorer_curves_are_the_held_out_evaluations(run):
    explorer = explore_alignment(run)
    mass_line, accuracy_line = explorer.figure.axes[1].lines[:2]
    steps = sorted(run.evaluations)
    assert list(mass_line.get_xdata()) == steps
    np.testing.assert_allclose(mass_line.get_ydata(), [run.evaluations[s][1] for s in steps])
    np.testing.assert_allclose(accuracy_line.get_ydata(), [run.evaluations[s][0] for s in steps])


@pytest.fixture(scope="module")
def replay():
    """The page's explorer of chapter 08's recorded runs (Alignment.for_page)."""
    return Alignment.for_page()


def test_the_page_replays_the_runs_the_chapter_suggests(replay):
    """Alignment.for_page reads the recorded runs (tools/record_reversal_run.py): the notebook's
    TrainingView run and the three changes "Your turn" suggests, each its fixed examples every 10 steps,
    held-out evaluations every 20, offered in a run menu named as the prose names them."""
    assert [control.name for control in replay.controls] == ["run", "step", "example"]
    run_menu = replay.control("run")
    assert [label for label, _ in run_menu.options] == [
        "the notebook's run", "positional encoding off", "additive attention", "learning rate 0.03"]
    assert list(replay.runs) == list(training_module.RECORDED_RUNS) and replay.Settings().run == "notebook"
    examples = training_module.recorded_examples("reverse", (4, 8))
    for name, run in replay.runs.items():
        assert run.steps == list(range(0, 401, 10)) and sorted(run.evaluations) == list(range(0, 401, 20)), name
        assert len(run.losses) == 400 and run.test is None, name
        assert torch.equal(run.examples.source, examples.source) and torch.equal(run.examples.target, examples.target)
    assert replay.page_play == "step"
    assert replay.page_values() == {"step": list(range(0, 401, 20))}  # every evaluation: the 1 MB budget


@pytest.mark.parametrize("name,last", [
    # name -> what its last state shows, as the chapter's worked answers say of that run.
    ("notebook", lambda accuracy, mass, click: accuracy >= 0.85 and mass > 0.5 and click is not None),
    ("no positional encoding", lambda accuracy, mass, click: accuracy <= 0.01 and mass < 0.25 and click is None),
    ("additive", lambda accuracy, mass, click: accuracy >= 0.9 and mass > 0.5 and click is not None),
    # Worked answer 3: 50% at step 80 to 100, ending at 84% to 100% with a mass of 0.86 to 0.96.
    ("learning rate 0.03", lambda accuracy, mass, click: accuracy >= 0.84 and 0.86 <= mass <= 0.96
     and click is not None and 80 <= click <= 100),
])
def test_each_recorded_run_starts_untrained_and_ends_as_the_chapter_says(replay, name, last):
    run = replay.runs[name]
    first = replay.compute(replay.Settings(run=name, step=0))
    assert first.caption.startswith("step 0, example 0:") and first.step == 0 and first.history is run
    assert run.evaluations[0][0] == 0.0  # untrained: nothing right
    assert torch.equal(first.weights, run.snapshots[0].weights[0])
    end = replay.compute(replay.Settings(run=name, step=400, example=3))
    assert torch.equal(end.weights, run.snapshots[400].weights[3]) and end.caption.startswith("step 400, example 3:")
    accuracy, mass = run.evaluations[400]
    assert last(accuracy, mass, run.steps_to(0.5)), (name, accuracy, mass, run.steps_to(0.5))


def test_the_runs_differ_from_the_notebooks_in_the_one_setting_they_name():
    assert training_module.recorded_run_of({"task": "reverse"}) == "notebook"
    assert training_module.recorded_run_of({"task": "reverse", "positional": False}) == "no positional encoding"
    assert training_module.recorded_run_of({"attention": "additive"}) == "additive"
    assert training_module.recorded_run_of({"task": "reverse", "lr": 0.03}) == "learning rate 0.03"
    with pytest.raises(ValueError) as info:
        training_module.recorded_run_of({"task": "sort", "seed": 2})
    for fragment in ["no recorded run", "'task': 'sort'", "'seed': 2", "additive: {'attention': 'additive'}"]:
        assert fragment in str(info.value), fragment
    with pytest.raises(ValueError, match=r"run must be one of \['notebook'.*got 'copy'"):
        training_module.recorded_run_file("copy")


def test_a_new_run_moves_the_curves_and_draws_nothing_in_full(replay):
    explorer = Explorer(replay)
    blit = explorer.blit
    for name, run in replay.runs.items():
        explorer.controls["run"].value = name
        explorer.controls["step"].value = 200
        mass_line, accuracy_line = explorer.view.curves
        steps = sorted(run.evaluations)
        np.testing.assert_allclose(accuracy_line.get_ydata(), [run.evaluations[s][0] for s in steps])
        np.testing.assert_allclose(mass_line.get_ydata(), [run.evaluations[s][1] for s in steps])
        assert explorer.caption_text.startswith("step 200, example 0:") and explorer.last_error is None
    assert explorer.blit is blit and blit.full_draws == 1
    assert repr(explorer) == "AlignmentExplorer(run='learning rate 0.03', step=200, example=0)"
    explorer.close()


@pytest.mark.parametrize("language,words", [
    ("en", ["Recorded runs", "the notebook's run, positional encoding off, additive attention, learning rate 0.03",
            "every 20 training steps", "Train and Stop", "needs a kernel"]),
    ("pt_BR", ["Execuções gravadas", "a execução do notebook, codificação posicional desligada, atenção aditiva, "
               "taxa de aprendizado 0,03", "a cada 20 passos", "Treinar e Parar", "kernel"]),
])
def test_the_replays_note_says_what_is_recorded_and_what_needs_a_kernel(replay, language, words):
    from d2lmini.i18n import current_language, set_language

    before = current_language()
    set_language(language)
    try:
        note = replay.page_note
    finally:
        set_language(before)
    for word in words:
        assert word in note, (word, note)
    assert explore_alignment(replay.history).declaration.page_note == ""  # one run: nothing left out


def test_runs_of_other_steps_or_examples_are_refused(run):
    other = seq2seq.History(run.examples, snapshot_every=20)
    other.snapshots = {0: run.snapshots[0], 20: run.snapshots[20]}
    with pytest.raises(ValueError) as info:
        Alignment.of_runs({"a": run, "b": other}, {"a": "a", "b": "b"})
    assert "run 'b' must record the steps, evaluations and examples of the first run" in str(info.value)
    with pytest.raises(TypeError, match="run 'b' must be a seq2seq.History, got str"):
        Alignment.of_runs({"a": run, "b": "history"}, {"a": "a", "b": "b"})


@pytest.mark.skipif(not __import__("os").environ.get("D2L_RECORD_RUNS"),
                    reason="records four runs (about 40 s); set D2L_RECORD_RUNS=1 to check the shipped files")
def test_the_shipped_runs_are_what_the_tool_records(tmp_path):
    """Run by hand (never in CI): tools/record_reversal_run.py records each run again and gets the shipped
    file, bit for bit on the machine that recorded it. Another CPU rounds a few sums otherwise, and 400
    steps of training amplify that (the notebook's run, recorded elsewhere, is 5% off in its loss by step
    20 here), so the test compares what does not drift: the first steps' losses, which a run of other
    settings would fail, and when the run clicked and where it ended."""
    from tools import record_reversal_run

    record_reversal_run.main(["--folder", str(tmp_path)])
    for name in training_module.RECORDED_RUNS:
        shipped = seq2seq.History.load(training_module.recorded_run_file(name))
        made = seq2seq.History.load(tmp_path / training_module.recorded_run_file(name).name)
        np.testing.assert_allclose(made.losses[:5], shipped.losses[:5], rtol=1e-4, err_msg=name)
        assert made.steps == shipped.steps and sorted(made.evaluations) == sorted(shipped.evaluations), name
        clicks = [run.steps_to(0.5) for run in (made, shipped)]
        assert clicks[0] == clicks[1] or abs(clicks[0] - clicks[1]) <= 40, (name, clicks)
        assert abs(made.evaluations[400][0] - shipped.evaluations[400][0]) <= 0.15, name


def test_without_evaluations_the_explorer_plots_the_examples_mass():
    history = seq2seq.History(seq2seq.make_batch("reverse", 2, generator=torch.Generator().manual_seed(0)))
    torch.manual_seed(0)
    seq2seq.train(seq2seq.AttentionSeq2Seq(8), "reverse", 20, callback=history)
    explorer = explore_alignment(history)
    [line] = [line for line in explorer.figure.axes[1].lines if line.get_label().startswith("these")]
    np.testing.assert_allclose(line.get_ydata(), [history.mass(s) for s in history.steps])


def test_the_explorer_fits_its_colours_and_keeps_a_static_picture(run):
    explorer = explore_alignment(run, step=0)
    explorer.controls["colour_scale"].value = "fit"
    assert explorer.last_error is None and "colours 0 to" in explorer.caption_text
    data, _ = explorer._repr_mimebundle_()
    assert data["text/plain"] == repr(explorer) and "image/png" in data


@pytest.mark.parametrize("call,error,fragments", [
    (lambda run: explore_alignment("history"), TypeError, ["history", "seq2seq.History", "str"]),
    (lambda run: explore_alignment(seq2seq.History(run.examples)), ValueError, ["no snapshot", "train()"]),
    (lambda run: explore_alignment(run, step=5), ValueError, ["step must be one of", "got 5"]),
    (lambda run: explore_alignment(run, example=4), ValueError, ["example", "between 0 and 3", "4"]),
    (lambda run: Alignment(run).checked_settings(step=5), ValueError, ["step must be one of", "got 5"]),
    (lambda run: Alignment(run, runs={"a": run}, labels={"a": "a"}), TypeError, ["history", "runs", "not both"]),
])
def test_the_explorer_names_bad_arguments(run, call, error, fragments):
    with pytest.raises(error) as info:
        call(run)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))

