"""``gradnb.optim.lr_scheduler``: PyTorch's learning-rate schedules, same sequences and
``state_dict`` layout (a port of ``torch/optim/lr_scheduler.py``).

>>> import gradnb
>>> w = gradnb.zeros(1, requires_grad=True)
>>> opt = gradnb.optim.SGD([w], lr=1.0)
>>> sched = StepLR(opt, step_size=2, gamma=0.5)
>>> for _ in range(4):
...     opt.step()
...     sched.step()
>>> sched.get_last_lr()
[0.25]
"""

from __future__ import annotations

from .base import LRScheduler
from .composite import ChainedScheduler, SequentialLR
from .cosine import CosineAnnealingLR, CosineAnnealingWarmRestarts
from .cyclic import CyclicLR, OneCycleLR
from .multiplicative import (
    ConstantLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)
from .plateau import ReduceLROnPlateau

__all__ = ["ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
           "CyclicLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR",
           "MultiplicativeLR", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau", "SequentialLR",
           "StepLR"]

# PyTorch's schedulers live in one module, ``torch.optim.lr_scheduler``, and code reads that name
# (``type(sched).__module__``, logging, pickles): ours name their public module likewise.
for _name in __all__:
    globals()[_name].__module__ = __name__
