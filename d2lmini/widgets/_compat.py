"""What differs between ipywidgets 7.7 (Colab's) and 8.x, in one place.

d2lmini runs on both: Colab preloads ipywidgets 7.7.1 when its kernel starts,
and upgrading it there needs a restart. Each piece below says which version
needs it and why; the rest of the package uses ipywidgets' public API only,
the part that is the same on both. Nothing here imports a private ipywidgets
module. ``make test-colab`` runs the explorers' tests on Colab's versions
(``constraints/colab.txt``), ``make test`` on ipywidgets 8.
"""

import ipywidgets as widgets
from traitlets import Unicode

IPYWIDGETS_MAJOR = int(widgets.__version__.split(".")[0])
if IPYWIDGETS_MAJOR < 7:
    raise ImportError(f"d2lmini's explorers need ipywidgets 7.7 or later, found {widgets.__version__}: "
                      "pip install 'ipywidgets>=7.7'")

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def toggle_button_style():
    """A new style for ``widgets.ToggleButton``, for many buttons to share.

    The class differs: ipywidgets 8 gives the button a ``ToggleButtonStyle``
    (font and text colour) that it does not export, 7.7 the plain
    ``DescriptionStyle``. The button's own ``style`` trait names it on both.
    """
    return widgets.ToggleButton.class_traits()["style"].klass()


def tooltip(text):
    """Keyword arguments that give a description widget (a Dropdown, a slider) the tooltip ``text``.

    ipywidgets 8 has ``tooltip`` on every widget; 7.7 only on buttons, and
    names it ``description_tooltip`` elsewhere (a ``tooltip`` there is ignored,
    with a DeprecationWarning from traitlets).
    """
    return {"tooltip" if IPYWIDGETS_MAJOR >= 8 else "description_tooltip": text}


if IPYWIDGETS_MAJOR >= 8:
    class MimeBundleDisplay:
        """ipywidgets 8 shows a widget through ``Widget._repr_mimebundle_``: nothing to add.

        A subclass overrides ``_repr_mimebundle_`` (a static PNG beside the view,
        a whole text form) and calls ``super()`` for the widget's own bundle.
        """
else:
    class MimeBundleDisplay:
        """ipywidgets 7.7 shows a widget through ``_ipython_display_`` and has no
        ``_repr_mimebundle_``: this gives it 8's, so that a subclass's override is
        what Jupyter shows, on both.
        """

        # IPython calls a callable _ipython_display_ and then asks for nothing else,
        # so 7.7's own would hide the override; None makes IPython use the bundle.
        _ipython_display_ = None

        def _repr_mimebundle_(self, **kwargs):
            """The text form (cut at 110 characters, as both versions do) and the widget
            view; None for a closed widget, which has no view."""
            if self.comm is None:
                return None
            plaintext = repr(self)
            if len(plaintext) > 110:
                plaintext = plaintext[:110] + "…"
            return {"text/plain": plaintext,
                    WIDGET_VIEW: {"version_major": 2, "version_minor": 0, "model_id": self.model_id}}


class DescribedImage(widgets.Image):
    """An ``ipywidgets.Image`` whose ``tooltip`` becomes the ``<img>``'s ``title``: its description
    for a screen reader.

    ipywidgets 8's front end sets the title only when the model's ``description``
    is empty, and reads its length; an Image has no ``description``, so a
    tooltip on a plain Image stops its view from being drawn at all ("Could not
    create a view"). This one syncs an empty ``description``.
    """

    description = Unicode("").tag(sync=True)
