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
``example_map``), and ``DECLARATIONS`` lists them all.
``docs/explorers.md`` explains the framework, which file to open for what, and
how to add an explorer and make it live on the page.
"""

from ..plotting import CMAP
from .additive import Additive, explore_additive
from .alignment import Alignment, explore_alignment
from .declaration import Declaration, Result
from .dot_product import DotProduct, explore_dot_product
from .explorer import HINT, Explorer
from .figure import DPI, PIXEL_RATIO, SCALE_TOPS, BlitFigure, scale_top
from .head_view import HeadView, explore_head_view
from .kernel_pooling import KernelPooling, QueryPooling, explore_kernel_pooling, explore_one_query
from .mask_editor import MaskEditor, explore_mask_editor
from .masked_softmax import MaskedSoftmax, explore_masked_softmax
from .multihead import MultiHead, explore_multihead
from .online_softmax import OnlineSoftmax, explore_online_softmax
from .png import png_bytes
from .positional_encoding import SinusoidalPositions, explore_positional_encoding
from .shape_tracer import ShapeTracer, explore_shape_tracer
from .training import TrainingView

# Every explorer declared once (declaration.Declaration), in chapter order: the kernel's shell
# (Explorer) and the web page's (page) are both built from these.
DECLARATIONS = (QueryPooling, KernelPooling, MaskedSoftmax, MaskEditor, Additive, DotProduct, ShapeTracer, MultiHead,
                OnlineSoftmax, SinusoidalPositions, Alignment, HeadView)

__all__ = [
    "DECLARATIONS",
    "explore_one_query", "explore_kernel_pooling", "explore_masked_softmax", "explore_mask_editor",
    "explore_additive", "explore_dot_product", "explore_shape_tracer", "explore_multihead",
    "explore_online_softmax", "explore_positional_encoding", "explore_alignment", "explore_head_view",
    "QueryPooling", "KernelPooling", "MaskedSoftmax", "MaskEditor", "Additive", "DotProduct", "ShapeTracer",
    "MultiHead", "OnlineSoftmax", "SinusoidalPositions", "Alignment", "HeadView", "TrainingView",
    "Explorer", "Declaration", "Result", "BlitFigure", "scale_top", "png_bytes", "SCALE_TOPS", "CMAP", "DPI",
    "PIXEL_RATIO", "HINT",
]
