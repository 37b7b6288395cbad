"""The language d2lmini speaks to a learner, and its message catalogues.

English is the default and needs no catalogue. Another language is one gettext
catalogue, ``d2lmini/locale/<language>/LC_MESSAGES/d2lmini.po``, compiled to
``d2lmini.mo`` beside it (``python -m tools.catalogues compile``) and read with
the standard library's ``gettext``; a translator edits the ``.po`` file with any
gettext tool (Poedit, Lokalize, a text editor). docs/translating.md says how.

A message for the learner is marked ``_("...")``. A message with values has
named fields, filled after it is translated, so that a translation may put them
in another order: ``_("{count} padded queries").format(count=3)``. A message
kept in a module-level table is marked ``N_("...")`` where it is written (which
only marks it) and translated with ``_(...)`` where it is shown.

Numbers follow the learner's language too: a translated message's ``format``
writes each number field with the language's decimal and thousands marks
(``0,41`` and ``13.642`` in Portuguese), ``number(0.41, ".2f")`` does the
same for a number shown on its own, and ``numbers(values, ".2f")`` for a list
of them, which a language with a decimal comma separates with semicolons
(``0,41; 0,17``). The marks are two entries of the catalogue (contexts
"decimal mark" and "thousands mark"), so a new language brings its own.
"""

import gettext
import os
import re
import string
from numbers import Number
from pathlib import Path

LOCALE = Path(__file__).with_name("locale")
DOMAIN = "d2lmini"
ENGLISH = "en"
# Set before the first import, this picks the language of a whole process (a test run, `make notebooks`).
ENVIRONMENT_VARIABLE = "D2LMINI_LANGUAGE"

_translation = gettext.NullTranslations()
_language = ENGLISH


def languages():
    """The languages d2lmini speaks: English, and each language whose catalogue is compiled."""
    return [ENGLISH] + sorted(path.parents[1].name for path in LOCALE.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"))


def set_language(language):
    """Speak ``language`` ("en", "pt_BR") to the learner from now on: feedback, explorers, figures' words."""
    global _translation, _language
    available = languages()
    if not isinstance(language, str) or language not in available:
        raise ValueError(f"language must be one of {available}, got {language!r}")
    if language == ENGLISH:
        _translation = gettext.NullTranslations()
    else:
        _translation = gettext.translation(DOMAIN, LOCALE, [language])
    _language = language


def current_language():
    """The language set now: "en" unless set_language (or D2LMINI_LANGUAGE) chose another."""
    return _language


def _(message):
    """``message`` in the learner's language (English where the catalogue has no translation yet); its
    ``format`` writes numbers with the language's marks (``Message``)."""
    return Message(_translation.gettext(message))


def marks():
    """The learner's language's decimal and thousands marks: (".", ",") in English, (",", ".") in Portuguese."""
    # Translators: the decimal mark and the thousands mark of your language's numbers (0.41, 13,642).
    return _translation.pgettext("decimal mark", "."), _translation.pgettext("thousands mark", ",")


def _with_marks(text):
    decimal, thousands = marks()
    if (decimal, thousands) == (".", ","):
        return text
    return text.translate(str.maketrans({".": decimal, ",": thousands}))


def _is_number(value):
    """A number, a NumPy or PyTorch scalar, or a 0-d array or tensor: what format() writes as digits."""
    if isinstance(value, bool):
        return False
    return isinstance(value, Number) or (getattr(value, "ndim", None) == 0 and hasattr(value, "item"))


def _is_array(value):
    """A NumPy array of one or more dimensions, which ``print`` writes as "[0.413 0.152]", with no comma."""
    return type(value).__module__ == "numpy" and getattr(value, "ndim", 0) > 0


def _has_float(values):
    return any(_has_float(item) if isinstance(item, list) else isinstance(item, float) for item in values)


def number(value, spec=""):
    """``format(value, spec)`` with the learner's language's marks: ``number(13642, ",")`` is "13.642" in
    Portuguese, "13,642" in English. A list of numbers is written as Python writes it ("[0.0, 0.25]"),
    with the same marks and ``numbers``' separator ("[0,0; 0,25]"), and so is a dict from numbers to
    numbers ("{0: 0,13; 3: 0,0}", its values with ``spec``); one of whole numbers only is kept. A NumPy
    array is written as ``print`` writes it ("[0.413 0.152]"), each item with ``spec`` where one is given,
    with the same marks ("[0,413 0,152]"). Anything else (a tensor, whose repr is code, a string) is
    formatted as it is."""
    if isinstance(value, list) and _has_float(value) and all(isinstance(item, list) or _is_number(item)
                                                             for item in value):
        # A list of numbers (a tensor's ``tolist()``) as Python writes it, "[0.0, 0.25]", with the
        # language's marks and separator: "[0,0; 0,25]". A list of whole numbers has no mark to change and
        # is often code to type ("num_heads in [1, 2, 5, 10]"): it is kept as it is.
        return "[" + numbers([number(item, spec) if isinstance(item, list) else item for item in value], spec) + "]"
    if (isinstance(value, dict) and _has_float(list(value.values()))
            and all(_is_number(key) for key in value) and all(_is_number(item) for item in value.values())):
        # A dict from numbers to numbers (a weight per digit) as Python writes it, "{0: 0.13, 3: 0.0}",
        # by the list's rule: "{0: 0,13; 3: 0,0}".
        return "{" + numbers([f"{number(key)}: {number(item, spec)}" for key, item in value.items()]) + "}"
    if _is_array(value):
        import numpy  # only where an array is passed, which brings NumPy already

        if spec:
            text = numpy.array2string(value, formatter={"all": lambda item: format(item, spec)})
        else:
            text = str(value)
        if marks()[0] == ".":
            return text
        # NumPy writes a whole float as "1." ; "1," reads as a broken number, so the mark becomes a space,
        # which keeps the columns lined up.
        return _with_marks(re.sub(r"(\d)\.(?![\d])", r"\1 ", text))
    text = format(value, spec)
    return _with_marks(text) if _is_number(value) else text


def numbers(values, spec=""):
    """``values`` written one by one as ``number(value, spec)`` writes them, separated by ", ", or by "; "
    where the decimal mark is a comma, so that "0,41; 0,17" stays two numbers. An item that is already
    text (a name and its number, say) is kept as it is."""
    separator = "; " if marks()[0] == "," else ", "
    return separator.join(value if isinstance(value, str) else number(value, spec) for value in values)


class _Formatter(string.Formatter):
    def format_field(self, value, format_spec):
        return number(value, format_spec)


class Message(str):
    """A translated message: a ``str`` whose ``format`` writes its number fields in the learner's language."""

    def format(self, *args, **kwargs):
        return _Formatter().vformat(self, args, kwargs)


def N_(message):
    """Mark ``message`` for the catalogue without translating it: for tables built at import time."""
    return message


def n_(singular, plural, count):
    """The singular or plural ``message`` for ``count``, in the learner's language, by its own plural rule."""
    return Message(_translation.ngettext(singular, plural, count))


if os.environ.get(ENVIRONMENT_VARIABLE):
    set_language(os.environ[ENVIRONMENT_VARIABLE])
