"""Watch cross-attention learn: a live training view, and an explorer of what a run recorded.

``TrainingView`` trains an ``AttentionSeq2Seq`` and redraws as it goes: a
progress bar with the loss, the loss curve with the held-out accuracy, and the
cross-attention of one fixed example, with the correct source position of each
output step marked. Its Train button retrains with the settings shown (seed
included) in a background thread, so that the kernel still hears the Stop
button; ``run()`` trains in the caller's thread, as a notebook cell does.

``AlignmentExplorer`` slides through the snapshots a ``History`` kept: the
training step and the example, the accuracy and alignment mass curves beside.

Both draw on a ``BlitFigure`` (see ``figure``): the axes are drawn once, and an
update redraws the registered artists only.
"""

import base64
import html
import inspect
import threading

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib import rcParams
from matplotlib.transforms import offset_copy

from ..plotting import describe_weights
from ..seq2seq import (
    ATTENTIONS,
    SYMBOLS,
    TASKS,
    AttentionSeq2Seq,
    Batch,
    History,
    Progress,
    alignment_mass,
    as_text,
    make_batch,
    train,
)
from ._compat import MimeBundleDisplay
from .controls import WIDE, int_slider, selection_slider
from .declaration import check_choice, check_number
from .export import Recipe
from .figure import BlitFigure, masked_weights
from .legacy import Explorer, error_html

RIGHT, WRONG = "#1a7f37", "#cf222e"  # colours of an output symbol that is right, and wrong
EXAMPLE_SEED = 1234  # the fixed example and the held-out set do not change with the training seed
TEST_SEED = 4321


class _ExampleMap:
    """The cross-attention heatmap of one example, on ``ax`` of ``plot``: what changes is registered.

    Columns are the source positions, labelled with the source's symbols, and
    circles mark the correct position of each output step: both are fixed for
    the example; the labels are drawn once, with the background, the circles
    over the heatmap. Rows are the
    output steps, labelled with the model's output (``show``), which changes:
    registered texts stand in for the tick labels. Padding is hatched.
    """

    def __init__(self, plot, ax, example):
        width = example.source.shape[1]
        real = example.real[0]
        padded = not bool(real.all())
        self.heatmap = plot.heatmap(ax, width, width, xlabel="source symbol (keys)",
                                    ylabel="output symbol (queries)", masked=padded)
        self.mask = real[:, None] & real[None, :]  # (steps, positions): neither is padding
        ax.set_xticks(range(width), [str(d) if d < SYMBOLS else "" for d in example.source[0].tolist()],
                      fontweight="bold")
        rows, columns = example.alignment[0].nonzero(as_tuple=True)
        # Registered although they never move: the heatmap, redrawn on every change, would cover them.
        self.circles = plot.animate(ax.plot(columns.tolist(), rows.tolist(), "o", markersize=5, markerfacecolor="none",
                                            markeredgecolor="#1f6feb", markeredgewidth=1.5)[0])
        ax.set_yticks(range(width), [""] * width)
        ax.yaxis.labelpad = 14  # clear of the output symbols
        shifted = offset_copy(ax.transData, fig=ax.figure, x=-3, units="points")
        # A placeholder digit in each, so that the layout, made once, leaves room for the symbols.
        self.outputs = [plot.animate(ax.text(-0.5, i, "0", transform=shifted, ha="right", va="center",
                                             clip_on=False, fontweight="bold")) for i in range(width)]
        self.example, self.padded = example, padded

    def show(self, weights, predictions):
        """Draw ``weights`` (steps, positions) and label the rows with ``predictions`` (steps,)."""
        self.heatmap.set_array(masked_weights(weights, self.mask) if self.padded else weights.numpy())
        target, real = self.example.target[0], self.example.real[0]
        for text, symbol, wanted, shown in zip(self.outputs, predictions.tolist(), target.tolist(), real.tolist()):
            text.set_text(str(symbol) if shown else "")
            text.set_color(RIGHT if symbol == wanted else WRONG)


