"""Memory accounting on a device: exact byte sums from the engine, cross-checked on CUDA against
CuPy's memory pool (``gradnb.cuda.memory_allocated``)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import gradnb
from gradnb.autograd import memory

MIB = 1 << 20


def _mlp_loss(device):
    """A float32 MLP whose intermediates (1 MiB or more each) nobody but the graph holds."""
    rng = np.random.default_rng(0)
    x = gradnb.tensor(rng.standard_normal((256, 1024)).astype(np.float32), device=device)
    w1 = gradnb.tensor(rng.standard_normal((1024, 1024)).astype(np.float32) * 0.03,
                       device=device, requires_grad=True)
    w2 = gradnb.tensor(rng.standard_normal((1024, 256)).astype(np.float32) * 0.03,
                       device=device, requires_grad=True)
    h = (x @ w1).tanh()
    return x, w1, w2, ((h @ w2).exp()).sum()


def test_backward_reports_the_same_exact_bytes_on_every_device(device):
    _, _, _, loss = _mlp_loss(device)
    held = memory.graph_bytes(loss)
    loss.backward()
    report = memory.last_backward()
    _, _, _, ref_loss = _mlp_loss("cpu")
    ref_held = memory.graph_bytes(ref_loss)
    ref_loss.backward()
    ref = memory.last_backward()
    assert held == ref_held > 0
    assert (report.freed_bytes, report.released_bytes) == (ref.freed_bytes, ref.released_bytes)
    assert report.freed_bytes > 0


def test_backward_report_names_the_device_it_ran_on(device):
    _, _, _, loss = _mlp_loss(device)
    loss.backward()
    assert memory.last_backward().device == str(gradnb.device(device if device == "cpu"
                                                              else "cuda:0"))


@pytest.mark.cuda
def test_freed_bytes_match_what_cupys_pool_got_back():
    x, w1, w2, loss = _mlp_loss("cuda")
    gc.collect()
    gc.disable()
    try:
        gradnb.cuda.synchronize()
        before = gradnb.cuda.memory_allocated()
        loss.backward()
        gradnb.cuda.synchronize()
        after = gradnb.cuda.memory_allocated()
    finally:
        gc.enable()
    report = memory.last_backward()
    new_grads = w1.grad.nbytes + w2.grad.nbytes
    pool_freed = before - after + new_grads
    assert report.freed_bytes == MIB + 256 * 256 * 4  # tanh(x @ w1) and exp(h @ w2) outputs
    # Every buffer is a multiple of 512 bytes (the pool's granule): only kernel scratch differs.
    assert abs(pool_freed - report.freed_bytes) <= 0.05 * report.freed_bytes
    assert report.released_bytes == x.nbytes + w2.nbytes


@pytest.mark.cuda
def test_memory_allocated_follows_tensors_and_empty_cache_returns_blocks():
    gc.collect()
    gradnb.cuda.empty_cache()  # no cached block to reuse: the tensor gets a fresh allocation
    base = gradnb.cuda.memory_allocated()
    t = gradnb.zeros(MIB // 4, device="cuda")  # 1 MiB of float32
    assert gradnb.cuda.memory_allocated() - base == MIB
    assert gradnb.cuda.memory_reserved() >= gradnb.cuda.memory_allocated()
    del t
    gc.collect()
    assert gradnb.cuda.memory_allocated() == base
    reserved = gradnb.cuda.memory_reserved()
    gradnb.cuda.empty_cache()  # the freed MiB goes back to the driver; live arrays stay
    assert gradnb.cuda.memory_allocated() <= gradnb.cuda.memory_reserved() <= reserved - MIB


@pytest.mark.cuda
def test_cuda_helpers_see_the_gpu():
    assert gradnb.cuda.is_available()
    assert gradnb.cuda.device_count() >= 1
    assert gradnb.cuda.current_device() == 0
    gradnb.cuda.synchronize()
    assert gradnb.cuda.memory_allocated("cuda:0") == gradnb.cuda.memory_allocated(0)
    with pytest.raises(ValueError, match="Expected a cuda device"):
        gradnb.cuda.memory_allocated("cpu")
