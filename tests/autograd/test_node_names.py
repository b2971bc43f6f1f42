"""Node classes: one PyTorch name, one rule.

Classes are named for what they do; ``name()`` (and so ``grad_fn``'s repr) prints the name
PyTorch prints. Two classes may print the same name only when they are the same rule, or when
one is a fused op that prints the name of PyTorch's outermost node and says so with
``torch_name`` (``a @ b`` on batches is one ``MatmulBackward`` node where PyTorch records a
reshape, ``UnsafeViewBackward0``, over a ``BmmBackward0``).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict

import gradnb
from gradnb.autograd.graph import Node


def _node_classes():
    for info in pkgutil.walk_packages(gradnb.__path__, "gradnb."):
        if not info.name.startswith("gradnb.notebook"):
            importlib.import_module(info.name)
    found, stack = set(), [Node]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            if sub not in found and sub.__module__.startswith("gradnb."):
                found.add(sub)
                stack.append(sub)
    return found


def test_no_two_rules_print_the_same_pytorch_name():
    rules = defaultdict(set)
    for cls in _node_classes():
        if "name" in vars(cls):  # prints a name of its own making (custom Functions, Error)
            continue
        if cls.torch_name is None or cls.torch_name == cls.__name__:
            rules[cls.__name__].add(cls.backward)
        else:
            assert not cls.__name__.endswith("Backward0"), f"{cls.__name__}: named like PyTorch"
    shared = {name: len(fns) for name, fns in rules.items() if len(fns) > 1}
    assert not shared, f"PyTorch names shared by different rules: {shared}"


def test_renamed_classes_still_print_pytorch_names():
    x = gradnb.ones(3, 4, requires_grad=True)
    assert x.narrow(0, 0, 2).grad_fn.name() == "SliceBackward0"
    assert x[1:].grad_fn.name() == "SliceBackward0"
    assert (gradnb.ones(5, 2, 3) @ x).grad_fn.name() == "UnsafeViewBackward0"
    assert (gradnb.ones(4) @ x.T).grad_fn.name() == "SqueezeBackward4"
    assert repr(x[1:]).endswith("grad_fn=<SliceBackward0>)")
