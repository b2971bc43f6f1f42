"""The benchmarked systems, by name, in report order; the NumPy limit comes first."""

from __future__ import annotations

import importlib

from benchmarks.systems.base import System

REFERENCE = "numpy"

# name -> (what the report calls it, the package whose import decides "installed")
SYSTEMS: dict[str, tuple[str, str]] = {
    "numpy": ("NumPy, hand-written (limit)", "numpy"),
    "gradnb": ("gradnb", "gradnb"),
    "torch": ("PyTorch (CPU)", "torch"),
    "mygrad": ("MyGrad", "mygrad"),
    "autograd": ("HIPS autograd", "autograd"),
    "micrograd": ("micrograd", "micrograd"),
}


def load_system(name: str) -> System:
    """Import and build the system called ``name``; import errors propagate to the caller."""
    if name == "numpy":
        from benchmarks.systems.numpy_limit import NumpyLimit

        return NumpyLimit()
    if name in ("gradnb", "torch"):
        from benchmarks.systems.torchlike import TorchLikeSystem

        return TorchLikeSystem(importlib.import_module(name), numpy_based=name == "gradnb")
    if name == "mygrad":
        from benchmarks.systems.mygrad_system import MyGradSystem

        return MyGradSystem()
    if name == "autograd":
        from benchmarks.systems.hips_autograd import HipsAutogradSystem

        return HipsAutogradSystem()
    if name == "micrograd":
        from benchmarks.systems.micrograd_scalar import MicrogradSystem

        return MicrogradSystem()
    raise ValueError(f"unknown system {name!r}; known: {', '.join(SYSTEMS)}")
