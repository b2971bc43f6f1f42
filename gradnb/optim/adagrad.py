"""Adagrad: per-coordinate steps scaled by the root of the summed squared gradients."""

from __future__ import annotations

from collections.abc import Iterable

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ._checks import check_fused, check_not_differentiable, check_tensor_lr
from ._kernels import Workspace, bump, effective_grad, grads_of, scalar, state_tensor, step_counter
from .optimizer import Optimizer

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, PyTorch's update rule::

        clr = lr / (1 + (t - 1) * lr_decay)
        sum = sum + g^2;   p = p - clr * g / (sqrt(sum) + eps)

    State is created for every parameter at construction (``sum`` starts at
    ``initial_accumulator_value``), as in PyTorch. A sparse gradient updates only its rows.
    """

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_not_differentiable(differentiable, "Adagrad")
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value,
                                  "foreach": foreach, "maximize": maximize,
                                  "differentiable": differentiable, "fused": fused})
        check_fused(fused, foreach, differentiable)
        self._workspace = Workspace()
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p: Tensor) -> dict:
        xp = get_array_module(p._data)
        state = self.state[p]
        state["step"] = step_counter(xp)
        state["sum"] = state_tensor(xp.full_like(p._data,
                                                 self.defaults["initial_accumulator_value"]))
        return state

    def _update_group(self, group: dict) -> None:
        lr, lr_decay, eps = scalar(group["lr"]), group["lr_decay"], group["eps"]
        weight_decay, maximize = group["weight_decay"], group["maximize"]
        workspace = self._workspace
        for p, grad in grads_of(group, "Adagrad", sparse_ok=True):
            data = p._data
            xp = get_array_module(data)
            state = self.state[p] or self._init_state(p)
            step_t = state["step"]._data
            step_t += 1
            clr = lr / (1 + (step_t.item() - 1) * lr_decay)
            state_sum = state["sum"]._data
            if getattr(grad, "is_sparse", False):
                if weight_decay != 0:
                    raise RuntimeError("weight_decay option is not compatible with sparse "
                                       "gradients")
                g = grad.coalesce()
                rows = g._idx[0] if g._idx.shape[0] == 1 else tuple(g._idx)
                values = -g._vals if maximize else g._vals
                state_sum[rows] += values * values
                data[rows] += -clr * (values / (xp.sqrt(state_sum[rows]) + eps))
                bump(p)
                continue
            g = effective_grad(grad, data, maximize, weight_decay, workspace)
            scratch = workspace.like(data)
            xp.multiply(g, g, out=scratch)
            state_sum += scratch
            xp.sqrt(state_sum, out=scratch)
            scratch += eps
            xp.divide(g, scratch, out=scratch)
            scratch *= -clr
            data += scratch
            bump(p)