class TrainingView(MimeBundleDisplay, widgets.VBox):
    """Train a model and watch its cross-attention learn, redrawn every ``draw_every`` steps.

    The settings (task, attention, hidden size, learning rate, positional
    encoding, lengths, steps, seed) are controls; Train retrains with them in
    a background thread, Stop ends that run after the step in progress, and
    the controls are disabled meanwhile. ``run()`` trains in the caller's
    thread. After a run, ``model`` and ``history`` hold the trained model and
    its ``History``. An error during a run is shown in the view's message line
    and kept in ``last_error`` (``run()`` raises it as well).
    """

    LEARNING_RATES = (1e-3, 3e-3, 1e-2, 3e-2)
    HIDDEN_SIZES = (16, 32, 64)
    LENGTHS = ((3, 6), (4, 8), (6, 10))
    STEPS = (100, 200, 400, 800)
    SNAPSHOT_EVERY = 10

    def __init__(self, task="reverse", attention="dot-product", num_hiddens=32, lr=3e-3, positional=True,
                 lengths=(4, 8), num_steps=400, seed=0, *, draw_every=20, test_size=500, device=None):
        super().__init__()
        lengths = tuple(lengths) if isinstance(lengths, list) else lengths
        for value, name, choices in [(task, "task", TASKS), (attention, "attention", ATTENTIONS),
                                     (num_hiddens, "num_hiddens", self.HIDDEN_SIZES),
                                     (lr, "lr", self.LEARNING_RATES), (positional, "positional", [True, False]),
                                     (lengths, "lengths", self.LENGTHS), (num_steps, "num_steps", self.STEPS)]:
            check_choice(value, name, choices)
        check_number(seed, "seed", 0, 9999, integer=True)
        check_number(draw_every, "draw_every", self.SNAPSHOT_EVERY, 10_000, integer=True)
        if draw_every % self.SNAPSHOT_EVERY:
            raise ValueError(f"draw_every must be a multiple of {self.SNAPSHOT_EVERY}, got {draw_every}")
        check_number(test_size, "test_size", 1, 100_000, integer=True)
        self.draw_every, self.test_size = draw_every, test_size
        self.device = torch.device("cpu") if device is None else torch.device(device)
        self.controls = {
            "task": widgets.Dropdown(options=[("reverse", "reverse"), ("sort (distinct digits)", "sort")],
                                     value=task, description="task"),
            "attention": widgets.ToggleButtons(options=ATTENTIONS, value=attention, description="attention",
                                               style={"description_width": "initial", "button_width": "100px"}),
            "num_hiddens": widgets.Dropdown(options=self.HIDDEN_SIZES, value=num_hiddens,
                                            description="hidden size", style=WIDE),
            "lr": widgets.Dropdown(options=[(f"{rate:g}", rate) for rate in self.LEARNING_RATES], value=lr,
                                   description="learning rate", style=WIDE),
            "positional": widgets.Checkbox(value=positional, description="positional encoding", style=WIDE),
            "lengths": widgets.Dropdown(options=[(f"{a}–{b}", (a, b)) for a, b in self.LENGTHS], value=lengths,
                                        description="lengths"),
            "num_steps": widgets.Dropdown(options=self.STEPS, value=num_steps, description="steps"),
            "seed": widgets.BoundedIntText(value=seed, min=0, max=9999, description="seed",
                                           layout=widgets.Layout(width="130px")),
        }
        self.train_button = widgets.Button(description="Train", icon="play", button_style="success",
                                           tooltip="Train a new model with these settings")
        self.stop_button = widgets.Button(description="Stop", icon="stop", disabled=True,
                                          tooltip="Stop the run after the step in progress")
        self.train_button.on_click(lambda button: self.start())
        self.stop_button.on_click(lambda button: self.stop())
        self.progress = widgets.IntProgress(value=0, min=0, max=num_steps, description="step")
        self.status = widgets.HTML()
        self.image = widgets.Image(format="png")
        self.message = widgets.HTML()
        self.model = self.history = self.last_error = None
        self._stop = threading.Event()
        self._thread = None
        self._busy = False
        self._pictures = {}  # (task, lengths, num_steps) -> _LivePicture
        c = self.controls
        self.children = [
            widgets.HBox([c["task"], c["attention"]]),
            widgets.HBox([c["num_hiddens"], c["lr"], c["positional"]]),
            widgets.HBox([c["lengths"], c["num_steps"], c["seed"], self.train_button, self.stop_button]),
            widgets.HBox([self.progress, self.status]),
            self.image,
            self.message,
        ]
        self._show_untrained(self.settings)

    # What a learner calls.

    @property
    def settings(self):
        """The control values, name -> value."""
        return {name: control.value for name, control in self.controls.items()}

    @property
    def training(self):
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
        """The task and the settings that differ from their defaults: short enough for Jupyter's text form."""
        defaults = inspect.signature(type(self).__init__).parameters
        shown = [f"{name}={value!r}" for name, value in self.settings.items()
                 if name == "task" or value != defaults[name].default]
        return f"{type(self).__name__}({', '.join(shown)})"

    def _repr_mimebundle_(self, **kwargs):
        """The widget view, and beside it a PNG of the picture shown now, for renderers without widgets."""
        data = super()._repr_mimebundle_(**kwargs)
        data["image/png"] = base64.b64encode(bytes(self.image.value)).decode("ascii")
        return data, {"image/png": {"width": self._picture.plot.css_size[0]}}

    # The machinery.

    def _set_busy(self, busy):
        self._busy = busy
        for control in (*self.controls.values(), self.train_button):
            control.disabled = busy
        self.stop_button.disabled = not busy

    def _run_in_background(self, settings):
        try:
            self._train(settings)
        except Exception as error:  # shown in the view and kept, never swallowed
            self._show_error(error)
        finally:
            self._set_busy(False)

    def _show_error(self, error):
        self.last_error = error
        self.message.value = error_html(error)

    def _new_model(self, settings):
        """The untrained model of ``settings``, its weights drawn from ``settings["seed"]``."""
        with torch.random.fork_rng(devices=[]):  # leaves the notebook's random numbers alone
            torch.manual_seed(settings["seed"])
            return AttentionSeq2Seq(settings["num_hiddens"], settings["attention"],
                                    settings["positional"]).to(self.device)

    def _examples(self, settings):
        """The examples recorded: the one drawn live, of the longest length, then three of any length.
        They are the same for every seed."""
        task, lengths = settings["task"], settings["lengths"]
        generator = torch.Generator().manual_seed(EXAMPLE_SEED)
        longest = make_batch(task, 1, (lengths[1], lengths[1]), generator=generator)
        return Batch.cat([longest, make_batch(task, 3, lengths, generator=generator)])

    def _picture_for(self, settings):
        key = (settings["task"], settings["lengths"], settings["num_steps"])
        if key not in self._pictures:
            self._pictures[key] = _LivePicture(self._examples(settings), settings["num_steps"])
        self._picture = self._pictures[key]
        return self._picture

    def _show_untrained(self, settings):
        """Step 0 of ``settings``: the untrained model's attention over the fixed example, no curve yet."""
        picture = self._picture_for(settings)
        history = History(picture.examples, snapshot_every=self.SNAPSHOT_EVERY)
        model = self._new_model(settings)
        history(Progress(0, 0, None, model, done=True))  # a snapshot of step 0
        self.image.value = picture.draw(history, 0)
        self.progress.value = 0
        self.progress.max = settings["num_steps"]
        self.status.value = self._status(history, 0, settings["num_steps"])

    def _train(self, settings):
        self._stop.clear()
        self.message.value, self.last_error = "", None
        picture = self._picture_for(settings)
        test = make_batch(settings["task"], self.test_size, settings["lengths"],
                          generator=torch.Generator().manual_seed(TEST_SEED))
        history = History(picture.examples, test, snapshot_every=self.SNAPSHOT_EVERY)
        model = self._new_model(settings)
        num_steps = settings["num_steps"]
        self.progress.value = 0  # before the new end: the bar must not show the last run's value on a new scale
        self.progress.max = num_steps

        def callback(progress):
            history(progress)
            if progress.step % self.draw_every == 0 or progress.done:
                self.image.value = picture.draw(history, progress.step)
                self.progress.value = progress.step
                self.status.value = self._status(history, progress.step, num_steps)

        train(model, settings["task"], num_steps, lr=settings["lr"], lengths=settings["lengths"],
              seed=settings["seed"], callback=callback, stop=self._stop)
        self.model, self.history = model, history
        return history

    @staticmethod
    def _status(history, step, num_steps):
        parts = [f"step {step} of {num_steps}"]
        if history.losses:
            parts.append(f"loss {history.losses[-1]:.3f}")
        if history.evaluations:
            accuracy, _ = history.evaluations[max(history.evaluations)]
            parts.append(f"held-out accuracy {accuracy:.0%}")
        drawn = alignment_mass(history.snapshots[step].weights[:1], history.examples[0].alignment)
        parts.append(f"weight on the circles {drawn:.2f}")  # the example drawn
        return html.escape(" · ".join(parts))


