"""Products of Householder reflectors, in LAPACK's ``geqrf`` convention:
``linalg.householder_product`` (``orgqr``) and ``ormqr`` (real dtypes).

Column ``i`` of ``input`` holds the reflector ``v_i`` below its diagonal (a 1 on the diagonal,
zeros above, none of them stored) and ``H_i = I - tau_i v_i v_i^T``; ``Q = H_1 H_2 ... H_k``.
Both ops apply the reflectors one at a time to a matrix (``C - tau_i v_i (v_i^T C)``, never
forming ``Q``), composed from gradnb ops, so their derivatives of every order are those of
the products themselves, as PyTorch's are.
"""

from __future__ import annotations

from .._core.graph import Node
from .._core.record import record
from . import linalg as la
from . import matrices as mx
from ._common import Tensor
from .creation import eye

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


class LinalgHouseholderProductBackward0(Node):
    """No reflectors (``tau`` empty): the output is the identity, in the graph with no
    gradient for either input, as PyTorch leaves it."""
    rule = "input, tau: none (no reflectors: the identity)"

    __slots__ = ()

    def backward(self, g):
        return None, None


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
    start = eye(m, n, dtype=A.dtype, device=A.device)
    if k == 0:
        identity = start.expand(*A.shape)._data.copy()
        return record(LinalgHouseholderProductBackward0, (A, tau), identity)
    return _apply(_reflectors(A), tau, start, reversed(range(k)), left=True)


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
    # Q C applies H_k first; Q^T C = H_k ... H_1 C applies H_1 first (and mirrored on the right)
    forward = transpose == left
    order = range(k) if forward else reversed(range(k))
    if k == 0:  # Q is the identity
        return other.clone()
    return _apply(_reflectors(input), tau, other, order, left)


TENSOR_METHODS = {"ormqr": ormqr, "orgqr": orgqr}
