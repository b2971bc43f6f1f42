"""``Tensor.apply_``, ``map_`` and ``map2_``: a Python callable run on every element, in place,
as PyTorch's CPU-only versions (the results are cast back to the tensor's dtype; a tensor that
requires grad is refused: no derivative can follow a Python function)."""

from __future__ import annotations

import builtins

import numpy as np

from .._core.backend import CPU, device_of
from .._core.graph import bump_version
from ._common import Tensor

__all__: list[str] = []


def _check(self: Tensor, op: str) -> np.ndarray:
    if self._requires_grad:
        raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use "
                           f"var.detach().{op}() instead.")
    if device_of(self._data) != CPU:
        raise TypeError(f"{op} is only implemented on CPU tensors")
    return self._data


def _write(self: Tensor, values) -> Tensor:
    data = self._data
    data[...] = np.asarray(values, dtype=object).astype(data.dtype).reshape(data.shape)
    bump_version(self)
    return self


def apply_(self: Tensor, callable) -> Tensor:
    """``self[i] = callable(self[i])`` for every element."""
    data = _check(self, "apply_")
    if not builtins.callable(callable):
        raise TypeError(f"'{type(callable).__name__}' object is not callable")
    return _write(self, [callable(v) for v in data.reshape(-1).tolist()])


def map_(self: Tensor, tensor: Tensor, callable) -> Tensor:
    """``self[i] = callable(self[i], tensor[i])``, ``tensor`` broadcast to ``self``."""
    data = _check(self, "map_")
    if tensor._requires_grad:  # (PyTorch refuses a grad-requiring operand too)
        _check(tensor, "map_")
    if tensor.dtype != self.dtype:
        raise TypeError(f"map_: expected {self.type()} for 'other' (got {tensor.type()})")
    other = tensor.expand(*self.shape)._data
    return _write(self, [callable(a, b) for a, b in zip(data.reshape(-1).tolist(),
                                                       other.reshape(-1).tolist())])


def map2_(self: Tensor, x: Tensor, y: Tensor, callable) -> Tensor:
    """``self[i] = callable(self[i], x[i], y[i])``, ``x`` and ``y`` broadcast to ``self``."""
    data = _check(self, "map2_")
    xs, ys = x.expand(*self.shape)._data, y.expand(*self.shape)._data
    return _write(self, [callable(a, b, c) for a, b, c in zip(
        data.reshape(-1).tolist(), xs.reshape(-1).tolist(), ys.reshape(-1).tolist())])


TENSOR_METHODS = {"apply_": apply_, "map_": map_, "map2_": map2_}
