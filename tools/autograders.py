"""Autograders outside a hub: Gradescope through Otter-Grader, and GitHub Classroom (docs/instructors.md).

    python -m tools.autograders otter     --out build/otter     notebooks/*.ipynb
    python -m tools.autograders classroom --out build/classroom notebooks/*.ipynb

For each chapter with exercises, both write the student notebook (``tools/editions.py``'s
student edition) and tests that grade it with the chapter's own checks: one test per
exercise, worth the points nbgrader gives its check cell, whose verdict is
``d2lmini.grading``'s and whose message is the check's own feedback. The exercises
come from the notebook's tags (``editions.graded_exercises``), so a new exercise is
graded everywhere with no list to update.

- ``otter`` writes ``OUT/NN_name/``: the student notebook, ``autograder.zip`` (built
  by ``otter generate``: one OK-format test per exercise, ``d2lmini`` as a support
  file, requirements with torch pinned to its CPU build) and the ``tests/`` it holds.
- ``classroom`` writes ``OUT/NN_name/``, a template repository for a GitHub Classroom
  assignment: the student notebook, ``d2lmini/``, ``requirements.txt`` and
  ``.github/workflows/classroom.yml``, in which each exercise is one
  ``education/autograding-command-grader`` test running
  ``python -m d2lmini.grading NOTEBOOK CHECK ANSWER``.
"""

import argparse
import json
import os
import pprint
import re
import shutil
import sys
import tempfile
from importlib.metadata import requires
from pathlib import Path

import nbformat

from tools import editions

REPO = Path(__file__).resolve().parent.parent
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# The graders' Python: one that the project supports and that both Gradescope's conda and GitHub's runners have.
GRADER_PYTHON = "3.11"
# What the classroom command needs besides d2lmini's own requirements: a kernel and a notebook runner.
CLASSROOM_RUNNER = ["ipykernel>=6.29", "nbclient>=0.10", "nbformat>=5.9"]
# Every test is public (none hidden): Gradescope shows each exercise's score and feedback as soon as it is graded.
OTTER_CONFIG = {"lang": "python", "show_all_public": True}
MINUTES_PER_TEST = 10  # GitHub Classroom's limit for one test: one run of a chapter takes well under one


def requirements():
    """The lines of a requirements.txt for d2lmini: its dependencies, torch pinned to the CPU build of the project's.

    The dependencies are d2lmini's installed metadata (pyproject.toml); torch's
    version is requirements.txt's pin, taken from PyTorch's CPU index, so that
    a grader downloads about 200 MB rather than CUDA's gigabytes.
    """
    pin = re.search(r"^torch==(\S+)", (REPO / "requirements.txt").read_text(), re.MULTILINE)
    if pin is None:
        raise ValueError("requirements.txt must pin torch (torch==X.Y.Z): the graders install that version")
    lines = [f"--extra-index-url {TORCH_CPU_INDEX}", f"torch=={pin.group(1).split('+')[0]}+cpu"]
    for requirement in requires("d2lmini") or []:
        if "extra ==" not in requirement and not re.match(r"torch\b", requirement):
            lines.append(requirement.replace(" ", ""))
    return lines


def chapters(paths):
    """``(path, student notebook, graded exercises)`` of each notebook that has exercises."""
    found = []
    for path in map(Path, paths):
        nb = nbformat.read(path, as_version=4)
        graded = editions.graded_exercises(nb, path.name)
        if graded:
            found.append((path, editions.student_notebook(nb, path.name), graded))
    return found


def _identifier(label):
    """``exercise_2_1`` from ``Exercise 2.1``: a name for a file or a workflow step."""
    return re.sub(r"\W+", "_", label.lower()).strip("_")


def otter_test(exercise):
    """The text of one OK-format Otter test file: the exercise's check on the learner's answer.

    The case passes iff ``d2lmini.grading.report`` prints nothing, which it does
    iff the check passes; otherwise the doctest's failure shows what it printed,
    the check's own feedback. The case is not hidden, so that Gradescope shows it.
    """
    spec = {
        "name": exercise.label,
        "points": exercise.points,
        "suites": [{
            "type": "doctest", "scored": True, "setup": "", "teardown": "",
            "cases": [{
                "code": (">>> from d2lmini.grading import report\n"
                         f">>> report({exercise.check!r}, {exercise.answer!r}, globals())\n"),
                "hidden": False, "locked": False,
                "success_message": f"{exercise.label}: the check passed.",
            }],
        }],
    }
    return (f"# {exercise.label}: {exercise.check}({exercise.answer}). Written by tools/autograders.py.\n"
            "OK_FORMAT = True  # what Otter looks for: an OK-format test, the dict below\n"
            f"test = {pprint.pformat(spec, sort_dicts=False)}\n")


def _copy_package(out):
    shutil.rmtree(out / "d2lmini", ignore_errors=True)
    shutil.copytree(REPO / "d2lmini", out / "d2lmini", ignore=shutil.ignore_patterns("__pycache__", "*.po"))


