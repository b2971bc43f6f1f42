"""Adafactor: second moments of matrices kept as row and column factors (sublinear memory)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ._checks import check_tensor_lr
from ._kernels import Workspace, bump, effective_grad, scalar, state_tensor, step_counter
from .optimizer import Optimizer

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor, PyTorch's update rule (``torch.optim.Adafactor``): for a matrix gradient the
    second-moment estimate is the outer product of running row and column means of ``g^2``
    (``row_var``, ``col_var``), for a vector a running ``variance``; the update
    ``g / sqrt(v)`` is clipped to RMS ``d`` and scaled by ``max(eps2, RMS(p)) * min(lr, t^-1/2)``.
    """

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps=(None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize})
        self._workspace = Workspace()

    def _update_group(self, group: dict) -> None:
        lr, weight_decay, d = scalar(group["lr"]), group["weight_decay"], group["d"]
        eps1, eps2 = group["eps"]
        pairs = []
        for p in group["params"]:
            if p._grad is None:
                continue
            if p._data.dtype.kind == "c":
                raise RuntimeError("Adafactor does not support complex parameters")
            if getattr(p._grad, "is_sparse", False):
                raise RuntimeError("Adafactor does not support sparse gradients")
            pairs.append((p, p._grad._data))
        for p, grad in pairs:
            data = p._data
            xp = get_array_module(data)
            state = self.state[p]
            if not state:
                state["step"] = step_counter(xp)
                if grad.ndim > 1:
                    state["row_var"] = state_tensor(xp.zeros(grad.shape[:-1] + (1,), grad.dtype))
                    state["col_var"] = state_tensor(
                        xp.zeros(grad.shape[:-2] + (1, grad.shape[-1]), grad.dtype))
                else:
                    state["variance"] = state_tensor(xp.zeros_like(grad))
            g = effective_grad(grad, data, group["maximize"], 0, self._workspace)
            epsilon1 = float(np.finfo(data.dtype).eps) if eps1 is None else eps1
            step_t = state["step"]._data
            step_t += 1
            step = step_t.item()
            one_minus_beta2_t = step ** group["beta2_decay"]
            rho_t = min(lr, 1 / (step ** 0.5))
            alpha = max(eps2, _norm(xp, data) / (data.size ** 0.5)) * rho_t
            if weight_decay != 0:
                data *= 1 - lr * weight_decay
            if grad.ndim > 1:
                row_var, col_var = state["row_var"]._data, state["col_var"]._data
                squared = g * g
                # torch.norm(...).square_(): the square root's rounding is part of the result.
                row_mean = xp.sqrt(squared.sum(axis=-1, keepdims=True)) ** 2 / g.shape[-1]
                _lerp(xp, row_var, row_mean, one_minus_beta2_t)
                col_mean = xp.sqrt(squared.sum(axis=-2, keepdims=True)) ** 2 / g.shape[-2]
                _lerp(xp, col_var, col_mean, one_minus_beta2_t)
                update = row_var @ col_var
                update /= xp.maximum(row_var.mean(axis=-2, keepdims=True), epsilon1)
            else:
                variance = state["variance"]._data
                _lerp(xp, variance, g * g, one_minus_beta2_t)
                update = variance.copy()
            xp.maximum(update, epsilon1 * epsilon1, out=update)
            xp.sqrt(update, out=update)
            xp.divide(1.0, update, out=update)
            update *= g
            denom = max(1.0, _norm(xp, update) / ((update.size ** 0.5) * d))
            update *= -alpha / denom
            data += update
            bump(p)


def _norm(xp, array) -> float:
    return math.sqrt(float(xp.vdot(array.ravel(), array.ravel())))


def _lerp(xp, start, end, weight: float) -> None:
    """PyTorch's ``lerp_`` on small factor arrays (its two formulas; exact at weight 1)."""
    if weight < 0.5:
        start += weight * (end - start)
    else:
        xp.subtract(end, (end - start) * (1.0 - weight), out=start)
