"""The hook-based weight norm (before parametrizations): ``weight`` is replaced by the
parameters ``weight_g`` (magnitude) and ``weight_v`` (direction), and a forward pre-hook
recomputes ``weight = weight_v * weight_g / ||weight_v||`` before every call. Deprecated in
PyTorch, in favour of :func:`gradnb.nn.utils.parametrizations.weight_norm`, and warns so here.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..._core.tensor import Tensor
from ..modules.lazy import _LazyMixin
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    # The parametrization's helper; imported on use because parametrizations imports the layers,
    # which import this package while they load.
    from .parametrizations import _norm_except_dim as norm_except_dim

    # -1 means "the whole tensor" (PyTorch's encoding of dim=None); any other negative dim
    # counts from the end, as PyTorch's norm_except_dim does.
    return norm_except_dim(v, dim + v.ndim if dim < -1 else dim)


class WeightNorm:
    """The forward pre-hook: recompute ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> WeightNorm:
        warnings.warn("`gradnb.nn.utils.weight_norm` is deprecated in favor of "
                      "`gradnb.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(module, _LazyMixin) and module.has_uninitialized_params():
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying weight normalization")
        del module._parameters[name]
        g = _norm_except_dim(weight, fn.dim)
        module.register_parameter(name + "_g", Parameter(g.data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        # A plain tensor attribute (not a parameter): the weight as the last forward saw it.
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.<name>`` into ``<name>_g`` (the norm over every dim but ``dim``; over the
    whole tensor when ``dim`` is None) and ``<name>_v`` (the weight), recombined before each
    forward. Deprecated: warns a FutureWarning, as PyTorch's does."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``<name>`` is a Parameter again, holding the current weight."""
    return remove_reparametrization(module, WeightNorm, name, "weight_norm")


def remove_reparametrization(module: Module, kind: type, name: str, label: str) -> Module:
    """Undo the ``kind`` forward pre-hook (WeightNorm, SpectralNorm) that computes ``<name>``:
    its ``remove`` makes ``<name>`` a Parameter again; PyTorch's ValueError when none is
    registered (``label`` is the function's name in it)."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"{label} of '{name}' not found in {module}")
