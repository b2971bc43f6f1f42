"""Calls third-party code makes where gradnb once differed from PyTorch: each gives torch's
result, or raises torch's error type with torch's first sentence (``gradnb.`` for ``torch.``)
and leaves its inputs unchanged."""

from __future__ import annotations

import warnings

import pytest

import gradnb

torch = pytest.importorskip("torch")


def _outcome(lib, call):
    """``("ok", value)`` or ``(error type name, first sentence)`` of ``call(lib)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = call(lib)
        except Exception as e:  # noqa: BLE001 - the error is the outcome compared
            return type(e).__name__, str(e).split("\n")[0].replace("torch.", "gradnb.")
    if isinstance(value, (lib.Tensor,)):
        return "ok", (str(value.dtype).split(".")[-1], value.tolist(), value.requires_grad)
    return "ok", str(value).replace("torch", "gradnb")


def _grad(t, f, data=(1.5, -2.5)):
    """The gradient of ``f(t, x).sum()`` for a float64 leaf ``x`` (or torch's error)."""
    x = t.tensor(data, dtype=t.float64, requires_grad=True)
    (grad,) = t.autograd.grad(f(t, x).sum(), x)
    return grad


CALLS = {
    # ops PyTorch has no derivative for: a NotImplemented node that raises in backward
    "x // 2.0: its node": lambda t: (t.ones(2, requires_grad=True) // 2.0).grad_fn.name(),
    "x // 2.0: backward raises": lambda t: _grad(t, lambda t, x: x // 2.0),
    "floor_divide(x, y): backward raises": lambda t: _grad(t, lambda t, x: t.floor_divide(x, x)),
    "2 // x: backward raises": lambda t: _grad(t, lambda t, x: 2 // x),
    "x.floor_divide_(y): backward raises":
        lambda t: _grad(t, lambda t, x: x.clone().floor_divide_(t.tensor([2.0, 3.0]))),
    "x // int64 0-d: the node's edges":
        lambda t: len((t.ones(2, requires_grad=True) // t.tensor(2)).grad_fn.next_functions),
    "2 % x: backward raises": lambda t: _grad(t, lambda t, x: 2 % x),
    "remainder(2, x): backward raises": lambda t: _grad(t, lambda t, x: t.remainder(2, x)),
    "x % y: backward": lambda t: _grad(t, lambda t, x: x % (x + 4)),
    "div(x, 2, rounding_mode='floor'): zero gradient":
        lambda t: _grad(t, lambda t, x: t.div(x, 2, rounding_mode="floor")),
    "x ** bool tensor: backward raises":
        lambda t: _grad(t, lambda t, x: x ** t.tensor([True, False])),
    "x ** True: backward": lambda t: _grad(t, lambda t, x: x ** True),
    "0 ** x: backward": lambda t: _grad(t, lambda t, x: 0 ** x, (1.0, -1.0, 0.0)),
    # dtypes the kernels lack
    "relu of bool": lambda t: t.relu(t.tensor([True, False])),
    "relu_ of bool": lambda t: t.tensor([True, False]).relu_(),
    "hardtanh of bool": lambda t: t.nn.functional.hardtanh(t.tensor([True, False])),
    "hardtanh of uint8 with a negative limit":
        lambda t: t.nn.functional.hardtanh(t.tensor([1, 2], dtype=t.uint8)),
    "var_mean of int64": lambda t: t.var_mean(t.tensor([1, 2])),
    "std_mean of bool": lambda t: t.std_mean(t.tensor([True, False]), 0),
    "var of int64": lambda t: t.var(t.tensor([1, 2])),
    "nanmean of int64": lambda t: t.nanmean(t.tensor([1, 2])),
    "median of empty int64": lambda t: t.median(t.zeros(0, dtype=t.int64)),
    "nanmedian of empty bool": lambda t: t.nanmedian(t.zeros(0, dtype=t.bool)),
    "heaviside of int64": lambda t: t.heaviside(t.tensor([-1, 0, 2]), t.tensor([5])),
    "heaviside of NaN": lambda t: t.heaviside(t.tensor([float("nan"), 0.0]), t.tensor([0.5])),
    "mvlgamma below (p - 1) / 2": lambda t: t.mvlgamma(t.tensor([-0.5, 0.3]), 2),
    "softmax of empty int64": lambda t: t.softmax(t.zeros(0, 2, dtype=t.int64), 0),
    "bool tensor ** False": lambda t: t.tensor([False, True]) ** False,
    "bool tensor.pow_(True)": lambda t: t.tensor([False, True]).pow_(True),
    "add(float32, 0-d float32, alpha=True)":
        lambda t: t.add(t.ones(2), t.tensor(2.0), alpha=True),
    "copysign(uint8, -1)": lambda t: t.copysign(t.tensor([3, 2], dtype=t.uint8), -1),
    "abs_ of bfloat16": lambda t: t.tensor([-1.5, 2.0]).to(t.bfloat16).abs_(),
    "logit(bfloat16, eps) keeps bfloat16":
        lambda t: t.logit(t.tensor([0.3]).to(t.bfloat16), 0.1).dtype,
    "isreal of complex": lambda t: t.isreal(t.tensor([1 + 1j, 2, 3j])),
    "Tensor.isreal of int64": lambda t: t.tensor([1, 2]).isreal(),
    "log_softmax of int64 (last dim)": lambda t: t.log_softmax(t.tensor([1, 2]), 0),
    "log_softmax of int64 (not last dim)": lambda t: t.log_softmax(t.ones(2, 3, dtype=t.int64), 0),
    "softmax of bool": lambda t: t.softmax(t.tensor([True]), 0),
    "softmax with a bad dim on 0-d": lambda t: t.softmax(t.tensor(1.0), 3),
    "clamp of int64 with a float min": lambda t: t.clamp(t.tensor([1, 2]), min=0.5),
    "clamp of int64 with an int max": lambda t: t.clamp(t.tensor([1, 5]), max=3),
    "stack of 0-d float32 and float64": lambda t: t.stack([t.tensor(1.0),
                                                           t.tensor(2.0, dtype=t.float64)]),
    "cat of int8 and int64": lambda t: t.cat([t.tensor([1], dtype=t.int8), t.tensor([2])]),
    "in-place add on a same-shape expand": lambda t: t.ones(1, 3).expand(1, 3).add_(1),
    "in-place add on a repeating expand": lambda t: t.ones(1, 3).expand(2, 3).add_(1),
    "expand with too few sizes (int64)": lambda t: t.ones(2, 3, dtype=t.int64).expand(3),
    "copy_ of a grad-requiring float into int64":
        lambda t: t.zeros(2, dtype=t.int64).copy_(t.ones(2, requires_grad=True)),
    "movedim(-1, -1) of a 0-d tensor": lambda t: t.movedim(t.tensor(1.0), -1, -1),
    "movedim out of range on 0-d": lambda t: t.movedim(t.tensor(1.0), 1, 0),
    "int tensor ** negative int tensor":
        lambda t: t.tensor([2, 3, 1, -1, -1, 0]) ** t.tensor([-1, -2, -3, -3, -2, 1]),
    "int tensor ** negative int": lambda t: t.tensor([2, 3]) ** -1,
    "int ** negative int tensor": lambda t: 2 ** t.tensor([-1, 3]),
    "mT of a 1-D tensor": lambda t: t.ones(3).mT,
    "mT of a 0-d tensor": lambda t: t.tensor(2.0).mT,
    "index_select on an empty dim": lambda t: t.index_select(t.ones(0, 3), 0, t.tensor([0])),
    "index_select of nothing on an empty dim":
        lambda t: t.index_select(t.ones(0, 3), 0, t.tensor([], dtype=t.int64)),
    "load_state_dict with a list value": lambda t: t.nn.Linear(2, 2).load_state_dict(
        {"weight": [[1.0, 2.0], [3.0, 4.0]], "bias": t.zeros(2)}),
    "nn.Linear with the wrong in_features": lambda t: t.nn.Linear(3, 2)(t.ones(4, 5)),
    "nn.Linear with the wrong in_features, batched": lambda t: t.nn.Linear(3, 2)(t.ones(2, 4, 5)),
    "float32 @ float64": lambda t: t.ones(2, 2) @ t.ones(2, 2, dtype=t.float64),
    "int64 @ float32 vectors": lambda t: t.ones(2, dtype=t.int64) @ t.ones(2),
    "float32 matrix @ float64 vector": lambda t: t.ones(2, 2) @ t.ones(2, dtype=t.float64),
    "batched float32 @ float64": lambda t: t.ones(3, 2, 2) @ t.ones(3, 2, 2, dtype=t.float64),
    "bmm with batch 4 and 1": lambda t: t.bmm(t.ones(4, 2, 3), t.ones(1, 3, 2)),
    "bfloat16 @ bfloat16 stays bfloat16":
        lambda t: (t.ones(2, 3).bfloat16() @ t.ones(3, 2).bfloat16()).dtype,
    "a leaf's AccumulateGrad name":
        lambda t: (t.ones(2, requires_grad=True) * 2).grad_fn.next_functions[0][0].name(),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_call_matches_torch(name):
    call = CALLS[name]
    assert _outcome(gradnb, call) == _outcome(torch, call)


@pytest.mark.parametrize("call", [
    lambda t: t.tensor([-1.5, 2.0]).pow_(t.tensor([0.5, 0.5])),  # NaN from a negative base
    lambda t: t.tensor([float("nan"), float("inf")]).to(t.int64),
    lambda t: t.tensor([-1.5]).pow_(0.5),
], ids=["pow_ of a negative base", "NaN and inf to int64", "pow_ by a number"])
def test_no_numpy_warning_where_torch_is_silent(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call(torch)
        call(gradnb)


def test_func_jvp_output_keeps_its_graph_to_the_parameters():
    for lib in (gradnb, torch):
        lib.manual_seed(0)
    g_lin, t_lin = gradnb.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    g_out, g_tangent = gradnb.func.jvp(g_lin, (gradnb.ones(4, 3),), (gradnb.ones(4, 3),))
    t_out, t_tangent = torch.func.jvp(t_lin, (torch.ones(4, 3),), (torch.ones(4, 3),))
    assert g_out.grad_fn.name() == t_out.grad_fn.name() == "AliasBackward0"
    assert g_out.requires_grad and g_tangent.requires_grad == t_tangent.requires_grad
    g_out.sum().backward()
    assert g_lin.weight.grad is not None


def _inference_tensor(lib):
    with lib.inference_mode():
        return lib.ones(2)


INFERENCE_CALLS = {
    "its _version": lambda t: _inference_tensor(t)._version,
    "requires_grad_() outside inference mode": lambda t: _inference_tensor(t).requires_grad_(),
    "requires_grad = True outside inference mode":
        lambda t: setattr(_inference_tensor(t), "requires_grad", True),
    "requires_grad_(False)": lambda t: _inference_tensor(t).requires_grad_(False),
    "an in-place write outside inference mode": lambda t: _inference_tensor(t).add_(1),
    "a normal tensor's _version after two writes": lambda t: t.ones(2).add_(1).mul_(2)._version,
}


@pytest.mark.parametrize("name", list(INFERENCE_CALLS))
def test_inference_tensor_call_matches_torch(name):
    call = INFERENCE_CALLS[name]
    assert _outcome(gradnb, call) == _outcome(torch, call)
