"""Plumbing shared by the fused ops of ``nn.functional``.

A fused op computes its forward on raw arrays and records one node whose derivative is written
by hand (for speed, memory, or numerical stability), exactly like the ops in ``gradnb.ops``:
through ``gradnb._core.record.record``.
"""

from __future__ import annotations

import numpy as np

from ...ops._common import Tensor

__all__ = [
    "Tensor",
    "const_like",
    "first_order_only",
    "index_add_at",
]


def const_like(array, like):
    """``array`` as a constant operand in the mode of ``like``: a tensor under
    ``create_graph=True``, the raw array in a first-order backward."""
    if isinstance(array, Tensor) or not isinstance(like, Tensor):
        return array
    return Tensor._make(array)


def first_order_only(node, g) -> None:
    """Refuse a double backward through ``node`` (its rule runs on raw arrays only)."""
    if isinstance(g, Tensor):
        raise RuntimeError(  # noqa: TRY004 - PyTorch's error type for a missing derivative
            f"double backward through {node.name()} is not implemented in gradnb "
            "(create_graph=True is supported for the other nn.functional ops)"
        )


def index_add_at(target, index, values) -> None:
    """``target[index] += values`` where repeated indices all add (NumPy's ``add.at``)."""
    if type(target) is np.ndarray:
        np.add.at(target, index, values)
    else:
        import cupyx  # optional (GPU only): imported where a CuPy array is met

        cupyx.scatter_add(target, index, values)
