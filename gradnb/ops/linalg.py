"""Matrix products: ``matmul``/``@`` with NumPy's broadcasting of batch dimensions, ``mm``,
``bmm``, ``dot``, ``outer``.

The backward of ``a @ b`` is ``g @ b^T`` and ``a^T @ g`` with the vector cases (1-d operands)
handled by promoting to matrices first, exactly as the forward does.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from .._core import autocast_state as _autocast
from .._core.backend import get_array_module
from .._core.grad_mode import state as _grad_state
from .._core.graph import Node, PreparedSpec
from .._core.record import record, wrap
from . import dual
from . import shape as sh
from ._args import reflected, scalar_type_name
from ._blas import transposed_product
from ._common import Tensor, binary_operands

_ndarray = np.ndarray

__all__ = ["bmm", "dot", "ger", "matmul", "mm", "mv", "outer", "trace"]


class MmBackward0(Node):
    rule = ("self: mm_mat1_backward(grad, mat2, self.sym_sizes(), self.sym_strides(), ...); "
            "mat2: mm_mat2_backward(grad, self, mat2.sym_sizes(), mat2.sym_strides(), ...)")
    __slots__ = ("mat2_sym_sizes", "mat2_sym_strides", "self_sym_sizes", "self_sym_strides")
    inputs = ("self", "mat2")
    saves = ("mat2", "mat2_sym_sizes", "mat2_sym_strides", "self", "self_sym_sizes",
             "self_sym_strides")
    saved_when: ClassVar[dict] = {"mat2": ("self",), "self": ("mat2",)}

    def backward(self, g):
        b, a = self.saved(g)
        if type(g) is _ndarray and g.dtype.kind == "f":  # first order, real: the arrays' products
            return (_mat1_gradient(g, b, self.self_sym_sizes, self.self_sym_strides, 1)
                    if self._next0 is not None else None,
                    _mat2_gradient(g, a, self.mat2_sym_sizes, self.mat2_sym_strides, 1)
                    if self._next1 is not None else None)
        ga = None
        if self.needs(0):
            ga = (dual.mT(dual.matmul(dual.conj(b), dual.mT(g)))
                  if _column_major(self.self_sym_sizes, self.self_sym_strides, 1)
                  else dual.matmul(g, dual.mT(dual.conj(b))))
        if not self.needs(1):
            return ga, None
        if _column_major(self.mat2_sym_sizes, self.mat2_sym_strides, 1):
            return ga, dual.mT(dual.matmul(dual.mT(g), dual.conj(a)))
        return ga, dual.matmul(dual.mT(dual.conj(a)), g)


def _column_major(sizes, strides, unit) -> bool:
    """PyTorch's test in ``mm_mat2_backward``: was ``mat2`` laid out column by column, as
    ``weight.t()`` is (strides in ``unit``s: 1 for elements, the item size for bytes)?"""
    return strides[0] == unit and strides[1] == sizes[0] * unit


def _mat1_gradient(g, m2, sizes, strides, unit):
    """``g @ m2^T`` in ``mat1``'s own layout, as PyTorch's ``mm_mat1_backward`` gives it: for a
    column-major ``mat1`` (``x.t()``) as ``(m2 @ g^T)^T``."""
    if _column_major(sizes, strides, unit):
        return (m2 @ g.T).T
    return g @ m2.T


def _mat2_gradient(g, m1, sizes, strides, unit):
    """``m1^T @ g`` in ``mat2``'s own layout, as PyTorch's ``mm_mat2_backward`` gives it: for a
    column-major ``mat2`` (``weight.t()``) as ``(g^T @ m1)^T``, so that after TBackward0 the
    weight's gradient is C-contiguous like the weight and becomes ``.grad`` uncopied."""
    if _column_major(sizes, strides, unit):
        return transposed_product(g, m1).T
    return transposed_product(m1, g)


