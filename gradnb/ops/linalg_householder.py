"""Householder reflectors in LAPACK's ``geqrf`` convention: ``geqrf`` itself and the products
``linalg.householder_product`` (``orgqr``) and ``ormqr``.

Column ``i`` of ``input`` holds the reflector ``v_i`` below its diagonal (a 1 on the diagonal,
zeros above, none of them stored) and ``H_i = I - tau_i v_i v_i^H`` (``v_i^H`` the conjugate
transpose, LAPACK's complex convention); ``Q = H_1 H_2 ... H_k``. Both ops apply the
reflectors one at a time to a matrix (``C - tau_i v_i (v_i^H C)``, never forming ``Q``) and
record one node, as PyTorch's; their gradients walk the reflectors back one at a time, written
with gradnb ops so they differentiate again. ``geqrf`` is NumPy's (LAPACK's) own, whose
derivative PyTorch does not implement.
"""

from __future__ import annotations

import collections

import numpy as np

from .._core.grad_mode import no_grad
from .._core.graph import Node, switches
from .._core.record import record, would_record
from . import linalg as la
from . import matrices as mx
from ._args import scalar_type_name
from ._common import Tensor
from ._out import accepts_out
from .creation import eye, zeros_like
from .lapack import column_major
from .shape import cat

__all__ = ["geqrf", "orgqr", "ormqr"]


def _reflectors(input: Tensor) -> Tensor:
    """The vectors ``v_i`` as the columns of a matrix (unit diagonal, zeros above)."""
    rows, cols = input.shape[-2], input.shape[-1]
    return mx.tril(input, -1) + eye(rows, cols, dtype=input.dtype, device=input.device)


