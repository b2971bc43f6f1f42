"""The layers of ``gradnb.nn``, one concept per module."""

from __future__ import annotations

from .activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d
from .dropout import Dropout
from .flatten import Flatten
from .linear import Identity, Linear
from .loss import BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module
from .normalization import BatchNorm1d, LayerNorm
from .pooling import MaxPool2d
from .sparse import Embedding

__all__ = [
    "GELU",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
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
    "ReLU",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "Tanh",
]
