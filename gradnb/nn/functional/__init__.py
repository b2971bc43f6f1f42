"""``gradnb.nn.functional``: the stateless side of ``nn`` (``import gradnb.nn.functional as F``).

Fused ops here have hand-written derivatives (for speed, memory or numerical stability) and
PyTorch's node names: ``LogSoftmaxBackward0``, ``NllLossBackward0``, ``ConvolutionBackward0``,
``EmbeddingBackward0``, ``NativeLayerNormBackward0``, ...
"""

from __future__ import annotations

from .activation import dropout, gelu, log_softmax, relu, sigmoid, softmax, tanh
from .conv import conv2d, max_pool2d
from .linear import linear
from .loss import binary_cross_entropy_with_logits, cross_entropy, mse_loss, nll_loss
from .normalization import batch_norm, layer_norm
from .sparse import embedding

__all__ = [
    "batch_norm", "binary_cross_entropy_with_logits", "conv2d", "cross_entropy", "dropout",
    "embedding", "gelu", "layer_norm", "linear", "log_softmax", "max_pool2d", "mse_loss",
    "nll_loss", "relu", "sigmoid", "softmax", "tanh",
]
