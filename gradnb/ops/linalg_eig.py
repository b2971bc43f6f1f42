"""The general (non-symmetric) eigendecomposition: ``linalg.eig`` and ``linalg.eigvals``.

Eigenvalues and eigenvectors of a real or complex matrix are complex. Eigenvectors are
normalized to unit norm (LAPACK's ``geev``, as in PyTorch) and are only defined up to a phase,
so, as PyTorch does, the gradient refuses a loss that depends on that phase. The derivative
is PyTorch's (``linalg_eig_backward`` in ``FunctionsManual.cpp``), written with gradnb ops so it
is differentiable again.
"""

from __future__ import annotations

import collections

import numpy as np

from .._core import dtype as _dtype
from .._core.grad_mode import is_grad_enabled
from .._core.graph import Node
from .._core.record import record
from . import linalg as la
from . import matrices as mx
from ._args import scalar_type_name
from ._common import Tensor
from .creation import eye
from .lapack import column_major
from .linalg_decompositions import _mH, _square, solve

__all__ = ["eig", "eigvals"]


class LinalgEigBackward0(Node):
    rule = (
        "self: V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / conj(E)) V^H, E = "
        "eigenvalue gaps"
    )
    __slots__ = ()
    on_tensors = True
    inputs = ("self",)
    outputs = ("eigenvalues", "eigenvectors")
    saves = ("eigenvalues", "eigenvectors")

    def backward(self, gL, gV):
        L, V = self.saved(gL if gL is not None else gV)
        Vh = _mH(V)
        if gV is None:
            return (solve(Vh, gL.unsqueeze(-1) * Vh),)
        VhgV = la.matmul(Vh, gV)
        diag = VhgV.diagonal(0, -2, -1)
        if not np.allclose(diag._data.imag, 0, rtol=1e-2, atol=1e-2):
            raise RuntimeError(
                "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this "
                "quantity, so it is ill-defined.")
        inner = VhgV - la.matmul(Vh, V * diag.real.unsqueeze(-2))
        Lc = L.conj()
        n = L.shape[-1]
        off = 1 - _eye(n, L)
        E = (Lc.unsqueeze(-2) - Lc.unsqueeze(-1)) * off + (1 - off)
        inner = inner / E
        if gL is not None:
            inner = inner * off + mx.diag_embed(gL)
        return (solve(Vh, la.matmul(inner, Vh)),)


def _eye(n: int, like: Tensor) -> Tensor:
    return eye(n, dtype=_dtype.as_dtype(_dtype.real_of(like._data.dtype)))


_eig_result = collections.namedtuple("eig", ["eigenvalues", "eigenvectors"])


def eig(A: Tensor, *, out=None):
    """Eigenvalues and unit-norm eigenvectors (columns) of square matrices, both complex."""
    return _eig(A, "eig")


def _eig(A: Tensor, name: str):
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        # PyTorch picks the complex result type first: there is none for integers and bool
        raise RuntimeError(f"Unknown Complex ScalarType for {scalar_type_name(A._data.dtype)}")
    _square(A, name)
    if A.dtype.name in ("float16", "bfloat16"):  # LAPACK's geev has no half precision
        raise NotImplementedError('"linalg_eig_out_cpu" not implemented for '
                                  f"'{scalar_type_name(A._data.dtype)}'")
    data = A._data
    kind = _dtype.complex_of(data.dtype)
    if not np.isfinite(data).all():
        raise RuntimeError("gradnb.linalg.eig: input tensor should not contain infs or NaNs.")
    w, v = np.linalg.eig(data)
    L, V = record(LinalgEigBackward0, (A,), (w.astype(kind), column_major(v.astype(kind))))
    return _eig_result(L, V)


def eigvals(A: Tensor, *, out=None) -> Tensor:
    """The eigenvalues of square matrices (complex)."""
    # PyTorch computes the eigenvectors too where a gradient may be needed: its errors are
    # then linalg.eig's
    may_need_grad = A.requires_grad and is_grad_enabled()
    return _eig(A, "eig" if may_need_grad else "eigvals").eigenvalues
