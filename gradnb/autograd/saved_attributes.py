"""PyTorch's ``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>``.

A node class names what it saves in PyTorch's words (``saved_names = ("self", "other")``, in
the order of its saved values) and the plain values it keeps as attributes (``saved_attrs``), so
``y.grad_fn._saved_self``, ``_saved_other`` or ``_saved_result`` work as tutorials show.
``_saved_*`` of a tensor gives the tensor (the input itself for inputs), ``_raw_saved_*`` a
:class:`SavedTensor` whose ``register_hooks(pack, unpack)`` moves that one tensor out and back,
as PyTorch's does. After backward freed the graph, reading a saved tensor raises PyTorch's error.

>>> import gradnb
>>> x = gradnb.tensor([1.0, 2.0], requires_grad=True)
>>> y = x.exp()
>>> y.grad_fn._saved_result
tensor([2.7183, 7.3891], grad_fn=<ExpBackward0>)
>>> (x * y).grad_fn._saved_self is x
True
"""

from __future__ import annotations

from .._core import dtype as _dtype
from .._core import graph
from .._core.graph import SECOND_BACKWARD_MESSAGE
from .._core.tensor import Tensor
from ..ops.creation import tensor

__all__ = ["SavedTensor", "saved_attribute"]


class SavedTensor:
    """One tensor a node saved (``grad_fn._raw_saved_<name>``)."""

    def __init__(self, node, name: str) -> None:
        self._node = node
        self._name = name

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """Replace the saved tensor by ``pack_hook(tensor)`` now; backward (and every read)
        gets ``unpack_hook(packed)`` back."""
        self._node.hook_saved(self._name, pack_hook, unpack_hook, Tensor)


def saved_attribute(node, attr: str):
    """The value of ``node.<attr>`` for ``attr`` = ``_saved_<name>`` or ``_raw_saved_<name>``."""
    raw = attr.startswith("_raw_saved_")
    name = attr[len("_raw_saved_"):] if raw else attr[len("_saved_"):]
    cls = type(node)
    if name in cls.saved_names:
        if node.released:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        if raw:
            return SavedTensor(node, name)
        value = node.saved_named(name, Tensor)
        return value if value is None or isinstance(value, Tensor) else _wrapped_number(value)
    if name in cls.saved_attrs and not raw:
        value = getattr(node, cls.saved_attrs[name])
        if name in cls.unsigned:
            return _unsigned(value)
        return tuple(value) if isinstance(value, (tuple, list)) else value
    raise AttributeError(f"'{cls.__name__}' object has no attribute '{attr}'")


_UINT64 = 1 << 64
# PyTorch saves a Python number operand as a "wrapped number": a 0-d tensor of double
# precision whatever the other operand's dtype (``(x * 0.5).grad_fn._saved_other`` is float64).
_WRAPPED_DTYPES = {float: _dtype.float64, complex: _dtype.complex128}


def _wrapped_number(value) -> Tensor:
    return tensor(value, dtype=_WRAPPED_DTYPES.get(type(value)))


def _unsigned(value):
    """An int64 value as PyTorch's ``_saved_*`` shows it: read as unsigned (-1 as 2**64 - 1)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value % _UINT64
    return tuple(int(v) % _UINT64 for v in value)


graph.saved_attribute_reader = saved_attribute
