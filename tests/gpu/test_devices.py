"""Devices: factories with ``device=``, moves, mixing errors, and the CPU-only guarantees.

Tests taking ``device`` run on "cpu" and "cuda" (the CUDA case skips with the reason where CuPy
or a GPU is missing). The rest run everywhere: they fake CuPy's absence or a GPU-less CuPy.
"""

from __future__ import annotations

import subprocess
import sys
import types

import numpy as np
import pytest

import gradnb
from gradnb._core import backend as _backend


def host(t: gradnb.Tensor) -> np.ndarray:
    """The tensor's values as a NumPy array, from any device."""
    return t.detach().cpu().numpy()


# -- factories -----------------------------------------------------------------------------------
FACTORIES = {
    "zeros": lambda d: gradnb.zeros(2, 3, device=d),
    "ones": lambda d: gradnb.ones((2, 3), device=d),
    "empty": lambda d: gradnb.empty(2, 3, device=d),
    "full": lambda d: gradnb.full((2, 3), 7.0, device=d),
    "arange": lambda d: gradnb.arange(6, device=d),
    "linspace": lambda d: gradnb.linspace(0, 1, 5, device=d),
    "eye": lambda d: gradnb.eye(3, device=d),
    "tensor": lambda d: gradnb.tensor([[1.0, 2.0], [3.0, 4.0]], device=d),
    "as_tensor": lambda d: gradnb.as_tensor(np.ones((2, 2)), device=d),
    "rand": lambda d: gradnb.rand(2, 3, device=d),
    "randn": lambda d: gradnb.randn(2, 3, device=d),
    "randint": lambda d: gradnb.randint(0, 5, (4,), device=d),
    "randperm": lambda d: gradnb.randperm(5, device=d),
    "zeros_like": lambda d: gradnb.zeros_like(gradnb.ones(2, device=d)),
    "full_like": lambda d: gradnb.full_like(gradnb.ones(2, device=d), 3.0),
    "rand_like": lambda d: gradnb.rand_like(gradnb.ones(2, device=d)),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_factories_make_tensors_on_the_requested_device(device, name):
    t = FACTORIES[name](device)
    assert t.device == gradnb.device(device)
    assert t.is_cuda == (device == "cuda")
    expected = FACTORIES[name]("cpu") if name not in ("empty",) else None
    if expected is not None and not name.startswith("rand"):
        np.testing.assert_array_equal(host(t), host(expected))


def test_seeded_random_factories_give_the_same_values_on_every_device(device):
    gradnb.manual_seed(3)
    on_device = gradnb.randn(4, 5, device=device)
    gradnb.manual_seed(3)
    on_cpu = gradnb.randn(4, 5)
    np.testing.assert_array_equal(host(on_device), host(on_cpu))


def test_sampling_from_device_probabilities_stays_on_the_device(device):
    probs = gradnb.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]], device=device)
    draws = gradnb.bernoulli(probs)
    assert draws.device == gradnb.device(device)
    np.testing.assert_array_equal(host(draws)[0], [0.0, 1.0, 0.0])
    picks = gradnb.multinomial(probs, 1)
    assert picks.device == gradnb.device(device)
    assert host(picks)[0, 0] == 1 and host(picks)[1, 0] in (0, 2)


def test_requires_grad_factories_are_leaves_on_the_device(device):
    t = gradnb.ones(3, device=device, requires_grad=True)
    assert t.is_leaf and t.requires_grad and t.device == gradnb.device(device)


# -- moves ---------------------------------------------------------------------------------------
def test_to_and_back_round_trips_values_and_dtype(device):
    src = gradnb.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    moved = src.to(device)
    assert moved.device == gradnb.device(device)
    assert moved.dtype is gradnb.float32
    back = moved.cpu()
    assert back.device == gradnb.device("cpu")
    np.testing.assert_array_equal(back.numpy(), src.numpy())


def test_to_the_same_device_returns_the_tensor_itself(device):
    t = gradnb.ones(2, device=device)
    assert t.to(device) is t
    assert t.to(t.device) is t


def test_to_with_device_and_dtype_casts_and_moves(device):
    t = gradnb.arange(4).to(device, gradnb.float64)
    assert t.device == gradnb.device(device) and t.dtype is gradnb.float64


def test_to_another_tensor_takes_its_device_and_dtype(device):
    ref = gradnb.zeros(1, dtype=gradnb.float64, device=device)
    t = gradnb.ones(3).to(ref)
    assert t.device == ref.device and t.dtype is gradnb.float64


@pytest.mark.cuda
def test_cuda_and_cpu_methods_move_between_devices():
    t = gradnb.tensor([1.0, 2.0])
    on_gpu = t.cuda()
    assert on_gpu.device == gradnb.device("cuda:0") and on_gpu.is_cuda
    assert str(on_gpu.device) == "cuda:0"
    assert t.cuda(0).device == gradnb.device("cuda:0")
    np.testing.assert_array_equal(on_gpu.cpu().numpy(), [1.0, 2.0])
    assert "device='cuda:0'" in repr(on_gpu)


@pytest.mark.cuda
def test_tensor_from_a_cuda_tensor_keeps_or_changes_device_as_asked():
    src = gradnb.ones(2, device="cuda")
    assert gradnb.tensor(src).device == gradnb.device("cuda:0")
    assert gradnb.tensor(src, device="cpu").device == gradnb.device("cpu")


@pytest.mark.cuda
def test_numpy_of_a_cuda_tensor_asks_for_cpu_first():
    t = gradnb.ones(2, device="cuda")
    with pytest.raises(TypeError, match=r"Use Tensor.cpu\(\)"):
        t.numpy()
    assert t.tolist() == [1.0, 1.0]
    assert gradnb.ones((), device="cuda").item() == 1.0


