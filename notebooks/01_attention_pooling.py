# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,cellView,jupyter,-all
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 · Attention pooling with a Gaussian kernel (Nadaraya–Watson)
#
# Long before transformers, statisticians predicted a value at a new point by
# averaging the targets of the training points near it, with nearer points
# counting more. Nadaraya and Watson published this estimator in 1964. Read
# with today's vocabulary it is attention: the new point is a **query**, the
# training inputs are **keys**, their targets are **values**, and a kernel
# decides how much each key matters.
#
# **In this notebook you will**
# 1. predict by a weighted average of training targets, with weights from a
#    kernel, written in plain `torch` and checked against `d2lmini`;
# 2. count the NaN that the textbook normalisation produces for a narrow
#    kernel, and remove them with a softmax;
# 3. turn the kernel width $\sigma$ and see the fit and the weights change
#    together;
# 4. learn $\sigma$ by gradient descent, and see why each training point must
#    be left out of its own keys;
# 5. rewrite the Gaussian score so that it leads to the dot-product attention
#    of chapter 04.
#
# The first cell loads the libraries and asks PyTorch to use a single CPU
# thread. Every tensor in this notebook is small: the largest, in the grid
# search near the end, holds 101 × 40 × 39 numbers. For work that small, one
# thread is faster than waking a second one for each operation.

# %% [markdown]
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/attention-notebooks/attention-notebooks/blob/learner/01_attention_pooling.ipynb) opens this chapter's learner edition in Colab. Run the collapsed setup cell below first: on Colab it installs `d2lmini`, this collection's helper package, and leaves the runtime's own packages alone; on a course hub it names any file of yours that an update kept under a new name. Anywhere else it does nothing.

# %% cellView="form" jupyter={"source_hidden": true} tags=["colab-setup"]
# @title Setup { display-mode: "form" }
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("d2lmini") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "d2lmini @ git+https://github.com/attention-notebooks/attention-notebooks@v0.2.0"], check=True)
    print("Installed d2lmini 0.2.0 for this runtime; its torch, numpy, matplotlib and ipywidgets are unchanged.")

from d2lmini.updates import report_renamed_files

report_renamed_files()

# %%
import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
from IPython.display import display

import d2lmini as d2l
from d2lmini.exercises import ch01

device = d2l.try_gpu()
torch.set_num_threads(1)

# %% [markdown]
# ## Toy data
#
# The function to recover is $f(x) = 2\sin x + x$. We observe it at 40 random
# points of $[0, 5)$ with Gaussian noise of standard deviation 0.5. The
# training inputs $x_i$ are the keys and the noisy targets $y_i$ the values;
# the queries are a grid of 50 points over $[0, 5)$. We sort the keys, so that
# neighbouring columns of a heatmap are neighbouring points on the line.
#
# The data is drawn on the CPU from a fixed seed and then moved to `device`,
# so it is the same whether this notebook runs on a CPU or a GPU.
#
# Because we know $f$, we can score any set of predictions by their **squared
# error against $f$**: the squared difference between the prediction at each
# query and $f$ there, averaged over the 50 queries (`truth_error` below).
# With real data $f$ is unknown; the section "Learning the width" and
# Exercise 1.2 judge a width without it.

# %%
def f(x):
    return 2 * torch.sin(x) + x


torch.manual_seed(0)
n_train = 40
x_train, _ = torch.sort(torch.rand(n_train) * 5)  # keys, (40,)
y_train = f(x_train) + 0.5 * torch.randn(n_train)  # values, (40,)
x_val = torch.arange(0, 5, 0.1)  # queries, (50,)
y_truth = f(x_val)  # the noise-free answer at each query
x_train, y_train, x_val, y_truth = (t.to(device) for t in (x_train, y_train, x_val, y_truth))
print(f"{len(x_train)} keys and values, {len(x_val)} queries")


def plot_fit(ax, predictions, title):
    """Draw the truth, the training points and one set of predictions."""
    ax.plot(d2l.numpy(x_val), d2l.numpy(y_truth), label="truth f(x)")
    ax.plot(d2l.numpy(x_val), d2l.numpy(predictions), label="prediction")
    ax.plot(d2l.numpy(x_train), d2l.numpy(y_train), "o", alpha=0.4, markersize=4, label="training data")
    ax.set(title=title, xlabel="x")


def truth_error(predictions):
    """Mean squared distance between predictions and f on the query grid."""
    return ((predictions - y_truth) ** 2).mean().item()


# %% [markdown]
# ## A baseline: average pooling
#
# The simplest pooling ignores the query: every query gets the mean of all
# values, $\hat f(q) = \frac1n \sum_{i=1}^{n} y_i$. Each key has weight $1/n$,
# whatever the query.

# %%
avg_predictions = y_train.mean().expand(len(x_val))  # (queries,)
print(f"every query predicts {y_train.mean().item():.3f}; "
      f"squared error against f: {truth_error(avg_predictions):.3f}")

