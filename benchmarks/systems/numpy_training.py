"""The NumPy limit of a training loop: hand-written backward and hand-written Adam / SGD with
momentum, every update in place on preallocated buffers (PyTorch's update rules)."""

from __future__ import annotations

import numpy as np

from benchmarks.data import OPTIMIZERS, TrainingProblem, parameter_names
from benchmarks.systems.numpy_limit import mlp_gradients


class NumpyTrainingLoop:
    """``steps`` training steps over the problem's mini-batches, cycled."""

    def __init__(self, problem: TrainingProblem, optimizer: str, steps: int) -> None:
        self._params = [p.copy() for p in problem.weights]
        self._batches = list(zip(problem.x_batches, problem.y_batches))
        self._rows = np.arange(len(problem.y_batches[0]))
        self._steps = steps
        self._optimizer = optimizer
        self._hyper = OPTIMIZERS[optimizer]
        self._first = [np.zeros_like(p) for p in self._params]  # exp_avg / momentum buffer
        self._second = [np.zeros_like(p) for p in self._params]  # exp_avg_sq
        self._scratch = [np.empty_like(p) for p in self._params]
        self._t = 0
        self._loss = float("nan")

    def run(self) -> None:
        """The loop."""
        update = self._adam if self._optimizer == "Adam" else self._sgd_momentum
        for i in range(self._steps):
            x, y = self._batches[i % len(self._batches)]
            self._loss, grads = mlp_gradients(self._params, x, y, self._rows)
            self._t += 1
            update(grads)

    def _adam(self, grads: list[np.ndarray]) -> None:
        lr, (beta1, beta2), eps = self._hyper["lr"], (0.9, 0.999), 1e-8
        step_size = lr / (1 - beta1 ** self._t)
        bias_correction2_sqrt = (1 - beta2 ** self._t) ** 0.5
        for p, g, m, v, tmp in zip(self._params, grads, self._first, self._second,
                                   self._scratch):
            m *= beta1
            np.multiply(g, 1 - beta1, out=tmp)
            m += tmp
            v *= beta2
            np.multiply(g, g, out=tmp)
            tmp *= 1 - beta2
            v += tmp
            np.sqrt(v, out=tmp)
            tmp /= bias_correction2_sqrt
            tmp += eps
            np.divide(m, tmp, out=tmp)
            tmp *= -step_size
            p += tmp

    def _sgd_momentum(self, grads: list[np.ndarray]) -> None:
        lr, momentum = self._hyper["lr"], self._hyper["momentum"]
        for p, g, buf, tmp in zip(self._params, grads, self._first, self._scratch):
            if self._t == 1:
                buf[...] = g
            else:
                buf *= momentum
                buf += g
            np.multiply(buf, -lr, out=tmp)
            p += tmp

    def result(self) -> dict[str, np.ndarray]:
        """The last loss and the parameters after the loop."""
        names = parameter_names(len(self._params) // 2)
        return {"loss": np.array(self._loss), **dict(zip(names, self._params))}
