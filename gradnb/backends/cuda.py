"""``gradnb.backends.cuda``: the CUDA switches scripts set (``matmul.allow_tf32``, the
scaled-dot-product-attention kernels). gradnb's CUDA is CuPy's; the switches are kept and read
back, and its kernels compute in the tensors' own precision whatever they say."""

from __future__ import annotations

from .. import cuda as _cuda

__all__ = ["enable_flash_sdp", "enable_math_sdp", "enable_mem_efficient_sdp",
           "flash_sdp_enabled", "is_built", "math_sdp_enabled", "matmul",
           "mem_efficient_sdp_enabled"]


class _MatmulFlags:
    """``gradnb.backends.cuda.matmul``: reduced-precision matmul switches (PyTorch's defaults)."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()
_sdp = {"flash": True, "mem_efficient": True, "math": True}


def is_built() -> bool:
    """Whether gradnb can run on CUDA here (CuPy imports and sees a GPU)."""
    return _cuda.is_available()


def flash_sdp_enabled() -> bool:
    """Whether the flash attention kernel may be chosen."""
    return _sdp["flash"]


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient attention kernel may be chosen."""
    return _sdp["mem_efficient"]


def math_sdp_enabled() -> bool:
    """Whether the plain (math) attention kernel may be chosen."""
    return _sdp["math"]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid the flash attention kernel."""
    _sdp["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid the memory-efficient attention kernel."""
    _sdp["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the plain (math) attention kernel."""
    _sdp["math"] = bool(enabled)
