"""How a check talks to a learner: one line on success, a specific error otherwise."""

import torch


class ExerciseError(AssertionError):
    """An answer that is not yet right, with what was expected and a hint."""

    def __init__(self, exercise, expected, received, hint):
        self.exercise, self.expected, self.received, self.hint = exercise, expected, received, hint
        super().__init__(
            f"{exercise}: not yet.\n  expected: {expected}\n  received: {received}\n  hint: {hint}"
        )


def passed(exercise, detail=""):
    """Report a correct answer."""
    print(f"✓ {exercise}: correct." + (f" {detail}" if detail else ""))


def expect(condition, exercise, expected, received, hint):
    """Raise ``ExerciseError`` unless ``condition`` holds."""
    if not condition:
        raise ExerciseError(exercise, expected, received, hint)


def _describe(x):
    if isinstance(x, torch.Tensor):
        values = x.detach().cpu().flatten()[:6].tolist()
        shown = ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in values)
        more = ", ..." if x.numel() > 6 else ""
        return f"tensor of shape {tuple(x.shape)}, dtype {x.dtype}: [{shown}{more}]"
    return f"{type(x).__name__} {x!r}"


def expect_close(received, expected, exercise, hint, atol=1e-5, rtol=1e-4):
    """Check a tensor answer: its type, then its shape, then its values."""
    expect(isinstance(received, torch.Tensor), exercise, "a torch.Tensor", _describe(received),
           "return a tensor, not a number or a list")
    expect(received.shape == expected.shape, exercise, f"shape {tuple(expected.shape)}",
           f"shape {tuple(received.shape)}", hint)
    received = received.detach().to(expected.device, expected.dtype)
    expect(not received.isnan().any() or expected.isnan().any(), exercise, "no NaN values",
           _describe(received), hint)
    expect(torch.allclose(received, expected, atol=atol, rtol=rtol, equal_nan=True), exercise,
           _describe(expected), _describe(received), hint)
