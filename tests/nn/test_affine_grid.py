"""affine_grid against PyTorch (it is not in op_db): values, node, saved values, two orders."""

import numpy as np
import pytest

import gradnb


@pytest.mark.filterwarnings("ignore:Since version 1.3.0")
@pytest.mark.parametrize(("size", "align_corners"), [
    ((2, 3, 4, 5), False), ((2, 3, 4, 5), True), ((2, 1, 3, 4, 5), False), ((2, 1, 3, 1, 2), True),
])
def test_affine_grid_matches_pytorch_to_second_order(torch, size, align_corners):
    k = len(size) - 2
    theta = np.random.default_rng(0).standard_normal((size[0], k, k + 1))
    weight = np.random.default_rng(1).standard_normal((size[0], *size[2:], k))
    results = []
    for lib in (torch, gradnb):
        t = lib.tensor(theta, requires_grad=True)
        grid = lib.nn.functional.affine_grid(t, size, align_corners=align_corners)
        node = grid.grad_fn
        assert node.name() == "AffineGridGeneratorBackward0"
        assert tuple(node._saved_size) == size and node._saved_align_corners == align_corners
        (g,) = lib.autograd.grad((grid ** 2 * lib.tensor(weight)).sum(), (t,), create_graph=True)
        (h,) = lib.autograd.grad((g ** 3).sum(), (t,))
        results.append([grid.detach().numpy(), g.detach().numpy(), h.numpy()])
    for mine, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_affine_grid_refuses_what_pytorch_refuses():
    with pytest.raises(ValueError, match="Nx2x3"):
        gradnb.nn.functional.affine_grid(gradnb.zeros(1, 3, 3), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match="floating point"):
        gradnb.nn.functional.affine_grid(gradnb.zeros(1, 2, 3, dtype=gradnb.int64), (1, 1, 2, 2),
                                         align_corners=False)
