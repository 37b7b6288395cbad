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
"""

import gettext
import os
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
    """``message`` in the learner's language (English where the catalogue has no translation yet)."""
    return _translation.gettext(message)


def N_(message):
    """Mark ``message`` for the catalogue without translating it: for tables built at import time."""
    return message


def n_(singular, plural, count):
    """The singular or plural ``message`` for ``count``, in the learner's language, by its own plural rule."""
    return _translation.ngettext(singular, plural, count)


if os.environ.get(ENVIRONMENT_VARIABLE):
    set_language(os.environ[ENVIRONMENT_VARIABLE])
