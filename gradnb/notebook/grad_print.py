"""A gradient's fingerprint, taken when a view is made, so two views can say what changed.

Comparing live ``.grad`` tensors later would compare a gradient with itself (the tensor is
the same object, overwritten by later steps), and copying every gradient would double the
memory of a model. A fingerprint is a few numbers and a hash of the bytes instead.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from gradnb.autograd.trace import Trace
from gradnb.notebook.formatting import format_number, format_shape, l2_norm
from gradnb.notebook.tensors import values

__all__ = ["GradPrint", "fingerprint", "leaf_grads"]


@dataclass(frozen=True)
class GradPrint:
    """A gradient's shape, dtype, norm and a digest of its values (None: no ``.grad``)."""

    shape: tuple[int, ...]
    dtype: str
    norm: float
    digest: str

    def describe(self) -> str:
        """``(3,) float32, norm 1.5``."""
        return f"{format_shape(self.shape)} {self.dtype}, norm {format_number(self.norm)}"


def fingerprint(grad) -> GradPrint | None:
    """The fingerprint of a ``.grad`` tensor (None stays None)."""
    if grad is None:
        return None
    array = values(grad)
    digest = hashlib.sha1(array.tobytes() + str(array.shape).encode()).hexdigest()[:16]
    return GradPrint(tuple(array.shape), array.dtype.name, l2_norm(array), digest)


def leaf_grads(trace: Trace, built) -> dict[str, GradPrint | None]:
    """Named leaves of ``trace`` (labels as ``built`` drew them) and their gradients now."""
    prints: dict[str, GradPrint | None] = {}
    for leaf in trace.leaves:
        box = built.box_of.get(leaf.key)
        tensor = leaf.tensor()
        if box is None or tensor is None or not leaf.requires_grad:
            continue
        node = built.graph.nodes[box]
        if node.kind == "leaf_grad" and node.label != "parameter":
            prints[node.label] = fingerprint(tensor.grad)
    return prints
