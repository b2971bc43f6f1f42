"""Names real PyTorch code calls that gradnb once lacked: each call gives torch's value, dtype
and gradient, or raises torch's error type with torch's first sentence (``gradnb.`` for
``torch.``)."""

from __future__ import annotations

import copy
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import gradnb

torch = pytest.importorskip("torch")


def _value(lib, value):
    """A comparable form of a call's result (tensors as dtype, values, requires_grad)."""
    if isinstance(value, lib.Tensor):
        values = np.asarray(value.detach().tolist())
        if values.dtype.kind in "fc":
            values = values.round(6)
        # (as text, so that NaN equals NaN)
        return str(value.dtype).split(".")[-1], str(values.tolist()), value.requires_grad
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [_value(lib, v) for v in value]
    return str(value).replace("torch", "gradnb")


def _outcome(lib, call):
    """``("ok", value)`` or ``(error type name, first sentence)`` of ``call(lib)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = call(lib)
        except Exception as e:  # noqa: BLE001 - the error is the outcome compared
            return type(e).__name__, str(e).split("\n")[0].replace("torch.", "gradnb.")
    return "ok", _value(lib, value)


def _check(call):
    assert _outcome(gradnb, call) == _outcome(torch, call)


# -- nn.ParameterList / nn.ParameterDict --------------------------------------------------------

def _plist(t):
    return t.nn.ParameterList([t.zeros(2, 3), t.nn.Parameter(t.ones(1, dtype=t.float64))])


def _pdict(t):
    return t.nn.ParameterDict({"b": t.zeros(2, 3), "a": t.ones(2, dtype=t.float64)})


def _holder(t):
    m = t.nn.Module()
    m.plist = _plist(t)
    m.pdict = _pdict(t)
    return m


def _pdict_after(t, edit):
    d = _pdict(t)
    result = edit(d)
    return [list(d.keys()), _value(t, result)]


CONTAINER_CALLS = {
    "list repr": lambda t: repr(_plist(t)),
    "list repr of one": lambda t: repr(t.nn.ParameterList([t.zeros(4)])),
    "empty list repr": lambda t: repr(t.nn.ParameterList()),
    "list with an object repr": lambda t: repr(_plist(t).append(3)),
    "dict repr": lambda t: repr(_pdict(t)),
    "holder repr": lambda t: repr(_holder(t)),
    "named_parameters": lambda t: [n for n, _ in _holder(t).named_parameters()],
    "state_dict keys": lambda t: list(_holder(t).state_dict()),
    "tensors become parameters": lambda t: [type(p).__name__ for p in _plist(t)],
    "converted parameters require grad": lambda t: [p.requires_grad for p in _plist(t)],
    "list len": lambda t: len(_plist(t)),
    "list index -1": lambda t: _plist(t)[-1],
    "list index out of range": lambda t: _plist(t)[2],
    "list index not an int": lambda t: _plist(t)["0"],
    "list slice": lambda t: [tuple(p.shape) for p in _plist(t)[::-1]],
    "list slice is a ParameterList": lambda t: type(_plist(t)[:1]).__name__,
    "list setitem converts": lambda t: _setitem_type(_plist(t), t.ones(2)),
    "list append": lambda t: [n for n, _ in _plist(t).append(t.ones(3)).named_parameters()],
    "list extend": lambda t: len(_plist(t).extend([t.ones(3), t.ones(4)])),
    "list += ": lambda t: len(_iadd(_plist(t), [t.ones(3)])),
    "list extend with a tensor": lambda t: _plist(t).extend(t.ones(3)),
    "list extend with a number": lambda t: _plist(t).extend(3),
    "list called": lambda t: _plist(t)(1),
    "list dir has no digits": lambda t: "0" in dir(_plist(t)),
    "dict keys sorted from a dict": lambda t: list(_pdict(t)),
    "dict keys ordered from pairs": lambda t: list(t.nn.ParameterDict([("z", t.ones(1)),
                                                                        ("y", t.ones(1))])),
    "dict from an OrderedDict": lambda t: list(t.nn.ParameterDict(OrderedDict(z=t.ones(1),
                                                                              a=t.ones(1)))),
    "dict getitem": lambda t: _pdict(t)["a"],
    "dict missing key": lambda t: _pdict(t)["c"],
    "dict non-string key": lambda t: _pdict(t)[0],
    "dict contains": lambda t: ("a" in _pdict(t), "c" in _pdict(t)),
    "dict pop": lambda t: _pdict_after(t, lambda d: d.pop("a")),
    "dict popitem": lambda t: _pdict_after(t, lambda d: d.popitem()),
    "dict popitem empty": lambda t: t.nn.ParameterDict().popitem(),
    "dict setdefault": lambda t: _pdict_after(t, lambda d: d.setdefault("c", t.ones(1))),
    "dict get": lambda t: (_pdict(t).get("c"), _pdict(t).get("c", 1)),
    "dict del": lambda t: _pdict_after(t, lambda d: d.__delitem__("b")),
    "dict clear": lambda t: _pdict_after(t, lambda d: d.clear()),
    "dict update pairs": lambda t: _pdict_after(t, lambda d: d.update([("c", t.ones(1))])),
    "dict update bad element": lambda t: _pdict(t).update([1]),
    "dict update bad length": lambda t: _pdict(t).update([("c", t.ones(1), 1)]),
    "dict update not iterable": lambda t: _pdict(t).update(3),
    "dict or": lambda t: list(_pdict(t) | t.nn.ParameterDict({"c": t.ones(1)})),
    "dict copy keeps the parameters": lambda t: _same_entries(_pdict(t)),
    "dict fromkeys": lambda t: repr(_pdict(t).fromkeys(["x", "y"], t.ones(2))),
    "dict values": lambda t: [tuple(v.shape) for v in _pdict(t).values()],
    "dict items": lambda t: [k for k, _ in _pdict(t).items()],
    "dict reversed": lambda t: list(reversed(_pdict(t))),
    "dict called": lambda t: _pdict(t)(1),
    "to(float64) through the parent": lambda t: [str(p.dtype) for p in
                                                 _holder(t).to(t.float64).parameters()],
}


def _iadd(plist, values):
    plist += values
    return plist


def _setitem_type(plist, value):
    plist[0] = value
    return type(plist[0]).__name__, plist[0].requires_grad


def _same_entries(d):
    c = d.copy()
    return [c[k] is d[k] for k in d]


@pytest.mark.parametrize("name", list(CONTAINER_CALLS))
def test_parameter_containers_match_torch(name):
    _check(CONTAINER_CALLS[name])


@pytest.mark.parametrize("lib", [gradnb, torch], ids=["gradnb", "torch"])
def test_parameter_list_trains_through_parent(lib):
    """Gradients reach the entries; ``zero_grad`` and ``deepcopy`` go through the parent; the
    entry shares memory with the tensor it was made from."""
    source = lib.ones(3)
    m = lib.nn.Module()
    m.plist = lib.nn.ParameterList([source])
    m.pdict = lib.nn.ParameterDict({"w": lib.full((3,), 2.0)})
    (m.plist[0] * m.pdict["w"]).sum().backward()
    assert m.plist[0].grad.tolist() == [2.0, 2.0, 2.0]
    assert m.pdict["w"].grad.tolist() == [1.0, 1.0, 1.0]
    m.zero_grad()
    assert m.plist[0].grad is None and m.pdict["w"].grad is None
    with lib.no_grad():
        m.plist[0].add_(1)
    assert source.tolist() == [2.0, 2.0, 2.0]
    clone = copy.deepcopy(m)
    assert isinstance(clone.plist, lib.nn.ParameterList) and len(clone.plist) == 1
    assert clone.plist[0] is not m.plist[0] and clone.plist[0].tolist() == [2.0, 2.0, 2.0]
    assert list(clone.pdict) == ["w"]
    sd = m.state_dict()
    fresh = lib.nn.Module()
    fresh.plist = lib.nn.ParameterList([lib.zeros(3)])
    fresh.pdict = lib.nn.ParameterDict({"w": lib.zeros(3)})
    fresh.load_state_dict(sd)
    assert fresh.plist[0].tolist() == [2.0, 2.0, 2.0]


# -- Tensor methods -----------------------------------------------------------------------------

def _filled(t, shape, wrap=False, value=1, dtype=None):
    return t.zeros(*shape, dtype=dtype or t.float32).fill_diagonal_(value, wrap=wrap)


def _fill_diagonal_graph(t, shape=(3, 3), wrap=False, view=False):
    """Values, node names and the gradient of a weighted sum after ``fill_diagonal_``."""
    n = int(np.prod(shape))
    x = t.arange(float(n), dtype=t.float64).reshape(shape).requires_grad_()
    y = x * 1
    target = y[1:, 1:] if view else y
    target.fill_diagonal_(-1.5, wrap=wrap)
    (y * t.arange(float(n), dtype=t.float64).reshape(shape)).sum().backward()
    return [y, y.grad_fn.name(), y.grad_fn.next_functions[0][0].name(), x.grad]


def _layout_of(e):
    return e.shape, e.stride(), e.dtype, e.requires_grad


METHOD_CALLS = {
    "byte": lambda t: t.tensor([-1.5, 300.7, 2.2]).byte(),
    "char": lambda t: t.tensor([-1.5, 3.7]).char(),
    "short": lambda t: t.tensor([-1.5, 3.7]).short(memory_format=t.preserve_format),
    "byte of a grad-requiring tensor": lambda t: t.tensor([1.5], requires_grad=True).byte(),
    "ndimension": lambda t: t.zeros(3, 1).ndimension(),
    "is_neg": lambda t: t.zeros(3).is_neg(),
    "get_device": lambda t: t.zeros(3).get_device(),
    "is_same_size": lambda t: (t.zeros(3).is_same_size(t.zeros(3)),
                               t.zeros(3).is_same_size(t.zeros(1, 3))),
    "is_nonzero one": lambda t: t.tensor([[2.0]]).is_nonzero(),
    "is_nonzero zero complex": lambda t: t.tensor([0j]).is_nonzero(),
    "is_nonzero bool": lambda t: t.tensor(True).is_nonzero(),
    "is_nonzero two": lambda t: t.tensor([1.0, 2.0]).is_nonzero(),
    "is_nonzero empty": lambda t: t.tensor([]).is_nonzero(),
    "storage_offset of a tensor": lambda t: t.zeros(4, 2).storage_offset(),
    "storage_offset of a slice": lambda t: t.zeros(4, 2)[1:, 1].storage_offset(),
    "storage_offset of a row": lambda t: t.zeros(4, 2)[2].storage_offset(),
    "storage_offset of a view of a view": lambda t: t.zeros(4, 5)[1:][:, 2:][1].storage_offset(),
    "storage_offset of narrow": lambda t: t.zeros(10).narrow(0, 3, 2).storage_offset(),
    "storage_offset of t()": lambda t: t.zeros(4, 2).t().storage_offset(),
    "isposinf": lambda t: t.isposinf(t.tensor([float("inf"), -float("inf"), float("nan"), 1.0],
                                              requires_grad=True)),
    "isneginf float16": lambda t: t.tensor([float("inf"), -float("inf")],
                                           dtype=t.float16).isneginf(),
    "isposinf int": lambda t: t.isposinf(t.tensor([1, 2])),
    "isneginf bool": lambda t: t.tensor([True]).isneginf(),
    "isposinf complex": lambda t: t.isposinf(t.tensor([1j])),
    "isneginf complex": lambda t: t.tensor([1j]).isneginf(),
    "adjoint": lambda t: t.adjoint(t.arange(6.0).reshape(1, 2, 3)),
    "adjoint complex": lambda t: (t.arange(6.0).reshape(2, 3) * 1j).adjoint(),
    "adjoint node": lambda t: t.zeros(2, 2, requires_grad=True).adjoint().grad_fn.name(),
    "adjoint 1-d": lambda t: t.adjoint(t.zeros(3)),
    "adjoint 0-d": lambda t: t.adjoint(t.tensor(2.0)),
    "argwhere": lambda t: t.argwhere(t.tensor([[1.0, 0.0], [0.0, 2.0]], requires_grad=True)),
    "argwhere method": lambda t: t.tensor([0, 3, 0, 4]).argwhere(),
    "argwhere 0-d": lambda t: (t.argwhere(t.tensor(1.0)).shape, t.argwhere(t.tensor(0)).shape),
    "fill_diagonal_": lambda t: _filled(t, (3, 4)),
    "fill_diagonal_ cube": lambda t: _filled(t, (2, 2, 2)),
    "fill_diagonal_ tall wrap": lambda t: _filled(t, (7, 3), wrap=True),
    "fill_diagonal_ tall no wrap": lambda t: _filled(t, (7, 3)),
    "fill_diagonal_ 5x3 wrap": lambda t: _filled(t, (5, 3), wrap=True),
    "fill_diagonal_ 4x3 wrap": lambda t: _filled(t, (4, 3), wrap=True),
    "fill_diagonal_ wide wrap": lambda t: _filled(t, (3, 7), wrap=True),
    "fill_diagonal_ int from float": lambda t: _filled(t, (2, 2), value=1.5, dtype=t.int64),
    "fill_diagonal_ uint8 from -1": lambda t: _filled(t, (2, 2), value=-1, dtype=t.uint8),
    "fill_diagonal_ bool": lambda t: _filled(t, (2, 2), value=True, dtype=t.bool),
    "fill_diagonal_ complex into float": lambda t: _filled(t, (2, 2), value=1j),
    "fill_diagonal_ 1-d": lambda t: _filled(t, (3,)),
    "fill_diagonal_ unequal dims": lambda t: _filled(t, (2, 3, 4)),
    "fill_diagonal_ leaf": lambda t: t.zeros(2, 2, requires_grad=True).fill_diagonal_(1),
    "fill_diagonal_ graph": lambda t: _fill_diagonal_graph(t),
    "fill_diagonal_ wrap graph": lambda t: _fill_diagonal_graph(t, (7, 2), wrap=True),
    "fill_diagonal_ view graph": lambda t: _fill_diagonal_graph(t, (4, 4), view=True),
    "swapaxes_": lambda t: t.arange(6).reshape(2, 3).swapaxes_(0, 1),
    "swapdims_ node": lambda t: (t.zeros(2, 3, requires_grad=True) * 1).swapdims_(0, 1)
    .grad_fn.name(),
    "swapaxes_ leaf": lambda t: t.zeros(2, 3, requires_grad=True).swapaxes_(0, 1),
    "new_empty_strided": lambda t: _layout_of(t.zeros(3).new_empty_strided((2, 3), (1, 2))),
    "new_empty_strided dtype": lambda t: t.zeros(3).new_empty_strided(
        (2, 2), (2, 1), dtype=t.int64, requires_grad=False).dtype,
    "new_empty_strided requires_grad": lambda t: t.zeros(3).new_empty_strided(
        (2,), (1,), requires_grad=True).requires_grad,
    "new_empty_strided mismatch": lambda t: t.zeros(3).new_empty_strided((2, 2), (1,)),
    "resize_as_": lambda t: t.arange(3.0).resize_as_(t.zeros(3, 1)),
    "resize_as_ grad-requiring": lambda t: t.zeros(3, requires_grad=True).resize_as_(t.zeros(2)),
    "is_coalesced dense": lambda t: t.zeros(3).is_coalesced(),
    "indices dense": lambda t: t.zeros(3).indices(),
    "values dense": lambda t: t.zeros(3).values(),
    "is_coalesced sparse": lambda t: t.zeros(3).to_sparse().is_coalesced(),
    "indices sparse": lambda t: t.tensor([0.0, 2.0]).to_sparse().indices(),
}

DTYPE_NAMES = ["uint8", "bool", "int8", "int16", "int64", "float16", "bfloat16", "float64",
               "complex64"]


@pytest.mark.parametrize("name", list(METHOD_CALLS))
def test_tensor_methods_match_torch(name):
    _check(METHOD_CALLS[name])


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_itemsize_and_is_signed_match_torch(dtype):
    _check(lambda t: (t.zeros(2, dtype=getattr(t, dtype)).itemsize,
                      t.zeros(2, dtype=getattr(t, dtype)).is_signed()))


def test_adjoint_of_a_scalar_warns_as_torch():
    with pytest.warns(UserWarning, match=r"adjoint\(\) is deprecated on 0-D tensors"):
        gradnb.adjoint(gradnb.tensor(1.0))


def test_new_empty_strided_has_the_strides_asked():
    e = gradnb.zeros(1, dtype=gradnb.float64).new_empty_strided((2, 3), (1, 2))
    assert e.stride() == (1, 2) and not e.is_contiguous()
    e.fill_(2.0)
    assert e.tolist() == [[2.0] * 3] * 2
