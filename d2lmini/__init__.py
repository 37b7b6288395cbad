"""d2lmini: a small attention toolkit for the attention-notebooks collection.

``import d2lmini as d2l`` gives the names that the d2l book's attention
chapters use. One module per concept: ``device``, ``masking`` (the one place
that reads ``valid_lens``), ``attention`` (the explicit and fast paths),
``positional``, ``kernels``, ``plotting`` and ``book`` (the book's ``Module``
and ``add_to_class``), each importing only ``_checks`` and the modules below
it; ``widgets`` and ``exercises`` are imported on demand.
docs/architecture.md has the import table (kept true by a test) and says how
to add a chapter or an explorer.
"""

from .attention import (
    AdditiveAttention,
    DotProductAttention,
    MultiHeadAttention,
    blockwise_attention,
    to_torch_multihead,
)
from .book import Module, add_to_class
from .device import (
    ShapeError,
    abs,
    arange,
    astype,
    check_shape,
    cpu,
    exp,
    eye,
    float32,
    gpu,
    normal,
    num_gpus,
    numpy,
    ones,
    rand,
    randn,
    reduce_sum,
    reshape,
    sin,
    tensor,
    try_all_gpus,
    try_gpu,
    zeros,
)
from .figure_alt import describe_figure, set_alt
from .i18n import number, numbers
from .kernels import (
    KERNELS,
    NWKernelRegression,
    boxcar,
    constant,
    epanechnikov,
    gaussian,
    leave_one_out,
    nadaraya_watson,
)
from .masking import attention_mask, causal_valid_lens, masked_softmax, padding_mask, sequence_mask
from .plotting import describe_weights, plot, plt, show_heatmaps, show_weights, use_svg_display
from .positional import PositionalEncoding

__version__ = "0.2.0"

__all__ = [
    "AdditiveAttention", "DotProductAttention", "MultiHeadAttention", "blockwise_attention", "to_torch_multihead",
    "Module", "add_to_class",
    "ShapeError", "abs", "arange", "astype", "check_shape", "cpu", "exp", "eye", "float32", "gpu",
    "normal", "num_gpus", "numpy", "ones", "rand", "randn", "reduce_sum", "reshape", "sin", "tensor",
    "try_all_gpus", "try_gpu", "zeros",
    "KERNELS", "NWKernelRegression", "boxcar", "constant", "epanechnikov", "gaussian",
    "leave_one_out", "nadaraya_watson",
    "attention_mask", "causal_valid_lens", "masked_softmax", "padding_mask", "sequence_mask",
    "describe_figure", "set_alt",
    "number", "numbers",
    "describe_weights", "plot", "plt", "show_heatmaps", "show_weights", "use_svg_display",
    "PositionalEncoding",
]
