"""NAdam: Adam with Nesterov momentum (and optional decoupled weight decay)."""

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

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam, PyTorch's update rule::

        mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay));   prod_t = prod_{t-1} * mu_t
        m, v as Adam;   denom = sqrt(v / (1 - beta2^t)) + eps
        p = p - lr * (1 - mu_t) / (1 - prod_t) * g / denom
              - lr * mu_{t+1} / (1 - prod_t * mu_{t+1}) * m / denom

    ``mu_product`` is a 0-d float32 tensor in the state, as in PyTorch.
    """

    _capturable_holders = "params, mu_products and state_steps"

    def __init__(self, params: Iterable, lr: float | Tensor = 2e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
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
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        check_not_differentiable(differentiable, "NAdam")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "momentum_decay": momentum_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize, "foreach": foreach,
                                  "capturable": capturable, "differentiable": differentiable})
        self._workspace = Workspace()

    def _update_group(self, group: dict) -> None:
        lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
        weight_decay, momentum_decay = group["weight_decay"], group["momentum_decay"]
        workspace = self._workspace
        for p, grad in grads_of(group, "NAdam"):
            data = p._data
            xp = get_array_module(data)
            state = self.state[p]
            if not state:
                state["step"] = step_counter(xp)
                state["mu_product"] = step_counter(xp, 1.0)
                state["exp_avg"] = state_tensor(xp.zeros_like(data))
                state["exp_avg_sq"] = state_tensor(xp.zeros_like(data))
            step_t, mu_product = state["step"]._data, state["mu_product"]._data
            step_t += 1
            step = step_t.item()
            bias_correction2 = 1 - beta2 ** step
            if group["decoupled_weight_decay"] and weight_decay != 0:
                data *= 1 - lr * weight_decay
                g = effective_grad(grad, data, group["maximize"], 0, workspace)
            else:
                g = effective_grad(grad, data, group["maximize"], weight_decay, workspace)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product *= mu
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            scratch, denom = workspace.like(data), workspace.like(data, 2)
            lerp_(exp_avg, g, 1 - beta1, scratch)
            exp_avg_sq *= beta2
            xp.multiply(g, 1 - beta2, out=scratch)
            scratch *= g
            exp_avg_sq += scratch
            xp.divide(exp_avg_sq, bias_correction2, out=denom)
            xp.sqrt(denom, out=denom)
            denom += eps
            product = mu_product.item()
            xp.divide(g, denom, out=scratch)
            scratch *= -lr * (1.0 - mu) / (1.0 - product)
            data += scratch
            xp.divide(exp_avg, denom, out=scratch)
            scratch *= (-lr * mu_next) / (1.0 - product * mu_next)
            data += scratch
            bump(p)


