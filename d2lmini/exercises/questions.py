"""One "why" question per chapter, answered with a click.

Each chapter ends its main part with a multiple-choice question that asks why
something it showed is so. ``ask("04")`` returns the chapter's question as a
widget: the options as radio buttons, a Check button and a feedback line. Every
option has its own feedback: a wrong one names the confusion it stands for and
points back to the chapter without giving the answer away; the right one says
why it is right.

The wording is data, in ``QUESTIONS``, in English and marked for the catalogue;
``WhyQuestion`` only shows it, in the learner's language (``d2lmini.i18n``). Which
option is right lives in Python alone: the widget's synced state (what a saved
notebook stores) holds the option labels and an empty feedback line until a
learner presses Check, and its text form lists the options only.
"""

import html
from dataclasses import dataclass

import ipywidgets as widgets

from ..i18n import N_, _
from ..widgets._compat import MimeBundleDisplay

# ipywidgets' style sheet gives a radio button's label a fixed height and floats the button left of
# the text's last line, and gives an HTML line a line height of 28 px: fine for one short line, but an
# option or a feedback text that wraps would overlap the next option or spread out. Inside a question,
# the button stays beside the first line and the text takes the height it needs.
LABEL_STYLE = ("<style>"
               ".d2l-why-question .widget-radio-box label {display: flex; flex-direction: row-reverse; "
               "justify-content: flex-end; align-items: flex-start; height: auto; line-height: 1.4; "
               "margin-bottom: 4px;} "
               ".d2l-why-question .widget-radio-box input {float: none; flex: none; height: auto;} "
               ".d2l-why-question .widget-html-content {line-height: 1.4;}"
               "</style>")


@dataclass(frozen=True)
class Question:
    """A question, its options, the index of the right option, and one feedback text per option."""

    prompt: str
    options: tuple[str, ...]
    answer: int
    feedback: tuple[str, ...]


