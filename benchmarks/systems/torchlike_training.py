"""A training loop behind PyTorch's API (PyTorch itself and gradnb): ``nn.Linear`` layers,
``F.relu``, ``F.cross_entropy``, and ``torch.optim.Adam`` or ``SGD(momentum=0.9)``."""

from __future__ import annotations

from types import ModuleType

import numpy as np

from benchmarks.data import OPTIMIZERS, TrainingProblem, parameter_names


class TorchLikeTrainingLoop:
    """``steps`` × (``zero_grad``, forward, loss, ``backward``, ``optimizer.step``)."""

    def __init__(self, torch: ModuleType, problem: TrainingProblem, optimizer: str,
                 steps: int) -> None:
        self._torch = torch
        self._layers = []
        for weight, bias in zip(problem.weights[::2], problem.weights[1::2]):
            layer = torch.nn.Linear(*weight.shape)
            layer.weight = torch.nn.Parameter(torch.tensor(np.ascontiguousarray(weight.T)))
            layer.bias = torch.nn.Parameter(torch.tensor(bias))
            self._layers.append(layer)
        self._params = [p for layer in self._layers for p in (layer.weight, layer.bias)]
        self._optimizer = getattr(torch.optim, optimizer)(self._params, **OPTIMIZERS[optimizer])
        self._batches = [(torch.tensor(x), torch.tensor(y))
                         for x, y in zip(problem.x_batches, problem.y_batches)]
        self._steps = steps
        self._loss = float("nan")

    def run(self) -> None:
        """The loop; the loss is read back once, at the end, as a notebook user would."""
        functional = self._torch.nn.functional
        layers, optimizer, batches = self._layers, self._optimizer, self._batches
        loss = None
        for i in range(self._steps):
            x, y = batches[i % len(batches)]
            optimizer.zero_grad()
            h = x
            for layer in layers[:-1]:
                h = functional.relu(layer(h))
            loss = functional.cross_entropy(layers[-1](h), y)
            loss.backward()
            optimizer.step()
        self._loss = loss.item()

    def result(self) -> dict[str, np.ndarray]:
        """The last loss and the parameters after the loop (weights in ``(fan_in, fan_out)``)."""
        params = [np.array(p.detach().cpu().numpy()) for p in self._params]
        params[::2] = [w.T for w in params[::2]]
        names = parameter_names(len(self._layers))
        return {"loss": np.array(self._loss), **dict(zip(names, params))}
