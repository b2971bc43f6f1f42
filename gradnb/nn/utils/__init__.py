"""``gradnb.nn.utils``: gradient clipping."""

from __future__ import annotations

from .clip_grad import clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm_", "clip_grad_value_"]
