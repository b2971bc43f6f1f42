"""SparseAdam: Adam for sparse gradients, updating moments and weights of touched rows only."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ._checks import check_tensor_lr
from ._kernels import bump, scalar, state_tensor
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Lazy Adam for ``Embedding(sparse=True)``: each step updates the two moment estimates and
    the weights only in the rows the gradient holds (PyTorch's ``SparseAdam``), so its cost is
    O(rows used), not O(table). Rows that go unused keep stale moments, which is the point.
    As in PyTorch, the per-parameter ``step`` is a Python int."""

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p._data.dtype.kind == "c"]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def _update_group(self, group: dict) -> None:
        lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
        pairs = [(p, p._grad) for p in group["params"] if p._grad is not None]
        if any(not getattr(grad, "is_sparse", False) for _, grad in pairs):
            raise RuntimeError("SparseAdam does not support dense gradients, please consider "
                               "Adam instead")
        for p, grad in pairs:
            xp = get_array_module(p._data)
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = state_tensor(xp.zeros_like(p._data))
                state["exp_avg_sq"] = state_tensor(xp.zeros_like(p._data))
            state["step"] += 1
            g = grad.coalesce()
            if g._vals.size == 0:
                continue
            rows = g._idx[0] if g._idx.shape[0] == 1 else tuple(g._idx)
            values = -g._vals if group["maximize"] else g._vals
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            old_avg, old_avg_sq = exp_avg[rows], exp_avg_sq[rows]
            avg_update = (values - old_avg) * (1 - beta1)
            exp_avg[rows] += avg_update
            avg_sq_update = (values * values - old_avg_sq) * (1 - beta2)
            exp_avg_sq[rows] += avg_sq_update
            numer = avg_update + old_avg
            denom = xp.sqrt(avg_sq_update + old_avg_sq) + eps
            step = state["step"]
            step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
            p._data[rows] += -step_size * (numer / denom)
            bump(p)
