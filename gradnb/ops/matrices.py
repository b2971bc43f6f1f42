"""Matrix construction and products: triangles and diagonals, block_diag, kron, the fused
``add*`` products, inner/vdot/tensordot/einsum, dist/cdist.

``diagonal`` and ``diagonal_scatter`` are primitives whose derivatives are each other;
``cdist`` records PyTorch's ``CdistBackward0`` (or ``EuclideanDistBackward0``) with a derivative
written in gradnb ops; the rest are compositions of differentiable gradnb ops (so every order
of derivative is free).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from .._core import autocast_state as _autocast
from .._core.backend import get_array_module
from .._core.grad_mode import no_grad
from .._core.graph import Node
from .._core.record import record
from .._core.views import strided_view
from . import dual
from . import linalg as la
from . import pointwise as pw
from . import reductions as red
from . import shape as sh
from ._common import Tensor, check_same_device
from .creation import zeros
from .joining import meshgrid

__all__ = [
    "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "baddbmm", "block_diag",
    "cartesian_prod", "cdist", "diag", "diag_embed", "diagflat", "diagonal", "diagonal_copy",
    "diagonal_scatter",
    "dist", "einsum", "inner", "kron", "tensordot", "tril", "triu", "vdot",
]


def _wrap(dim: int, ndim: int) -> int:
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim % ndim


# -- diagonals --------------------------------------------------------------------------------
def _diagonal_index(shape, offset, dim1, dim2):
    """Index arrays (rows, cols) of the diagonal in the plane (dim1, dim2)."""
    n1, n2 = shape[dim1], shape[dim2]
    if offset >= 0:
        length = max(min(n1, n2 - offset), 0)
        rows = np.arange(length)
        cols = rows + offset
    else:
        length = max(min(n1 + offset, n2), 0)
        cols = np.arange(length)
        rows = cols - offset
    return rows, cols


class _OnDiagonal(Node):
    """A node that keeps ``offset``, ``dim1`` and ``dim2`` as given (PyTorch saves them so) and
    their wrapped pair ``dims``."""
    __slots__ = ("dim1", "dim2", "dims", "offset")
    saved_attrs: ClassVar[dict] = {"dim1": "dim1_shown", "dim2": "dim2_shown",
                                   "offset": "offset_shown"}
    dim1_shown = sh.torch_int_view("dim1")
    dim2_shown = sh.torch_int_view("dim2")
    offset_shown = sh.torch_int_view("offset")


class DiagonalBackward0(_OnDiagonal):
    rule = "self: diagonal_backward_symint(grad, self_sym_sizes, offset, dim1, dim2)"
    __slots__ = ("shape",)
    saved_attrs: ClassVar[dict] = {**_OnDiagonal.saved_attrs, "self_sym_sizes": "shape"}
    on_tensors = True
    is_view = True

    def backward(self, g):
        base = zeros(self.shape, dtype=g.dtype, device=g.device)
        return (diagonal_scatter(base, g, self.offset, *self.dims),)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of the plane ``(dim1, dim2)``, as the last dimension."""
    nd = input._data.ndim
    d1, d2 = _wrap(dim1, nd), _wrap(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    data = input._data
    out = get_array_module(data).diagonal(data, offset, d1, d2)
    # A view, as PyTorch's: ``x.diagonal().zero_()`` writes ``x``. (NumPy hands its diagonal out
    # read-only for an old compatibility plan; the memory is ``x``'s, or, for an expanded ``x``,
    # the memory ``x`` repeats.)
    if getattr(data.flags, "writeable", False):
        out.flags.writeable = True
    elif type(data) is np.ndarray:
        view = strided_view(out, data)
        out = out if view is None else view
    return record(DiagonalBackward0, (input,), out,
                  attrs={"offset": offset, "dims": (d1, d2), "dim1": dim1, "dim2": dim2,
                         "shape": tuple(input.shape)})


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``diagonal`` as a new tensor that shares no memory with ``input``."""
    return sh.copied_view(input, diagonal(input, offset, dim1, dim2))


class DiagonalScatterBackward0(_OnDiagonal):
    rule = "self: grad with the diagonal zeroed; src: grad's diagonal"
    __slots__ = ()
    on_tensors = True
    inputs = ("self", "src")

    def backward(self, g):
        src_shape = diagonal(g, self.offset, *self.dims).shape
        zero = zeros(src_shape, dtype=g.dtype, device=g.device)
        return (diagonal_scatter(g, zero, self.offset, *self.dims),
                diagonal(g, self.offset, *self.dims))


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` whose diagonal (as ``diagonal`` takes it) is ``src``."""
    check_same_device(input._data, src._data)
    nd = input._data.ndim
    d1, d2 = _wrap(dim1, nd), _wrap(dim2, nd)
    xp = get_array_module(input._data)
    out = input._data.copy()
    rows, cols = _diagonal_index(out.shape, offset, d1, d2)
    expected = xp.diagonal(out, offset, d1, d2).shape
    if tuple(src.shape) != expected:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(expected)}")
    moved = xp.moveaxis(out, (d1, d2), (-2, -1))
    moved[..., rows, cols] = src._data.astype(out.dtype, copy=False)
    return record(DiagonalScatterBackward0, (input, src), out,
                  attrs={"offset": offset, "dims": (d1, d2), "dim1": dim1, "dim2": dim2})


