"""Chapter 08's live training view in JupyterLab: Train redraws the heatmap as it trains, and Stop stops it."""

from jupyter_ui import RUN_TIMEOUT, NotebookDriver, errors_in

PATH = "notebooks/08_attention_that_learns.ipynb"
TRAIN_TIMEOUT = 120  # seconds; a run of 200 steps takes a few on a quiet machine

# The view's progress, in percent, from the width of its bar (ipywidgets draws IntProgress as a bar).
PROGRESS_JS = "view => parseFloat(view.querySelector('.progress-bar').style.width || '0')"
IMAGE_JS = "view => view.querySelector('img').src"


def _run_up_to_the_first_view(driver, page):
    """Run the cells above the one after the first TrainingView: imports, tasks, model and the scripted run."""
    after_view = page.locator(".jp-Notebook .jp-CodeCell").filter(has_text="accuracy, mass = history.evaluations")
    after_view.first.locator(".jp-InputArea-prompt").click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Above Selected Cell", exact=True).click()
    view = page.locator(".jp-OutputArea-output").filter(has=page.get_by_role("button", name="Train")).first
    view.wait_for(timeout=RUN_TIMEOUT * 1000)
    page.wait_for_function(f"view => ({PROGRESS_JS})(view) === 100", arg=view.element_handle(),
                           timeout=RUN_TIMEOUT * 1000)  # the scripted run of the notebook has finished
    page.wait_for_function("view => !view.querySelector('button.mod-success').disabled", arg=view.element_handle(),
                           timeout=RUN_TIMEOUT * 1000)
    return view


def _choose_steps(view, steps):
    view.locator(".widget-dropdown").filter(has_text="steps").locator("select").select_option(label=str(steps))


def _mid_run_image(page, view):
    """The heatmap's src as soon as the progress bar stands between its ends."""
    return page.wait_for_function(
        f"""view => {{
            const progress = ({PROGRESS_JS})(view);
            return progress > 0 && progress < 100 ? ({IMAGE_JS})(view) : false;
        }}""", arg=view.element_handle(), timeout=TRAIN_TIMEOUT * 1000).json_value()


def test_train_redraws_the_heatmap_while_training_and_stop_stops_it(page, lab_server, screenshots):
    driver = NotebookDriver(page, lab_server, PATH)
    driver.open()
    driver.wait_for_kernel()
    view = _run_up_to_the_first_view(driver, page)
    train = view.get_by_role("button", name="Train")
    stop = view.get_by_role("button", name="Stop")
    view.scroll_into_view_if_needed()
    before = view.evaluate(IMAGE_JS)

    _choose_steps(view, 200)
    train.click()
    middle = _mid_run_image(page, view)
    view.screenshot(path=screenshots / "08-training-mid.png")
    assert train.is_disabled() and stop.is_enabled(), "the controls must be locked during a run"
    page.wait_for_function(f"view => ({PROGRESS_JS})(view) === 100 && !view.querySelector('button.mod-success')"
                           ".disabled", arg=view.element_handle(), timeout=TRAIN_TIMEOUT * 1000)
    end = view.evaluate(IMAGE_JS)
    view.screenshot(path=screenshots / "08-training-end.png")
    assert len({before, middle, end}) == 3, "the heatmap did not change between the start, mid-run and the end"
    assert "step 200 of 200" in view.text_content()

    _choose_steps(view, 800)
    train.click()
    _mid_run_image(page, view)
    stop.click()
    page.wait_for_function("view => !view.querySelector('button.mod-success').disabled",
                           arg=view.element_handle(), timeout=TRAIN_TIMEOUT * 1000)
    stopped_at = view.evaluate(PROGRESS_JS)
    view.screenshot(path=screenshots / "08-training-stopped.png")
    assert 0 < stopped_at < 100, f"Stop did not end the run early: the bar reads {stopped_at}%"
    assert "⚠" not in view.text_content(), "the view shows an error"
    assert errors_in(driver.save_and_read()) == []
