"""Flatten."""

from __future__ import annotations

from ..._core.tensor import Tensor, _wrap_dim
from .module import Module

__all__ = ["Flatten"]


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` into one (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        shape = tuple(input.shape)
        if not shape:
            return input.reshape(1)
        start = _wrap_dim(self.start_dim, len(shape))
        end = _wrap_dim(self.end_dim, len(shape))
        if start > end:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        merged = 1
        for s in shape[start:end + 1]:
            merged *= s
        return input.reshape(*shape[:start], merged, *shape[end + 1:])

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
