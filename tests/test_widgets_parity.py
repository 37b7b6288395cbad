"""What each explorer draws is the same on ipywidgets 7.7 (Colab's) and 8.x.

Each explorer is built with its defaults, then each of its controls is moved
in turn (a menu to its last option, a slider to its largest value, a
checkbox or toggle flipped). After every step the test reads what the learner
is shown: the text form, the caption, the summary under the picture, the
weights drawn, the picture's size and a coarse copy of its pixels (10 × 10
blocks of colour). ``tests/fixtures/explorer_parity.json`` holds that record,
written on ipywidgets 8 with ``python tests/test_widgets_parity.py --record``;
the test compares against it in ``make test`` (8.x) and ``make test-colab``
(7.7.1).

The pictures are kept per matplotlib version: matplotlib, not ipywidgets,
moves pixels (3.10.0, Colab's, draws the shape tracer's cells one pixel
narrower than 3.11.2 does, measured with ipywidgets 8 and 7.7 alike). Record
on ipywidgets 8 with each matplotlib that a test environment pins (Colab's
3.10.0 in a scratch environment, and the one in ``.venv``); a version not
recorded is compared with the nearest recorded one, more loosely.
"""

import io
import json
import sys
from pathlib import Path

import ipywidgets
import matplotlib
import matplotlib.image
import numpy as np
import pytest
import torch

from d2lmini.widgets import (
    explore_additive,
    explore_dot_product,
    explore_head_view,
    explore_kernel_pooling,
    explore_mask_editor,
    explore_masked_softmax,
    explore_multihead,
    explore_one_query,
    explore_positional_encoding,
    explore_shape_tracer,
)

RECORD = Path(__file__).resolve().parent / "fixtures" / "explorer_parity.json"
FACTORIES = [explore_one_query, explore_kernel_pooling, explore_masked_softmax, explore_mask_editor,
             explore_additive, explore_dot_product, explore_multihead, explore_shape_tracer,
             explore_positional_encoding, explore_head_view]
BLOCKS = 10  # the coarse picture: BLOCKS × BLOCKS mean colours
PICTURE_TOLERANCE = 1.0  # the largest mean difference between two coarse pictures, in 0-255 levels
OTHER_MATPLOTLIB_TOLERANCE = 12.0  # the same, against a picture drawn by another matplotlib version


def moved(name, control):
    """A different value for ``control``, read when it is moved (an earlier move may change its range),
    or None for a control left alone."""
    if name.startswith("colour_") or (name.startswith("cell_") and name[-1] != name[-3]):
        return None  # the colour controls have tests of their own; the mask editor's diagonal cells suffice
    if isinstance(control.value, bool):
        return not control.value
    if getattr(control, "options", None):
        values = [option[1] if isinstance(option, tuple) else option for option in control.options]
        return values[-1] if values[-1] != control.value else values[0]
    if hasattr(control, "max"):
        return control.max if control.value != control.max else control.min
    return None


