"""Find the user's names for tensors, so graphs say ``w`` and ``loss`` instead of addresses.

A :class:`Names` index is built from a namespace (a notebook's ``user_ns``, a function's
globals) at drawing time. A name refers to a tensor when the namespace holds that very tensor,
or a tensor produced by the same node output (so ``y`` names ``MulBackward0``'s output even if
the tensor object was rebuilt). Models contribute dotted names such as ``model.fc1.weight`` (and
``model.fc1`` for the module itself), other objects their tensor attributes (``state.w``).
Private names (``_``, ``_i3``, ``Out``) are skipped. Torch tensors and modules are named the same
way when torch is loaded.

Naming never runs the user's code: values are read from the namespace dict and from instance
``__dict__`` as stored, so no property is evaluated and no ``__getattr__`` is called.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Iterator, Mapping

from gradnb._core.graph import Node
from gradnb.notebook.tensors import is_tensor, node_key, output_nr

__all__ = ["Names", "caller_namespace"]

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


class Names:
    """Which names a namespace gives to tensors and modules; the first name assigned wins."""

    def __init__(self, namespace: Mapping[str, object] | None = None) -> None:
        self._by_tensor: dict[int, tuple[object, str]] = {}
        # (node key, output nr) -> (node, name); the node is held so its key stays its own.
        self._by_output: dict[tuple[object, int], tuple[object, str]] = {}
        self._by_module: dict[int, tuple[object, str]] = {}
        for name, value in _public_items(namespace or {}):
            if is_tensor(value):
                self._add_tensor(name, value)
                continue
            for dotted, tensor in _attribute_tensors(name, value, self._by_module):
                self._add_tensor(dotted, tensor)

    def _add_tensor(self, name: str, tensor) -> None:
        self._by_tensor.setdefault(id(tensor), (tensor, name))
        node = tensor.grad_fn
        if node is not None:
            self._by_output.setdefault((node_key(node), output_nr(tensor)), (node, name))

    def of_tensor(self, tensor: object) -> str | None:
        """The name of this tensor object, if any."""
        entry = self._by_tensor.get(id(tensor))
        return entry[1] if entry is not None and entry[0] is tensor else None

    def of_output(self, node, output_nr: int) -> str | None:
        """The name of a tensor produced by ``node``'s output ``output_nr``, if any."""
        entry = self._by_output.get((node_key(node), output_nr))
        if entry is None or (entry[0] is not node and not isinstance(node, Node)):
            return None  # a torch node is known by identity only
        return entry[1]

    def of_module(self, module: object) -> str | None:
        """The dotted name of this module (``model``, ``model.fc1``), if the namespace has it."""
        entry = self._by_module.get(id(module))
        return entry[1] if entry is not None and entry[0] is module else None

    def tensors(self) -> list[tuple[str, object]]:
        """Every named tensor, in namespace order."""
        return [(name, t) for t, name in self._by_tensor.values()]


def _public_items(namespace: Mapping[str, object]) -> Iterator[tuple[str, object]]:
    try:  # a dict copy runs no user code; a custom mapping's items() might, so it is guarded
        items = list(dict.items(namespace)) if isinstance(namespace, dict) else list(
            namespace.items())
    except Exception:  # noqa: BLE001 - naming must never fail the view
        return
    for name, value in items:
        if isinstance(name, str) and not name.startswith("_") and name not in _IPYTHON_NAMES:
            yield name, value


def _instance_dict(value: object) -> dict | None:
    """``value.__dict__`` read without running its class's code (no properties, no
    ``__getattr__``); None for objects without one (numbers, strings, slotted classes)."""
    kind = type(value)
    if issubclass(kind, type) or kind.__module__ == "builtins":
        return None
    slot = next((k.__dict__["__dict__"] for k in kind.__mro__ if "__dict__" in k.__dict__), None)
    if type(slot) is not _GETSET:
        return None  # no plain instance dict, or a class that overrides __dict__
    try:
        found = object.__getattribute__(value, "__dict__")
    except Exception:  # noqa: BLE001 - an unusual object simply has no names to give
        return None
    return found if type(found) is dict else None


_GETSET = type(type.__dict__["__dict__"])


def _attribute_tensors(name: str, value: object, modules: dict) -> Iterator[tuple[str, object]]:
    """Tensors held by ``value``'s attributes, with dotted names: a module's parameters and
    buffers through its sub-modules (``model.fc1.weight``; the modules are noted in
    ``modules``), or the tensor attributes of any other object (``opt_state.w``)."""
    stack = [(name, value)]
    seen: set[int] = set()
    while stack:
        prefix, obj = stack.pop(0)
        attributes = _instance_dict(obj)
        if attributes is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        tables = [attributes.get(t) for t in ("_parameters", "_buffers", "_modules")]
        if all(type(t) in (dict, OrderedDict) for t in tables):  # an nn.Module, by its state
            modules.setdefault(id(obj), (obj, prefix))
            for table in tables[:2]:
                for key, item in table.items():
                    if is_tensor(item):
                        yield f"{prefix}.{key}", item
            stack.extend((f"{prefix}.{key}", child) for key, child in tables[2].items()
                         if child is not None)
        elif prefix == name:  # plain objects: their own tensor attributes, one level deep
            for key, item in attributes.items():
                if isinstance(key, str) and not key.startswith("_") and is_tensor(item):
                    yield f"{prefix}.{key}", item


def caller_namespace(depth: int = 1) -> Mapping[str, object]:
    """The variables of the code ``depth`` frames above the caller: its globals and locals.

    In a notebook cell the globals are the notebook's namespace, so this finds the same names
    the magics do; inside a function it also finds the function's locals.
    """
    frame = sys._getframe(depth + 1)
    return {**frame.f_globals, **frame.f_locals}
