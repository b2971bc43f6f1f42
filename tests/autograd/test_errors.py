"""PRODUCT.md's list of errors: PyTorch's exception type and leading sentence, and nothing changed.

Each case is a small program; where PyTorch is installed the same program runs under it and
must raise the same type with the same leading sentence.
"""

from __future__ import annotations

import pytest

import gradnb


def implicit_grad_non_scalar(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).backward()


def second_backward(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def no_grad_fn(torch):
    x = torch.tensor([1.0, 2.0])
    (x * 2).sum().backward()


def integer_requires_grad(torch):
    torch.tensor([1, 2], requires_grad=True)


def shape_mismatch(torch):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.backward(torch.ones(2))


def modified_by_inplace(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    z = y * y
    with torch.no_grad():
        y.mul_(2)
    z.sum().backward()


def leaf_inplace(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.mul_(2)


def nonleaf_requires_grad_change(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).requires_grad = False


def numpy_of_grad_tensor(torch):
    torch.tensor([1.0], requires_grad=True).numpy()


def item_of_many(torch):
    torch.tensor([1.0, 2.0]).item()


CASES = {
    implicit_grad_non_scalar: (RuntimeError, "grad can be implicitly created only for scalar outputs"),
    second_backward: (RuntimeError, "Trying to backward through the graph a second time"),
    no_grad_fn: (RuntimeError,
                 "element 0 of tensors does not require grad and does not have a grad_fn"),
    integer_requires_grad: (RuntimeError,
                            "Only Tensors of floating point and complex dtype can require gradients"),
    shape_mismatch: (RuntimeError, "Mismatch in shape: grad_output[0] has a shape of"),
    modified_by_inplace: (RuntimeError, ("one of the variables needed for gradient computation "
                                         "has been modified by an inplace operation")),
    leaf_inplace: (RuntimeError,
                   "a leaf Variable that requires grad is being used in an in-place operation."),
    nonleaf_requires_grad_change: (RuntimeError,
                                   "you can only change requires_grad flags of leaf variables."),
    numpy_of_grad_tensor: (RuntimeError, "Can't call numpy() on Tensor that requires grad."),
    item_of_many: (RuntimeError, "a Tensor with 2 elements cannot be converted to Scalar"),
}


@pytest.mark.parametrize("program", list(CASES), ids=lambda f: f.__name__)
def test_gradnb_raises_pytorch_error(program):
    exc_type, leading = CASES[program]
    with pytest.raises(exc_type) as info:
        program(gradnb)
    assert str(info.value).startswith(leading)


@pytest.mark.torch
@pytest.mark.parametrize("program", list(CASES), ids=lambda f: f.__name__)
def test_pytorch_raises_the_same(program, torch):
    exc_type, leading = CASES[program]
    with pytest.raises(exc_type) as info:
        program(torch)
    assert str(info.value).startswith(leading)


def test_failed_backward_changes_nothing():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    w = gradnb.tensor([3.0, 4.0], requires_grad=True)
    y = x.exp()
    loss = (y * w).sum()
    with gradnb.no_grad():
        y._data *= 2  # an in-place edit the version counter records
        y._version_counter[0] += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    assert x.grad is None and w.grad is None
    # The graph was not released: undoing the edit makes backward work.
    y._version_counter[0] -= 1
    loss.backward()
    assert w.grad is not None


def test_bad_root_gradient_changes_nothing():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    with pytest.raises(RuntimeError, match="^Mismatch in shape"):
        y.backward(gradnb.ones(3))
    y.backward(gradnb.ones(2))
    assert x.grad.tolist() == [2.0, 4.0]


def test_devices_cannot_mix_message():
    from gradnb.ops._common import check_same_device

    class FakeCuda:
        class device:
            id = 0

    with pytest.raises(RuntimeError, match="^Expected all tensors to be on the same device"):
        check_same_device(gradnb.ones(1)._data, FakeCuda())
