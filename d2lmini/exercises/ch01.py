"""Checks for chapter 01's exercises: a new kernel, choosing the width, leaving out a block.

Each check builds its own data from a fixed seed on the CPU, calls the
learner's function, and compares the answer with d2lmini's own computation.
"""

import torch

from ..i18n import N_, _, number, numbers
from ..kernels import epanechnikov, nadaraya_watson
from ._feedback import ExerciseError, check, expect_close, passed, require
from ._feedback import hint as hint  # an error asks the learner to run ch01.hint()

TRIANGULAR = N_("Exercise 1.1")
BEST_SIGMA = N_("Exercise 1.2")
BLOCK_OUT = N_("Exercise 1.3")


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
    default = (_("compare your values with the expected ones: the tent is 1 at u = 0, 0.5 at |u| = 0.5, "
                 "and 0 wherever |u| ≥ 1"),
               _("k(u) = max(1 - |u|, 0): a straight line down from the peak on each side, cut off at zero"))
    if not (isinstance(received, torch.Tensor) and received.shape == expected.shape):
        return default
    received = received.detach().cpu().to(expected.dtype)
    if torch.allclose(received, epanechnikov(u), atol=1e-6):
        return (_("that is the Epanechnikov kernel, the parabola max(1 - u², 0), already in d2lmini: "
                  "the triangle has another profile"),
                _("the triangle falls in straight lines, 1 - |u| rather than 1 - u², so k(0.5) = 0.5, not 0.75"))
    if (received < 0).any():
        return (_("some of your values are negative: outside |u| < 1 the kernel is 0"),
                _("1 - |u| goes below zero once |u| > 1: cut it off at zero, as torch.clamp can (see its "
                  "min argument)"))
    if torch.allclose(received, torch.clamp(1 - u, min=0), atol=1e-6):
        return (_("k(-0.5) should equal k(0.5): a kernel is symmetric"),
                _("1 - u grows above 1 for negative u: measure the distance |u| from the peak, not u"))
    return default


@check(TRIANGULAR)
def check_triangular(triangular_kernel):
    """Exercise 1.1: the learner's kernel equals max(1 - |u|, 0) elementwise, and pools."""
    u = torch.stack([torch.linspace(-2, 2, 17), torch.linspace(-0.8, 0.8, 17)])  # (2, 17)
    given = u.clone()
    received = triangular_kernel(given)
    expected = _triangular(u)
    expect_close(received, expected, TRIANGULAR, _kernel_hint(received, u, expected))
    require(torch.equal(given, u), TRIANGULAR, _("u left unchanged"), _("u was modified in place"),
            (_("your function changed the u it was given"),
             _("a method ending in _ (such as clamp_) or an assignment into u[...] writes into u: compute a "
               "new tensor instead")))
    x_train, y_train = _toy_regression(1, 40, 0.5)
    x_val, y_val = _toy_regression(101, 30, 0.5)
    errors = {name: _mse(nadaraya_watson(x_val, x_train, y_train, kernel, 0.5)[0], y_val)
              for name, kernel in [(_("triangular"), triangular_kernel), (_("Epanechnikov"), epanechnikov),
                                   (_("boxcar"), "boxcar")]}
    compared = numbers(f"{name} {number(error, '.3f')}" for name, error in errors.items())
    widths = numbers(_("{error:.3f} at σ = {sigma:g}").format(
        error=_mse(nadaraya_watson(x_val, x_train, y_train, triangular_kernel, s)[0], y_val), sigma=s)
        for s in (1.0, 2.0))
    passed(TRIANGULAR, _("k(0) = 1, k(±0.5) = 0.5, and k(u) = 0 for |u| ≥ 1. In d2l.nadaraya_watson at "
                         "σ = 0.5 it fits a toy data set about as well as the two other window kernels "
                         "(validation MSE: {compared}), while its own error moves more with the width "
                         "({widths}): the width matters more than the shape.").format(compared=compared,
                                                                                     widths=widths))


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
        return (_("you returned the index {index} of the best width, not the width").format(index=int(value)),
                _("return the element of sigmas at that index"))
    if _close(value, sigmas[min(range(len(sigmas)), key=train_errors.__getitem__)]):
        return (_("that is the width the training error picks, not the validation error"),
                _("with x_train as the queries each point sees its own key, so the narrowest width wins: "
                  "predict at x_val instead, and compare with y_val"))
    if _close(value, sigmas[max(range(len(sigmas)), key=val_errors.__getitem__)]):
        return (_("that width has the LARGEST validation error"),
                _("return the width whose error is the smallest (an argmin), not the largest"))
    return (_("compare the widths by their error on the held-out data, x_val and y_val"),
            _("for each width, predict at x_val with keys x_train and values y_train (d2l.nadaraya_watson), "
              "take the mean squared error against y_val, and return the width with the smallest error"))


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
        value = _as_number(received, BEST_SIGMA, _("one width from [{sigmas}]").format(sigmas=numbers(_SIGMAS)),
                           _("return a single width, sigmas[i], not a list or a tensor of errors"))
        hint = _best_sigma_hint(value, _SIGMAS, val_errors, _training_errors(x_train, y_train, _SIGMAS))
        require(_close(value, expected), BEST_SIGMA,
                _("σ = {sigma} for a data set of {count} points with noise {noise} "
                  "(validation MSE {error:.3f})").format(sigma=expected, count=n, noise=noise, error=min(val_errors)),
                f"σ = {number(value, 'g')}", hint)
        chosen.append(value)
    passed(BEST_SIGMA, _("On two data sets the best widths are σ = {first:g} and σ = {second:g}.").format(
        first=chosen[0], second=chosen[1]))