def _mH(x: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions (the transpose for real tensors)."""
    return x.transpose(-2, -1).conj()


def _apply(V: Tensor, tau: Tensor, C: Tensor, order, left: bool) -> Tensor:
    """``C`` multiplied by the reflectors ``H_i`` for ``i`` in ``order``, each one on the left
    (``H_i C``, the last of ``order`` outermost) or on the right (``C H_i``)."""
    for i in order:
        v = V[..., :, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        if left:
            C = C - t * la.matmul(v, la.matmul(_mH(v), C))
        else:
            C = C - t * la.matmul(la.matmul(C, v), _mH(v))
    return C


def _apply_backward(V: Tensor, tau: Tensor, C: Tensor, order, left: bool, G: Tensor):
    """The gradients ``(V, tau, C)`` of ``_apply(V, tau, C, order, left)`` given that of its
    result, ``G``: the reflectors walked back in turn, each one's input recomputed forward
    from ``C`` (a reflector with any ``tau`` is not its own inverse)."""
    order = list(order)
    states = [C]
    for i in order[:-1]:
        states.append(_apply(V, tau, states[-1], (i,), left))
    gV = [None] * V.shape[-1]
    gtau = [None] * tau.shape[-1]
    for i, Ci in zip(reversed(order), reversed(states)):
        v = V[..., :, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        vH = _mH(v)
        # C' is holomorphic in C, tau and the v of ``v (..)``, antiholomorphic in the v of
        # v^H: the gradients (PyTorch's convention, conjugate Wirtinger) conjugate tau where
        # it multiplies the holomorphic part's adjoint and keep it for v^H's.
        if left:  # C' = C - t v (v^H C)
            wC, wG = la.matmul(vH, Ci), la.matmul(vH, G)  # rows
            gtau[i] = -(wC.conj() * wG).sum(-1)
            gV[i] = -(t.conj() * la.matmul(G, _mH(wC)) + t * la.matmul(Ci, _mH(wG)))
            G = G - t.conj() * la.matmul(v, wG)
        else:  # C' = C - t (C v) v^H
            wC, wG = la.matmul(Ci, v), la.matmul(G, v)  # columns
            gtau[i] = -(wC.conj() * wG).sum(-2)
            gV[i] = -(t.conj() * la.matmul(_mH(Ci), wG) + t * la.matmul(_mH(G), wC))
            G = G - t.conj() * la.matmul(wG, vH)
    zero_col = zeros_like(V[..., :, :1])
    gV = cat([c if c is not None else zero_col for c in gV], -1)
    zero_tau = zeros_like(tau[..., :1])
    gtau = cat([c if c is not None else zero_tau for c in gtau], -1)
    return mx.tril(gV, -1), gtau, G


class LinalgHouseholderProductBackward0(Node):
    """The product's gradient, reflector by reflector (no reflectors, ``tau`` empty: the
    output is the identity, with no gradient for either input, as PyTorch leaves it)."""
    rule = ("input, tau: householder_product_backward(grad, result, input, tau)")
    __slots__ = ()
    on_tensors = True
    inputs = ("input", "tau")
    saves = ("input", "tau", "result")

    def backward(self, g):
        A, tau, _ = self.saved(g)
        k = tau.shape[-1]
        if k == 0:
            return None, None
        m, n = A.shape[-2], A.shape[-1]
        start = eye(m, n, dtype=A.dtype, device=A.device).expand(*A.shape)
        gA, gtau, _ = _apply_backward(_reflectors(A), tau, start, reversed(range(k)), True, g)
        return gA, gtau


class OrmqrBackward0(Node):
    rule = ("self, input2, input3: ormqr_backward(grad, result, self, input2, input3, left, "
            "transpose, grad_input_mask)")
    __slots__ = ("left", "transpose")
    on_tensors = True
    inputs = ("self", "input2", "input3")
    saves = ("input2", "input3", "self", "result", "left", "transpose")

    def backward(self, g):
        tau, C, A, _ = self.saved(g)
        k = tau.shape[-1]
        if k == 0:
            return None, None, g
        gA, gtau, gC = _apply_backward(_reflectors(A), _ormqr_scales(tau, self.transpose), C,
                                       _ormqr_order(k, self.left, self.transpose), self.left, g)
        # the scales conjugated for Q^H: so is their gradient
        return gA, _ormqr_scales(gtau, self.transpose), gC


def _ormqr_order(k: int, left: bool, transpose: bool):
    """The reflectors in the order ``ormqr`` applies them: ``Q C`` applies ``H_k`` first,
    ``Q^H C = H_k^H ... H_1^H C`` applies ``H_1`` first (mirrored on the right)."""
    return range(k) if transpose == left else reversed(range(k))


def _ormqr_scales(tau: Tensor, transpose: bool) -> Tensor:
    """The scales of the reflectors ``ormqr`` applies: ``Q^H``'s ``H_i^H = I - conj(tau_i)
    v_i v_i^H`` (LAPACK's ``trans='C'`` for complex dtypes, as PyTorch's)."""
    return tau.conj() if transpose else tau


def _check_tau_batch(name: str, input: Tensor, tau: Tensor) -> None:
    if tau.dim() != input.dim() - 1:
        raise RuntimeError(f"gradnb.{name}: Expected tau to have one dimension less than "
                           f"input, but got tau.ndim equal to {tau.dim()} and input.ndim is "
                           f"equal to {input.dim()}")
    if tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"gradnb.{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")


# LAPACK's orgqr/ormqr come in these four types only
_LAPACK_DTYPES = ("float32", "float64", "complex64", "complex128")


def _check_lapack_dtype(kernel: str, input: Tensor) -> None:
    if input.dtype.name not in _LAPACK_DTYPES:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{scalar_type_name(input.dtype)}'")


def _check_same_dtype(name: str, input: Tensor, other: Tensor, what: str) -> None:
    if other.dtype != input.dtype:
        raise RuntimeError(f"gradnb.{name}: Expected input and {what} to have the same dtype, "
                           f"but input has dtype{scalar_type_name(input.dtype)} and {what} has "
                           f"dtype {scalar_type_name(other.dtype)}")


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first ``n`` columns of ``H_1 ... H_k`` for the reflectors in ``A`` (``m x n``,
    ``m >= n``) and their scales ``tau`` (``k <= n``): ``Q`` of a ``geqrf`` factorization."""
    name = "linalg.householder_product"
    if A.dim() < 2:
        raise RuntimeError(f"gradnb.{name}: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError(f"gradnb.{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if n < tau.shape[-1]:
        raise RuntimeError(f"gradnb.{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    _check_tau_batch(name, A, tau)
    if tau.dtype != A.dtype:
        raise RuntimeError(f"gradnb.{name}: tau dtype {scalar_type_name(tau.dtype)} does not "
                           f"match input dtype {scalar_type_name(A.dtype)}")
    _check_lapack_dtype("orgqr_cpu", A)
    k = tau.shape[-1]
    start = eye(m, n, dtype=A.dtype, device=A.device).expand(*A.shape)
    with no_grad():
        out = start.clone() if k == 0 else _apply(_reflectors(A), tau, start,
                                                  reversed(range(k)), left=True)
    return record(LinalgHouseholderProductBackward0, (A, tau), column_major(out._data))


orgqr = householder_product


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True,
          transpose: bool = False) -> Tensor:
    """``Q @ other`` (``other @ Q`` when not ``left``; ``Q^H`` in place of ``Q`` when
    ``transpose``) for ``Q = H_1 ... H_k`` given by ``geqrf``'s reflectors and ``tau``."""
    if input.dim() < 2:
        raise RuntimeError("gradnb.ormqr: input must have at least 2 dimensions.")
    if other.dim() < 2:
        raise RuntimeError("gradnb.ormqr: other must have at least 2 dimensions.")
    side = -2 if left else -1
    k = tau.shape[-1]
    if k != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"gradnb.ormqr: tau.shape[-1] must be equal to "
                           f"min(other.shape[{side}], input.shape[-1])")
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"gradnb.ormqr: other.shape[{side}] must be equal to "
                           "input.shape[-2]")
    _check_tau_batch("ormqr", input, tau)
    _check_same_dtype("ormqr", input, tau, "tau")
    _check_same_dtype("ormqr", input, other, "other")
    _check_lapack_dtype("ormqr_cpu", input)
    with no_grad():
        out = other.clone() if k == 0 else _apply(
            _reflectors(input), _ormqr_scales(tau, transpose), other,
            _ormqr_order(k, left, transpose), left)
    return record(OrmqrBackward0, (input, tau, other), column_major(out._data),
                  attrs={"left": left, "transpose": transpose})


