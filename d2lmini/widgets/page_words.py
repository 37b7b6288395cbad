"""The page's words: what the page's shell says (``SHELL_WORDS``) and what a page script says
(``script_words``, gathered from the declarations it serves), the explorers' names on the page
(``title``, from each declaration's own) and their controls as the page shows them (``said_spec``),
all sent in the learner's language with its plural rule (``said``, ``plural_rule``). The scripts keep
no words of their own: ``D2L.say`` fills these messages' fields as ``str.format`` does."""

import gettext
import re

from ..i18n import DOMAIN, ENGLISH, LOCALE, N_, _, current_language
from . import DECLARATIONS
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

def title(declaration):
    """The explorer's name on the page (its box's aria-label), in the learner's language: its declaration's
    ``title``, or, where it has none, its class's name in English ("MaskEditorExplorer": "Mask editor
    explorer")."""
    if declaration.title:
        return _(declaration.title)
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", declaration.name).capitalize()


def script_words(declaration):
    """What ``declaration``'s page script says, by name: the ``script_words`` of every declaration of
    ``DECLARATIONS`` that the script serves, in that order, and its own. A script serving several
    (attention.js: ``Additive`` and ``DotProduct``) is one table of words, sent with each of its
    explorers; each declaration says only the words of its own port, so that no message has a copy."""
    words = {}
    for served in (*DECLARATIONS, declaration):
        if served.page_script != declaration.page_script:
            continue
        for name, word in served.script_words.items():
            if words.get(name, word) != word:
                raise ValueError(f"{declaration.page_script} says two words named {name!r}: one of them needs "
                                 "another name")
            words[name] = word
    return words


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

