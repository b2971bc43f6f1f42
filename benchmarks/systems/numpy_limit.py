"""The yardstick: forward and backward written by hand in NumPy, as a careful human would.

Fusions a human would make: the softmax-cross-entropy backward is ``(p - onehot) / N``
computed in place on the probabilities, ReLU's mask is read from the kept activation,
and temporaries that nothing saves are updated in place.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from benchmarks.data import (
    DEEP_ADD,
    DEEP_MUL,
    TINY_ADD,
    TINY_MUL,
    MlpProblem,
    parameter_names,
    tensor_constant,
)
from benchmarks.systems.base import tiny_op_kind


def _constants(values: tuple[float, ...], as_arrays: bool) -> tuple[Any, ...]:
    """Python floats, or the 0-d float32 arrays the engines' ``torch.tensor(v)`` hold."""
    return tuple(tensor_constant(value) for value in values) if as_arrays else values


def mlp_gradients(params: list[np.ndarray], x: np.ndarray, y: np.ndarray,
                  rows: np.ndarray, out_by_in: bool = False) -> tuple[float, list[np.ndarray]]:
    """Loss and gradients of a ReLU MLP with softmax cross-entropy, by hand.

    Weights are in x out (``h @ W``, the fastest products on NumPy's BLAS), or with
    ``out_by_in`` out x in as ``nn.Linear`` keeps them (``h @ w.T``, ``g.T @ h``, ``g @ w``):
    the same step in PyTorch's layout, what no engine with that layout goes below on this BLAS.
    """
    n_layers = len(params) // 2
    activations = [x]  # inputs of each layer; post-ReLU, so they double as masks
    for i in range(n_layers):
        weight = params[2 * i]
        z = activations[-1] @ (weight.T if out_by_in else weight)
        z += params[2 * i + 1]
        if i < n_layers - 1:
            np.maximum(z, 0, out=z)
        activations.append(z)
    logits = activations.pop()
    logits -= logits.max(axis=1, keepdims=True)
    picked = logits[rows, y]
    np.exp(logits, out=logits)
    sums = logits.sum(axis=1)
    loss = float(np.mean(np.log(sums) - picked))

    grad = logits  # becomes (softmax - onehot) / N in place
    grad /= sums[:, None]
    grad[rows, y] -= 1
    grad *= 1 / len(y)
    grads: dict[int, np.ndarray] = {}
    for i in reversed(range(n_layers)):
        inputs, weight = activations[i], params[2 * i]
        grads[2 * i] = grad.T @ inputs if out_by_in else inputs.T @ grad
        grads[2 * i + 1] = grad.sum(axis=0)
        if i > 0:
            grad = grad @ (weight if out_by_in else weight.T)
            grad *= inputs > 0
    return loss, [grads[k] for k in range(len(params))]


