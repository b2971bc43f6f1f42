"""``skip_init``: build a module whose parameters and buffers the caller will overwrite."""

from __future__ import annotations

import inspect

from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """Instantiate ``module_cls(*args, **kwargs)`` for a caller who will set every parameter and
    buffer itself; as in PyTorch, the module must take a ``device`` argument (default "cpu").

    PyTorch builds the module on its "meta" device (no storage, initializers skipped) and then
    allocates uninitialized memory with ``to_empty``. gradnb has no meta device, so the module is
    built directly on the final device: the initializers run (no time is saved) and the values
    are the initialized ones, a valid instance of PyTorch's "unspecified" contents (and the
    random initializers advance the global generator, which PyTorch's do not). Shapes,
    dtypes, devices, ``requires_grad`` and the state_dict keys are as PyTorch's.
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")  # noqa: TRY004 (as PyTorch)
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs)
