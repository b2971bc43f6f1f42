"""Run one backward pass while watching it: which nodes ran, in what order, with which
gradients, which leaves it reached, and what it did to memory.

The recorder is an observer on the engine's event seam. Gradient values are summarised when
the event arrives (the engine reuses and frees its buffers right after), so a recorded step
never keeps an array alive.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gradnb._core.tensor import Tensor
from gradnb.autograd.memory import BackwardReport
from gradnb.autograd.trace import Trace, snapshot
from gradnb.notebook.explain.notes import rule_of, short_name
from gradnb.notebook.explain.watcher import watcher
from gradnb.notebook.formatting import format_shape, format_values, host_array

__all__ = ["BackwardRun", "Step", "backward_problem", "watched_backward"]


@dataclass(frozen=True)
class Step:
    """One node's backward: the gradients that flowed in and those it sent to its inputs."""

    key: int | None
    name: str
    incoming: tuple[str, ...]
    outgoing: tuple[str, ...]
    #: the trace key each outgoing gradient went to (None where the input needs no grad).
    targets: tuple[int | None, ...] = ()
    #: the node's local derivative in one line (``grad * result`` for ExpBackward0).
    rule: str = ""
    #: broadcast reductions the engine applied after the node: (input index, the gradient's
    #: shape as the node returned it, the input's shape, the summed gradient's summary).
    reductions: tuple[tuple[int, tuple, tuple, str], ...] = ()


@dataclass
class BackwardRun:
    """What one watched backward did. ``trace`` is the graph as it was before the call."""

    trace: Trace
    #: (trace key, output nr) of the tensor backward started from; None for a leaf.
    root: tuple[int, int] | None = None
    steps: list[Step] = field(default_factory=list)
    #: leaves whose ``.grad`` was written, with True when it was added to an earlier grad.
    leaves: list[tuple[Tensor, bool]] = field(default_factory=list)
    report: BackwardReport | None = None


class _Recorder:
    """Engine observer for one backward call."""

    def __init__(self, run: BackwardRun, keep_steps: bool) -> None:
        self.run = run
        self.keep_steps = keep_steps

    def node_executed(self, node, grad_outputs, grad_inputs) -> None:
        incoming = tuple(_summary(g) for g in grad_outputs) if self.keep_steps else ()
        outgoing = tuple(_summary(g) for g in grad_inputs) if self.keep_steps else ()
        trace = self.run.trace
        targets = tuple(None if nxt is None else trace.key_of(nxt)
                        for nxt, _ in node.next_functions)
        rule = rule_of(node) if self.keep_steps else ""
        reductions = _reductions(node, grad_inputs) if self.keep_steps else ()
        self.run.steps.append(Step(trace.key_of(node), short_name(node), incoming, outgoing, targets,
                                   rule, reductions))

    def grad_accumulated(self, tensor, grad, accumulated) -> None:
        self.run.leaves.append((tensor, bool(accumulated)))

    def backward_finished(self, report: BackwardReport) -> None:
        self.run.report = report


def watched_backward(
    root: Tensor,
    gradient: Tensor | None = None,
    *,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    keep_steps: bool = False,
) -> BackwardRun:
    """``root.backward(...)``, recording the graph first and the pass as it runs.

    ``keep_steps`` also summarises every node's incoming and outgoing gradients (for
    step-through); without it only the order of nodes is kept.
    """
    trace = snapshot([root])
    run = BackwardRun(trace)
    if root.grad_fn is not None:
        run.root = (trace.key_of(root.grad_fn), root._output_nr)
    with watcher().feeding(_Recorder(run, keep_steps)):
        root.backward(gradient, retain_graph=retain_graph, create_graph=create_graph)
    return run


def _reductions(node, grad_inputs) -> tuple:
    """The gradients the engine will sum back to their input's (smaller) broadcast shape."""
    if not node.fit_grads:
        return ()
    out = []
    for i, ((nxt, nr), g) in enumerate(zip(node.next_functions, grad_inputs)):
        meta = None if nxt is None or g is None else nxt.output_metadata(nr)
        if meta is None:
            continue
        shape = tuple(meta[0])
        data = host_array(g._data if isinstance(g, Tensor) else g)
        if tuple(data.shape) != shape:
            summed = _sum_to(data, shape)
            out.append((i, tuple(data.shape), shape, _summary(summed)))
    return tuple(out)


def _sum_to(data, shape: tuple) -> np.ndarray:
    """Sum ``data`` over the dimensions that broadcasting added or stretched from 1."""
    lead = data.ndim - len(shape)
    summed = data.sum(axis=tuple(range(lead))) if lead > 0 else data
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and summed.shape[i] != 1)
    if stretched:
        summed = summed.sum(axis=stretched, keepdims=True)
    return summed.reshape(shape)


def _summary(grad) -> str:
    if grad is None:
        return "None"
    data = host_array(grad._data if isinstance(grad, Tensor) else grad)
    return f"{format_shape(data.shape)} {format_values(data)}"


def backward_problem(root: object, gradient: object, label: str) -> str | None:
    """Why ``backward`` on ``root`` (named ``label``) would fail, or None if it can run.

    Checked before anything runs, so a rejected call frees no graph and touches no ``.grad``.
    """
    if not isinstance(root, Tensor):
        return f"{label} is a {type(root).__name__}, not a tensor"
    if not root.requires_grad:
        return f"{label} does not require grad (it is not computed from a tensor that does)"
    if gradient is None:
        if root.numel() != 1:
            return (f"{label} has shape {format_shape(root.shape)}; pass --gradient for a "
                    "non-scalar output")
        if not root.is_floating_point():
            return f"{label} is {root.dtype.name}; backward needs a floating-point output"
    else:
        if not isinstance(gradient, Tensor):
            return f"--gradient is a {type(gradient).__name__}, not a tensor"
        if tuple(gradient.shape) != tuple(root.shape):
            return (f"--gradient has shape {format_shape(gradient.shape)} but {label} has shape "
                    f"{format_shape(root.shape)}")
    if root.grad_fn is not None and _graph_freed(root.grad_fn):
        return (f"the graph behind {label} was already freed by an earlier backward; run the "
                "forward pass again (or pass --retain-graph to keep a graph)")
    return None


def _graph_freed(start) -> bool:
    seen = set()
    stack = [start]
    while stack:
        node = stack.pop()
        seq = node._sequence_nr()
        if seq in seen:
            continue
        seen.add(seq)
        if node.released:
            return True
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return False
