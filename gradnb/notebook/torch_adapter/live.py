"""``%%trace`` on torch code: record torch's graph while the cell runs.

The torch watcher's ``TorchFunctionMode`` (:mod:`.watch`) sees every torch function the cell calls (operators, ``torch.*``,
``nn.functional``, tensor methods and properties such as ``.T``). After each call the new
backward nodes behind its outputs are recorded, inputs first, so the drawing grows op by op and
settles on exactly torch's ``grad_fn`` graph (a composite such as ``cross_entropy`` shows the
nodes torch made for it: ``LogSoftmaxBackward0`` and ``NllLossBackward0``). A node is new when
its sequence number is above the one torch had reached when the trace began; older nodes are
drawn as the trace's inputs.

Global module forward hooks report every ``nn.Module`` call to the trace as gradnb's own modules
do (:meth:`~gradnb.autograd.trace.Trace.module_entered`), so every op carries the module calls
that ran it in its ``scope`` and the views group a module's ops under its name (``model.0``). ``backward()`` and ``autograd.grad`` called in the cell are measured as ``%backward``
measures them (:func:`~.backward.measured`), logged for ``%memory``, and mark the recorded ops
whose saved tensors they freed.
"""

from __future__ import annotations

import inspect
from typing import Self

import torch
from torch.nn.modules import module as nn_module
from torch.utils._pytree import tree_leaves

from gradnb.notebook.torch_adapter.backward import log_report, measured
from gradnb.notebook.torch_adapter.records import TorchTrace, new_nodes
from gradnb.notebook.torch_adapter.saved import is_released, reachable_nodes
from gradnb.notebook.torch_adapter.watch import torch_watcher

__all__ = ["LiveTorchTrace", "current_sequence_number"]


def current_sequence_number() -> int:
    """The sequence number torch gives the next backward node made on this thread, minus one."""
    with torch.enable_grad():
        return torch.zeros((), requires_grad=True).exp().grad_fn._sequence_nr()


class LiveTorchTrace(TorchTrace):
    """A :class:`~.records.TorchTrace` that records while active (``with LiveTorchTrace():``);
    ``listeners`` are called with it after every call that recorded new ops."""

    def __init__(self) -> None:
        super().__init__()
        self._feeding = None
        self._hooks: list = []

    @property
    def active(self) -> bool:
        """Whether the trace is recording."""
        return self._feeding is not None

    def start(self) -> Self:
        """Begin recording (idempotent)."""
        if self._feeding is None:
            self.start_sequence = current_sequence_number()
            self._hooks = [
                nn_module.register_module_forward_pre_hook(
                    lambda module, _args: self.module_entered(module)),
                nn_module.register_module_forward_hook(
                    lambda module, _args, _out: self.module_exited(module), always_call=True),
            ]
            # The torch watcher's mode feeds the trace: one mode watches and records.
            self._feeding = torch_watcher().feeding(self)
            self._feeding.__enter__()
        return self

    def stop(self) -> None:
        """Stop recording (idempotent)."""
        if self._feeding is not None:
            feeding, self._feeding = self._feeding, None
            feeding.__exit__(None, None, None)
            for handle in self._hooks:
                handle.remove()
            self._hooks = []
            self._scope = []

    def _is_new(self, node) -> bool:
        return (type(node).__name__ != "AccumulateGrad"
                and node._sequence_nr() > self.start_sequence and self.key_of(node) is None)

    def record_outputs(self, result) -> None:
        """Record the new nodes behind the tensors in ``result`` (a call's return value)."""
        outputs = [t for t in tree_leaves(result)
                   if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        nodes = new_nodes((t.grad_fn for t in outputs), self._is_new)
        if not nodes:
            return
        scope = tuple(self._scope)
        for node in nodes:
            self.add_node(node, scope=scope,
                          output_tensors=[t for t in outputs if t.grad_fn is node])
        for listener in tuple(self.listeners):
            listener(self)

    def run_backward(self, func, args, kwargs):
        """Run a backward call made in the cell, measuring and logging what it freed."""
        bound = inspect.signature(func).bind(*args, **kwargs)
        roots = bound.arguments.get("self", bound.arguments.get(
            "tensors", bound.arguments.get("outputs")))
        roots = [roots] if isinstance(roots, torch.Tensor) else list(roots)
        retain = bound.arguments.get("retain_graph")
        keep = bool(bound.arguments.get("create_graph", False)) if retain is None else retain
        nodes = reachable_nodes([t.grad_fn for t in roots])
        result = []
        report = measured(lambda: result.append(func(*args, **kwargs)), roots, keep,
                          roots[0].device)
        report.nodes_executed = len(nodes)  # ops and AccumulateGrad, as gradnb counts them
        self.backward_reports.append(report)
        if not keep:
            self.mark_released(key for key in (self.key_of(n) for n in nodes if is_released(n))
                               if key is not None)
        log_report(report)
        return result[0]

