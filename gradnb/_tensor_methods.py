"""Bind the op functions of ``gradnb.ops`` to ``Tensor`` as methods and operators.

Each op family module (and the engine, for ``backward``) declares ``TENSOR_METHODS`` (method name -> function) next to its ops, so
an op is defined exactly once, as a function, and the family that defines it also names its
methods. This module only collects them.
"""

from __future__ import annotations

from ._core.tensor import Tensor
from .autograd import engine
from .ops import arithmetic, creation, elementwise, indexing, inplace, linalg, reductions, shape

__all__ = ["FAMILIES"]

FAMILIES = (arithmetic, creation, elementwise, linalg, reductions, shape, indexing, inplace, engine)

for _family in FAMILIES:
    for _name, _fn in _family.TENSOR_METHODS.items():
        setattr(Tensor, _name, _fn)
