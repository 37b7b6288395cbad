"""Watch cross-attention learn: a live training view, and the runs recorded for chapter 08's page.

``TrainingView`` is the explorer shell (``explorer.Explorer``) over ``Training``:
its controls are a run's settings, and its picture, the loss curve with the
held-out accuracy and the cross-attention of one fixed example with the
correct source position of each output step marked, shows the untrained model
of the settings shown (step 0) until a run redraws it as it trains. Its Train
button trains with the settings shown (seed included) in a background thread,
so that the kernel still hears the Stop button; ``run()`` trains in the
caller's thread, as a notebook cell does.

It draws on a ``BlitFigure`` (see ``figure``): the axes are drawn once, and an
update redraws the registered artists only; the example's heatmap is
``example_map.ExampleMap``, which ``alignment.Alignment`` (the explorer of what
a run recorded, and of the runs recorded here, ``RECORDED_RUNS``) draws with too.
"""

import functools
import threading
from dataclasses import dataclass, fields
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import torch

from .._checks import check_number
from ..i18n import N_, _
from ..seq2seq import (
    ATTENTIONS,
    AttentionSeq2Seq,
    Batch,
    History,
    Progress,
    alignment_mass,
    make_batch,
    train,
)
from .declaration import Checkbox, Choice, Declaration, NumberBox, Result, Row, numbered, options
from .example_map import ExampleMap, describe_example, real_pairs
from .explorer import Explorer

# What the learner reads for each cross-attention of seq2seq.ATTENTIONS: the code takes the name itself.
ATTENTION_LABELS = {"dot-product": N_("dot-product"), "additive": N_("additive")}
EXAMPLE_SEED = 1234  # the fixed example and the held-out set do not change with the training seed
TEST_SEED = 4321
SNAPSHOT_EVERY = 10  # a run's History keeps the examples' attention every 10 steps
# Chapter 08's run, recorded for its web page (tools/record_reversal_run.py remakes it).
RECORDED_RUN = Path(__file__).with_name("reversal_run.pt")
# The runs chapter 08's page replays, since it cannot train: name -> (its label, as the chapter's prose
# names it, and the TrainingView settings in which it differs from the notebook's run). The notebook's
# run first; then the changes "Your turn: retrain it" suggests on reversal, one change each, seed 0.
RECORDED_RUNS = {
    "notebook": (N_("the notebook's run"), {}),
    "no positional encoding": (N_("positional encoding off"), {"positional": False}),
    "additive": (N_("additive attention"), {"attention": "additive"}),
    "learning rate 0.03": (N_("learning rate 0.03"), {"lr": 3e-2}),
}


def recorded_run_file(name):
    """Where the recorded run ``name`` (of ``RECORDED_RUNS``) is: the notebook's is ``RECORDED_RUN``."""
    if name not in RECORDED_RUNS:
        raise ValueError(f"run must be one of {list(RECORDED_RUNS)}, got {name!r}")
    return RECORDED_RUN if name == "notebook" else RECORDED_RUN.with_name(f"reversal_run_{name.replace(' ', '_')}.pt")


def recorded_run_of(settings):
    """The name of the recorded run whose settings are the notebook's run changed by ``settings`` (name ->
    value, as a TrainingView's text form lists them: the task and what differs from the defaults)."""
    changes = {name: value for name, value in settings.items()
               if value != getattr(TrainingSettings(), name)}
    for name, (_label, differs) in RECORDED_RUNS.items():
        if changes == differs:
            return name
    raise ValueError(f"no recorded run has the settings {changes!r}: the recorded runs change "
                     + "; ".join(f"{name}: {differs!r}" for name, (_label, differs) in RECORDED_RUNS.items()))


# ---- the live view ----------------------------------------------------------------------------

@dataclass(frozen=True)
class TrainingSettings:
    task: str = "reverse"
    attention: str = "dot-product"
    num_hiddens: int = 32
    lr: float = 3e-3
    positional: bool = True
    lengths: tuple = (4, 8)
    num_steps: int = 400
    seed: int = 0


