"""Factory signatures scripts call: ``randint(high, size)`` and the ``*_like`` keywords."""

from __future__ import annotations

import pytest

import gradnb


@pytest.mark.torch
@pytest.mark.parametrize("args, kwargs, low, high", [
    ((5, (3,)), {}, 0, 5), ((2, 5, (3,)), {}, 2, 5), ((5,), {"size": (2, 2)}, 0, 5),
    ((), {"high": 4, "size": (3,)}, 0, 4), ((1, 4), {"size": (2,)}, 1, 4), ((5, ()), {}, 0, 5),
])
def test_randint_reads_its_arguments_as_torch(torch, args, kwargs, low, high):
    ours = gradnb.randint(*args, **kwargs)
    theirs = torch.randint(*args, **kwargs)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.is_floating_point == theirs.dtype.is_floating_point
    assert ((ours >= low) & (ours < high)).all()


def test_randint_without_a_size_is_a_type_error():
    with pytest.raises(TypeError, match="^randint\\(\\) received an invalid combination"):
        gradnb.randint(5)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "rand_like",
                                  "randn_like"])
@pytest.mark.parametrize("fmt", ["preserve_format", "contiguous_format"])
def test_like_factories_take_memory_format(torch, name, fmt):
    ours = getattr(gradnb, name)(gradnb.ones(2, 3), memory_format=getattr(gradnb, fmt))
    theirs = getattr(torch, name)(torch.ones(2, 3), memory_format=getattr(torch, fmt))
    assert tuple(ours.shape) == tuple(theirs.shape)
    full = gradnb.full_like(gradnb.ones(2), 7.0, memory_format=gradnb.preserve_format)
    assert full.tolist() == torch.full_like(torch.ones(2), 7.0,
                                            memory_format=torch.preserve_format).tolist()


@pytest.mark.torch
def test_normal_and_bernoulli_give_their_arguments_zero_gradients_as_torch(torch):
    mean = gradnb.zeros(1, 3, requires_grad=True)
    std = gradnb.ones(2, 3, requires_grad=True)
    out = gradnb.normal(mean, std)
    assert out.grad_fn.name() == "NormalBackward3"
    assert out.grad_fn._saved_mean_sym_sizes == (1, 3)
    out.sum().backward()
    assert mean.grad.shape == (1, 3) and not mean.grad.numpy().any()
    assert std.grad.shape == (2, 3) and not std.grad.numpy().any()
    assert gradnb.normal(mean, 2.0).grad_fn.name() == "NormalBackward1"
    assert gradnb.normal(2.0, std).grad_fn.name() == "NormalBackward2"
    p = gradnb.full((4,), 0.5, requires_grad=True)
    drawn = gradnb.bernoulli(p)
    assert drawn.grad_fn.name() == "BernoulliBackward0"
    drawn.sum().backward()
    assert not p.grad.numpy().any()
