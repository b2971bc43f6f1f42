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


def _written(lib, write):
    """``arange(4.0)`` after ``write`` (an in-place op) ran on it."""
    x = lib.arange(4.0)
    write(x)
    return x


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
    # clamp: PyTorch's dtype rules, conversions and refusals
    "clamp_ of uint8 with a float (the C++ type in the cast error)":
        lambda t: t.tensor([1, 3], dtype=t.uint8).clamp_(0.0),
    "clamp_max_ of int16 with a float": lambda t: t.tensor([1, 3], dtype=t.int16).clamp_max_(0.5),
    "clamp_ of bool with an int": lambda t: t.tensor([True]).clamp_(1),
    "clamp_ of int64 with a float tensor (ScalarType names)":
        lambda t: t.tensor([1, 2]).clamp_(t.tensor([1.5])),
    "clamp of a complex tensor": lambda t: t.tensor([1 + 1j, 3j]).clamp(2),
    "clamp_ of a complex tensor with a complex bound":
        lambda t: t.tensor([1 + 1j, 3j]).clamp_(2 + 0j),
    "clamp_ of a complex tensor with a tensor bound":
        lambda t: t.tensor([1 + 1j]).clamp_(t.tensor(1.0)),
    "clamp_min_ of a complex tensor with a tensor bound (the kernel refuses)":
        lambda t: t.tensor([1 + 1j]).clamp_min_(t.tensor(1.0)),
    "clamp_min_ of a float tensor with a complex number":
        lambda t: t.tensor([1.0, 2.0]).clamp_min_(1j),
    "clamp of a float tensor with a complex number": lambda t: t.tensor([1.0, 2.0]).clamp(1j),
    "clamp of a float tensor with a real complex number":
        lambda t: t.tensor([1.0, 3.0]).clamp(2 + 0j),
    "clamp_ of uint8 with a complex number": lambda t: t.tensor([1], dtype=t.uint8).clamp_(1j),
    "clamp of float with a complex tensor (the kernel refuses)":
        lambda t: t.tensor([1.0]).clamp(t.tensor([1j])),
    "clamp_min_ of uint8 with an int64 0-d -3 wraps to 253":
        lambda t: t.tensor([3, 0], dtype=t.uint8).clamp_min_(t.tensor(-3)),
    "clamp of uint8 with -3 wraps to 253": lambda t: t.tensor([3, 200], dtype=t.uint8).clamp(-3),
    "clamp of uint8 with -300 overflows": lambda t: t.tensor([3], dtype=t.uint8).clamp(-300),
    "clamp of int8 with an int8-overflowing 0-d tensor wraps":
        lambda t: t.clamp(t.tensor([3, 0], dtype=t.int8), t.tensor(-300)),
    "clamp of float16 with 1e6 overflows": lambda t: t.ones(2, dtype=t.float16).clamp(1e6),
    "clamp of float32 with 1e300 overflows": lambda t: t.ones(2).clamp(max=1e300),
    "clamp of int64 with a 0-d int8 tensor keeps int64":
        lambda t: t.tensor([1, 5]).clamp(t.tensor(2, dtype=t.int8)),
    "clamp of int8 with 0-d float64 and float16 bounds":
        lambda t: t.clamp(t.tensor([1, 2], dtype=t.int8), t.tensor(1.5, dtype=t.float64),
                          t.tensor(5, dtype=t.float16)),
    "clamp of bool with bool numbers": lambda t: t.tensor([True, False]).clamp(True, True),
    "clamp of bool with bool tensors": lambda t: t.tensor([True]).clamp(t.tensor(True),
                                                                        t.tensor(True)),
    "clamp of bool with a float": lambda t: t.tensor([True, False]).clamp(0.5),
    "clamp with a NaN bound": lambda t: t.tensor([3.0, 0.0]).clamp(0, float("nan")).isnan(),
    "clamp with min > max": lambda t: t.tensor([3.0, 0.0, 1.5]).clamp(2, 1),
    "clamp with a number and a 0-d tensor": lambda t: t.clamp(t.tensor([1, 2]), 0.5, t.tensor(2)),
    "clamp with a number and a 1-d tensor": lambda t: t.clamp(t.tensor([1, 2]), 0.5, t.tensor([2])),
    "Tensor.clamp with a number and a 1-d tensor":
        lambda t: t.tensor([1, 2]).clamp(0.5, t.tensor([2])),
    "clamp_min with None": lambda t: t.clamp_min(t.tensor([1, 2]), None),
    "clamp with no bound": lambda t: t.tensor([1.0]).clamp_(),
    "clamp_ with a bound that grows the tensor":
        lambda t: t.tensor([1, 2, 3]).clamp_(t.tensor([[1.0, 2, 3]])),
    # copy_
    "copy_ from a source larger than the tensor": lambda t: t.zeros(3).copy_(t.ones(2, 3)),
    "copy_ from a source that broadcasts past the tensor":
        lambda t: t.zeros(3, 1).copy_(t.ones(1, 2)),
    "copy_ of complex into bool": lambda t: t.zeros(2, dtype=t.bool).copy_(t.tensor([0.5j, 0])),
    "copy_ of a list": lambda t: t.zeros(3).copy_([1, 2, 3]),
    "complex to bool": lambda t: t.tensor([0.5j, 0]).bool(),
    # fill_ and masked_fill_ convert numbers as PyTorch's Scalar does
    "fill_ of uint8 with -3": lambda t: t.zeros(2, dtype=t.uint8).fill_(-3),
    "fill_ of uint8 with 300": lambda t: t.zeros(2, dtype=t.uint8).fill_(300),
    "fill_ of int64 with NaN": lambda t: t.zeros(2, dtype=t.int64).fill_(float("nan")),
    "fill_ of float32 with 1e300": lambda t: t.zeros(2).fill_(1e300),
    "fill_ of float32 with a complex number": lambda t: t.zeros(2).fill_(2j),
    "masked_fill_ of uint8 with -3":
        lambda t: t.zeros(2, dtype=t.uint8).masked_fill_(t.tensor([True, False]), -3),
    "masked_fill_ of float with a real complex 0-d tensor":
        lambda t: t.zeros(2).masked_fill_(t.tensor([True, False]), t.tensor(2 + 0j)),
    # other in-place forms: the cast is checked before the kernel, tensor-only arguments
    "abs_ of a complex tensor": lambda t: t.tensor([1j, 2]).abs_(),
    "fmod_ of int64 with a complex tensor": lambda t: t.tensor([3, 4]).fmod_(t.tensor([1j, 2])),
    "bitwise_and_ of int64 with a float": lambda t: t.tensor([3, 4]).bitwise_and_(0.5),
    "atan2_ of int64 with an int64 tensor": lambda t: t.tensor([3, 4]).atan2_(t.tensor([1, 2])),
    "atan2_ with a number": lambda t: t.tensor([3.0, 4.0]).atan2_(2.0),
    "gcd_ with a number": lambda t: t.tensor([3, 4]).gcd_(2),
    "heaviside of int64 keeps int64": lambda t: t.heaviside(t.tensor([-1, 0, 2]), t.tensor([5])),
    # memory shared between what an in-place op reads and writes
    "x[1:].add_(x[:-1])": lambda t: _written(t, lambda x: x[1:].add_(x[:-1])),
    "an in-place op reading an overlapping slice": lambda t: _written(t, lambda x: x[:2].mul_(
        x[1:3])),
    "an in-place op reading a disjoint slice": lambda t: _written(t, lambda x: x[:2].mul_(x[2:])),
    "an in-place op reading itself": lambda t: _written(t, lambda x: x.add_(x)),
    "t[:2] = t[1:3]": lambda t: _written(t, lambda x: x.__setitem__(slice(0, 2), x[1:3])),
    "t[:2] = t[2:]": lambda t: _written(t, lambda x: x.__setitem__(slice(0, 2), x[2:])),
    "t[[0, 1]] = t[2:]": lambda t: _written(t, lambda x: x.__setitem__([0, 1], x[2:])),
    "t[mask] = t[0]": lambda t: _written(t, lambda x: x.__setitem__(x > 2, x[0])),
    "index_put_ of a slice of itself": lambda t: _written(
        t, lambda x: x.index_put_((t.tensor([0, 1]),), x[2:])),
    # reductions to an integer dtype, masked ops
    "sum(dtype=int64) of a grad-requiring tensor":
        lambda t: t.tensor([1.5, 2.5], requires_grad=True).sum(dtype=t.int64),
    "cumsum(dtype=int32) of a grad-requiring tensor":
        lambda t: t.tensor([1.5, 2.5], requires_grad=True).cumsum(0, dtype=t.int32),
    "prod(dtype=bool) of a grad-requiring tensor":
        lambda t: t.prod(t.tensor([1.5, 2.5], requires_grad=True), 0, dtype=t.bool),
    "cumsum to bool": lambda t: t.cumsum(t.tensor([True, False]), 0, dtype=t.bool),
    "masked.sum(dtype=int64) of a grad-requiring tensor":
        lambda t: t.masked.sum(t.tensor([1.5, 2.5], requires_grad=True), 0, dtype=t.int64),
    "masked.var(dtype=int64) of a grad-requiring tensor":
        lambda t: t.masked.var(t.tensor([1.5, 2.5], requires_grad=True), 0, dtype=t.int64),
    "masked.prod(dtype=int64) of a grad-requiring tensor":
        lambda t: t.masked.prod(t.tensor([1.5, 2.5], requires_grad=True), 0, dtype=t.int64),
    "masked.softmax of int64": lambda t: t.masked.softmax(t.tensor([1, 2]), 0),
    "masked.log_softmax of int64 with a mask":
        lambda t: t.masked.log_softmax(t.tensor([1, 2]), 0, mask=t.tensor([True, False])),
    "masked.softmin of bool": lambda t: t.masked.softmin(t.tensor([True, False]), 0),
    "softmax with dtype=int64": lambda t: t.softmax(t.tensor([1.5, 2.5]), 0, dtype=t.int64),
    "masked.amax of bool with a mask":
        lambda t: t.masked.amax(t.tensor([True, False]), 0, mask=t.tensor([False, False])),
    "masked.amax of complex with a mask":
        lambda t: t.masked.amax(t.tensor([1j, 2]), 0, mask=t.tensor([True, False])),
    "masked.sum of complex with a mask":
        lambda t: t.masked.sum(t.tensor([1j, 2]), 0, mask=t.tensor([True, False])),
    "masked.argmax": lambda t: t.masked.argmax(t.tensor([1.5, 2.5], requires_grad=True), 0),
    "masked.argmin with a mask and keepdim": lambda t: t.masked.argmin(
        t.tensor([[1, 2], [0, 5]]), 1, keepdim=True, mask=t.tensor([[False, True], [True, True]])),
    # writes through a mask into a 0-d tensor (NumPy cannot unravel into no dimensions)
    "0-d t[t == v] = nan": lambda t: _written_0d(
        t, lambda a: a.__setitem__(a == 0.5, t.nan)).isnan(),
    "0-d t[false mask] = v": lambda t: _written_0d(t, lambda a: a.__setitem__(a > 1, 2.0)),
    "0-d t[True tensor] = [v]": lambda t: _written_0d(
        t, lambda a: a.__setitem__(t.tensor(True), t.tensor([3.0]))),
    "0-d masked write of a grad-requiring value": lambda t: _masked_0d_grad(t),
    # scatter's older reduce= argument (PyTorch has no derivative for it)
    "scatter reduce add": lambda t: t.ones(3).scatter(0, t.tensor([0, 0, 2]),
                                                      t.tensor([2.0, 3.0, 4.0]), reduce="add"),
    "scatter reduce multiply number": lambda t: t.ones(3, dtype=t.int64).scatter(
        0, t.tensor([0, 0, 2]), 2, reduce="multiply"),
    "scatter reduce 2-d": lambda t: t.ones(2, 3).scatter(
        1, t.tensor([[0, 0], [2, 1]]), t.tensor([[1.0, 2.0, 9.0], [3.0, 4.0, 9.0]]), reduce="add"),
    "scatter_ reduce": lambda t: t.ones(3).scatter_(0, t.tensor([1, 1]), t.tensor([2.0, 3.0]),
                                                    reduce="multiply"),
    "scatter reduce mean": lambda t: t.ones(3).scatter(0, t.tensor([0]), t.tensor([1.0]),
                                                       reduce="mean"),
    "scatter reduce backward": lambda t: t.ones(3, requires_grad=True).scatter(
        0, t.tensor([0]), t.tensor([2.0]), reduce="add").sum().backward(),
}