@dataclass(frozen=True)
class LiveResult(Result):
    """A run at ``step``: ``weights`` (output steps, source positions) of the example drawn."""

    step: int
    num_steps: int
    example: Batch  # the example drawn, a batch of one
    predictions: torch.Tensor  # (output steps,): the model's output for it
    losses: tuple  # the loss of every step so far
    accuracy: tuple  # (step, held-out accuracy) of every evaluation so far


@functools.cache
def recorded_examples(task, lengths):
    """The examples a run records: the one drawn live, of the longest length, then three of any
    length. They are the same for every seed."""
    generator = torch.Generator().manual_seed(EXAMPLE_SEED)
    longest = make_batch(task, 1, (lengths[1], lengths[1]), generator=generator)
    return Batch.cat([longest, make_batch(task, 3, lengths, generator=generator)])


class Training(Declaration):
    """A run of ``AttentionSeq2Seq`` on a toy task, its settings the controls.

    ``compute`` gives step 0, the untrained model of the settings (its weights
    drawn from their seed) over the fixed example; ``TrainingView`` shows the
    other steps as a run reaches them (``result_at``). Each (task, lengths,
    steps) has a figure of its own, built when first shown. The colour scale
    stays 0 to 1: a colour control would recompute, and so lose a run's picture.
    """

    LEARNING_RATES = (1e-3, 3e-3, 1e-2, 3e-2)
    HIDDEN_SIZES = (16, 32, 64)
    LENGTHS = ((3, 6), (4, 8), (6, 10))
    STEPS = (100, 200, 400, 800)

    controls = (
        Choice("task", N_("task"), ((N_("reverse"), "reverse"), (N_("sort (distinct digits)"), "sort"))),
        Choice("attention", N_("attention"), tuple((ATTENTION_LABELS[name], name) for name in ATTENTIONS),
               style="toggle"),
        Choice("num_hiddens", N_("hidden size"), options(HIDDEN_SIZES)),
        # A number alone: nothing to translate but its decimal mark.
        Choice("lr", N_("learning rate"), tuple((numbered("{rate:g}", rate=rate), rate) for rate in LEARNING_RATES)),
        Checkbox("positional", N_("positional encoding")),
        Choice("lengths", N_("lengths"), tuple((f"{a}–{b}", (a, b)) for a, b in LENGTHS)),
        Choice("num_steps", N_("steps"), options(STEPS)),
        NumberBox("seed", N_("seed"), 0, 9999),
    )
    Settings = TrainingSettings
    rows = (Row(("task", "attention")), Row(("num_hiddens", "lr", "positional")),
            Row(("lengths", "num_steps", "seed")))
    figsize = (7.6, 3.0)
    filename = "training.png"
    shows_weights = False
    # Its controls are menus, a box and the Train button, not sliders; a notebook run trains the model.
    static_hint = N_("run the notebook to train the model; the Train button trains a new one")

    def __init__(self, device=None):
        self.device = torch.device("cpu") if device is None else torch.device(device)

    def new_model(self, settings):
        """The untrained model of ``settings``, its weights drawn from ``settings.seed``."""
        with torch.random.fork_rng(devices=[]):  # leaves the notebook's random numbers alone
            torch.manual_seed(settings.seed)
            return AttentionSeq2Seq(settings.num_hiddens, settings.attention, settings.positional).to(self.device)

    def compute(self, settings):
        history = History(recorded_examples(settings.task, settings.lengths), snapshot_every=SNAPSHOT_EVERY)
        history(Progress(0, 0, None, self.new_model(settings), done=True))  # a snapshot of step 0
        return self.result_at(history, 0, settings)

    def result_at(self, history, step, settings):
        """What the picture shows of ``history`` at ``step`` (which has a snapshot), a run of ``settings``."""
        snapshot, example = history.snapshots[step], history.examples[0]
        parts = [_("step {step} of {num_steps}").format(step=step, num_steps=settings.num_steps)]
        if history.losses:
            parts.append(_("loss {loss:.3f}").format(loss=history.losses[-1]))
        if history.evaluations:
            accuracy, _mass = history.evaluations[max(history.evaluations)]
            parts.append(_("held-out accuracy {accuracy:.0%}").format(accuracy=accuracy))
        mass = alignment_mass(snapshot.weights[:1], example.alignment)
        parts.append(_("weight on the circles {mass:.2f}").format(mass=mass))  # the example drawn
        accuracy = tuple((s, history.evaluations[s][0]) for s in sorted(history.evaluations))
        return LiveResult(snapshot.weights[0], " · ".join(parts), mask=real_pairs(example),
                          layout=(settings.task, settings.lengths, settings.num_steps), step=step,
                          num_steps=settings.num_steps, example=example, predictions=snapshot.predictions[0],
                          losses=tuple(history.losses), accuracy=accuracy)

    def all_layouts(self):
        return {}  # 24 of them: none drawn ahead, each built when first shown

    def figsize_for(self, layout):
        return self.figsize

    def build(self, blit):
        task, lengths, num_steps = blit.layout
        return LiveView(blit, recorded_examples(task, lengths)[0], num_steps)

    def describe(self, result):
        return describe_example(result.weights, result.example, result.predictions)


