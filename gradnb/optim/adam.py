"""Adam and AdamW (decoupled weight decay), with optional AMSGrad."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ..ops.creation import tensor
from ._checks import check_betas, check_eps, check_lr, check_weight_decay
from .optimizer import Optimizer

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam, PyTorch's update rule (bias-corrected first and second moments)::

        m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g^2
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    ``weight_decay`` adds ``weight_decay * p`` to the gradient (L2); ``AdamW`` decays the weights
    directly instead.
    """

    _decoupled = False

    def __init__(self, params: Iterable, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused=None) -> None:
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        check_weight_decay(weight_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                      "weight_decay": weight_decay, "amsgrad": amsgrad,
                                      "maximize": maximize, "foreach": foreach, "capturable": capturable,
                                      "differentiable": differentiable, "fused": fused})

    def _update_group(self, group: dict) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
        for p in group["params"]:
            grad = p._grad
            if grad is None:
                continue
            if getattr(grad, "is_sparse", False):
                raise RuntimeError(f"{type(self).__name__} does not support sparse gradients, "
                                   "please consider SparseAdam instead")
            g = -grad._data if group["maximize"] else grad._data
            state = self.state.get(p)
            if not state:
                state = self.state[p] = _fresh_state(p, amsgrad)
            state["step"]._data += 1
            step = float(state["step"].item())
            if self._decoupled:
                p._data *= 1 - lr * weight_decay
            elif weight_decay != 0:
                g = g + weight_decay * p._data
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            exp_avg += (g - exp_avg) * (1 - beta1)
            exp_avg_sq *= beta2
            exp_avg_sq += (1 - beta2) * g * g
            step_size = lr / (1 - beta1 ** step)
            bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
            xp = get_array_module(p._data)
            if amsgrad:
                max_sq = state["max_exp_avg_sq"]._data
                xp.maximum(max_sq, exp_avg_sq, out=max_sq)
                denom = xp.sqrt(max_sq) / bias_correction2_sqrt + eps
            else:
                denom = xp.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps
            p._data -= step_size * exp_avg / denom
            p._version[0] += 1


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` before each step."""

    _decoupled = True

    def __init__(self, params: Iterable, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, **kwargs) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, **kwargs)


def _fresh_state(p: Tensor, amsgrad: bool) -> dict:
    xp = get_array_module(p._data)
    state = {
        "step": tensor(0.0),
        "exp_avg": Tensor._make(xp.zeros_like(p._data)),
        "exp_avg_sq": Tensor._make(xp.zeros_like(p._data)),
    }
    if amsgrad:
        state["max_exp_avg_sq"] = Tensor._make(xp.zeros_like(p._data))
    return state
