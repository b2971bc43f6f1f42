"""Bind the op functions of ``gradnb.ops`` to ``Tensor`` as methods and operators.

Each op family module (and the engine, for ``backward``) declares ``TENSOR_METHODS`` (method name -> function) next to its ops, so
an op is defined exactly once, as a function, and the family that defines it also names its
methods. This module only collects them, and binds the few ``nn.functional`` ops PyTorch also
offers as methods (``x.prelu(w)``), which the ops floor may not import.
"""

from __future__ import annotations

from . import sparse, storage
from ._core.tensor import Tensor
from .autograd import engine
from .ops import (
    arithmetic,
    complex,
    counting,
    creation,
    elementwise,
    incomplete_gamma,
    indexing,
    inplace,
    joining,
    legacy_linalg,
    linalg,
    linalg_decompositions,
    linalg_householder,
    linalg_lu,
    linalg_norms,
    matrices,
    pointwise,
    python_callables,
    reductions,
    regions,
    sampling,
    scans,
    scatter_reductions,
    shape,
    softmax,
    sorting,
    special_functions,
    spectral,
    statistics,
    strided,
    tensor_api,
)

__all__ = ["FAMILIES"]

FAMILIES = (arithmetic, creation, elementwise, linalg, reductions, shape, indexing, inplace, engine,
            pointwise, matrices, joining, sorting, linalg_decompositions, linalg_householder,
            linalg_lu, linalg_norms, special_functions, scans, statistics, regions, tensor_api,
            softmax, complex, spectral, scatter_reductions, strided, counting, sparse,
            legacy_linalg, python_callables, incomplete_gamma, sampling, storage)

for _family in FAMILIES:
    for _name, _fn in _family.TENSOR_METHODS.items():
        setattr(Tensor, _name, _fn)

for _name in tensor_api.ALIASED:  # axis=/keepdims= beside dim=/keepdim=, as PyTorch accepts
    if hasattr(Tensor, _name):
        setattr(Tensor, _name, tensor_api.with_numpy_keywords(getattr(Tensor, _name)))


def _functional(name: str):
    """A Tensor method that is an ``nn.functional`` op (``x.prelu(w)``, ``x.hardshrink()``),
    imported on first call: ``nn`` loads lazily, after the ops."""
    def method(self, *args, **kwargs):
        from .nn import functional
        return getattr(functional, name)(self, *args, **kwargs)

    method.__name__ = name
    return method


for _name in ("prelu", "hardshrink"):
    setattr(Tensor, _name, _functional(_name))
