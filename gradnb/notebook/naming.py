"""Find the user's names for tensors, so graphs say ``w`` and ``loss`` instead of addresses.

A :class:`Names` index is built from a namespace (a notebook's ``user_ns``, a function's
globals) at drawing time. A name refers to a tensor when the namespace holds that very tensor,
or a tensor produced by the same node output (so ``y`` names ``MulBackward0``'s output even if
the tensor object was rebuilt). Objects with ``named_parameters()`` (models) contribute dotted
names such as ``model.fc1.weight``. Private names (``_``, ``_i3``, ``Out``) are skipped.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping

from gradnb._core.tensor import Tensor

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


class Names:
    """Which names a namespace gives to tensors; the first name assigned wins."""

    def __init__(self, namespace: Mapping[str, object] | None = None) -> None:
        self._by_tensor: dict[int, tuple[Tensor, str]] = {}
        self._by_output: dict[tuple[int, int], str] = {}
        for name, tensor in _named_tensors(namespace or {}):
            self._by_tensor.setdefault(id(tensor), (tensor, name))
            if tensor.grad_fn is not None:
                self._by_output.setdefault((tensor.grad_fn._seq, tensor._output_nr), name)

    def of_tensor(self, tensor: object) -> str | None:
        """The name of this tensor object, if any."""
        entry = self._by_tensor.get(id(tensor))
        return entry[1] if entry is not None and entry[0] is tensor else None

    def of_output(self, node, output_nr: int) -> str | None:
        """The name of a tensor produced by ``node``'s output ``output_nr``, if any."""
        return self._by_output.get((node._seq, output_nr))

    def tensors(self) -> list[tuple[str, Tensor]]:
        """Every named tensor, in namespace order."""
        return [(name, t) for t, name in self._by_tensor.values()]


def _named_tensors(namespace: Mapping[str, object]) -> Iterator[tuple[str, Tensor]]:
    for name, value in list(namespace.items()):
        if name.startswith("_") or name in _IPYTHON_NAMES:
            continue
        if isinstance(value, Tensor):
            yield name, value
        elif callable(getattr(value, "named_parameters", None)) and not isinstance(value, type):
            yield from _parameters_of(name, value)


def _parameters_of(name: str, model) -> Iterator[tuple[str, Tensor]]:
    try:
        params = list(model.named_parameters())
    except (TypeError, ValueError, AttributeError, RuntimeError):  # an unrelated method
        return
    for pname, param in params:
        if isinstance(param, Tensor):
            yield f"{name}.{pname}", param


def caller_namespace(depth: int = 1) -> Mapping[str, object]:
    """The variables of the code ``depth`` frames above the caller: its globals and locals.

    In a notebook cell the globals are the notebook's namespace, so this finds the same names
    the magics do; inside a function it also finds the function's locals.
    """
    frame = sys._getframe(depth + 1)
    return {**frame.f_globals, **frame.f_locals}