fig, ax = plt.subplots(figsize=(4.5, 3))
plot_fit(ax, avg_predictions, "Average pooling")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# A flat line cannot follow a curve. To do better, a query should listen
# mostly to the keys close to it.
#
# ## Kernels measure closeness
#
# A kernel $k(u)$ turns the scaled difference $u = (q - x_i)/\sigma$ between
# the query and a key into a non-negative similarity. The **width** $\sigma$ sets what "close" means.
# Four kernels:
#
# | kernel | $k(u)$ | in words |
# |---|---|---|
# | Gaussian | $\exp(-u^2/2)$ | every key counts, nearer keys much more |
# | boxcar | $1$ if $\lvert u\rvert < 1$, else $0$ | plain average over a window of half-width $\sigma$ |
# | constant | $1$ | every key the same: average pooling again |
# | Epanechnikov | $\max(1 - u^2, 0)$ | a window like the boxcar, with weights that fade towards its edges |
#
# (Statistics books multiply the Epanechnikov kernel by $3/4$ so that it
# integrates to 1; the factor cancels when the weights are normalised.) We
# write the four in plain `torch`, one line each, in a dictionary from a
# kernel's name to its function (`lambda u: …` is a function of `u` written
# in one line), and check them against `d2lmini`'s, `d2l.KERNELS`.

# %%
kernels = {
    "gaussian": lambda u: torch.exp(-u ** 2 / 2),
    "boxcar": lambda u: (u.abs() < 1).to(u.dtype),
    "constant": lambda u: torch.ones_like(u),
    "epanechnikov": lambda u: torch.clamp(1 - u ** 2, min=0),
}
u = torch.linspace(-3, 3, 121, device=device)
for name, ours in kernels.items():
    torch.testing.assert_close(ours(u), d2l.KERNELS[name](u))
print("our four kernels match d2lmini's")

# %% [markdown]
# ## Nadaraya–Watson pooling from scratch
#
# The prediction at query $q$ is a weighted average of the values, each
# kernel value divided by the sum over all keys:
#
# $$\hat f(q) = \sum_{i=1}^{n} \alpha(q, x_i)\, y_i, \qquad
# \alpha(q, x_i) = \frac{k\big((q - x_i)/\sigma\big)}{\sum_{j=1}^{n} k\big((q - x_j)/\sigma\big)} .$$
#
# In code, one row per query and one column per key:

# %%
def kernel_pooling(queries, keys, values, kernel, sigma):
    """Nadaraya–Watson pooling, normalising kernel values by their sum."""
    k = kernel((queries[:, None] - keys[None, :]) / sigma)  # (queries, keys)
    weights = k / k.sum(dim=1, keepdim=True)  # each row sums to 1
    return weights @ values, weights  # (queries,), (queries, keys)


sigma = 0.5
fits = {}
for name, kernel in kernels.items():
    ours, our_weights = kernel_pooling(x_val, x_train, y_train, kernel, sigma)
    theirs, their_weights = d2l.nadaraya_watson(x_val, x_train, y_train, name, sigma)
    torch.testing.assert_close(our_weights, their_weights)
    torch.testing.assert_close(ours, theirs)
    fits[name] = ours
    print(f"{name:>8}, σ = {sigma}: matches d2l.nadaraya_watson; "
          f"squared error against f: {truth_error(ours):.3f}")
torch.testing.assert_close(fits["constant"], avg_predictions)
print("the constant kernel gives average pooling exactly")

# %% [markdown]
# Each kernel (top, as a function of $u$) and the fit it gives at
# $\sigma = 0.5$ (bottom):

# %%
fig, axes = plt.subplots(2, 4, figsize=(12, 5), sharey="row")
for (ax_kernel, ax_fit), (name, kernel) in zip(axes.T, kernels.items()):
    ax_kernel.plot(d2l.numpy(u), d2l.numpy(kernel(u)))
    ax_kernel.set(title=f"{name} kernel", xlabel="u = (q − x) / σ")
    plot_fit(ax_fit, fits[name], f"{name} fit, σ = {sigma}")
axes[0, 0].set_ylabel("k(u)")
axes[1, 0].legend(fontsize=7)
fig.subplots_adjust(hspace=0.5, wspace=0.1)
plt.show()

# %% [markdown]
# The three local kernels follow the curve; the constant kernel is the flat
# baseline again. A local kernel cuts the squared error against $f$ from 0.86
# to 0.11 (Gaussian), 0.05 (boxcar) or 0.04 (Epanechnikov).
#
# ## Narrow kernels: where the textbook formula breaks
#
# Shrink $\sigma$ and $u = (q - x_i)/\sigma$ grows, so the Gaussian kernel
# value $\exp(-u^2/2)$ shrinks very fast. A float32 number cannot be
# arbitrarily close to 0: in float32, $\exp(-u^2/2)$ rounds to exactly 0
# once $u$ is above about 14.4. That rounding to 0 is called **underflow**.
# At $\sigma = 0.01$ it happens for any key more than 0.144 away from the
# query. A query with no key that near gets 0 for every kernel value, and
# $0/0$ is NaN ("not a number"): its whole row of weights is NaN, and so is
# its prediction. (The d2l book stores queries as columns, so there these
# are *NaN columns*.)

