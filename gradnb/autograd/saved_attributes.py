"""PyTorch's ``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>`` for the common nodes.

A node keeps what its backward needs in ``node._saved`` (positional entries) and a few plain
attributes; this table gives them PyTorch's names, so ``y.grad_fn._saved_self``,
``_saved_other`` or ``_saved_result`` work as tutorials show. ``_saved_*`` of a tensor gives the
tensor (the input itself for inputs), ``_raw_saved_*`` a :class:`SavedTensor` whose
``register_hooks(pack, unpack)`` moves that one tensor out and back, as PyTorch's does. After
backward freed the graph, reading a saved tensor raises PyTorch's error.

>>> import gradnb
>>> x = gradnb.tensor([1.0, 2.0], requires_grad=True)
>>> y = x.exp()
>>> y.grad_fn._saved_result
tensor([2.7183, 7.3891], grad_fn=<ExpBackward0>)
>>> (x * y).grad_fn._saved_self is x
True
"""

from __future__ import annotations

from .._core import graph
from .._core.graph import _PACKED, _RELEASED, SECOND_BACKWARD_MESSAGE, _unpack
from .._core.tensor import Tensor as TensorType

__all__ = ["SavedTensor", "saved_attribute"]

_SELF = {"self": 0}
_RESULT = {"result": 0}
_SELF_OTHER = {"self": 0, "other": 1}

# Node class -> PyTorch's name of each tensor in ``node._saved`` (by position).
SAVED_TENSORS = {
    "MulBackward0": _SELF_OTHER, "DivBackward0": _SELF_OTHER,
    "MaximumBackward0": _SELF_OTHER, "MinimumBackward0": _SELF_OTHER,
    "MmBackward0": {"self": 0, "mat2": 1}, "BmmBackward0": {"self": 0, "mat2": 1},
    "MvBackward0": {"self": 0, "vec": 1}, "DotBackward0": {"self": 0, "tensor": 1},
    "PowBackward0": _SELF, "PowBackward1": {"self": 0, "exponent": 1, "result": 2},
    "LogBackward0": _SELF, "Log2Backward0": _SELF, "Log10Backward0": _SELF,
    "Log1PBackward0": _SELF, "SinBackward0": _SELF, "CosBackward0": _SELF,
    "TanBackward0": {"result": 0}, "AbsBackward0": _SELF, "AsinBackward0": _SELF,
    "AcosBackward0": _SELF, "AtanBackward0": _SELF, "SinhBackward0": _SELF,
    "CoshBackward0": _SELF, "ErfBackward0": _SELF,
    "ExpBackward0": _RESULT, "Exp2Backward0": _RESULT, "Expm1Backward0": _RESULT,
    "TanhBackward0": _RESULT, "SigmoidBackward0": _RESULT, "SqrtBackward0": _RESULT,
    "RsqrtBackward0": _RESULT, "ReluBackward0": _RESULT, "ReciprocalBackward0": _RESULT,
    "SoftmaxBackward0": _RESULT, "LogSoftmaxBackward0": _RESULT,
}

# Node class -> PyTorch's name of each non-tensor value -> the node attribute holding it.
SAVED_VALUES = {
    "PowBackward0": {"exponent": "exponent"},
    "SoftmaxBackward0": {"dim": "dim"}, "LogSoftmaxBackward0": {"dim": "dim"},
    "TransposeBackward0": {"dim0": "d0", "dim1": "d1"},
    "SumBackward1": {"dim": "axes", "keepdim": "keepdim", "self_sym_sizes": "in_shape"},
    "MeanBackward1": {"dim": "axes", "keepdim": "keepdim", "self_sym_sizes": "in_shape"},
    "AddBackward0": {"alpha": "alpha"}, "SubBackward0": {"alpha": "alpha"},
}


class SavedTensor:
    """One tensor a node saved (``grad_fn._raw_saved_<name>``)."""

    def __init__(self, node, index: int) -> None:
        self._node = node
        self._index = index

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """Replace the saved tensor by ``pack_hook(tensor)`` now; backward (and every read)
        gets ``unpack_hook(packed)`` back."""
        node = self._node
        if node._saved is _RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        entries = list(node._saved)
        entry = entries[self._index]
        if entry[0] == _PACKED:
            raise RuntimeError("SavedTensor hooks have already been set")
        tensor = _unpack(node, entry, TensorType._make)
        if tensor is None:
            raise RuntimeError("None is forbidden")
        is_output = entry[0] == 1
        output_nr = tensor._output_nr if is_output else 0
        packed = pack_hook(tensor.detach() if is_output else tensor)
        entries[self._index] = (_PACKED, packed, unpack_hook, is_output, output_nr)
        node._saved = tuple(entries)


def _mul_by_number(node, name):
    """``x * 2`` keeps the number on the node (nothing saved): PyTorch shows it as a tensor."""
    from ..ops.creation import tensor

    if name == "other":
        return tensor(node.scalar)
    return None


def saved_attribute(node, attr: str):
    """The value of ``node.<attr>`` for ``attr`` = ``_saved_<name>`` or ``_raw_saved_<name>``."""
    raw = attr.startswith("_raw_saved_")
    name = attr[len("_raw_saved_"):] if raw else attr[len("_saved_"):]
    cls = type(node).__name__
    tensors = SAVED_TENSORS.get(cls, {})
    values = SAVED_VALUES.get(cls, {})
    if name in tensors:
        if node._saved is _RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        index = tensors[name]
        if cls == "MulBackward0" and not node._saved:
            if raw:
                raise AttributeError(f"'{cls}' object has no attribute '{attr}'")
            return _mul_by_number(node, name)
        if raw:
            return SavedTensor(node, index)
        value = _unpack(node, node._saved[index], TensorType._make)
        return value if value is None or isinstance(value, TensorType) else _as_tensor(value)
    if name in values and not raw:
        value = getattr(node, values[name])
        return tuple(value) if isinstance(value, (tuple, list)) else value
    raise AttributeError(f"'{cls}' object has no attribute '{attr}'")


def _as_tensor(value):
    from ..ops.creation import tensor

    return tensor(value)


graph.saved_attribute_reader = saved_attribute
