"""``gradnb.nn.utils.parametrizations``: weight norm, spectral norm and orthogonal weights,
registered with :mod:`gradnb.nn.utils.parametrize` as PyTorch's are.

>>> import gradnb
>>> layer = weight_norm(gradnb.nn.Linear(3, 2))
>>> sorted(layer.state_dict())
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""

from __future__ import annotations

from enum import Enum, auto

import numpy as np

from ..._core.grad_mode import no_grad
from ..._core.graph import bump_version
from ..._core.tensor import Tensor
from ...linalg import householder_product, matrix_exp, qr, solve, vector_norm
from ...ops.creation import eye, randn, tensor
from ...ops.shape import cat
from ..functional import normalize
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# -- weight norm -----------------------------------------------------------------------------------
def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (over all of ``v``
    when ``dim`` is -1, PyTorch's convention for weight norm)."""
    if dim == -1:
        return vector_norm(v)
    return vector_norm(v, 2, tuple(d for d in range(v.ndim) if d != dim), keepdim=True)


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (Salimans & Kingma, 2016): the
    magnitude ``g`` (``original0``) and direction ``v`` (``original1``) are trained apart; the
    norm is over every dim but ``dim`` (the whole tensor when ``dim`` is None)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


# -- spectral norm ---------------------------------------------------------------------------------
class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = randn(h, dtype=weight.dtype, device=weight.device)
            v = randn(w, dtype=weight.dtype, device=weight.device)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)  # a good first estimate of sigma

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        """Refine ``_u`` and ``_v``, the leading singular vectors, in place (no graph)."""
        w = weight_mat.detach()._data
        u, v = self._u._data, self._v._data
        for _ in range(n_power_iterations):
            u[...] = _normalized(w @ v, self.eps)
            v[...] = _normalized(w.conj().T @ u, self.eps)
        bump_version(self._u)
        bump_version(self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.conj().dot(weight_mat.mv(v)) if u.is_complex() else u.dot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _normalized(x, eps: float):
    xp_norm = (abs(x) ** 2).sum() ** 0.5
    return x / max(float(xp_norm), eps)


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm (largest singular value), estimated by power
    iteration (Miyato et al., 2018): ``n_power_iterations`` steps at each training-mode read,
    none in eval mode. ``dim`` is the output dim (1 for transposed convolutions, else 0)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(  # noqa: TRY004 - as PyTorch
            f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
        dim = 1 if transposed else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# -- orthogonal ------------------------------------------------------------------------------------
class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    q = np.asarray(Q.detach().cpu().numpy())
    eps = 10.0 * n * float(np.finfo(q.dtype).eps)
    return bool(np.allclose(np.swapaxes(q, -1, -2).conj() @ q, np.eye(k), atol=eps))


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of ``A``'s QR factorisation, signed so that R's diagonal is positive (unique)."""
    Q, R = qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _householder_reflectors(Q: Tensor) -> Tensor:
    """``geqrf(Q)``'s reflectors below the diagonal and, on it, the signs ``forward`` reads back
    (with a flip where a reflector is the identity, ``tau == 0``), as PyTorch stores them."""
    q = Q.detach().cpu().numpy()
    out = np.empty_like(q)
    for index in np.ndindex(*q.shape[:-2]):
        h, tau = np.linalg.qr(q[index], mode="raw")
        a = h.T.copy()
        diagonal = np.sign(np.diagonal(a)).copy()
        diagonal[tau == 0.0] *= -1
        np.fill_diagonal(a, diagonal)
        out[index] = a
    return tensor(out, dtype=Q.dtype, device=Q.device)


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT.conj()
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:  # the dynamic trivialization
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix "
                                              "exponential or the Cayley parametrizations when "
                                              "use_trivialization=False.")
                A = _householder_reflectors(Q)
                return A.mT if transpose else A
            if n == k:
                Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
            else:
                N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(cat([Q, N], dim=-1))
            self.base = Q
            rows, cols = Q_init.shape[-2], Q_init.shape[-1]
            return (-eye(rows, cols, dtype=Q_init.dtype, device=Q_init.device)).expand(
                Q_init.shape).clone()


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Keep ``module.<name>`` (semi-)orthogonal: ``Q^T Q = I`` (or ``Q Q^T = I`` for wide
    matrices), through ``"matrix_exp"``, ``"cayley"`` or ``"householder"`` applied to the
    trained tensor, with PyTorch's dynamic trivialization (``base``) by default."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(  # noqa: TRY004 - as PyTorch
            f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