def test_gradient_flows_back_across_a_device_move(device):
    x = gradnb.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x.to(device) * 2).sum()
    y.backward()
    assert x.grad.device == gradnb.device("cpu")
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_leaf_on_device_gets_its_grad_on_the_same_device(device):
    x = gradnb.ones(3, device=device, requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.device == x.device
    np.testing.assert_array_equal(host(x.grad), [2.0, 2.0, 2.0])


# -- mixing devices ------------------------------------------------------------------------------
SAME_DEVICE = "Expected all tensors to be on the same device"
MIXED = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "matmul": lambda a, b: a @ b,
    "cat": lambda a, b: gradnb.cat([a, b]),
    "stack": lambda a, b: gradnb.stack([a, b]),
    "where": lambda a, b: gradnb.where(a > 0, a, b),
    "maximum": lambda a, b: gradnb.maximum(a, b),
    "add_": lambda a, b: a.add_(b),
}


@pytest.mark.cuda
@pytest.mark.parametrize("name", MIXED)
def test_mixing_devices_in_one_op_raises_pytorchs_error(name):
    a = gradnb.ones(2, 2, device="cuda")
    b = gradnb.ones(2, 2)
    with pytest.raises(RuntimeError, match=SAME_DEVICE):
        MIXED[name](a, b)
    with pytest.raises(RuntimeError, match=SAME_DEVICE):
        MIXED[name](b.clone(), a)


# -- without CuPy or without a GPU (runs everywhere) ---------------------------------------------
@pytest.fixture
def fresh_backend(monkeypatch):
    """The backend as before its first CUDA use, restored afterwards."""
    monkeypatch.setattr(_backend, "_cupy", None)
    return monkeypatch


def test_without_cupy_device_cuda_says_cupy_is_missing(fresh_backend):
    fresh_backend.setitem(sys.modules, "cupy", None)  # makes ``import cupy`` fail
    with pytest.raises(RuntimeError, match=r"CuPy is not installed.*gradnb\[gpu\]"):
        gradnb.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="CuPy is not installed"):
        gradnb.ones(2).cuda()
    assert not gradnb.cuda.is_available()
    assert gradnb.cuda.device_count() == 0


def _gpu_less_cupy(get_device_count):
    runtime = types.SimpleNamespace(getDeviceCount=get_device_count)
    return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime), ndarray=object)


def _no_driver():
    raise OSError("cudaErrorInsufficientDriver: CUDA driver version is insufficient")


@pytest.mark.parametrize("count", [_no_driver, lambda: 0], ids=["no-driver", "zero-gpus"])
def test_cupy_without_a_gpu_says_no_cuda_device(fresh_backend, count):
    fresh_backend.setitem(sys.modules, "cupy", _gpu_less_cupy(count))
    with pytest.raises(RuntimeError, match="CuPy is installed but found no CUDA device"):
        gradnb.tensor([1.0], device="cuda")
    assert "no CUDA device" in _backend.cuda_unavailable_reason()
    assert not gradnb.cuda.is_available()


def test_a_failed_cuda_probe_leaves_cpu_tensors_working(fresh_backend):
    fresh_backend.setitem(sys.modules, "cupy", None)
    assert not gradnb.cuda.is_available()
    x = gradnb.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_bad_device_strings_raise_pytorchs_error():
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type"):
        gradnb.zeros(1, device="tpu")


def test_device_objects_compare_like_pytorchs():
    assert gradnb.device("cuda") == gradnb.device("cuda:0") == "cuda:0"
    assert gradnb.device("cuda:1") != gradnb.device("cuda:0")
    assert gradnb.device("cpu") == "cpu" != gradnb.device("cuda")
    assert repr(gradnb.device("cuda", 1)) == "device(type='cuda', index=1)"


# -- CuPy's code paths leave NumPy alone ---------------------------------------------------------
class _FakeDeviceArray:
    """Stands for a CuPy array when checking how the backend tells arrays apart."""


def test_get_array_module_gives_numpy_for_host_data_even_once_cupy_is_loaded(fresh_backend):
    assert _backend.get_array_module(np.ones(2)) is np
    fake_cupy = types.SimpleNamespace(ndarray=_FakeDeviceArray)
    fresh_backend.setattr(_backend, "_cupy", fake_cupy)
    assert _backend.get_array_module(np.ones(2)) is np
    assert _backend.get_array_module(np.float32(1.0)) is np
    assert _backend.get_array_module(np.ones(2)[None]) is np
    assert _backend.get_array_module(_FakeDeviceArray()) is fake_cupy


def test_moving_host_data_to_the_cpu_is_free():
    arr = np.ones(3)
    assert _backend.to_device(arr, _backend.CPU) is arr
    scalar = np.float32(2.0)
    assert _backend.to_device(scalar, _backend.CPU) is scalar
    assert _backend.device_of(arr) == "cpu" and _backend.device_of(scalar) == "cpu"


def test_import_gradnb_never_imports_cupy():
    code = ("import sys, gradnb, gradnb.cuda, gradnb.nn, gradnb.optim\n"
            "gradnb.ones(2).sum()\n"
            "print('cupy' in sys.modules, 'cupyx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_cuda_helpers_answer_without_a_gpu_and_mirror_torch_cuda():
    assert isinstance(gradnb.cuda.is_available(), bool)
    assert gradnb.cuda.device_count() >= 0
    if not gradnb.cuda.is_available():
        with pytest.raises(RuntimeError, match="CuPy|CUDA"):
            gradnb.cuda.memory_allocated()