class DiagEmbedBackward0(_OnDiagonal):
    rule = "self: grad.diagonal(offset, dim1, dim2)"
    __slots__ = ()
    on_tensors = True

    def backward(self, g):
        return (diagonal(g, self.offset, *self.dims),)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Tensors whose diagonals (in the plane ``(dim1, dim2)``) are the last dim of ``input``."""
    n = input.shape[-1] + abs(offset)
    nd = input.dim() + 1
    d1, d2 = _wrap(dim1, nd), _wrap(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape = list(input.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    data = input._data
    out = get_array_module(data).zeros(shape, dtype=data.dtype)
    rows, cols = _diagonal_index(out.shape, offset, d1, d2)
    get_array_module(data).moveaxis(out, (d1, d2), (-2, -1))[..., rows, cols] = data
    return record(DiagEmbedBackward0, (input,), out,
                  attrs={"offset": offset, "dims": (d1, d2), "dim1": dim1, "dim2": dim2})


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D input's square matrix with it on the ``diagonal``; a 2-D input's diagonal."""
    if input.dim() == 1:
        return diag_embed(input, diagonal)
    if input.dim() == 2:
        return diagonal_copy(input, diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The flattened input on the ``offset`` diagonal of a square matrix."""
    return diag_embed(input.reshape(-1), offset)


class TrilBackward0(Node):
    """Gradient of ``tril``: the lower triangle of ``g``."""
    rule = "self: grad.tril(diagonal)"
    __slots__ = ("diagonal",)
    fit_grads = False  # the rule returns the input's shape itself
    saved_attrs: ClassVar[dict] = {"diagonal": "diagonal_shown"}
    diagonal_shown = sh.torch_int_view("diagonal")

    def backward(self, g):
        if isinstance(g, Tensor):
            return (tril(g, self.diagonal),)
        return (get_array_module(g).tril(g, self.diagonal),)


class TriuBackward0(TrilBackward0):
    """Gradient of ``triu``: the upper triangle of ``g``."""
    rule = "self: grad.triu(diagonal)"
    __slots__ = ()

    def backward(self, g):
        if isinstance(g, Tensor):
            return (triu(g, self.diagonal),)
        return (get_array_module(g).triu(g, self.diagonal),)


def _triangle(input: Tensor, diagonal: int, cls, name: str) -> Tensor:
    data = input._data
    if data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    xp = get_array_module(data)
    out = xp.tril(data, diagonal) if cls is TrilBackward0 else xp.triu(data, diagonal)
    return record(cls, (input,), out, attrs={"diagonal": diagonal})


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (on and below the ``diagonal``); zeros above."""
    return _triangle(input, diagonal, TrilBackward0, "tril")


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (on and above the ``diagonal``); zeros below."""
    return _triangle(input, diagonal, TriuBackward0, "triu")


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of 0-, 1- or 2-D tensors."""
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"gradnb.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.dim()} dimensions")
        blocks.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not blocks:
        return zeros(1, 0)
    dtype = sh._promoted_dtype(blocks)
    out = get_array_module(blocks[0]._data).zeros(
        (sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype=dtype)
    spans, top, left = [], 0, 0
    for b in blocks:
        r, c = b.shape
        out[top:top + r, left:left + c] = b._data
        spans.append((top, top + r, left, left + c))
        top, left = top + r, left + c
    return record(BlockDiagBackward0, tuple(tensors), out, attrs={"spans": tuple(spans)})


class BlockDiagBackward0(Node):
    """Gradient of ``block_diag``: each input gets its block of ``g``."""
    rule = "tensors: block_diag_backward(grad, tensors_args_sizes, tensors_args_scalar_types)"
    __slots__ = ("spans",)

    def backward(self, g):
        grads = []
        for i, (r0, r1, c0, c1) in enumerate(self.spans):
            if not self.needs(i):
                grads.append(None)
                continue
            shape, _ = self.input_metadata(i)
            grads.append(dual.reshape(g[r0:r1, c0:c1], shape))
        return tuple(grads)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product."""
    nd = max(input.dim(), other.dim())
    a = (1,) * (nd - input.dim()) + tuple(input.shape)
    b = (1,) * (nd - other.dim()) + tuple(other.shape)
    a_shape = [s for n in a for s in (n, 1)]
    b_shape = [s for n in b for s in (1, n)]
    # as PyTorch: every reshape an ``_unsafe_view``
    out = sh.unsafe_view(input, a_shape) * sh.unsafe_view(other, b_shape)
    return sh.unsafe_view(out, [x * y for x, y in zip(a, b)])


# -- fused products ----------------------------------------------------------------------------
def _fused(input, product, beta, alpha):
    if alpha != 1:
        product = product * alpha
    if beta == 0:  # PyTorch ignores input entirely (NaN and inf included)
        return product.expand(*np.broadcast_shapes(tuple(input.shape), tuple(product.shape)))
    return input * beta + product if beta != 1 else input + product


def addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, mat1, mat2 = _autocast.lower(input, mat1, mat2)
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.dim()}-D tensor" if mat1.dim() != 2
                           else f"mat2 must be a matrix, got {mat2.dim()}-D tensor")
    return _fused_node(la.AddmmBackward0, input, (mat1, mat2), lambda: la.mm(mat1, mat2), beta,
                       alpha)


def _fused_node(cls, input, operands, product, beta, alpha, attrs=None):
    """``beta * input + alpha * product``, computed as ``_fused`` computes it (same values,
    dtypes, errors), recorded as PyTorch's one fused node ``cls``."""
    with no_grad():
        data = _fused(input, product(), beta, alpha)._data
    if beta == 0:  # an expanded view of the product: the result is a tensor of its own
        data = np.array(data)
    attrs = {"alpha": alpha, "beta": beta} if attrs is None else {"alpha": alpha, "beta": beta,
                                                                  **attrs}
    return record(cls, (input, *operands), data, attrs=attrs)


class _FusedBackward(Node):
    """The ``add*`` products: ``self`` gets ``beta * grad`` (the engine sums it down to its
    shape), the operands ``alpha`` times the product's gradient."""
    __slots__ = ("alpha", "beta")
    on_tensors = True

    def _self_grad(self, g):
        return g * self.beta if self.needs(0) else None


class AddmvBackward0(_FusedBackward):
    rule = ("self: maybe_multiply(grad, beta.conj()); mat: maybe_multiply(grad.ger(vec.conj()), "
            "alpha.conj()); vec: maybe_multiply(mat.t().conj().mv(grad), alpha.conj())")
    __slots__ = ()
    inputs = ("self", "mat", "vec")
    saves = ("alpha", "beta", "mat", "vec")
    saved_when: ClassVar[dict] = {"mat": ("vec",), "vec": ("mat",)}

    def backward(self, g):
        mat, vec = self.saved(g)
        return (self._self_grad(g),
                la.outer(g, vec.conj()) * self.alpha if self.needs(1) else None,
                la.mv(mat.mT.conj(), g) * self.alpha if self.needs(2) else None)


def addmv(input, mat, vec, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    return _fused_node(AddmvBackward0, input, (mat, vec), lambda: la.mv(mat, vec), beta, alpha)


class AddrBackward0(_FusedBackward):
    rule = ("self: maybe_multiply(grad, beta.conj()); vec1: maybe_multiply(grad.mv(vec2.conj()), "
            "alpha.conj()); vec2: maybe_multiply(grad.t().mv(vec1.conj()), alpha.conj())")
    __slots__ = ()
    inputs = ("self", "vec1", "vec2")
    saves = ("alpha", "beta", "vec1", "vec2")
    saved_when: ClassVar[dict] = {"vec1": ("vec2",), "vec2": ("vec1",)}

    def backward(self, g):
        vec1, vec2 = self.saved(g)
        return (self._self_grad(g),
                la.mv(g, vec2.conj()) * self.alpha if self.needs(1) else None,
                la.mv(g.mT, vec1.conj()) * self.alpha if self.needs(2) else None)


def addr(input, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    return _fused_node(AddrBackward0, input, (vec1, vec2), lambda: la.outer(vec1, vec2), beta,
                       alpha)


class BaddbmmBackward0(_FusedBackward):
    rule = ("self: maybe_multiply(grad, beta.conj()); batch1: maybe_multiply(grad.bmm(batch2"
            ".transpose(1, 2).conj()), alpha.conj()); batch2: maybe_multiply(batch1.transpose(1, "
            "2).conj().bmm(grad), alpha.conj())")
    __slots__ = ()
    inputs = ("self", "batch1", "batch2")
    saves = ("alpha", "batch1", "batch2", "beta")
    saved_when: ClassVar[dict] = {"batch1": ("batch2",), "batch2": ("batch1",)}

    def backward(self, g):
        b1, b2 = self.saved(g)
        return (self._self_grad(g),
                la.bmm(g, b2.mT.conj()) * self.alpha if self.needs(1) else None,
                la.bmm(b1.mT.conj(), g) * self.alpha if self.needs(2) else None)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` per batch."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, batch1, batch2 = _autocast.lower(input, batch1, batch2)
    return _fused_node(BaddbmmBackward0, input, (batch1, batch2),
                       lambda: la.bmm(batch1, batch2), beta, alpha)


class AddbmmBackward0(_FusedBackward):
    rule = ("self: maybe_multiply(grad, beta.conj()); batch1: maybe_multiply(grad.unsqueeze(0)"
            ".expand(...).bmm(batch2.transpose(1, 2).conj()), alpha.conj()); batch2: "
            "maybe_multiply(batch1.transpose(1, 2).conj().bmm(grad.unsqueeze(0).expand(...)), "
            "alpha.conj())")
    __slots__ = ("batch1_sym_argsize_0", "batch1_sym_argsize_1", "batch2_sym_argsize_2")
    inputs = ("self", "batch1", "batch2")
    saves = ("alpha", "batch1", "batch1_sym_argsize_0", "batch1_sym_argsize_1", "batch2",
             "batch2_sym_argsize_2", "beta")
    saved_when: ClassVar[dict] = {"batch1": ("batch2",), "batch2": ("batch1",)}

    def backward(self, g):
        b1, b2 = self.saved(g)
        n = self.batch1_sym_argsize_0
        gb = g.unsqueeze(0).expand(n, *g.shape)
        return (self._self_grad(g),
                la.bmm(gb, b2.mT.conj()) * self.alpha if self.needs(1) else None,
                la.bmm(b1.mT.conj(), gb) * self.alpha if self.needs(2) else None)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, batch1, batch2 = _autocast.lower(input, batch1, batch2)
    return _fused_node(
        AddbmmBackward0, input, (batch1, batch2),
        lambda: red.sum(la.bmm(batch1, batch2), 0), beta, alpha,
        {"batch1_sym_argsize_0": batch1.shape[0], "batch1_sym_argsize_1": batch1.shape[1],
         "batch2_sym_argsize_2": batch2.shape[2]})


addcmul, addcdiv = pw.addcmul, pw.addcdiv  # pointwise ops with their own nodes


# -- contractions -----------------------------------------------------------------------------
def tensordot(a: Tensor, b: Tensor, dims=2, out=None) -> Tensor:
    """Sum of products over ``dims`` (a count of trailing/leading dims, or two lists).

    Composed as PyTorch's ``at::tensordot``: each operand permuted (dims kept as given, so
    ``dims=2`` contracts ``a``'s dims ``-2, -1``) and reshaped to a matrix for one ``mm``, or
    flattened for one ``dot`` when neither keeps a free element; a contracted dim of size 1
    is summed away first (it broadcasts against the other's).
    """
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        dims_a, dims_b = dims
        if isinstance(dims_a, int):
            dims_a, dims_b = [dims_a], [dims_b]
        dims_a, dims_b = list(dims_a), list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    wrapped_a = [_wrap(d, a.dim()) for d in dims_a]
    wrapped_b = [_wrap(d, b.dim()) for d in dims_b]
    t1, t2, csize = a, b, 1
    for da, db, wa, wb in zip(dims_a, dims_b, wrapped_a, wrapped_b):
        s1, s2 = a.shape[wa], b.shape[wb]
        if s2 == 1:  # a broadcast dim is summed right away
            t1 = red.sum(t1, [da], True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = red.sum(t2, [db], True, dtype=t2.dtype)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in "
                               f"dim {da} and second has size {s2} in dim {db}")
        else:
            csize *= s1
    free_a = [d for d in range(a.dim()) if d not in wrapped_a]
    free_b = [d for d in range(b.dim()) if d not in wrapped_b]
    size1 = math.prod(t1.shape[d] for d in free_a)
    size2 = math.prod(t2.shape[d] for d in free_b)
    shape = [t1.shape[d] for d in free_a] + [t2.shape[d] for d in free_b]
    t1 = t1.permute(*free_a, *dims_a)
    t2 = t2.permute(*dims_b, *free_b)
    if size1 == 1 and size2 == 1:  # a full contraction: dot of views, else mul and sum
        if t1._data.flags.c_contiguous and t2._data.flags.c_contiguous:
            flat1 = t1 if t1.dim() == 1 else t1.reshape(-1)
            flat2 = t2 if t2.dim() == 1 else t2.reshape(-1)
            return la.dot(flat1, flat2).reshape(shape)
        return red.sum(t1.squeeze() * t2.squeeze(), dtype=t1.dtype).reshape(shape)
    return la.mm(t1.reshape(size1, csize), t2.reshape(csize, size2)).reshape(shape)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum of products over the last dimension of both (a product if either is 0-d)."""
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-D tensors (the first conjugated)."""
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D "
                           "tensors")
    if input.dtype != other.dtype or input.shape != other.shape:
        return la.dot(input, other)  # (its errors name both dtypes or sizes)
    data = get_array_module(input._data).vdot(input._data, other._data)
    return record(VdotBackward0, (input, other), np.asarray(data))


class VdotBackward0(Node):
    rule = "self: grad.conj() * other; other: grad * self"
    __slots__ = ()
    saves = ("other", "self")
    saved_when: ClassVar[dict] = {"other": ("self",), "self": ("other",)}

    def backward(self, g):
        other, x = self.saved(g)
        return (dual.conj(g) * other if self.needs(0) else None,
                g * x if self.needs(1) else None)


def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    """The ``p``-norm of ``input - other`` (PyTorch's ``DistBackward0`` node)."""
    return red.dist(input, other, p)


_CDIST_MODES = {None: 0, "use_mm_for_euclid_dist_if_necessary": 0,
                "use_mm_for_euclid_dist": 1, "donot_use_mm_for_euclid_dist": 2}


def cdist(x1: Tensor, x2: Tensor, p=2.0, compute_mode=None) -> Tensor:
    """Pairwise ``p``-norm distances between the rows of ``x1`` and ``x2`` (batched).

    As PyTorch's: one ``_cdist_forward`` (``CdistBackward0``), except the Euclidean distance
    through matrix products (``_euclidean_dist``) for ``p=2`` when ``compute_mode`` asks for it
    or, by default, when either side has more than 25 rows."""
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    mode = _CDIST_MODES.get(compute_mode)
    if mode is None:
        raise RuntimeError(f"{compute_mode} is not a valid value for compute_mode")
    r1, r2, c = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    by_mm = p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))
    if x1.numel() == 0 or x2.numel() == 0 or not by_mm:
        return _cdist_forward(x1, x2, float(p))
    batch = tuple(np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    n = int(np.prod(batch))
    out_shape = (*batch, r1, r2)
    if r1 == 0 or r2 == 0 or n == 0 or c == 0:  # (not reached: empty inputs go above)
        return _cdist_forward(x1, x2, float(p))
    if n == 1:
        dist = _euclidean_dist(x1, x2)
    else:
        dist = _euclidean_dist(x1.expand(*batch, r1, c).contiguous().view(n, r1, c),
                               x2.expand(*batch, r2, c).contiguous().view(n, r2, c))
    return dist.view(*out_shape)


def _differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[..., :, None, :] - b[..., None, :, :]


def _cdist_array(a: np.ndarray, b: np.ndarray, p: float) -> np.ndarray:
    diff = np.abs(_differences(a, b))
    if p == 0:
        return (diff != 0).sum(-1).astype(a.dtype)
    if p == np.inf:
        return diff.max(-1, initial=0.0)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return np.sqrt((diff * diff).sum(-1))
    return (diff ** p).sum(-1) ** (1 / p)


class CdistBackward0(Node):
    rule = ("x1: _cdist_backward(grad.contiguous(), x1, x2, p, result); "
            "x2: _cdist_backward(grad.mT().contiguous(), x2, x1, p, result.mT().contiguous())")
    __slots__ = ("p",)
    on_tensors = True
    inputs = ("x1", "x2")
    saves = ("x1", "x2", "p", "result")

    def backward(self, g):
        x1, x2, dist = self.saved(g)
        w = _cdist_pair_grad(x1.unsqueeze(-2) - x2.unsqueeze(-3), dist.unsqueeze(-1),
                             g.unsqueeze(-1), self.p)
        return (red.sum(w, -2) if self.needs(0) else None,
                -red.sum(w, -3) if self.needs(1) else None)


def _cdist_pair_grad(diff, dist, g, p: float):
    """PyTorch's ``_cdist_backward`` per pair of rows: the gradient of ``|diff|_p`` times
    ``g`` (zero where the distance is zero)."""
    from . import elementwise as ew

    if p == 0:
        return diff * 0
    if p == 1:
        return g * diff.sign()
    if p == np.inf:
        return g * diff.sign() * (diff.abs() == dist)
    zero = dist == 0
    safe = ew.where(zero, 1.0, dist)
    if p == 2:
        return ew.where(zero, 0.0, g * diff / safe)
    flat = diff == 0
    power = ew.where(flat, 1.0, diff.abs()) ** (p - 1)  # |diff|^(p-1), 0 taken where diff is
    return ew.where(zero | flat, 0.0, g * diff.sign() * power / safe ** (p - 1))


def _cdist_forward(x1: Tensor, x2: Tensor, p: float) -> Tensor:
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    out = _cdist_array(x1._data, x2._data, p)
    return record(CdistBackward0, (x1, x2), out, attrs={"p": p})


class EuclideanDistBackward0(Node):
    rule = "x1, x2: _euclidean_dist_backward(grad, x1, x2, result)"
    __slots__ = ()
    on_tensors = True
    inputs = ("x1", "x2")
    saves = ("x1", "x2", "result")

    def backward(self, g):
        from . import elementwise as ew

        x1, x2, res = self.saved(g)
        zero = res == 0
        ratio = ew.where(zero, 0.0, g / ew.where(zero, 1.0, res))
        return (x1 * red.sum(ratio, -1, keepdim=True) - la.matmul(ratio, x2),
                x2 * red.sum(ratio, -2).unsqueeze(-1) - la.matmul(ratio.transpose(-2, -1), x1))


def _euclidean_dist(x1: Tensor, x2: Tensor) -> Tensor:
    return record(EuclideanDistBackward0, (x1, x2), _cdist_array(x1._data, x2._data, 2.0))


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """All combinations of the elements of 1-D tensors, as rows."""
    if len(tensors) == 1:
        return tensors[0]

    grids = meshgrid(*tensors, indexing="ij")
    return sh.stack([g.reshape(-1) for g in grids], 1)


# -- einsum ------------------------------------------------------------------------------------
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_einsum(equation: str, operands) -> tuple[list[list[str]], list[str], int]:
    """Each operand's labels (``"..."`` one token), the output's, and the number of dims the
    ellipsis covers."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation" if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    labels, ell_dims = [], 0
    for k, (term, op) in enumerate(zip(terms, operands)):
        has_ell = "..." in term
        letters = list(term.replace("...", ""))
        if (len(letters) > op.dim()) if has_ell else (len(letters) != op.dim()):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(letters)}) does not match the number of dimensions "
                               f"({op.dim()}) for operand {k} and no ellipsis was given")
        if has_ell:
            before, _, after = term.partition("...")
            ell_dims = max(ell_dims, op.dim() - len(letters))
            labels.append([*before, "...", *after])
        else:
            labels.append(letters)
    if arrow:
        before, ell, after = rhs.partition("...")
        out = [*before, "...", *after] if ell else list(rhs)
    else:
        counts = {}
        for term in labels:
            for c in term:
                if c != "...":
                    counts[c] = counts.get(c, 0) + 1
        out = ["...", *sorted(c for c, k in counts.items() if k == 1)]
    return labels, out, ell_dims


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation (``einsum('ij,jk->ik', a, b)``); operands may also come as one list.

    Composed as PyTorch's ``at::einsum`` (without a contraction path): each operand's
    diagonals taken, missing labels unsqueezed and its dims permuted to one order (output
    labels first, then the contracted ones in PyTorch's label order, A-Z then a-z); operands
    contracted left to right, each pair through ``sumproduct_pair`` (a ``mul``, or permute,
    reshape, ``bmm``, view, permute); contracted dims summed (one operand) or viewed away.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, out_terms, ell_dims = _parse_einsum(equation, operands)
    dtype = np.result_type(*[o._data for o in operands])
    ops = [o if o._data.dtype == dtype else o.to(_dtype_of(dtype)) for o in operands]
    index, ell_index = {}, None
    for label in out_terms:
        if label == "...":
            ell_index = len(index)
            for k in range(ell_dims):
                index["...", k] = len(index)
        else:
            index[label] = len(index)
    out_num_dim = len(index)
    if ell_index is None:
        for k in range(ell_dims):
            index["...", k] = len(index)
    for label in sorted({c for term in terms for c in term if c != "..."}):
        if label not in index:
            index[label] = len(index)
    perm_index = len(index)
    counts = [0] * perm_index
    aligned = []
    for op, term in zip(ops, terms):
        permutation = [-1] * perm_index
        dim = 0
        for label in term:
            if label == "...":
                n = op.dim() - (len(term) - 1)
                for k in range(ell_dims - n, ell_dims):
                    if op.shape[dim] != 1:
                        counts[index["...", k]] += 1
                    permutation[index["...", k]] = dim
                    dim += 1
            elif permutation[index[label]] == -1:
                if op.shape[dim] != 1:
                    counts[index[label]] += 1
                permutation[index[label]] = dim
                dim += 1
            else:  # a repeated label: its diagonal, in the first one's place
                prev = permutation[index[label]]
                op = diagonal(op, 0, prev, dim).movedim(-1, prev)
        for k, place in enumerate(permutation):
            if place == -1:
                op = op.unsqueeze(dim)
                permutation[k] = dim
                dim += 1
        aligned.append(op.permute(*permutation))
    _check_einsum_broadcast(aligned, operands)
    while len(aligned) > 1:
        a, b = aligned.pop(0), aligned.pop(0)
        sum_dims, a_sum, b_sum = [], [], []
        for dim in range(out_num_dim, perm_index):
            if a.shape[dim] != 1 and b.shape[dim] != 1:
                counts[dim] -= 1
                if counts[dim] == 1:
                    sum_dims.append(dim)
                    counts[dim] = 0
            elif counts[dim] == 1:
                if a.shape[dim] != 1:
                    a_sum.append(dim)
                    counts[dim] = 0
                elif b.shape[dim] != 1:
                    b_sum.append(dim)
                    counts[dim] = 0
        if a_sum:
            a = red.sum(a, a_sum, True)
        if b_sum:
            b = red.sum(b, b_sum, True)
        aligned.insert(0, _sumproduct_pair(a, b, sum_dims))
    result = aligned[0]
    if perm_index > out_num_dim:
        if len(ops) > 1:
            return result.view(*result.shape[:out_num_dim])
        return red.sum(result, list(range(out_num_dim, perm_index)))
    return result


def _dtype_of(np_dtype):
    from .._core.dtype import from_numpy_dtype
    return from_numpy_dtype(np_dtype)


def _check_einsum_broadcast(aligned, operands) -> None:
    for dim in range(aligned[0].dim()):
        size = 1
        for op in aligned:
            n = op.shape[dim]
            if n != 1 and size != 1 and n != size:
                shapes = ", ".join(f"{list(o.shape)}->{list(a.shape)}"
                                   for o, a in zip(operands, aligned))
                raise RuntimeError("einsum(): operands do not broadcast with remapped shapes "
                                   f"(original->remapped): {shapes}")
            if n != 1:
                size = n


def _sumproduct_pair(left, right, sum_dims):
    """PyTorch's ``sumproduct_pair`` (keepdim): ``left * right`` summed over ``sum_dims``, as
    one ``bmm`` of the two permuted and reshaped to ``(both, left only, summed)`` and
    ``(both, summed, right only)``."""
    if not sum_dims:
        return left * right
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.dim()):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left.shape[i]
            elif sl:
                left = red.sum(left, i, True)
            elif sr:
                right = red.sum(right, i, True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = [left.shape[d] for d in lro] + [left.shape[d] for d in lo] + \
        [1] * len(sum_dims) + [right.shape[d] for d in ro]
    operm = [0] * len(out_size)
    for k, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = k
    left = left.permute(*lro, *lo, *sum_dims, *ro).reshape(lro_size, lo_size, sum_size)
    right = right.permute(*lro, *sum_dims, *ro, *lo).reshape(lro_size, sum_size, ro_size)
    return la.bmm(left, right).view(*out_size).permute(*operm)


TENSOR_METHODS = {
    "addbmm": addbmm, "addcdiv": addcdiv, "addcmul": addcmul, "addmm": addmm, "addmv": addmv,
    "addr": addr, "baddbmm": baddbmm, "diag": diag, "diag_embed": diag_embed,
    "diagflat": diagflat, "diagonal": diagonal, "diagonal_scatter": diagonal_scatter,
    "dist": dist, "inner": inner, "kron": kron, "tril": tril, "triu": triu, "vdot": vdot,
}
