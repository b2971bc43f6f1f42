"""Run PyTorch's module database (``common_modules.module_db``) against ``gradnb.nn``.

For each sample of a ModuleInfo whose class gradnb has (``torch.nn.X`` -> ``gradnb.nn.X``) the
oracle builds both modules from the same constructor arguments in float64 on the CPU, copies
torch's parameters and buffers into gradnb's, and compares the repr, the state_dict keys, the
forward outputs, the gradients of every input and parameter, and the buffers after the
forward, in training and in eval mode.

Used by ``tests/nn/test_module_db.py`` (the suite) and ``tests/nn/module_db_report.py`` (the
coverage figures). Imports torch only when called.
"""

from __future__ import annotations

import sys
import types
import unittest
import warnings

import numpy as np

import gradnb

# Samples compared per module and mode, spread evenly over the module's list (which groups its
# variants: reductions, no batch dim, ...); the cap keeps the whole suite within a few minutes
# on two cores (CrossEntropyLoss alone has 105 samples, LinearCrossEntropyLoss 857).
MAX_SAMPLES = 12

# Classes whose torch samples draw random numbers inside forward (dropout in training): their
# outputs cannot match value for value, so they are compared in eval mode only.
EVAL_ONLY: frozenset[str] = frozenset()


def load_module_db():
    """``module_db``, importable without the ``expecttest`` package that torch's test helpers
    import (only its ``TestCase`` name is used at import time; the stand-in is removed again
    once torch has imported it)."""
    shimmed = False
    try:
        import expecttest  # noqa: F401
    except ImportError:
        shim = types.ModuleType("expecttest")
        shim.TestCase = unittest.TestCase
        sys.modules["expecttest"] = shim
        shimmed = True
    try:
        from torch.testing._internal.common_modules import module_db
    finally:
        if shimmed:
            # Only torch's import needed it: other suites still see that expecttest is absent.
            del sys.modules["expecttest"]
    return module_db


def gradnb_class(module_info):
    """The gradnb class of the same name, or None where gradnb lacks it."""
    return getattr(gradnb.nn, module_info.module_cls.__name__, None)


def to_gradnb(value, memo: dict | None = None):
    """A torch value (tensor, dtype, nested containers) as gradnb's equivalent; a tensor that
    appears twice becomes one gradnb tensor (``memo``), so its gradients accumulate alike."""
    import torch

    memo = {} if memo is None else memo
    if isinstance(value, torch.Tensor):
        if id(value) not in memo:
            out = gradnb.tensor(value.detach().numpy().copy())
            if value.requires_grad:
                out.requires_grad_(True)
            memo[id(value)] = out
        return memo[id(value)]
    if isinstance(value, torch.dtype):
        return getattr(gradnb, str(value).removeprefix("torch."))
    if isinstance(value, torch.nn.utils.rnn.PackedSequence):
        return gradnb.nn.utils.rnn.PackedSequence(*(to_gradnb(v, memo) for v in value))
    if isinstance(value, tuple):
        return tuple(to_gradnb(v, memo) for v in value)
    if isinstance(value, list):
        return [to_gradnb(v, memo) for v in value]
    if isinstance(value, dict):
        return {k: to_gradnb(v, memo) for k, v in value.items()}
    if isinstance(value, torch.nn.TransformerEncoderLayer):
        return _encoder_layer(value)
    if isinstance(value, torch.nn.Module):
        raise TypeError(f"module arguments ({type(value).__name__}) are not converted")
    return value


def _encoder_layer(layer):
    """The gradnb layer with the options of a torch TransformerEncoderLayer (the suite copies
    the parameters afterwards)."""
    attn = layer.self_attn
    # A function activation (F.relu, F.gelu) goes by its name; a module one is refused.
    act = getattr(layer.activation, "__name__", None) or to_gradnb(layer.activation)
    return gradnb.nn.TransformerEncoderLayer(
        attn.embed_dim, attn.num_heads, layer.linear1.out_features, layer.dropout.p, act,
        layer.norm1.eps, attn.batch_first, layer.norm_first, layer.linear1.bias is not None)


def _flat(value) -> list:
    """Tensors of a nested output, in order."""
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flat(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flat(v)]
    return [value] if value is not None else []


def _assert_close(name: str, actual, expected, rtol=1e-7, atol=1e-7) -> None:
    exp = expected.detach().numpy() if hasattr(expected, "detach") else np.asarray(expected)
    if actual is None:
        raise AssertionError(f"{name}: gradnb gives None, torch {exp.shape}")
    act = actual.detach().numpy() if hasattr(actual, "detach") else np.asarray(actual)
    if tuple(act.shape) != tuple(exp.shape):
        raise AssertionError(f"{name}: shape {tuple(act.shape)} != torch {tuple(exp.shape)}")
    if act.dtype != exp.dtype and not (act.dtype.kind == exp.dtype.kind == "b"):
        raise AssertionError(f"{name}: dtype {act.dtype} != torch {exp.dtype}")
    np.testing.assert_allclose(act, exp, rtol=rtol, atol=atol, err_msg=name)


