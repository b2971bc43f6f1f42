"""``Tensor.unfold`` is a view, as PyTorch's: a write through its windows reaches the tensor, its
storage is the tensor's, and its gradient (also through an in-place write) is PyTorch's.

Each case runs in both libraries and must end the same way (values, or error type and message).
Windows that overlap are left out of the writes: PyTorch adds into a shared element once per
window that holds it, gradnb once.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradnb


def _written(lib):
    base = lib.zeros(2, 6)
    windows = base.unfold(1, 2, 2)
    windows.add_(1)
    return base.tolist(), windows._base is base, windows.stride(), windows.is_contiguous()


def _gradient(lib):
    a = lib.tensor(np.arange(10.0).reshape(2, 5), requires_grad=True)
    windows = a.unfold(1, 3, 2)
    (windows * windows).sum().backward()
    return a.grad.tolist(), type(windows.grad_fn).__name__


def _gradient_through_a_write(lib):
    a = lib.tensor(np.arange(10.0).reshape(2, 5), requires_grad=True)
    b = a * 1
    b.unfold(1, 2, 2).mul_(3)
    (b * b).sum().backward()
    return a.grad.tolist(), type(b.grad_fn).__name__


def _of_a_transposed_tensor(lib):
    x = lib.tensor(np.arange(6.0)).reshape(2, 3).t()
    windows = x.unfold(0, 2, 1)
    return windows.tolist(), windows.stride(), windows._base is x._base


def _of_a_0d_tensor(lib):
    x = lib.tensor(5.0)
    return x.unfold(0, 1, 1).tolist(), x.unfold(0, 1, 1)._base is x


def _of_a_leaf_written(lib):
    lib.zeros(4, requires_grad=True).unfold(0, 2, 2).zero_()


def _under_no_grad_written(lib):
    b = lib.zeros(4, requires_grad=True) * 1
    with lib.no_grad():
        windows = b.unfold(0, 2, 2)
    windows.zero_()


def _of_an_expanded_tensor_written(lib):
    lib.zeros(3).expand(2, 3).unfold(1, 2, 1).add_(1)


def _diagonal_of_an_expanded_tensor_written(lib):
    ones = lib.ones(5)
    ones.expand(5, 5).diagonal().zero_()
    return ones.tolist()


CASES = [_diagonal_of_an_expanded_tensor_written, _written, _gradient, _gradient_through_a_write, _of_a_transposed_tensor, _of_a_0d_tensor,
         _of_a_leaf_written, _under_no_grad_written, _of_an_expanded_tensor_written]


def _outcome(lib, case):
    try:
        return "ok", repr(case(lib))
    except Exception as error:  # noqa: BLE001 - the outcome compared is the error itself
        return type(error).__name__, str(error).replace("torch.", "gradnb.")


@pytest.mark.parametrize("case", CASES, ids=lambda f: f.__name__.strip("_"))
def test_as_pytorch(torch, case):
    assert _outcome(gradnb, case) == _outcome(torch, case)


def test_the_windows_share_the_tensors_storage_and_version():
    x = gradnb.arange(8.0)
    windows = x.unfold(0, 4, 2)
    assert windows.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert windows.untyped_storage().nbytes() == x.untyped_storage().nbytes()
    windows[0, 0] = 7.0
    assert x[0].item() == 7.0 and x._version == windows._version == 1


def test_windows_of_a_read_only_array_stay_read_only():
    data = np.arange(4.0)
    data.flags.writeable = False
    windows = gradnb.from_numpy(data).unfold(0, 2, 1)
    assert not windows._data.flags.writeable
