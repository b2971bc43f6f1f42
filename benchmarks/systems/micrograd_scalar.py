"""micrograd (PyPI ``micrograd``): a scalar engine, so it runs the scalar workloads only.

The PyPI release has no ``tanh``; ``_tanh`` adds it exactly as micrograd's own lecture
writes it (a closure over the output), so the engine's costs stay its own.
"""

from __future__ import annotations

import importlib.metadata
import math

import numpy as np
from micrograd.engine import Value

from benchmarks.data import DEEP_ADD, DEEP_MUL, TINY_ADD, TINY_MUL, MlpProblem
from benchmarks.systems.base import MlpStep, Unsupported, tiny_op_kind


def _tanh(value: Value) -> Value:
    t = math.tanh(value.data)
    out = Value(t, (value,), "tanh")

    def _backward() -> None:
        value.grad += (1 - t * t) * out.grad

    out._backward = _backward
    return out


class MicrogradTinyChain:
    """One ``Value`` per element of the float64[16] input, chained elementwise."""

    def __init__(self, x0: np.ndarray, n_ops: int) -> None:
        self._leaves = [Value(float(v)) for v in x0]
        self._kinds = [tiny_op_kind(i) for i in range(n_ops)]
        self._value = float("nan")

    def run(self) -> None:
        """Forward, sum, backward; the leaves' grads are reset first."""
        hs = self._leaves
        for leaf in hs:
            leaf.grad = 0
        for kind in self._kinds:
            if kind == "mul":
                hs = [h * TINY_MUL for h in hs]
            elif kind == "add":
                hs = [h + TINY_ADD for h in hs]
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

    def __init__(self, x0: np.ndarray, n_iterations: int) -> None:
        self._leaf = Value(float(x0[0]))
        self._n = n_iterations
        self._value = float("nan")

    def run(self) -> None:
        """Forward and backward (micrograd's recursive topological sort)."""
        self._leaf.grad = 0
        h = self._leaf
        for _ in range(self._n):
            h = h * DEEP_MUL + DEEP_ADD
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

    def tiny_chain(self, x0: np.ndarray, n_ops: int) -> MicrogradTinyChain:
        """See ``MicrogradTinyChain``."""
        return MicrogradTinyChain(x0, n_ops)

    def deep_chain(self, x0: np.ndarray, n_iterations: int) -> MicrogradDeepChain:
        """See ``MicrogradDeepChain``."""
        return MicrogradDeepChain(x0, n_iterations)
