"""Products of Householder reflectors, in LAPACK's ``geqrf`` convention:
``linalg.householder_product`` (``orgqr``) and ``ormqr`` (real dtypes).

Column ``i`` of ``input`` holds the reflector ``v_i`` below its diagonal (a 1 on the diagonal,
zeros above, none of them stored) and ``H_i = I - tau_i v_i v_i^T``; ``Q = H_1 H_2 ... H_k``.
Both ops apply the reflectors one at a time to a matrix (``C - tau_i v_i (v_i^T C)``, never
forming ``Q``) and record one node, as PyTorch's; their gradients walk the reflectors back
one at a time, written with gradnb ops so they differentiate again.
"""

from __future__ import annotations

from .._core.grad_mode import no_grad
from .._core.graph import Node
from .._core.record import record
from . import linalg as la
from . import matrices as mx
from ._common import Tensor
from .creation import eye, zeros_like
from .lapack import column_major
from .shape import cat

__all__ = ["orgqr", "ormqr"]


def _reflectors(input: Tensor) -> Tensor:
    """The vectors ``v_i`` as the columns of a matrix (unit diagonal, zeros above)."""
    rows, cols = input.shape[-2], input.shape[-1]
    return mx.tril(input, -1) + eye(rows, cols, dtype=input.dtype, device=input.device)


def _apply(V: Tensor, tau: Tensor, C: Tensor, order, left: bool) -> Tensor:
    """``C`` multiplied by the reflectors ``H_i`` for ``i`` in ``order``, each one on the left
    (``H_i C``, the last of ``order`` outermost) or on the right (``C H_i``)."""
    for i in order:
        v = V[..., :, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        if left:
            C = C - t * la.matmul(v, la.matmul(v.transpose(-2, -1), C))
        else:
            C = C - t * la.matmul(la.matmul(C, v), v.transpose(-2, -1))
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
        vT = v.transpose(-2, -1)
        if left:  # C' = C - t v (v^T C)
            wC, wG = la.matmul(vT, Ci), la.matmul(vT, G)  # rows
            gtau[i] = -(wC * wG).sum(-1)
            gV[i] = -t * (la.matmul(G, wC.transpose(-2, -1)) + la.matmul(Ci, wG.transpose(-2, -1)))
            G = G - t * la.matmul(v, wG)
        else:  # C' = C - t (C v) v^T
            wC, wG = la.matmul(Ci, v), la.matmul(G, v)  # columns
            gtau[i] = -(wC * wG).sum(-2)
            gV[i] = -t * (la.matmul(G.transpose(-2, -1), wC) + la.matmul(Ci.transpose(-2, -1), wG))
            G = G - t * la.matmul(wG, vT)
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
        gA, gtau, gC = _apply_backward(_reflectors(A), tau, C, _ormqr_order(
            k, self.left, self.transpose), self.left, g)
        return gA, gtau, gC


def _ormqr_order(k: int, left: bool, transpose: bool):
    """The reflectors in the order ``ormqr`` applies them: ``Q C`` applies ``H_k`` first,
    ``Q^T C = H_k ... H_1 C`` applies ``H_1`` first (mirrored on the right)."""
    return range(k) if transpose == left else reversed(range(k))


def _check_tau_batch(name: str, input: Tensor, tau: Tensor) -> None:
    if tau.dim() != input.dim() - 1:
        raise RuntimeError(f"gradnb.{name}: Expected tau to have one dimension less than "
                           f"input, but got tau.ndim equal to {tau.dim()} and input.ndim is "
                           f"equal to {input.dim()}")
    if tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"gradnb.{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")


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
    k = tau.shape[-1]
    start = eye(m, n, dtype=A.dtype, device=A.device).expand(*A.shape)
    with no_grad():
        out = start.clone() if k == 0 else _apply(_reflectors(A), tau, start,
                                                  reversed(range(k)), left=True)
    return record(LinalgHouseholderProductBackward0, (A, tau), column_major(out._data))


orgqr = householder_product


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True,
          transpose: bool = False) -> Tensor:
    """``Q @ other`` (``other @ Q`` when not ``left``; ``Q^T`` in place of ``Q`` when
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
    with no_grad():
        out = other.clone() if k == 0 else _apply(_reflectors(input), tau, other,
                                                  _ormqr_order(k, left, transpose), left)
    return record(OrmqrBackward0, (input, tau, other), column_major(out._data),
                  attrs={"left": left, "transpose": transpose})


TENSOR_METHODS = {"ormqr": ormqr, "orgqr": orgqr}
