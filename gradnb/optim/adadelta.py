"""Adadelta: step sizes from running averages of squared gradients and squared updates."""

from __future__ import annotations

from collections.abc import Iterable

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ._checks import check_not_differentiable, check_tensor_lr
from ._kernels import Workspace, bump, effective_grad, grads_of, scalar, state_tensor, step_counter
from .optimizer import Optimizer

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta, PyTorch's update rule::

        v = rho * v + (1 - rho) * g^2
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta^2
        p = p - lr * delta
    """

    def __init__(self, params: Iterable, lr: float | Tensor = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_not_differentiable(differentiable, "Adadelta")
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                                  "maximize": maximize, "capturable": capturable,
                                  "foreach": foreach, "differentiable": differentiable})
        self._workspace = Workspace()

    def _update_group(self, group: dict) -> None:
        lr, rho, eps = scalar(group["lr"]), group["rho"], group["eps"]
        workspace = self._workspace
        for p, grad in grads_of(group, "Adadelta"):
            data = p._data
            xp = get_array_module(data)
            state = self.state[p]
            if not state:
                state["step"] = step_counter(xp)
                state["square_avg"] = state_tensor(xp.zeros_like(data))
                state["acc_delta"] = state_tensor(xp.zeros_like(data))
            state["step"]._data += 1
            g = effective_grad(grad, data, group["maximize"], group["weight_decay"], workspace)
            square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
            delta, std = workspace.like(data), workspace.like(data, 2)
            square_avg *= rho
            xp.multiply(g, 1 - rho, out=delta)
            delta *= g
            square_avg += delta
            xp.add(square_avg, eps, out=std)
            xp.sqrt(std, out=std)
            xp.add(acc_delta, eps, out=delta)
            xp.sqrt(delta, out=delta)
            delta /= std
            delta *= g
            acc_delta *= rho
            xp.multiply(delta, 1 - rho, out=std)
            std *= delta
            acc_delta += std
            delta *= -lr
            data += delta
            bump(p)
