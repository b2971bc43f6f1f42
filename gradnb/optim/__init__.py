"""``gradnb.optim``: optimizers with PyTorch's update rules and API."""

from __future__ import annotations

from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "SparseAdam"]
