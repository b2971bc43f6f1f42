"""Hyper-parameter validation with PyTorch's messages (checked in PyTorch's order)."""

from __future__ import annotations

from .._core.tensor import Tensor

__all__ = ["check_betas", "check_fused", "check_lr", "check_not_differentiable", "check_tensor_lr"]


def check_lr(lr, *, foreach=None, capturable: bool = False) -> None:
    """A learning rate: a number or a one-element tensor, never negative. A tensor ``lr`` with
    ``foreach=True`` needs ``capturable`` (PyTorch's rule for the optimizers that check it)."""
    if isinstance(lr, Tensor):
        if foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        if lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_tensor_lr(lr) -> None:
    """Only the element-count rule (optimizers that take a tensor lr with any ``foreach``)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def check_betas(betas) -> None:
    """Each beta must lie in [0, 1)."""
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def check_fused(fused, foreach, differentiable) -> None:
    """``fused`` excludes ``differentiable`` and ``foreach`` (PyTorch's order of checks)."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def check_not_differentiable(differentiable: bool, name: str) -> None:
    """gradnb's optimizers update raw arrays outside any graph, so a step cannot itself be
    differentiated; say so instead of silently recording nothing."""
    if differentiable:
        raise NotImplementedError(f"{name}(differentiable=True) is not supported by gradnb: "
                                  "optimizer steps are not recorded in the autograd graph")