# Exercise 1.3

_ONE_LOSS_HINT = (N_("return one number, the loss, not one error per point"),
                  N_("average the squared errors into a single number"))
_GRID = torch.logspace(-2, 0.5, 26)  # 26 widths from 0.01 to 3.16, every fourth of the chapter's grid


def _hidden_loss(x, y, sigma, hidden):
    """MSE of Gaussian pooling at each x_i when query i cannot see the keys where hidden[i] is True."""
    scores = -0.5 * ((x[:, None] - x[None, :]) / sigma) ** 2  # (queries, keys)
    weights = torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)
    return _mse((weights * y).sum(dim=-1), y)


def _offsets(n):
    """j - i for every query i (rows) and key j (columns)."""
    index = torch.arange(n)
    return index[None, :] - index[:, None]


def _block_out(x, y, sigma, m):
    """The loss with the keys i - m to i + m hidden from query i, computed here so the package does not hand it out."""
    return _hidden_loss(x, y, sigma, _offsets(len(x)).abs() <= m)


def _sliced_loss(x, y, sigma, m):
    """The loss with keys x[:i - m] and x[i + m + 1:], whose first slice wraps round to the end when i < m."""
    predictions = []
    for i in range(len(x)):
        keys, values = torch.cat([x[:i - m], x[i + m + 1:]]), torch.cat([y[:i - m], y[i + m + 1:]])
        predictions.append(nadaraya_watson(x[i:i + 1], keys, values, "gaussian", sigma)[0])
    return _mse(torch.cat(predictions), y)