class NumpyMlpStep:
    """Hand-written MLP training step (ReLU hidden layers, softmax CE, SGD); ``out_by_in``:
    with the weights in ``nn.Linear``'s layout (see ``mlp_gradients``)."""

    def __init__(self, problem: MlpProblem, out_by_in: bool = False) -> None:
        self._params = [np.ascontiguousarray(p.T) if out_by_in and p.ndim == 2 else p.copy()
                        for p in problem.weights]
        self._out_by_in = out_by_in
        self._x, self._y, self._lr = problem.x, problem.y, problem.lr
        self._rows = np.arange(len(problem.y))
        self._loss = np.nan
        self._grads: list[np.ndarray] = []

    def run(self) -> None:
        """Forward, backward and an in-place SGD update."""
        self._loss, self._grads = mlp_gradients(self._params, self._x, self._y, self._rows,
                                                self._out_by_in)
        for param, param_grad in zip(self._params, self._grads):
            param -= self._lr * param_grad

    def result(self) -> dict[str, np.ndarray]:
        """Loss and gradients of the last run, weight gradients in x out."""
        grads = [g.T if self._out_by_in and g.ndim == 2 else g for g in self._grads]
        names = parameter_names(len(self._params) // 2)
        return {"loss": np.array(self._loss), **dict(zip(names, grads))}

    def release_gradients(self) -> None:
        """Drop the gradients kept for ``result()``."""
        self._grads = []


class NumpyProductsStep:
    """The MLP step's matrix products alone, in the limit's layout (weights in x out)."""

    def __init__(self, problem: MlpProblem, inputs: tuple[np.ndarray, ...],
                 grads: tuple[np.ndarray, ...]) -> None:
        self._layers = list(zip(problem.weights[::2], problem.weights[1::2], inputs, grads))
        self._results: dict[str, np.ndarray] = {}

    def run(self) -> None:
        """Per layer ``h @ W + b`` (the bias added in place) and ``h.T @ g``; ``g @ W.T`` for
        every layer but the first, whose input needs no gradient."""
        results = {}
        for i, (weight, bias, h, g) in enumerate(self._layers, start=1):
            z = h @ weight
            z += bias
            results[f"z{i}"] = z
            results[f"W{i}"] = h.T @ g
            if i > 1:
                results[f"dx{i}"] = g @ weight.T
        self._results = results

    def result(self) -> dict[str, np.ndarray]:
        """Every product of the last run, by name."""
        return self._results


class NumpyTinyChain:
    """Elementwise chain; only tanh outputs are kept, since only tanh's backward needs them."""

    def __init__(self, x0: np.ndarray, n_ops: int, tensor_constants: bool = False) -> None:
        self._x0 = x0.copy()
        self._mul, self._add = _constants((TINY_MUL, TINY_ADD), tensor_constants)
        self._kinds = [tiny_op_kind(i) for i in range(n_ops)]
        self._value = np.nan
        self._grad = np.empty(0)

    def run(self) -> None:
        """Forward through the chain, sum, and backward to the leaf."""
        x, mul, add = self._x0, self._mul, self._add
        tanh_outputs = []
        for kind in self._kinds:
            if kind == "mul":
                x = x * mul
            elif kind == "add":
                x = x + add
            else:
                x = np.tanh(x)
                tanh_outputs.append(x)
        self._value = float(x.sum())
        grad = np.ones_like(x)
        for kind in reversed(self._kinds):
            if kind == "mul":
                grad *= mul
            elif kind == "tanh":
                y = tanh_outputs.pop()
                grad *= 1 - y * y
            # add passes the gradient through unchanged
        self._grad = grad

    def result(self) -> dict[str, np.ndarray]:
        """The summed output and the leaf's gradient."""
        return {"value": np.array(self._value), "grad": self._grad}


class NumpyDeepChain:
    """``x = x * a + b`` repeated; the backward multiplies by ``a`` once per iteration."""

    def __init__(self, x0: np.ndarray, n_iterations: int, tensor_constants: bool = False) -> None:
        self._x0 = x0.copy()
        self._n = n_iterations
        self._mul, self._add = _constants((DEEP_MUL, DEEP_ADD), tensor_constants)
        self._value = np.empty(0)
        self._grad = np.empty(0)

    def run(self) -> None:
        """Forward then backward, one NumPy op per engine op."""
        self.run_phases()

    def run_phases(self) -> tuple[float, float]:
        """``run()``, timing the forward and the backward apart, in seconds."""
        x, mul, add = self._x0, self._mul, self._add
        started = time.perf_counter()
        for _ in range(self._n):
            x = x * mul
            x += add
        forward_done = time.perf_counter()
        grad = np.ones_like(x)
        for _ in range(self._n):
            grad *= mul
        backward_done = time.perf_counter()
        self._value, self._grad = x, grad
        return forward_done - started, backward_done - forward_done

    def result(self) -> dict[str, np.ndarray]:
        """Final value (summed, as the engines' ``sum()`` gives it) and the leaf's gradient."""
        return {"value": np.array(float(self._value.sum())), "grad": self._grad}


class NumpyLimit:
    """The hand-written NumPy system (the reference every other row is checked against)."""

    numpy_based = True

    def version(self) -> str:
        """NumPy's version."""
        return np.__version__

    def set_threads(self, threads: int) -> None:
        """Nothing beyond the BLAS limit the worker sets."""

    def mlp(self, problem: MlpProblem) -> NumpyMlpStep:
        """See ``NumpyMlpStep``."""
        return NumpyMlpStep(problem)

    def training_loop(self, problem: MlpProblem, optimizer: str, steps: int):
        """See ``benchmarks.systems.numpy_training.NumpyTrainingLoop``."""
        from benchmarks.systems.numpy_training import NumpyTrainingLoop

        return NumpyTrainingLoop(problem, optimizer, steps)

    def mlp_products(self, problem: MlpProblem, inputs: tuple[np.ndarray, ...],
                     grads: tuple[np.ndarray, ...]) -> NumpyProductsStep:
        """See ``NumpyProductsStep``."""
        return NumpyProductsStep(problem, inputs, grads)

    def tiny_chain(self, x0: np.ndarray, n_ops: int,
                   tensor_constants: bool = False) -> NumpyTinyChain:
        """See ``NumpyTinyChain``."""
        return NumpyTinyChain(x0, n_ops, tensor_constants)

    def deep_chain(self, x0: np.ndarray, n_iterations: int,
                   tensor_constants: bool = False) -> NumpyDeepChain:
        """See ``NumpyDeepChain``."""
        return NumpyDeepChain(x0, n_iterations, tensor_constants)
