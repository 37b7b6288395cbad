"""Watch cross-attention learn: a live training view, and an explorer of what a run recorded.

``TrainingView`` is the explorer shell (``explorer.Explorer``) over ``Training``:
its controls are a run's settings, and its picture, the loss curve with the
held-out accuracy and the cross-attention of one fixed example with the
correct source position of each output step marked, shows the untrained model
of the settings shown (step 0) until a run redraws it as it trains. Its Train
button trains with the settings shown (seed included) in a background thread,
so that the kernel still hears the Stop button; ``run()`` trains in the
caller's thread, as a notebook cell does.

``Alignment`` slides through the snapshots a ``History`` kept: the training
step and the example, the accuracy and alignment mass curves beside.

Both draw on a ``BlitFigure`` (see ``figure``): the axes are drawn once, and an
update redraws the registered artists only.
"""

import functools
import threading
from dataclasses import dataclass, field, fields
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib import rcParams
from matplotlib.lines import Line2D
from matplotlib.transforms import offset_copy

from .._checks import check_number
from ..i18n import N_, _
from ..plotting import describe_weights
from ..seq2seq import (
    ATTENTIONS,
    SYMBOLS,
    AttentionSeq2Seq,
    Batch,
    History,
    Progress,
    alignment_mass,
    as_text,
    make_batch,
    train,
)
from .declaration import Checkbox, Choice, Declaration, IntSlider, NumberBox, Result, Row, numbered, options, say
from .explorer import Explorer
from .export import Recipe
from .figure import masked_weights

RIGHT, WRONG = "#1a7f37", "#cf222e"  # colours of an output symbol that is right, and wrong
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


def real_pairs(batch):
    """(output steps, source positions) of the one example of ``batch``: True where neither is padding."""
    real = batch.real[0]
    return real[:, None] & real[None, :]


def symbols(batch, predictions):
    """(output symbols, source symbols) of the one example of ``batch``, its outputs ``predictions``
    (output steps,); "" for padding."""
    outputs = [str(s) if shown else "" for s, shown in zip(predictions.tolist(), batch.real[0].tolist())]
    sources = [str(s) if s < SYMBOLS else "" for s in batch.source[0].tolist()]
    return outputs, sources


def describe_example(weights, batch, predictions):
    """The cross-attention ``weights`` (output steps, source positions) of the one example of
    ``batch`` in words, its rows named by the model's outputs, its columns by the source."""
    outputs, sources = symbols(batch, predictions)
    return describe_weights(weights, real_pairs(batch), query_labels=outputs, key_labels=sources)


