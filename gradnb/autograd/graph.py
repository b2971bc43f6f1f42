"""``gradnb.autograd.graph``: graph nodes and saved-tensor hooks, where PyTorch keeps them.

The graph itself lives in the core floor (``gradnb._core.graph``); this module is its public face.
"""

from __future__ import annotations

from .._core.graph import Node
from .._core.hooks import RemovableHandle
from .saved_hooks import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

__all__ = [
    "Node",
    "RemovableHandle",
    "disable_saved_tensors_hooks",
    "save_on_cpu",
    "saved_tensors_hooks",
]
