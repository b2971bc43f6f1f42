"""SGD with momentum, dampening, Nesterov and weight decay; sparse gradients supported."""

from __future__ import annotations

from collections.abc import Iterable

from .._core.tensor import Tensor
from ._checks import check_lr, check_weight_decay
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, PyTorch's update rule::

        g = grad + weight_decay * p
        buf = g (first step), else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
        p = p - lr * g

    A sparse gradient (``Embedding(sparse=True)``) without momentum or weight decay updates only
    the rows it holds; with either, the step is dense (both touch every row), and gives the same
    numbers as the dense gradient.
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, *,
                 maximize: bool = False, foreach=None, differentiable: bool = False,
                 fused=None) -> None:
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        check_weight_decay(weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                      "weight_decay": weight_decay, "nesterov": nesterov,
                                      "maximize": maximize, "foreach": foreach,
                                      "differentiable": differentiable, "fused": fused})

    def _update_group(self, group: dict) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        for p in group["params"]:
            grad = p._grad
            if grad is None:
                continue
            if getattr(grad, "is_sparse", False):
                if momentum == 0 and weight_decay == 0:
                    self._sparse_step(p, grad, lr, maximize)
                    continue
                grad = grad.to_dense()
            d_p = -grad._data if maximize else grad._data
            if weight_decay != 0:
                d_p = d_p + weight_decay * p._data
            if momentum != 0:
                state = self.state.setdefault(p, {})
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = Tensor._make(d_p.copy())
                else:
                    buf._data *= momentum
                    buf._data += (1 - dampening) * d_p
                d_p = d_p + momentum * buf._data if nesterov else buf._data
            p._data -= lr * d_p
            p._version[0] += 1

    @staticmethod
    def _sparse_step(p: Tensor, grad, lr: float, maximize: bool) -> None:
        """``p[rows] -= lr * values``: O(rows touched), not O(table)."""
        g = grad.coalesce()
        rows = g._idx[0] if g._idx.shape[0] == 1 else tuple(g._idx)
        step = lr * g._vals
        p._data[rows] += step if maximize else -step
        p._version[0] += 1
