"""The inputs every system receives: one seed, generated with NumPy, identical in every process."""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np

SEED = 20240601
LEARNING_RATE = 0.01

# The tiny-ops chain repeats these three ops: x * TINY_MUL, x + TINY_ADD, tanh(x).
TINY_MUL = 0.9
TINY_ADD = 0.1
TINY_SIZE = 16

# The deep chain repeats x = x * DEEP_MUL + DEEP_ADD on a one-element tensor.
DEEP_MUL = 1.0001
DEEP_ADD = 0.0001
DEEP_START = 0.5

# How the chains' constants reach the engine: as Python floats (``x * 0.9``), or as 0-d
# tensors made once before the chain (``c = torch.tensor(0.9)``, then ``x * c``), as users
# often write them and as independent harnesses time them.
CONSTANTS = ("Python floats", "0-d tensors")


def tensor_constant(value: float) -> np.ndarray:
    """What ``torch.tensor(value)`` holds: a 0-d array in the default dtype, float32.

    Multiplying the float64 chain by it promotes it to float64, so every system (the NumPy
    limit too) computes with the same float32-rounded constant.
    """
    return np.array(value, dtype=np.float32)


@dataclass(frozen=True)
class MlpProblem:
    """Initial weights and one batch for an MLP training step.

    ``weights`` alternates matrices and biases, ``(W1, b1, W2, b2, ...)``, with each
    matrix laid out ``(fan_in, fan_out)`` so a layer computes ``h @ W + b``.
    """

    weights: tuple[np.ndarray, ...]
    x: np.ndarray
    y: np.ndarray
    lr: float


def parameter_names(n_layers: int) -> tuple[str, ...]:
    """Names of the MLP parameters in ``MlpProblem.weights`` order: W1, b1, W2, b2, ..."""
    return tuple(name for i in range(1, n_layers + 1) for name in (f"W{i}", f"b{i}"))


@functools.lru_cache(maxsize=8)
def mlp_problem(layers: tuple[int, ...], batch: int) -> MlpProblem:
    """The float32 MLP problem for ``layers`` (e.g. ``(784, 512, 256, 10)``) and ``batch``.

    Weights follow ``nn.Linear``'s default, U(-1/sqrt(fan_in), 1/sqrt(fan_in)); the
    weights depend on ``layers`` only, so every batch size starts from the same model.
    """
    weight_rng = np.random.default_rng(SEED)
    weights: list[np.ndarray] = []
    for fan_in, fan_out in itertools.pairwise(layers):
        bound = 1.0 / np.sqrt(fan_in)
        weights.append(weight_rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        weights.append(weight_rng.uniform(-bound, bound, fan_out).astype(np.float32))
    data_rng = np.random.default_rng(SEED + batch)
    x = data_rng.standard_normal((batch, layers[0])).astype(np.float32)
    y = data_rng.integers(0, layers[-1], batch).astype(np.int64)
    for array in (*weights, x, y):
        array.flags.writeable = False  # systems must copy before updating in place
    return MlpProblem(tuple(weights), x, y, LEARNING_RATE)


def products_operands(problem: MlpProblem) -> tuple[tuple[np.ndarray, ...], ...]:
    """Fixed operands for the MLP step's products alone: per layer its input ``h`` (rows x
    fan_in, non-negative as a ReLU's output) and its output's gradient ``g`` (rows x fan_out)."""
    rng = np.random.default_rng(SEED + 1)
    rows = problem.x.shape[0]
    inputs, grads = [], []
    for weight in problem.weights[::2]:
        fan_in, fan_out = weight.shape
        inputs.append(np.abs(rng.standard_normal((rows, fan_in))).astype(np.float32))
        grads.append((rng.standard_normal((rows, fan_out)) / rows).astype(np.float32))
    return tuple(inputs), tuple(grads)


def tiny_input() -> np.ndarray:
    """The float64[16] leaf of the tiny-ops chain."""
    return np.random.default_rng(SEED).standard_normal(TINY_SIZE)


def deep_input() -> np.ndarray:
    """The one-element float64 leaf of the deep chain."""
    return np.array([DEEP_START])


# The training loop: a small classifier trained on a fixed set of mini-batches, cycled.
TRAINING_BATCHES = 8
OPTIMIZERS = {  # name -> the PyTorch-style constructor arguments every system uses
    "Adam": {"lr": 1e-3},
    "SGD": {"lr": 0.01, "momentum": 0.9},
}


@dataclass(frozen=True)
class TrainingProblem:
    """Initial weights (``MlpProblem``'s layout) and ``TRAINING_BATCHES`` mini-batches."""

    weights: tuple[np.ndarray, ...]
    x_batches: tuple[np.ndarray, ...]
    y_batches: tuple[np.ndarray, ...]


@functools.lru_cache(maxsize=4)
def training_problem(layers: tuple[int, ...], batch: int) -> TrainingProblem:
    """The float32 training-loop problem: weights as ``mlp_problem``'s, labels from a fixed
    random linear rule on the inputs (so there is something to learn)."""
    weights = mlp_problem(layers, batch).weights
    rng = np.random.default_rng(SEED + 1)
    rule = rng.standard_normal((layers[0], layers[-1]))
    xs, ys = [], []
    for _ in range(TRAINING_BATCHES):
        x = rng.standard_normal((batch, layers[0])).astype(np.float32)
        y = np.argmax(x @ rule, axis=1).astype(np.int64)
        x.flags.writeable = False
        y.flags.writeable = False
        xs.append(x)
        ys.append(y)
    return TrainingProblem(weights, tuple(xs), tuple(ys))
