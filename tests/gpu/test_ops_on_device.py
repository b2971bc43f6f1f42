"""Ops on a device give the CPU's values and gradients (within float32 tolerance).

Each case runs a function of float32 tensors on the CPU and on ``device``, backpropagates the
same upstream gradient, and compares outputs and every input's gradient. On "cpu" the check is
trivially exact; the CUDA case is the one that matters (it skips without a GPU).
"""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
import gradnb.nn.functional as F

RTOL, ATOL = 1e-4, 1e-5  # float32: GPU reductions sum in another order than NumPy's


def host(t):
    return t.detach().cpu().numpy()


def _inputs(shapes, device, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(0.5, 2.0, size=s).astype(np.float32) * rng.choice([-1, 1], size=s)
              for s in shapes]
    return [gradnb.tensor(a, device=device, requires_grad=True) for a in arrays]


def _run(fn, shapes, device, seed=0):
    inputs = _inputs(shapes, device, seed)
    out = fn(*inputs)
    upstream = np.random.default_rng(seed + 1).standard_normal(out.shape).astype(np.float32)
    out.backward(gradnb.tensor(upstream, dtype=out.dtype, device=device))
    return out, inputs


IDX = [2, 0, 1, 2]
OPS = {
    "add_broadcast": (lambda a, b: a + b, [(3, 4), (4,)]),
    "sub_mul_div": (lambda a, b: (a - b) * a / b, [(3, 4), (3, 4)]),
    "pow": (lambda a: a.abs() ** 1.5, [(5,)]),
    "rpow_scalar": (lambda a: 2.0 ** a, [(5,)]),
    "matmul": (lambda a, b: a @ b, [(3, 4), (4, 5)]),
    "bmm": (lambda a, b: gradnb.bmm(a, b), [(2, 3, 4), (2, 4, 2)]),
    "exp_log": (lambda a: a.exp() + a.abs().log(), [(3, 4)]),
    "tanh_sigmoid_relu": (lambda a: a.tanh() + a.sigmoid() + a.relu(), [(3, 4)]),
    "sqrt_rsqrt": (lambda a: a.abs().sqrt() + a.abs().rsqrt(), [(6,)]),
    "clamp": (lambda a: a.clamp(-1.0, 1.0), [(3, 4)]),
    "where": (lambda a, b: gradnb.where(a > 0, a, b), [(3, 4), (3, 4)]),
    "maximum": (lambda a, b: gradnb.maximum(a, b), [(3, 4), (3, 4)]),
    "sum_dim": (lambda a: a.sum(dim=1), [(3, 4)]),
    "mean": (lambda a: a.mean(), [(3, 4)]),
    "max_dim": (lambda a: a.max(dim=0).values, [(3, 4)]),
    "amax": (lambda a: a.amax(dim=(0, 1)), [(3, 4)]),
    "var_std": (lambda a: a.var(dim=1) + a.std(dim=0).sum(), [(3, 4)]),
    "norm": (lambda a: a.norm(), [(3, 4)]),
    "logsumexp": (lambda a: a.logsumexp(dim=1), [(3, 4)]),
    "prod": (lambda a: a.prod(dim=1), [(3, 4)]),
    "cumsum": (lambda a: a.cumsum(dim=1), [(3, 4)]),
    "reshape_transpose": (lambda a: a.reshape(4, 3).t() * 2, [(3, 4)]),
    "permute_flatten": (lambda a: a.permute(2, 0, 1).flatten(), [(2, 3, 4)]),
    "cat_stack": (lambda a, b: gradnb.cat([a, b]) + gradnb.stack([a, b]).sum(0).repeat(2, 1),
                  [(2, 3), (2, 3)]),
    "expand_squeeze": (lambda a: a.unsqueeze(0).expand(3, 2, 4).squeeze(), [(2, 4)]),
    "getitem_basic": (lambda a: a[1:, ::2], [(3, 4)]),
    "getitem_tensor": (lambda a: a[gradnb.tensor(IDX, device=a.device)], [(3, 4)]),
    "getitem_mask": (lambda a: a[a > 0], [(3, 4)]),
    "gather": (lambda a: a.gather(1, gradnb.tensor([[0, 1], [2, 3], [1, 1]], device=a.device)),
               [(3, 4)]),
    "index_select": (lambda a: a.index_select(0, gradnb.tensor(IDX, device=a.device)), [(3, 4)]),
    "scatter_add": (lambda a, b: a.scatter_add(0, gradnb.tensor([[0, 1, 2, 0]], device=a.device),
                                               b), [(3, 4), (1, 4)]),
    "masked_fill": (lambda a: a.masked_fill(a < 0, 0.5), [(3, 4)]),
    "flip_roll": (lambda a: a.flip(0).roll(1, 1), [(3, 4)]),
    "median_dim": (lambda a: a.median(dim=1).values, [(3, 5)]),
    "min_amin": (lambda a: a.min(dim=1).values + a.amin(dim=1), [(3, 4)]),
    "cumprod": (lambda a: a.cumprod(dim=0), [(3, 4)]),
    "split_chunk_unbind": (lambda a: a.split(2, dim=1)[1] * a.chunk(2, dim=1)[0]
                           + a.unbind(1)[2][:, None], [(3, 4)]),
    "narrow_select": (lambda a: a.narrow(1, 1, 2) * a.select(0, 1)[:2], [(3, 4)]),
    "movedim_unflatten": (lambda a: a.movedim(0, 1).unflatten(0, (2, 2)) * 3, [(3, 4)]),
    "tile_swapaxes_view": (lambda a: a.tile((2, 1)).swapaxes(0, 1).contiguous().view(-1),
                           [(3, 4)]),
    "index_add": (lambda a, b: a.index_add(0, gradnb.tensor([2, 0], device=a.device), b),
                  [(3, 4), (2, 4)]),
    "index_put": (lambda a, b: a.index_put((gradnb.tensor([1, 1], device=a.device),), b,
                                           accumulate=True), [(3, 4), (2, 4)]),
    "scatter": (lambda a, b: a.scatter(1, gradnb.tensor([[3], [0], [1]], device=a.device), b),
                [(3, 4), (3, 1)]),
    "masked_select": (lambda a: a.masked_select(a > 0), [(3, 4)]),
    "take_along_dim": (lambda a: a.take_along_dim(
        gradnb.tensor([[3, 0, 1, 2], [1, 1, 0, 3], [2, 3, 0, 0]], device=a.device), dim=1),
        [(3, 4)]),
    "softmax": (lambda a: F.softmax(a, dim=1), [(3, 4)]),
    "log_softmax": (lambda a: F.log_softmax(a, dim=1), [(3, 4)]),
    "gelu": (lambda a: F.gelu(a), [(3, 4)]),
    "linear": (lambda x, w, b: F.linear(x, w, b), [(5, 4), (3, 4), (3,)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    "batch_norm": (lambda x: F.batch_norm(x, None, None, training=True), [(6, 3)]),
    "conv2d": (lambda x, w: F.conv2d(x, w, padding=1), [(2, 3, 5, 5), (4, 3, 3, 3)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), [(1, 2, 4, 4)]),
    "mse_loss": (lambda a, b: F.mse_loss(a, b), [(3, 4), (3, 4)]),
    "bce_with_logits": (lambda a: F.binary_cross_entropy_with_logits(
        a, (a.detach() > 0).float()), [(3, 4)]),
    "cross_entropy": (lambda a: F.cross_entropy(a, gradnb.tensor([0, 3, 1], device=a.device)),
                      [(3, 4)]),
    "nll_loss": (lambda a: F.nll_loss(F.log_softmax(a, 1),
                                      gradnb.tensor([2, 0, 1], device=a.device)), [(3, 4)]),
    "embedding": (lambda w: F.embedding(gradnb.tensor([[1, 2], [2, 0]], device=w.device), w),
                  [(4, 3)]),
}


@pytest.mark.parametrize("name", OPS)
def test_op_values_and_gradients_match_the_cpu(device, name):
    fn, shapes = OPS[name]
    out, inputs = _run(fn, shapes, device)
    ref_out, ref_inputs = _run(fn, shapes, "cpu")
    assert out.device == gradnb.device(device)
    assert out.dtype is ref_out.dtype
    assert type(out.grad_fn).__name__ == type(ref_out.grad_fn).__name__
    np.testing.assert_allclose(host(out), host(ref_out), rtol=RTOL, atol=ATOL)
    for t, ref in zip(inputs, ref_inputs):
        assert t.grad is not None and t.grad.device == gradnb.device(device)
        np.testing.assert_allclose(host(t.grad), host(ref.grad), rtol=RTOL, atol=ATOL)


def test_dropout_draws_the_same_mask_on_every_device(device):
    x = gradnb.ones(4, 5, device=device, requires_grad=True)
    gradnb.manual_seed(7)
    y = F.dropout(x, 0.5, training=True)
    y.sum().backward()
    gradnb.manual_seed(7)
    ref = F.dropout(gradnb.ones(4, 5), 0.5, training=True)
    np.testing.assert_array_equal(host(y), host(ref))
    np.testing.assert_array_equal(host(x.grad), host(ref))


def test_in_place_ops_on_device_keep_the_graph(device):
    a, b = _inputs([(3, 4), (3, 4)], device, seed=3)
    y = a * 1.0
    y.add_(b).mul_(2.0).clamp_(min=-1.0)
    y.sum().backward()
    a_ref, b_ref = _inputs([(3, 4), (3, 4)], "cpu", seed=3)
    y_ref = (a_ref * 1.0).add_(b_ref).mul_(2.0).clamp_(min=-1.0)
    y_ref.sum().backward()
    np.testing.assert_allclose(host(y), host(y_ref), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(host(a.grad), host(a_ref.grad), rtol=RTOL, atol=ATOL)
    assert a.grad.device == gradnb.device(device)


def test_setitem_on_device_writes_and_backpropagates(device):
    (a,) = _inputs([(3, 4)], device, seed=4)
    y = a * 1.0
    y[0] = 5.0
    y[1:, 1] = gradnb.tensor([7.0, 8.0], device=device)
    y.sum().backward()
    expected = np.ones((3, 4), dtype=np.float32)
    expected[0] = 0.0
    expected[1:, 1] = 0.0
    np.testing.assert_array_equal(host(a.grad), expected)
    assert host(y)[0, 0] == 5.0 and host(y)[2, 1] == 8.0


def test_second_order_gradients_on_device(device):
    x = gradnb.tensor([0.5, -1.0, 2.0], device=device, requires_grad=True)
    (g,) = gradnb.autograd.grad((x ** 3).sum(), x, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(host(x.grad), [3.0, -6.0, 12.0], rtol=RTOL)


def test_integer_and_boolean_results_stay_on_the_device(device):
    x = gradnb.tensor([[0.0, 2.0, -1.0], [3.0, 0.0, 0.0]], device=device)
    results = {
        "nonzero": (x.nonzero(), [[0, 1], [0, 2], [1, 0]]),
        "count_nonzero": (x.count_nonzero(dim=1), [2, 1]),
        "all": (x.all(dim=0), [False, False, False]),
        "any": (x.any(dim=1), [True, True]),
        "argmax": (x.argmax(dim=1), [1, 0]),
        "eq": (x == 0, [[True, False, False], [False, True, True]]),
    }
    for name, (t, expected) in results.items():
        assert t.device == gradnb.device(device), name
        np.testing.assert_array_equal(host(t), expected, err_msg=name)


def test_reductions_return_tensors_that_stay_on_the_device(device):
    x = gradnb.arange(12, dtype=gradnb.float32, device=device).reshape(3, 4)
    for t in (x.sum(), x.mean(), x.max(), x.argmax(), x.argmin(dim=1), x.amax(), x.norm()):
        assert t.device == gradnb.device(device)
    assert x.sum().item() == 66.0
    assert x.argmax().item() == 11
