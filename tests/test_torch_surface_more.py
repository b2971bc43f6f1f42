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
        return (str(value.dtype).split(".")[-1], np.asarray(value.detach().tolist()).round(6)
                .tolist(), value.requires_grad)
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