# -- geqrf ------------------------------------------------------------------------------------------
_geqrf_result = collections.namedtuple("geqrf", ["a", "tau"])


class GeqrfBackward0(Node):
    """PyTorch's node for ``geqrf``, which has no derivative: a backward that reaches it
    raises."""
    rule = "self: not_implemented(\"geqrf\")"
    runs_user_code = True  # it raises by design: the engine holds leaf gradients back
    __slots__ = ()
    inputs = ("self",)
    outputs = ("a", "tau")

    def backward(self, ga, gtau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


@accepts_out("geqrf", result_layout=True)  # (any dtype the result casts to, as PyTorch's)
def geqrf(input: Tensor):
    """``(a, tau)``: LAPACK's ``geqrf``, the QR factorization of (batches of) ``m x n``
    matrices as Householder reflectors: ``R`` on and above ``a``'s diagonal, the reflectors'
    vectors below it (their leading 1 not stored) and their scales in ``tau``
    (``min(m, n)`` of them), so that ``Q = H_1 ... H_k`` with ``H_i = I - tau_i v_i v_i^H``."""
    if input.dim() < 2:
        raise RuntimeError("gradnb.geqrf: input must have at least 2 dimensions.")
    _check_lapack_dtype("geqrf_cpu", input)
    recording = would_record((input,))
    if recording and input.dtype.is_complex:  # PyTorch refuses it at the call, before backward
        raise RuntimeError("geqrf does not support automatic differentiation for outputs with "
                           "complex dtype.")
    x = input._data
    m, n = x.shape[-2:]
    if x.size == 0:
        a, tau = x.copy(), np.zeros(x.shape[:-2] + (min(m, n),), dtype=x.dtype)
    else:
        # NumPy's "raw" QR is LAPACK's geqrf on the transpose (Fortran order): a comes back
        # transposed
        h, tau = np.linalg.qr(x, mode="raw")
        a = np.swapaxes(h, -1, -2)
    if recording:
        switches.user_code = True  # the engine must look for nodes that can raise
    a, tau = record(GeqrfBackward0, (input,), (column_major(a), np.ascontiguousarray(tau)))
    return _geqrf_result(a, tau)


TENSOR_METHODS = {"geqrf": geqrf, "ormqr": ormqr, "orgqr": orgqr}
