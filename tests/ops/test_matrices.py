"""diagonal_copy: the diagonal as a tensor of its own, with diagonal's gradients."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck


@pytest.mark.parametrize("offset, dim1, dim2", [(0, 0, 1), (1, 0, 1), (-1, 1, 2), (2, -1, 0)])
def test_diagonal_copy_matches_torch(torch, offset, dim1, dim2):
    data = np.random.default_rng(0).standard_normal((3, 4, 5))
    x = gradnb.tensor(data, requires_grad=True)
    out = gradnb.diagonal_copy(x, offset, dim1, dim2)
    expected = torch.diagonal_copy(torch.tensor(data), offset, dim1, dim2).numpy()
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    assert not np.shares_memory(out.detach().numpy(), x.detach().numpy())
    assert gradcheck(lambda t: gradnb.diagonal_copy(t, offset, dim1, dim2), (x,))
    assert gradgradcheck(lambda t: gradnb.diagonal_copy(t, offset, dim1, dim2) ** 2, (x,))
