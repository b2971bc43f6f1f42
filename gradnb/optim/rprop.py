"""Rprop: resilient backpropagation, per-coordinate step sizes driven by gradient signs."""

from __future__ import annotations

from collections.abc import Iterable

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ._checks import check_not_differentiable, check_tensor_lr
from ._kernels import Workspace, bump, effective_grad, grads_of, scalar, state_tensor, step_counter
from .optimizer import Optimizer

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop, PyTorch's update rule: where the gradient kept its sign the coordinate's step size
    grows by ``etas[1]``, where it flipped it shrinks by ``etas[0]`` (and that coordinate skips
    this step), clamped to ``step_sizes``; then ``p -= sign(g) * step_size``. Step sizes start
    at ``lr``."""

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-2, etas=(0.5, 1.2),
                 step_sizes=(1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        check_not_differentiable(differentiable, "Rprop")
        super().__init__(params, {"lr": lr, "etas": etas, "step_sizes": step_sizes,
                                  "foreach": foreach, "maximize": maximize,
                                  "differentiable": differentiable, "capturable": capturable})
        self._workspace = Workspace()

    def _update_group(self, group: dict) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        workspace = self._workspace
        for p, grad in grads_of(group, "Rprop"):
            data = p._data
            xp = get_array_module(data)
            state = self.state[p]
            if not state:
                state["step"] = step_counter(xp)
                state["prev"] = state_tensor(xp.zeros_like(data))
                state["step_size"] = state_tensor(xp.full_like(grad, scalar(group["lr"])))
            state["step"]._data += 1
            prev, step_size = state["prev"]._data, state["step_size"]._data
            g = effective_grad(grad, data, group["maximize"], 0, workspace)
            sign = workspace.like(data)
            xp.multiply(g, prev, out=sign)
            xp.sign(sign, out=sign)
            flipped = sign < 0
            sign[sign > 0] = etaplus
            sign[flipped] = etaminus
            sign[sign == 0] = 1
            step_size *= sign
            xp.clip(step_size, step_size_min, step_size_max, out=step_size)
            xp.copyto(prev, g)  # prev becomes this step's gradient, zero where the sign flipped
            prev[flipped] = 0
            xp.sign(prev, out=sign)
            sign *= step_size
            data -= sign
            bump(p)