class ExampleMap:
    """The cross-attention heatmap of any of ``examples`` (all padded to one width), on ``ax`` of
    ``blit``, with its colorbar: one figure for every example, so that a new example draws nothing
    in full.

    Columns are the source positions, labelled with the example's symbols
    (texts standing in for the x tick labels); circles mark the correct
    position of each output step; rows are the output steps, labelled with
    the model's output, red where it is wrong. All of these change with the
    example or the output, so they are registered. When an example has
    padding, the background is hatched (it shows through masked cells only),
    and the *masked* legend entry shows for an example with padding.
    """

    def __init__(self, blit, ax, examples):
        width = examples.source.shape[1]
        padded = not bool(examples.real.all())
        self.heatmap = blit.heatmap(ax, width, width, xlabel=_("source symbol (keys)"),
                                    ylabel=_("output symbol (queries)"), masked=padded)
        ax.set_xticks(range(width), [""] * width)
        ax.set_yticks(range(width), [""] * width)
        ax.xaxis.labelpad = ax.yaxis.labelpad = 14  # clear of the symbols
        # Where matplotlib puts a tick label: the tick's length and its pad outside the axes.
        pad = rcParams["xtick.major.size"] + rcParams["xtick.major.pad"]
        below = offset_copy(ax.get_xaxis_transform(), fig=ax.figure, y=-pad, units="points")
        shifted = offset_copy(ax.transData, fig=ax.figure, x=-3, units="points")
        # A placeholder digit in each, so that the layout, made once, leaves room for the symbols.
        self.sources = [blit.animate(ax.text(j, 0, "0", transform=below, ha="center", va="top", clip_on=False,
                                             fontweight="bold")) for j in range(width)]
        # Registered: the heatmap, redrawn on every change, would cover them.
        self.circles = blit.animate(ax.plot([], [], "o", markersize=5, markerfacecolor="none",
                                            markeredgecolor="#1f6feb", markeredgewidth=1.5)[0])
        self.outputs = [blit.animate(ax.text(-0.5, i, "0", transform=shifted, ha="right", va="center",
                                             clip_on=False, fontweight="bold")) for i in range(width)]
        blit.colorbar(ax)
        # The "masked" legend entry that the colorbar made for a hatched heatmap.
        self.legend = blit.animate(blit.figure.legends[-1]) if padded else None
        self.examples = examples

    def show(self, example, weights, predictions):
        """Draw ``weights`` (output steps, source positions) of example number ``example``, its
        source symbols, circles and, labelling the rows, ``predictions`` (output steps,)."""
        batch = self.examples[example]
        padded = not bool(batch.real.all())
        self.heatmap.set_array(masked_weights(weights, real_pairs(batch)) if padded else weights.numpy())
        outputs, sources = symbols(batch, predictions)
        for text, symbol in zip(self.sources, sources):
            text.set_text(symbol)
        rows, columns = batch.alignment[0].nonzero(as_tuple=True)
        self.circles.set_data(columns.tolist(), rows.tolist())
        for text, symbol, right in zip(self.outputs, outputs, (predictions == batch.target[0]).tolist()):
            text.set_text(symbol)
            text.set_color(RIGHT if right else WRONG)
        if self.legend is not None:
            self.legend.set_visible(padded)


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


# ---- the explorer of a run ------------------------------------------------------------------------

@dataclass(frozen=True)
class AlignmentSettings:
    step: int = 0  # explore_alignment starts at the last step recorded
    example: int = 0


@dataclass(frozen=True)
class ReplaySettings:
    """The settings of ``Alignment`` over several recorded runs: the run first."""

    run: str = "notebook"
    step: int = 0
    example: int = 0


@dataclass(frozen=True)
class AlignmentResult(Result):
    """``weights`` (output steps, source positions) of example ``example`` at ``step``."""

    step: int
    example: int
    predictions: torch.Tensor  # (output steps,): the model's output at that step
    mass: float  # the example's weight on its correct positions
    history: History = field(default=None, repr=False, compare=False)  # the run shown: its curves