class LiveView:
    """A run's figure: loss and accuracy curves, and the cross-attention of ``example`` with its
    correct positions marked."""

    LOSS_RANGE = (1e-3, 5.0)

    def __init__(self, blit, example, num_steps):
        ax_loss, ax_map = blit.figure.subplots(1, 2, width_ratios=(1.15, 1))
        ax_loss.set(xlim=(0, num_steps), ylim=self.LOSS_RANGE, yscale="log", xlabel=_("training step"),
                    ylabel=_("loss (log scale)"))
        ax_loss.yaxis.label.set_color("C0")
        ax_accuracy = ax_loss.twinx()
        ax_accuracy.set(ylim=(0, 100), ylabel=_("held-out accuracy (%)"))
        ax_accuracy.yaxis.label.set_color("C2")
        self.loss = blit.animate(ax_loss.plot([], [], color="C0", linewidth=1)[0])
        self.accuracy = blit.animate(ax_accuracy.plot([], [], "o-", color="C2", markersize=3)[0])
        self.map = ExampleMap(blit, ax_map, example)
        ax_map.set_title(_("cross-attention, one fixed example"), fontsize="medium")

    def update(self, result):
        self.map.show(0, result.weights, result.predictions)
        self.loss.set_data(np.arange(1, len(result.losses) + 1), result.losses)
        self.accuracy.set_data([s for s, _ in result.accuracy], [100 * a for _, a in result.accuracy])


