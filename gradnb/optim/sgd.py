"""SGD with momentum, dampening, Nesterov and weight decay; sparse gradients supported."""

from __future__ import annotations

from collections.abc import Iterable

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ._checks import check_fused, check_not_differentiable, check_tensor_lr
from ._kernels import Workspace, bump, effective_grad, grads_of, scalar, state_tensor
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

    >>> import gradnb
    >>> w = gradnb.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = SGD([w], lr=0.1, momentum=0.9)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float | Tensor = 0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        check_tensor_lr(lr)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_not_differentiable(differentiable, "SGD")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)
        self._workspace = Workspace()
        # (array type, dtype) -> a flat scratch of ``_CHUNK`` elements; (array type, shape,
        # dtype) -> (array module, a view of it shaped so, or None when larger): see _descend.
        self._scratch: dict = {}

    def _update_group(self, group: dict) -> None:
        lr, weight_decay = scalar(group["lr"]), scalar(group["weight_decay"])
        momentum, dampening = group["momentum"], group["dampening"]
        nesterov, maximize = group["nesterov"], group["maximize"]
        workspace = self._workspace
        if momentum == 0 and weight_decay == 0 and not maximize:
            self._plain_step(group, lr)
            return
        for p, grad in grads_of(group, "SGD", sparse_ok=True):
            if getattr(grad, "is_sparse", False):
                if momentum == 0 and weight_decay == 0:
                    self._sparse_step(p, grad, lr, maximize)
                    continue
                grad = grad.to_dense()._data
            data = p._data
            g = effective_grad(grad, data, maximize, weight_decay, workspace)
            # (a whole-parameter scratch only for the formulas that need one)
            scratch = workspace.like(data) if dampening != 0 or nesterov else None
            if momentum != 0:
                state = self.state[p]
                saved = state.get("momentum_buffer")
                if saved is None:
                    buf = g.copy()
                    state["momentum_buffer"] = state_tensor(buf)
                else:
                    buf = saved._data
                    buf *= momentum
                    if dampening == 0:
                        buf += g
                    else:
                        get_array_module(data).multiply(g, 1 - dampening, out=scratch)
                        buf += scratch
                if nesterov:
                    get_array_module(data).multiply(buf, momentum, out=scratch)
                    scratch += g
                    g = scratch
                else:
                    g = buf
            self._descend(p, g, lr)

    def _plain_step(self, group: dict, lr) -> None:
        """``p.add_(grad, alpha=-lr)`` for each parameter: plain SGD (no momentum, weight decay
        or maximize), the same two NumPy calls per parameter as the general loop without its
        per-parameter bookkeeping (a measurable share of a small-batch step)."""
        descend = self._descend
        for p in group["params"]:
            grad = p._grad
            if grad is None:
                continue
            if getattr(grad, "is_sparse", False):
                self._sparse_step(p, grad, lr, False)
                continue
            descend(p, grad._data, lr)

    @staticmethod
    def _sparse_step(p: Tensor, grad, lr, maximize: bool) -> None:
        """``p[rows] -= lr * values``: O(rows touched), not O(table)."""
        g = grad.coalesce()
        rows = g._idx[0] if g._idx.shape[0] == 1 else tuple(g._idx)
        step = lr * g._vals
        p._data[rows] += step if maximize else -step
        bump(p)


    def _descend(self, p: Tensor, g, lr) -> None:
        """``p.add_(g, alpha=-lr)``, counted as an in-place write so graphs that saved ``p``
        refuse it. NumPy has no fused ``p += a * g``: ``-lr * g`` goes through one flat scratch
        of at most ``_CHUNK`` elements per dtype, a block at a time, so the optimizer holds no
        parameter-sized buffer between steps (PyTorch's ``add_`` holds none either)."""
        data = p._data
        shaped = self._scratch.get((type(data), data.shape, data.dtype))
        if shaped is None:
            shaped = self._scratch_for(data)
        xp, scratch = shaped
        if scratch is not None:  # (a parameter of at most ``_CHUNK`` elements: the most)
            xp.multiply(g, -lr, out=scratch)
            data += scratch
        elif data.flags.c_contiguous and g.flags.c_contiguous and g.shape == data.shape:
            chunk = self._scratch[(type(data), data.dtype)]
            flat, flat_g = data.reshape(-1), g.reshape(-1)
            n = flat.size
            for start in range(0, n, _CHUNK):
                stop = min(start + _CHUNK, n)
                block = chunk[:stop - start]
                xp.multiply(flat_g[start:stop], -lr, out=block)
                flat[start:stop] += block
        else:  # (a strided parameter or gradient: a temporary, once)
            data += g * -lr
        bump(p)

    def _scratch_for(self, data) -> tuple:
        """``(array module, scratch)`` for parameters shaped like ``data``: a view of the flat
        scratch of ``data``'s dtype, shaped as ``data``; None for a parameter larger than it.
        Kept by (array type, shape, dtype), so a step makes no views."""
        xp = get_array_module(data)
        chunk = self._scratch.get((type(data), data.dtype))
        if chunk is None:
            chunk = self._scratch[(type(data), data.dtype)] = xp.empty(_CHUNK, data.dtype)
        scratch = chunk[:data.size].reshape(data.shape) if data.size <= _CHUNK else None
        shaped = self._scratch[(type(data), data.shape, data.dtype)] = (xp, scratch)
        return shaped


# 64 Ki elements: a few blocks for the largest layers of an MLP (not a call per few kB), and a
# scratch that stays in a core's L2 cache between the multiply and the add.
_CHUNK = 1 << 16