class _LivePicture:
    """The live view's figure for one (task, lengths, steps): loss and accuracy curves, and the
    cross-attention of the first of ``examples`` with its correct positions marked."""

    LOSS_RANGE = (1e-3, 5.0)

    def __init__(self, examples, num_steps):
        self.examples = examples
        example = examples[0]  # (one example) the one drawn
        self.plot = plot = BlitFigure((7.6, 3.0))
        ax_loss, ax_map = plot.figure.subplots(1, 2, width_ratios=(1.15, 1))
        ax_loss.set(xlim=(0, num_steps), ylim=self.LOSS_RANGE, yscale="log", xlabel="training step",
                    ylabel="loss (log scale)")
        ax_loss.yaxis.label.set_color("C0")
        ax_accuracy = ax_loss.twinx()
        ax_accuracy.set(ylim=(0, 100), ylabel="held-out accuracy (%)")
        ax_accuracy.yaxis.label.set_color("C2")
        self.loss = plot.animate(ax_loss.plot([], [], color="C0", linewidth=1)[0])
        self.accuracy = plot.animate(ax_accuracy.plot([], [], "o-", color="C2", markersize=3)[0])
        self.map = _ExampleMap(plot, ax_map, example)
        ax_map.set_title("cross-attention, one fixed example", fontsize="medium")
        plot.colorbar(ax_map)

    def draw(self, history, step):
        """PNG bytes of ``history`` at ``step`` (which has a snapshot)."""
        snapshot = history.snapshots[step]
        self.map.show(snapshot.weights[0], snapshot.predictions[0])
        self.loss.set_data(np.arange(1, len(history.losses) + 1), history.losses)
        steps = sorted(history.evaluations)
        self.accuracy.set_data(steps, [100 * history.evaluations[s][0] for s in steps])
        return self.plot.render()


