"""MyGrad: NumPy-backed tensors with its own fused ``softmax_crossentropy``."""

from __future__ import annotations

import importlib.metadata
import time
from collections.abc import Callable
from typing import Any

import mygrad as mg
import numpy as np
from mygrad.nnet.activations import relu
from mygrad.nnet.losses import softmax_crossentropy

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


def _constants(values: tuple[float, ...], as_tensors: bool) -> tuple[Any, ...]:
    """Python floats, or 0-d constant tensors (no gradient, as ``torch.tensor(v)``) of the
    float32 values ``tensor_constant`` gives."""
    if not as_tensors:
        return values
    return tuple(mg.tensor(tensor_constant(value), constant=True) for value in values)


class MyGradMlpStep:
    """Forward with ``mg.matmul``/``relu``, MyGrad's softmax CE, SGD on ``.data`` in place."""

    def __init__(self, problem: MlpProblem) -> None:
        self._params = [mg.tensor(p.copy()) for p in problem.weights]
        self._x, self._y, self._lr = problem.x, problem.y, problem.lr
        self._loss = float("nan")

    def run(self) -> None:
        """One training step."""
        params = self._params
        n_layers = len(params) // 2
        h: Any = self._x
        for i in range(n_layers):
            h = mg.matmul(h, params[2 * i]) + params[2 * i + 1]
            if i < n_layers - 1:
                h = relu(h)
        loss = softmax_crossentropy(h, self._y)
        loss.backward()
        for param in params:
            param.data -= self._lr * param.grad
        self._loss = loss.item()

    def result(self) -> dict[str, np.ndarray]:
        """Loss and gradients."""
        names = parameter_names(len(self._params) // 2)
        grads = [np.array(p.grad) for p in self._params]
        return {"loss": np.array(self._loss), **dict(zip(names, grads))}

    def release_gradients(self) -> None:
        """``null_grad()`` on every parameter."""
        for param in self._params:
            param.null_grad()


class MyGradChain:
    """A chain of ops on one leaf, summed and back-propagated."""

    def __init__(self, x0: np.ndarray, forward: Callable[[Any], Any]) -> None:
        self._leaf = mg.tensor(x0.copy())
        self._forward = forward
        self._value = np.empty(0)

    def run(self) -> None:
        """Forward, sum, backward."""
        self._leaf.null_grad()
        out = self._forward(self._leaf).sum()
        out.backward()
        self._value = np.array(out.item())

    def run_phases(self) -> tuple[float, float]:
        """``run()``, timing the forward (with the sum) and the backward apart, in seconds."""
        self._leaf.null_grad()
        started = time.perf_counter()
        out = self._forward(self._leaf).sum()
        forward_done = time.perf_counter()
        out.backward()
        backward_done = time.perf_counter()
        self._value = np.array(out.item())
        return forward_done - started, backward_done - forward_done

    def result(self) -> dict[str, np.ndarray]:
        """The summed output and the leaf's gradient."""
        return {"value": self._value, "grad": np.array(self._leaf.grad)}


class MyGradSystem:
    """MyGrad (``rsokl/MyGrad``)."""

    numpy_based = True

    def version(self) -> str:
        """MyGrad's version."""
        return importlib.metadata.version("mygrad")

    def set_threads(self, threads: int) -> None:
        """Nothing beyond the BLAS limit the worker sets."""

    def mlp(self, problem: MlpProblem) -> MyGradMlpStep:
        """See ``MyGradMlpStep``."""
        return MyGradMlpStep(problem)

    def tiny_chain(self, x0: np.ndarray, n_ops: int,
                   tensor_constants: bool = False) -> MyGradChain:
        """See ``MyGradChain``."""
        mul, add = _constants((TINY_MUL, TINY_ADD), tensor_constants)
        return MyGradChain(x0, tiny_forward(mg.tanh, n_ops, mul, add))

    def deep_chain(self, x0: np.ndarray, n_iterations: int,
                   tensor_constants: bool = False) -> MyGradChain:
        """See ``MyGradChain``."""
        mul, add = _constants((DEEP_MUL, DEEP_ADD), tensor_constants)
        return MyGradChain(x0, deep_forward(n_iterations, mul, add))
