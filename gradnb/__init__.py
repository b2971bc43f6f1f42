"""gradnb: see ``backward()`` work.

A reverse-mode autograd engine with PyTorch's semantics on NumPy (and CuPy): tutorial code
written for PyTorch runs with ``import gradnb as torch``. The notebook toolkit lives in
``gradnb.notebook`` and is loaded with ``%load_ext gradnb``; importing the engine never imports
IPython, ipywidgets or matplotlib.
"""

# This module is the public namespace: its imports are re-exports (PyTorch's flat API), and
# the op families publish themselves through their ``__all__`` (star imports).
# ruff: noqa: F401

import importlib
from math import e, inf, nan, pi

from . import (
    _tensor_methods,  # binds ops as Tensor methods
    autograd,
)
from ._core.backend import device
from ._core.default_device import get_default_device, set_default_device
from ._core.dtype import (
    bfloat16,
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from ._core.printing import set_printoptions
from ._core.tensor import Size, Tensor, is_tensor, numel
from ._layout import layout, sparse_coo, sparse_csr, strided
from ._memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from ._runtime import (
    are_deterministic_algorithms_enabled,
    compile,
    finfo,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    get_num_interop_threads,
    get_num_threads,
    iinfo,
    is_deterministic_algorithms_warn_only_enabled,
    is_warn_always_enabled,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    set_flush_denormal,
    set_num_interop_threads,
    set_num_threads,
    set_warn_always,
    use_deterministic_algorithms,
)
from .autograd.anomaly import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .ops.arithmetic import *
from .ops.complex import *
from .ops.counting import *
from .ops.creation import *
from .ops.elementwise import *
from .ops.factories import *
from .ops.incomplete_gamma import *
from .ops.indexing import *
from .ops.joining import *
from .ops.legacy_linalg import *
from .ops.linalg import *
from .ops.linalg_decompositions import *
from .ops.linalg_decompositions import cross
from .ops.linalg_decompositions import torch_qr as qr
from .ops.linalg_householder import *
from .ops.linalg_lowrank import *
from .ops.linalg_lu import *
from .ops.linalg_norms import *
from .ops.linalg_rank import *
from .ops.matrices import *
from .ops.pointwise import *
from .ops.reductions import *
from .ops.regions import *
from .ops.sampling import *
from .ops.scans import *
from .ops.scatter_reductions import *
from .ops.shape import *
from .ops.softmax import *
from .ops.sorting import *
from .ops.special_functions import *
from .ops.spectral import *
from .ops.statistics import *
from .ops.strided import *
from .ops.tensor_api import *
from .ops.type_queries import *
from .ops.windows import *
from .storage import TypedStorage, UntypedStorage, is_storage

for _name in ops.tensor_api.ALIASED:  # axis=/keepdims= beside dim=/keepdim=, as in PyTorch
    if _name in globals():
        globals()[_name] = ops.tensor_api.with_numpy_keywords(globals()[_name])

from .ops.inplace_forms import install as _install_inplace_forms

_install_inplace_forms(globals())  # x.sin_() and torch.sin_(x) for every op with the form

__version__ = "0.1.0"
newaxis = None  # ``x[:, gradnb.newaxis]``, as NumPy's

# PyTorch's namespace (gradnb.nn.Linear, gradnb.optim.SGD, gradnb.save, ...) without paying for
# it at import: these load on first access (PEP 562), so ``import gradnb`` stays light.
_LAZY_MODULES = {"nn", "optim", "utils", "cuda", "sparse", "serialization", "linalg", "fft",
                 "special", "func", "masked", "backends", "jit", "accelerator", "amp", "cpu",
                 "random", "testing", "distributions", "__config__"}
_LAZY_NAMES = {"save": "serialization", "load": "serialization", "sparse_coo_tensor": "sparse",
               "vmap": "func",
               **{name: "amp.autocast_mode" for name in (
                   "autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
                   "set_autocast_enabled", "is_autocast_cpu_enabled", "get_autocast_cpu_dtype",
                   "set_autocast_cpu_enabled", "set_autocast_cpu_dtype",
                   "is_autocast_cache_enabled", "set_autocast_cache_enabled",
                   "clear_autocast_cache")},
               # nn.functional ops that PyTorch also offers at the top level
               "alpha_dropout": "nn.functional",
               "embedding_renorm_": "nn.functional.sparse", "channel_shuffle": "nn.functional",
               "constant_pad_nd": "nn.functional.resample",
               "feature_alpha_dropout": "nn.functional", "pdist": "nn.functional",
               "grid_sampler": "nn.functional.grid_sample",
               "grid_sampler_2d": "nn.functional.grid_sample",
               "grid_sampler_3d": "nn.functional.grid_sample",
               "native_batch_norm": "nn.functional.native_norms",
               "native_group_norm": "nn.functional.native_norms",
               "native_layer_norm": "nn.functional.native_norms",
               **{name: "nn.functional" for name in (
                   "adaptive_avg_pool1d", "avg_pool1d", "bilinear", "conv1d", "conv2d", "conv3d",
                   "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                   "cosine_similarity", "hardshrink", "pairwise_distance", "pixel_shuffle",
                   "pixel_unshuffle", "prelu", "rms_norm")},
               "native_channel_shuffle": "nn.functional.toplevel",
               # ATen's own signatures (reductions as ints, batch_norm's order, ...)
               **{name: "nn.functional.toplevel" for name in (
                   "adaptive_max_pool1d", "batch_norm", "binary_cross_entropy_with_logits",
                   "celu", "celu_", "cosine_embedding_loss", "ctc_loss", "dropout", "embedding",
                   "group_norm", "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm",
                   "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices", "max_pool2d",
                   "max_pool3d", "poisson_nll_loss", "rrelu", "rrelu_", "selu", "selu_",
                   "threshold", "threshold_", "triplet_margin_loss", "dropout_",
                   "alpha_dropout_", "feature_dropout", "feature_dropout_",
                   "feature_alpha_dropout_")}}


def __getattr__(name: str):
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(f".{_LAZY_NAMES[name]}", __name__), name)
    raise AttributeError(f"module 'gradnb' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | _LAZY_MODULES | set(_LAZY_NAMES))


def load_ipython_extension(ipython) -> None:
    """``%load_ext gradnb``: register the notebook toolkit (magics, tensor HTML, memory log)."""
    # The toolkit (IPython, matplotlib) loads only with ``%load_ext`` (import time).
    from .notebook import load_ipython_extension as load_toolkit

    load_toolkit(ipython)


def unload_ipython_extension(ipython) -> None:
    """``%unload_ext gradnb``: remove what ``%load_ext gradnb`` registered."""
    from .notebook import unload_ipython_extension as unload_toolkit  # loaded by load (above)

    unload_toolkit(ipython)
