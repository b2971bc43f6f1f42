"""Memory formats (``gradnb.contiguous_format``, ``gradnb.channels_last``, ...).

gradnb stores every tensor as a NumPy array, so a memory format changes no values: the
``memory_format=`` arguments of ``to``, ``clone``, ``contiguous``, ``float`` ... accept these
for PyTorch code's sake and results are laid out as NumPy lays them out.
"""

from __future__ import annotations

__all__ = ["channels_last", "channels_last_3d", "contiguous_format", "memory_format",
           "preserve_format"]


class NamedTag:
    """A module-level singleton tag printed as PyTorch prints its own (``gradnb.channels_last``):
    the base of ``memory_format`` and ``layout``."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"gradnb.{self._name}"

    def __reduce__(self):
        return self._name  # a module-level singleton: pickles by name


class memory_format(NamedTag):
    """A memory layout tag (``gradnb.channels_last``)."""

    __slots__ = ()


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
