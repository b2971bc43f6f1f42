"""``gradnb.utils``: ``checkpoint`` (activation checkpointing), ``data`` (datasets, loaders) and
``hooks`` (hook handles, modules' backward hooks)."""

from __future__ import annotations

import importlib

__all__ = ["checkpoint", "data", "hooks"]


def __getattr__(name: str):
    # Submodules load on first use, so ``import gradnb`` stays light.
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
