"""``why(t)`` / ``%why NAME``: why a tensor's ``.grad`` is what it is, in PyTorch's terms.

The first line names the tensor and the cause; the lines under it say where it happened (the
cell and line the watcher saw) and how to fix it. The causes, in the order they are checked:

- ``requires_grad=False``: cut by ``detach()``/``.data``/``tensor(t)``, computed under
  ``no_grad``/``inference_mode``, or a leaf created without ``requires_grad=True``;
- ``not a leaf``: a computed tensor (``retain_grad()`` keeps its gradient), including a copy of
  a leaf (``.to()``, arithmetic on a parameter) that is no longer the leaf itself;
- ``.grad`` is None on a leaf: its path was cut (``.item()``, ``detach()``), it is ``not used``
  on the path to the output that was backpropagated (backward ran on another graph), ``.grad``
  was reset (``zero_grad``), or backward has not run yet;
- a ``NaN``/``Inf`` gradient: the first node whose backward made it non-finite, with the input
  values that did it (log of 0, sqrt at 0, 0/0);
- an all-``zero`` gradient: the node that blocked it (a dead ReLU, a saturated clamp, a mask);
- a gradient summed over several backward passes (no ``zero_grad``) or a plain fresh one.

What happened where is known for code that ran watched (see :mod:`.watcher`); without that the
reason is still given, only without the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape

import numpy as np

from gradnb._core.graph import AccumulateGrad
from gradnb._core.tensor import Tensor
from gradnb.notebook.explain.notes import short_name
from gradnb.notebook.explain.watcher import Watcher, watcher
from gradnb.notebook.explain.where import Where
from gradnb.notebook.formatting import host_array
from gradnb.notebook.naming import Names, caller_namespace

__all__ = ["Reason", "Why", "cut_leaf_reason", "cut_value_reason", "explain", "why"]

#: Nodes that only move or copy a tensor: a leaf passed through one is "no longer the leaf".
_COPIES = frozenset({"ToCopyBackward0", "CloneBackward0", "AliasBackward0", "ViewBackward0",
                     "ReshapeAliasBackward0", "ExpandBackward0", "TBackward0"})


@dataclass
class Reason:
    """One tensor's explanation: ``headline`` (first line), ``details`` and a ``fix``."""

    name: str
    headline: str
    details: list[str] = field(default_factory=list)
    fix: str = ""
    where: Where | None = None

    def text(self) -> str:
        """Headline, then indented details and the fix."""
        lines = [self.headline]
        if self.where is not None and self.where.source():
            lines.append(f"  {self.where}: {self.where.source()}")
        lines += [f"  {d}" for d in self.details]
        if self.fix:
            lines.append(f"  fix: {self.fix}")
        return "\n".join(lines)

    def to_html(self) -> str:
        """The same as HTML."""
        parts = [f"<p><b>{escape(self.headline)}</b></p>"]
        items = []
        if self.where is not None and self.where.source():
            items.append(f"{escape(str(self.where))}: <code>{escape(self.where.source())}</code>")
        items += [escape(d) for d in self.details]
        if self.fix:
            items.append(f"<b>fix:</b> {escape(self.fix)}")
        if items:
            parts.append("<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>")
        return '<div class="gradnb-why">' + "".join(parts) + "</div>"


class Why:
    """The explanations for several tensors, shown together (``%why a b``)."""

    def __init__(self, reasons: list[Reason]) -> None:
        self.reasons = reasons

    def text(self) -> str:
        """Each tensor's explanation, separated by blank lines."""
        return "\n\n".join(r.text() for r in self.reasons)

    def to_html(self) -> str:
        """Each tensor's explanation as HTML."""
        return "".join(r.to_html() for r in self.reasons)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self.to_html(), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()


def why(*tensors: Tensor, namespace: Mapping[str, object] | None = None) -> Why:
    """Explain the ``.grad`` of each tensor (named from ``namespace``, default the caller's).

    >>> import gradnb
    >>> x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    >>> h = x * 2
    >>> h.sum().backward()
    >>> print(why(h).text().splitlines()[0])
    h: .grad is None because h is not a leaf (MulBackward0)
    """
    bad = [type(t).__name__ for t in tensors if not isinstance(t, Tensor)]
    if bad:
        raise TypeError(f"why() explains tensors; got {bad[0]}")
    names = Names(caller_namespace(1) if namespace is None else namespace)
    return Why([explain(names.of_tensor(t) or f"tensor {i}", t, names)
                for i, t in enumerate(tensors)])


