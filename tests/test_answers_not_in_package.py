"""No public function of d2lmini passes an exercise's check: the package hands out no answer.

Every ``check_*`` of every ``d2lmini.exercises.chNN`` module is called with
every public callable of d2lmini and of each of its public submodules, found
by walking the package, so a module or function added later is searched too.
Each call must raise: anything will do, a wrong answer or a TypeError from
arguments the callable does not take. The widgets are searched as well.

The control: each exercise's reference answer, taken from its notebook and
put into the package under a public name, is the one callable the same search
flags, whichever module it is put in: once searched end to end, and in each
module found by the walk and passed by its check.
"""

import ast
import contextlib
import importlib
import inspect
import io
import pkgutil
import re
import warnings
from pathlib import Path

import jupytext
import matplotlib.pyplot as plt
import pytest
import torch
from support import shared

import d2lmini
import d2lmini.exercises
from tools.editions import tags

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.py"))


def public_modules():
    """d2lmini and each of its submodules, at any depth, with no dotted part starting with '_'."""
    modules = [d2lmini]
    for info in pkgutil.walk_packages(d2lmini.__path__, prefix="d2lmini."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            modules.append(importlib.import_module(info.name))
    return modules


def chapter_checks():
    """{"ch01.check_triangular": the check} for every check_* defined in a chNN module."""
    checks = {}
    for info in pkgutil.iter_modules(d2lmini.exercises.__path__):
        if re.fullmatch(r"ch\d\d", info.name):
            module = importlib.import_module(f"d2lmini.exercises.{info.name}")
            checks.update({f"{info.name}.{name}": obj for name, obj in vars(module).items()
                           if name.startswith("check_") and inspect.isfunction(obj)
                           and obj.__module__ == module.__name__})
    return checks


CHECKS = chapter_checks()


def _from_another_library(obj):
    """True for a name a module imported from torch, matplotlib, the standard library, ..."""
    module = getattr(obj, "__module__", None)
    return isinstance(module, str) and module.split(".")[0] != "d2lmini"


def public_callables():
    """{"d2lmini.masking.sequence_mask": the callable, ...}: each one once, under its first public name.

    A module's public names are its ``__all__`` (re-exported torch functions
    included) and every other name without a leading underscore, except
    modules and what it imported from other libraries. The checks themselves
    are the judges here, not candidates.
    """
    judges = {id(check) for check in CHECKS.values()}
    found, seen = {}, set(judges)
    for module in public_modules():
        exported = set(getattr(module, "__all__", ()))
        for name in sorted(exported | {name for name in vars(module) if not name.startswith("_")}):
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
                continue
            if name not in exported and _from_another_library(obj):
                continue
            seen.add(id(obj))
            found[f"{module.__name__}.{name}"] = obj
    return found


def passes(check, candidate):
    """Whether ``check(candidate)`` returns without raising; output captured, figures closed."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
        stack.enter_context(warnings.catch_warnings())
        stack.enter_context(torch.random.fork_rng(devices=[]))  # a candidate may draw random numbers
        warnings.simplefilter("ignore")
        try:
            check(candidate)
        except Exception:
            return False
        finally:
            plt.close("all")
    return True


def passing(check, candidates):
    """The names of the candidates that ``check`` accepts."""
    return [name for name, candidate in candidates.items() if passes(check, candidate)]


def _tagged(notebook, tag):
    return [cell.source for cell in notebook.cells if tag in tags(cell)]


def reference_answers():
    """{"ch01.check_triangular": the notebook's reference answer} from every chapter with checks.

    Runs a chapter's imports cell and its exercise cells, as the learner's
    kernel would, then reads which function each check cell hands to which check.
    """
    answers = {}
    threads = torch.get_num_threads()
    try:
        for path in NOTEBOOKS:
            notebook = jupytext.read(path)
            namespace = {}
            exec(next(cell.source for cell in notebook.cells if cell.cell_type == "code"
                      and "colab-setup" not in tags(cell)), namespace)
            for source in _tagged(notebook, "exercise"):
                exec(source, namespace)
            for source in _tagged(notebook, "check"):
                for node in ast.walk(ast.parse(source)):
                    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                            and node.func.attr.startswith("check_")):
                        answers[f"{node.func.value.id}.{node.func.attr}"] = namespace[node.args[0].id]
    finally:
        torch.set_num_threads(threads)  # chapter 01's imports cell sets one thread
    return answers


candidates = shared(public_callables)
answers = shared(reference_answers)


def test_the_checks_of_every_chapter_are_found():
    chapters = sorted({name.split(".")[0] for name in CHECKS})
    assert chapters == ["ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09"]
    assert len(CHECKS) >= 3 * len(chapters)


def test_the_search_covers_every_public_module_and_export(candidates):
    names = {module.__name__ for module in public_modules()}
    assert {"d2lmini.attention", "d2lmini.device", "d2lmini.kernels", "d2lmini.masking",
            "d2lmini.plotting", "d2lmini.widgets", "d2lmini.exercises.ch01"} <= names
    assert not any(part.startswith("_") for name in names for part in name.split("."))
    found = {id(obj) for obj in candidates.values()}
    exported = [getattr(d2lmini, name) for name in d2lmini.__all__]
    assert {id(obj) for obj in exported if callable(obj) and not inspect.ismodule(obj)} <= found
    for module in public_modules():  # every public function or class defined in a public module
        own = [obj for name, obj in vars(module).items() if not name.startswith("_") and callable(obj)
               and getattr(obj, "__module__", None) == module.__name__ and not name.startswith("check_")]
        assert {id(obj) for obj in own} <= found, module.__name__
    assert "d2lmini.widgets.explore_masked_softmax" in candidates
    assert "d2lmini.masking.sequence_mask" not in candidates  # listed once, as d2lmini.sequence_mask
    assert "d2lmini.sequence_mask" in candidates


def test_every_check_has_a_reference_answer_in_its_notebook(answers):
    assert sorted(answers) == sorted(CHECKS)


@pytest.mark.parametrize("check_name", sorted(CHECKS))
def test_no_public_callable_of_d2lmini_passes_the_check(check_name, candidates):
    assert passing(CHECKS[check_name], candidates) == []


# Each check, and each public module, is used at least once: answer i goes into module i.
MODULE_NAMES = [module.__name__ for module in public_modules()]
CONTROLS = [(sorted(CHECKS)[i % len(CHECKS)], MODULE_NAMES[i % len(MODULE_NAMES)])
            for i in range(max(len(CHECKS), len(MODULE_NAMES)))]


def _leak(check_name, module_name, answers, monkeypatch):
    """Put ``check_name``'s reference answer into ``module_name`` as ``leaked_answer``; return the search's
    candidates with it there."""
    answer = answers[check_name]
    if isinstance(answer, type):  # a class run from a notebook cell says it comes from "builtins": as package
        monkeypatch.setattr(answer, "__module__", module_name)  # code would, it names the module it is put in
    monkeypatch.setattr(importlib.import_module(module_name), "leaked_answer", answer, raising=False)
    return public_callables()


def test_control_the_whole_search_flags_a_reference_answer_and_nothing_else(answers, monkeypatch):
    """One leak searched end to end: of every public callable, the check passes the leaked answer alone."""
    check_name, module_name = CONTROLS[0]
    found = _leak(check_name, module_name, answers, monkeypatch)
    assert passing(CHECKS[check_name], found) == [f"{module_name}.leaked_answer"]


# The search is the walk (public_callables) and the checks' verdicts on what it finds. The test above runs
# both once, end to end, and test_no_public_callable_... judges every callable already in the package; so
# a leak into each module need only be found by the walk, under its new name, and passed by its check,
# rather than every callable being judged again for each of these controls.
@pytest.mark.parametrize("check_name, module_name", CONTROLS, ids=[f"{c}-in-{m}" for c, m in CONTROLS])
def test_control_the_search_flags_a_reference_answer_put_into_the_package(check_name, module_name, answers,
                                                                          candidates, monkeypatch):
    found = _leak(check_name, module_name, answers, monkeypatch)
    leaked = f"{module_name}.leaked_answer"
    assert set(found) == set(candidates) | {leaked}  # the walk finds it, and everything else as before
    assert found[leaked] is answers[check_name]
    assert passes(CHECKS[check_name], found[leaked])
