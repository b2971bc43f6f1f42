"""SparseAdam: Adam for sparse gradients, updating moments and weights of touched rows only."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ..ops.creation import tensor
from ._checks import check_betas, check_eps, check_lr
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Lazy Adam for ``Embedding(sparse=True)``: each step updates the two moment estimates and
    the weights only in the rows the gradient holds (PyTorch's ``SparseAdam``), so its cost is
    O(rows used), not O(table). Rows that go unused keep stale moments, which is the point."""

    def __init__(self, params: Iterable, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "maximize": maximize})

    def _update_group(self, group: dict) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        for p in group["params"]:
            grad = p._grad
            if grad is None:
                continue
            if not getattr(grad, "is_sparse", False):
                raise RuntimeError("SparseAdam does not support dense gradients, please consider "
                                   "Adam instead")
            g = grad.coalesce()
            rows = g._idx[0] if g._idx.shape[0] == 1 else tuple(g._idx)
            values = -g._vals if group["maximize"] else g._vals
            state = self.state.get(p)
            if not state:
                xp = get_array_module(p._data)
                state = self.state[p] = {
                    "step": tensor(0.0),
                    "exp_avg": Tensor._make(xp.zeros_like(p._data)),
                    "exp_avg_sq": Tensor._make(xp.zeros_like(p._data)),
                }
            state["step"]._data += 1
            step = float(state["step"].item())
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            m = exp_avg[rows] + (values - exp_avg[rows]) * (1 - beta1)
            v = exp_avg_sq[rows] + (values * values - exp_avg_sq[rows]) * (1 - beta2)
            exp_avg[rows] = m
            exp_avg_sq[rows] = v
            step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
            denom = get_array_module(v).sqrt(v) + eps
            p._data[rows] -= step_size * m / denom
            p._version[0] += 1
