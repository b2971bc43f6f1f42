"""Autograd: the graph, the backward engine, grad modes, custom Functions and checks."""

from __future__ import annotations

import importlib

from .._core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from . import (
    forward_ad,
    graph,
    memory,
    saved_attributes,  # noqa: F401 - installs the grad_fn._saved_* reader
)
from .anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .multi_grad_hook import register_multi_grad_hook
from .trace import graph_trace

# PyTorch users find it in ``autograd.graph``.
graph.register_multi_grad_hook = register_multi_grad_hook

__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "events",
    "forward_ad",
    "functional",
    "grad",
    "grad_mode",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "graph_trace",
    "inference_mode",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "memory",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
]


def __getattr__(name: str):
    # These build on the tensor and the ops, which import this package: they load on first use.

    if name == "functional":
        return importlib.import_module(f"{__name__}.functional")
    if name == "Variable":
        return importlib.import_module(f"{__name__}.variable").Variable
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