def explain(name: str, t: Tensor, names: Names, watch: Watcher | None = None) -> Reason:
    """The :class:`Reason` for one tensor (see the module docstring for the order)."""
    watch = watch or watcher()
    if not t.requires_grad:
        return _no_grad_reason(name, t, names, watch)
    if t.grad_fn is not None and not t.retains_grad:
        return _non_leaf_reason(name, t, names, watch)
    if t.grad is None:
        return _missing_reason(name, t, names, watch)
    return _value_reason(name, t, watch)


def _no_grad_reason(name: str, t: Tensor, names: Names, watch: Watcher) -> Reason:
    cut = watch.cut_of(t)
    if cut is not None:
        return cut_value_reason(name, cut, names)
    if t.is_inference():
        return Reason(name, f"{name}: requires_grad=False because it is an inference tensor "
                            "(made under inference_mode)", [],
                      "compute it outside inference_mode, or clone() it there first")
    return Reason(name, f"{name}: requires_grad=False, so autograd does not track it and its "
                        ".grad stays None",
                  [(f"{name} is a leaf created without requires_grad=True (or computed from "
                   "tensors that do not require grad)")],
                  f"create it with requires_grad=True, or call {name}.requires_grad_() "
                  "before using it")


def cut_value_reason(name: str, cut, names: Names) -> Reason:
    """Why the tensor ``name`` that ``cut`` produced has no gradient (either engine)."""
    if cut.block is not None:
        block = cut.block
        return Reason(name, f"{name}: requires_grad=False because it was computed under "
                            f"{block.switch}" + _at(cut.where),
                      [f"the op ran inside {block.describe()}",
                       (f"ops run while recording is off record no graph, so nothing flows back "
                        f"to {_leaf_names(cut, names)}")],
                      f"compute {name} outside {block.switch} if it needs a gradient",
                      cut.where)
    return Reason(name, f"{name}: requires_grad=False because {cut.how} cut it from the graph"
                        + _at(cut.where),
                  [(f"{name} has the value of {cut.source_name}'s output but no history: "
                   "gradients stop there (.detach(), .data and tensor(t) all do this)")],
                  f"use the original tensor instead of its {cut.how} copy where a gradient "
                  "must flow", cut.where)


def _non_leaf_reason(name: str, t: Tensor, names: Names, watch: Watcher) -> Reason:
    node = t.grad_fn
    where = watch.where_of(node)
    leaf = _direct_leaf(node)
    leaf_name = names.of_tensor(leaf) if leaf is not None else None
    head = f"{name}: .grad is None because {name} is not a leaf ({short_name(node)}{_at(where)})"
    if leaf is not None and short_name(node) in _COPIES:
        other = leaf_name or "the original leaf"
        return Reason(name, head, [
            (f"{name} is a copy of {other} made by {short_name(node)}: it is no longer the leaf "
            f"(moved or copied), so the gradient goes to {other}.grad")],
            f"read {other}.grad, or make the leaf with the dtype/device you need "
            f"(tensor(..., dtype=..., requires_grad=True)) and use that", where)
    if leaf is not None:
        other = leaf_name or "a leaf"
        return Reason(name, head, [
            (f"{name} was computed from {other} by {short_name(node)} (arithmetic on a leaf or "
            "parameter makes a new, non-leaf tensor); backward fills .grad only on leaves")],
            f"call {name}.retain_grad() before backward, or do the arithmetic under no_grad() "
            f"and keep {name} a leaf", where)
    return Reason(name, head, [
        (f"{name} is computed by {short_name(node)}; backward fills .grad only on leaves (tensors "
        "you created with requires_grad=True)")],
        f"call {name}.retain_grad() before backward to keep its gradient", where)


def cut_leaf_reason(name: str, cut, names: Names) -> Reason:
    """Why the leaf ``name`` got no gradient: ``cut`` took a value computed from it off the
    graph (either engine)."""
    if cut.block is not None:
        block = cut.block
        result = cut.result() if cut.result is not None else None
        made = names.of_tensor(result) if result is not None else None
        return Reason(name, f"{name}: .grad is None because its path was cut by "
                            f"{block.switch}{_at(cut.where)}, so it is not used on the path "
                            "backward took",
                      [(f"{name} was used there inside {block.describe()}: the op recorded no "
                        f"graph, so its result{f' ({made})' if made else ''} has no history "
                        f"and no gradient flows back to {name}")],
                      f"compute what needs a gradient outside {block.switch} (or under "
                      "enable_grad())", cut.where)
    return Reason(name, f"{name}: .grad is None because its path was cut by {cut.how}"
                        f"{_at(cut.where)}, so it is not used on the path backward took",
                  [(f"{cut.how} turned {cut.source_name}'s output (computed from {name}) into "
                   "a value without history; nothing flows back through it")],
                  f"keep the computation in tensors: use the tensor itself instead of "
                  f"{cut.how}", cut.where)


