"""d2lmini's message catalogues: extract the English, merge it into each language, compile, check.

    python -m tools.catalogues extract    # build/d2lmini.pot: every message marked _("..."), N_("...") or n_(...)
    python -m tools.catalogues update     # merge it into each language's .po (a changed message turns fuzzy)
    python -m tools.catalogues compile    # each .po to its .mo, which d2lmini reads
    python -m tools.catalogues check      # exit 1, naming them, for messages untranslated, fuzzy or stale,
                                          # or used in files other than those the .po names

A catalogue entry's key is the English message itself: when the English
changes, the old translation no longer matches it, and ``check`` names the
message until its translation is updated (docs/translating.md). The .po
(and the template) names the files that use a message, not their lines: an
edit that moves a message within its file, and not past another one, leaves
the .po as it was.
"""

import argparse
import io
import re
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir, extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "d2lmini"
LOCALE = PACKAGE / "locale"
TEMPLATE = REPO / "build" / "d2lmini.pot"  # for a translator's tool; the catalogues are read from the code
KEYWORDS = {"_": None, "N_": None, "n_": (1, 2), "pgettext": ((1, "c"), 2)}  # d2lmini.i18n's markers
# Outside the package, the instructors' class report speaks through d2lmini's catalogue too.
TOOLS = [REPO / "tools" / "class_report.py"]
FIELD = re.compile(r"\{(\w*)[^{}]*\}")  # a str.format field: {count}, {value:.2f}


def extracted():
    """A catalogue of every message d2lmini marks, with the files and lines that use it."""
    catalog = Catalog(project="d2lmini", domain="d2lmini")
    for filename, lineno, message, comments, context in extract_from_dir(
            PACKAGE, method_map=[("**.py", "python")], keywords=KEYWORDS, comment_tags=("Translators:",)):
        catalog.add(message, None, [(f"d2lmini/{filename}", lineno)], auto_comments=comments, context=context)
    for path in TOOLS:
        for lineno, message, comments, context in extract_from_file(
                "python", path, keywords=KEYWORDS, comment_tags=("Translators:",)):
            catalog.add(message, None, [(path.relative_to(REPO).as_posix(), lineno)], auto_comments=comments,
                        context=context)
    return catalog


def po_files():
    return sorted(LOCALE.glob("*/LC_MESSAGES/d2lmini.po"))


def read(path):
    with open(path, "rb") as file:
        return read_po(file)


def write(catalog, path, **options):
    """Write ``catalog`` as a .po (or the template) naming each message's files without their lines."""
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=100, include_lineno=False, **options)
    Path(path).write_bytes(buffer.getvalue())


def compiled(catalog):
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    return buffer.getvalue()


def files(message):
    """The source files that use ``message``, without their lines (the .po names the files only)."""
    return sorted({file for file, _ in message.locations})


def fields(text):
    return sorted(FIELD.findall(text))


def problems(template, catalog, mo_bytes):
    """What stops ``catalog`` from saying every message of ``template``: one line each."""
    found, moved = [], []
    for message in template:
        if not message.id:
            continue
        translated = catalog.get(message.id, context=message.context)
        english = message.id if isinstance(message.id, str) else message.id[0]
        where = ", ".join(f"{file}:{line}" for file, line in message.locations[:2])
        if translated is None or not any(translated.string if isinstance(translated.string, tuple)
                                         else [translated.string]):
            found.append(f"untranslated ({where}): {english!r}")
        elif translated.fuzzy:
            found.append(f"fuzzy, the English changed ({where}): {english!r}")
        else:
            strings = translated.string if isinstance(translated.string, tuple) else (translated.string,)
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            english_fields = set(fields(" ".join(ids)))
            # A plural form may leave its count out ("um passo"); every other message keeps each field.
            if any(set(fields(text)) != english_fields and not (len(ids) > 1 and set(fields(text)) < english_fields)
                   for text in strings):
                found.append(f"fields differ from the English's {sorted(english_fields)} ({where}): {english!r}")
        if translated is not None and files(translated) != files(message):
            moved.append(english)
    if moved:
        found.append(f"the .po names other source files than the code for {len(moved)} message(s), the first "
                     f"{moved[0]!r}: run python -m tools.catalogues update")
    # Iterating a Catalog gives its current messages only: Babel keeps the obsolete ones apart, in catalog.obsolete.
    stale = [message.id for message in catalog
             if message.id and template.get(message.id, context=message.context) is None]
    found += [f"no longer in the code: {message!r}" for message in stale]
    if mo_bytes != compiled(catalog):
        found.append("the .mo is not the .po compiled: run python -m tools.catalogues compile")
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["extract", "update", "compile", "check"])
    args = parser.parse_args(argv)
    template = extracted()
    if args.command == "extract":
        TEMPLATE.parent.mkdir(exist_ok=True)
        write(template, TEMPLATE)
    elif args.command == "update":
        for path in po_files():
            catalog = read(path)
            catalog.update(template, update_creation_date=False)  # the header changes only by hand: no churn
            write(catalog, path, ignore_obsolete=True)
    elif args.command == "compile":
        for path in po_files():
            path.with_suffix(".mo").write_bytes(compiled(read(path)))
    else:
        failed = False
        for path in po_files():
            mo = path.with_suffix(".mo")
            found = problems(template, read(path), mo.read_bytes() if mo.exists() else b"")
            for line in found:
                print(f"{path.relative_to(REPO)}: {line}", file=sys.stderr)
            failed |= bool(found)
        return 1 if failed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
