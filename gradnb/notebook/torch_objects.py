"""Is this a torch object? Answered without importing torch (none can exist before it is).

A leaf module, so every part of the toolkit can ask it without importing the torch adapter.
"""

from __future__ import annotations

import sys

__all__ = ["is_torch_module", "is_torch_tensor", "to_numpy", "torch_loaded"]


def torch_loaded() -> bool:
    """Whether the user's program has imported torch (so torch objects may exist)."""
    return "torch" in sys.modules


def is_torch_tensor(value: object) -> bool:
    """Whether ``value`` is a ``torch.Tensor`` (never imports torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and issubclass(type(value), torch.Tensor)


def is_torch_module(value: object) -> bool:
    """Whether ``value`` is a ``torch.nn.Module`` (never imports torch)."""
    torch = sys.modules.get("torch")
    nn = getattr(torch, "nn", None)
    return nn is not None and isinstance(value, nn.Module)


def to_numpy(tensor):
    """A torch tensor's values as a NumPy array on the host (bfloat16 read as float32)."""
    data = tensor.detach()
    if data.dtype == sys.modules["torch"].bfloat16:
        data = data.float()
    return data.cpu().resolve_conj().resolve_neg().numpy()
