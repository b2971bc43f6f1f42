"""``gradnb.backends``: the switches PyTorch scripts set for their backends (``cudnn``,
``cuda.matmul``, ``mps``), answered for gradnb's: NumPy on the CPU and CuPy on NVIDIA GPUs.

gradnb runs no cuDNN kernels and has no Metal backend, so ``cudnn.is_available()`` and
``mps.is_available()`` are False everywhere, as on a CPU-only PyTorch; the flags scripts set
(``cudnn.benchmark = True``, ``cuda.matmul.allow_tf32 = True``) are kept and read back, and
change no number.

>>> import gradnb
>>> gradnb.backends.cudnn.benchmark = True
>>> gradnb.backends.mps.is_available()
False
"""

from __future__ import annotations

from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
