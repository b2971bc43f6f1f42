"""RAdam: Adam with a rectified (variance-corrected) adaptive step."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ._checks import check_betas, check_not_differentiable, check_tensor_lr
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

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam, PyTorch's update rule: while the variance of the adaptive step is intractable
    (``rho_t <= 5``) the step is SGD with momentum, ``p -= lr * m / (1 - beta1^t)``; after that
    it is Adam's step times the rectification term ``r_t``."""

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_not_differentiable(differentiable, "RAdam")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize,
                                  "foreach": foreach, "capturable": capturable,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "differentiable": differentiable})
        self._workspace = Workspace()

    def _update_group(self, group: dict) -> None:
        lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
        weight_decay = group["weight_decay"]
        workspace = self._workspace
        rho_inf = 2 / (1 - beta2) - 1
        for p, grad in grads_of(group, "RAdam"):
            data = p._data
            xp = get_array_module(data)
            state = self.state[p]
            if not state:
                state["step"] = step_counter(xp)
                state["exp_avg"] = state_tensor(xp.zeros_like(data))
                state["exp_avg_sq"] = state_tensor(xp.zeros_like(data))
            step_t = state["step"]._data
            step_t += 1
            step = step_t.item()
            if group["decoupled_weight_decay"] and weight_decay != 0:
                data *= 1 - lr * weight_decay
                g = effective_grad(grad, data, group["maximize"], 0, workspace)
            else:
                g = effective_grad(grad, data, group["maximize"], weight_decay, workspace)
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            scratch, adaptive = workspace.like(data), workspace.like(data, 2)
            lerp_(exp_avg, g, 1 - beta1, scratch)
            exp_avg_sq *= beta2
            xp.multiply(g, 1 - beta2, out=scratch)
            scratch *= g
            exp_avg_sq += scratch
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            xp.divide(exp_avg, bias_correction1, out=scratch)
            scratch *= lr
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if rho_t > 5.0:
                rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                                 / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                xp.sqrt(exp_avg_sq, out=adaptive)  # adaptive lr: sqrt(bc2) / (sqrt(v) + eps)
                adaptive += eps
                xp.divide(bias_correction2 ** 0.5, adaptive, out=adaptive)
                scratch *= adaptive
                scratch *= rect
            data -= scratch
            bump(p)