def coarse(png):
    pixels = matplotlib.image.imread(io.BytesIO(png), format="png")[..., :3] * 255  # (height, width, 3)
    height, width = pixels.shape[0] // BLOCKS * BLOCKS, pixels.shape[1] // BLOCKS * BLOCKS
    blocks = pixels[:height, :width].reshape(BLOCKS, height // BLOCKS, BLOCKS, width // BLOCKS, 3)
    return blocks.mean(axis=(1, 3)).round().astype(np.uint8).tobytes().hex()  # 300 bytes, as hex


def levels(picture):
    return np.frombuffer(bytes.fromhex(picture), dtype=np.uint8).astype(float)


def seen(explorer):
    """What the learner is shown now."""
    png = bytes(explorer.image.value)
    weights = explorer.weights.double()
    return {"repr": repr(explorer), "caption": explorer.caption_text, "summary": explorer.summary_text,
            "message": explorer.message.value,
            "weights": {"shape": list(weights.shape), "sum": weights.sum().item(), "max": weights.max().item(),
                        "squares": weights.square().sum().item()},
            "size": [int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")],
            "picture": coarse(png)}


def walk(factory):
    torch.manual_seed(0)
    explorer = factory()
    steps = [{"move": None, **seen(explorer)}]
    for name, control in explorer.controls.items():
        value = moved(name, control)
        if value is not None:
            control.value = value
            steps.append({"move": [name, value], **seen(explorer)})
    widgets = [type(w).__name__ for w in _descendants(explorer)]
    return {"widgets": widgets, "steps": steps}


def _descendants(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _descendants(child)


def record(old):
    """The record, this matplotlib's pictures added to ``old``'s."""
    explorers = {factory.__name__: walk(factory) for factory in FACTORIES}
    pictures = dict(old.get("pictures", {}))
    pictures[matplotlib.__version__] = {name: [step.pop("picture") for step in walked["steps"]]
                                        for name, walked in explorers.items()}
    return {"ipywidgets": ipywidgets.__version__, "explorers": explorers, "pictures": pictures}


def recorded_pictures(expected):
    """(pictures, tolerance): this matplotlib's, or else the nearest version's with a looser tolerance."""
    pictures = expected["pictures"]
    if matplotlib.__version__ in pictures:
        return pictures[matplotlib.__version__], PICTURE_TOLERANCE
    def distance(version):
        return [abs(a - b) for a, b in zip(_numbers(version), _numbers(matplotlib.__version__))]
    return pictures[min(pictures, key=distance)], OTHER_MATPLOTLIB_TOLERANCE


def _numbers(version):
    return [int(part) for part in version.split("+")[0].split(".")[:3] if part.isdigit()]


@pytest.fixture(scope="module")
def expected():
    return json.loads(RECORD.read_text())


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
def test_the_explorer_shows_what_it_shows_on_ipywidgets_8(factory, expected):
    want, got = expected["explorers"][factory.__name__], walk(factory)
    pictures, tolerance = recorded_pictures(expected)
    assert got["widgets"] == want["widgets"]  # the same widgets, in the same places
    assert [step["move"] for step in got["steps"]] == [step["move"] for step in want["steps"]]
    assert len(got["steps"]) > 2  # the explorer was moved, not only built
    for step, reference, picture in zip(got["steps"], want["steps"], pictures[factory.__name__]):
        where = f"after {step['move']}"
        for key in ("repr", "caption", "summary", "message", "size"):
            assert step[key] == reference[key], f"{where}: {key}"
        assert step["weights"]["shape"] == reference["weights"]["shape"], where
        for stat in ("sum", "max", "squares"):
            assert step["weights"][stat] == pytest.approx(reference["weights"][stat], rel=1e-5, abs=1e-6), where
        difference = np.abs(levels(step["picture"]) - levels(picture))
        assert difference.mean() <= tolerance, f"{where}: the picture differs by {difference.mean():.2f}"


def test_the_picture_comparison_can_fail(expected):
    """A control: another explorer's picture, or the same one moved, is far from the record."""
    for pictures in expected["pictures"].values():
        first, moved = levels(pictures["explore_masked_softmax"][0]), levels(pictures["explore_masked_softmax"][-1])
        assert np.abs(first - moved).mean() > OTHER_MATPLOTLIB_TOLERANCE


def test_the_record_was_written_on_ipywidgets_8(expected):
    assert expected["ipywidgets"].startswith("8.")
    assert {"3.10.0"} < set(expected["pictures"])  # Colab's matplotlib, and another
    assert int(ipywidgets.__version__.split(".")[0]) in (7, 8)


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    import matplotlib

    matplotlib.use("Agg")
    assert ipywidgets.__version__.startswith("8."), "record on ipywidgets 8: make test-colab compares 7.7 against it"
    data = record(json.loads(RECORD.read_text()) if RECORD.exists() else {})
    RECORD.write_text(json.dumps(data, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {RECORD} ({RECORD.stat().st_size} bytes)")
