"""Ops whose derivative is written in gradnb's own tensor ops (``TensorRule``).

A ``TensorRule`` node sees tensors in its ``rule`` in both a first-order backward (grad mode off:
nothing records) and under ``create_graph=True`` (grad mode on: the rule's ops record), so
every op defined this way is differentiable to any order. ``attach`` wraps an op's raw output
arrays and records the node: forward and derivative of each op sit side by side in its family
module, and the families only use these two names.
"""

from __future__ import annotations

from ..autograd.graph import Node, record, saved_input, saved_output
from ._common import Tensor, emit, events, grad_state, wrap

__all__ = ["TensorRule", "ZeroGradBackward", "attach", "needs_grad"]

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
        from .creation import zeros

        return tuple(None if meta is None else zeros(meta[0], dtype=g.dtype, device=g.device)
                     for meta in self._meta)


def needs_grad(*inputs) -> bool:
    """Whether an op over ``inputs`` (tensors, None or constants) records a node."""
    return grad_state.enabled and any(isinstance(t, Tensor) and t._requires_grad for t in inputs)


def attach(cls, inputs, outputs, save=(), **attrs):
    """Wrap ``outputs`` (one array or a tuple of arrays) as tensors, recording a ``cls`` node over
    ``inputs`` (tensors; anything else is a constant) when grad mode is on and one of them
    requires grad. ``save`` lists what the rule gets as ``saved``: input tensors, or the ints of
    outputs (``0`` for the first). Returns a tensor, or a tuple for a tuple of outputs."""
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    tensors = [t if isinstance(t, Tensor) else None for t in inputs]
    if not needs_grad(*tensors):
        wrapped = tuple(wrap(o) for o in outs)
        return wrapped[0] if single else wrapped
    node = record(cls, tensors)
    node.num_outputs = len(outs)
    for k, v in attrs.items():
        setattr(node, k, v)
    wrapped = []
    for i, o in enumerate(outs):
        t = wrap(o, node)
        t._output_nr = i
        wrapped.append(t)
    node._saved = tuple(saved_output(wrapped[s]) if isinstance(s, int) else saved_input(s)
                        for s in save)
    if events.observers:
        emit(node, wrapped[0])
    return wrapped[0] if single else tuple(wrapped)
