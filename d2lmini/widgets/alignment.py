"""Explore what a training run recorded: ``Alignment`` slides through the snapshots a ``History`` kept.

The training step and the example choose the picture: the example's
cross-attention at that step (``example_map.ExampleMap``), and beside it the
held-out accuracy and alignment mass curves, the step shown dashed. Over
several recorded runs (chapter 08's web page, ``Alignment.for_page``) a *run*
menu comes first.
"""

from dataclasses import dataclass, field

import torch
from matplotlib.lines import Line2D

from ..i18n import N_, _
from ..seq2seq import History, alignment_mass, as_text
from .declaration import Choice, Declaration, IntSlider, Result, options, say
from .example_map import ExampleMap, describe_example, real_pairs, symbols
from .explorer import Explorer
from .export import Recipe
from .training import RECORDED_RUNS, recorded_run_file

__all__ = ["Alignment", "explore_alignment"]


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

    chapter = 8
    title = N_("Alignment explorer")
    Settings = AlignmentSettings
    figsize = (7.6, 3.2)
    filename = "attention_that_learns.png"
    repr_controls = ("step", "example")
    page_play = "step"  # the page replays the run

    def __init__(self, history=None, *, runs=None, labels=None):
        """Over one run, ``history``; or over several, ``runs`` (name -> ``History``, each of the same
        examples and steps), the *run* menu's options labelled by ``labels`` (name -> label, marked ``N_``)."""
        if runs is None:
            runs, labels = {None: history}, {None: ""}
        elif history is not None:
            raise TypeError("pass history (one run) or runs (several), not both")
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

    @classmethod
    def of_runs(cls, runs, labels):
        """An explorer of the runs ``runs`` (name -> ``History``, each of the same examples and steps), its
        *run* menu's options labelled by ``labels`` (name -> label, marked ``N_``)."""
        return cls(runs=runs, labels=labels)

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
