"""Ops whose derivative is written in gradnb's own tensor ops (``TensorRule``).

A ``TensorRule`` node sees tensors in its ``rule`` in both a first-order backward (grad mode off:
nothing records) and under ``create_graph=True`` (grad mode on: the rule's ops record), so
every op defined this way is differentiable to any order. ``attach`` hands an op's raw output
arrays to the core's ``record`` with what the rule reads: forward and derivative of each op sit
side by side in its family module, and the families only use these names.
"""

from __future__ import annotations

from .._core.backend import get_array_module
from .._core.graph import Node, Output
from .._core.record import record
from ._common import Tensor

__all__ = ["TensorRule", "ZeroGradBackward", "attach"]

_make = Tensor._make


class TensorRule(Node):
    """A node whose ``rule(saved, *grads)`` returns one gradient (tensor or None) per input.

    ``saved`` is the list of tensors given to ``attach`` (inputs and outputs); ``grads`` holds one
    tensor (or None, for an output that got no gradient) per output.
    """

    __slots__ = ()

    def rule(self, saved, *grads):  # pragma: no cover - every op defines it
        raise NotImplementedError

    def backward(self, *grads):
        tensor_mode = any(isinstance(g, Tensor) for g in grads)
        gs = [g if g is None or isinstance(g, Tensor) else _make(g) for g in grads]
        like = next(g for g in gs if g is not None)
        saved = self.saved(like)
        out = self.rule(saved, *gs)
        if tensor_mode:
            return tuple(out)
        return tuple(None if g is None else (g._data if isinstance(g, Tensor) else g)
                     for g in out)


class ZeroGradBackward(TensorRule):
    """Piecewise-constant or random ops (rounded division, ``bernoulli``): the output stays in
    the graph, as PyTorch's does, with a zero gradient for every input."""

    __slots__ = ()

    def rule(self, saved, g):
        xp = get_array_module(g._data)
        return tuple(None if meta is None else type(g)._make(xp.zeros(meta[0], dtype=g._data.dtype))
                     for meta in self._meta)


def attach(cls, inputs, outputs, save=(), **attrs):
    """The tensor(s) around ``outputs`` (an array or a tuple of arrays), with a ``cls`` node over
    ``inputs`` (tensors; anything else is a constant) when grad is recorded. ``save`` lists what
    the rule gets as ``saved``: tensors (inputs or intermediates), or the ints of outputs
    (``0`` for the first)."""
    tensors = tuple(t if isinstance(t, Tensor) else None for t in inputs)
    spec = tuple(Output(s) if isinstance(s, int) else s for s in save)
    return record(cls, tensors, outputs, save=spec or None, attrs=attrs or None)
