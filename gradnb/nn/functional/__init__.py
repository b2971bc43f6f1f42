"""``gradnb.nn.functional``: the stateless side of ``nn`` (``import gradnb.nn.functional as F``).

Fused ops here have hand-written derivatives (for speed, memory or numerical stability) and
PyTorch's node names: ``LogSoftmaxBackward0``, ``NllLossBackward0``, ``ConvolutionBackward0``,
``EmbeddingBackward0``, ``NativeLayerNormBackward0``, ... The others are compositions of
gradnb's ops, whose gradients they inherit.
"""

from __future__ import annotations

from .activation import dropout, gelu, log_softmax, relu, sigmoid, softmax, tanh
from .affine_grid import affine_grid
from .attention import scaled_dot_product_attention
from .conv import conv2d, max_pool2d
from .conv_nd import conv1d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from .ctc import ctc_loss
from .distance import cosine_similarity, normalize, pairwise_distance, pdist
from .embedding_bag import embedding_bag
from .feature_dropout import (
    alpha_dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from .fold import fold, unfold
from .fractional import fractional_max_pool2d, fractional_max_pool3d
from .grid_sample import grid_sample
from .linear import bilinear, linear
from .loss import (
    binary_cross_entropy_with_logits,
    cross_entropy,
    linear_cross_entropy,
    mse_loss,
    nll_loss,
)
from .margin_loss import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
)
from .multi_head_attention import multi_head_attention_forward
from .normalization import batch_norm, layer_norm
from .norms import group_norm, instance_norm, local_response_norm, rms_norm
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
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool3d,
)
from .resample import (
    channel_shuffle,
    interpolate,
    pad,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from .sparse import embedding, one_hot
from .triplet import triplet_margin_loss, triplet_margin_with_distance_loss
from .unpool import max_unpool1d, max_unpool2d, max_unpool3d

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "affine_grid",
    "alpha_dropout",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "channel_shuffle",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_embedding_loss",
    "cosine_similarity",
    "cross_entropy",
    "ctc_loss",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "elu",
    "embedding",
    "embedding_bag",
    "feature_alpha_dropout",
    "fold",
    "fractional_max_pool2d",
    "fractional_max_pool3d",
    "gaussian_nll_loss",
    "gelu",
    "glu",
    "grid_sample",
    "group_norm",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hinge_embedding_loss",
    "huber_loss",
    "instance_norm",
    "interpolate",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "linear_cross_entropy",
    "local_response_norm",
    "log_softmax",
    "logsigmoid",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "margin_ranking_loss",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "mish",
    "mse_loss",
    "multi_head_attention_forward",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson_nll_loss",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "rms_norm",
    "rrelu",
    "scaled_dot_product_attention",
    "selu",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "soft_margin_loss",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "unfold",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]
