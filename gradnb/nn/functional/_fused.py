"""Plumbing shared by the fused ops of ``nn.functional``.

A fused op computes its forward on raw arrays and records one node whose derivative is written
by hand (for speed, memory, or numerical stability), exactly like the ops in ``gradnb.ops``:
through ``gradnb._core.record.record``.
"""

from __future__ import annotations

from ...ops._common import Tensor

__all__ = ["Tensor", "const_like"]


def const_like(array, like):
    """``array`` as a constant operand in the mode of ``like``: a tensor under
    ``create_graph=True``, the raw array in a first-order backward."""
    if isinstance(array, Tensor) or not isinstance(like, Tensor):
        return array
    return Tensor._make(array)
