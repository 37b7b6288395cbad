"""The parity record: what every explorer shows, as digests, so that a change of structure (a file split,
a rename) can show that it changed none of it.

    python -m tools.parity record   # write benchmarks/parity.json from this checkout
    python -m tools.parity check    # compare this checkout with benchmarks/parity.json; exit 1 on a change

For each declaration of ``d2lmini.widgets.DECLARATIONS`` and each language d2lmini speaks, it records:

- ``page``: the SHA-256 of the explorer's page data (the ``<name>.js`` a page loads: its stored states,
  pictures, words and page data) and of its page script, if it has one;
- ``kernel``: the SHA-256 of the kernel's picture (PNG) and its caption and text summary, at the
  chapter's default settings and at the first and last value of each control, the others left at
  their defaults: what the shell draws in JupyterLab.

It also records ``colours.js`` (the colour maps every page loads) and the shell's own scripts and style
(``explorers.js``, ``explorers.css``, ...), which a split of the shell changes on purpose; ``check``
prints those apart, as shell changes, and fails only on the rest. A run takes about four minutes on
the 2-core machine with nothing else running, 11 to 12 at a load average of 6 to 8.
"""

import argparse
import dataclasses
import hashlib
import json
import sys
import tempfile
from pathlib import Path

from traitlets import TraitError

from d2lmini import i18n
from d2lmini.widgets import DECLARATIONS, page
from d2lmini.widgets.explorer import Explorer

RECORD = Path(__file__).resolve().parent.parent / "benchmarks" / "parity.json"


def digest(data):
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()


def probes(declaration):
    """The settings the kernel's picture is recorded at: the defaults, then each control at its first
    and at its last offered value (the others at their defaults), each once."""
    default = declaration.Settings()
    chosen = [default]
    for control in declaration.controls:
        values = list(control.values())
        for value in (values[0], values[-1]):
            settings = dataclasses.replace(default, **{control.name: value})
            if settings not in chosen:
                chosen.append(settings)
    return chosen


def kernel_record(declaration):
    """Settings (as text) -> digest of the picture, the caption and the summary the kernel shows."""
    record = {}
    for settings in probes(declaration):
        try:
            explorer = Explorer(declaration, settings)
        except (ValueError, TraitError) as error:  # a combination the shell refuses: its message is the record
            record[repr(settings)] = digest(str(error))
            continue
        try:
            record[repr(settings)] = digest(explorer.static_png() + explorer.caption.value.encode()
                                            + explorer.summary.value.encode())
        finally:
            explorer.close()
    return record


def collect():
    record = {"shell": {}, "explorers": {}}
    for language in i18n.languages():
        before = i18n.current_language()
        i18n.set_language(language)
        try:
            # As the page builds them: chapter 08's alignment with its recorded runs, say.
            declarations = [declaration.for_page() for declaration in DECLARATIONS]
            theirs = {d.name for d in declarations} | {d.page_script for d in declarations if d.page_script}
            with tempfile.TemporaryDirectory() as folder:
                page.write_assets(folder, declarations)
                for path in sorted(Path(folder).iterdir()):
                    if path.stem in theirs or path.name in theirs:
                        record["explorers"][f"{language} page {path.name}"] = digest(path.read_bytes())
                    else:
                        record["shell"][f"{language} {path.name}"] = digest(path.read_bytes())
            for declaration in declarations:
                for settings, value in kernel_record(declaration).items():
                    record["explorers"][f"{language} kernel {declaration.name} {settings}"] = value
        finally:
            i18n.set_language(before)
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["record", "check"])
    args = parser.parse_args(argv)
    now = collect()
    if args.action == "record":
        RECORD.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"{RECORD.name}: {len(now['explorers'])} explorer digests, {len(now['shell'])} shell files")
        return 0
    kept = json.loads(RECORD.read_text())
    for name in sorted(set(kept["shell"]) | set(now["shell"])):
        if kept["shell"].get(name) != now["shell"].get(name):
            print(f"shell changed (expected when the shell's scripts change): {name}")
    changed = sorted(name for name in set(kept["explorers"]) | set(now["explorers"])
                     if kept["explorers"].get(name) != now["explorers"].get(name))
    for name in changed:
        print(f"CHANGED: {name}")
    print(f"{len(now['explorers']) - len(changed)} of {len(now['explorers'])} explorer digests as recorded")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
