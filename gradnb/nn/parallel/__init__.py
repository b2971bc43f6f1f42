"""``gradnb.nn.parallel``: ``DataParallel`` and ``DistributedDataParallel``, the wrappers
training scripts put around a model to use several GPUs.

On a machine without a GPU ``DataParallel`` is PyTorch's pass-through (``model.module`` is the
model and its ``state_dict`` keys gain the ``module.`` prefix); with GPUs it runs the model on
the first one. gradnb has no process groups, so ``DistributedDataParallel`` raises what
PyTorch raises when no process group was initialised.
"""

from __future__ import annotations

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
