"""Math for derivative rules that works on raw arrays *and* on tensors.

A rule is written once. In a first-order backward the engine hands it raw arrays, so it runs at
NumPy speed with no wrappers; under ``create_graph=True`` it gets tensors, the same code records
a graph, and higher-order gradients come for free. Operators (``+ - * / **``, comparisons) work
on both already; this module adds the few functions whose spelling differs. On tensors they
call Tensor methods, so this module imports no other op family.
"""

from __future__ import annotations

import numpy as np

from .._core.backend import get_array_module, sum_to
from .._core.tensor import Tensor
from .creation import zeros_like as tzeros

__all__ = [
    "abs",
    "conj",
    "cos",
    "data",
    "exp",
    "expand",
    "log",
    "mT",
    "matmul",
    "permute",
    "reshape",
    "sign",
    "sin",
    "sqrt",
    "sum",
    "sum_to",
    "tanh",
    "where",
    "xp_of",
]


def xp_of(x):
    """The array module (NumPy or CuPy) of an array or tensor."""
    return get_array_module(x._data if isinstance(x, Tensor) else x)


def _unary(name):
    def fn(x):
        if isinstance(x, Tensor):
            return getattr(x, name)()
        return getattr(get_array_module(x), name)(x)

    fn.__name__ = name
    return fn


exp = _unary("exp")
log = _unary("log")
sqrt = _unary("sqrt")
sin = _unary("sin")
cos = _unary("cos")
tanh = _unary("tanh")
sign = _unary("sign")
abs = _unary("abs")


def conj(x):
    """The complex conjugate of ``x``; ``x`` itself when it is real (the common case, free)."""
    cls = type(x)
    if cls is np.ndarray:  # a first-order backward's arrays, first: every rule asks
        return x if x.dtype.kind != "c" else np.conj(x)
    if cls is float or x is None:
        return x
    if isinstance(x, Tensor):
        return x.conj() if x._data.dtype.kind == "c" else x
    if getattr(x, "dtype", None) is not None:
        return get_array_module(x).conj(x) if x.dtype.kind == "c" else x
    return x.conjugate() if isinstance(x, complex) else x


def where(cond, a, b):
    """Select ``a`` where ``cond`` else ``b`` (``cond`` is always a raw boolean array or tensor)."""
    if isinstance(a, Tensor):
        return a.where(cond, b)
    if isinstance(b, Tensor):
        return b.where(~cond, a)
    c = cond._data if isinstance(cond, Tensor) else cond
    return get_array_module(c).where(c, a, b)


def zeros_like(x):
    """Zeros of ``x``'s shape and dtype (a gradient that is zero even where ``x`` is inf)."""
    if isinstance(x, Tensor):
        return tzeros(x)
    return get_array_module(x).zeros_like(x)


def data(x):
    """The raw array behind ``x`` (for masks and indices, which carry no gradient)."""
    return x._data if isinstance(x, Tensor) else x


def matmul(a, b):
    return a @ b


def mT(x):
    """Swap the last two dimensions."""
    if isinstance(x, Tensor):
        return x.transpose(-2, -1)
    return x.swapaxes(-1, -2)


def reshape(x, shape):
    return x.reshape(tuple(shape))


def expand(x, shape):
    if type(x) is np.ndarray and x.ndim == 0 and not x.dtype.hasobject:
        # The gradient of a full reduction (``loss.sum()``, ``mean()``), in every backward: the
        # read-only zero-stride view ``np.broadcast_to`` makes, built directly (NumPy's
        # ``broadcast_to`` runs Python code that costs ten times more).
        out = np.ndarray(shape, x.dtype, x, 0, (0,) * len(shape))
        out.flags.writeable = False
        return out
    if isinstance(x, Tensor):
        return x.expand(*shape)
    return get_array_module(x).broadcast_to(x, tuple(shape))


def sum(x, axis=None, keepdims=False):
    if isinstance(x, Tensor):
        if axis == ():  # NumPy's meaning (no reduction), not PyTorch's ``dim=()`` (reduce all)
            return x
        return x.sum(dim=axis, keepdim=keepdims)
    return x.sum(axis=axis, keepdims=keepdims)


def permute(x, axes):
    if isinstance(x, Tensor):
        return x.permute(*axes)
    return x.transpose(axes)