# %% [markdown]
# **Deeper (you may skip this).** Where the 14.4 comes from. The smallest
# positive float32 number is $2^{-149} \approx 1.4 \times 10^{-45}$. A result
# below half of it, $2^{-150}$, rounds to 0, and $e^{-103.97} = 2^{-150}$
# (because $150 \ln 2 = 103.97$). So $\exp(-u^2/2)$ underflows once
# $u^2/2 > 103.97$, that is $u > 14.42$; at $\sigma = 0.01$, $u > 14.42$ means a
# distance above 0.1442. The two exponentials below sit on either side of
# that edge:

# %%
print(f"float32: exp(-103) = {torch.exp(torch.tensor(-103.0)).item():.1e}, "
      f"exp(-104) = {torch.exp(torch.tensor(-104.0)).item()}")

# %% [markdown]
# The boxcar has the NaN problem by design: a query with no key inside its
# window has nothing to average. Let us count the NaN rows as $\sigma$ shrinks.

# %%
def nan_rows(weights):
    return int(weights.isnan().any(dim=1).sum())


print("   σ    NaN rows of k/Σk (of 50)    NaN rows of d2l.nadaraya_watson")
print("        gaussian   boxcar           gaussian   boxcar")
compared = ("gaussian", "boxcar")
for sigma in (0.5, 0.1, 0.05, 0.02, 0.01, 0.005):
    naive = [nan_rows(kernel_pooling(x_val, x_train, y_train, kernels[name], sigma)[1]) for name in compared]
    stable = [nan_rows(d2l.nadaraya_watson(x_val, x_train, y_train, name, sigma)[1]) for name in compared]
    print(f"{sigma:>6} {naive[0]:>9} {naive[1]:>8} {stable[0]:>18} {stable[1]:>8}")

# %% [markdown]
# At $\sigma = 0.01$ three queries lose their Gaussian prediction, at
# $\sigma = 0.005$ more. `d2l.nadaraya_watson` has none. Its trick: the
# Gaussian weights are a softmax of the *log* kernel values,
#
# $$\alpha(q, x_i) = \frac{\exp(-u_i^2/2)}{\sum_j \exp(-u_j^2/2)}
# = \operatorname{softmax}_i\!\left(-\tfrac12 u_i^2\right),$$
#
# and `torch.softmax` subtracts each row's maximum before exponentiating. The
# nearest key then contributes $\exp(0) = 1$ to the denominator, which can no
# longer be 0. Here is that version from scratch. At the end of the cell,
# `x_val[lost]` indexes with a tensor of booleans, one per query: it keeps
# the entries of `x_val` where `lost` is True.

# %%
def gaussian_pooling(queries, keys, values, sigma):
    """Gaussian Nadaraya–Watson pooling computed as a softmax of -u²/2."""
    scores = -((queries[:, None] - keys[None, :]) / sigma) ** 2 / 2  # (queries, keys): log k(u)
    weights = torch.softmax(scores, dim=1)  # (queries, keys)
    return weights @ values, weights


for sigma in (0.5, 0.01):
    ours, our_weights = gaussian_pooling(x_val, x_train, y_train, sigma)
    theirs, their_weights = d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", sigma)
    torch.testing.assert_close(our_weights, their_weights)
    torch.testing.assert_close(ours, theirs)
    print(f"σ = {sigma}: softmax form matches d2lmini, NaN rows: {nan_rows(our_weights)}")

naive_weights = kernel_pooling(x_val, x_train, y_train, kernels["gaussian"], 0.01)[1]
lost = naive_weights.isnan().any(dim=1)  # the queries the naive formula lost
stable_weights = gaussian_pooling(x_val, x_train, y_train, 0.01)[1]
print("queries lost by k/Σk:", d2l.numpy(x_val[lost]).round(1))
print("their largest softmax weight:", d2l.numpy(stable_weights[lost].max(dim=1).values).round(3))

# %% [markdown]
# The rescued queries put all their weight on their nearest key, which is what
# the formula means in the limit. For the boxcar, a query with no key in its
# window truly has nothing to average, and no formula can rescue it.
# `d2lmini` gives it an all-zero row of weights instead of NaN, so that one
# empty window cannot spread NaN through later computations. That avoids the
# NaN, not the problem: a weighted sum with every weight 0 predicts 0, and
# here 0 is a wrong number ($f$ is 0 only at $x = 0$). Unlike NaN, it looks
# like an answer. Chapter 02 gives a query with no key to attend to the same
# all-zero row, and there too its output 0 must be read as "nothing to
# attend to", never as a prediction. So an all-zero row must be flagged or
# avoided: count the rows whose weights sum to 0, as below, and widen the
# window until there are none.