def _construct(module_info, sample, training: bool):
    import torch

    cls = gradnb_class(module_info)
    args, kwargs = sample.constructor_input.args, sample.constructor_input.kwargs
    torch.manual_seed(0)
    tm = module_info.module_cls(*args, **kwargs).to(torch.float64)
    gm = cls(*to_gradnb(args), **to_gradnb(kwargs)).to(dtype=gradnb.float64)
    tm.train(training)
    gm.train(training)
    return tm, gm


def _copy_state(tm, gm) -> None:
    state = {k: to_gradnb(v) for k, v in tm.state_dict().items()}
    gm.load_state_dict(state)


def _inputs(sample):
    fargs, fkwargs = sample.forward_input.args, sample.forward_input.kwargs
    memo: dict = {}
    return fargs, fkwargs, to_gradnb(fargs, memo), to_gradnb(fkwargs, memo)


def check_sample(module_info, sample, training: bool) -> None:
    """Compare one sample in one mode; raises AssertionError (or the error gradnb raised)."""
    import torch

    tm, gm = _construct(module_info, sample, training)
    if module_info.is_lazy:
        # Parameters take their shapes on the first call; run it on both, then copy.
        targs, tkwargs, gargs, gkwargs = _inputs(sample)
        with torch.no_grad():
            tm(*targs, **tkwargs)
        with gradnb.no_grad():
            gm(*gargs, **gkwargs)
    assert repr(gm) == repr(tm), f"repr {gm!r} != torch {tm!r}"
    assert list(gm.state_dict()) == list(tm.state_dict()), \
        f"state_dict keys {list(gm.state_dict())} != torch {list(tm.state_dict())}"
    _copy_state(tm, gm)
    targs, tkwargs, gargs, gkwargs = _inputs(sample)

    t_out = tm(*targs, **tkwargs)
    g_out = gm(*gargs, **gkwargs)
    t_flat, g_flat = _flat(t_out), _flat(g_out)
    assert len(g_flat) == len(t_flat), f"{len(g_flat)} outputs, torch {len(t_flat)}"
    for i, (g, t) in enumerate(zip(g_flat, t_flat)):
        _assert_close(f"output {i}", g, t)

    for (name, t_buf), (g_name, g_buf) in zip(tm.named_buffers(), gm.named_buffers()):
        assert name == g_name, f"buffer {g_name} != torch {name}"
        _assert_close(f"buffer {name} after forward", g_buf, t_buf)

    _check_grads(tm, gm, targs, tkwargs, gargs, gkwargs, t_flat, g_flat)


def _check_grads(tm, gm, targs, tkwargs, gargs, gkwargs, t_flat, g_flat) -> None:
    import torch

    t_leaves = _unique([t for t in _flat([targs, tkwargs]) if isinstance(t, torch.Tensor)
                        and t.requires_grad]) + list(tm.parameters())
    g_leaves = _unique([t for t in _flat([gargs, gkwargs]) if isinstance(t, gradnb.Tensor)
                        and t.requires_grad]) + list(gm.parameters())
    assert len(g_leaves) == len(t_leaves), "different numbers of inputs and parameters"
    outs = [(t, g) for t, g in zip(t_flat, g_flat)
            if t.requires_grad and t.dtype.is_floating_point]
    if not outs or not t_leaves:
        return
    rng = np.random.default_rng(0)
    seeds = [rng.standard_normal(tuple(t.shape)) for t, _ in outs]
    t_grads = torch.autograd.grad([t for t, _ in outs],
                                  t_leaves, [torch.from_numpy(s) for s in seeds],
                                  allow_unused=True)
    g_needs = [g for _, g in outs]
    if not all(g.requires_grad for g in g_needs):
        raise AssertionError("a gradnb output does not require grad where torch's does")
    g_grads = gradnb.autograd.grad(g_needs, g_leaves,
                                   [gradnb.tensor(s) for s in seeds], allow_unused=True)
    for i, (g, t) in enumerate(zip(g_grads, t_grads)):
        if t is None:
            continue
        _assert_close(f"gradient of leaf {i}", g, t, rtol=1e-6, atol=1e-6)


def _unique(tensors: list) -> list:
    seen: set = set()
    return [t for t in tensors if not (id(t) in seen or seen.add(id(t)))]


def samples(module_info, training: bool) -> list:
    """Up to ``MAX_SAMPLES`` CPU float64 samples of ``module_info``, evenly spaced."""
    import torch

    torch.manual_seed(0)
    found = module_info.module_inputs_func(module_info, device="cpu", dtype=torch.float64,
                                           requires_grad=True, training=training)
    if len(found) <= MAX_SAMPLES:
        return found
    step = len(found) / MAX_SAMPLES
    return [found[int(i * step)] for i in range(MAX_SAMPLES)]


def check_module(module_info, training: bool) -> list[str]:
    """Failure messages of ``module_info``'s samples in one mode (empty when all match)."""
    failures = []
    for sample in samples(module_info, training):
        try:
            with warnings.catch_warnings():
                # Both libraries warn alike (deprecations, implicit dims); only values count here.
                warnings.simplefilter("ignore")
                check_sample(module_info, sample, training)
        except Exception as exc:  # noqa: BLE001 - each failure is reported with its sample
            text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
            failures.append(f"{sample.desc or '<default>'}: {type(exc).__name__}: {text[:300]}")
    return failures
