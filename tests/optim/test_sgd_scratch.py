"""SGD's update of a parameter larger than its scratch block: the same numbers, no
parameter-sized buffer kept between steps."""

import numpy as np

import gradnb
from gradnb.optim import sgd


def _step(shape, transpose=False, **options):
    rng = np.random.default_rng(0)
    data = rng.standard_normal(shape).astype(np.float32)
    grad = rng.standard_normal(shape).astype(np.float32)
    w = gradnb.tensor(data.T if transpose else data, requires_grad=True)
    w.grad = gradnb.tensor(grad.T if transpose else grad)
    opt = gradnb.optim.SGD([w], lr=0.1, **options)
    opt.step()
    return w, opt, (data - np.float32(0.1) * grad).T if transpose else data - np.float32(0.1) * grad


def test_blocks_of_a_large_parameter_match_one_update():
    w, opt, expected = _step((3, sgd._CHUNK + 5))
    np.testing.assert_array_equal(w.detach().numpy(), expected)
    held = [a.nbytes for a in opt._scratch.values() if hasattr(a, "nbytes")] + [
        a.nbytes for a in opt._workspace._buffers.values()]
    assert sum(held) <= sgd._CHUNK * 4


def test_strided_and_momentum_parameters():
    w, _, expected = _step((sgd._CHUNK + 5, 2), transpose=True)
    np.testing.assert_array_equal(w.detach().numpy(), expected)
    w, _, expected = _step((sgd._CHUNK + 5,), momentum=0.9)
    np.testing.assert_array_equal(w.detach().numpy(), expected)
