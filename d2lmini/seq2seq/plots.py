"""Pictures of cross-attention: one heatmap per example, with the correct positions marked."""

from .._checks import check_tensor, shape_str
from ..i18n import _
from ..plotting import CMAP, attach_summary, describe_weights, plt, sentence


def show_attention(weights, batch, predictions=None, titles=None, figsize=None):
    """A row of cross-attention heatmaps, one per example of ``batch``, on one colour scale from 0 to 1.

    ``weights`` is ``(examples, output steps, source steps)``, for instance a
    model's ``attention_weights`` or ``batch.alignment`` itself. Each panel is
    cropped to its example's length: rows are the output steps (queries),
    labelled with ``predictions`` (red where they are wrong) or else with the
    target; columns are the source positions (keys), labelled with the source
    symbols; a circle marks the correct position of each step. Returns the
    figure (a pyplot figure: ``plt.show()`` shows it), with a text summary for
    screen readers printed under it in Jupyter (``plotting.attach_summary``). A
    wrong prediction is marked ✗ as well as red, for readers who cannot tell
    red from green.
    """
    check_tensor(weights, "weights", ndim=3, floating=True)
    if weights.shape[0] != len(batch) or weights.shape[2] != batch.source.shape[1]:
        raise ValueError(f"weights {shape_str(weights)} must have one (output steps, source steps) matrix per "
                         f"example of the batch, source {shape_str(batch.source)}")
    if titles is not None and len(titles) != len(batch):
        raise ValueError(f"titles must have one entry per example ({len(batch)}), got {len(titles)}")
    weights = weights.detach().cpu()
    batch = batch.to("cpu")
    shown = batch.target if predictions is None else predictions.detach().cpu()
    num = len(batch)
    figsize = figsize or (2.3 * num + 0.9, 2.5)
    fig, axes = plt.subplots(1, num, figsize=figsize, squeeze=False, layout="constrained")
    summaries = []
    for b, ax in enumerate(axes[0]):
        n = int(batch.real[b].sum())
        image = ax.imshow(weights[b, :n, :n].numpy(), cmap=CMAP, vmin=0, vmax=1)
        rows, columns = batch.alignment[b, :n, :n].nonzero(as_tuple=True)
        ax.plot(columns, rows, "o", markersize=5, markerfacecolor="none", markeredgecolor="#1f6feb",
                markeredgewidth=1.5)
        sources, outputs = [str(s) for s in batch.source[b, :n].tolist()], [str(s) for s in shown[b, :n].tolist()]
        right = [True] * n if predictions is None else (shown[b, :n] == batch.target[b, :n]).tolist()
        ax.set_xticks(range(n), sources)
        ax.set_yticks(range(n), [s if ok else f"{s} ✗" for s, ok in zip(outputs, right)])
        if predictions is not None:
            for label, ok in zip(ax.get_yticklabels(), right):
                label.set_color("#1a7f37" if ok else "#cf222e")
        title = " ".join(titles[b].split()) if titles is not None else _("example {b}").format(b=b)
        # A sentence of its own after the previous example's: its title begins with a capital.
        summaries.append(sentence(f"{title}: ") + describe_weights(weights[b, :n, :n], query_labels=outputs,
                                                                    key_labels=sources, max_queries=1))
        ax.set_xlabel(_("source (keys)"))
        if b == 0:
            ax.set_ylabel(_("output (queries)"))
        if titles is not None:
            ax.set_title(titles[b], fontsize="medium")
    fig.colorbar(image, ax=axes[0], shrink=0.8, label=_("attention weight"))
    return attach_summary(fig, " ".join(summaries))
