"""``History``: a ``train`` callback that records what a learner wants to watch of a run."""

from dataclasses import dataclass, field

import torch

from .._checks import check_positive_int
from .measures import alignment_mass, evaluate, predict_in_eval_mode
from .tasks import Batch


@dataclass
class Snapshot:
    """The greedy predictions ``(examples, steps)`` and cross-attention ``(examples, steps, steps)`` of the
    fixed examples at one step of training."""

    predictions: torch.Tensor
    weights: torch.Tensor


@dataclass
class History:
    """A ``train`` callback that records a run.

    * ``losses``: the loss of every step (step 1 first);
    * ``snapshots``: step -> ``Snapshot`` of the fixed ``examples``, at step 0,
      every ``snapshot_every`` steps and at the last step;
    * ``evaluations``: step -> ``(accuracy, alignment mass)`` on ``test``, at
      the same steps as the snapshots but every ``evaluate_every`` steps.

    Everything recorded is on the CPU.
    """

    examples: Batch
    test: Batch | None = None
    snapshot_every: int = 10
    evaluate_every: int = 20
    losses: list = field(default_factory=list)
    snapshots: dict = field(default_factory=dict)
    evaluations: dict = field(default_factory=dict)

    def __post_init__(self):
        check_positive_int(self.snapshot_every, "snapshot_every")
        check_positive_int(self.evaluate_every, "evaluate_every")

    def __call__(self, progress):
        step, model = progress.step, progress.model
        if progress.loss is not None:
            self.losses.append(progress.loss)
        if step % self.snapshot_every == 0 or progress.done:
            predictions, weights = predict_in_eval_mode(model, self.examples)
            self.snapshots[step] = Snapshot(predictions.cpu(), weights.cpu())
        if self.test is not None and (step % self.evaluate_every == 0 or progress.done):
            self.evaluations[step] = evaluate(model, self.test)

    @property
    def steps(self):
        """The steps with a snapshot, in order."""
        return sorted(self.snapshots)

    def steps_to(self, accuracy):
        """The first evaluated step whose held-out accuracy reached ``accuracy`` (None if none did)."""
        return next((step for step in sorted(self.evaluations) if self.evaluations[step][0] >= accuracy), None)

    def reached(self, accuracy):
        """A ``stop`` flag for ``train``: set once this history has evaluated ``accuracy`` or more."""
        return _Reached(self, accuracy)

    def mass(self, step):
        """The alignment mass of the fixed examples at a snapshot ``step``."""
        return alignment_mass(self.snapshots[step].weights, self.examples.alignment)

    def save(self, path):
        """Write the record to ``path`` (``torch.save``; ``History.load`` reads it back): the examples, the
        losses, the snapshots and the evaluations. The held-out set itself is left out: its results are kept."""
        torch.save({"examples": dict(vars(self.examples)),  # its tensors, by name
                    "snapshot_every": self.snapshot_every, "evaluate_every": self.evaluate_every,
                    "losses": list(self.losses),
                    "snapshots": {step: [s.predictions, s.weights] for step, s in self.snapshots.items()},
                    "evaluations": {step: list(result) for step, result in self.evaluations.items()}}, path)

    @classmethod
    def load(cls, path):
        """The ``History`` that ``save`` wrote to ``path`` (its ``test`` None)."""
        saved = torch.load(path, weights_only=True)
        return cls(Batch(**saved["examples"]), None, saved["snapshot_every"], saved["evaluate_every"],
                   saved["losses"], {step: Snapshot(*s) for step, s in saved["snapshots"].items()},
                   {step: tuple(result) for step, result in saved["evaluations"].items()})


@dataclass(frozen=True)
class _Reached:
    """What ``History.reached`` returns: ``is_set()``, as a ``threading.Event`` has, reads the history."""

    history: History
    accuracy: float

    def is_set(self):
        return self.history.steps_to(self.accuracy) is not None
