"""``linalg.vector_norm``: the p-norm over some dimensions (gradnb's ``norm`` underneath)."""

from __future__ import annotations

from . import reductions as red
from ._common import Tensor

__all__ = ["vector_norm"]


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``sum(|x| ** ord) ** (1 / ord)`` over ``dim`` (all dimensions by default); ``ord`` may
    be ``inf``, ``-inf`` or 0 (the count of nonzeros)."""
    return red.norm(x, ord, dim, keepdim, dtype=dtype)
