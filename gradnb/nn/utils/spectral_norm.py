"""The hook-based spectral norm (before parametrizations): ``weight`` becomes the parameter
``weight_orig`` plus the buffers ``weight_u`` and ``weight_v`` (the leading singular vectors),
and a forward pre-hook sets ``weight = weight_orig / sigma`` before every call, refining u and
v by power iteration first in training mode.

PyTorch also stores a version number in the state_dict metadata and converts checkpoints from
before it (a saved ``weight`` but no ``weight_v``) on load; gradnb's state_dict carries no
metadata, so checkpoints load as they are (keys ``weight_orig``, ``weight_u``, ``weight_v``).
"""

from __future__ import annotations

from typing import Any

from ..._core.grad_mode import no_grad
from ..._core.tensor import Tensor
from ...ops.creation import randn
from ..functional import normalize
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.lazy import _LazyMixin
from ..modules.module import Module
from ..parameter import Parameter
from .weight_norm import remove_reparametrization

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


class SpectralNorm:
    """The forward pre-hook: ``module.<name> = <name>_orig / sigma(<name>_orig)``."""

    _version: int = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """``dim`` first, the rest flattened: one row per output."""
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(self.dim,
                                            *[d for d in range(weight_mat.dim()) if d != self.dim])
        return weight_mat.reshape(weight_mat.size(0), -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # The buffers are updated in place (PyTorch writes them through normalize's out=),
            # outside the graph; sigma then uses clones, so a later iteration cannot disturb
            # what backward saved.
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(weight_mat.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(normalize(weight_mat.mv(v), dim=0, eps=self.eps))
                u = u.clone()
                v = v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(module, _LazyMixin) and module.has_uninitialized_params():
            raise ValueError(
                "The module passed to `SpectralNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying spectral normalization")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            # Random starting vectors, refined at each training-mode forward.
            u = normalize(randn(h, dtype=weight.dtype, device=weight.device), dim=0, eps=fn.eps)
            v = normalize(randn(w, dtype=weight.dtype, device=weight.device), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # A plain tensor attribute until the first forward computes the normalized weight.
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm, estimated by ``n_power_iterations`` steps of
    power iteration before each training-mode forward (none in eval mode). ``dim`` is the
    output dim: 1 for transposed convolutions, else 0."""
    if dim is None:
        transposed = isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
        dim = 1 if transposed else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``<name>`` is a Parameter again, holding the normalized
    weight (computed with the current u and v, without another power iteration)."""
    return remove_reparametrization(module, SpectralNorm, name, "spectral_norm")
