"""Shared test fixtures: the PyTorch oracle and deterministic seeds."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb


@pytest.fixture
def torch():
    """PyTorch, for oracle comparisons; the test is skipped where it is not installed."""
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _fixed_seeds():
    gradnb.manual_seed(0)
    np.random.seed(0)
    yield
