"""Run one call in PyTorch and in gradnb and compare what comes out: the forward (dtypes,
shapes, values), the error where torch raises one (type and first sentence, ``torch.`` read as
``gradnb.``), and the gradients of float64/complex128 inputs for a random ``grad_output``.

Converting and comparing reuse the op_db oracle's helpers (``tests/oracle/opinfo_harness``).
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import gradnb

from ..oracle.opinfo_harness import Converter, Mismatch, compare

GRAD_DTYPES = ("float64", "complex128")


@dataclasses.dataclass
class Case:
    """``call(lib, *args)`` with ``lib`` torch or gradnb. NumPy arrays in ``args`` become
    tensors (float64/complex128 ones require grad unless ``grad`` is False); anything else is
    passed as it is. ``label`` is what a failure prints."""

    label: str
    call: Callable[..., Any]
    args: tuple
    grad: bool = True

    def __repr__(self) -> str:
        shown = ", ".join(_show(a) for a in self.args)
        return f"Case({self.label}; args: {shown})"


def _show(arg) -> str:
    if isinstance(arg, np.ndarray):
        return f"{arg.dtype}{list(arg.shape)}={np.array2string(arg, precision=3, threshold=20)}"
    return repr(arg)


def _first_sentence(message: str) -> str:
    line = message.strip().split("\n")[0].replace("torch.", "gradnb.")
    return re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]


# torch's own exception types that gradnb has too, by the name gradnb gives its own
_TORCH_TYPES = {"torch._C._LinAlgError": "LinAlgError"}


def _builtin_base(exc: BaseException) -> str:
    """The exception's name: torch's own types that gradnb has too by that name
    (``torch.linalg.LinAlgError``), other C++ types of torch by their nearest builtin base."""
    for cls in type(exc).__mro__:
        known = _TORCH_TYPES.get(f"{cls.__module__}.{cls.__name__}")
        if known is not None:
            return known
        if cls.__module__ == "builtins" or cls.__module__.startswith("gradnb"):
            return cls.__name__
    return type(exc).__name__


def _outcome(exc: BaseException | None) -> str:
    if exc is None:
        return "no error"
    return f"{_builtin_base(exc)}: {_first_sentence(str(exc))}"


def _compare_errors(what: str, t_exc, g_exc) -> None:
    """Both raise the same type with the same first sentence (or neither raises)."""
    expected, got = _outcome(t_exc), _outcome(g_exc)
    if expected != got:
        raise Mismatch(f"{what}: torch raises {expected!r}, gradnb {got!r}")


def _tensors_of(torch, args, grad: bool):
    out = []
    for arg in args:
        if isinstance(arg, np.ndarray):
            t = torch.from_numpy(arg.copy())
            if grad and str(arg.dtype) in GRAD_DTYPES:
                t.requires_grad_(True)
            out.append(t)
        else:
            out.append(arg)
    return out


def _flatten(value) -> list:
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in _flatten(item)]
    return [value]


def check(case: Case) -> None:
    """Raise ``Mismatch`` (with the case) where gradnb differs from torch on ``case``."""
    try:
        _check(case)
    except Mismatch as exc:
        raise Mismatch(f"{case!r}: {exc}") from None


def _check(case: Case) -> None:
    import torch

    t_args = _tensors_of(torch, case.args, case.grad)
    conv = Converter()
    g_args = conv(t_args)
    t_exc = g_exc = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t_out = case.call(torch, *t_args)
        except Exception as exc:  # noqa: BLE001 - torch's error is the expected outcome
            t_exc = exc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's own warnings, as torch gives them
        warnings.simplefilter("error", RuntimeWarning)  # NumPy's warnings, torch is silent
        try:
            g_out = case.call(gradnb, *g_args)
        except Mismatch:
            raise
        except Exception as exc:  # noqa: BLE001 - compared with torch's outcome
            g_exc = exc
    if t_exc is not None or g_exc is not None:
        _compare_errors("forward", t_exc, g_exc)
        return
    compare("forward", t_out, g_out)
    _check_gradients(torch, conv, t_out, g_out)


def _check_gradients(torch, conv, t_out, g_out) -> None:
    leaves = [(t, g) for t, g in conv.pairs() if isinstance(t, torch.Tensor) and t.requires_grad]
    t_all, g_all = _flatten(t_out), _flatten(g_out)
    picked = [i for i, o in enumerate(t_all) if isinstance(o, torch.Tensor) and o.requires_grad]
    if not leaves or not picked:
        return
    for i in picked:
        if not (isinstance(g_all[i], gradnb.Tensor) and g_all[i].requires_grad):
            raise Mismatch(f"forward[{i}] requires grad in torch, not in gradnb")
    gen = torch.Generator().manual_seed(0)
    t_go = [torch.randn(t_all[i].shape, dtype=t_all[i].dtype, generator=gen) for i in picked]
    g_go = Converter()(t_go)
    t_leaves = [t for t, _ in leaves]
    g_leaves = [g for _, g in leaves]
    t_exc = g_exc = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t_grads = torch.autograd.grad([t_all[i] for i in picked], t_leaves, t_go,
                                          allow_unused=True)
        except Exception as exc:  # noqa: BLE001
            t_exc = exc
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            g_grads = gradnb.autograd.grad([g_all[i] for i in picked], g_leaves, g_go,
                                           allow_unused=True)
        except Exception as exc:  # noqa: BLE001
            g_exc = exc
    if t_exc is not None or g_exc is not None:
        _compare_errors("backward", t_exc, g_exc)
        return
    compare("gradient", list(t_grads), list(g_grads))
