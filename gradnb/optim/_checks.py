"""Hyper-parameter validation with PyTorch's messages."""

from __future__ import annotations

__all__ = ["check_betas", "check_eps", "check_lr", "check_weight_decay"]


def check_lr(lr: float) -> None:
    """Reject a negative learning rate."""
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_eps(eps: float) -> None:
    """Reject a negative epsilon."""
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")


def check_betas(betas) -> None:
    """Each beta must lie in [0, 1)."""
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def check_weight_decay(weight_decay: float) -> None:
    """Reject a negative weight decay."""
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
