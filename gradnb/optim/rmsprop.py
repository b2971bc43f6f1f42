"""RMSprop, optionally centered and with momentum."""

from __future__ import annotations

from collections.abc import Iterable

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ._checks import check_not_differentiable, check_tensor_lr
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

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, PyTorch's update rule::

        v = alpha * v + (1 - alpha) * g^2
        avg = sqrt(v - gbar^2) + eps if centered (gbar: running mean of g), else sqrt(v) + eps
        buf = momentum * buf + g / avg;  p = p - lr * buf     (momentum > 0)
        p = p - lr * g / avg                                   (otherwise)
    """

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        check_not_differentiable(differentiable, "RMSprop")
        super().__init__(params, {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                                  "centered": centered, "weight_decay": weight_decay,
                                  "capturable": capturable, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable})
        self._workspace = Workspace()

    def _update_group(self, group: dict) -> None:
        lr, alpha, eps = scalar(group["lr"]), group["alpha"], group["eps"]
        momentum, centered = group["momentum"], group["centered"]
        workspace = self._workspace
        for p, grad in grads_of(group, "RMSprop"):
            data = p._data
            xp = get_array_module(data)
            state = self.state[p]
            if not state:
                state["step"] = step_counter(xp)
                state["square_avg"] = state_tensor(xp.zeros_like(data))
                if momentum > 0:
                    state["momentum_buffer"] = state_tensor(xp.zeros_like(data))
                if centered:
                    state["grad_avg"] = state_tensor(xp.zeros_like(data))
            state["step"]._data += 1
            g = effective_grad(grad, data, group["maximize"], group["weight_decay"], workspace)
            square_avg = state["square_avg"]._data
            scratch, avg = workspace.like(data), workspace.like(data, 2)
            square_avg *= alpha
            xp.multiply(g, 1 - alpha, out=scratch)
            scratch *= g
            square_avg += scratch
            if centered:
                grad_avg = state["grad_avg"]._data
                lerp_(grad_avg, g, 1 - alpha, scratch)
                xp.multiply(grad_avg, -1, out=avg)  # square_avg.addcmul(gbar, gbar, value=-1)
                avg *= grad_avg
                avg += square_avg
                xp.sqrt(avg, out=avg)
            else:
                xp.sqrt(square_avg, out=avg)
            avg += eps
            xp.divide(g, avg, out=scratch)
            if momentum > 0:
                buf = state["momentum_buffer"]._data
                buf *= momentum
                buf += scratch
                xp.multiply(buf, -lr, out=scratch)
            else:
                scratch *= -lr
            data += scratch
            bump(p)
