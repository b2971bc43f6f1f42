"""Autograd: the graph, the backward engine, grad modes, custom Functions and checks."""

from __future__ import annotations

from . import events, graph, grad_mode, memory
from .engine import backward, grad
from .grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled,
)

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "events", "graph", "grad_mode", "memory"]