QUESTIONS = {
    "00": Question(
        prompt=N_("Why does attention pooling always answer with a number between the smallest and the "
                  "largest value?"),
        options=(
            N_("Because the scores a(q, k) lie between 0 and 1, so they can only scale values down."),
            N_("Because the softmax picks the highest-scoring key and returns its value."),
            N_("Because the weights are positive and sum to 1, so the answer is a weighted average."),
            N_("Because the key nearest the query gets most of the weight, and its value is in range."),
        ),
        answer=2,
        feedback=(
            N_("That mixes up scores and weights. A score can be any real number: this chapter's nearness "
               "scores are 0 or below, and the product q · k can be large. Look at what the softmax does to "
               "the scores before they touch the values."),
            N_("That is a hard maximum. The softmax gives every key some weight: the query at 2.5 puts "
               "0.353 on each of keys 2 and 3 and answers 2.5, a value no key holds. Look at the two "
               "properties the softmax gives the weights."),
            N_("Right. A weighted average with positive weights that sum to 1 can never leave the range of "
               "what it averages, whatever the scores were: the softmax guarantees both properties."),
            N_("Nearness is only one score. With the explorer's product q · k, the query q = 1 gives most "
               "of its weight to key 5, far from it, and the answer, 4.266, still lies in the range. Look "
               "at what holds for the weights whatever the score."),
        ),
    ),
    "01": Question(
        prompt=N_("Trained with every training point as a key, the width σ keeps shrinking and the training "
                  "loss keeps falling. Why?"),
        options=(
            N_("The learning rate of 2 is too large, so every SGD step overshoots the best width."),
            N_("A narrower kernel follows the true f more closely, and the loss rewards that."),
            N_("Each training query sees its own key at distance 0, so a tiny σ copies its y_i."),
            N_("The parameter is log σ, which has no lower limit, so nothing stops σ from shrinking."),
        ),
        answer=2,
        feedback=(
            N_("The optimiser is not the cause: the leave-one-out run uses the same learning rate and "
               "settles at a width. Ask what the two runs see differently at each training query."),
            N_("A falling training loss is not a better fit: the error against f of the all-keys run is "
               "several times worse. Ask what the model can look up when it predicts at x_i."),
            N_("Right. With its own key in view, a query can put all its weight on itself as σ → 0 and "
               "predict y_i exactly: zero training loss, by copying. Leave-one-out takes that key away."),
            N_("log σ lets σ become small, but it does not push it there; the leave-one-out run has the "
               "same parameter and stops. Ask what makes a smaller σ pay off only in one of the two runs."),
        ),
    ),
    "02": Question(
        prompt=N_("Why does d2lmini give a query with no valid key a row of zero weights, rather than the "
                  "same weight on every key?"),
        options=(
            N_("Because every row of weights must sum to 1, and zeros keep that rule."),
            N_("Because the softmax of a row filled with −inf is already all zeros, with no extra step."),
            N_("Because a uniform row would turn into NaN in float16, the dtype models often run in."),
            N_("Because a uniform row would average the padding values into the query's output."),
        ),
        answer=3,
        feedback=(
            N_("Add up a row of zeros: it sums to 0, not 1. No row without a valid key can keep that rule; "
               "the question is what to give it instead, and what its output then means."),
            N_("Look again at the fill −inf row in this chapter: e^(−inf) / Σ e^(−inf) is 0/0, which is NaN. "
               "The zeros are set on purpose, after the softmax."),
            N_("A finite fill such as −1e6 in float32 or the dtype's minimum gives a uniform row without any "
               "NaN: it is numerically fine. Ask what the output of that query would then be made of."),
            N_("Right. Uniform weights over keys that are all padding average values that hold no data: a "
               "wrong output that looks normal. Zero weights make the output the zero vector, 'nothing to "
               "attend to', and unlike NaN they cannot spread into the model's parameters."),
        ),
    ),
    "03": Question(
        prompt=N_("In the toy example all ten keys are (1, 1). Why are the weights uniform over the valid keys, "
                  "whatever the query and whatever the network's parameters?"),
        options=(
            N_("Because a score sees only its query and its key, and all ten keys are equal."),
            N_("Because the network is untrained, so its scores are all still close to 0."),
            N_("Because tanh saturates at ±1, which makes every score come out the same."),
            N_("Because the query has size 20 and the keys size 2, so they cannot be compared."),
        ),
        answer=0,
        feedback=(
            N_("Right. A score a(q, k) depends on the query and the key only. Ten copies of one key get ten "
               "equal scores for any query and any W_q, W_k, w_v, and the softmax of equal numbers is flat, "
               "so the output is the mean of the valid value rows: [2, 3, 4, 5] and [10, 11, 12, 13]."),
            N_("Training is not the point: the dot-product score has no parameters at all, and with identical "
               "keys its rows are just as flat (the comparison figure). Ask what a score can depend on, and "
               "what is the same for all ten keys."),
            N_("Saturation would only make large scores alike, yet these weights are exactly 1/2 and 1/6 "
               "for any query, small or large. Ask what the ten keys give the score in common."),
            N_("Comparing different sizes is what additive attention is for: W_q and W_k take both to the "
               "same hidden size d_h. Ask what is special about the keys of this example."),
        ),
    ),
    "04": Question(
        prompt=N_("Why are the scores divided by √d, and not by d?"),
        options=(
            N_("Either would do: both keep the scores small, and √d is only a convention."),
            N_("Because qᵀk is a sum of d products, so a typical score grows in proportion to d."),
            N_("Because the variance of qᵀk grows like d, so a typical score grows like √d."),
            N_("Because each row must sum to 1, and only dividing by √d makes it do so."),
        ),
        answer=2,
        feedback=(
            N_("Not any division will do. Work out Var(qᵀk / d) for unit-variance coordinates, and think "
               "about what a score that shrinks as d grows does to the softmax."),
            N_("The d terms have mean 0 and random signs, so they partly cancel. Look at the measured "
               "variance at d = 1024: what is the typical size of a score, its standard deviation?"),
            N_("Right. The d products are independent with variance 1, so Var(qᵀk) = d and the typical "
               "score is √d. Dividing by √d brings the variance back to 1 at every d; dividing by d would "
               "make it 1/d, and the weights would flatten towards uniform as d grows."),
            N_("The softmax makes every row sum to 1 whatever the scores are. The scale changes how peaked "
               "the weights are; compare the unscaled and scaled tables in this chapter."),
        ),
    ),
    "05": Question(
        prompt=N_("Why does transpose_qkv permute the head axis forward before merging it into the batch, "
                  "instead of one reshape from (batch, n, d_model) to (batch·heads, n, d_head)?"),
        options=(
            N_("Because one reshape cannot reach that shape: the head axis has to come first."),
            N_("Because a reshape alone would give each 'head' pieces of several positions."),
            N_("For speed: the permute makes the memory contiguous, so the batched product runs faster."),
            N_("Because without it the heads would all share one projection W_q instead of a slice each."),
        ),
        answer=1,
        feedback=(
            N_("Shapes cannot tell them apart: both give (batch·heads, n, d_head). Look at the positions the "
               "tracer finds in batch row 0, with and without the permute."),
            N_("Right. In memory, all d_model features of position 0 come before those of position 1. A bare "
               "reshape cuts that run into pieces of d_head, so batch row 0 holds pieces of the first "
               "positions (0, 0, 1, 1 in the tracer) instead of head 0 of every position. The permute puts "
               "each head's slice of every position together."),
            N_("A permute makes a tensor non-contiguous rather than contiguous; it is there for correctness. "
               "Compare what the tracer prints for batch row 0 with and without it."),
            N_("W_q is applied before any reshape, to all features at once; each head's slice of its output "
               "is what makes the heads differ. Ask which positions end up in one batch row."),
        ),
    ),
    "06": Question(
        prompt=N_("Why does the blockwise softmax give the same output as the full softmax (up to float "
                  "rounding), although it never holds a whole row of scores?"),
        options=(
            N_("It approximates: each block keeps only its largest scores, which dominate."),
            N_("The softmax of a row is the product of the softmaxes of its blocks, one by one."),
            N_("It is exact only because the chosen block size divides the number of keys evenly."),
            N_("The row's maximum and sum of exponentials can be kept running, block by block."),
        ),
        answer=3,
        feedback=(
            N_("Nothing is dropped: every score of the row is visited once, in its block, and what was "
               "accumulated is rescaled, never cut. Ask which two numbers per row the softmax needs "
               "besides the scores."),
            N_("Each block's own softmax sums to 1, so their product is not a normalised row. Ask what the "
               "running values carry from one block to the next, and what happens to them when a block "
               "brings a larger maximum."),
            N_("A last, shorter block is visited like the others: nothing in the running values needs equal "
               "blocks (the chapter checks blocks of 16 over 50 keys). Ask what is kept from one block "
               "to the next."),
            N_("Right. Keep the largest score so far, the running sum of the exponentials and the running "
               "weighted sum of the values. When a block raises the maximum, rescale the two sums to the new "
               "maximum; after the last block, the weighted sum divided by the sum of exponentials is the "
               "softmax-weighted average, up to float rounding: nothing was approximated."),
        ),
    ),
    "07": Question(
        prompt=N_("Without positions, self-attention gives 'dog' the same output in 'the dog chased the cat' "
                  "and 'the cat chased the dog'. Why?"),
        options=(
            N_("Because shuffling the tokens only shuffles the outputs: nothing in it sees order."),
            N_("Because 'the' appears twice, and its two identical copies blur the word order."),
            N_("Because the layer's weights are random; trained weights would learn the word order."),
            N_("Because two heads are too few to track order; more heads would tell them apart."),
        ),
        answer=0,
        feedback=(
            N_("Right. y_i is a softmax-weighted sum over the tokens, with weights computed from the token "
               "vectors alone, so the layer is permutation-equivariant. The second sentence is the first "
               "with 'dog' and 'cat' swapped, so 'dog' gets the same vector. Adding p_i breaks the symmetry."),
            N_("The chapter checks 100 shuffles of 12 random tokens, none repeated, and the outputs follow "
               "the tokens every time. Ask what the formula for y_i depends on."),
            N_("Training changes W_q, W_k and W_v, but no term of the formula refers to a position i or j. "
               "Ask what a trained layer could use to tell position 1 from position 4."),
            N_("The equivariance holds for any number of heads: each head applies the same formula. Ask "
               "where in that formula a position could enter."),
        ),
    ),
    "08": Question(
        prompt=N_("Without positional encoding, the model learns sorting but stays at 0% on reversal. Why?"),
        options=(
            N_("Reversal needs more steps than sorting; with a longer run it would be learned too."),
            N_("It sees only the multiset of digits: that fixes the sorted output, not the reversed one."),
            N_("Sorting needs no attention to the source, so it works without knowing any positions."),
            N_("A dot-product score cannot represent the anti-diagonal pattern that reversal needs."),
        ),
        answer=1,
        feedback=(
            N_("The benchmark trains it for 30 seconds, well over a thousand steps, and it still gets only one "
               "sequence of 500 right. Ask whether any setting of the weights could give different outputs for two "
               "inputs the model cannot tell apart."),
            N_("Right. The encoder is permutation-equivariant and the decoder's query knows only its last "
               "digit, so what it receives depends on the multiset of source digits. '3 1 4' and '4 1 3' "
               "share one multiset and sort alike, but reverse to different outputs."),
            N_("The sorted digits still have to be read from the source through cross-attention. Ask what "
               "information each task needs that the model without positions does not have."),
            N_("With positions, the same dot-product model learns reversal to 95% within 400 steps, and the "
               "additive score learns it too. Ask what was taken away in Experiment 1."),
        ),
    ),
    "09": Question(
        prompt=N_("A head puts most of the attention of 'it' on 'animal'. Why is that not evidence that the "
                  "model resolved 'it' to the animal?"),
        options=(
            N_("It is evidence: the more weight a token gets, the more it shapes the output."),
            N_("Because attention is random on sentences the model did not see in training."),
            N_("It would be evidence once averaged over all 72 heads, where one head's quirks cancel."),
            N_("The head still prefers 'animal' after 'wide', and sends other words there too."),
        ),
        answer=3,
        feedback=(
            N_("A weight multiplies a value vector that may be large or close to zero, and residual "
               "connections carry information around the head. Ask what happens to this head's map when "
               "'tired' becomes 'wide'."),
            N_("The chapter finds heads with clear jobs: layer 0, head 2 gives 1.00 of each word's "
               "attention to the previous token. Ask what a map can tell and what it cannot."),
            N_("An average of maps is still a map of where weight goes. Across all 72 heads the count that "
               "prefer 'animal' barely moves between the two sentences. Ask what a map can never show."),
            N_("Right. Change 'tired' to 'wide' and the meaning points at the street, yet the head still "
               "prefers 'animal'; many of its other rows go to 'animal' as well, and when 'it' is the cup it "
               "prefers 'bottle'. The map shows a head with a habit, not a decision about 'it'. Whether "
               "the model uses a head is a question for experiments that change the input or the head."),
        ),
    ),
}