class _AnyExampleMap:
    """The cross-attention heatmap of any of ``examples`` (all padded to one width), on ``ax`` of
    ``plot``: one figure for every example, so that a new example draws nothing in full.

    What ``_ExampleMap`` draws once for its one example changes here with the
    example, so it is registered: the source symbols (texts standing in for
    the x tick labels), the circles on the correct positions, and the
    *masked* legend entry (shown for an example with padding). The hatched
    background is always there; it shows only through masked cells.
    """

    def __init__(self, plot, ax, examples):
        width = examples.source.shape[1]
        self.heatmap = plot.heatmap(ax, width, width, xlabel="source symbol (keys)",
                                    ylabel="output symbol (queries)", masked=True)
        ax.set_xticks(range(width), [""] * width)
        ax.set_yticks(range(width), [""] * width)
        ax.xaxis.labelpad = ax.yaxis.labelpad = 14  # clear of the symbols
        # Where matplotlib puts a tick label: the tick's length and its pad outside the axes.
        pad = rcParams["xtick.major.size"] + rcParams["xtick.major.pad"]
        below = offset_copy(ax.get_xaxis_transform(), fig=ax.figure, y=-pad, units="points")
        shifted = offset_copy(ax.transData, fig=ax.figure, x=-3, units="points")
        # A placeholder digit in each, so that the layout, made once, leaves room for the symbols.
        self.sources = [plot.animate(ax.text(j, 0, "0", transform=below, ha="center", va="top", clip_on=False,
                                             fontweight="bold")) for j in range(width)]
        # Registered: the heatmap, redrawn on every change, would cover them.
        self.circles = plot.animate(ax.plot([], [], "o", markersize=5, markerfacecolor="none",
                                            markeredgecolor="#1f6feb", markeredgewidth=1.5)[0])
        self.outputs = [plot.animate(ax.text(-0.5, i, "0", transform=shifted, ha="right", va="center",
                                             clip_on=False, fontweight="bold")) for i in range(width)]
        self.examples = examples
        self.legend = None  # the "masked" entry, made with the colorbar (``use_legend``)

    def use_legend(self, plot):
        """Register the figure's "masked" legend entry (made by ``plot.colorbar``), shown with padding."""
        self.legend = plot.animate(plot.figure.legends[-1])

    def show(self, example, weights, predictions):
        """Draw ``weights`` (steps, positions) of example number ``example``, its source symbols,
        circles and, labelling the rows, ``predictions`` (steps,)."""
        batch = self.examples[example]
        real = batch.real[0]
        padded = not bool(real.all())
        mask = real[:, None] & real[None, :]  # (steps, positions): neither is padding
        self.heatmap.set_array(masked_weights(weights, mask) if padded else weights.numpy())
        for text, symbol in zip(self.sources, batch.source[0].tolist()):
            text.set_text(str(symbol) if symbol < SYMBOLS else "")
        rows, columns = batch.alignment[0].nonzero(as_tuple=True)
        self.circles.set_data(columns.tolist(), rows.tolist())
        for text, symbol, wanted, shown in zip(self.outputs, predictions.tolist(), batch.target[0].tolist(),
                                               real.tolist()):
            text.set_text(str(symbol) if shown else "")
            text.set_color(RIGHT if symbol == wanted else WRONG)
        if self.legend is not None:
            self.legend.set_visible(padded)


