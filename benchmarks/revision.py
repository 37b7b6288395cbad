"""``d2lmini`` as it was at an earlier git revision, imported beside the current one, for before/after rows."""

import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def import_at_revision(revision, folder, name):
    """Unpack ``d2lmini`` at ``revision`` into ``folder`` as the package ``name``, import it and return it.

    Found in ``folder`` alone (PathFinder with that one entry), so sys.path is
    left as it was; its own relative imports resolve inside the old copy.
    """
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision, "d2lmini"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    (Path(folder) / "d2lmini").rename(Path(folder) / name)
    spec = importlib.machinery.PathFinder.find_spec(name, [str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before it runs: its submodules import their package by this name
    spec.loader.exec_module(module)
    if "d2lmini.plotting" in sys.modules:  # the old copy registered its own tick scales in matplotlib
        sys.modules["d2lmini.plotting"].use_marked_scales()
    return module