class Alignment(Declaration):
    """The cross-attention that a ``History`` recorded: pick the training step and the example.

    Left, the example's cross-attention at that step (rows: the output steps,
    labelled with the model's output, red where it is wrong; columns: the
    source positions, labelled with the source symbols; circles: the correct
    position; hatched: padding). Right, the held-out accuracy and the
    alignment mass of the fixed examples over training, with the step shown.

    Every example is drawn on one figure (the examples share one padded
    width): a new example, like a new step, redraws only the registered
    artists, so no figure is built or drawn in full after construction.

    ``Alignment.of_runs`` explores several runs of the same examples and steps
    (the web page's recorded runs, ``for_page``): a *run* menu comes first, and
    the curves, which differ from run to run, are registered too.
    """

    Settings = AlignmentSettings
    figsize = (7.6, 3.2)
    filename = "attention_that_learns.png"
    repr_controls = ("step", "example")
    page_play = "step"  # the page replays the run

    def __init__(self, history):
        self._set_runs({None: history}, {None: ""})

    @classmethod
    def of_runs(cls, runs, labels):
        """An explorer of the runs ``runs`` (name -> ``History``, each of the same examples and steps), its
        *run* menu's options labelled by ``labels`` (name -> label, marked ``N_``)."""
        declaration = cls.__new__(cls)
        declaration._set_runs(runs, labels)
        return declaration

    def _set_runs(self, runs, labels):
        for name, history in runs.items():
            where = "history" if name is None else f"run {name!r}"
            if not isinstance(history, History):
                raise TypeError(f"{where} must be a seq2seq.History, got {type(history).__name__}")
            if not history.snapshots:
                raise ValueError(f"{where} has no snapshot: pass it to train() as the callback first")
        self.runs = dict(runs)
        self.history = next(iter(runs.values()))  # the first run: the only one, or the page's default
        for name, history in runs.items():
            if (history.steps, sorted(history.evaluations)) != (self.history.steps, sorted(self.history.evaluations)) \
                    or not torch.equal(history.examples.source, self.history.examples.source):
                raise ValueError(f"run {name!r} must record the steps, evaluations and examples of the first run "
                                 f"({len(self.history.steps)} steps, {len(self.history.evaluations)} evaluations), "
                                 f"got {len(history.steps)} steps, {len(history.evaluations)} evaluations and "
                                 "maybe other examples")
        self.controls = (
            Choice("step", N_("training step"), options(self.history.steps), style="slider"),
            IntSlider("example", N_("example"), 0, len(self.history.examples) - 1),
        )
        if len(runs) > 1:
            self.controls = (Choice("run", N_("recorded run"), tuple((labels[name], name) for name in runs)),
                             *self.controls)
            self.Settings = ReplaySettings
            self.repr_controls = ("run", "step", "example")

    # The page stores every state it offers; four runs every 10 steps came to about 1 MB in English
    # and 1.08 MB in Portuguese (the budget is 1 MB), so it offers every PAGE_STEP_EVERY-th step, as
    # often as the held-out set was evaluated.
    PAGE_STEP_EVERY = 20

    def page_values(self):
        if len(self.runs) == 1:
            return {}
        return {"step": [step for step in self.history.steps if step % self.PAGE_STEP_EVERY == 0]}

    @property
    def page_note(self):
        """Under the page's picture, over several runs: which runs are recorded, every how many steps,
        and what needs a kernel. In the learner's language already (the page says it as it is)."""
        if len(self.runs) == 1:
            return ""
        runs = ", ".join(say(self.control("run").label_of(name)) for name in self.runs)
        return _("Recorded runs, replayed here: {runs}; shown every {every} training steps. To train with "
                 "settings of your own (the notebook's Train and Stop), run the chapter: that needs a kernel.").format(
            runs=runs, every=self.PAGE_STEP_EVERY)

    def run_of(self, settings):
        """The ``History`` that ``settings`` show."""
        return self.runs[getattr(settings, "run", None)]

    @classmethod
    def for_page(cls):
        """The runs recorded for chapter 08's page (``RECORDED_RUNS``, ``recorded_run_file``): the page
        cannot train."""
        return cls.of_runs({name: History.load(recorded_run_file(name)) for name in RECORDED_RUNS},
                           {name: label for name, (label, _differs) in RECORDED_RUNS.items()})

    def compute(self, settings):
        step, example, history = settings.step, settings.example, self.run_of(settings)
        snapshot, batch = history.snapshots[step], history.examples[example]
        weights = snapshot.weights[example]  # (output steps, source positions)
        predictions = snapshot.predictions[example]
        mass = alignment_mass(weights[None], batch.alignment)
        verdict = _("right") if ((predictions == batch.target[0]) | ~batch.real[0]).all() else _("wrong")
        n = int(batch.real[0].sum())
        caption = _("step {step}, example {example}: {source} → {output} ({verdict}); "
                    "weight on the correct position {mass:.2f}").format(
            step=step, example=example, source=as_text(batch.source[0]), output=as_text(predictions[:n]),
            verdict=verdict, mass=mass)
        return AlignmentResult(weights, caption, mask=real_pairs(batch), step=step, example=example,
                               predictions=predictions, mass=mass, history=history)

    def build(self, blit):
        return AlignmentView(blit, self.history, several=len(self.runs) > 1)

    def describe(self, result):
        return describe_example(result.weights, self.history.examples[result.example], result.predictions)

    def recipe(self, result):
        outputs, sources = symbols(self.history.examples[result.example], result.predictions)
        return Recipe({"outputs": outputs, "sources": sources}, """
            weights = torch.from_numpy(saved["weights"])  # (output steps, source positions)
        """, rebuilt=False, why="they come from the model being trained, which is not saved",
            titles=[f"step {result.step}, example {result.example}"], draw="""
            fig.axes[0].set_xticks(range(weights.shape[1]), saved["sources"].tolist())
            fig.axes[0].set_yticks(range(weights.shape[0]), saved["outputs"].tolist())
        """)


