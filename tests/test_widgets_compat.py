"""d2lmini.widgets._compat picks the branch of the ipywidgets it runs on, and explorers,
the training view and the why-questions show the same way on 7.7 and 8.

``make test`` runs this file on ipywidgets 8, ``make test-colab`` on 7.7.1.
"""

from importlib.metadata import version

import ipywidgets as widgets
import pytest
from IPython.core.formatters import DisplayFormatter

from d2lmini.exercises import questions
from d2lmini.widgets import TrainingView, _compat, explore_masked_softmax

MAJOR = int(version("ipywidgets").split(".")[0])  # from the installed package's metadata, not from _compat


def test_the_version_read_is_the_installed_one():
    assert MAJOR in (7, 8)
    assert _compat.IPYWIDGETS_MAJOR == MAJOR


def test_the_display_branch_matches_the_version():
    own = vars(_compat.MimeBundleDisplay)
    if MAJOR >= 8:  # 8 has _repr_mimebundle_ itself: the mixin adds nothing
        assert "_repr_mimebundle_" not in own and "_ipython_display_" not in own
    else:  # 7.7 displays through _ipython_display_: the mixin turns it off and supplies the bundle
        assert own["_ipython_display_"] is None and callable(own["_repr_mimebundle_"])
        assert callable(widgets.VBox._ipython_display_)  # what it turns off exists on 7.7


def test_the_toggle_buttons_share_the_style_of_their_version():
    style = _compat.toggle_button_style()
    assert type(style).__name__ == ("ToggleButtonStyle" if MAJOR >= 8 else "DescriptionStyle")
    assert type(style) is type(widgets.ToggleButton().style)
    buttons = [widgets.ToggleButton(style=style) for _ in range(3)]
    assert all(button.style is style for button in buttons)
    assert _compat.toggle_button_style() is not style  # a new one each call


def test_a_tooltip_reaches_the_widget_state_on_both():
    menu = widgets.Dropdown(options=["a", "b"], **_compat.tooltip("pick one"))
    name = "tooltip" if MAJOR >= 8 else "description_tooltip"
    assert menu.get_state()[name] == "pick one"


def show(widget):
    """What Jupyter's display formatter publishes for ``widget`` (data, metadata)."""
    return DisplayFormatter().format(widget)


def test_an_explorer_shows_its_widget_its_text_and_a_static_picture():
    explorer = explore_masked_softmax()
    data, metadata = show(explorer)
    assert data[_compat.WIDGET_VIEW] == {"version_major": 2, "version_minor": 0, "model_id": explorer.model_id}
    assert data["text/plain"] == repr(explorer)
    assert data["image/png"] and metadata["image/png"]["width"] > 100


def test_the_training_view_shows_a_static_picture_too():
    view = TrainingView(num_steps=100)
    data, _ = show(view)
    assert data[_compat.WIDGET_VIEW]["model_id"] == view.model_id and data["image/png"]


def test_a_why_question_shows_its_whole_text():
    question = questions.ask("04")
    data, _ = show(question)
    assert len(repr(question)) > 110  # longer than ipywidgets' own text form, which it cuts
    assert data["text/plain"] == repr(question) and data[_compat.WIDGET_VIEW]["model_id"] == question.model_id


def test_a_plain_widget_still_shows_as_a_widget():
    """A control: the mixin changes nothing for widgets that do not use it."""
    slider = widgets.IntSlider()
    if MAJOR >= 8:
        data, _ = show(slider)
        assert data[_compat.WIDGET_VIEW]["model_id"] == slider.model_id
    else:
        assert callable(slider._ipython_display_) and not hasattr(slider, "_repr_mimebundle_")


def test_a_closed_explorer_shows_only_its_text():
    explorer = explore_masked_softmax()
    explorer.close()
    assert show(explorer) == ({"text/plain": repr(explorer)}, {})  # no view of a closed comm, no picture


def test_a_closed_training_view_shows_only_its_text():
    view = TrainingView(num_steps=100)
    view.close()
    assert show(view) == ({"text/plain": repr(view)}, {})


@pytest.mark.parametrize("text", ["", "x" * 200])
def test_tooltip_keeps_the_text_as_given(text):
    assert list(_compat.tooltip(text).values()) == [text]