# %%
boxcar_predictions, boxcar_weights = d2l.nadaraya_watson(x_val, x_train, y_train, "boxcar", 0.01)
empty = boxcar_weights.sum(dim=1) == 0  # the queries with no key in their window
print("boxcar, σ = 0.01: all-zero rows:", int(empty.sum()), "| NaN rows:", nan_rows(boxcar_weights))
print("their predictions are all 0:", bool((boxcar_predictions[empty] == 0).all()),
      f"| f at those queries: {y_truth[empty].min().item():.1f} to {y_truth[empty].max().item():.1f}")

# %% [markdown]
# From here on we use `d2l.nadaraya_watson`.
#
# ## The width is the knob
#
# A narrow kernel listens to one or two keys: the fit chases the noise. A
# wide kernel listens to everyone: the fit flattens towards the average. The
# squared error against $f$ shows both failures, with the best widths in
# between:

# %%
for sigma in (0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 3.0):
    predictions, _ = d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", sigma)
    print(f"σ = {sigma:<5} squared error against f: {truth_error(predictions):.3f}")

# %% [markdown]
# Four of these widths side by side: the fits, then their weights. In the
# heatmaps each row is a query (top: $q = 0$, bottom: $q = 4.9$) and each
# column a training key, sorted by $x_i$. All panels share one colour scale.

