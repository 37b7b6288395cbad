"""Interactive heatmap explorers: move a slider, see the attention weights change.

Each ``explore_*`` function returns an explorer, an ``ipywidgets.VBox`` with
its controls, a caption with the values drawn, the picture (an
``ipywidgets.Image`` of PNG bytes), a Save row and a message line. An explorer
exposes ``controls`` (name -> widget), ``image``, ``weights`` (the tensor drawn
now), ``figure`` and ``save(path)``.

The framework is five modules, one concern each, whose imports run one way:
``explorer`` (the ``Explorer`` shell: controls in, caption, picture, summary,
errors and idle-time preparation) imports the other four: ``controls`` (the
checked control factories), ``export`` (Save and ``Recipe``), ``figure`` (the
kept figure redrawn by blitting, the colour scale, masked cells) and ``png``
(the encoder); ``figure`` and ``export`` import ``png``. Each other module is one explorer. ``docs/explorers.md``
explains the framework, which file to open for what, and how to add an explorer.
"""

from ..plotting import CMAP
from .additive import AdditiveExplorer, explore_additive
from .declaration import Declaration, Result
from .dot_product import DotProductExplorer, explore_dot_product
from .explorer import HINT, Explorer
from .figure import DPI, PIXEL_RATIO, SCALE_TOPS, BlitFigure, scale_top
from .head_view import HeadView, explore_head_view
from .kernel import KernelPooling, QueryPooling, explore_kernel_pooling, explore_one_query
from .mask_editor import MaskEditorExplorer, explore_mask_editor
from .masked import MaskedSoftmaxExplorer, explore_masked_softmax
from .multihead import MultiHeadExplorer, explore_multihead
from .png import png_bytes
from .positional import PositionalEncodingExplorer, explore_positional_encoding
from .shape_tracer import ShapeTracerExplorer, explore_shape_tracer
from .training import Alignment, TrainingView, explore_alignment

__all__ = [
    "explore_one_query", "QueryPooling", "explore_kernel_pooling", "explore_masked_softmax",
    "explore_additive", "explore_dot_product",
    "explore_multihead", "explore_head_view",
    "explore_positional_encoding", "PositionalEncodingExplorer", "explore_shape_tracer", "ShapeTracerExplorer",
    "KernelPooling", "MaskedSoftmaxExplorer", "AdditiveExplorer", "DotProductExplorer",
    "MultiHeadExplorer", "HeadView", "explore_mask_editor", "MaskEditorExplorer",
    "Explorer", "Declaration", "Result", "BlitFigure", "scale_top", "png_bytes", "SCALE_TOPS", "CMAP", "DPI",
    "PIXEL_RATIO", "HINT",
    "TrainingView", "Alignment", "explore_alignment",
]