class TrainingView(Explorer):
    """Train a model and watch its cross-attention learn, redrawn every ``draw_every`` steps.

    The settings (task, attention, hidden size, learning rate, positional
    encoding, lengths, steps, seed) are controls, and the picture shows the
    untrained model of the settings shown; Train retrains with them in a
    background thread, Stop ends that run after the step in progress, and the
    controls are disabled meanwhile. ``run()`` trains in the caller's thread.
    After a run, ``model`` and ``history`` hold the trained model and its
    ``History``. An error during a run is shown in the view's message line and
    kept in ``last_error`` (``run()`` raises it as well).
    """

    STEPS = Training.STEPS  # the run lengths offered

    def __init__(self, task="reverse", attention="dot-product", num_hiddens=32, lr=3e-3, positional=True,
                 lengths=(4, 8), num_steps=400, seed=0, *, draw_every=20, test_size=500, device=None):
        declaration = Training(device)
        settings = declaration.checked_settings(
            task=task, attention=attention, num_hiddens=num_hiddens, lr=lr, positional=positional,
            lengths=tuple(lengths) if isinstance(lengths, list) else lengths, num_steps=num_steps, seed=seed)
        check_number(draw_every, "draw_every", SNAPSHOT_EVERY, 10_000, integer=True)
        if draw_every % SNAPSHOT_EVERY:
            raise ValueError(f"draw_every must be a multiple of {SNAPSHOT_EVERY}, got {draw_every}")
        check_number(test_size, "test_size", 1, 100_000, integer=True)
        super().__init__(declaration, settings, refresh_now=False)  # the first picture moves the bar, made below
        self.draw_every, self.test_size = draw_every, test_size
        self.model = self.history = None
        self._stop = threading.Event()
        self._thread = None
        self._busy = False
        self.progress = widgets.IntProgress(value=0, min=0, max=num_steps, description=_("step"))
        self.train_button = widgets.Button(description=_("Train"), icon="play", button_style="success",
                                           tooltip=_("Train a new model with these settings"))
        self.stop_button = widgets.Button(description=_("Stop"), icon="stop", disabled=True,
                                          tooltip=_("Stop the run after the step in progress"))
        self.train_button.on_click(lambda button: self.start())
        self.stop_button.on_click(lambda button: self.stop())
        self.add_actions(self.train_button, self.stop_button)  # after the seed
        self.add_status(self.progress)  # beside the caption: the run's status
        self.first_refresh()

    # What a learner calls.

    @property
    def is_training(self):
        """Whether a run is in progress."""
        return self._busy

    def run(self):
        """Train with the settings shown, in this thread, redrawing as it goes; returns the ``History``."""
        if self._busy:
            raise RuntimeError("a run is in progress: wait for it, or press Stop")
        self._set_busy(True)
        try:
            return self._train(self.settings)
        except Exception as error:
            self._show_error(error)
            raise
        finally:
            self._set_busy(False)

    def start(self):
        """Train with the settings shown in a background thread (the Train button); returns the thread."""
        if self._busy:
            return self._thread
        self._set_busy(True)
        self._thread = threading.Thread(target=self._run_in_background, args=(self.settings,), daemon=True)
        self._thread.start()
        return self._thread

    def stop(self):
        """End the run in progress after the step it is taking (the Stop button)."""
        self._stop.set()

    def __repr__(self):
        """The task, the settings that differ from their defaults and the step shown: short enough for
        Jupyter's text form, and enough for the web site to start its replay where the picture is."""
        settings, defaults = self.settings, TrainingSettings()
        shown = [f"{f.name}={getattr(settings, f.name)!r}" for f in fields(settings)
                 if f.name == "task" or getattr(settings, f.name) != getattr(defaults, f.name)]
        return f"{type(self).__name__}({', '.join(shown)}, step={self.progress.value})"

    def show(self, result):
        """Show ``result``, a step of a run or the untrained model, and move the bar to its step."""
        super().show(result)
        if self.progress.max != result.num_steps:
            self.progress.value = 0  # before the new end: the last run's value must not show on a new scale
            self.progress.max = result.num_steps
        self.progress.value = result.step

    # The machinery.

    def _set_busy(self, busy):
        self._busy = busy
        for control in (*self.controls.values(), self.train_button, self.save_button):
            control.disabled = busy
        self.stop_button.disabled = not busy

    def _run_in_background(self, settings):
        try:
            self._train(settings)
        except Exception as error:  # shown in the view and kept, never swallowed
            self._show_error(error)
        finally:
            self._set_busy(False)

    def _train(self, settings):
        self._stop.clear()
        self.message.value, self.last_error = "", None
        test = make_batch(settings.task, self.test_size, settings.lengths,
                          generator=torch.Generator().manual_seed(TEST_SEED))
        history = History(recorded_examples(settings.task, settings.lengths), test, snapshot_every=SNAPSHOT_EVERY)
        model = self.declaration.new_model(settings)

        def callback(progress):
            history(progress)
            if progress.step % self.draw_every == 0 or progress.done:
                self.show(self.declaration.result_at(history, progress.step, settings))

        train(model, settings.task, settings.num_steps, lr=settings.lr, lengths=settings.lengths,
              seed=settings.seed, callback=callback, stop=self._stop)
        self.model, self.history = model, history
        return history
