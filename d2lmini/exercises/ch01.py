"""Checks for chapter 01's exercises: a new kernel, choosing the width, leave-one-out.

Each check builds its own data from a fixed seed on the CPU, calls the
learner's function, and compares the answer with d2lmini's own computation.
"""

import torch

from ..kernels import epanechnikov, leave_one_out, nadaraya_watson
from ._feedback import ExerciseError, check, expect, expect_close, passed
from ._feedback import hint as hint  # an error asks the learner to run ch01.hint()

TRIANGULAR = "Exercise 1.1"
BEST_SIGMA = "Exercise 1.2"
LEAVE_ONE_OUT = "Exercise 1.3"


def _toy_regression(seed, n, noise):
    """Sorted inputs in [0, 5) and noisy targets 2 sin(x) + x, reproducibly."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.sort(torch.rand(n, generator=generator) * 5).values  # (n,)
    y = 2 * torch.sin(x) + x + noise * torch.randn(n, generator=generator)  # (n,)
    return x, y


def _as_number(received, exercise, expected, hint):
    """A Python float from a number or a one-element tensor, else an ExerciseError."""
    if isinstance(received, torch.Tensor) and received.numel() == 1:
        return float(received.detach().cpu())
    if isinstance(received, (int, float)) and not isinstance(received, bool):
        return float(received)
    raise ExerciseError(exercise, expected, f"{type(received).__name__} {received!r}", hint)


def _close(a, b):
    return abs(a - b) <= 1e-4 * max(abs(b), 1e-6)


def _mse(predictions, targets):
    return ((predictions - targets) ** 2).mean().item()


# Exercise 1.1

def _triangular(u):
    """The tent max(1 - |u|, 0), computed here so that the package does not hand it out."""
    return torch.clamp(1 - u.abs(), min=0)


def _kernel_hint(received, u, expected):
    default = ("compare your values with the expected ones: the tent is 1 at u = 0, 0.5 at |u| = 0.5, "
               "and 0 wherever |u| ≥ 1",
               "k(u) = max(1 - |u|, 0): a straight line down from the peak on each side, cut off at zero")
    if not (isinstance(received, torch.Tensor) and received.shape == expected.shape):
        return default
    received = received.detach().cpu().to(expected.dtype)
    if torch.allclose(received, epanechnikov(u), atol=1e-6):
        return ("that is the Epanechnikov kernel, the parabola max(1 - u², 0), already in d2lmini: "
                "the triangle has another profile",
                "the triangle falls in straight lines, 1 - |u| rather than 1 - u², so k(0.5) = 0.5, not 0.75")
    if (received < 0).any():
        return ("some of your values are negative: outside |u| < 1 the kernel is 0",
                "1 - |u| goes below zero once |u| > 1: cut it off at zero, as torch.clamp can (see its "
                "min argument)")
    if torch.allclose(received, torch.clamp(1 - u, min=0), atol=1e-6):
        return ("k(-0.5) should equal k(0.5): a kernel is symmetric",
                "1 - u grows above 1 for negative u: measure the distance |u| from the peak, not u")
    return default


@check(TRIANGULAR)
def check_triangular(triangular_kernel):
    """Exercise 1.1: the learner's kernel equals max(1 - |u|, 0) elementwise, and pools."""
    u = torch.stack([torch.linspace(-2, 2, 17), torch.linspace(-0.8, 0.8, 17)])  # (2, 17)
    given = u.clone()
    received = triangular_kernel(given)
    expected = _triangular(u)
    expect_close(received, expected, TRIANGULAR, _kernel_hint(received, u, expected))
    expect(torch.equal(given, u), TRIANGULAR, "u left unchanged", "u was modified in place",
           ("your function changed the u it was given",
            "a method ending in _ (such as clamp_) or an assignment into u[...] writes into u: compute a "
            "new tensor instead"))
    x_train, y_train = _toy_regression(1, 40, 0.5)
    x_val, y_val = _toy_regression(101, 30, 0.5)
    errors = {name: _mse(nadaraya_watson(x_val, x_train, y_train, kernel, 0.5)[0], y_val)
              for name, kernel in [("triangular", triangular_kernel), ("Epanechnikov", epanechnikov),
                                   ("boxcar", "boxcar")]}
    compared = ", ".join(f"{name} {error:.3f}" for name, error in errors.items())
    widths = ", ".join(f"{_mse(nadaraya_watson(x_val, x_train, y_train, triangular_kernel, s)[0], y_val):.3f} "
                       f"at σ = {s:g}" for s in (1.0, 2.0))
    passed(TRIANGULAR, f"k(0) = 1, k(±0.5) = 0.5, and k(u) = 0 for |u| ≥ 1. In d2l.nadaraya_watson at "
                       f"σ = 0.5 it fits a toy data set about as well as the two other window kernels "
                       f"(validation MSE: {compared}), while its own error moves more with the width "
                       f"({widths}): the width matters more than the shape.")


# Exercise 1.2

_SIGMAS = [0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6]


def _validation_errors(x_train, y_train, x_val, y_val, sigmas):
    return [((nadaraya_watson(x_val, x_train, y_train, "gaussian", s)[0] - y_val) ** 2).mean().item()
            for s in sigmas]


