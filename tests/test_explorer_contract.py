"""One contract, every explorer (d2lmini.widgets.DECLARATIONS): what both shells rely on.

A declaration's settings are a frozen dataclass of its controls, in order, whose defaults its
controls accept; ``compute`` returns a frozen ``Result`` and is pure (the same settings give the
same result, and the declaration is left as it was); every control value can be checked and
written out for the page; and the kernel's shell draws every seeded random state that the
declaration allows without an error, showing exactly what ``compute`` gives.
"""

import dataclasses
import html
import json
import random

import pytest
import torch

from d2lmini.widgets import DECLARATIONS
from d2lmini.widgets.declaration import Declaration, Result, say
from d2lmini.widgets.explorer import Explorer

RANDOM_STATES = 10


@pytest.fixture(scope="module", params=DECLARATIONS, ids=lambda declaration: declaration.__name__)
def declaration(request):
    return request.param.for_page()


def _snapshot(declaration):
    """The declaration's own attributes, tensors copied, to compare after a compute."""
    return {name: value.clone() if isinstance(value, torch.Tensor) else value
            for name, value in vars(declaration).items() if isinstance(value, (torch.Tensor, int, float, str))}


def _random_settings(declaration, rng):
    """Settings made by moving one control at a time to a random value, as a learner would: each
    move goes through ``adjust`` and ``choices``, so the settings are ones the shells can show."""
    settings = declaration.Settings()
    for control in rng.sample(declaration.controls, len(declaration.controls)):
        allowed = declaration.choices(settings).get(control.name)
        values = list(allowed) if allowed is not None else list(control.values())
        settings = dataclasses.replace(settings, **{control.name: rng.choice(values)})
        settings = declaration.adjust(settings, control.name)
    return settings


def test_every_explorer_has_a_name_of_its_own_that_its_class_gives():
    # The page data, the element ids and the site's tools find an explorer by this name, read off the class.
    names = [declaration.name for declaration in DECLARATIONS]
    assert all(name.endswith("Explorer") for name in names) and len(set(names)) == len(names), names


def test_settings_are_a_frozen_dataclass_of_the_controls_in_order(declaration):
    assert isinstance(declaration, Declaration)
    fields = [field.name for field in dataclasses.fields(declaration.Settings)]
    assert fields == [control.name for control in declaration.controls]
    assert declaration.Settings.__dataclass_params__.frozen
    defaults = declaration.Settings()
    for control in declaration.controls:
        control.check(getattr(defaults, control.name))


def test_every_control_value_passes_its_check_and_is_written_out_for_the_page(declaration):
    for control in declaration.controls:
        values = control.values()
        assert values, control.name
        for value in values:
            control.check(value)
        json.dumps(control.spec())
        json.dumps(list(values))


def test_compute_returns_a_frozen_result_and_is_pure(declaration):
    rng = random.Random(0)
    for settings in [declaration.Settings()] + [_random_settings(declaration, rng) for _ in range(3)]:
        before = _snapshot(declaration)
        result = declaration.compute(settings)
        assert isinstance(result, Result) and type(result).__dataclass_params__.frozen
        assert isinstance(result.weights, torch.Tensor) and isinstance(result.caption, str) and result.caption
        if result.mask is not None:
            assert result.mask.dtype == torch.bool and result.mask.shape == result.weights.shape
        again = declaration.compute(settings)
        torch.testing.assert_close(again.weights, result.weights, rtol=0, atol=0)
        assert again.caption == result.caption and declaration.describe(again) == declaration.describe(result)
        after = _snapshot(declaration)
        assert after.keys() == before.keys()
        for name, value in before.items():
            if isinstance(value, torch.Tensor):
                assert torch.equal(after[name], value), f"compute changed {name}"
            else:
                assert after[name] == value, f"compute changed {name}"


def test_the_kernels_shell_shows_what_compute_gives_in_every_random_state(declaration):
    explorer = Explorer(declaration)
    assert repr(explorer).startswith(declaration.name + "(")
    rng = random.Random(1)
    for _ in range(RANDOM_STATES):
        settings = _random_settings(declaration, rng)
        for control in declaration.controls:
            explorer.controls[control.name].value = getattr(settings, control.name)
            assert explorer.last_error is None, f"{control.name}: {explorer.last_error!r}"
        expected = declaration.compute(explorer.settings)
        torch.testing.assert_close(explorer.weights, expected.weights, rtol=0, atol=0)
        assert explorer.caption_text.startswith(expected.caption)
        assert explorer.summary_text == declaration.describe(expected)
    explorer.close()


def test_every_control_has_a_name_of_its_own_in_the_kernels_shell(declaration):
    """What a screen reader gets of each widget, its description or, where the declaration gives a
    whole name beside a short label (``accessible_name``: "q0") or the cell shows a mark, its tooltip,
    is non-empty and said of no other control of the explorer, the colour controls included."""
    explorer = Explorer(declaration)
    names = {}
    for name, widget in explorer.controls.items():
        spec = next((control for control in declaration.controls if control.name == name), None)
        short = spec is not None and (spec.accessible_name or getattr(spec, "style", "") == "cell")
        names[name] = (widget.tooltip if short else widget.description).strip()
        if spec is not None:
            assert names[name] == say(spec.spoken), name
    assert all(names.values()), names
    spoken = list(names.values())
    assert sorted({said for said in spoken if spoken.count(said) > 1}) == [], names
    explorer.close()


def test_a_control_declared_inactive_changes_nothing_and_is_disabled_saying_why(declaration):
    """``inactive_when``: in every state where the control is inactive, each of its values computes the
    same picture (the noise seed at noise 0), and the kernel's shell disables it and says why; in a state
    where it is active, it is enabled and no reason is shown."""
    inactive = [control for control in declaration.controls if control.inactive_when]
    if not inactive:
        pytest.skip(f"{declaration.name} has no control that can be inactive")
    explorer = Explorer(declaration)
    rng = random.Random(2)
    for control in inactive:
        setting, value, reason = control.inactive_when
        for _ in range(RANDOM_STATES):
            settings = dataclasses.replace(_random_settings(declaration, rng), **{setting: value})
            pictures = {each: declaration.compute(dataclasses.replace(settings, **{control.name: each}))
                        for each in control.values()}
            first = next(iter(pictures.values()))
            for control_value, result in pictures.items():
                torch.testing.assert_close(result.weights, first.weights, rtol=0, atol=0,
                                           msg=f"{control.name}={control_value} changed the picture")
        assert declaration.inactive(settings) == {control.name: reason}
        explorer.controls[setting].value = value
        assert explorer.controls[control.name].disabled
        note = explorer.inactive_note
        assert note.layout.display is None and html.escape(say(reason)) in note.value
        other = next(v for v in declaration.control(setting).values() if v != value)
        explorer.controls[setting].value = other
        assert not explorer.controls[control.name].disabled and explorer.inactive_note.layout.display == "none"
        explorer.controls[setting].value = value
        assert explorer.controls[control.name].disabled
    explorer.close()