class AddmmBackward0(Node):
    """``d(beta * self + alpha * mat1 @ mat2)``: ``beta * g`` for ``self`` (summed over the rows
    here for a vector bias; other shapes are summed down by the engine), ``alpha * g @ mat2^H``
    for ``mat1`` and ``alpha * mat1^H @ g`` for ``mat2``. ``F.linear`` records it for every
    layer, so the first-order pass runs on arrays without ``dual``'s dispatch."""
    rule = ("self: maybe_multiply(grad, beta.conj()); mat1: mm_mat1_backward(grad, mat2, "
            "mat1.sym_sizes(), mat1.sym_strides(), mat1.layout(), alpha); mat2: "
            "mm_mat2_backward(grad, mat1, mat2.sym_sizes(), mat2.sym_strides(), mat2.layout(), "
            "alpha)")

    __slots__ = ("_bias_is_vector", "mat1_sym_sizes", "mat1_sym_strides", "mat2_sym_sizes",
                 "mat2_sym_strides")
    inputs = ("self", "mat1", "mat2")
    saves = ("alpha", "beta", "mat1", "mat1_sym_sizes", "mat1_sym_strides", "mat2",
             "mat2_sym_sizes", "mat2_sym_strides")
    saved_when: ClassVar[dict] = {"mat1": ("mat2",), "mat2": ("mat1",)}
    # PyTorch keeps a matrix's strides only for that matrix's own gradient (else shows ()).
    saved_attrs: ClassVar[dict] = {"mat1_sym_strides": "shown_mat1_strides",
                                   "mat2_sym_strides": "shown_mat2_strides"}
    # ``F.linear``'s: class defaults, so its recording sets nothing (``addmm`` passes its own).
    alpha = 1
    beta = 1

    @property
    def shown_mat1_strides(self):
        if self._next1 is None:
            return ()
        return _element_strides(self.mat1_sym_strides, self.mat1_sym_sizes, self._dtype.itemsize)

    @property
    def shown_mat2_strides(self):
        if self._next2 is None:
            return ()
        return _element_strides(self.mat2_sym_strides, self.mat2_sym_sizes, self._dtype.itemsize)

    def backward(self, g):
        m1, m2 = self.saved(g)
        alpha, beta = self.alpha, self.beta
        if type(g) is _ndarray and g.dtype.kind != "c" and alpha == 1 and beta == 1:
            # first order, real, F.linear's: the same products, without dual's dispatch
            return (
                self._grad_bias(g) if self._next0 is not None else None,
                _mat1_gradient(g, m2, self.mat1_sym_sizes, self.mat1_sym_strides,
                               self._dtype.itemsize) if self._next1 is not None else None,
                _mat2_gradient(g, m1, self.mat2_sym_sizes, self.mat2_sym_strides,
                               self._dtype.itemsize) if self._next2 is not None else None,
            )
        if alpha != 1:
            alpha = alpha.conjugate()
        gs = g1 = g2 = None
        if self.needs(0):
            gs = self._grad_bias(g) if beta == 1 else self._grad_bias(g) * beta.conjugate()
        if self.needs(1):
            if _column_major(self.mat1_sym_sizes, self.mat1_sym_strides, self._dtype.itemsize):
                g1 = dual.mT(dual.matmul(dual.conj(m2), dual.mT(g)))
            else:
                g1 = dual.matmul(g, dual.mT(dual.conj(m2)))
            g1 = g1 if alpha == 1 else g1 * alpha
        if self.needs(2):
            if _column_major(self.mat2_sym_sizes, self.mat2_sym_strides, self._dtype.itemsize):
                g2 = dual.mT(dual.matmul(dual.mT(g), dual.conj(m1)))
            else:
                g2 = dual.matmul(dual.mT(dual.conj(m1)), g)
            g2 = g2 if alpha == 1 else g2 * alpha
        return gs, g1, g2

    def _grad_bias(self, g):
        # nn.Linear's bias is a vector: summing the rows here skips the engine's general
        # unbroadcast (which works out the axes first), a measurable share of a small-batch
        # step. The same sum over the same axis, so the same numbers (``ndarray.sum`` is
        # ``np.add.reduce`` behind a Python wrapper).
        if not self._bias_is_vector:
            return g
        return np.add.reduce(g, 0) if type(g) is _ndarray else dual.sum(g, 0)


