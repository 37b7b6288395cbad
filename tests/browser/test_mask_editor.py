"""Chapter 02's mask editor in JupyterLab: a preset and a click on a grid cell each redraw the weights
and update the caption and the picture's description (its title, which screen readers read)."""

from jupyter_ui import DIGESTS_WITHIN, IMAGE_SOURCES_JS, SLIDER_TIMEOUT, WIDGETS_TIMEOUT, NotebookDriver
from playwright.sync_api import expect

PATH = "notebooks/02_masked_softmax.ipynb"


def test_a_click_and_a_preset_redraw_the_mask_editor(page, lab_server, screenshots):
    driver = NotebookDriver(page, lab_server, PATH)
    driver.open()
    driver.wait_for_kernel()
    # The editor's cell alone: it builds its explorer from nothing above it, and Run All
    # of this chapter, slow on a loaded machine, is test_jupyterlab.py's work.
    source = page.locator(".jp-Notebook .jp-CodeCell", has_text="mask_editor = explore_mask_editor()")
    source.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    cell = page.locator('button.widget-toggle-button[title="query 2, key 3"]')
    editor = page.locator(".jp-OutputArea-output").filter(has=cell).filter(has=page.locator("img"))
    expect(editor).to_have_count(1, timeout=WIDGETS_TIMEOUT * 1000)
    caption = editor.locator(".widget-html", has=page.locator("b"), has_text="cells masked")  # bold, above the picture
    # Two menus: the preset, and the colour map beside the colour scale.
    preset = editor.locator(".widget-dropdown").filter(has=page.locator("label", has_text="preset")).locator("select")
    image = editor.locator("img")
    expect(caption).to_have_text("18 of 36 cells masked; every query sees at least one key")

    def redraws(action, caption_after):
        sources = editor.evaluate(IMAGE_SOURCES_JS)
        digests = editor.evaluate(DIGESTS_WITHIN)
        action()
        page.wait_for_function(
            f"([root, before]) => JSON.stringify(({IMAGE_SOURCES_JS})(root)) !== JSON.stringify(before)",
            arg=[editor.element_handle(), sources], timeout=SLIDER_TIMEOUT * 1000,
        )
        assert editor.evaluate(DIGESTS_WITHIN) != digests, f"{action.__name__}: the picture did not change"
        expect(caption).to_have_text(caption_after, timeout=SLIDER_TIMEOUT * 1000)
        description = image.get_attribute("title")
        assert description.startswith("6 queries × 6 keys"), f"{action.__name__}: the image's title is {description!r}"
        assert editor.get_by_text(description, exact=True).count() >= 1  # the same words under the picture
        return description

    def pick_a_whole_row_masked():
        preset.select_option(label="a whole row masked: query 2")

    row_masked = redraws(pick_a_whole_row_masked, "6 of 36 cells masked; fully masked: query 2, all-zero "
                                                  "weights by d2lmini's policy")
    assert "(no key left for query 2)" in row_masked and "query 2 attends to no key" in row_masked
    expect(cell).to_have_text("")

    def click_query_2_key_3():
        cell.click()  # query 2 may attend to key 3 again

    clicked = redraws(click_query_2_key_3, "5 of 36 cells masked; every query sees at least one key")
    assert "query 2 attends mostly to key 3 (1.00)" in clicked
    expect(cell).to_have_text("✓")
    shown = preset.evaluate("select => select.options[select.selectedIndex].text")
    assert shown.replace("\xa0", " ") == "edited by hand"  # the menu spaces its labels with no-break spaces
    editor.scroll_into_view_if_needed()
    editor.screenshot(path=screenshots / "02_mask_editor.png")