def _written_0d(lib, write):
    a = lib.tensor(0.5)
    write(a)
    return a


def _masked_0d_grad(lib):
    w = lib.tensor(2.0, requires_grad=True)
    x = w * 1
    x[x > 0] = w * w
    x.backward()
    return lib.stack([x.detach(), w.grad])


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


@pytest.mark.parametrize("dtype", ["complex128", "complex64", "bfloat16", "float16", "float64"])
def test_tensor_type_in_messages_as_torch(dtype):
    """PyTorch's messages name a tensor type by its legacy class (``torch.DoubleTensor``) or,
    for the dtypes without one, by ``CPUComplexDoubleType``: the in-place error and expand's."""
    torch = pytest.importorskip("torch")

    def messages(lib):
        dt = getattr(lib, dtype)
        a = lib.ones(2, dtype=dt, requires_grad=True)
        b = a.sigmoid()
        b.add_(1)
        with pytest.raises(RuntimeError) as inplace:
            b.sum().abs().backward()
        with pytest.raises(RuntimeError) as expand:
            lib.ones(2, 3, dtype=dt).expand(4)
        return [str(e.value).split(", which")[0].split(": the number")[0]
                for e in (inplace, expand)]

    assert messages(gradnb) == [m.replace("torch.", "gradnb.") for m in messages(torch)]
