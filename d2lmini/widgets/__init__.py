"""Interactive heatmap explorers: move a slider, see the attention weights change.

Each ``explore_*`` function returns an explorer, an ``ipywidgets.VBox`` with
its controls, a caption with the values drawn, the picture (an
``ipywidgets.Image`` of PNG bytes), a Save row and a message line. An explorer
exposes ``controls`` (name -> widget), ``image``, ``weights`` (the tensor drawn
now), ``figure`` and ``save(path)``.

Modules: ``base`` is the framework (the kept figure redrawn by blitting, the
controls, the colour scale, errors, Save); each other module is one explorer.
``docs/explorers.md`` explains the framework and how to add an explorer.
"""

from .additive import AdditiveExplorer, explore_additive
from .base import (
    CMAP,
    DPI,
    HINT,
    PIXEL_RATIO,
    SCALE_TOPS,
    BlitFigure,
    Explorer,
    Shown,
    png_bytes,
    scale_top,
)
from .dot_product import DotProductExplorer, explore_dot_product
from .head_view import HeadViewExplorer, explore_head_view
from .kernel import KernelPoolingExplorer, QueryPoolingExplorer, explore_kernel_pooling, explore_one_query
from .mask_editor import MaskEditorExplorer, explore_mask_editor
from .masked import MaskedSoftmaxExplorer, explore_masked_softmax
from .multihead import MultiHeadExplorer, explore_multihead
from .positional import PositionalEncodingExplorer, explore_positional_encoding
from .shape_tracer import ShapeTracerExplorer, explore_shape_tracer
from .training import AlignmentExplorer, TrainingView, explore_alignment

__all__ = [
    "explore_one_query", "QueryPoolingExplorer", "explore_kernel_pooling", "explore_masked_softmax",
    "explore_additive", "explore_dot_product",
    "explore_multihead", "explore_head_view",
    "explore_positional_encoding", "PositionalEncodingExplorer", "explore_shape_tracer", "ShapeTracerExplorer",
    "KernelPoolingExplorer", "MaskedSoftmaxExplorer", "AdditiveExplorer", "DotProductExplorer",
    "MultiHeadExplorer", "HeadViewExplorer", "explore_mask_editor", "MaskEditorExplorer",
    "Explorer", "BlitFigure", "Shown", "scale_top", "png_bytes", "SCALE_TOPS", "CMAP", "DPI",
    "PIXEL_RATIO", "HINT",
    "TrainingView", "AlignmentExplorer", "explore_alignment",
]
