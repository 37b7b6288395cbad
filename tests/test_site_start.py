"""Where the web site starts each live explorer (tools/build_site.py): the settings its chapter's stored
picture shows, read from the stored output's text form and checked against what the page offers; the
box carries them (data-d2l-start) and the kernel widget's id (data-d2l-link). Chapter 08's training
view, replayed from recorded runs, starts at the recorded run of its settings and says so in its alt
text. The browser tests (tests/browser/test_site.py, test_page_explorers.py) check that the page then
paints what that box shows."""

import base64
import html
import json
import re

import nbformat
import pytest

from d2lmini.widgets import DECLARATIONS
from d2lmini.widgets._compat import WIDGET_VIEW
from tools import build_site

REPO = build_site.REPO


@pytest.fixture(scope="module")
def declarations():
    """The page's declaration of each explorer a chapter shows, by name."""
    made = {}
    for declaration in DECLARATIONS:
        page_declaration = declaration.for_page()
        made[page_declaration.name] = page_declaration
    return made


def stored_explorers(folder):
    """(chapter, output) of every explorer the chapters of ``folder`` ("en", "pt") store, in order."""
    book = next(book for book in build_site.BOOKS if book.folder == folder)
    return [(path.stem, output) for path in book.chapter_sources()
            for cell in nbformat.read(path, as_version=4).cells for output in cell.get("outputs", [])
            if build_site.explorer_name(output)]


def output_of(text, model="model-1"):
    """A stored explorer output whose text form is ``text``, with a picture."""
    picture = base64.b64decode(stored_explorers("en")[0][1]["data"]["image/png"])
    return {"output_type": "display_data", "metadata": {"image/png": {"width": 608}},
            "data": {"text/plain": text, WIDGET_VIEW: {"model_id": model, "version_major": 2, "version_minor": 0},
                     "image/png": base64.b64encode(picture).decode()}}


@pytest.mark.parametrize("folder", ["en", "pt"])
def test_every_stored_explorer_starts_at_the_settings_its_text_form_lists(declarations, folder):
    for chapter, output in stored_explorers(folder):
        declaration = declarations[build_site.explorer_name(output)]
        start = build_site.start_settings(output, declaration)
        listed = build_site.listed_settings(output)
        if not output["data"]["text/plain"].startswith("TrainingView("):
            assert {name: start[name] for name in listed} == listed, (chapter, output["data"]["text/plain"])
        assert declaration.checked_settings(**{name: tuple(value) if isinstance(value, list) else value
                                       for name, value in start.items()}) is not None


@pytest.mark.parametrize("folder", ["en", "pt"])
def test_chapter_08_starts_at_the_click_and_its_training_view_at_the_notebooks_run(declarations, folder):
    starts = [build_site.start_settings(output, declarations[build_site.explorer_name(output)])
              for chapter, output in stored_explorers(folder) if chapter.startswith("08_")]
    assert [start["run"] for start in starts] == ["notebook"] * 3
    assert starts[1] == {"run": "notebook", "step": 140, "example": 0}  # explore_alignment(history, step=click)
    assert starts[0]["step"] == 0  # the training view shown before it trains


def test_a_training_views_settings_and_step_pick_the_recorded_run(declarations):
    replay = declarations["AlignmentExplorer"]
    start = build_site.start_settings(output_of("TrainingView(task='reverse', positional=False, step=400)"), replay)
    assert start == {"run": "no positional encoding", "step": 400, "example": 0}
    start = build_site.start_settings(output_of("TrainingView(task='reverse', lr=0.03, step=120)"), replay)
    assert start == {"run": "learning rate 0.03", "step": 120, "example": 0}
    with pytest.raises(ValueError, match=r"no recorded run has the settings \{'task': 'sort'\}"):
        build_site.start_settings(output_of("TrainingView(task='sort', step=100)"), replay)


@pytest.mark.parametrize("text,fragments", [
    ("AlignmentExplorer(step=150, example=0)", ["AlignmentExplorer", "step=150", "does not offer", "[0, 20, 40"]),
    ("TrainingView(task='reverse', step=130)", ["step=130", "does not offer"]),
    ("AlignmentExplorer(stride=1)", ["names stride", "not a setting", "['example', 'run', 'step']"]),
])
def test_a_start_the_page_does_not_offer_stops_the_build_naming_it(declarations, text, fragments):
    with pytest.raises(ValueError) as info:
        build_site.start_settings(output_of(text), declarations["AlignmentExplorer"])
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


def test_a_mask_editors_preset_sets_its_cells_as_the_kernel_does(declarations):
    editor = declarations["MaskEditorExplorer"]
    start = build_site.start_settings(output_of("MaskEditorExplorer(preset='causal')"), editor)
    settings = editor.Settings(**start)
    assert settings == editor.adjust(editor.Settings(preset="causal"), "preset")
    assert settings.cell_0_1 is False and settings.cell_1_0 is True  # causal: no query sees a later key


@pytest.mark.parametrize("folder", ["en", "pt"])
def test_the_box_carries_its_start_and_its_widget_and_a_training_view_says_it_is_a_recorded_run(
        declarations, folder):
    replay = declarations["AlignmentExplorer"]
    scripts = {"AlignmentExplorer": ["AlignmentExplorer.js"]}
    boxes = {}
    texts = ("TrainingView(task='reverse', attention='additive', step=400)", "AlignmentExplorer(step=140, example=0)")
    for text in texts:
        output = output_of(text, model=f"model-{len(boxes)}")
        start = build_site.start_settings(output, replay)
        box = build_site.live_explorer(output, "08-1", scripts, "08.png", folder, start)["data"]["text/html"]
        assert json.loads(html.unescape(re.search(r'data-d2l-start="([^"]*)"', box).group(1))) == start
        assert f'data-d2l-link="model-{len(boxes)}"' in box
        boxes[text] = html.unescape(re.search(r'alt="([^"]*)"', box).group(1))
    training, alignment = boxes.values()
    if folder == "en":
        assert training.startswith("A recorded training run's attention (additive attention, training step 400)")
        assert "alignment explorer" not in training and alignment.startswith("The alignment explorer's picture")
    else:
        assert training.startswith("A atenção de uma execução de treino gravada (atenção aditiva, passo de treino 400)")
        assert "“alinhamento”" in alignment
