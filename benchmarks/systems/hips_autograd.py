"""HIPS autograd: functional ``value_and_grad`` over ``autograd.numpy``."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from typing import Any

import autograd.numpy as anp
import numpy as np
from autograd import value_and_grad

from benchmarks.data import (
    DEEP_ADD,
    DEEP_MUL,
    TINY_ADD,
    TINY_MUL,
    MlpProblem,
    parameter_names,
    tensor_constant,
)
from benchmarks.systems.base import deep_forward, tiny_forward


def _constants(values: tuple[float, ...], as_arrays: bool) -> tuple[Any, ...]:
    """Python floats, or the 0-d float32 arrays of ``tensor_constant`` (autograd's constants
    are plain NumPy arrays)."""
    return tuple(tensor_constant(value) for value in values) if as_arrays else values


def _mlp_loss(params: list[Any], x: np.ndarray, y: np.ndarray, rows: np.ndarray) -> Any:
    n_layers = len(params) // 2
    h: Any = x
    for i in range(n_layers):
        h = anp.dot(h, params[2 * i]) + params[2 * i + 1]
        if i < n_layers - 1:
            h = anp.maximum(h, 0)
    # stable logsumexp written out: autograd.scipy would pull in SciPy
    top = anp.max(h, axis=1, keepdims=True)
    log_sum = anp.log(anp.sum(anp.exp(h - top), axis=1)) + top[:, 0]
    return anp.mean(log_sum - h[rows, y])


class HipsMlpStep:
    """``value_and_grad`` of the loss over the parameter list, then SGD in place."""

    def __init__(self, problem: MlpProblem) -> None:
        self._params = [p.copy() for p in problem.weights]
        self._x, self._y, self._lr = problem.x, problem.y, problem.lr
        self._rows = np.arange(len(problem.y))
        self._loss_and_grads = value_and_grad(_mlp_loss)
        self._loss = float("nan")
        self._grads: list[np.ndarray] = []

    def run(self) -> None:
        """One training step."""
        loss, grads = self._loss_and_grads(self._params, self._x, self._y, self._rows)
        for param, grad in zip(self._params, grads):
            param -= self._lr * grad
        self._loss, self._grads = float(loss), grads

    def result(self) -> dict[str, np.ndarray]:
        """Loss and gradients."""
        names = parameter_names(len(self._params) // 2)
        return {"loss": np.array(self._loss), **dict(zip(names, self._grads))}

    def release_gradients(self) -> None:
        """Drop the gradients kept for ``result()``."""
        self._grads = []


class HipsChain:
    """``value_and_grad`` of ``sum(forward(x))``."""

    def __init__(self, x0: np.ndarray, forward: Callable[[Any], Any]) -> None:
        self._x0 = x0.copy()
        self._value_and_grad = value_and_grad(lambda x: anp.sum(forward(x)))
        self._value = np.empty(0)
        self._grad = np.empty(0)

    def run(self) -> None:
        """Forward and backward."""
        value, self._grad = self._value_and_grad(self._x0)
        self._value = np.array(value)

    def result(self) -> dict[str, np.ndarray]:
        """The summed output and the gradient."""
        return {"value": self._value, "grad": self._grad}


class HipsAutogradSystem:
    """HIPS autograd (``HIPS/autograd``)."""

    numpy_based = True

    def version(self) -> str:
        """autograd's version."""
        return importlib.metadata.version("autograd")

    def set_threads(self, threads: int) -> None:
        """Nothing beyond the BLAS limit the worker sets."""

    def mlp(self, problem: MlpProblem) -> HipsMlpStep:
        """See ``HipsMlpStep``."""
        return HipsMlpStep(problem)

    def tiny_chain(self, x0: np.ndarray, n_ops: int, tensor_constants: bool = False) -> HipsChain:
        """See ``HipsChain``."""
        mul, add = _constants((TINY_MUL, TINY_ADD), tensor_constants)
        return HipsChain(x0, tiny_forward(anp.tanh, n_ops, mul, add))

    def deep_chain(self, x0: np.ndarray, n_iterations: int,
                   tensor_constants: bool = False) -> HipsChain:
        """See ``HipsChain``."""
        mul, add = _constants((DEEP_MUL, DEEP_ADD), tensor_constants)
        return HipsChain(x0, deep_forward(n_iterations, mul, add))
