"""``gradnb.nn.utils``: gradient clipping, parameters <-> vector, batch-norm fusion, skip_init,
the hook-based weight and spectral norm, packed sequences (``nn.utils.rnn``) and
parametrizations (``parametrize``, ``parametrizations``: weight and spectral norm, orthogonal)."""

from __future__ import annotations

import importlib

from . import rnn, stateless
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .init import skip_init
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "get_total_norm", "parameters_to_vector", "parametrizations",
           "parametrize", "remove_spectral_norm", "remove_weight_norm", "rnn", "skip_init",
           "spectral_norm", "stateless", "vector_to_parameters", "weight_norm"]


def __getattr__(name: str):
    # The parametrizations build on the layers, which import this package (nn.utils.rnn) while
    # they load: these load on first use.
    if name in ("parametrizations", "parametrize"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
