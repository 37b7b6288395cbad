"""The training loop: Adam on freshly drawn batches, every step reported to a callback."""

from dataclasses import dataclass

import torch

from .._checks import check_choice, check_number, check_positive, check_positive_int
from .model import AttentionSeq2Seq
from .tasks import TASKS, check_lengths, make_batch


@dataclass
class Progress:
    """What ``train`` tells its callback: after ``step`` of ``num_steps`` (0: before the first), the loss of
    that step (None at step 0), the model, and whether this is the last call (finished or stopped)."""

    step: int
    num_steps: int
    loss: float | None
    model: AttentionSeq2Seq
    done: bool


def train(model, task, num_steps, *, lr=3e-3, batch_size=128, lengths=(4, 8), seed=0, callback=None, stop=None):
    """Train ``model`` on ``task`` with Adam, a fresh random batch per step; return the losses.

    The batches come from a ``torch.Generator`` seeded with ``seed``, so a
    run is reproducible once the model's initial weights are. ``callback``
    (optional) receives a ``Progress`` before the first step and after every
    step. ``stop`` (optional, e.g. a ``threading.Event``) is read after every
    step: once it is set, training ends there, and the last ``Progress`` says
    ``done``.
    """
    if not isinstance(model, AttentionSeq2Seq):
        raise TypeError(f"model must be an AttentionSeq2Seq, got {type(model).__name__}")
    check_choice(task, "task", TASKS)
    check_number(num_steps, "num_steps", low=0, integer=True)
    check_positive(lr, "lr")
    check_positive_int(batch_size, "batch_size")
    check_number(seed, "seed", integer=True)
    check_lengths(lengths, task)
    if stop is not None and not callable(getattr(stop, "is_set", None)):
        raise TypeError(f"stop must have an is_set() method, like threading.Event; got {type(stop).__name__}")
    notify = callback if callback is not None else (lambda progress: None)
    generator = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    notify(Progress(0, num_steps, None, model, done=num_steps == 0))
    for step in range(1, num_steps + 1):
        batch = make_batch(task, batch_size, lengths, generator=generator).to(device)
        loss = model.loss(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        done = step == num_steps or (stop is not None and stop.is_set())
        notify(Progress(step, num_steps, losses[-1], model, done))
        if done:
            break
    return losses
