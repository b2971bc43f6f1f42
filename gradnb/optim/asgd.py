"""ASGD: averaged stochastic gradient descent."""

from __future__ import annotations

from collections.abc import Iterable

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ._checks import check_not_differentiable, check_tensor_lr
from ._kernels import Workspace, bump, effective_grad, grads_of, scalar, state_tensor, step_counter
from .optimizer import Optimizer

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD, PyTorch's update rule::

        p = p * (1 - lambd * eta) - eta * g
        ax = ax + mu * (p - ax)   (ax = p while mu == 1)
        eta = lr / (1 + lambd * lr * t)^alpha;   mu = 1 / max(1, t - t0)

    ``eta`` and ``mu`` are 0-d float32 tensors in the state, as in PyTorch (so ``eta`` is
    rounded to float32 between steps); ``ax`` holds the averaged parameters.
    """

    _capturable_holders = "params, mus, etas, and state_steps"

    def __init__(self, params: Iterable, lr: float | Tensor = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_not_differentiable(differentiable, "ASGD")
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})
        self._workspace = Workspace()

    def _update_group(self, group: dict) -> None:
        lr, lambd, alpha, t0 = scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"]
        workspace = self._workspace
        for p, grad in grads_of(group, "ASGD"):
            data = p._data
            xp = get_array_module(data)
            state = self.state[p]
            if not state:
                state["step"] = step_counter(xp)
                state["eta"] = step_counter(xp, lr)
                state["mu"] = step_counter(xp, 1.0)
                state["ax"] = state_tensor(xp.zeros_like(data))
            step_t, eta, mu = state["step"]._data, state["eta"]._data, state["mu"]._data
            ax = state["ax"]._data
            step_t += 1
            g = effective_grad(grad, data, group["maximize"], group["weight_decay"], workspace)
            eta_value = eta.item()
            data *= 1 - lambd * eta_value
            scratch = workspace.like(data)
            xp.multiply(g, -eta_value, out=scratch)
            data += scratch
            bump(p)
            if mu.item() != 1:
                xp.subtract(data, ax, out=scratch)
                scratch *= mu
                ax += scratch
            else:
                ax[...] = data
            step = step_t.item()
            # PyTorch goes through torch.as_tensor (float32) even when the state is float64.
            eta[...] = xp.float32(lr / ((1 + lambd * lr * step) ** alpha))
            mu[...] = xp.float32(1 / max(1, step - t0))