# %%
widths = (0.05, 0.2, 1.0, 3.0)
results = [d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", s) for s in widths]

fig, axes = plt.subplots(1, len(widths), figsize=(12, 2.8), sharey=True)
for ax, sigma, (predictions, _) in zip(axes, widths, results):
    plot_fit(ax, predictions, f"σ = {sigma}")
axes[0].legend(fontsize=7)
plt.show()

# %%
width_weights = torch.stack([weights for _, weights in results])  # (widths, queries, keys)
fig = d2l.show_heatmaps(width_weights, xlabel="Keys (sorted x_i)", ylabel="Queries",
                        titles=[f"σ = {s}" for s in widths], figsize=(12, 3.2))

# %% [markdown]
# At $\sigma = 0.05$ each row has one or two bright cells, and they walk down
# the diagonal: every query copies its nearest neighbours. At $\sigma = 0.2$
# the band widens to a handful of keys. At $\sigma = 3$ the rows flatten
# towards $1/40 = 0.025$, dark on this shared scale: the model moves towards
# average pooling. How far it has got, measured:

# %%
wide = width_weights[-1]  # σ = 3: (queries, keys)
print(f"σ = {widths[-1]}: every weight between {wide.min().item():.4f} and {wide.max().item():.4f} "
      f"(1/{wide.shape[-1]} = {1 / wide.shape[-1]:.4f})")

# %% [markdown]
# Flatter, not flat: the heaviest weight is still almost four times the
# lightest, because for a query at one end of $[0, 5)$ the keys at the other
# end are more than one $\sigma$ (3) away. Only as $\sigma$ grows without
# bound do all weights approach $1/40$ and the fit average pooling.
#
# ### Explore it yourself
#
# The explorer below redraws the fit and the weight heatmap together as you
# move a logarithmic $\sigma$ slider, pick a kernel, or change the number of
# training points (drawn from the same seed: at 40 they are this notebook's).
# Its heatmap places each key's column at the key's position on $[0, 5)$, so
# the columns differ in width. Things to try:
#
# * Gaussian, $\sigma$ from large to small: watch the band narrow to the
#   diagonal and the fit go from flat to jagged. Where does it look best?
# * Boxcar at a small $\sigma$: rows with no key in their window take the
#   colour of 0, the bottom of the colorbar (all-zero weights), and their
#   predictions drop to 0.
# * Constant: every row is uniform, whatever $\sigma$ is.
# * Epanechnikov next to the boxcar at the same $\sigma$: the same window, but
#   its weights fade towards the window's edges.
# * At a large $\sigma$ the heatmap is nearly one colour, the bottom of the
#   0 to 1 scale. Switch **colours** to *fit to weights*: the colorbar now
#   ends at 0.05 or so, and the faint structure of the weights shows.

# %%
from d2lmini.widgets import explore_kernel_pooling

explorer = explore_kernel_pooling()
explorer

# %% [markdown]
# <details>
# <summary>Worked answers to the things to try (open once you have tried them)</summary>
#
# 1. At the top of the slider, $\sigma = 8$, every query averages almost
#    every key and the fit is nearly the flat mean (squared error against
#    $f$: 0.851). Shrinking $\sigma$ narrows the band; by $\sigma = 0.0625$
#    the largest weight in the picture is 0.999: that row sees a single key,
#    and the fit copies the noise (0.145, and 0.233 at the bottom of the slider). It looks best near
#    $\sigma = 0.25$, where the error is smallest on the slider's grid, 0.036:
#    the width that leave-one-out training finds below (0.24).
# 2. At the smallest $\sigma$, $2^{-7}$, 46 of the 50 queries have no training
#    input inside their window: their rows are all zero and their predictions
#    0. There are still 13 such rows at $\sigma = 0.0625$, 5 at 0.125, 3 at
#    0.149 and none from 0.177 up. The boxcar has no tails, so such a row
#    has nothing to normalise; `d2lmini` returns zeros there instead of the
#    NaN of $0/0$. The predictions of 0 are wrong all the same, everywhere
#    but at $x = 0$: the fit drops to 0 wherever a window is empty, whatever
#    $f$ is there.
# 3. Every weight is 0.025, that is $1/40$, at the smallest $\sigma$ and at the
#    largest alike, and the fit is the flat mean of the 40 targets: average
#    pooling. The constant kernel ignores the distance, so there is nothing
#    for $\sigma$ to scale.
# 4. At $\sigma = 0.5$ the query $x = 2.5$ gives weight to the same 7 keys
#    under both kernels. The boxcar gives each of them $1/7 \approx 0.143$;
#    the Epanechnikov kernel gives 0.205 to the nearest and only 0.007 to the
#    one at the window's edge. A key entering the window starts at weight 0
#    instead of jumping in, so the fit has no steps, and it is closer to $f$
#    (squared error 0.038 against 0.047, printed in the from-scratch section).
# 5. At $\sigma = 8$ the largest weight is 0.027, under 3% of the way up the
#    0 to 1 scale, so the picture is nearly all the colour of 0. *Fit to
#    weights* ends the colorbar at 0.05, and a faint diagonal band appears:
#    nearby keys still weigh a little more, because even that wide a
#    Gaussian is not flat over $[0, 5)$.
#
# </details>

# %% [markdown]
# ## Learning the width
#
# Instead of trying widths by hand we can learn $\sigma$ by gradient descent
# on the squared error at the training points. `d2l.NWKernelRegression` is
# Gaussian pooling with one parameter, $\log\sigma$ (so that $\sigma$ stays
# positive whatever step gradient descent takes).
#
# There is a trap. If query $x_i$ sees its own key $x_i$, the model can
# shrink $\sigma$ towards 0, put all of $x_i$'s weight on itself and predict
# $y_i$ exactly: zero training loss, and a model that only copies its data.
# The remedy is **leave-one-out**: when predicting at $x_i$, use every
# training point except $i$. `d2l.leave_one_out` builds those keys and
# values, one row per query:

# %%
keys_loo, values_loo = d2l.leave_one_out(x_train, y_train)
print("keys for the 40 training queries:", tuple(keys_loo.shape), "(row i lacks x_i)")
print("row 0 starts with x_1, x_2:", d2l.numpy(keys_loo[0, :2]).round(3),
      "| x_0, x_1, x_2 are", d2l.numpy(x_train[:3]).round(3))

# %% [markdown]
# The loss is the mean squared error (MSE) over the 40 training points,
# $L = \frac1n \sum_i \big(\hat f(x_i) - y_i\big)^2$, and each step of
# gradient descent moves the parameter against its gradient with a learning
# rate $\eta$:
#
# $$\log\sigma \leftarrow \log\sigma - \eta\, \frac{\partial L}{\partial \log\sigma} .$$
#
# With a single parameter we write that step out; it is the update
# `torch.optim.SGD` makes. SGD, *stochastic* gradient descent, usually takes
# each step on a random batch of the data; here every step uses all 40
# points, so nothing is random. We train twice from $\sigma = 1$ with
# $\eta = 2$: once with leave-one-out keys, once with the full training set
# as keys. A progress bar follows each run.
#
# The loop below is the first in this collection to use PyTorch's automatic
# gradients. Four pieces do the work:
#
# * `net.log_sigma` is an `nn.Parameter`: a tensor that a model marks as one
#   of its learnable numbers. PyTorch records every computation that uses it,
#   all the way to the loss.
# * `loss.backward()` goes back through that record and computes the
#   gradient $\partial L / \partial \log\sigma$: how fast the loss changes
#   when $\log\sigma$ grows a little.
# * The gradient lands in `net.log_sigma.grad`. Each `backward()` adds to
#   what is already there, so after each step we set it back to `None`.
# * PyTorch refuses to change a parameter in place while it is recording.
#   `with torch.no_grad():` switches the recording off for the lines inside
#   it, so the SGD step can change $\log\sigma$.
#
# Later cells call `.detach()`: it gives the same numbers without the record,
# for plotting and printing.

# %%
def train_width(keys, values, description, num_steps=50, lr=2.0):
    """Fit NWKernelRegression's width by SGD; return the model and its history."""
    net = d2l.NWKernelRegression(sigma=1.0).to(device)
    progress = widgets.IntProgress(value=0, max=num_steps, description=description)
    display(progress)
    losses, sigmas = [], []
    for step in range(num_steps + 1):  # record the start and the state after each step
        loss = ((net(x_train, keys, values) - y_train) ** 2).mean()
        losses.append(loss.item())
        sigmas.append(net.sigma.item())  # the width this loss was computed with
        progress.value = step
        if step < num_steps:
            loss.backward()
            with torch.no_grad():
                net.log_sigma -= lr * net.log_sigma.grad  # the SGD step
            net.log_sigma.grad = None
    return net, losses, sigmas


net_loo, losses_loo, sigmas_loo = train_width(keys_loo, values_loo, "leave-one-out")

# %%
net_all, losses_all, sigmas_all = train_width(x_train, y_train, "all keys")

# %% [markdown]
# The loss curves and the widths (top), and the fits that the two learned
# widths give on the query grid, with all 40 training points as keys
# (bottom):

# %%
fig, ((ax_loss, ax_sigma), (ax_fit_loo, ax_fit_all)) = plt.subplots(2, 2, figsize=(9, 5.6))
for losses, sigmas, label in [(losses_loo, sigmas_loo, "leave-one-out"), (losses_all, sigmas_all, "all keys")]:
    ax_loss.plot(losses, label=label)
    ax_sigma.plot(sigmas, label=label)
ax_loss.set(xlabel="SGD steps taken", ylabel="training loss (MSE)", title="Loss curve")
ax_sigma.set(xlabel="SGD steps taken", ylabel="σ", yscale="log", title="Width")
ax_loss.legend(fontsize=8)
for ax, net, label in [(ax_fit_loo, net_loo, "leave-one-out"), (ax_fit_all, net_all, "all keys")]:
    sigma = net.sigma.detach()
    predictions, _ = d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", sigma)
    plot_fit(ax, predictions, f"trained with {label}: σ = {sigma.item():.3f}")
ax_fit_loo.legend(fontsize=7)
fig.subplots_adjust(hspace=0.5, wspace=0.25)
plt.show()

# %% [markdown]
# Numbers for the two runs. "Training loss" is what SGD minimised; the error
# against $f$ uses the learned width on the query grid, with all 40 training
# points as keys, as a prediction would.

# %%
for net, losses, label in [(net_loo, losses_loo, "leave-one-out"), (net_all, losses_all, "all keys")]:
    sigma = net.sigma.detach()
    predictions, _ = d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", sigma)
    print(f"{label:>13}: σ = {sigma.item():.3f}, final training loss {losses[-1]:.3f}, "
          f"squared error against f {truth_error(predictions):.3f}")

own_weight = net_all.attention_weights.diagonal()  # weight each x_i puts on its own key
print(f"with all keys, each training query puts on average {own_weight.mean().item():.2f} "
      "of its weight on its own key")

# %% [markdown]
# Without leave-one-out, $\sigma$ keeps shrinking and the training loss keeps
# falling, while the error against the true function is several times worse:
# the model has learned to look itself up. With leave-one-out, the loss levels
# off at a width that balances noise against detail.
#
# Is that width the best one for the leave-one-out loss? A grid search over
# $\sigma$ answers it without any gradients. We evaluate all 101 widths at
# once: the Gaussian pooling of the softmax form, with one more leading axis
# for the width. Indexing with `None` inserts an axis of length 1, and
# broadcasting repeats a tensor along such an axis to match the other one.
# The 40 training queries become $(1, 40, 1)$, their leave-one-out keys
# $(1, 40, 39)$ and the widths $(101, 1, 1)$, so `u` holds one scaled
# distance for every width, query and key: $(101, 40, 39)$.

# %%
grid = torch.logspace(-2, 0.5, 101).to(device)  # 101 widths from 0.01 to 3.16
u = (x_train[None, :, None] - keys_loo[None, :, :]) / grid[:, None, None]  # (widths, queries, keys)
loo_predictions = (torch.softmax(-u ** 2 / 2, dim=-1) * values_loo).sum(dim=-1)  # (widths, queries)
loo_losses = ((loo_predictions - y_train) ** 2).mean(dim=-1)  # (widths,)
best = loo_losses.argmin()
print(f"grid minimum of the leave-one-out loss: σ = {grid[best].item():.2f} "
      f"(loss {loo_losses[best].item():.3f}); SGD found σ = {net_loo.sigma.item():.2f}")

# %% [markdown]
# ## A bridge to dot-product attention
#
# So far queries and keys were numbers; in the chapters ahead they are
# vectors of $d$ numbers each. Two pieces of notation carry the rest of the
# collection:
#
# * the **dot product** of two vectors of the same size,
#   $q^\top k = \sum_{i=1}^{d} q_i k_i$: multiply them entry by entry and add
#   up, which gives one number. Vectors are columns here; the $\top$
#   (*transpose*) turns the column $q$
#   into a row, and a row times a column is that sum;
# * the **length**, or **norm**, of a vector, $\lVert q\rVert$: the square root
#   of the sum of its squared entries, so $\lVert q\rVert^2 = q^\top q$.
#
# The distance between a query and a key is the length of their difference,
# $\lVert q - k\rVert$. With $\sigma = 1$, the Gaussian score of a query $q$
# and a key $k$ (from here on, $k$ is a key, no longer the kernel) is
# $-\tfrac12 \lVert q - k\rVert^2$, which for numbers is the
# $-\tfrac12 (q - k)^2$ of chapter 00. Expanding the square entry by entry,
# as $(a - b)^2 = a^2 - 2ab + b^2$, and adding up over the $d$ entries gives
# $\lVert q - k\rVert^2 = \lVert q\rVert^2 - 2\, q^\top k + \lVert k\rVert^2$, so
#
# $$-\tfrac12 \lVert q - k\rVert^2 = q^\top k - \tfrac12 \lVert k\rVert^2 - \tfrac12 \lVert q\rVert^2 .$$
#
# The last term depends on the query only, so it is the same for every key
# in a row of scores, and a softmax does not change when a constant is added
# to a whole row. It cancels: Gaussian attention is
# $\operatorname{softmax}\big(q^\top k - \tfrac12\lVert k\rVert^2\big)$, a dot
# product plus one bias per key. If all keys have the same norm, that bias
# cancels too and only $\operatorname{softmax}(q^\top k)$ is left: the
# dot-product score of chapter 04. (A width $\sigma$ divides every score by
# $\sigma^2$. A number that divides every score is called a *temperature*: a
# large one flattens the weights, a small one sharpens them. Chapter 04's
# $\sqrt d$ is such a temperature, chosen there so that growing the size $d$
# of the vectors does not, by itself, sharpen the weights.)
#
# We check each step numerically on random vectors of dimension 4. The code
# keeps the 3 queries as the rows of `q`, of shape (3, 4), and the 6 keys as
# the rows of `k`, (6, 4). `k.T` is `k` transposed: its rows become columns,
# of shape (4, 6). `@` multiplies matrices: entry $(i, j)$ of `q @ k.T` is the
# dot product of row $i$ of `q` with column $j$ of `k.T`, that is $q^\top k$
# for query $i$ and key $j$. So `q @ k.T`, of shape (3, 6), holds every score
# $q^\top k$, one row per query and one column per key, as chapter 00's
# scores did. `(k ** 2).sum(dim=-1)` squares every entry and adds up each
# row: one $\lVert k\rVert^2$ per key.

# %%
torch.manual_seed(1)
q = torch.randn(3, 4).to(device)  # 3 queries
k = torch.randn(6, 4).to(device)  # 6 keys


def distance_scores(q, k):
    return -0.5 * ((q[:, None, :] - k[None, :, :]) ** 2).sum(dim=-1)  # (queries, keys)


expanded = q @ k.T - 0.5 * (k ** 2).sum(dim=-1)[None, :] - 0.5 * (q ** 2).sum(dim=-1)[:, None]
torch.testing.assert_close(distance_scores(q, k), expanded)
print("-½‖q−k‖² equals qᵀk − ½‖k‖² − ½‖q‖²")

without_q_term = q @ k.T - 0.5 * (k ** 2).sum(dim=-1)[None, :]  # (queries, keys)
torch.testing.assert_close(torch.softmax(distance_scores(q, k), dim=-1), torch.softmax(without_q_term, dim=-1))
print("dropping the ‖q‖² term leaves the softmax weights unchanged")

unit_keys = k / k.norm(dim=-1, keepdim=True)  # every key now has norm 1
torch.testing.assert_close(torch.softmax(distance_scores(q, unit_keys), dim=-1),
                           torch.softmax(q @ unit_keys.T, dim=-1))
print("with keys of equal norm, Gaussian weights are softmax(qᵀk)")
print("the scores themselves differ, by ½‖q‖² + ½ per row:",
      d2l.numpy((q @ unit_keys.T - distance_scores(q, unit_keys))[:, 0]).round(3))

# %% [markdown]
# ## Summary
#
# * Nadaraya–Watson regression is attention pooling: queries are new inputs,
#   keys and values the training inputs and targets, and the weights are
#   kernel values normalised over the keys.
# * The constant kernel gives average pooling; local kernels (Gaussian,
#   boxcar, Epanechnikov) follow the data.
# * Normalising as $k/\sum k$ gives NaN rows once a narrow Gaussian kernel
#   underflows for every key (3 of 50 queries at $\sigma = 0.01$ here). A
#   softmax of the log-kernel values never does; `d2l.nadaraya_watson`
#   computes it that way, and gives a query with no key in a boxcar's window
#   all-zero weights instead of NaN. Their prediction, 0, is still wrong
#   (everywhere but at $x = 0$): count such rows and widen the window until
#   there are none.
# * The width $\sigma$ trades noise against detail. It can be learned by
#   gradient descent, but only with leave-one-out keys: with its own key in
#   view, the model shrinks $\sigma$ and copies $y_i$.
# * $-\tfrac12\lVert q-k\rVert^2 = q^\top k - \tfrac12\lVert k\rVert^2 - \tfrac12\lVert q\rVert^2$,
#   and the $\lVert q\rVert^2$ term cancels in the softmax: the Gaussian score
#   is one step away from the dot product.

# %% [markdown]
# ## Why? A question to check
#
# **Trained with every training point as a key, the width σ keeps shrinking
# and the training loss keeps falling. Why?**

# %%
from d2lmini.exercises import questions

questions.ask("01")


# %% [markdown]
# ## Exercises
#
# Fill in each function, run its cell, then run the check below it. A check
# prints one line when your answer is right; otherwise it tells you what it
# expected, what it got, and gives a hint.

# %% [markdown]
# ### Exercise 1.1 · The triangular kernel (★)
#
# The triangular kernel is a tent, $k(u) = \max(1 - \lvert u\rvert, 0)$: 1 at
# $u = 0$, falling in a straight line to 0 at $\lvert u\rvert = 1$, and 0
# beyond. It has the window of the boxcar and the Epanechnikov kernel, but
# not their profile: compare $k(0.5)$ for the three. Write it for a tensor
# `u` of any shape, elementwise, without changing `u`. `d2lmini` does not
# provide this one; once it passes, the check hands your function to
# `d2l.nadaraya_watson`, which takes any kernel function as well as a name.

# %% tags=["exercise"]
def triangular_kernel(u):
    """Return max(1 - |u|, 0) elementwise."""
    ### BEGIN SOLUTION
    return torch.clamp(1 - u.abs(), min=0)
    ### END SOLUTION


# %% tags=["check"]
ch01.check_triangular(triangular_kernel)

# %% [markdown]
# ### Exercise 1.2 · Choose σ on held-out data (★)
#
# The plain training loss cannot choose $\sigma$: with the training points as
# their own keys, the smallest width always wins. Leave-one-out keys are one
# way out (the chapter's; Exercise 1.3 extends it); holding some data out is
# another. Write `best_sigma` that returns the width from `sigmas` whose
# Gaussian Nadaraya–Watson predictions at the held-out inputs `x_val` (keys
# `x_train`, values `y_train`) have the smallest mean squared error against
# their targets `y_val`. Return one of the numbers in `sigmas`.

# %% tags=["exercise"]
def best_sigma(x_train, y_train, x_val, y_val, sigmas):
    """Return the width in sigmas with the lowest validation MSE."""
    ### BEGIN SOLUTION
    errors = torch.stack([
        ((d2l.nadaraya_watson(x_val, x_train, y_train, "gaussian", s)[0] - y_val) ** 2).mean()
        for s in sigmas
    ])
    return sigmas[int(errors.argmin())]
    ### END SOLUTION


# %% tags=["check"]
ch01.check_best_sigma(best_sigma)

# %% [markdown]
# ### Exercise 1.3 · Leave out the neighbours too (★★)
#
# Leave-one-out hides only point $i$ from query $x_i$. Real data often hold
# near-copies of a point: the same measurement taken twice, or two readings a
# moment apart. Then query $x_i$ can copy the target of its copy, and the
# trap of the chapter is back. The remedy is to hide a whole block of
# neighbours.
#
# Write `block_out_loss(x, y, sigma, m)`: the mean squared error of Gaussian
# Nadaraya–Watson predictions at every training input $x_i$, where the
# prediction for $x_i$ may use only the points $j$ with $\lvert i - j\rvert > m$.
# The inputs `x` are sorted, so this hides $x_i$ and its $m$ nearest
# neighbours on each side (fewer at the ends of the data). With $m = 0$ it is
# the chapter's leave-one-out loss. Return a scalar tensor. A query near an
# end keeps more keys than one in the middle, so the keys of all queries do
# not fit one table of equal rows, as `d2l.leave_one_out`'s do. Loop over $i$
# instead, and pick query $i$'s keys and values with a boolean mask, as
# `x_val[lost]` picked queries. Pass `x[i:i + 1]`, of shape (1,), as the
# query (`x[i]` has no axis at all), collect the predictions in a list, and
# join them into one tensor with `torch.cat(predictions)`.
#
# When it passes, the check takes every training point twice, so each point
# has an exact copy beside it, and picks $\sigma$ from a grid by your loss,
# once with $m = 0$ and once with $m = 1$. Before you run it: which of the two
# do you expect to pick a tiny width, and why?

# %% tags=["exercise"]
def block_out_loss(x, y, sigma, m):
    """Mean squared error of Gaussian pooling when query i cannot see the points j with |i - j| <= m."""
    ### BEGIN SOLUTION
    n = len(x)
    predictions = []
    for i in range(n):
        keep = (torch.arange(n, device=x.device) - i).abs() > m  # (n,) True outside the block
        prediction, _ = d2l.nadaraya_watson(x[i:i + 1], x[keep], y[keep], "gaussian", sigma)
        predictions.append(prediction)
    return ((torch.cat(predictions) - y) ** 2).mean()
    ### END SOLUTION


# %% tags=["check"]
ch01.check_block_out_loss(block_out_loss)

# %% [markdown]
# ## Further reading
#
# * E. A. Nadaraya (1964), "On estimating regression", *Theory of
#   Probability and Its Applications* 9(1), and G. S. Watson (1964), "Smooth
#   regression analysis", *Sankhyā A* 26(4): the two papers that proposed,
#   independently, the kernel-weighted average this chapter builds.
# * The d2l book, chapter "Attention Mechanisms and Transformers", section
#   "Attention Pooling by Similarity": the same estimator, with other kernels
#   and a learned width.
