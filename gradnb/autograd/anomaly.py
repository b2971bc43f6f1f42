"""Anomaly detection: find the forward line behind a failing or NaN-producing backward.

While anomaly mode is on, recording (``gradnb._core.graph.link``) asks :func:`remember_forward_stack` to keep the stack
of every op it records. When a node's backward raises, the engine calls :func:`report_failure`,
which warns with that stack; with ``check_nan`` the engine calls :func:`check_nan` after each
node, which raises PyTorch's error when a gradient contains NaN.

Like PyTorch's, the switch is process-wide (not per thread).
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
import warnings

from .._core.backend import get_array_module
from .._core.graph import switches

__all__ = [
    "detect_anomaly",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "set_anomaly_enabled",
    "set_detect_anomaly",
]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TRACEBACK_KEY = "traceback_"  # PyTorch's key in ``node.metadata``


class _Settings:
    check_nan = True


_settings = _Settings()


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return switches.anomaly is not None


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also raises on NaN gradients."""
    return _settings.check_nan


def _set_anomaly_enabled(mode: bool, check_nan: bool) -> None:
    switches.anomaly = remember_forward_stack if mode else None
    _settings.check_nan = bool(check_nan)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off for the rest of the process (``detect_anomaly`` for a
    block)."""
    _set_anomaly_enabled(enabled, check_nan)


class detect_anomaly:
    """Turn on anomaly detection inside a ``with`` block (or a decorated function).

    Ops recorded inside remember where they were called, so an error in their backward is
    reported with the forward line that created them; with ``check_nan=True`` (the default)
    a backward that produces NaN raises ``RuntimeError`` naming the node.

    >>> import gradnb, warnings
    >>> x = gradnb.tensor([-1.0], requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with gradnb.autograd.detect_anomaly():
    ...         y = x.sqrt()
    ...         try:
    ...             y.backward()
    ...         except RuntimeError as e:
    ...             print(e)
    Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._saved: list = []
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._saved.append((switches.anomaly, _settings.check_nan))
        _set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        _set_anomaly_enabled(*self._saved.pop())

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Switch anomaly detection on or off now; as a context manager, restore it on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = (switches.anomaly, _settings.check_nan)
        _set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _set_anomaly_enabled(*self._prev)


# -- engine callbacks ------------------------------------------------------------------------------
def remember_forward_stack(node) -> None:
    """Keep the stack that created ``node`` (in ``node.metadata['traceback_']``, as PyTorch
    does), without gradnb's own innermost frames, so it ends at the user's line."""
    frames = list(traceback.walk_stack(sys._getframe(1)))
    frames.reverse()
    stack = traceback.StackSummary.extract(frames, lookup_lines=False)
    end = len(stack)
    while end > 0 and stack[end - 1].filename.startswith(_PACKAGE_DIR):
        end -= 1
    if node.metadata is None:
        node.metadata = {}
    node.metadata[_TRACEBACK_KEY] = traceback.StackSummary.from_list(stack[:end])


def report_failure(node) -> None:
    """Warn with the forward stack of ``node``, whose backward just failed."""
    stack = (node.metadata or {}).get(_TRACEBACK_KEY)
    if stack is None:
        message = (f"Error detected in {node.name()}. No forward pass information available. "
                   "Enable detect anomaly during forward pass for more information.")
    else:
        message = (f"Error detected in {node.name()}. Traceback of forward call that caused the "
                   "error:\n" + "".join(stack.format()))
    warnings.warn(message, UserWarning, stacklevel=2)


def check_nan(node, results) -> None:
    """Raise PyTorch's error if a gradient ``node`` produced contains NaN."""
    if not _settings.check_nan:
        return
    for i, g in enumerate(results):
        if g is None:
            continue
        data = getattr(g, "_data", g)
        dtype = getattr(data, "dtype", None)
        if dtype is None or dtype.kind not in "fc":
            continue  # sparse gradients and non-arrays are not inspected
        if bool(_isnan_any(data)):
            report_failure(node)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _isnan_any(arr):
    return get_array_module(arr).isnan(arr).any()
