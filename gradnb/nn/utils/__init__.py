"""``gradnb.nn.utils``: gradient clipping and packed sequences (``nn.utils.rnn``)."""

from __future__ import annotations

from . import rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm_", "clip_grad_value_", "rnn"]
