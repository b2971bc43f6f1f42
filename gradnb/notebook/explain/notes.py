"""What the notebook says about a backward node: its chain rule in one line (the step player) and
how it can turn a gradient NaN, Inf or all zero, with the fix (``%why``).

Every gradnb node class declares these itself, as the class attributes ``rule``,
``why_nonfinite``, ``fix_nonfinite`` and ``why_zero`` (see :class:`~gradnb.autograd.graph.Node`);
this module only reads them. A torch node carries none of them: it is read from the gradnb node
class of the same name (``MulBackward0``), so a torch graph shows the same texts.

>>> import gradnb
>>> x = gradnb.tensor([1.0], requires_grad=True)
>>> rule_of(x.exp().grad_fn)
'self: grad * result'
>>> note_of(x.log().grad_fn, "why_nonfinite")
'log of 0: grad / self'
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

from gradnb.autograd.graph import Node

__all__ = ["CUSTOM_FUNCTION_RULE", "NOTES", "gradnb_class", "note_of", "rule_of", "short_name"]

#: The notes a node class may declare (None where it has nothing to say).
NOTES = ("rule", "why_nonfinite", "fix_nonfinite", "why_zero")

#: The rule of a custom Function's node (``<Name>Backward``) whose class declares none: a torch
#: Function's node, which has no gradnb class of its name.
CUSTOM_FUNCTION_RULE = "your Function's backward(ctx, grad)"

# The packages that define node classes beyond those ``import gradnb`` loads (nn.functional's,
# checkpoint's): imported once, when the first torch node is looked up.
_NODE_PACKAGES = ("gradnb.ops", "gradnb.nn.functional", "gradnb.autograd", "gradnb.utils")


def short_name(node) -> str:
    """The node's name as the views show it: without a C++ namespace (``name()`` of a leaf's
    node is ``gradnb::autograd::AccumulateGrad``, torch's ``torch::autograd::AccumulateGrad``;
    both show as ``AccumulateGrad``)."""
    return node.name().rpartition("::")[2]


def rule_of(node) -> str:
    """The node's chain rule in one line, as PyTorch's ``derivatives.yaml`` writes it
    (``self: grad * result`` for ``ExpBackward0``); a custom Function's node without one says
    :data:`CUSTOM_FUNCTION_RULE`, any other ``?``. ``node``: a gradnb node or a torch one."""
    rule = note_of(node, "rule")
    if rule is not None:
        return rule
    return CUSTOM_FUNCTION_RULE if node.name().endswith("Backward") else "?"


def note_of(node, note: str) -> str | None:
    """One of the node's :data:`NOTES` (``"why_zero"``: why its backward can pass on an all-zero
    gradient, ...), or None when its class has none (or, for a torch node, gradnb has no class of
    its name)."""
    if note not in NOTES:
        raise ValueError(f"note must be one of {NOTES}, not {note!r}")
    cls = gradnb_class(node)
    return None if cls is None else getattr(cls, note)


def gradnb_class(node) -> type[Node] | None:
    """The gradnb class whose notes describe ``node``: its own class for a gradnb node, the gradnb
    node class of the same name for a torch node (None when there is none)."""
    cls = type(node)
    if issubclass(cls, Node):
        return cls
    return _node_classes_by_name().get(cls.__name__)


@functools.cache
def _node_classes_by_name() -> dict[str, type[Node]]:
    """gradnb's node classes by class name (not ``torch_name``: a class named for what it does
    shares its PyTorch name with another op's node, whose rule it does not have)."""
    for package in _NODE_PACKAGES:
        path = importlib.import_module(package).__path__
        for module in pkgutil.walk_packages(path, package + "."):
            importlib.import_module(module.name)
    found: dict[str, type[Node]] = {}
    stack = [Node]
    while stack:  # iteratively: a class tree can be deep
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith("gradnb."):
                found.setdefault(sub.__name__, sub)
    return found
