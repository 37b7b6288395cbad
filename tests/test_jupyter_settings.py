"""binder/overrides.json: the Jupyter settings the project ships, and where they are installed.

Notebook 7 (and JupyterLab) bind ArrowLeft/ArrowRight to heading navigation
for any focused element of a notebook in command mode, so a focused slider
never gets those keys in Notebook 7. The overrides disable the two default
bindings and add them back for elements outside a widget. The browser tests
show the effect; these check the file against the installed JupyterLab.
"""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OVERRIDES = ROOT / "binder" / "overrides.json"
SHORTCUTS_PLUGIN = "@jupyterlab/shortcuts-extension:shortcuts"
OUTSIDE_WIDGETS = ":not(.jupyter-widgets *)"
APP_SETTINGS = Path(sys.prefix) / "share" / "jupyter" / "lab"


def shipped():
    return json.loads(OVERRIDES.read_text())[SHORTCUTS_PLUGIN]["shortcuts"]


def default_shortcuts():
    """Every shortcut the installed JupyterLab's notebook extension defines."""
    schema = APP_SETTINGS / "schemas" / "@jupyterlab" / "notebook-extension" / "tracker.json"
    return json.loads(schema.read_text())["jupyter.lab.shortcuts"]


def key(shortcut):
    return shortcut["command"], tuple(shortcut["keys"]), shortcut["selector"]


def test_only_the_shortcuts_plugin_is_overridden():
    assert list(json.loads(OVERRIDES.read_text())) == [SHORTCUTS_PLUGIN]


def test_each_disabled_binding_is_a_default_of_the_installed_jupyterlab():
    disabled = [shortcut for shortcut in shipped() if shortcut.get("disabled")]
    defaults = {key(shortcut) for shortcut in default_shortcuts()}
    assert {(command, keys) for command, keys, _ in map(key, disabled)} == {
        ("notebook:move-cursor-heading-above-or-collapse", ("ArrowLeft",)),
        ("notebook:move-cursor-heading-below-or-expand", ("ArrowRight",)),
    }
    for shortcut in disabled:  # a renamed command or a new selector would make the override a no-op
        assert key(shortcut) in defaults, f"JupyterLab no longer defines {key(shortcut)}"


def test_each_binding_comes_back_for_elements_outside_a_widget():
    disabled = [key(shortcut) for shortcut in shipped() if shortcut.get("disabled")]
    restored = [key(shortcut) for shortcut in shipped() if not shortcut.get("disabled")]
    assert restored == [(command, keys, selector + OUTSIDE_WIDGETS) for command, keys, selector in disabled]


def test_the_environment_has_the_shipped_file_installed():
    installed = APP_SETTINGS / "settings" / "overrides.json"
    if not installed.exists():
        pytest.fail(f"{installed} is missing: run make install", pytrace=False)
    assert installed.read_text() == OVERRIDES.read_text(), f"{installed} is stale: run make install"
