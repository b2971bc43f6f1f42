"""micrograd (PyPI ``micrograd``): a scalar engine, so it runs the scalar workloads only.

The PyPI release has no ``tanh``; ``_tanh`` adds it exactly as micrograd's own lecture
writes it (a closure over the output), so the engine's costs stay its own.
"""

from __future__ import annotations

import importlib.metadata
import math

import numpy as np
from micrograd.engine import Value

from benchmarks.data import DEEP_ADD, DEEP_MUL, TINY_ADD, TINY_MUL, MlpProblem, tensor_constant
from benchmarks.systems.base import MlpStep, Unsupported, tiny_op_kind


def _tanh(value: Value) -> Value:
    t = math.tanh(value.data)
    out = Value(t, (value,), "tanh")

    def _backward() -> None:
        value.grad += (1 - t * t) * out.grad

    out._backward = _backward
    return out


def _constants(values: tuple[float, ...], as_values: bool) -> tuple[float | Value, ...]:
    """Python floats (micrograd wraps each in a new ``Value`` per op), or one shared ``Value``
    each, holding the float32-rounded value the other engines' 0-d tensors hold."""
    if not as_values:
        return values
    return tuple(Value(float(tensor_constant(value))) for value in values)


class MicrogradTinyChain:
    """One ``Value`` per element of the float64[16] input, chained elementwise."""

    def __init__(self, x0: np.ndarray, n_ops: int, tensor_constants: bool = False) -> None:
        self._leaves = [Value(float(v)) for v in x0]
        self._mul, self._add = _constants((TINY_MUL, TINY_ADD), tensor_constants)
        self._kinds = [tiny_op_kind(i) for i in range(n_ops)]
        self._value = float("nan")

    def run(self) -> None:
        """Forward, sum, backward; the leaves' grads are reset first."""
        hs, mul, add = self._leaves, self._mul, self._add
        for leaf in hs:
            leaf.grad = 0
        for kind in self._kinds:
            if kind == "mul":
                hs = [h * mul for h in hs]
            elif kind == "add":
                hs = [h + add for h in hs]
            else:
                hs = [_tanh(h) for h in hs]
        out = sum(hs)
        out.backward()
        self._value = out.data

    def result(self) -> dict[str, np.ndarray]:
        """The summed output and the leaves' gradients."""
        return {"value": np.array(self._value), "grad": np.array([v.grad for v in self._leaves])}


class MicrogradDeepChain:
    """The deep chain on one ``Value``."""

    def __init__(self, x0: np.ndarray, n_iterations: int, tensor_constants: bool = False) -> None:
        self._leaf = Value(float(x0[0]))
        self._n = n_iterations
        self._mul, self._add = _constants((DEEP_MUL, DEEP_ADD), tensor_constants)
        self._value = float("nan")

    def run(self) -> None:
        """Forward and backward (micrograd's recursive topological sort)."""
        self._leaf.grad = 0
        h, mul, add = self._leaf, self._mul, self._add
        for _ in range(self._n):
            h = h * mul + add
        h.backward()
        self._value = h.data

    def result(self) -> dict[str, np.ndarray]:
        """Final value and the leaf's gradient."""
        return {"value": np.array(self._value), "grad": np.array([self._leaf.grad])}


class MicrogradSystem:
    """micrograd (``karpathy/micrograd``), scalar workloads only."""

    numpy_based = True

    def version(self) -> str:
        """micrograd's version."""
        return importlib.metadata.version("micrograd")

    def set_threads(self, threads: int) -> None:
        """Pure Python: no thread pool."""

    def mlp(self, problem: MlpProblem) -> MlpStep:
        """Not offered: a scalar engine would need 500k ``Value`` weights."""
        raise Unsupported("scalar engine: scalar workloads only")

    def tiny_chain(self, x0: np.ndarray, n_ops: int,
                   tensor_constants: bool = False) -> MicrogradTinyChain:
        """See ``MicrogradTinyChain``."""
        return MicrogradTinyChain(x0, n_ops, tensor_constants)

    def deep_chain(self, x0: np.ndarray, n_iterations: int,
                   tensor_constants: bool = False) -> MicrogradDeepChain:
        """See ``MicrogradDeepChain``."""
        return MicrogradDeepChain(x0, n_iterations, tensor_constants)
