"""Adam and AdamW (decoupled weight decay), with optional AMSGrad."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ._checks import check_fused, check_lr, check_not_differentiable
from ._kernels import (
    Workspace,
    bump,
    effective_grad,
    grads_of,
    lerp_,
    scalar,
    state_tensor,
    step_counter,
)
from .optimizer import Optimizer

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam, PyTorch's update rule (bias-corrected first and second moments)::

        m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g^2
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    ``weight_decay`` adds ``weight_decay * p`` to the gradient (L2), or with
    ``decoupled_weight_decay=True`` (``AdamW``) scales the weights by ``1 - lr * weight_decay``.
    ``amsgrad`` divides by the running maximum of ``v`` instead.
    """

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        check_lr(lr, foreach=foreach, capturable=capturable)
        _check_adam_hyper_parameters(eps, betas, weight_decay, foreach, capturable)
        check_not_differentiable(differentiable, type(self).__name__)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps,
                    "weight_decay": weight_decay, "amsgrad": amsgrad, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)
        self._workspace = Workspace()

    def _update_group(self, group: dict) -> None:
        lr, eps = scalar(group["lr"]), group["eps"]
        beta1, beta2 = (scalar(beta) for beta in group["betas"])
        weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
        decoupled = group["decoupled_weight_decay"]
        workspace = self._workspace
        # PyTorch names Adam (and suggests SparseAdam) for AdamW as well.
        for p, grad in grads_of(group, "Adam does not support sparse gradients, please consider "
                                "SparseAdam instead"):
            data = p._data
            xp = get_array_module(data)
            state = self.state[p]
            if not state:
                state["step"] = step_counter(xp)
                state["exp_avg"] = state_tensor(xp.zeros_like(data))
                state["exp_avg_sq"] = state_tensor(xp.zeros_like(data))
                if amsgrad:
                    state["max_exp_avg_sq"] = state_tensor(xp.zeros_like(data))
            step_t = state["step"]._data
            step_t += 1
            step = step_t.item()
            if decoupled and weight_decay != 0:
                data *= 1 - lr * weight_decay
                g = effective_grad(grad, data, group["maximize"], 0, workspace)
            else:
                g = effective_grad(grad, data, group["maximize"], weight_decay, workspace)
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            scratch = workspace.like(data)
            lerp_(exp_avg, g, 1 - beta1, scratch)
            exp_avg_sq *= beta2  # mul_(beta2).addcmul_(g, g, value=1 - beta2)
            xp.multiply(g, 1 - beta2, out=scratch)
            scratch *= g
            exp_avg_sq += scratch
            step_size = lr / (1 - beta1 ** step)
            bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
            if amsgrad:
                second = state["max_exp_avg_sq"]._data
                xp.maximum(second, exp_avg_sq, out=second)
            else:
                second = exp_avg_sq
            xp.sqrt(second, out=scratch)  # denom = sqrt(v) / sqrt(1 - beta2^t) + eps
            scratch /= bias_correction2_sqrt
            scratch += eps
            xp.divide(exp_avg, scratch, out=scratch)  # addcdiv_(m, denom, value=-step_size)
            scratch *= -step_size
            data += scratch
            bump(p)


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` before each step."""

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


def _check_adam_hyper_parameters(eps, betas, weight_decay, foreach, capturable) -> None:
    """Adam's checks after the learning rate, in PyTorch's order and words."""
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if not (all(isinstance(b, float) for b in betas) or all(isinstance(b, Tensor) for b in betas)):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, beta in enumerate(betas):
        if isinstance(beta, Tensor):
            if not capturable and foreach:
                raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False "
                                 "and foreach=True")
            if beta.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