class AlignmentView:
    """The example's cross-attention on the left; the run's curves on the right, the step shown dashed.

    Over ``several`` runs the curves move to the run shown: they are registered lines of the figure
    drawn over the curves' axes (and over the legend), and the axes keep the first run's curves,
    hidden, for the legend to find its "best" place among, as it does with one run. That place is
    found at each full draw from the axes' lines, so it never depends on the run or the step shown
    when the figure is laid out (the page lays it out once; the kernel, at the settings it starts at)."""

    def __init__(self, blit, history, several=False):
        ax_map, ax_curves = blit.figure.subplots(1, 2, width_ratios=(1, 1.15))
        self.map = ExampleMap(blit, ax_map, history.examples)
        steps = history.steps
        if history.evaluations:  # the held-out set's curves
            styles = [dict(color="C3", label=_("held-out: mass on the correct position")),
                      dict(marker="o", color="C2", markersize=3, label=_("held-out: accuracy"))]
        else:  # the recorded examples' mass
            styles = [dict(color="C3", label=_("these examples: mass on the correct position"))]
        if several:
            self.curves = [blit.animate(blit.figure.add_artist(Line2D([], [], transform=ax_curves.transData,
                                                                      clip_box=ax_curves.bbox, **style)))
                           for style in styles]
            self._draw_curves(history)
            for line in self.curves:  # the first run's curves, hidden: what "best" avoids
                ax_curves.add_line(Line2D(*line.get_data(), visible=False))
        else:
            self.curves = [ax_curves.plot([], [], **style)[0] for style in styles]
            self._draw_curves(history)
        self.history = history
        ax_curves.set(xlim=(steps[0], steps[-1]), ylim=(0, 1.02), xlabel=_("training step"))
        # In the background: registered, it would be drawn anew with every picture, and its texts mark the
        # axes changed as they are. Over several runs the curves are drawn over it where they cross it.
        ax_curves.legend(handles=self.curves, loc="best", fontsize="small")
        self.several = several
        # The step shown: a line of the figure over the curves' axes, not one of their lines, so that the
        # legend's "best" place does not depend on the step shown either.
        self.now_line = blit.animate(blit.figure.add_artist(Line2D(
            [steps[-1]] * 2, [0, 1], transform=ax_curves.get_xaxis_transform(), color="k", linestyle="--",
            linewidth=1)))
        self.now_line.set_clip_box(ax_curves.bbox)

    def _draw_curves(self, history):
        if history.evaluations:
            evaluated = sorted(history.evaluations)
            accuracy, mass = zip(*(history.evaluations[s] for s in evaluated))
            self.curves[0].set_data(evaluated, mass)
            self.curves[1].set_data(evaluated, accuracy)
        else:
            self.curves[0].set_data(history.steps, [history.mass(s) for s in history.steps])

    def update(self, result):
        self.map.show(result.example, result.weights, result.predictions)
        if self.several and result.history is not self.history:
            self._draw_curves(result.history)
            self.history = result.history
        self.now_line.set_xdata([result.step] * 2)


def explore_alignment(history, step=None, example=0):
    """Slide through a training run: the cross-attention of each recorded example at each recorded step."""
    declaration = Alignment(history)
    step = history.steps[-1] if step is None else step
    return Explorer(declaration, declaration.checked_settings(step=step, example=example))
