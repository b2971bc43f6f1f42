"""``gradnb.backends``, ``gradnb.jit``, ``gradnb.accelerator`` and ``gradnb.cuda``'s seeding:
what scripts touch on any machine, answered as a CPU-only PyTorch answers."""

from __future__ import annotations

import pytest

import gradnb
from gradnb import cuda


@pytest.mark.torch
@pytest.mark.skipif(cuda.is_available(), reason="compares with a CPU-only PyTorch")
def test_backend_flags_read_as_a_cpu_only_torch(torch):
    ours, theirs = gradnb.backends, torch.backends
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(ours.cudnn, name) == getattr(theirs.cudnn, name), name
    assert ours.cudnn.is_available() == theirs.cudnn.is_available()
    assert ours.cudnn.version() == theirs.cudnn.version()
    assert ours.mps.is_available() == theirs.mps.is_available()
    assert ours.mps.is_built() == theirs.mps.is_built()
    assert ours.cuda.is_built() == theirs.cuda.is_built()
    for name in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction"):
        assert getattr(ours.cuda.matmul, name) == getattr(theirs.cuda.matmul, name), name
    for name in ("flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled"):
        assert getattr(ours.cuda, name)() == getattr(theirs.cuda, name)(), name


def test_flags_set_by_scripts_are_kept_and_flags_restores_them():
    cudnn = gradnb.backends.cudnn
    cudnn.benchmark = True
    try:
        assert gradnb.backends.cudnn.benchmark is True
        with cudnn.flags(enabled=False, deterministic=True):
            assert cudnn.enabled is False and cudnn.deterministic is True
        assert cudnn.enabled is True and cudnn.deterministic is False and cudnn.benchmark
    finally:
        cudnn.benchmark = False
    matmul = gradnb.backends.cuda.matmul
    matmul.allow_tf32 = True
    assert gradnb.backends.cuda.matmul.allow_tf32 is True
    matmul.allow_tf32 = False


def test_jit_gives_back_what_it_was_given():
    model = gradnb.nn.Linear(3, 2)
    x = gradnb.randn(4, 3)
    scripted = gradnb.jit.script(model)
    traced = gradnb.jit.trace(model, x)
    assert scripted is model and traced is model
    assert gradnb.equal(traced(x), model(x))

    @gradnb.jit.script
    def double(t):
        return t * 2

    @gradnb.jit.ignore
    def kept(t):
        return t

    assert double(gradnb.ones(1)).item() == 2.0 and kept(3) == 3
    assert gradnb.jit.ignore(drop=True)(kept) is kept
    assert gradnb.jit.unused(kept) is kept and gradnb.jit.export(kept) is kept
    assert gradnb.jit.annotate(list, []) == []
    assert not gradnb.jit.is_scripting() and not gradnb.jit.is_tracing()


@pytest.mark.torch
@pytest.mark.skipif(cuda.is_available(), reason="compares with a CPU-only PyTorch")
def test_accelerator_answers_as_a_cpu_only_torch(torch):
    assert gradnb.accelerator.is_available() == torch.accelerator.is_available()
    assert gradnb.accelerator.current_accelerator() == torch.accelerator.current_accelerator()
    assert gradnb.accelerator.device_count() == torch.accelerator.device_count()
    for name in ("current_device_index", "synchronize"):
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch.accelerator, name)()
        with pytest.raises(RuntimeError) as ours:
            getattr(gradnb.accelerator, name)()
        assert str(ours.value) == str(theirs.value)


def test_accelerator_names_the_device_scripts_move_to():
    device = gradnb.accelerator.current_accelerator() or gradnb.device("cpu")
    assert gradnb.ones(1, device=device).device.type == device.type


@pytest.mark.torch
def test_cuda_seeding_accepts_what_torch_accepts_and_leaves_the_cpu_stream(torch):
    gradnb.manual_seed(3)
    expected = gradnb.rand(3)
    gradnb.manual_seed(3)
    gradnb.cuda.manual_seed(7)
    gradnb.cuda.manual_seed_all("7")
    gradnb.cuda.seed()
    gradnb.cuda.seed_all()
    assert gradnb.equal(gradnb.rand(3), expected)
    with pytest.raises(ValueError) as theirs:
        torch.cuda.manual_seed("x")
    with pytest.raises(ValueError) as ours:
        gradnb.cuda.manual_seed("x")
    assert str(ours.value) == str(theirs.value)


@pytest.mark.torch
def test_tensor_device_flags_match_torch(torch):
    ours, theirs = gradnb.ones(2), torch.ones(2)
    for name in ("is_cpu", "is_cuda", "is_xpu", "is_mps", "is_meta", "is_ipu", "is_maia",
                 "is_mtia", "is_xla", "is_vulkan", "is_mkldnn", "is_quantized", "is_nested",
                 "is_sparse_csr"):
        assert getattr(ours, name) == getattr(theirs, name), name
