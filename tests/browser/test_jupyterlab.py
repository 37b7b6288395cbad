"""Every chapter notebook runs in JupyterLab in a real browser, and its sliders move the heatmaps."""

import time
from pathlib import Path

import nbformat
import pytest
from jupyter_ui import (
    WIDGETS_TIMEOUT,
    assert_runs_cleanly,
    assert_sliders_move_heatmaps,
    chapter_number,
    check_notebook,
    within,
)
from playwright.sync_api import Error as PlaywrightError

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
CHAPTERS = [f"notebooks/{p.name}" for p in sorted(NOTEBOOKS.glob("*.ipynb"))]
SELFTEST = "selftest/slider_fixture.ipynb"
# Every chapter shows an explorer, as 00 says (test_collection_claims).
CHAPTERS_WITH_EXPLORER = list(range(0, 10))


@pytest.mark.parametrize("path", [*CHAPTERS, SELFTEST], ids=lambda path: Path(path).stem)
def test_notebook_runs_and_its_sliders_move_the_heatmaps(page, lab_server, screenshots, reports, path):
    """Opened, a chapter first shows its stored pictures; then Run All, every slider, the colour switch."""
    before_run = None if path == SELFTEST else lambda driver: assert_stored_pictures_show(driver, screenshots)
    report = check_notebook(page, lab_server, path, screenshots / f"{Path(path).stem}.png", before_run=before_run)
    reports.append(report)
    assert_runs_cleanly(report)
    if path == SELFTEST or chapter_number(path) in CHAPTERS_WITH_EXPLORER:
        assert report.explorers, (
            f"{path} shows no explorer (a widget output holding a slider and an image) after Run All"
        )
    assert_sliders_move_heatmaps(report)
    if path != SELFTEST:
        assert_colour_switch_works(report)
        assert_explorer_images_are_sharp(report)
        assert_explorer_images_are_described(report)


def assert_stored_pictures_show(driver, screenshots):
    """Opened as stored, before any cell runs, every picture shows. The outputs are not
    trusted yet, so JupyterLab draws no widget: each explorer shows its static picture
    (with "run the cell to move the sliders"), at its CSS width, twice as many pixels across."""
    stored = nbformat.read(driver.server.root / driver.path, as_version=4)
    outputs = [output for cell in stored.cells for output in cell.get("outputs", [])]
    pictures = sum("image/png" in output.get("data", {}) for output in outputs)
    widths = [output["metadata"]["image/png"]["width"] for output in outputs
              if "Explorer(" in "".join(output.get("data", {}).get("text/plain", ""))]
    if chapter_number(driver.path) in CHAPTERS_WITH_EXPLORER:
        assert widths, f"{driver.path} stores no explorer output"
    page = driver.page
    images = page.locator(".jp-OutputArea-output img")
    page.wait_for_function(
        """expected => [...document.querySelectorAll('.jp-OutputArea-output img')]
            .filter(img => img.complete && img.naturalWidth > 0).length >= expected""",
        arg=pictures, timeout=WIDGETS_TIMEOUT * 1000,
    )
    assert driver.page_errors() == []
    sizes = images.evaluate_all("imgs => imgs.map(img => [img.naturalWidth, img.getBoundingClientRect().width])")
    for width in widths:
        assert [2 * width, width] in sizes, f"{driver.path}: no {2 * width}-pixel picture shown {width} CSS pixels wide"
    if widths:
        explorer = images.nth(sizes.index([2 * widths[0], widths[0]]))
        explorer.scroll_into_view_if_needed()
        explorer.screenshot(path=screenshots / f"stored-{Path(driver.path).stem}.png")


def assert_explorer_images_are_sharp(report):
    """Each explorer image, once running, has at least twice as many pixels across as the CSS
    pixels it is shown in: a HiDPI screen (device scale factor 2) gets full resolution."""
    for number, images in enumerate(report.explorer_images):
        for natural, shown in images:
            assert shown > 0 and natural >= 2 * shown, (
                f"{report.path}, explorer {number}: image {natural} pixels wide shown in {shown} CSS pixels"
            )


def assert_colour_switch_works(report):
    """Every chapter explorer that draws weights has the colour-scale toggle, its caption names
    the scale, and its colour-map menu recolours the picture; an explorer that draws no weights
    (the shape tracer) has neither, rather than controls that change nothing.

    01's kernel explorer never has a weight above 0.5 at its starting width,
    so there the fitted scale must also change the picture.
    """
    for number, (switch, recoloured, weights) in enumerate(
            zip(report.colour_switches, report.map_switches, report.shows_weights, strict=True)):
        where = f"{report.path}, explorer {number}"
        if not weights:
            assert switch is None and recoloured is None, f"{where}: colour controls on a picture of no weights"
            continue
        assert switch is not None, f"{where}: no 'fit to weights' button"
        assert "colours 0 to" in switch.caption, f"{where}: the caption did not name the fitted scale"
        assert recoloured, f"{where}: picking cividis in the colour-map menu left the picture as it was"
    if chapter_number(report.path) == 1:
        assert report.colour_switches[0].image_changed, f"{report.path}: fitting the colours left the picture"


def assert_explorer_images_are_described(report):
    """Every explorer image has alternative text (its title: the summary of what it draws), which
    names queries and keys where the explorer draws weights, and changes when a slider moves it."""
    for number, (texts, weights, moves) in enumerate(
            zip(report.image_texts, report.shows_weights, report.explorers, strict=True)):
        where = f"{report.path}, explorer {number}"
        assert texts and all(text.strip() for text in texts), f"{where}: an image without alternative text: {texts}"
        if weights:
            assert all("quer" in text and "key" in text for text in texts), f"{where}: {texts} name no queries/keys"
        changed = [move.label for move in moves if move.texts_after != move.texts_before]
        assert changed, f"{where}: no slider move changed the images' alternative text ({texts})"


def test_the_checks_catch_a_broken_notebook(page, lab_server, screenshots):
    """The suite's own faults fixture: each fault must be reported, or the checks are blind."""
    report = check_notebook(
        page, lab_server, "selftest/broken_fixture.ipynb", screenshots / "broken_fixture.png", slider_timeout=3
    )
    assert report.error_outputs == ["cell 4: ValueError: deliberate failure"]
    assert report.unexecuted_cells == [5]
    assert report.page_errors and all("Error displaying widget" in text for text in report.page_errors)
    [move] = report.slider_moves
    assert move.readout_before == "3" and move.readout_after == "4"
    assert not move.image_changed


def test_an_in_page_wait_that_never_ends_fails_in_time(chromium):
    """The driver's in-page waits are bounded (``within``): Playwright's evaluate has none, and a promise
    that never settles would hold the whole run. A settled promise passes its value through."""
    page = chromium.new_page()
    try:
        assert page.evaluate(within(5, "n => Promise.resolve(n + 1)", "adding"), 1) == 2
        started = time.monotonic()
        with pytest.raises(PlaywrightError, match="a promise that never settles: not within 1 s"):
            page.evaluate(within(1, "() => new Promise(() => {})", "a promise that never settles"))
        assert time.monotonic() - started < 10
    finally:
        page.close()
