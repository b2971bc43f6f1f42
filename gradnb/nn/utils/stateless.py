"""``gradnb.nn.utils.stateless``: the deprecated home of ``functional_call`` (PyTorch 2.0 moved
it to :func:`gradnb.func.functional_call`; this one warns, as PyTorch's does, and calls it)."""

from __future__ import annotations

import warnings
from typing import Any

from ...func import functional_call as func_functional_call

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers: dict, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False):
    """``module(*args, **kwargs)`` with ``parameters_and_buffers`` in place of the module's own,
    for this call only. Deprecated: use :func:`gradnb.func.functional_call`."""
    warnings.warn("`gradnb.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`gradnb.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return func_functional_call(module, parameters_and_buffers, args, kwargs,
                                tie_weights=tie_weights, strict=strict)
