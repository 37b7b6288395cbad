"""Interactive heatmap explorers: move a slider, see the attention weights change.

Each ``explore_*`` function returns an explorer, an ``ipywidgets.VBox`` with
its controls, a caption with the values drawn, the picture (an
``ipywidgets.Image`` of PNG bytes), a Save row and a message line. An explorer
exposes ``controls`` (name -> widget), ``image``, ``weights`` (the tensor drawn
now), ``figure`` and ``save(path)``.

Every explorer is declared once (``declaration``: its controls, a pure
``compute`` from settings to a result, and a view that moves registered
artists), and two shells are built from the declaration: the kernel's,
``explorer`` (the ``Explorer``: controls in, caption, picture, summary and
errors), with ``idle`` (the other layouts drawn in idle time), ``controls``
(the ipywidgets of the control specs), ``export`` (Save and ``Recipe``),
``figure`` (the kept figure redrawn by blitting, the colour scale, masked
cells) and ``png`` (the encoder); and the web page's, ``page`` (with its
scripts in ``page_js/``). Each other module holds one chapter's explorers
(chapter 08's are ``training`` and ``alignment``, with the drawing they share,
``example_map``). This package finds them itself: it imports each module that
is neither private nor in ``FRAMEWORK`` (the modules named above: what it
exports of them it imports by name), exports the names that module lists in its
``__all__`` (its declarations and ``explore_*`` functions), and makes
``DECLARATIONS`` of their declarations, in chapter order
(``Declaration.chapter``, then ``place``): a new explorer is one new module,
listed nowhere else.
``docs/explorers.md`` explains the framework, which file to open for what, and
how to add an explorer and make it live on the page.
"""

import importlib
import pkgutil

from ..plotting import CMAP
from .declaration import Declaration, Result
from .explorer import HINT, Explorer
from .figure import DPI, PIXEL_RATIO, SCALE_TOPS, BlitFigure, scale_top
from .png import png_bytes
from .training import TrainingView

# The modules whose names are not found below: the framework, the page's shell, and chapter 08's
# example_map (the drawing its explorers share) and training (TrainingView, imported above, trains in the
# kernel; its declaration, Training, is in no DECLARATIONS: the page replays recorded runs with
# Alignment). Every other module is found below, so that a new explorer is one new file.
FRAMEWORK = ("controls", "declaration", "example_map", "explorer", "export", "figure", "idle", "page",
             "page_artists", "page_figure", "page_states", "page_words", "png", "training")


def _explorer_modules():
    """The package's modules of explorers, by name: each one neither in ``FRAMEWORK`` nor private."""
    return [importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)
            if info.name not in FRAMEWORK and not info.name.startswith("_")]


def _explorers(modules):
    """What the explorer ``modules`` export, {name: object} (each one's ``__all__``), and the declarations
    among it in chapter order: by ``chapter``, then ``place``, each (chapter, place) held by one."""
    owners = {}  # name -> the module that exports it
    for module in modules:
        for name in module.__all__:
            if name in owners:
                raise ValueError(f"{owners[name].__name__} and {module.__name__} both export {name}")
            owners[name] = module
    exported = {name: getattr(module, name) for name, module in owners.items()}
    declarations = [obj for obj in exported.values() if isinstance(obj, type) and issubclass(obj, Declaration)]
    places = {}
    for declaration in declarations:
        if declaration.chapter is None:
            raise ValueError(f"{declaration.__name__} sets no chapter: the number of the chapter that shows it")
        place = declaration.chapter, declaration.place
        if place in places:
            raise ValueError(f"{places[place].__name__} and {declaration.__name__} both have place "
                             f"{declaration.place} in chapter {declaration.chapter}: give one its own place")
        places[place] = declaration
    return exported, tuple(places[place] for place in sorted(places))


_EXPORTED, DECLARATIONS = _explorers(_explorer_modules())
globals().update(_EXPORTED)  # each explorer module's names, as if imported one by one

__all__ = [
    "DECLARATIONS", *_EXPORTED, "TrainingView", "Explorer", "Declaration", "Result", "BlitFigure", "scale_top",
    "png_bytes", "SCALE_TOPS", "CMAP", "DPI", "PIXEL_RATIO", "HINT",
]
