"""What a benchmarked system offers: one factory per workload, each returning a ``Step``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from benchmarks.data import DEEP_ADD, DEEP_MUL, TINY_ADD, TINY_MUL, MlpProblem


class Unsupported(Exception):
    """Raised by a system for a workload it does not offer; the report shows ``n/a``."""


class Step(Protocol):
    """One workload instance: ``run()`` is what gets timed, ``result()`` what gets checked."""

    def run(self) -> None:
        """Run forward and backward once (and the optimizer step, for the MLP)."""

    def result(self) -> dict[str, np.ndarray]:
        """The last run's loss/value and gradients as NumPy arrays, keyed by name."""


class MlpStep(Step, Protocol):
    """An MLP training step; ``result()`` holds ``loss`` and one gradient per parameter."""

    def release_gradients(self) -> None:
        """Drop the parameters' gradients, so what stays allocated is what the graph holds."""


class System(Protocol):
    """A benchmarked engine. Factories raise ``Unsupported`` for workloads it lacks."""

    numpy_based: bool  # True when tracemalloc sees its buffers (NumPy or pure Python)

    def version(self) -> str:
        """The engine's version string."""

    def set_threads(self, threads: int) -> None:
        """Match the engine's own thread pool to ``threads`` (BLAS is set by the worker)."""

    def mlp(self, problem: MlpProblem) -> MlpStep:
        """A training step: 784-512-256-10 style MLP, ReLU, softmax cross-entropy, SGD."""

    def tiny_chain(self, x0: np.ndarray, n_ops: int, tensor_constants: bool = False) -> Step:
        """``n_ops`` elementwise ops (x*c, x+d, tanh, repeating) on ``x0``, sum, backward; ``c``
        and ``d`` are Python floats, or 0-d tensors holding ``tensor_constant``'s values."""

    def deep_chain(self, x0: np.ndarray, n_iterations: int,
                   tensor_constants: bool = False) -> Step:
        """``n_iterations`` of ``x = x * DEEP_MUL + DEEP_ADD`` on ``x0``, then backward (the
        constants as in ``tiny_chain``)."""


def tiny_op_kind(index: int) -> str:
    """Which op the tiny chain applies at position ``index``: "mul", "add" or "tanh"."""
    return ("mul", "add", "tanh")[index % 3]


def tiny_forward(tanh: Callable[[Any], Any], n_ops: int, mul: Any = TINY_MUL,
                 add: Any = TINY_ADD) -> Callable[[Any], Any]:
    """The tiny chain's forward for an engine whose tanh is ``tanh`` (operators do the rest);
    ``mul`` and ``add`` are the constants, Python floats or the engine's 0-d tensors."""
    kinds = [tiny_op_kind(i) for i in range(n_ops)]

    def forward(h: Any) -> Any:
        for kind in kinds:
            if kind == "mul":
                h = h * mul
            elif kind == "add":
                h = h + add
            else:
                h = tanh(h)
        return h

    return forward


def deep_forward(n_iterations: int, mul: Any = DEEP_MUL,
                 add: Any = DEEP_ADD) -> Callable[[Any], Any]:
    """The deep chain's forward: ``x = x * mul + add``, ``n_iterations`` times."""

    def forward(h: Any) -> Any:
        for _ in range(n_iterations):
            h = h * mul + add
        return h

    return forward
