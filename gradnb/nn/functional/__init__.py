"""``gradnb.nn.functional``: the stateless side of ``nn`` (``import gradnb.nn.functional as F``).

Fused ops here have hand-written derivatives (for speed, memory or numerical stability) and
PyTorch's node names: ``LogSoftmaxBackward0``, ``NllLossBackward0``, ``ConvolutionBackward0``,
``EmbeddingBackward0``, ``NativeLayerNormBackward0``, ... The others are compositions of
gradnb's ops, whose gradients they inherit.
"""

from __future__ import annotations

from .activation import dropout, gelu, log_softmax, relu, sigmoid, softmax, tanh
from .attention import scaled_dot_product_attention
from .conv import conv2d, max_pool2d
from .conv_nd import conv1d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from .distance import cosine_similarity, normalize, pairwise_distance
from .linear import bilinear, linear
from .loss import binary_cross_entropy_with_logits, cross_entropy, mse_loss, nll_loss
from .normalization import batch_norm, layer_norm
from .norms import group_norm, instance_norm, rms_norm
from .pointwise import (
                        celu,
                        elu,
                        glu,
                        hardshrink,
                        hardsigmoid,
                        hardswish,
                        hardtanh,
                        leaky_relu,
                        logsigmoid,
                        mish,
                        prelu,
                        relu6,
                        relu_,
                        rrelu,
                        selu,
                        silu,
                        softmin,
                        softplus,
                        softshrink,
                        softsign,
                        tanhshrink,
                        threshold,
)
from .pointwise_loss import (
                        binary_cross_entropy,
                        gaussian_nll_loss,
                        huber_loss,
                        kl_div,
                        l1_loss,
                        poisson_nll_loss,
                        smooth_l1_loss,
                        soft_margin_loss,
)
from .pooling import (
                        adaptive_avg_pool1d,
                        adaptive_avg_pool2d,
                        adaptive_avg_pool3d,
                        adaptive_max_pool1d,
                        adaptive_max_pool2d,
                        adaptive_max_pool3d,
                        avg_pool1d,
                        avg_pool2d,
                        avg_pool3d,
                        max_pool1d,
)
from .resample import interpolate, pad, pixel_shuffle, pixel_unshuffle, upsample
from .sparse import embedding, one_hot

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "batch_norm", "bilinear", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "celu", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "cosine_similarity", "cross_entropy", "dropout", "elu", "embedding",
    "gaussian_nll_loss", "gelu", "glu", "group_norm", "hardshrink", "hardsigmoid", "hardswish",
    "hardtanh", "huber_loss", "instance_norm", "interpolate", "kl_div", "l1_loss", "layer_norm",
    "leaky_relu", "linear", "log_softmax", "logsigmoid", "max_pool1d", "max_pool2d", "mish",
    "mse_loss", "nll_loss", "normalize", "one_hot", "pad", "pairwise_distance", "pixel_shuffle",
    "pixel_unshuffle", "poisson_nll_loss", "prelu", "relu", "relu6", "relu_", "rms_norm",
    "rrelu", "scaled_dot_product_attention", "selu", "sigmoid", "silu", "smooth_l1_loss",
    "soft_margin_loss", "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh",
    "tanhshrink", "threshold", "upsample",
]
