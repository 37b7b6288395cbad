"""One submission, run alone: the child process of ``tools/class_report.py``.

The report starts a fork server (``multiprocessing``'s ``forkserver``) that
imports torch, IPython and ``d2lmini`` once; each submission is then a process
forked from it (``child``), so that thirty submissions do not pay for thirty
imports of torch. The child leaves the report's session, moves into a
temporary folder that holds only the submission's notebook, keeps only the
environment variables the report hands it, and sets its time and memory limits
(``limit``) before any of the submission's code runs. It runs every code cell of
the notebook but the check cells, in an IPython shell, then calls each check on
the function the notebook defined (``d2lmini.exercises.outcome``), and writes
one line to ``output.txt`` in its folder: a token, then the result as JSON. A
cell's error does not stop the run, as in a notebook run with *Run All* and
errors allowed.

Opening a file or listing a folder under a forbidden folder (the submissions,
the other submissions' temporary folders) is refused with a PermissionError and
recorded: Python's audit hooks see every ``open``, ``os.listdir`` and
``os.scandir`` made through Python. Starting a process is refused too. What
they do not see (a C library called through ctypes) is not prevented; see
docs/instructors.md.
"""

import contextlib
import importlib
import io
import json
import os
import re
import sys

# Imported once, by the fork server, before any submission runs (and before the guard is set).
import matplotlib

matplotlib.use("Agg")  # figures without a screen

import torch  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from traitlets.config import Config  # noqa: E402

import d2lmini.exercises  # noqa: E402, F401
from d2lmini.exercises import outcome  # noqa: E402
from d2lmini.i18n import current_language  # noqa: E402

for _chapter in ("ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09"):
    importlib.import_module(f"d2lmini.exercises.{_chapter}")

CHECK_CALL = re.compile(r"\bch\d\d\s*\.\s*check_\w+\s*\(")
BLOCKED_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"}


def _guard(forbidden, own, refused):
    """Refuse, and record in ``refused``, any open or listing under ``forbidden`` outside ``own``."""
    forbidden = [os.path.realpath(path) for path in forbidden]
    own = os.path.realpath(own)

    def inside(path, folder):
        return path == folder or path.startswith(folder + os.sep)

    def hook(event, args):
        if event in BLOCKED_EVENTS:
            refused.append(event)
            raise PermissionError(f"the class report does not let a submission start a process ({event})")
        if event not in ("open", "os.listdir", "os.scandir") or not args or not isinstance(args[0], (str, bytes)):
            return
        path = args[0].decode(errors="replace") if isinstance(args[0], bytes) else args[0]
        path = os.path.realpath(path)
        if inside(path, own):
            return
        if any(inside(path, folder) for folder in forbidden):
            refused.append(path)
            raise PermissionError(f"the class report does not let a submission read {path}")

    sys.addaudithook(hook)


def _code_cells(notebook):
    """The sources of the code cells to run: all but the check cells (the report calls the checks itself)."""
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if "check" in cell.get("metadata", {}).get("tags", []) or CHECK_CALL.search(source):
            continue
        yield source


def run(request):
    with open(request["notebook"], encoding="utf-8") as file:
        notebook = json.load(file)
    torch.set_num_threads(1)  # several children run at once

    refused = []
    _guard(request["forbidden"], os.getcwd(), refused)
    config = Config()
    config.HistoryManager.enabled = False  # nothing of the submission written to the instructor's IPython history
    shell = InteractiveShell.instance(config=config)
    cell_errors, memory = 0, False
    quiet = io.StringIO()
    for source in _code_cells(notebook):
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            result = shell.run_cell(source, store_history=False)
        error = result.error_before_exec or result.error_in_exec
        if error is not None:
            cell_errors += 1
            memory = memory or isinstance(error, MemoryError)
        quiet.seek(0)
        quiet.truncate()
    results, namespace = {}, shell.user_ns
    for module_name, check_name, function in request["checks"]:
        if not callable(namespace.get(function)):
            results[check_name] = {"status": "missing", "message": function}  # class_report.MISSING
            continue
        check = getattr(importlib.import_module(f"d2lmini.exercises.{module_name}"), check_name)
        found = outcome(check, namespace[function])
        results[check_name] = {"status": found.status, "message": str(found.message)}
    return {"results": results, "cell_errors": cell_errors, "memory_error": memory, "refused": refused,
            "language": current_language()}


def limit(request):
    """The limits the parent asked for, set before any of the submission's code runs.

    Memory is the address space (``RLIMIT_AS``): an allocation beyond it fails
    with a MemoryError, or ends the process. CPU time past the time limit ends
    it with SIGXCPU (the parent also stops it at the same wall-clock time).
    Files it writes are capped, and it leaves no core file.
    """
    import resource
    memory = request["memory_bytes"]
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    seconds = max(1, int(request["timeout_s"]))
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (request["file_bytes"], request["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def child(request, folder):
    """The forked process of one submission: its own session, folder, environment and limits; then ``run``."""
    os.setsid()  # its own process group, which the report stops as a whole at the time limit
    os.chdir(folder)
    output = os.open("output.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.environ.clear()
    os.environ.update(request["env"])
    limit(request)
    result = run(request)
    sys.__stdout__.write("\n" + request["token"] + json.dumps(result) + "\n")
    sys.__stdout__.flush()