def _training_errors(x_train, y_train, sigmas):
    return [((nadaraya_watson(x_train, x_train, y_train, "gaussian", s)[0] - y_train) ** 2).mean().item()
            for s in sigmas]


def _best_sigma_hint(value, sigmas, val_errors, train_errors):
    best = sigmas[min(range(len(sigmas)), key=val_errors.__getitem__)]
    if value == int(value) and 0 <= value < len(sigmas) and _close(sigmas[int(value)], best):
        return (f"you returned the index {int(value)} of the best width, not the width",
                "return the element of sigmas at that index")
    if _close(value, sigmas[min(range(len(sigmas)), key=train_errors.__getitem__)]):
        return ("that is the width the training error picks, not the validation error",
                "with x_train as the queries each point sees its own key, so the narrowest width wins: "
                "predict at x_val instead, and compare with y_val")
    if _close(value, sigmas[max(range(len(sigmas)), key=val_errors.__getitem__)]):
        return ("that width has the LARGEST validation error",
                "return the width whose error is the smallest (an argmin), not the largest")
    return ("compare the widths by their error on the held-out data, x_val and y_val",
            "for each width, predict at x_val with keys x_train and values y_train (d2l.nadaraya_watson), "
            "take the mean squared error against y_val, and return the width with the smallest error")


@check(BEST_SIGMA)
def check_best_sigma(best_sigma):
    """Exercise 1.2: the learner picks the width with the lowest validation error."""
    chosen = []
    for seed, n, noise in [(1, 40, 0.5), (2, 80, 0.1)]:
        x_train, y_train = _toy_regression(seed, n, noise)
        x_val, y_val = _toy_regression(seed + 100, 30, noise)
        val_errors = _validation_errors(x_train, y_train, x_val, y_val, _SIGMAS)
        expected = _SIGMAS[min(range(len(_SIGMAS)), key=val_errors.__getitem__)]
        received = best_sigma(x_train, y_train, x_val, y_val, list(_SIGMAS))
        value = _as_number(received, BEST_SIGMA, f"one width from {_SIGMAS}",
                           "return a single width, sigmas[i], not a list or a tensor of errors")
        hint = _best_sigma_hint(value, _SIGMAS, val_errors, _training_errors(x_train, y_train, _SIGMAS))
        expect(_close(value, expected), BEST_SIGMA,
               f"σ = {expected} for a data set of {n} points with noise {noise} "
               f"(validation MSE {min(val_errors):.3f})", f"σ = {value:g}", hint)
        chosen.append(value)
    passed(BEST_SIGMA, f"On two data sets the best widths are σ = {chosen[0]:g} and σ = {chosen[1]:g}.")


# Exercise 1.3

_ONE_LOSS_HINT = ("return one number, the loss, not one error per point",
            "average the squared errors into a single number")

def _loo_hint(value, x, y, sigma):
    keys, values = leave_one_out(x, y)
    loo = _mse(nadaraya_watson(x, keys, values, "gaussian", sigma)[0], y)
    with_own_key = _mse(nadaraya_watson(x, x, y, "gaussian", sigma)[0], y)
    if _close(value, with_own_key):
        return ("each query x_i still sees its own key x_i, so it can copy y_i",
                "query i needs keys and values without point i; d2l.leave_one_out builds them for every "
                "point at once")
    if _close(value, loo * len(x)):
        return ("you returned the sum of the squared errors", "divide by the number of points: the loss "
                "is their mean")
    if _close(value, loo ** 0.5):
        return ("you returned the root of the mean squared error", "leave out the square root")
    return ("predict each x_i from the other n - 1 points only",
            "Gaussian kernel, width sigma, and for query x_i the keys and values without point i; then "
            "average the squared errors against y")


@check(LEAVE_ONE_OUT)
def check_loo_loss(loo_loss):
    """Exercise 1.3: the learner's leave-one-out loss equals d2lmini's."""
    x, y = _toy_regression(3, 30, 0.5)
    keys, values = leave_one_out(x, y)
    for sigma in (0.05, 0.3, 1.0):
        expected = _mse(nadaraya_watson(x, keys, values, "gaussian", sigma)[0], y)
        received = loo_loss(x.clone(), y.clone(), sigma)
        value = _as_number(received, LEAVE_ONE_OUT, "a scalar tensor (one loss)",
                           _ONE_LOSS_HINT)
        expect(_close(value, expected), LEAVE_ONE_OUT, f"a loss of {expected:.4f} at σ = {sigma}",
               f"{value:.4f}", _loo_hint(value, x, y, sigma))
    tiny = 0.01
    yours = _as_number(loo_loss(x.clone(), y.clone(), tiny), LEAVE_ONE_OUT, "a scalar tensor (one loss)",
                       _ONE_LOSS_HINT)
    with_own_key = _mse(nadaraya_watson(x, x, y, "gaussian", tiny)[0], y)
    passed(LEAVE_ONE_OUT, f"At σ = {tiny} your leave-one-out loss is {yours:.3f}, but with each point's "
                          f"own key kept it is {with_own_key:.3f}: each x_i just copies y_i.")
