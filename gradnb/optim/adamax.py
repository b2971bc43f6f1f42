"""Adamax: Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

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

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax, PyTorch's update rule::

        m = beta1 * m + (1 - beta1) * g;   u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1^t) * m / u
    """

    def __init__(self, params: Iterable, lr: float | Tensor = 2e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_not_differentiable(differentiable, "Adamax")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})
        self._workspace = Workspace()

    def _update_group(self, group: dict) -> None:
        lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
        workspace = self._workspace
        for p, grad in grads_of(group, "Adamax"):
            data = p._data
            xp = get_array_module(data)
            state = self.state[p]
            if not state:
                state["step"] = step_counter(xp)
                state["exp_avg"] = state_tensor(xp.zeros_like(data))
                state["exp_inf"] = state_tensor(xp.zeros_like(data))
            step_t = state["step"]._data
            step_t += 1
            g = effective_grad(grad, data, group["maximize"], group["weight_decay"], workspace)
            exp_avg, exp_inf = state["exp_avg"]._data, state["exp_inf"]._data
            scratch = workspace.like(data)
            lerp_(exp_avg, g, 1 - beta1, scratch)
            exp_inf *= beta2
            xp.abs(g, out=scratch)
            scratch += eps
            xp.maximum(exp_inf, scratch, out=exp_inf)
            clr = lr / (1 - beta1 ** step_t.item())
            xp.divide(exp_avg, exp_inf, out=scratch)
            scratch *= -clr
            data += scratch
            bump(p)