def _prepare_addmm(node, inputs) -> tuple:
    """What an ``AddmmBackward0`` keeps per recording: the declared fills, done inline (F.linear
    records one per layer, and the generic fill loop costs a measurable share of a small
    step), the strides kept in bytes and shown in elements only when read; each matrix saved
    only for the other's gradient."""
    m1, m2 = inputs[1]._data, inputs[2]._data
    node._bias_is_vector = inputs[0]._data.ndim == 1  # (what ``_grad_bias`` sums)
    node.mat1_sym_sizes = m1.shape
    node.mat1_sym_strides = m1.strides
    node.mat2_sym_sizes = m2.shape
    node.mat2_sym_strides = m2.strides
    return (1 if node._next2 is not None else None, 2 if node._next1 is not None else None)


def _element_strides(strides, shape, itemsize) -> tuple:
    """Byte strides as PyTorch's element strides (an empty tensor's are the contiguous ones)."""
    if 0 not in shape:
        return tuple(st // itemsize for st in strides)
    out, step = [], 1
    for size in reversed(shape):
        out.append(step)
        step *= max(size, 1)
    return tuple(reversed(out))


AddmmBackward0._save_spec = PreparedSpec((1, 2), _prepare_addmm)


class BmmBackward0(Node):
    rule = "self: grad.bmm(mat2.transpose(1, 2).conj()); mat2: self.transpose(1, 2).conj().bmm(grad)"
    __slots__ = ()
    inputs = ("self", "mat2")
    saves = ("mat2", "self")
    saved_when: ClassVar[dict] = {"mat2": ("self",), "self": ("mat2",)}

    def backward(self, g):
        b, a = self.saved(g)
        ga = dual.matmul(g, dual.mT(dual.conj(b))) if self.needs(0) else None
        gb = dual.matmul(dual.mT(dual.conj(a)), g) if self.needs(1) else None
        return ga, gb


class MvBackward0(Node):
    """matrix @ vector."""
    rule = "self: outer(grad, vec); vec: self.T @ grad"

    __slots__ = ()
    inputs = ("self", "vec")
    saves = ("self", "vec")

    def backward(self, g):
        a, b = map(dual.conj, self.saved(g))  # complex: products with the adjoints
        ga = gb = None
        if self.needs(0):
            ga = dual.reshape(g, (-1, 1)) * dual.reshape(b, (1, -1)) if len(a.shape) == 2 else \
                dual.matmul(dual.reshape(g, tuple(g.shape) + (1,)), dual.reshape(b, (1, -1)))
        if self.needs(1):
            gb = dual.matmul(dual.mT(a), dual.reshape(g, tuple(g.shape) + (1,)))
            gb = dual.reshape(gb, tuple(gb.shape[:-1]))
        return ga, gb


class DotBackward0(Node):
    rule = "self: grad * other; other: grad * self"
    __slots__ = ()
    inputs = ("self", "tensor")
    saves = ("self", "tensor")

    def backward(self, g):
        a, b = map(dual.conj, self.saved(g))  # complex: products with the adjoints
        return (g * b if self.needs(0) else None,
                g * a if self.needs(1) else None)


def matmul(input, other) -> Tensor:
    """Matrix product with NumPy/PyTorch broadcasting over batch dimensions.

    ``2-d @ 2-d`` records one ``MmBackward0``; the other ranks record what PyTorch's
    ``at::matmul`` composes (``dot``, ``mv``, an unsqueezed ``mm``, the batch folded into an
    ``mm``/``mv``, or expanded batches through ``bmm``), so the graph has PyTorch's nodes.
    """
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, other = _autocast.lower(input, other)
    if type(input) is Tensor and type(other) is Tensor \
            and input._data.dtype is not other._data.dtype \
            and input._data.dtype != other._data.dtype:  # PyTorch does not promote here
        raise RuntimeError(_dtype_error(input._data, other._data))
    ta, tb, a, b = binary_operands(input, other, broadcast=False)
    da, db = a.ndim, b.ndim
    if da == 2 and db == 2:  # the fast path: one product, one node
        try:
            # a column-major left factor, as in ``g.t() @ h``: a weight gradient's product
            out = transposed_product(a.T, b) if a.strides[0] < a.strides[1] else a @ b
        except ValueError:
            raise RuntimeError(_shape_error(a, b)) from None
        if out.dtype is not a.dtype:  # ml_dtypes' bfloat16 product comes back float32
            out = out.astype(a.dtype)
        return record(MmBackward0, (ta, tb), out, operands=(a, b))
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    _check_shapes(a, b)
    if not ((ta is not None and ta._requires_grad) or (tb is not None and tb._requires_grad)) \
            or not _grad_state.enabled:
        out = a @ b  # nothing records: one product
        return record(MmBackward0, (None, None), out.astype(a.dtype, copy=False))
    return _composed(_as_tensor(ta, a), _as_tensor(tb, b))


# C++'s names of the element types, as PyTorch's mm prints them.
_CPP_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
              "float64": "double", "int8": "signed char", "int16": "short int", "int32": "int",
              "int64": "long int", "uint8": "unsigned char", "bool": "bool",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _dtype_error(a, b) -> str:
    """PyTorch's message for a product of two dtypes, from the kernel the ranks reach."""
    da, db = a.ndim, b.ndim
    sa, sb = scalar_type_name(a.dtype), scalar_type_name(b.dtype)
    if da == 1 and db == 1:
        return f"dot : expected both vectors to have same dtype, but found {sa} and {sb}"
    if da == 2 and db == 1:
        return f"addmv input tensors must have the same dtype, but got {sb}, {sa}, and {sb}"
    if db >= 3 and da >= 2:
        return f"expected scalar type {sa} but found {sb}"
    ca, cb = (_CPP_NAMES.get(d.name, d.name) for d in (a.dtype, b.dtype))
    return f"expected m1 and m2 to have the same dtype, but got: {ca} != {cb}"


def _as_tensor(t, data):
    """The operand as a tensor of the computing dtype (a cast records, as PyTorch's would)."""
    if t is None:
        return wrap(data)
    return t if t._data is data else t.to(data.dtype)


def _check_shapes(a, b) -> None:
    inner = b.shape[-2] if b.ndim > 1 else b.shape[0]
    ok = a.shape[-1] == inner
    if ok:
        try:
            np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            ok = False
    if not ok:
        raise RuntimeError(_shape_error(a, b))


def _record_product(cls, a, b):
    out = a._data @ b._data
    return record(cls, (a, b), out.astype(a._data.dtype, copy=False))


def _composed(a, b):
    """PyTorch's ``_matmul_impl`` for the ranks other than 2-d @ 2-d, step by step."""
    da, db = a.ndim, b.ndim
    if da == 1 and db == 1:
        return _record_product(DotBackward0, a, b)
    if da == 2 and db == 1:
        return _record_product(MvBackward0, a, b)
    if da == 1 and db == 2:
        m = _record_product(MmBackward0, sh.unsqueeze(a, 0), b)
        data = m._data
        # PyTorch's ``v.unsqueeze(0).mm(m).squeeze_(0)``: the in-place squeeze's node
        return sh.inplace_view_step(sh.SqueezeBackward4, m, data.reshape(data.shape[1:]), dim=0)
    if _should_fold(a, b):
        # the batch of the larger operand folded into the rows of one mm (or mv)
        transpose = db > da
        t1 = sh.transpose(b, -2, -1) if transpose else a
        t2 = (sh.t(a) if da == 2 else a) if transpose else b
        sizes1 = tuple(t1.shape)
        out_shape = sizes1[:-1]
        folded = sh.reshape(t1, (math.prod(out_shape), sizes1[-1]))
        if t2.ndim == 2:
            out = sh.unsafe_view(_record_product(MmBackward0, folded, t2),
                                 out_shape + (t2.shape[1],))
            return sh.contiguous(sh.transpose(out, -2, -1)) if transpose else out
        return sh.unsafe_view(_record_product(MvBackward0, folded, t2), out_shape)
    n = a.shape[-2] if da > 1 else 1
    m1 = a.shape[-1]
    batch1 = tuple(a.shape[:max(da - 2, 0)])
    m2 = b.shape[-2] if db > 1 else b.shape[0]
    p = b.shape[-1] if db > 1 else 1
    batch2 = tuple(b.shape[:max(db - 2, 0)])
    if da == 3 and db == 3 and batch1[0] != batch2[0]:
        # a batch of one that needs grad goes through the fold instead (PyTorch's choice)
        if batch1[0] == 1 and a._requires_grad:
            return matmul(sh.squeeze(a, 0), b)
        if batch2[0] == 1 and b._requires_grad:
            return matmul(a, sh.squeeze(b, 0))
    batch = tuple(np.broadcast_shapes(batch1, batch2))
    count = math.prod(batch)
    a3 = sh.reshape(sh.expand(a, batch + (n, m1)), (count, n, m1))
    if db == 1:
        b3 = sh.unsqueeze(sh.reshape(sh.expand(b, batch + (m2,)), (count, m2)), 2)
    else:
        b3 = sh.reshape(sh.expand(b, batch + (m2, p)), (count, m2, p))
    out_shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    out = _record_product(BmmBackward0, a3, b3)
    if db == 1:
        out = sh.squeeze(out, -1)
    return sh.unsafe_view(out, out_shape)


def _should_fold(a, b) -> bool:
    """PyTorch's ``should_fold``: whether the larger operand (3-d or more, against a 1-d or 2-d
    one) folds into a matrix for one ``mm``/``mv`` instead of a ``bmm``."""
    larger = a.ndim >= b.ndim
    big, small = (a, b) if larger else (b, a)
    if not (big.ndim >= 3 and small.ndim <= 2):
        return False
    if small._requires_grad:  # a bmm would expand its gradient to the whole batch first
        return True
    if a.ndim == 2:  # folding would need a transposed copy of the product
        return False
    data = big._data
    if data.size == 0:
        return True
    shape = list(data.shape)
    strides = [st // data.itemsize for st in data.strides]
    if not larger:  # (the folded operand is b.mT)
        shape[-2:] = shape[:-3:-1]
        strides[-2:] = strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _shape_error(a, b) -> str:
    if a.ndim == 2 and b.ndim == 2:
        return (f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                f"{b.shape[0]}x{b.shape[1]})")
    if a.ndim == 1 and b.ndim == 1:
        return (f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] "
                "to have the same number of elements, but got "
                f"{a.shape[0]} and {b.shape[0]} elements respectively")
    return f"Expected size for first two dimensions of batch2 tensor to match, got {a.shape} and {b.shape}"


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product of two 2-d tensors."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, mat2 = _autocast.lower(input, mat2)
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("self must be a matrix")
    return matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of two 3-d tensors."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, mat2 = _autocast.lower(input, mat2)
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    a, b = input._data, mat2._data
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:  # (NumPy would broadcast a 1)
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(a.dtype)} but found "
                           f"{scalar_type_name(b.dtype)}")
    ta, tb, a, b = binary_operands(input, mat2, broadcast=False)
    out = a @ b
    if out.dtype is not a.dtype:  # ml_dtypes' bfloat16 product comes back float32
        out = out.astype(a.dtype)
    return record(BmmBackward0, (ta, tb), out, operands=(a, b))


