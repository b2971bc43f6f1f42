"""Autograd: the graph, the backward engine, grad modes, custom Functions and checks."""

from __future__ import annotations

from .._core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from . import memory
from .anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .trace import graph_trace

__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "events",
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
