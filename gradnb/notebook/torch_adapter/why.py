"""``%why`` for torch tensors, from the facts torch itself keeps and what the torch watcher saw.

The reasons come from ``requires_grad``, ``is_leaf``, ``retains_grad``, ``grad_fn`` and the
gradient's values, in the same words as gradnb's ``%why``; for torch code that ran watched
(inside ``%%trace``, or after ``%watch on``) the torch watcher (:mod:`.watch`) adds the line
that made each node and the cuts (``detach()``, ``.item()``, ``no_grad``) with their lines.
"""

from __future__ import annotations

import numpy as np

from gradnb.notebook.explain.why import Reason, cut_leaf_reason, cut_value_reason
from gradnb.notebook.naming import Names
from gradnb.notebook.torch_objects import to_numpy

__all__ = ["explain_torch"]

# Nodes whose output is a copy of a leaf (moved, cast or cloned): its gradient goes to the leaf.
_COPIES = {"ToCopyBackward0", "CloneBackward0", "AliasBackward0"}


def explain_torch(name: str, t, names: Names, watch=None) -> Reason:
    """The :class:`Reason` for one torch tensor (``watch``: the torch watcher, by default the
    process's)."""
    if watch is None:
        # Imports torch, which is loaded already: ``t`` is a torch tensor (import time).
        from gradnb.notebook.torch_adapter.watch import torch_watcher

        watch = torch_watcher()
    if not t.requires_grad:
        cut = watch.cut_of(t)
        return cut_value_reason(name, cut, names) if cut is not None else _no_grad_reason(name, t)
    if t.grad_fn is not None and not t.retains_grad:
        return _non_leaf_reason(name, t, names, watch)
    if t.grad is None:
        cuts = watch.cuts_from_leaf(t)
        if cuts:
            return cut_leaf_reason(name, cuts[0], names)
        return Reason(name, f"{name}: .grad is None: backward has not reached it (backward not "
                            "run yet, or it is not used on the path to the output that was "
                            "backpropagated)",
                      [(f"torch fills .grad only on leaves that the output depends on; {name} "
                       "may be an unused layer or parameter, or zero_grad() reset it")],
                      "call loss.backward() (or %backward loss) on an output computed from "
                      f"{name}")
    return _value_reason(name, to_numpy(t.grad))


def _no_grad_reason(name: str, t) -> Reason:
    if t.is_inference():
        return Reason(name, f"{name}: requires_grad=False because it is an inference tensor "
                            "(made under torch.inference_mode)", [],
                      "compute it outside inference_mode, or clone() it there first")
    return Reason(name, f"{name}: requires_grad=False, so autograd does not track it and its "
                        ".grad stays None",
                  [(f"{name} is a leaf created without requires_grad=True, or a value cut from "
                   "the graph (detach(), .data, no_grad); torch does not record which")],
                  f"create it with requires_grad=True, or call {name}.requires_grad_() before "
                  "using it")


def _non_leaf_reason(name: str, t, names: Names, watch) -> Reason:
    node = t.grad_fn
    node_name = type(node).__name__
    where = watch.where_of(node)
    at = f" at {where}" if where is not None else ""
    leaf = next((getattr(nxt, "variable", None) for nxt, _ in node.next_functions
                 if type(nxt).__name__ == "AccumulateGrad"), None)
    leaf_name = names.of_tensor(leaf) if leaf is not None else None
    head = f"{name}: .grad is None because {name} is not a leaf ({node_name}{at})"
    if leaf is not None and node_name in _COPIES:
        other = leaf_name or "the original leaf"
        return Reason(name, head, [
            (f"{name} is a copy of {other} made by {node_name}: it is no longer the leaf "
            f"(moved or copied), so the gradient goes to {other}.grad")],
            f"read {other}.grad, or make the leaf with the dtype/device you need", where)
    return Reason(name, head, [
        (f"{name} is computed by {node_name}; backward fills .grad only on leaves (tensors "
        "created with requires_grad=True)")],
        f"call {name}.retain_grad() before backward to keep its gradient", where)


def _value_reason(name: str, data: np.ndarray) -> Reason:
    if data.dtype.kind in "fc" and not np.isfinite(data).all():
        kind = "NaN" if np.isnan(data).any() else "Inf"
        return Reason(name, f"{name}: .grad has {kind} values",
                      ["torch does not say which node made it non-finite"],
                      "run the backward under torch.autograd.detect_anomaly() to name the node, "
                      "and keep that op's inputs in its domain (log of 0, sqrt at 0, 0/0)")
    if not data.any():
        return Reason(name, f"{name}: .grad is all zero",
                      [("a node on the path blocked it (a dead ReLU, a saturated clamp, a mask), "
                       "or the output does not depend on its value")],
                      "check the inputs of the ops between it and the loss")
    return Reason(name, f"{name}: .grad is finite and not all zero: nothing unusual",
                  [(f"norm {float(np.linalg.norm(data)):.4g}; gradients accumulate over "
                   "backward passes until zero_grad()")])
