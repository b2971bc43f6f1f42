"""Muon: momentum whose update is orthogonalised by a Newton-Schulz iteration (2-D only)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .._core.backend import get_array_module
from ._checks import check_tensor_lr
from ._kernels import Workspace, bump, lerp_, scalar, state_tensor
from .optimizer import Optimizer

__all__ = ["Muon"]


class Muon(Optimizer):
    """Muon, PyTorch's update rule (``torch.optim.Muon``)::

        buf = momentum * buf + (1 - momentum) * g
        u = lerp(g, buf, momentum) if nesterov else buf
        p = p * (1 - lr * weight_decay) - adjusted_lr * NewtonSchulz(u)

    The Newton-Schulz iteration runs in bfloat16, as PyTorch's does; NumPy has no bfloat16, so
    it runs in float32 with every result rounded to bfloat16 (round to nearest even).
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients=(3.4445, -4.775, 2.0315), eps: float = 1e-7, ns_steps: int = 5,
                 adjust_lr_fn: str | None = None) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                                  "nesterov": nesterov, "ns_coefficients": ns_coefficients,
                                  "eps": eps, "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn})
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")
        self._workspace = Workspace()

    def _update_group(self, group: dict) -> None:
        lr, weight_decay, momentum = scalar(group["lr"]), group["weight_decay"], group["momentum"]
        pairs = []
        for p in group["params"]:
            if p._grad is None:
                continue
            if p._data.dtype.kind == "c":
                raise RuntimeError("Muon does not support complex parameters")
            if getattr(p._grad, "is_sparse", False):
                raise RuntimeError("Muon does not support sparse gradients")
            pairs.append((p, p._grad._data))
        for p, grad in pairs:
            data = p._data
            xp = get_array_module(data)
            if grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = state_tensor(xp.zeros_like(grad))
            buf = state["momentum_buffer"]._data
            lerp_(buf, grad, 1 - momentum, self._workspace.like(buf))
            if group["nesterov"]:
                update = grad.copy()
                lerp_(update, buf, momentum, self._workspace.like(buf))
            else:
                update = buf
            ortho = _zeropower_via_newtonschulz(xp, update, group["ns_coefficients"],
                                                group["ns_steps"], group["eps"])
            adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], data.shape)
            data *= 1 - lr * weight_decay
            data += -adjusted_lr * ortho
            bump(p)


def _bf16(xp, array):
    """Round float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    bits = xp.ascontiguousarray(array, dtype=xp.float32).view(xp.uint32)
    bits = (bits + xp.uint32(0x7FFF) + ((bits >> 16) & xp.uint32(1))) & xp.uint32(0xFFFF0000)
    return bits.view(xp.float32)


def _zeropower_via_newtonschulz(xp, grad, ns_coefficients, ns_steps: int, eps: float):
    """PyTorch's quintic Newton-Schulz iteration towards the nearest semi-orthogonal matrix."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho = _bf16(xp, grad.astype(np.float32))
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        ortho = ortho.T
    norm = _bf16(xp, xp.sqrt(xp.sum(ortho * ortho, dtype=xp.float32)))
    ortho = _bf16(xp, ortho / _bf16(xp, xp.maximum(norm, xp.float32(eps))))
    for _ in range(ns_steps):
        gram = _bf16(xp, ortho @ ortho.T)
        gram_update = _bf16(xp, b * gram + c * (gram @ gram))
        ortho = _bf16(xp, a * ortho + gram_update @ ortho)
    return ortho.T if tall else ortho


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio
