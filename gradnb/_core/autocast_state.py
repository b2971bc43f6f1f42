"""Autocast's switch, read by the op entry points on PyTorch's CPU autocast lists.

``enabled`` is the one flag those ops read (a module attribute: nothing else runs while
autocast is off). Under ``gradnb.autocast("cpu")`` the ops of PyTorch's lower-precision list
(``linear``, ``matmul``, ``mm``, ``bmm``, ``addmm``, ``baddbmm``, ``addbmm``, ``conv*``,
``prelu``, ``scaled_dot_product_attention``) cast their floating inputs (not float64) to
``dtype``, and the ops of its float32 list (the losses, ``prod``...) cast them to float32.
The context manager itself is ``gradnb.amp.autocast``.
"""

from __future__ import annotations

__all__ = ["enabled", "lower", "lower_one", "to_float32"]

enabled = False  # CPU autocast is on
dtype = None  # its gradnb dtype (bfloat16 unless set)


def _cast(value, target):
    from .tensor import Tensor

    if isinstance(value, Tensor) and value.dtype is not target and value.dtype.is_floating_point \
            and value.dtype.name != "float64":
        return value.to(target)
    return value


def lower(*values):
    """``values`` with their floating tensors cast to the autocast dtype (float64 stays)."""
    return tuple(_cast(v, dtype) for v in values)


def lower_one(value):
    """One value cast as ``lower`` casts."""
    return _cast(value, dtype)


def to_float32(*values):
    """``values`` with their lower-precision floating tensors cast to float32."""
    from . import dtype as _dtype

    return tuple(_cast(v, _dtype.float32) for v in values)
