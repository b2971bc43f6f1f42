"""``gradnb.nn``: modules, parameters, losses, ``functional``, ``init`` and ``utils``, with
PyTorch's names, so ``from gradnb import nn`` reads like ``from torch import nn``."""

from __future__ import annotations

from . import functional, init, utils
from .modules import (
    GELU,
    BatchNorm1d,
    BCEWithLogitsLoss,
    Conv2d,
    CrossEntropyLoss,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LayerNorm,
    Linear,
    LogSoftmax,
    MaxPool2d,
    Module,
    ModuleDict,
    ModuleList,
    MSELoss,
    NLLLoss,
    ReLU,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
)
from .parameter import Buffer, Parameter

__all__ = [
    "GELU",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "Buffer",
    "Conv2d",
    "CrossEntropyLoss",
    "Dropout",
    "Embedding",
    "Flatten",
    "Identity",
    "LayerNorm",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "MaxPool2d",
    "Module",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "Parameter",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "functional",
    "init",
    "utils",
]
