"""The drawing a seq2seq run's explorers share: one example's cross-attention, its symbols and words.

``ExampleMap`` draws the cross-attention of any recorded example on one kept
figure (``figure.BlitFigure``), its source symbols under the columns, its output
symbols beside the rows (red where wrong) and circles on the correct positions;
``describe_example`` says the same in words. ``training.TrainingView`` and
``alignment.Alignment`` both draw with it.
"""

from matplotlib import rcParams
from matplotlib.transforms import offset_copy

from ..i18n import _
from ..plotting import describe_weights
from ..seq2seq import SYMBOLS
from .figure import masked_weights

RIGHT, WRONG = "#1a7f37", "#cf222e"  # colours of an output symbol that is right, and wrong


def real_pairs(batch):
    """(output steps, source positions) of the one example of ``batch``: True where neither is padding."""
    real = batch.real[0]
    return real[:, None] & real[None, :]


def symbols(batch, predictions):
    """(output symbols, source symbols) of the one example of ``batch``, its outputs ``predictions``
    (output steps,); "" for padding."""
    outputs = [str(s) if shown else "" for s, shown in zip(predictions.tolist(), batch.real[0].tolist())]
    sources = [str(s) if s < SYMBOLS else "" for s in batch.source[0].tolist()]
    return outputs, sources


def describe_example(weights, batch, predictions):
    """The cross-attention ``weights`` (output steps, source positions) of the one example of
    ``batch`` in words, its rows named by the model's outputs, its columns by the source."""
    outputs, sources = symbols(batch, predictions)
    return describe_weights(weights, real_pairs(batch), query_labels=outputs, key_labels=sources)


class ExampleMap:
    """The cross-attention heatmap of any of ``examples`` (all padded to one width), on ``ax`` of
    ``blit``, with its colorbar: one figure for every example, so that a new example draws nothing
    in full.

    Columns are the source positions, labelled with the example's symbols
    (texts standing in for the x tick labels); circles mark the correct
    position of each output step; rows are the output steps, labelled with
    the model's output, red where it is wrong. All of these change with the
    example or the output, so they are registered. When an example has
    padding, the background is hatched (it shows through masked cells only),
    and the *masked* legend entry shows for an example with padding.
    """

    def __init__(self, blit, ax, examples):
        width = examples.source.shape[1]
        padded = not bool(examples.real.all())
        self.heatmap = blit.heatmap(ax, width, width, xlabel=_("source symbol (keys)"),
                                    ylabel=_("output symbol (queries)"), masked=padded)
        ax.set_xticks(range(width), [""] * width)
        ax.set_yticks(range(width), [""] * width)
        ax.xaxis.labelpad = ax.yaxis.labelpad = 14  # clear of the symbols
        # Where matplotlib puts a tick label: the tick's length and its pad outside the axes.
        pad = rcParams["xtick.major.size"] + rcParams["xtick.major.pad"]
        below = offset_copy(ax.get_xaxis_transform(), fig=ax.figure, y=-pad, units="points")
        shifted = offset_copy(ax.transData, fig=ax.figure, x=-3, units="points")
        # A placeholder digit in each, so that the layout, made once, leaves room for the symbols.
        self.sources = [blit.animate(ax.text(j, 0, "0", transform=below, ha="center", va="top", clip_on=False,
                                             fontweight="bold")) for j in range(width)]
        # Registered: the heatmap, redrawn on every change, would cover them.
        self.circles = blit.animate(ax.plot([], [], "o", markersize=5, markerfacecolor="none",
                                            markeredgecolor="#1f6feb", markeredgewidth=1.5)[0])
        self.outputs = [blit.animate(ax.text(-0.5, i, "0", transform=shifted, ha="right", va="center",
                                             clip_on=False, fontweight="bold")) for i in range(width)]
        blit.colorbar(ax)
        # The "masked" legend entry that the colorbar made for a hatched heatmap.
        self.legend = blit.animate(blit.figure.legends[-1]) if padded else None
        self.examples = examples

    def show(self, example, weights, predictions):
        """Draw ``weights`` (output steps, source positions) of example number ``example``, its
        source symbols, circles and, labelling the rows, ``predictions`` (output steps,)."""
        batch = self.examples[example]
        padded = not bool(batch.real.all())
        self.heatmap.set_array(masked_weights(weights, real_pairs(batch)) if padded else weights.numpy())
        outputs, sources = symbols(batch, predictions)
        for text, symbol in zip(self.sources, sources):
            text.set_text(symbol)
        rows, columns = batch.alignment[0].nonzero(as_tuple=True)
        self.circles.set_data(columns.tolist(), rows.tolist())
        for text, symbol, right in zip(self.outputs, outputs, (predictions == batch.target[0]).tolist()):
            text.set_text(symbol)
            text.set_color(RIGHT if right else WRONG)
        if self.legend is not None:
            self.legend.set_visible(padded)