def _block_out_hint(value, x, y, sigma, m):
    offsets = _offsets(len(x))
    if _close(value, _hidden_loss(x, y, sigma, torch.zeros_like(offsets, dtype=torch.bool))):
        return (_("each query x_i still sees its own key x_i, so it can copy y_i"),
                _("for query i, drop point i and its m neighbours on each side from the keys and the values"))
    expected = _block_out(x, y, sigma, m)
    if m > 0 and _close(value, _block_out(x, y, sigma, 0)):
        return (_("that is the leave-one-out loss: with m = {m}, query i must not see its {m} nearest "
                  "neighbours on each side either").format(m=m),
                _("the hidden block runs from index i - {m} to i + {m}: {count} points in the middle of "
                  "the data, fewer at its ends").format(m=m, count=2 * m + 1))
    if m > 0 and _close(value, _block_out(x, y, sigma, m - 1)):
        return (_("you hid one neighbour too few on each side: with m = {m} the block is i - {m} to i + {m}").format(
                    m=m),
                _("a point j is hidden when |i - j| ≤ m, so the ends of the block are hidden too"))
    if _close(value, _block_out(x, y, sigma, m + 1)):
        if m:
            too_many = _("you hid one neighbour too many on each side: with m = {m} the block is i - {m} to i + {m}")
        else:
            too_many = _("you hid one neighbour too many on each side: with m = {m} only point i itself is hidden")
        return (too_many.format(m=m),
                _("a point j stays in view when |i - j| > m, so i - m - 1 and i + m + 1 are keys"))
    if m > 0 and _close(value, _sliced_loss(x, y, sigma, m)):
        return (_("for the first {m} queries i - m is negative, and a slice x[:i - m] whose end is negative "
                  "counts from the other end of x: those queries keep their own key, and many keys twice").format(m=m),
                _("keep the slice's end at 0 or above, or pick each query's keys with a boolean mask over the "
                  "indices j"))
    for hidden in ((offsets >= 0) & (offsets <= m), (offsets <= 0) & (offsets >= -m)):
        if m > 0 and _close(value, _hidden_loss(x, y, sigma, hidden)):
            return (_("you hid the neighbours on one side of x_i only"),
                    _("hide the {m} points before i and the {m} points after it").format(m=m))
    by_distance = (x[:, None] - x[None, :]).abs() <= m
    if m > 0 and not by_distance.all(dim=-1).any() and _close(value, _hidden_loss(x, y, sigma, by_distance)):
        return (_("you hid the keys within a distance m of x_i: m counts positions in the sorted x, not a "
                  "distance"),
                _("compare the indices i and j, not the inputs x_i and x_j"))
    if _close(value, expected * len(x)):
        return (_("you returned the sum of the squared errors"),
                _("divide by the number of points: the loss is their mean"))
    if _close(value, expected ** 0.5):
        return (_("you returned the root of the mean squared error"), _("leave out the square root"))
    return (_("predict each x_i from the points j with |i - j| > m only"),
            _("Gaussian kernel, width sigma, and for query x_i the keys and values outside the block i - m to "
              "i + m; then average the squared errors against y"))


def _chosen_width(loss, x, y, m):
    """The width of _GRID with the lowest loss(x, y, sigma, m), and that loss."""
    losses = [_as_number(loss(x.clone(), y.clone(), sigma.item(), m), BLOCK_OUT, _("a scalar tensor (one loss)"),
                         _ONE_LOSS_HINT) for sigma in _GRID]
    best = min(range(len(losses)), key=losses.__getitem__)
    return _GRID[best].item(), losses[best]


@check(BLOCK_OUT)
def check_block_out_loss(block_out_loss):
    """Exercise 1.3: the learner's loss with a block of neighbours hidden equals the reference."""
    x, y = _toy_regression(3, 30, 0.5)
    for sigma, m in [(0.3, 2), (1.0, 1), (0.05, 3), (0.3, 0)]:
        expected = _block_out(x, y, sigma, m)
        received = block_out_loss(x.clone(), y.clone(), sigma, m)
        value = _as_number(received, BLOCK_OUT, _("a scalar tensor (one loss)"), _ONE_LOSS_HINT)
        require(_close(value, expected), BLOCK_OUT,
                _("a loss of {loss:.4f} at σ = {sigma}, m = {m}").format(loss=expected, sigma=sigma, m=m),
                number(value, ".4f"), _block_out_hint(value, x, y, sigma, m))
    twice_x, twice_y = x.repeat_interleave(2), y.repeat_interleave(2)  # every point twice, the copies side by side
    sigma_0, loss_0 = _chosen_width(block_out_loss, twice_x, twice_y, 0)
    sigma_1, loss_1 = _chosen_width(block_out_loss, twice_x, twice_y, 1)
    single = _GRID[torch.tensor([_block_out(x, y, s, 0) for s in _GRID]).argmin()].item()
    passed(BLOCK_OUT, _("With every point taken twice, the width with the lowest loss on a grid from 0.01 to "
                        "3.16 is σ = {sigma_0:.2f} for m = 0 (loss {loss_0:.3f}): each x_i copies its twin's "
                        "target. For m = 1 it is σ = {sigma_1:.2f} (loss {loss_1:.3f}); on the data without copies, "
                        "leave-one-out picks σ = {single:.2f}.").format(sigma_0=sigma_0, loss_0=loss_0,
                                                                       sigma_1=sigma_1, loss_1=loss_1, single=single))
