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


CALLS = {
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