def dot(input: Tensor, other: Tensor) -> Tensor:
    """The inner product of two 1-D tensors of one dtype."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype != other.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{scalar_type_name(input.dtype)} and {scalar_type_name(other.dtype)}")
    return matmul(input, other)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix times vector."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    return matmul(input, vec)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two vectors."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return input.reshape(-1, 1) * vec2  # PyTorch: self.reshape({self.size(0), 1}) * vec2


ger = outer  # PyTorch's older name of ``outer`` (kept, without a warning)


class TraceBackward0(Node):
    """d trace(A) / dA is the identity: ``g`` on the diagonal, zeros elsewhere."""
    rule = "self: trace_backward_symint(grad, self_sym_sizes)"

    __slots__ = ("self_sym_sizes",)
    inputs = ("self",)
    saves = ("self_sym_sizes",)

    def backward(self, g):
        eye = dual.xp_of(g).eye(*self.self_sym_sizes, dtype=dual.data(g).dtype)
        return (g * eye,)


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (integers sum to int64, as in ``sum``).

    >>> import gradnb
    >>> gradnb.trace(gradnb.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(5.)
    """
    data = input._data
    if data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {data.ndim}")
    if data.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    dtype = "int64" if data.dtype.kind in "biu" else data.dtype
    out = get_array_module(data).trace(data, dtype=dtype)
    return record(TraceBackward0, (input,), out)


TENSOR_METHODS = {
    "__matmul__": matmul, "matmul": matmul,
    "__rmatmul__": reflected("__rmatmul__", lambda self, other: matmul(other, self)),
    "mm": mm, "bmm": bmm, "dot": dot, "mv": mv, "outer": outer, "ger": outer, "trace": trace,
}
