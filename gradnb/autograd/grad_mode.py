"""``gradnb.autograd.grad_mode``: the grad-mode switches, where PyTorch keeps them.

The switches live in the core floor (``gradnb._core.grad_mode``), which every op reads.
"""

from __future__ import annotations

from .._core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]
