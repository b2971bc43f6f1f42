"""Factories, the engine and Python operands refuse bad input as PyTorch does.

Each case is a function of the library module (``gradnb`` or ``torch``): gradnb must raise the
exception type listed, and, where torch is installed, the same type as torch with the same first
sentence (``gradnb.`` where torch prints ``torch.``).
"""

from __future__ import annotations

import re

import pytest

import gradnb


def _second_backward(M, make):
    x = M.tensor([1.0, 2.0], requires_grad=True)
    y = make(x).sum()
    y.backward()
    y.backward()


def _inplace_after_save(M):
    a = M.tensor([1.0, 2.0], requires_grad=True).clone()
    b = a * a
    a.add_(1)
    b.sum().backward()


def _leaf_changed_after_save(M):
    x = M.tensor([1.0, 2.0], requires_grad=True)
    b = x * x
    with M.no_grad():
        x.add_(1)
    b.sum().backward()


def _inference_tensor(M):
    with M.inference_mode():
        return M.ones(2)


def _unused_input(M):
    a = M.tensor([1.0], requires_grad=True)
    b = M.tensor([1.0], requires_grad=True)
    M.autograd.grad((a * 2).sum(), [a, b])


def _set_requires_grad(t):
    t.requires_grad = True


CASES = {
    # factories
    "tensor dtype as a name": (TypeError, lambda M: M.tensor([1.0], dtype="float32")),
    "zeros dtype as a name": (TypeError, lambda M: M.zeros(2, dtype="float32")),
    "ones of a float size": (TypeError, lambda M: M.ones(2.5)),
    "zeros of a float among sizes": (TypeError, lambda M: M.zeros(2, 2.5)),
    "ones of a float in a size tuple": (TypeError, lambda M: M.ones((2.5,))),
    "rand of a float size": (TypeError, lambda M: M.rand(2.0)),
    "arange with step 0": (RuntimeError, lambda M: M.arange(0, 5, 0)),
    "arange with the wrong sign": (RuntimeError, lambda M: M.arange(0, 5, -1)),
    "arange to nan": (RuntimeError, lambda M: M.arange(0, float("nan"))),
    "ragged list": (ValueError, lambda M: M.tensor([[1, 2], [3]])),
    "ragged deeper": (ValueError, lambda M: M.tensor([[[1], [2]], [[3]]])),
    "a str": (TypeError, lambda M: M.tensor("abc")),
    "a list of str": (ValueError, lambda M: M.tensor(["a"])),
    "None": (RuntimeError, lambda M: M.tensor(None)),
    "negative size": (RuntimeError, lambda M: M.empty(-2)),
    "eye with negative n": (RuntimeError, lambda M: M.eye(-1)),
    "eye with negative m": (RuntimeError, lambda M: M.eye(2, -1)),
    "linspace with negative steps": (RuntimeError, lambda M: M.linspace(0, 1, -1)),
    # requires_grad on integer tensors, through every API
    "factory requires_grad": (RuntimeError, lambda M: M.tensor([1, 2], requires_grad=True)),
    "zeros requires_grad": (RuntimeError,
                            lambda M: M.zeros(2, dtype=M.int64, requires_grad=True)),
    "requires_grad_()": (RuntimeError, lambda M: M.tensor([1, 2]).requires_grad_()),
    "requires_grad attribute": (RuntimeError, lambda M: _set_requires_grad(M.tensor([1, 2]))),
    "Parameter": (RuntimeError, lambda M: M.nn.Parameter(M.tensor([1, 2]))),
    # the engine
    "backward with a list gradient": (
        TypeError, lambda M: (M.tensor([1.0, 2.0], requires_grad=True) * 2).backward(
            gradient=[1.0, 1.0])),
    "grad of a non-tensor input": (
        RuntimeError, lambda M: M.autograd.grad(
            (M.tensor([1.0], requires_grad=True) * 2).sum(), [1.0])),
    "grad with an unused input": (RuntimeError, _unused_input),
    "second backward through exp": (RuntimeError,
                                    lambda M: _second_backward(M, lambda x: x.exp())),
    "second backward through x * 2": (RuntimeError,
                                      lambda M: _second_backward(M, lambda x: x * 2)),
    "in-place after save": (RuntimeError, _inplace_after_save),
    "leaf changed after save": (RuntimeError, _leaf_changed_after_save),
    "inference tensor saved": (
        RuntimeError, lambda M: (_inference_tensor(M) * M.ones(2, requires_grad=True)).sum()),
    "inference tensor in place": (RuntimeError, lambda M: _inference_tensor(M).add_(1)),
    # Python operands where only tensors are accepted
    "atan2 of a number": (TypeError, lambda M: M.atan2(2, M.ones(2))),
    "maximum with a number": (TypeError, lambda M: M.maximum(M.ones(2), 2)),
    "fmod of a number": (TypeError, lambda M: M.fmod(2, M.ones(2))),
    "unbound __radd__": (TypeError, lambda M: M.Tensor.__radd__(2, M.ones(2))),
}


def _first_sentence(message: str) -> str:
    # gradnb's tensor class is ``gradnb.Tensor`` where torch's C base is ``torch._C.TensorBase``
    message = message.replace("torch._C.TensorBase", "gradnb.Tensor").replace("torch.", "gradnb.")
    return re.split(r"(?<=[.!:])\s", message, maxsplit=1)[0]


@pytest.mark.parametrize("name", list(CASES))
def test_refused(name):
    expected, fn = CASES[name]
    with pytest.raises(expected):
        fn(gradnb)


@pytest.mark.parametrize("name", list(CASES))
def test_refused_as_torch(name, torch):
    _, fn = CASES[name]
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(Exception) as ours:
        fn(gradnb)
    assert type(ours.value) is type(theirs.value)
    assert _first_sentence(str(ours.value)) == _first_sentence(str(theirs.value))


def test_bad_factory_call_draws_nothing():
    gradnb.manual_seed(3)
    with pytest.raises(TypeError):
        gradnb.rand(2.0)
    after_refusal = gradnb.rand(3)
    gradnb.manual_seed(3)
    assert gradnb.equal(after_refusal, gradnb.rand(3))