class AlignmentExplorer(Explorer):
    """The cross-attention that a ``History`` recorded: pick the training step and the example.

    Left, the example's cross-attention at that step (rows: the output steps,
    labelled with the model's output, red where it is wrong; columns: the
    source positions, labelled with the source symbols; circles: the correct
    position; hatched: padding). Right, the held-out accuracy and the
    alignment mass of the fixed examples over training, with the step shown.

    Every example is drawn on one figure (the examples share one padded
    width): a new example, like a new step, redraws only the registered
    artists, so no figure is built or drawn in full after construction.
    """

    repr_controls = ("step", "example")

    def __init__(self, history, step=None, example=0):
        if not isinstance(history, History):
            raise TypeError(f"history must be a seq2seq.History, got {type(history).__name__}")
        if not history.snapshots:
            raise ValueError("history has no snapshot: pass it to train() as the callback first")
        self.history = history
        steps = history.steps
        step = steps[-1] if step is None else step
        batch = history.examples
        controls = {
            "step": selection_slider("step", step, steps, description="training step", style=WIDE),
            "example": int_slider("example", example, 0, len(batch) - 1, description="example"),
        }
        super().__init__(controls, figsize=(7.6, 3.2), filename="attention_that_learns.png")

    def build(self, plot):
        history = self.history
        ax_map, ax_curves = plot.figure.subplots(1, 2, width_ratios=(1, 1.15))
        self.map = _AnyExampleMap(plot, ax_map, history.examples)
        plot.colorbar(ax_map)
        self.map.use_legend(plot)
        steps = history.steps
        if history.evaluations:  # the held-out set's curves
            evaluated = sorted(history.evaluations)
            accuracy, mass = zip(*(history.evaluations[s] for s in evaluated))
            ax_curves.plot(evaluated, mass, color="C3", label="held-out: mass on the correct position")
            ax_curves.plot(evaluated, accuracy, "o-", color="C2", markersize=3, label="held-out: accuracy")
        else:  # the recorded examples' mass
            ax_curves.plot(steps, [history.mass(s) for s in steps], color="C3",
                           label="these examples: mass on the correct position")
        ax_curves.set(xlim=(steps[0], steps[-1]), ylim=(0, 1.02), xlabel="training step")
        ax_curves.legend(loc="best", fontsize="small")  # placed once: the curves never move
        self.now_line = plot.animate(ax_curves.axvline(steps[-1], color="k", linestyle="--", linewidth=1))

    def compute(self, state):
        step, example = state["step"], state["example"]
        snapshot = self.history.snapshots[step]
        batch = self.history.examples[example]
        weights = snapshot.weights[example]  # (output steps, source positions)
        predictions = snapshot.predictions[example]
        mass = alignment_mass(weights[None], batch.alignment)
        verdict = "right" if ((predictions == batch.target[0]) | ~batch.real[0]).all() else "wrong"
        n = int(batch.real[0].sum())
        caption = (f"step {step}, example {example}: {as_text(batch.source[0])} → {as_text(predictions[:n])} "
                   f"({verdict}); weight on the correct position {mass:.2f}")
        return {"weights": weights, "predictions": predictions, "step": step, "mass": mass, "caption": caption,
                "example": example}

    def draw(self, result):
        self.map.show(result["example"], result["weights"], result["predictions"])
        self.now_line.set_xdata([result["step"]] * 2)

    def _labels(self, result):
        """(output symbols, source symbols) of the example shown, "" for padding."""
        batch = self.history.examples[result["example"]]
        real = batch.real[0].tolist()
        outputs = [str(s) if shown else "" for s, shown in zip(result["predictions"].tolist(), real)]
        sources = [str(s) if s < SYMBOLS else "" for s in batch.source[0].tolist()]
        return outputs, sources

    def describe(self, result):
        outputs, sources = self._labels(result)
        real = self.history.examples[result["example"]].real[0]
        mask = real[:, None] & real[None, :]  # (steps, positions): neither is padding
        return describe_weights(result["weights"], mask, query_labels=outputs, key_labels=sources)

    def recipe(self, result):
        outputs, sources = self._labels(result)
        return Recipe({"outputs": outputs, "sources": sources}, """
            weights = torch.from_numpy(saved["weights"])  # (output steps, source positions)
        """, rebuilt=False, why="they come from the model being trained, which is not saved",
            titles=[f"step {result['step']}, example {result['example']}"], draw="""
            fig.axes[0].set_xticks(range(weights.shape[1]), saved["sources"].tolist())
            fig.axes[0].set_yticks(range(weights.shape[0]), saved["outputs"].tolist())
        """)


def explore_alignment(history, step=None, example=0):
    """Slide through a training run: the cross-attention of each recorded example at each recorded step."""
    return AlignmentExplorer(history, step, example)

