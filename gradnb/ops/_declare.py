"""Declare a one-formula op in one row: its node class and its forward function.

Most unary ops are a forward (a NumPy ufunc) and a derivative that is one formula of the
gradient and one saved value (the input or the output). Written by hand each is the same
nine lines; here each is one call::

    tanh, TanhBackward0 = unary(
        "tanh", "TanhBackward0", np.tanh, saves="result",
        rule="self: grad * (1 - result**2)", formula=lambda g, y: g * (1 - y * y))

The node class gets PyTorch's name, ``__slots__ = ()``, ``saves``, ``rule`` (and any ``%why``
notes); its backward reads the saved value back, conjugates it (PyTorch's gradient of a
holomorphic ``f`` is ``g * conj(f'(z))``; a no-op on real values) and calls the formula once.
The formula is written with operators and ``gradnb.ops.dual`` helpers, so it runs on arrays in a
first-order backward and on tensors under ``create_graph=True``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from .._core.graph import Node, switches
from .._core.record import record, would_record
from .._core.tensor import Tensor
from . import dual

__all__ = ["NotImplementedBackward", "node", "record_underivable", "unary"]

_ndarray = np.ndarray


def node(name: str, formula: Callable | None, *, saves: tuple = (), rule: str,
         conj: bool = True, module: str | None = None, **notes) -> type:
    """A unary node class named ``name`` whose backward is ``(formula(g, saved),)``.

    ``saves``: PyTorch's name of the one value the formula reads (``("self",)`` or
    ``("result",)``), or ``()`` when it reads none (then ``formula(g)``; ``formula=None`` is
    a zero gradient). ``notes``: class attributes such as ``why_nonfinite``, ``torch_name``.
    """
    if formula is None:
        def backward(self, g):
            return (dual.zeros_like(g),)
    elif not saves:
        def backward(self, g):
            return (formula(g),)
    elif conj:
        def backward(self, g):
            (v,) = self.saved(g)
            # (a real array, the common case, is its own conjugate: no call)
            if type(v) is not _ndarray or v.dtype.kind == "c":
                v = dual.conj(v)
            return (formula(g, v),)
    else:
        def backward(self, g):
            (v,) = self.saved(g)
            return (formula(g, v),)
    module = module or sys._getframe(1).f_globals["__name__"]
    namespace = {"__slots__": (), "__module__": module, "__qualname__": name, "saves": saves,
                 "rule": rule, "backward": backward, "inputs": ("self",), **notes}
    return type(name, (Node,), namespace)


def unary(op: str, name: str, forward: Callable, formula: Callable | None, *,
          saves: str | None, rule: str, apply: Callable | None = None, doc: str | None = None,
          conj: bool = True, module: str | None = None, **notes) -> tuple[Callable, type]:
    """``(op function, node class)`` for ``op(input)`` recorded with a ``name`` node (see
    ``node``; ``saves`` is the one name, or None). The output array is ``forward(input)``, or
    ``apply(input, forward)`` when ``apply`` is given (``forward`` a ufunc, ``apply`` the family's
    way to run one): either way one call from the op to its array."""
    module = module or sys._getframe(1).f_globals["__name__"]
    cls = node(name, formula, saves=(saves,) if saves else (), rule=rule, conj=conj,
               module=module, **notes)

    if apply is None:
        def fn(input):
            return record(cls, (input,), forward(input))
    else:
        def fn(input):
            return record(cls, (input,), apply(input, forward))

    fn.__name__ = fn.__qualname__ = op
    fn.__module__ = module
    fn.__doc__ = doc or f"Elementwise ``{op}``."
    return fn, cls


class NotImplementedBackward(Node):
    """PyTorch's ``torch::autograd::NotImplemented``: the node of an op PyTorch has no derivative
    for (``floor_divide``, ``remainder(Scalar, Tensor)``). The forward records it like any node;
    a backward that reaches it raises PyTorch's error."""
    rule = "none: the derivative for aten::<op> is not implemented (backward raises)"
    torch_name = "torch::autograd::NotImplemented"
    runs_user_code = True  # it raises by design: the engine holds leaf gradients back

    __slots__ = ("op",)

    def backward(self, *grads):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")


def record_underivable(op: str, inputs: tuple, data):
    """``data``, the output of ``op`` on ``inputs``, recorded with a ``NotImplementedBackward``.
    Its edges lead to the inputs that require grad and to no other, as PyTorch's fallback for
    ops without a derivative links them."""
    needing = tuple(t for t in inputs if isinstance(t, Tensor) and t._requires_grad)
    if would_record(needing):
        switches.user_code = True  # the engine must look for nodes that can raise
    return record(NotImplementedBackward, needing, data, attrs={"op": op})
