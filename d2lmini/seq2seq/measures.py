"""How right a model is on a batch: whole sequences, and where its cross-attention looks."""

from .._checks import check_tensor, shape_str


def sequence_accuracy(predictions, batch):
    """The share of examples whose every real output step is right (padding steps are not compared)."""
    correct = (predictions == batch.target) | ~batch.real  # (batch, steps)
    return correct.all(dim=1).float().mean().item()


def alignment_mass(weights, alignment, by_step=False):
    """The attention weight on the correct source position, averaged over the real output steps.

    ``weights`` and ``alignment`` are ``(batch, output steps, source steps)``;
    a row of ``alignment`` marks the correct position(s) with 1 and is all
    zeros for a padding step, which is left out. 1 means every step looks
    only where it should; uniform attention over ``n`` keys gives ``1/n``.
    With ``by_step=True``, one average per output step, ``(output steps,)``
    (NaN for a step that no example reaches).
    """
    check_tensor(weights, "weights", ndim=3, floating=True)
    check_tensor(alignment, "alignment", ndim=3, floating=True)
    if weights.shape != alignment.shape:
        raise ValueError(f"weights {shape_str(weights)} and alignment {shape_str(alignment)} must have one shape")
    mass = (weights * alignment).sum(dim=-1)  # (batch, steps)
    real = alignment.sum(dim=-1)  # (batch, steps): 1 for a real step, 0 for padding
    if by_step:
        return mass.sum(dim=0) / real.sum(dim=0)
    return (mass.sum() / real.sum()).item()


def predict_in_eval_mode(model, batch):
    """``model.predict`` on ``batch`` (moved to the model's device) in evaluation mode, then the mode it had."""
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        return model.predict(batch.source.to(device), batch.valid_lens.to(device))
    finally:
        model.train(was_training)


def evaluate(model, batch):
    """``(sequence accuracy, alignment mass)`` of ``model``'s greedy predictions on ``batch``."""
    predictions, weights = predict_in_eval_mode(model, batch)
    batch = batch.to(predictions.device)
    return sequence_accuracy(predictions, batch), alignment_mass(weights, batch.alignment)

