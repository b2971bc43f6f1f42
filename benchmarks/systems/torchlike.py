"""Systems written against PyTorch's API: PyTorch itself and gradnb (``import gradnb as torch``).

The same code drives both, so any difference in the numbers is the engine's, not the
benchmark's.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.data import (
    DEEP_ADD,
    DEEP_MUL,
    TINY_ADD,
    TINY_MUL,
    MlpProblem,
    parameter_names,
)
from benchmarks.systems.base import Unsupported, deep_forward, tiny_forward


def _to_numpy(tensor: Any) -> np.ndarray:
    return np.array(tensor.detach().cpu().numpy())


class TorchLikeMlpStep:
    """``zero_grad``, forward through ``nn.Linear`` + ``F.relu``, ``F.cross_entropy``, ``step``."""

    def __init__(self, torch: ModuleType, problem: MlpProblem) -> None:
        self._torch = torch
        self._layers = []
        for weight, bias in zip(problem.weights[::2], problem.weights[1::2]):
            layer = torch.nn.Linear(*weight.shape)
            layer.weight = torch.nn.Parameter(torch.tensor(np.ascontiguousarray(weight.T)))
            layer.bias = torch.nn.Parameter(torch.tensor(bias))
            self._layers.append(layer)
        self._params = [p for layer in self._layers for p in (layer.weight, layer.bias)]
        self._optimizer = torch.optim.SGD(self._params, lr=problem.lr)
        self._x = torch.tensor(problem.x)
        self._y = torch.tensor(problem.y)
        self._loss = float("nan")

    def run(self) -> None:
        """One training step; only the loss's float is kept, never the graph."""
        functional = self._torch.nn.functional
        self._optimizer.zero_grad()
        h = self._x
        for layer in self._layers[:-1]:
            h = functional.relu(layer(h))
        loss = functional.cross_entropy(self._layers[-1](h), self._y)
        loss.backward()
        self._optimizer.step()
        self._loss = loss.item()

    def result(self) -> dict[str, np.ndarray]:
        """Loss and gradients; weight gradients transposed to the ``(fan_in, fan_out)`` layout."""
        grads = [_to_numpy(p.grad) for p in self._params]
        grads[::2] = [g.T for g in grads[::2]]
        names = parameter_names(len(self._layers))
        return {"loss": np.array(self._loss), **dict(zip(names, grads))}

    def release_gradients(self) -> None:
        """``zero_grad(set_to_none=True)``."""
        self._optimizer.zero_grad(set_to_none=True)


class TorchLikeProductsStep:
    """The MLP step's matrix products alone, in ``nn.Linear``'s layout (weights out x in), on
    tensors that record nothing: what the step's forward and ``AddmmBackward0`` multiply."""

    def __init__(self, torch: ModuleType, problem: MlpProblem, inputs: tuple[np.ndarray, ...],
                 grads: tuple[np.ndarray, ...]) -> None:
        self._linear = torch.nn.functional.linear
        self._layers = [
            (torch.tensor(np.ascontiguousarray(weight.T)), torch.tensor(bias),
             torch.tensor(h), torch.tensor(g))
            for weight, bias, h, g in zip(problem.weights[::2], problem.weights[1::2],
                                          inputs, grads)
        ]
        self._results: dict[str, Any] = {}

    def run(self) -> None:
        """Per layer ``linear(h, w, b)`` and ``g.T @ h`` (the weight's gradient, out x in);
        ``g @ w`` for every layer but the first."""
        results = {}
        for i, (weight, bias, h, g) in enumerate(self._layers, start=1):
            results[f"z{i}"] = self._linear(h, weight, bias)
            results[f"W{i}"] = g.t() @ h
            if i > 1:
                results[f"dx{i}"] = g @ weight
        self._results = results

    def result(self) -> dict[str, np.ndarray]:
        """Every product of the last run, weight gradients in the limit's in x out layout."""
        return {name: _to_numpy(value.t() if name.startswith("W") else value)
                for name, value in self._results.items()}


