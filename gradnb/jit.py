"""``gradnb.jit``: TorchScript's entry points, which scripts call to compile or export a model.

gradnb has no compiler: Python is what runs, so ``script`` and ``trace`` give back the module or
function they were handed, which computes exactly what it did before, and the decorators
(``ignore``, ``unused``, ``export``) leave their function as it is. ``is_scripting()`` and
``is_tracing()`` are False, as in eager PyTorch code.

>>> import gradnb
>>> model = gradnb.nn.Linear(2, 1)
>>> gradnb.jit.script(model) is model
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

__all__ = ["Final", "annotate", "export", "ignore", "is_scripting", "is_tracing", "script",
           "script_if_tracing", "trace", "trace_module", "unused"]

_T = TypeVar("_T")


def script(obj: _T, optimize=None, _frames_up: int = 0, _rcb=None,
           example_inputs=None) -> _T:
    """Compile ``obj`` with TorchScript: gradnb returns ``obj`` itself, which runs as before."""
    return obj


def trace(func: _T, example_inputs=None, optimize=None, check_trace: bool = True,
          check_inputs=None, check_tolerance: float = 1e-5, strict: bool = True,
          _force_outplace: bool = False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs: bool = True) -> _T:
    """Trace ``func`` on ``example_inputs``: gradnb returns ``func`` itself (it records no
    graph to replay, so data-dependent control flow keeps working)."""
    return func


def trace_module(mod: _T, inputs: dict, optimize=None, check_trace: bool = True,
                 check_inputs=None, check_tolerance: float = 1e-5, strict: bool = True,
                 _force_outplace: bool = False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg: bool = False, _store_inputs: bool = True) -> _T:
    """Trace the methods of ``mod`` named in ``inputs``: gradnb returns ``mod`` itself."""
    return mod


def script_if_tracing(fn: Callable) -> Callable:
    """Script ``fn`` when called during tracing: gradnb never traces, so ``fn`` as it is."""
    return fn


def ignore(drop: Any = False, **kwargs) -> Callable:
    """Keep a function out of TorchScript: with gradnb, the function as it is (both as
    ``@ignore`` and as ``@ignore(drop=True)``)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: Callable) -> Callable:
    """Mark a function as never called from TorchScript: with gradnb, the function as it is."""
    return fn


def export(fn: Callable) -> Callable:
    """Mark a method as a TorchScript entry point: with gradnb, the method as it is."""
    return fn


def annotate(the_type: Any, the_value: _T) -> _T:
    """Give TorchScript the type of ``the_value``: returns ``the_value``."""
    return the_value


def is_scripting() -> bool:
    """Whether the code runs compiled by TorchScript: never, with gradnb."""
    return False


def is_tracing() -> bool:
    """Whether the code runs under ``trace``: never, with gradnb."""
    return False
