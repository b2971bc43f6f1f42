"""``gradnb.nn.parallel``: the wrappers scripts put around a model, as on a CPU-only PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb import cuda, nn


@pytest.mark.skipif(cuda.is_available(), reason="the pass-through is the no-GPU behaviour")
def test_data_parallel_without_a_gpu_is_the_model_under_module():
    model = nn.Linear(3, 2)
    wrapped = nn.DataParallel(model)
    x = gradnb.randn(4, 3)
    assert wrapped.module is model and wrapped.device_ids == []
    assert gradnb.equal(wrapped(x), model(x))
    assert list(wrapped.state_dict()) == ["module.weight", "module.bias"]
    wrapped(x).sum().backward()
    assert model.weight.grad is not None
    assert gradnb.equal(nn.parallel.data_parallel(model, x), model(x))


@pytest.mark.torch
def test_data_parallel_repr_and_keys_match_torch(torch):
    ours = nn.DataParallel(nn.Linear(3, 2))
    theirs = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert nn.parallel.DataParallel is nn.DataParallel


@pytest.mark.torch
def test_distributed_data_parallel_needs_a_process_group_as_in_torch(torch):
    with pytest.raises(ValueError) as theirs:
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError) as ours:
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.cuda
def test_data_parallel_on_a_gpu_moves_the_model_and_inputs():
    model = nn.Linear(3, 2)
    expected = model(gradnb.ones(1, 3)).detach().numpy()
    wrapped = nn.DataParallel(model, device_ids=[0])
    out = wrapped(gradnb.ones(1, 3))
    assert out.device.type == "cuda"
    np.testing.assert_allclose(out.detach().cpu().numpy(), expected, rtol=1e-6)
