"""``%backward`` on a torch tensor: run ``loss.backward()`` while watching it.

What the report needs comes from torch itself: each backward node's ``register_hook`` gives the
order nodes ran in and the gradients that flowed through them; each leaf's
``register_post_accumulate_grad_hook`` says which ``.grad`` was written. Memory is measured on
storages: before the call every storage the graph saved is held by a
:class:`~torch.multiprocessing.reductions.StorageWeakRef`; afterwards a storage whose weak
reference expired was *freed* (torch gave the bytes back), one still alive but no longer saved by
the graph was *released* (the graph let go, something else, such as a leaf, still holds it), and
one the graph still saves is *retained* (``retain_graph=True``). On a GPU the CUDA allocator's
``memory_allocated`` before and after is reported next to these figures as a cross-check.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gradnb.autograd.memory import BackwardReport
from gradnb.notebook.backward_run import BackwardRun, Step
from gradnb.notebook.explain.notes import rule_of
from gradnb.notebook.formatting import format_bytes, format_shape, format_values
from gradnb.notebook.memory_meter import session_log
from gradnb.notebook.tensors import dtype_name
from gradnb.notebook.torch_adapter.records import TorchTrace, snapshot
from gradnb.notebook.torch_adapter.saved import graph_storages, is_released, reachable_nodes
from gradnb.notebook.torch_objects import to_numpy

__all__ = ["TorchBackwardReport", "backward_problem", "log_report", "measured", "watched_backward"]


@dataclass
class TorchBackwardReport(BackwardReport):
    """A backward report for torch, with the CUDA allocator's view where a GPU ran it:
    ``allocated_delta`` is ``torch.cuda.memory_allocated()`` after minus before (new ``.grad``
    buffers in, freed activations out, each rounded up to the allocator's 512-byte blocks)."""

    allocated_delta: int | None = None

    @property
    def note(self) -> str:
        """The allocator cross-check as a phrase for the memory line (empty on the CPU)."""
        if self.allocated_delta is None:
            return ""
        sign = "+" if self.allocated_delta >= 0 else "-"
        return f"; CUDA allocator {sign}{format_bytes(abs(self.allocated_delta))}"


def backward_problem(root: object, gradient: object, label: str) -> str | None:
    """Why ``backward`` on the torch tensor ``root`` would fail, or None if it can run.

    Checked before anything runs, so a rejected call frees no graph and touches no ``.grad``.
    """
    if not root.requires_grad:
        return f"{label} does not require grad (it is not computed from a tensor that does)"
    if gradient is None:
        if root.numel() != 1:
            return (f"{label} has shape {format_shape(root.shape)}; pass --gradient for a "
                    "non-scalar output")
        if not (root.is_floating_point() or root.is_complex()):
            return f"{label} is {dtype_name(root)}; backward needs a floating-point output"
    else:
        if not isinstance(gradient, torch.Tensor):
            return f"--gradient is a {type(gradient).__name__}, not a torch tensor"
        if tuple(gradient.shape) != tuple(root.shape):
            return (f"--gradient has shape {format_shape(gradient.shape)} but {label} has shape "
                    f"{format_shape(root.shape)}")
    if root.grad_fn is not None and any(
            is_released(node) for node in reachable_nodes([root.grad_fn])):
        return (f"the graph behind {label} was already freed by an earlier backward; run the "
                "forward pass again (or pass --retain-graph to keep a graph)")
    return None


def measured(run, roots, retain_graph: bool, device: torch.device) -> TorchBackwardReport:
    """Call ``run()`` (a backward from the tensors ``roots``) and report the bytes it freed,
    released and left retained; see the module docstring."""
    nodes = reachable_nodes([t.grad_fn for t in roots])
    before = graph_storages(nodes)
    on_gpu = device.type == "cuda" and torch.cuda.is_available()
    allocated = torch.cuda.memory_allocated(device) if on_gpu else None
    run()
    if on_gpu:
        torch.cuda.synchronize(device)
        allocated = torch.cuda.memory_allocated(device) - allocated
    retained = graph_storages(nodes)
    freed = sum(info.nbytes for info in before.values() if info.freed)
    released = sum(info.nbytes for key, info in before.items()
                   if not info.freed and key not in retained)
    return TorchBackwardReport(
        freed_bytes=freed, released_bytes=released,
        retained_bytes=sum(info.nbytes for info in retained.values()),
        device=str(device), retain_graph=bool(retain_graph), allocated_delta=allocated)


def log_report(report: TorchBackwardReport) -> None:
    """Add ``report`` to the session's memory log (``%memory``), if the extension is loaded."""
    log = session_log()
    if log is not None:
        log.backward_finished(report)


def watched_backward(
    root: torch.Tensor,
    gradient: torch.Tensor | None = None,
    *,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    keep_steps: bool = False,
) -> BackwardRun:
    """``root.backward(...)``, recording the graph first and the pass as it runs (the torch
    counterpart of :func:`gradnb.notebook.backward_run.watched_backward`)."""
    trace = snapshot([root])
    run = BackwardRun(trace)
    if root.grad_fn is not None:
        run.root = (trace.key_of(root.grad_fn), root.output_nr)
    handles = _watch(run, trace, root, keep_steps)
    keep = create_graph if retain_graph is None else retain_graph
    try:
        run.report = measured(
            lambda: root.backward(gradient, retain_graph=retain_graph,
                                  create_graph=create_graph),
            [root], keep, root.device)
    finally:
        for handle in handles:
            handle.remove()
    run.report.nodes_executed = len(run.steps) + len(run.leaves)  # ops and AccumulateGrad
    log_report(run.report)
    trace.mark_released(step.key for step in run.steps if not keep)
    return run


def _watch(run: BackwardRun, trace: TorchTrace, root: torch.Tensor, keep_steps: bool) -> list:
    """Hooks that fill ``run.steps`` and ``run.leaves`` while backward runs."""
    handles = []
    if root.grad_fn is None:  # a leaf: backward only writes its own .grad
        return [_leaf_hook(run, root)]
    for node in reachable_nodes([root.grad_fn]):
        if type(node).__name__ == "AccumulateGrad":
            handles.append(_leaf_hook(run, node.variable))
            continue
        targets = tuple(None if nxt is None else _target_key(trace, nxt)
                        for nxt, _ in node.next_functions)
        rule = rule_of(node) if keep_steps else ""
        step = _step_hook(run, trace.key_of(node), type(node).__name__, targets, rule,
                          keep_steps)
        handles.append(node.register_hook(step))
    return handles


def _step_hook(run: BackwardRun, key: int | None, name: str, targets: tuple, rule: str,
               keep_steps: bool):
    """A node hook appending the node's :class:`Step` (torch passes the gradients w.r.t. the
    node's inputs first, then those w.r.t. its outputs, which are what flowed in); ``rule``: the
    node's chain rule, that of gradnb's node of the same name."""

    def hook(grad_inputs, grad_outputs) -> None:
        incoming = tuple(map(_summary, grad_outputs)) if keep_steps else ()
        outgoing = tuple(map(_summary, grad_inputs)) if keep_steps else ()
        run.steps.append(Step(key, name, incoming, outgoing, targets, rule))

    return hook


def _leaf_hook(run: BackwardRun, leaf: torch.Tensor):
    had_grad = leaf.grad is not None
    return leaf.register_post_accumulate_grad_hook(
        lambda tensor: run.leaves.append((tensor, had_grad)))


def _target_key(trace: TorchTrace, node) -> int | None:
    if type(node).__name__ == "AccumulateGrad":
        return trace.leaf_key_of(node.variable)
    return trace.key_of(node)


def _summary(grad) -> str:
    if grad is None:
        return "None"
    return f"{format_shape(grad.shape)} {format_values(to_numpy(grad))}"