def _fresh_folder(out, path, student, inner):
    """``out/NN_name/``, emptied, with the folder ``inner`` made in it and the student notebook written there."""
    folder = out / path.stem
    shutil.rmtree(folder, ignore_errors=True)
    (folder / inner).mkdir(parents=True)
    nbformat.write(student, folder / path.name)
    return folder


def build_otter(paths, out):
    """Write each chapter's student notebook, Otter tests and Gradescope autograder zip under ``out/NN_name/``."""
    from otter.generate import main as otter_generate

    out = Path(out)
    written = []
    for path, student, graded in chapters(paths):
        folder = _fresh_folder(out, path, student, "tests")
        for exercise in graded:
            (folder / "tests" / f"{_identifier(exercise.label)}.py").write_text(otter_test(exercise),
                                                                                encoding="utf-8")
        with tempfile.TemporaryDirectory() as staging:
            # otter generate takes support files from its working folder only: stage them there.
            staging = Path(staging)
            _copy_package(staging)
            (staging / "requirements.txt").write_text("\n".join(requirements()) + "\n")
            (staging / "otter_config.json").write_text(json.dumps(OTTER_CONFIG))
            cwd = os.getcwd()
            os.chdir(staging)
            try:
                otter_generate(tests_dir=str((folder / "tests").resolve()),
                               output_path=str((folder / "autograder.zip").resolve()),
                               config="otter_config.json", requirements="requirements.txt",
                               no_environment=True, files=["d2lmini"], python_version=GRADER_PYTHON)
            finally:
                os.chdir(cwd)
        written.append(folder)
    return written


def classroom_workflow(notebook, graded):
    """GitHub Classroom's autograding workflow, as a dict: one command-grader test per exercise, then the reporter."""
    steps = [
        {"name": "Check out the submission", "uses": "actions/checkout@v4"},
        {"name": "Set up Python", "uses": "actions/setup-python@v5", "with": {"python-version": GRADER_PYTHON}},
        {"name": "Install the notebook's packages", "run": "python -m pip install -r requirements.txt"},
    ]
    runners = []
    for exercise in graded:
        step_id = _identifier(exercise.label).replace("_", "-")
        runners.append(step_id)
        steps.append({
            "name": exercise.label, "id": step_id, "uses": "education/autograding-command-grader@v1",
            "with": {"test-name": exercise.label,
                     "command": f"python -m d2lmini.grading {notebook} {exercise.check} {exercise.answer}",
                     "timeout": MINUTES_PER_TEST, "max-score": exercise.points},
        })
    steps.append({
        "name": "Autograding reporter", "uses": "education/autograding-grading-reporter@v1",
        "env": {f"{step_id.upper()}_RESULTS": f"${{{{steps.{step_id}.outputs.result}}}}" for step_id in runners},
        "with": {"runners": ",".join(runners)},
    })
    return {
        "name": "Autograding Tests",
        "on": ["push", "workflow_dispatch", "repository_dispatch"],
        "permissions": {"checks": "write", "actions": "read", "contents": "read"},
        "jobs": {"run-autograding-tests": {
            "runs-on": "ubuntu-latest",
            "if": "github.actor != 'github-classroom[bot]'",
            "steps": steps,
        }},
    }


CLASSROOM_README = """\
# {title}

Complete each exercise of `{notebook}`: replace the lines `# YOUR CODE HERE` and
`raise NotImplementedError(...)` with your code, run the cell, then run the check cell below it,
which names your mistake if there is one. Commit and push the notebook, saved after running it:
each push is graded, one test per exercise, and the *Actions* tab shows each test's feedback.

Run it on your machine with `pip install -r requirements.txt`, then `jupyter lab` in this folder
(`d2lmini/` must stay beside the notebook). To grade one exercise as the autograder does:

    python -m d2lmini.grading {notebook} {check} {answer}
"""


def build_classroom(paths, out):
    """Write each chapter's GitHub Classroom template repository under ``out/NN_name/``."""
    import yaml

    out = Path(out)
    written = []
    for path, student, graded in chapters(paths):
        folder = _fresh_folder(out, path, student, Path(".github", "workflows"))
        _copy_package(folder)
        (folder / "requirements.txt").write_text("\n".join(requirements() + CLASSROOM_RUNNER) + "\n")
        workflow = yaml.safe_dump(classroom_workflow(path.name, graded), sort_keys=False, allow_unicode=True)
        (folder / ".github" / "workflows" / "classroom.yml").write_text(
            "# GitHub Classroom autograding, written by tools/autograders.py: one test per exercise.\n" + workflow)
        (folder / "README.md").write_text(CLASSROOM_README.format(
            title=path.stem, notebook=path.name, check=graded[0].check, answer=graded[0].answer))
        (folder / ".gitignore").write_text("__pycache__/\n.ipynb_checkpoints/\n")
        written.append(folder)
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for command in ("otter", "classroom"):
        sub = commands.add_parser(command)
        sub.add_argument("--out", required=True, type=Path)
        sub.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    build = build_otter if args.command == "otter" else build_classroom
    try:
        for folder in build(args.notebooks, args.out):
            print(f"wrote {folder}")
    except ValueError as error:
        sys.exit(f"error: {error}")


if __name__ == "__main__":
    main()
