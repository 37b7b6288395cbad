"""The page's words: what the page's shell and page scripts say (``SHELL_WORDS``, ``SCRIPT_WORDS``),
the explorers' names on the page (``TITLES``, ``title``) and their controls as the page shows them
(``said_spec``), all sent in the learner's language with its plural rule (``said``, ``plural_rule``).
The scripts keep no words of their own: ``D2L.say`` fills these messages' fields as ``str.format``
does."""

import gettext
import re

from ..i18n import DOMAIN, ENGLISH, LOCALE, N_, _, current_language, n_
from .declaration import say

# What the page's shell (explorers.js) says, by name. Each table of the page's words has the form of
# plotting.SUMMARY_WORDS: a message (N_), or for one said of a count, a function of the count (n_).
SHELL_WORDS = {
    "colours": N_("colours"),
    "map": N_("map"),
    # Translators: the colour-map menu's name for a screen reader; it holds the word of "map".
    "colour map": N_("colour map"),
    "fitted": N_("; colours 0 to {top:g}"),
    # Translators: the button that replays a recorded training run on the web page, step by step.
    "play": N_("Play"),
    # Translators: the same button while the run replays.
    "pause": N_("Pause"),
    "computed": N_("This explorer runs in your browser, from data the chapter's own code prepared ahead of time; "
                   "its arithmetic is tested against the chapter's."),
    "stored": N_("These pictures were computed ahead of time, by the chapter's own code, for every setting "
                 "offered here."),
    "run": N_("To change the code, run the chapter: Colab, Binder or a hub (the links at the top of the page)."),
    "not offered": N_("This combination of settings is not offered on the page: run the chapter."),
}

# What each page script (page_js/<name>.js) says, by name: the messages of the compute and describe
# it ports (their declarations' modules say them too), so that the page says what the kernel says.
SCRIPT_WORDS = {
    "kernel_pooling.js": {
        "caption": N_("{kernel} kernel, σ = {sigma:.3g}, {n} training points"),
    },
    "masked_softmax.js": {
        "example": N_("example {b}"),
        "every query": N_("every query sees at least one key"),
        "fully masked": lambda count: n_("fully masked: query {queries}, all-zero weights by d2lmini's policy",
                                         "fully masked: queries {queries}, all-zero weights by d2lmini's policy",
                                         count),
        "cells masked": N_("{masked} of {cells} cells masked; {rows}"),
    },
    "attention.js": {
        "additive": N_("additive"),
        "scaled dot product": N_("scaled dot product"),
        "panel": N_("{method}, example {b}"),
        "additive caption": N_("keys = 1 + {noise:.2f} × noise (seed {seed}), valid_lens = {valid_lens}"),
        "dot product caption": N_("d = {d}, {scaled}, temperature {temperature:.2g}, valid_lens = {valid_lens}"
                                  "{causal}"),
        "scaled": N_("scaled by 1/√d"),
        "unscaled": N_("unscaled"),
        "causal": N_(", causal"),
    },
    "positional.js": {
        "caption": N_("d = {d}, base = {base}: wavelengths from 2π ≈ 6.28 to {longest} positions"),
    },
    "head_view.js": {
        "every token": N_("every token"),
        "token": N_("token {query} ({token!r})"),
        "caption": N_("layer {layer}, head {head}: where {who} looks, in {sentence!r}"),
        "summary": N_("Layer {layer}, head {head}: {summary}"),
        "title": N_("layer {layer}, head {head}"),
        "all tokens": N_("all tokens"),
    },
    "shape_tracer.js": {
        "reshape": N_("reshape alone: heads mix positions"),
        "caption": N_("h = {h}, d_head = {d_head}, T = {T}: (1, {T}, {d}) → ({h}, {T}, {d_head}) by {how}"),
        "heads": lambda count: n_("head {heads}", "heads {heads}", count),
        "positions": lambda count: n_("position {positions}", "positions {positions}", count),
        "block": N_("block {b} holds {heads} at {positions}"),
        "width": lambda count: n_("{h} heads of width {d_head}: ", "{h} heads of width {d_head}: ", count),
        "first blocks": N_(" (first 2 of {h} blocks)."),
    },
}

# Each explorer's name on the page (its box's aria-label), so that a screen reader says which
# explorer a control belongs to. An explorer not here is named after its class, in English (``title``).
TITLES = {
    "QueryPoolingExplorer": N_("Query pooling explorer"),
    "KernelPoolingExplorer": N_("Kernel pooling explorer"),
    "MaskedSoftmaxExplorer": N_("Masked softmax explorer"),
    "MaskEditorExplorer": N_("Mask editor explorer"),
    "AdditiveExplorer": N_("Additive attention explorer"),
    "DotProductExplorer": N_("Dot-product attention explorer"),
    "ShapeTracerExplorer": N_("Shape tracer explorer"),
    "MultiHeadExplorer": N_("Multi-head attention explorer"),
    "OnlineSoftmaxExplorer": N_("Online softmax explorer"),
    "PositionalEncodingExplorer": N_("Positional encoding explorer"),
    "AlignmentExplorer": N_("Alignment explorer"),
    "HeadViewExplorer": N_("Head view explorer"),
}


def title(declaration):
    """The explorer's name on the page, in the learner's language (``TITLES``); one not in ``TITLES``
    is named after its class ("MaskEditorExplorer": "Mask editor explorer")."""
    if declaration.name in TITLES:
        return _(TITLES[declaration.name])
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", declaration.name).capitalize()


def plural_rule():
    """(the learner's language's plural rule, the number of its plural forms): the rule is a C
    expression of ``n`` giving the index of a message's form for the count ``n``, as the language's
    catalogue says (its Plural-Forms header), and English's where there is no catalogue."""
    if current_language() == ENGLISH:
        return "(n != 1)", 2
    header = gettext.translation(DOMAIN, LOCALE, [current_language()]).info()["plural-forms"]
    count = int(re.search(r"nplurals\s*=\s*(\d+)", header).group(1))
    return re.search(r"plural\s*=\s*([^;]+)", header).group(1).strip(), count


def said(words):
    """A table of the page's words (``SHELL_WORDS``, ...) in the learner's language, JSON-ready: a
    message as its text, one said of a count as the list of its forms, by the plural rule's index."""
    expression, count = plural_rule()
    rule = gettext.c2py(expression)  # also refuses anything but a plural rule, which the page evaluates
    counts = [next(n for n in range(1000) if rule(n) == form) for form in range(count)]  # a count of each form
    return {name: [str(word(n)) for n in counts] if callable(word) else str(_(word)) for name, word in words.items()}



def said_spec(control):
    """The control's spec (``Control.spec``) as the page shows it: its label, tooltip and options'
    labels in the learner's language (``say``, as the kernel's controls say them), its values kept."""
    spec = control.spec()
    spec["label"] = say(spec["label"])
    for text in ("tooltip", "accessible_name"):
        if spec.get(text):
            spec[text] = say(spec[text])
    if spec.get("inactive_when"):
        setting, value, reason = spec["inactive_when"]
        spec["inactive_when"] = [setting, value, say(reason)]
    if "options" in spec:
        spec["options"] = [[say(label), value] for label, value in spec["options"]]
    return spec

