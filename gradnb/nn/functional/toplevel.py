"""``nn.functional`` ops that PyTorch also offers at the top level (``torch.batch_norm``,
``torch.kl_div``, ...) where the top-level name is ATen's own op, whose signature differs from
the functional one: reductions as ints (0 none, 1 mean, 2 sum), arguments in ATen's order
(``batch_norm``'s weight before the running stats), a ``cudnn_enabled`` flag that changes
nothing on the CPU, and ``max_pool*``'s empty ``stride`` for "the kernel size".

The top-level names whose signature is the functional one's are plain aliases
(``gradnb._LAZY_NAMES``).
"""

from __future__ import annotations

import warnings

from ..._core.tensor import Tensor
from .. import functional as F
from .feature_dropout import _apply as _dropout_impl

__all__ = [
    "adaptive_max_pool1d", "alpha_dropout_", "batch_norm", "binary_cross_entropy_with_logits",
    "celu", "celu_", "cosine_embedding_loss", "ctc_loss", "dropout", "dropout_", "embedding",
    "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "group_norm",
    "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm", "margin_ranking_loss",
    "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "native_channel_shuffle",
    "poisson_nll_loss", "rrelu", "rrelu_", "selu", "selu_", "threshold", "threshold_",
    "triplet_margin_loss",
]

_REDUCTIONS = ("none", "mean", "sum")

# ATen's schemas declare ``int reduction=Mean``, but PyTorch's Python binding of these
# top-level functions reads that default as 0: called without it they do not reduce. So here.


def _reduction(reduction: int) -> str:
    """ATen's reduction enum as the functional form's name."""
    return _REDUCTIONS[reduction]


def _stride(stride):
    """ATen's ``stride=[]`` (the default) is the functional form's ``None``: the kernel size."""
    return None if stride is None or (not isinstance(stride, int) and len(stride) == 0) else stride


def adaptive_max_pool1d(input: Tensor, output_size):
    """``(values, indices)``: ATen's op always returns both."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """``F.batch_norm`` with ATen's argument order (affine parameters before running stats)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None, pos_weight=None,
                                     reduction: int = 0) -> Tensor:
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                            pos_weight=pos_weight)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    return F.celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return F.celu_(input, alpha)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                  reduction=_reduction(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                     _reduction(reduction), zero_infinity)


def _check_p(p: float) -> None:
    """ATen's check (a RuntimeError, where the functional forms raise a ValueError)."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return F.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return _dropout_impl(input, p, train, True, feature=False, alpha=False)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return _dropout_impl(input, p, train, True, feature=False, alpha=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Dropout of whole ``(N, C)`` channels of an input of any rank from 2."""
    _check_p(p)
    return _dropout_impl(input, p, train, False, feature=True, alpha=False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return _dropout_impl(input, p, train, True, feature=True, alpha=False)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    return _dropout_impl(input, p, train, True, feature=True, alpha=True)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``F.embedding(indices, weight)``: ATen takes the weight first, and -1 for "no padding
    index" (the functional form has already made a negative index positive)."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                      scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-05,
               cudnn_enabled: bool = True) -> Tensor:
    return F.group_norm(input, num_groups, weight, bias, eps)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 0) -> Tensor:
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def instance_norm(input: Tensor, weight, bias, running_mean, running_var, use_input_stats: bool,
                  momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """``F.instance_norm`` with ATen's argument order (affine parameters before running
    stats)."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                          momentum, eps)


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False):
    """ATen's ``kl_div``: its mean is the functional form's, without the functional form's
    warning about ``'batchmean'`` (ATen's op does not warn)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="reduction: 'mean' divides")
        return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-05,
               cudnn_enable: bool = True) -> Tensor:
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def max_pool1d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
               ceil_mode: bool = False) -> Tensor:
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode: bool = False):
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                       return_indices=True)


def max_pool2d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
               ceil_mode: bool = False) -> Tensor:
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
               ceil_mode: bool = False) -> Tensor:
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                             reduction=_reduction(reduction))


def rrelu(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    return F.rrelu(input, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3, training: bool = False,
           generator=None) -> Tensor:
    return F.rrelu_(input, lower, upper, training)


def selu(input: Tensor) -> Tensor:
    return F.selu(input)


def selu_(input: Tensor) -> Tensor:
    return F.selu_(input)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    return F.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return F.threshold_(input, threshold, value)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2.0, eps: float = 1e-06, swap: bool = False,
                        reduction: int = 0) -> Tensor:
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                reduction=_reduction(reduction))


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    return F.native_channel_shuffle(input, groups)
