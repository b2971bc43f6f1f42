"""PyTorch's process-wide switches and dtype facts, against torch where it is installed."""

from __future__ import annotations

import warnings

import pytest

import gradnb


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _restore_settings():
    yield
    gradnb.use_deterministic_algorithms(False)
    gradnb.set_float32_matmul_precision("highest")


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "complex64", "complex128"])
def test_finfo_matches_torch(torch, name):
    ours, theirs = gradnb.finfo(getattr(gradnb, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)


def test_finfo_defaults_to_the_default_dtype():
    assert gradnb.finfo().dtype == "float32"


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(torch, name):
    ours, theirs = gradnb.iinfo(getattr(gradnb, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.min, ours.max, ours.dtype) == (theirs.bits, theirs.min, theirs.max,
                                                           theirs.dtype)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize(("call", "message"), [
    (lambda lib: lib.finfo(lib.int64), "finfo() requires a floating point input type"),
    (lambda lib: lib.iinfo(lib.float32), "iinfo() requires an integer input type"),
    (lambda lib: lib.iinfo(lib.bool), "bool is not supported by"),
    (lambda lib: lib.finfo("float32"), "finfo(): argument 'type' (position 1) must be"),
])
def test_info_errors_as_torch(torch, call, message):
    for lib in (torch, gradnb):
        with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
            call(lib)


def test_num_threads_is_a_real_switch():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = gradnb.get_num_threads()
    try:
        gradnb.set_num_threads(1)
        assert gradnb.get_num_threads() == 1
        blas = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
        assert all(p["num_threads"] == 1 for p in blas)
    finally:
        gradnb.set_num_threads(before)


@pytest.mark.parametrize(("value", "message"), [
    (0, "set_num_threads expects a positive integer"),
    (2.0, "set_num_threads expects an int, but got float"),
])
def test_num_threads_errors_as_torch(torch, value, message):
    for lib in (torch, gradnb):
        with pytest.raises(RuntimeError, match=message):
            lib.set_num_threads(value)


def test_matmul_precision(torch):
    gradnb.set_float32_matmul_precision("high")
    assert gradnb.get_float32_matmul_precision() == "high"
    for lib in (torch, gradnb):
        with pytest.warns(UserWarning, match="bad is not one of 'highest', 'high', or 'medium'"):
            lib.set_float32_matmul_precision("bad")
    assert gradnb.get_float32_matmul_precision() == "high"


def test_deterministic_switch(torch):
    assert not gradnb.are_deterministic_algorithms_enabled()
    gradnb.use_deterministic_algorithms(True, warn_only=True)
    assert gradnb.are_deterministic_algorithms_enabled()
    assert gradnb.is_deterministic_algorithms_warn_only_enabled()
    for lib in (torch, gradnb):
        with pytest.raises(TypeError, match="argument 'mode' \\(position 1\\) must be bool, not str"):
            lib.use_deterministic_algorithms("yes")
    assert gradnb.are_deterministic_algorithms_enabled()


def test_compile_returns_the_model_and_checks_arguments(torch):
    model = gradnb.nn.Linear(2, 1)
    assert gradnb.compile(model) is model
    assert gradnb.compile(mode="max-autotune")(model) is model

    def f(x):
        return x * 2

    assert gradnb.compile(f, backend="eager", fullgraph=True, dynamic=False) is f
    for lib in (torch, gradnb):
        with pytest.raises(RuntimeError, match="Unrecognized mode=bad"):
            lib.compile(f, mode="bad")
        with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
            lib.compile(f, mode="default", options={})
        with pytest.raises(AssertionError, match="A callable function is expected"), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.compile(1)
