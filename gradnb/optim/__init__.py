"""``gradnb.optim``: every optimizer of PyTorch's ``torch.optim`` with its update rules and API,
and ``lr_scheduler``."""

from __future__ import annotations

from . import lr_scheduler
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["ASGD", "LBFGS", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SparseAdam", "lr_scheduler"]
