"""Shared test fixtures: the PyTorch oracle, deterministic seeds and the device parametrization."""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

import gradnb


@pytest.fixture
def torch():
    """PyTorch, for oracle comparisons; the test is skipped where it is not installed."""
    torch = pytest.importorskip("torch")
    # Oracle tests use tiny tensors: extra threads only add contention on small machines.
    torch.set_num_threads(1)
    return torch


@pytest.fixture(autouse=True)
def _fixed_seeds():
    gradnb.manual_seed(0)
    np.random.seed(0)
    yield


# -- devices ---------------------------------------------------------------------------------------
# Tests that take the ``device`` fixture run once on "cpu" and once on "cuda". The CUDA case
# carries the ``cuda`` marker and skips, with the reason, where CuPy or a GPU is missing; setting
# GRADNB_EMULATE_CUDA=1 runs it on a NumPy-backed stand-in for CuPy (tests/gpu/cupy_emulator.py)
# that rejects host arrays as CuPy does, to catch device bugs on machines without a GPU;
# GRADNB_REQUIRE_CUDA=1 turns those skips into failures.
if os.environ.get("GRADNB_EMULATE_CUDA") == "1":
    _spec = importlib.util.spec_from_file_location(
        "cupy_emulator", Path(__file__).parent / "gpu" / "cupy_emulator.py")
    _emulator = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_emulator)
    _emulator.install()


@functools.cache
def _cuda_skip_reason() -> str | None:
    from gradnb._core.backend import cuda_unavailable_reason

    return cuda_unavailable_reason()


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def device(request) -> str:
    """The device a test runs on: "cpu", then "cuda" (skipped with the reason without a GPU)."""
    return request.param


def pytest_runtest_setup(item):
    if item.get_closest_marker("cuda") is not None:
        reason = _cuda_skip_reason()
        if reason is not None:
            # On a GPU machine (gpu_check/run.sh sets this) a CUDA case must run, never skip.
            if os.environ.get("GRADNB_REQUIRE_CUDA") == "1":
                pytest.fail(f"CUDA required (GRADNB_REQUIRE_CUDA=1) but unavailable: {reason}")
            pytest.skip(f"CUDA unavailable: {reason}")