def _missing_reason(name: str, t: Tensor, names: Names, watch: Watcher) -> Reason:
    cuts = watch.cuts_from_leaf(t)
    if cuts:
        return cut_leaf_reason(name, cuts[0], names)
    passes = watch.passes_of(t)
    last = watch.backwards[-1] if watch.backwards else None
    if passes and last is not None and last.index == passes[-1]:
        record = watch.backward(passes[-1])
        return Reason(name, f"{name}: .grad is None: it was reset (zero_grad() sets it to None) "
                            f"after the backward{_at(record.where if record else None)}",
                      ["no backward has reached it since"],
                      "run the forward pass and backward again")
    if last is None:
        return Reason(name, f"{name}: .grad is None: backward has not run yet (no watched "
                            f"backward has reached {name})",
                      ["or backward ran unwatched on an output that does not use it"],
                      "call loss.backward() (or %backward loss) on an output computed from "
                      f"{name}")
    use = watch.last_use(t)
    details = []
    if use is not None:
        node, where = use
        details.append(f"{name} was last used by {short_name(node)}{_at(where)}, in a graph that "
                       f"backward did not go through (backward was run on another graph)")
    else:
        details.append(f"{name} is not an input of any op that led to the output "
                       "(an unused layer or parameter)")
    return Reason(name, f"{name}: .grad is None because {name} is not used on the path to the "
                        f"output that was backpropagated ({last.root_name}{_at(last.where)})",
                  details,
                  f"use {name} in the loss you call backward on, or leave it out of the "
                  "optimizer (an unused parameter keeps .grad None)", last.where)


def _value_reason(name: str, t: Tensor, watch: Watcher) -> Reason:
    grad = t.grad
    data = host_array(grad._data if isinstance(grad, Tensor) else grad)
    passes = watch.passes_of(t)
    record = watch.backward(passes[-1]) if passes else None
    blame = record.blame.get(id(t)) if record is not None else None
    if data.dtype.kind in "fc" and not np.isfinite(data).all():
        kind = "NaN" if np.isnan(data).any() else "Inf"
        if blame is None or blame.kind not in ("NaN", "Inf"):
            return Reason(name, f"{name}: .grad has {kind} values",
                          ["the backward was not watched, so the node is not known"],
                          "run it again with %backward (or inside %%trace) to find the node")
        return Reason(name, f"{name}: .grad has {kind}: first made non-finite by {blame.node}"
                            f"{_at(blame.where)}",
                      [(f"{blame.node}'s backward turned a finite gradient into {blame.kind}: "
                       f"{blame.detail}")],
                      blame.fix or "keep the inputs of that op in its domain",
                      blame.where)
    if not data.any():
        if blame is None or blame.kind != "zero":
            return Reason(name, f"{name}: .grad is all zero",
                          [("the node that blocked it is not known (the backward was not "
                           "watched, or the output itself does not depend on it)")], "")
        return Reason(name, f"{name}: .grad is all zero: blocked by {blame.node}"
                            f"{_at(blame.where)}",
                      [blame.detail],
                      "check that op's inputs (initialisation, learning rate, the mask)",
                      blame.where)
    if len(passes) > 1:
        spots = list(dict.fromkeys(str(r.where) for r in map(watch.backward, passes)
                                   if r is not None and r.where is not None))
        wheres = (f" (all at {spots[0]})" if len(spots) == 1 and len(passes) > 1 else
                  f" ({', '.join(spots)})" if spots else "")
        return Reason(name, f"{name}: .grad is the sum of {len(passes)} backward passes"
                            f"{wheres}: gradients accumulate",
                      ["each backward adds into .grad; nothing reset it in between"],
                      "call optimizer.zero_grad() (or set .grad = None) before each backward")
    where = record.where if record is not None else None
    return Reason(name, f"{name}: .grad holds the gradient of one backward pass"
                        f"{_at(where)}: nothing unusual",
                  [f"finite, not all zero, norm {float(np.linalg.norm(data)):.4g}"], "", where)


def _leaf_names(cut, names: Names) -> str:
    """The leaves a cut value was computed from, by name (``w``, ``model.0.weight``)."""
    found = [names.of_tensor(ref()) for ref in cut.leaves if ref() is not None]
    named = [n for n in found if n]
    if not found:
        return "what it was computed from"
    if len(named) < len(found):
        named.append(f"{len(found) - len(named)} more leaf tensor"
                     f"{'s' if len(found) - len(named) > 1 else ''}")
    return ", ".join(named[:4]) + (", ..." if len(named) > 4 else "")


def _direct_leaf(node):
    """The leaf among ``node``'s direct inputs, if one requires grad."""
    for nxt, _ in node.next_functions:
        if type(nxt) is AccumulateGrad:
            return nxt.variable
    return None


def _at(where: Where | None) -> str:
    return f" at {where}" if where is not None else ""