class WhyQuestion(MimeBundleDisplay, widgets.VBox):
    """A chapter's question: radio buttons for the options, a Check button and a feedback line.

    ``choices`` (the radio buttons), ``check_button`` and ``feedback`` (an HTML
    line) are attributes, so that tests and notebooks can drive them: set
    ``choices.index`` and call ``check_button.click()``. The feedback line is
    empty until Check is pressed, and cleared whenever the choice changes.
    """

    def __init__(self, chapter, question):
        self.chapter, self.question = chapter, question
        self.choices = widgets.RadioButtons(
            options=[(f"({letter}) {_(text)}", index) for index, (letter, text) in
                     enumerate(zip("abcdefgh", question.options))],
            value=None, layout=widgets.Layout(width="auto"))
        self.check_button = widgets.Button(description=_("Check"), tooltip=_("Check the option you picked"))
        self.feedback = widgets.HTML(value="")
        self.check_button.on_click(self._check)
        self.choices.observe(self._clear, names="index")
        super().__init__([widgets.HTML(LABEL_STYLE), self.choices, self.check_button, self.feedback])
        self.add_class("d2l-why-question")

    def _check(self, button):
        picked = self.choices.index
        if picked is None:
            text = _("Pick an option first, then press Check.")
        else:
            mark = "✓" if picked == self.question.answer else _("✗ Not quite.")
            text = f"{mark} {_(self.question.feedback[picked])}"
        self.feedback.value = html.escape(text)

    def _clear(self, change):
        self.feedback.value = ""

    def __repr__(self):
        """The options only, one a line: Jupyter's text form, which strict nbval compares."""
        return "\n".join([_("Why? question {chapter}: pick one option, then press Check.").format(chapter=self.chapter),
                          *(f"  {label}" for label, _ in self.choices.options)])

    def _repr_mimebundle_(self, **kwargs):
        """The widget view, with the whole text form (ipywidgets cuts it at 110 characters)."""
        data = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = repr(self)
        return data


def ask(chapter):
    """The "why" question of ``chapter`` ("04", or 4) as a widget: a ``WhyQuestion``."""
    key = f"{chapter:02d}" if isinstance(chapter, int) and not isinstance(chapter, bool) else chapter
    if not isinstance(key, str) or key not in QUESTIONS:
        raise ValueError(f"chapter must name a chapter with a question, one of {', '.join(QUESTIONS)} "
                         f"(a string such as '04', or the number 4); received {chapter!r}")
    return WhyQuestion(key, QUESTIONS[key])