class TorchLikeChain:
    """A chain of ops on one leaf, summed and back-propagated."""

    def __init__(self, torch: ModuleType, x0: np.ndarray, forward: Callable[[Any], Any]) -> None:
        self._leaf = torch.tensor(x0, requires_grad=True)
        self._forward = forward
        self._value = np.empty(0)

    def run(self) -> None:
        """Forward, ``sum()``, ``backward()``; the leaf's grad is reset first, not accumulated."""
        self._leaf.grad = None
        out = self._forward(self._leaf).sum()
        out.backward()
        self._value = np.array(out.item())

    def run_phases(self) -> tuple[float, float]:
        """``run()``, timing the forward (with ``sum()``) and the backward apart, in seconds."""
        self._leaf.grad = None
        started = time.perf_counter()
        out = self._forward(self._leaf).sum()
        forward_done = time.perf_counter()
        out.backward()
        backward_done = time.perf_counter()
        self._value = np.array(out.item())
        return forward_done - started, backward_done - forward_done

    def result(self) -> dict[str, np.ndarray]:
        """The summed output and the leaf's gradient."""
        return {"value": self._value, "grad": _to_numpy(self._leaf.grad)}


class TorchLikeSystem:
    """A system behind PyTorch's API, given the module (``torch`` or ``gradnb``)."""

    def __init__(self, module: ModuleType, *, numpy_based: bool) -> None:
        self._torch = module
        self.numpy_based = numpy_based

    def version(self) -> str:
        """``module.__version__``, else the installed distribution's version."""
        version = getattr(self._torch, "__version__", None)
        if version is None:
            with contextlib.suppress(importlib.metadata.PackageNotFoundError):
                version = importlib.metadata.version(self._torch.__name__)
        version = str(version or "unknown")
        if self.numpy_based:  # gradnb: and whether its hot paths run compiled here
            config = importlib.import_module(f"{self._torch.__name__}.__config__")
            parts = config.compiled_parts()
            version += f" (compiled: {', '.join(parts)})" if parts else " (Python only)"
        return version

    def set_threads(self, threads: int) -> None:
        """``set_num_threads`` where the module has it (PyTorch's intra-op pool)."""
        if hasattr(self._torch, "set_num_threads"):
            self._torch.set_num_threads(threads)

    def mlp(self, problem: MlpProblem) -> TorchLikeMlpStep:
        """See ``TorchLikeMlpStep``."""
        return TorchLikeMlpStep(self._torch, problem)

    def mlp_products(self, problem: MlpProblem, inputs: tuple[np.ndarray, ...],
                     grads: tuple[np.ndarray, ...]) -> TorchLikeProductsStep:
        """See ``TorchLikeProductsStep``."""
        return TorchLikeProductsStep(self._torch, problem, inputs, grads)

    def training_loop(self, problem, optimizer: str, steps: int):
        """See ``benchmarks.systems.torchlike_training.TorchLikeTrainingLoop``."""
        from benchmarks.systems.torchlike_training import TorchLikeTrainingLoop

        return TorchLikeTrainingLoop(self._torch, problem, optimizer, steps)

    def _constants(self, values: tuple[float, ...], as_tensors: bool) -> tuple[Any, ...]:
        """``values`` as Python floats, or as ``torch.tensor(value)``: 0-d, in the default dtype
        (float32: the values of ``tensor_constant``, which the cross-check then confirms)."""
        if not as_tensors:
            return values
        return tuple(self._torch.tensor(value) for value in values)

    def tiny_chain(self, x0: np.ndarray, n_ops: int,
                   tensor_constants: bool = False) -> TorchLikeChain:
        """See ``TorchLikeChain``."""
        mul, add = self._constants((TINY_MUL, TINY_ADD), tensor_constants)
        return TorchLikeChain(self._torch, x0, tiny_forward(self._torch.tanh, n_ops, mul, add))

    def deep_chain(self, x0: np.ndarray, n_iterations: int,
                   tensor_constants: bool = False) -> TorchLikeChain:
        """See ``TorchLikeChain``; ``sum()`` of a one-element tensor is the value itself."""
        mul, add = self._constants((DEEP_MUL, DEEP_ADD), tensor_constants)
        return TorchLikeChain(self._torch, x0, deep_forward(n_iterations, mul, add))

    def trace_context(self) -> contextlib.AbstractContextManager:
        """The module's ``autograd.graph_trace()`` context manager (gradnb's graph recorder)."""
        if not hasattr(self._torch.autograd, "graph_trace"):
            raise Unsupported(f"{self._torch.__name__}.autograd.graph_trace() does not exist")
        return self._torch.autograd.graph_trace()
