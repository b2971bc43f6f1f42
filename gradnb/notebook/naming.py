"""Find the user's names for tensors, so graphs say ``w`` and ``loss`` instead of addresses.

A :class:`Names` index is built from a namespace (a notebook's ``user_ns``, a function's
globals) at drawing time. A name refers to a tensor when the namespace holds that very tensor,
or a tensor produced by the same node output (so ``y`` names ``MulBackward0``'s output even if
the tensor object was rebuilt). Objects with ``named_parameters()`` (models) contribute dotted
names such as ``model.fc1.weight``, and their submodules names such as ``model.0`` (graphs
group the ops a module ran under that name). Private names (``_``, ``_i3``, ``Out``) are
skipped. Torch tensors and modules are named the same way when torch is loaded.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping

from gradnb.notebook.tensors import is_tensor, node_key, output_nr

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


class Names:
    """Which names a namespace gives to tensors; the first name assigned wins."""

    def __init__(self, namespace: Mapping[str, object] | None = None) -> None:
        self._by_tensor: dict[int, tuple[object, str]] = {}
        # (node key, output nr) -> (node, name); the node is held so its key stays its own.
        self._by_output: dict[tuple[object, int], tuple[object, str]] = {}
        self._by_module: dict[int, tuple[object, str]] = {}
        namespace = namespace or {}
        for name, tensor in _named_tensors(namespace):
            self._by_tensor.setdefault(id(tensor), (tensor, name))
            node = tensor.grad_fn
            if node is not None:
                self._by_output.setdefault((node_key(node), output_nr(tensor)), (node, name))
        for name, module in _named_modules(namespace):
            self._by_module.setdefault(id(module), (module, name))

    def of_tensor(self, tensor: object) -> str | None:
        """The name of this tensor object, if any."""
        entry = self._by_tensor.get(id(tensor))
        return entry[1] if entry is not None and entry[0] is tensor else None

    def of_output(self, node, output_nr: int) -> str | None:
        """The name of a tensor produced by ``node``'s output ``output_nr``, if any."""
        entry = self._by_output.get((node_key(node), output_nr))
        if entry is None or (entry[0] is not node and not hasattr(node, "_seq")):
            return None  # a torch node is known by identity only
        return entry[1]

    def of_module(self, module: object) -> str | None:
        """The name of a model or submodule (``model``, ``model.0``), if any."""
        entry = self._by_module.get(id(module))
        return entry[1] if entry is not None and entry[0] is module else None

    def tensors(self) -> list[tuple[str, object]]:
        """Every named tensor, in namespace order."""
        return [(name, t) for t, name in self._by_tensor.values()]


def _public(namespace: Mapping[str, object]) -> Iterator[tuple[str, object]]:
    for name, value in list(namespace.items()):
        if not name.startswith("_") and name not in _IPYTHON_NAMES:
            yield name, value


def _named_tensors(namespace: Mapping[str, object]) -> Iterator[tuple[str, object]]:
    for name, value in _public(namespace):
        if is_tensor(value):
            yield name, value
        elif callable(getattr(value, "named_parameters", None)) and not isinstance(value, type):
            yield from _members_of(name, value, "named_parameters")


def _named_modules(namespace: Mapping[str, object]) -> Iterator[tuple[str, object]]:
    for name, value in _public(namespace):
        if callable(getattr(value, "named_modules", None)) and not isinstance(value, type):
            for sub, module in _members_of(name, value, "named_modules"):
                yield sub.removesuffix("."), module


def _members_of(name: str, model, method: str) -> Iterator[tuple[str, object]]:
    try:
        members = list(getattr(model, method)())
    except (TypeError, ValueError, AttributeError, RuntimeError):  # an unrelated method
        return
    for member_name, member in members:
        if method == "named_modules" or is_tensor(member):
            yield f"{name}.{member_name}", member


def caller_namespace(depth: int = 1) -> Mapping[str, object]:
    """The variables of the code ``depth`` frames above the caller: its globals and locals.

    In a notebook cell the globals are the notebook's namespace, so this finds the same names
    the magics do; inside a function it also finds the function's locals.
    """
    frame = sys._getframe(depth + 1)
    return {**frame.f_globals, **frame.f_locals}
