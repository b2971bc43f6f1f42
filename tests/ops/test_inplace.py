"""In-place ops: values, gradients and node names against PyTorch; the leaf rule; the no-grad
fast path; version-counter errors; writes through views; dtype and shape errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck

FAST = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
A = np.random.default_rng(0).uniform(0.5, 2.0, (3, 4))
B = np.random.default_rng(1).uniform(0.5, 2.0, (4,))

# Each op runs on a non-leaf copy (``x * 1``) so recording is allowed.
UNARY = {
    "neg_": lambda m, x: (x * 1).neg_(),
    "exp_": lambda m, x: (x * 1).exp_(),
    "log_": lambda m, x: (x * 1).log_(),
    "sqrt_": lambda m, x: (x * 1).sqrt_(),
    "tanh_": lambda m, x: (x * 1).tanh_(),
    "sigmoid_": lambda m, x: (x * 1).sigmoid_(),
    "relu_": lambda m, x: (x - 1.2).relu_(),
    "abs_": lambda m, x: (x - 1.2).abs_(),
    "clamp_": lambda m, x: (x * 1).clamp_(0.8, 1.5),
    "clamp_min_": lambda m, x: (x * 1).clamp_min_(1.0),
    "pow_": lambda m, x: (x * 1).pow_(3),
    "add_ scalar": lambda m, x: (x * 1).add_(2.0, alpha=3),
    "sub_ scalar": lambda m, x: (x * 1).sub_(2.0),
    "mul_ scalar": lambda m, x: (x * 1).mul_(2.0),
    "div_ scalar": lambda m, x: (x * 1).div_(4.0),
    "zero_": lambda m, x: (x * 1).zero_(),
    "fill_": lambda m, x: (x * 1).fill_(3.0),
    "masked_fill_": lambda m, x: (x * 1).masked_fill_(m.tensor(A > 1.2), -1.0),
    "scatter_ value": lambda m, x: (x * 1).scatter_(0, m.tensor([[0, 2, 1, 0]]), 5.0),
    "iadd": lambda m, x: _iadd(x * 1, 1.5),
}


def _iadd(t, v):
    t += v
    return t


BINARY = {
    "add_": lambda m, x, y: (x * 1).add_(y, alpha=0.5),
    "sub_": lambda m, x, y: (x * 1).sub_(y),
    "mul_": lambda m, x, y: (x * 1).mul_(y),
    "div_": lambda m, x, y: (x * 1).div_(y),
    "pow_": lambda m, x, y: (x * 1).pow_(y),
    "imul": lambda m, x, y: _imul(x * 1, y),
    "scatter_add_": lambda m, x, y: (x * 1).scatter_add_(1, m.tensor([[0, 0, 3, 1]] * 3), y.expand(
        3, 4) * 1),
    "index_add_": lambda m, x, y: (x * 1).index_add_(1, m.tensor([3, 0, 0, 1]), y.expand(3, 4) * 1),
}


def _imul(t, v):
    t *= v
    return t


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_inplace_matches_pytorch(check, name):
    check(UNARY[name], [A])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_inplace_matches_pytorch(check, name):
    check(BINARY[name], [A, B])


@pytest.mark.parametrize("name", ["exp_", "mul_"])
def test_second_order_through_inplace(name):
    x = gradnb.tensor(A, dtype=gradnb.float64, requires_grad=True)
    y = gradnb.tensor(B, dtype=gradnb.float64, requires_grad=True)
    fns = {"exp_": lambda a, b: (a * b).exp_() * a, "mul_": lambda a, b: (a * 1).mul_(b) * a}
    assert gradcheck(fns[name], (x, y))
    assert gradgradcheck(fns[name], (x, y))


@FAST
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       seed=st.integers(0, 2**16), op=st.sampled_from(["add_", "sub_", "mul_", "div_"]))
def test_inplace_equals_out_of_place_where_shapes_allow(shapes, seed, op):
    a_shape, b_shape = shapes.input_shapes
    if shapes.result_shape != a_shape:
        return  # an in-place op cannot grow its tensor (covered by the error tests)
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2, a_shape)
    b = rng.uniform(0.5, 2, b_shape)
    x = gradnb.tensor(a, requires_grad=True)
    y = gradnb.tensor(b, requires_grad=True)
    out = getattr(x * 1, op)(y)
    np.testing.assert_allclose(out.detach().numpy(), getattr(np, {
        "add_": "add", "sub_": "subtract", "mul_": "multiply", "div_": "divide"}[op])(a, b))
    assert gradcheck(lambda p, q: getattr(p * 1, op)(q), (x.double(), y.double()))


# -- the leaf rule --------------------------------------------------------------------------------
LEAF_CALLS = {
    "add_": lambda t: t.add_(1.0),
    "mul_": lambda t: t.mul_(2.0),
    "zero_": lambda t: t.zero_(),
    "exp_": lambda t: t.exp_(),
    "uniform_": lambda t: t.uniform_(),
    "copy_": lambda t: t.copy_(gradnb.ones(2)),
    "iadd": lambda t: _iadd(t, 1.0),
}


@pytest.mark.parametrize("name", sorted(LEAF_CALLS))
def test_leaf_requiring_grad_raises_and_nothing_changes(name):
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    data = x._data.copy()
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in "
                                           "an in-place operation.$"):
        LEAF_CALLS[name](x)
    np.testing.assert_array_equal(x._data, data)
    assert x._version == 0 and x.is_leaf and x.requires_grad


def test_view_of_leaf_raises():
    x = gradnb.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad"):
        x[0].mul_(2.0)
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]] and x._version == 0


# -- the fast path: no graph ------------------------------------------------------------------------
def test_no_grad_writes_into_the_same_buffer_and_bumps_the_version():
    p = gradnb.tensor([1.0, 2.0, 3.0], requires_grad=True)
    g = gradnb.tensor([0.5, 0.5, 0.5])
    buffer = p._data
    with gradnb.no_grad():
        p.sub_(g, alpha=2.0)
        p.mul_(2.0)
        p.clamp_(max=3.0)
        p += 1.0
    assert p._data is buffer and p._version == 4
    assert p.tolist() == [1.0, 3.0, 4.0] and p.is_leaf and p.grad_fn is None


def test_python_operators_stay_in_place():
    x = gradnb.zeros(3)
    alias = x
    x += 1
    x *= 3
    x -= 1
    x /= 2
    assert x is alias and x.tolist() == [1.0, 1.0, 1.0] and x._version == 4


def test_fast_path_on_integer_tensors():
    i = gradnb.tensor([1, 2, 3])
    i.add_(2)
    i.mul_(gradnb.tensor([1, 0, 1]))
    assert i.tolist() == [3, 0, 5] and i.dtype is gradnb.int64


# -- version counters -------------------------------------------------------------------------------
def test_modifying_a_saved_input_fails_backward():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = (y * y).sum()
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="^one of the variables needed for gradient computation "
                                           "has been modified by an inplace operation"):
        z.backward()


@pytest.mark.torch
def test_saved_output_checks_match_pytorch(torch):
    def scenario(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 1).exp_()
        z = y.sum()
        y.mul_(2.0)
        try:
            z.backward()
        except RuntimeError as exc:
            return str(exc).split(":")[0]
        return "ok"

    assert scenario(gradnb) == scenario(torch) != "ok"


def test_inplace_after_saving_output_is_detected():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 1).exp_()
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.torch
def test_version_counter_behaviour_matches_pytorch(torch):
    def scenario(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        v = y[0]
        z = (y.sigmoid() * 2).sum()
        w = (y * y).sum()
        v.mul_(3.0)  # through a view: bumps y's counter too
        outcomes = []
        for loss in (z, w):
            try:
                loss.backward()
                outcomes.append("ok")
            except RuntimeError as exc:
                outcomes.append(str(exc).split(":")[0])
        return outcomes, y._version

    assert scenario(gradnb) == scenario(torch)


def test_views_share_versions():
    x = gradnb.zeros(2, 3)
    row = x[1]
    flat = x.reshape(6)
    row.add_(1.0)
    assert x._version == row._version == flat._version == 1
    assert flat.tolist() == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]


# -- views ------------------------------------------------------------------------------------------
VIEW_CASES = {
    "row mul_": lambda m, y: y[1].mul_(3.0),
    "column add_": lambda m, y: y[:, 2].add_(y[:, 0].detach()),
    "transposed exp_": lambda m, y: y.t().exp_(),
    "strided relu_": lambda m, y: y[::2, 1:].sub_(1.5).relu_(),
    "row setitem": lambda m, y: y[0].__setitem__(1, 9.0),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(VIEW_CASES))
def test_inplace_on_views_matches_pytorch(torch, name):
    results = []
    for m in (gradnb, torch):
        x = m.tensor(A, requires_grad=True)
        y = x * 1
        VIEW_CASES[name](m, y)
        assert y.grad_fn.name().endswith("CopySlices")
        (y * m.tensor(np.arange(12.0).reshape(3, 4))).sum().backward()
        results.append((y.detach().numpy().copy(), x.grad.numpy().copy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


def test_view_after_inplace_reads_the_new_base():
    x = gradnb.tensor(A, requires_grad=True)
    y = x * 1
    row = y[1]
    row.mul_(2.0)
    assert row.grad_fn.name() == "AsStridedBackward0"
    row.sum().backward()
    expected = np.zeros((3, 4))
    expected[1] = 2.0
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_gradcheck_through_a_view_write():
    def fn(a, b):
        y = a * 1
        y[1:, ::2].mul_(b)
        return y * y

    a = gradnb.tensor(A, dtype=gradnb.float64, requires_grad=True)
    b = gradnb.tensor([1.5, -0.5], dtype=gradnb.float64, requires_grad=True)
    assert gradcheck(fn, (a, b))


def test_expanded_tensor_refuses_inplace():
    x = gradnb.zeros(1, 3).expand(2, 3)
    with pytest.raises(RuntimeError, match="^unsupported operation: more than one element"):
        x.add_(1.0)


# -- dtypes and shapes ------------------------------------------------------------------------------
ERRORS = {
    "float into long": lambda m: m.zeros(3, dtype=m.int64).add_(1.5),
    "float tensor into long": lambda m: m.zeros(3, dtype=m.int64).mul_(m.tensor([1.5, 1, 1])),
    "exp of long": lambda m: m.zeros(3, dtype=m.int64).exp_(),
    "true division of long": lambda m: m.ones(3, dtype=m.int64).div_(2),
    "long into bool": lambda m: m.zeros(3, dtype=m.bool).add_(1),
    "broadcast grows": lambda m: m.zeros(3).add_(m.zeros(2, 3)),
    "mask grows": lambda m: m.zeros(3).masked_fill_(m.ones(2, 3, dtype=m.bool), 1.0),
    "fill_ with a vector": lambda m: m.zeros(3).fill_(m.ones(2)),
    "copy_ size": lambda m: m.zeros(3).copy_(m.ones(2)),
}


def _outcome(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type is part of what is compared
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(torch, name):
    ours = _outcome(lambda: ERRORS[name](gradnb))
    assert ours is not None and ours == _outcome(lambda: ERRORS[name](torch))


def test_failed_op_changes_nothing():
    i = gradnb.tensor([1, 2, 3])
    with pytest.raises(RuntimeError):
        i.add_(0.5)
    assert i.tolist() == [1, 2, 3] and i._version == 0
    y = gradnb.tensor([1.0, 2.0], requires_grad=True) * 1
    node = y.grad_fn
    with pytest.raises(RuntimeError):
        y.add_(gradnb.ones(3, 2))
    assert y.grad_fn is node and y._version == 0 and y.tolist() == [1.0, 2.0]


def test_result_is_cast_to_the_tensor_dtype():
    x = gradnb.zeros(3)
    x.add_(gradnb.tensor([1.0, 2.0, 3.0], dtype=gradnb.float64))
    assert x.dtype is gradnb.float32 and x.tolist() == [1.0, 2.0, 3.0]
    f = gradnb.zeros(3)
    f.add_(gradnb.tensor([1, 2, 3]))
    assert f.dtype is gradnb.float32


# -- overwrites: fill_, copy_, random ---------------------------------------------------------------
@pytest.mark.torch
def test_copy_and_fill_gradients_match_pytorch(torch):
    results = []
    for m in (gradnb, torch):
        x = m.tensor(A, requires_grad=True)
        src = m.tensor(B, requires_grad=True)
        value = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        y = (x * 1).copy_(src)
        z = (x * 1).fill_(value)
        (y * y).sum().backward()
        (z * 3).sum().backward()
        names = [y.grad_fn.name().split("::")[-1], z.grad_fn.name()]
        results.append((x.grad.numpy().copy(), src.grad.numpy().copy(), value.grad.item(), names))
    for a, b in zip(results[0][:3], results[1][:3]):
        np.testing.assert_allclose(a, b)
    assert results[0][3] == results[1][3]


def test_uniform_and_normal_are_seeded_and_fill_in_place():
    w = gradnb.empty(1000)
    with gradnb.no_grad():
        gradnb.manual_seed(3)
        w.uniform_(-2.0, 2.0)
        first = w.tolist()
        gradnb.manual_seed(3)
        w.uniform_(-2.0, 2.0)
    assert w.tolist() == first and -2.0 <= min(first) and max(first) < 2.0
    n = gradnb.empty(2000).normal_(1.0, 0.5)
    assert abs(float(n.mean()) - 1.0) < 0.1 and n._version == 1


def test_random_fill_of_a_non_leaf_has_zero_gradient():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 1).uniform_()
    assert y.grad_fn.name() == "UniformBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize(("args", "node"), [((), "RandomBackward2"), ((5,), "RandomBackward1"),
                                           ((2, 5), "RandomBackward0")])
def test_random_fill_records_pytorchs_node_and_refuses_a_leaf(args, node):
    """``random_`` goes through the in-place machinery: PyTorch's node per overload (its
    gradient zeros), and PyTorch's refusal of a leaf that requires grad."""
    x = gradnb.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * 1).random_(*args)
    assert y.grad_fn.name() == node
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    if len(args) == 2:
        assert all(2 <= v < 5 for v in y.tolist())
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in "
                       "an in-place operation.$"):
        gradnb.ones(3, requires_grad=True).random_(*args)


@pytest.mark.parametrize("shape", [(), (0,), (2, 0)])
def test_zero_dim_and_empty_tensors(shape):
    data = np.full(shape, 1.5)
    x = gradnb.tensor(data, requires_grad=True)
    y = (x * 1).mul_(2.0).add_(1.0).exp_()
    np.testing.assert_allclose(y.detach().numpy(), np.exp(data * 2 + 1))
    y.backward(gradnb.ones(shape, dtype=gradnb.float64))
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(data * 2 + 1))
    with gradnb.no_grad():
        x.zero_()
    assert x._version == 1 and not x._data.any()


def test_create_graph_through_inplace_ops():
    x = gradnb.tensor(1.5, dtype=gradnb.float64, requires_grad=True)
    y = (x * 1).mul_(x).mul_(x)  # x ** 3
    (dy,) = gradnb.autograd.grad(y, x, create_graph=True)
    (d2y,) = gradnb.autograd.grad(dy, x)
    assert abs(dy.item() - 3 * 1.5 ** 2) < 1e-12 and abs(d2y.item() - 6 * 1.5) < 1e-12


@pytest.mark.parametrize("write", ["base", "sibling"])
def test_views_taken_before_an_inplace_write_see_the_new_history(write):
    # PyTorch regenerates such a view's grad_fn (AsStridedBackward0); a stale one would give
    # the gradient of the values before the write, silently.
    a = gradnb.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = a.clone()
    view = b[1:3]
    if write == "base":
        b.mul_(2)
        expected = [0.0, 2.0, 2.0, 0.0]
    else:
        b[0:2].mul_(3)
        expected = [0.0, 3.0, 1.0, 0.0]
    (view * 1).sum().backward()
    assert a.grad.tolist() == expected
    assert view.grad_fn.name() == "AsStridedBackward0"


@pytest.mark.parametrize("write", ["base", "sibling"])
def test_a_views_grad_fn_read_right_after_a_write_is_the_regenerated_node(torch, write):
    # Read directly, before the view is used again: the graph drawn from it must be current.
    seen = []
    for lib in (gradnb, torch):
        a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        b = a.clone()
        view = b[1:3]
        writer = b if write == "base" else b[0:2]
        writer.mul_(2)
        node = view.grad_fn
        below = node.next_functions[0][0]
        below_name = below.name()
        seen.append((node.name(), below_name.replace("torch::", "gradnb::"), view.requires_grad,
                     view.is_leaf))
        if lib is gradnb:
            assert below is b.grad_fn  # the regenerated node reads the base's new history
            assert view.grad_fn is node  # regenerated once, then current
            assert "AsStridedBackward0" in repr(view)
    assert seen[0] == seen[1]


@pytest.mark.torch
def test_stale_view_gradients_match_torch(torch):
    results = []
    for lib in (gradnb, torch):
        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = a * 1
        col = b[:, 1]
        row = b[0]
        b.add_(b.detach() * 0 + 1)
        row.mul_(5)
        (col * lib.tensor([1.0, 10.0])).sum().backward()
        results.append(a.grad.tolist())
    assert results[0] == results[1]


# -- nodes of in-place forms ---------------------------------------------------------------------
def _graph_names(node, depth: int = 3) -> list:
    """Node names down ``depth`` levels of ``next_functions`` (None for a missing edge)."""
    if node is None or depth < 0:
        return [None]
    names = [node.name().replace("torch::", "gradnb::")]
    for child, _ in node.next_functions:
        names += _graph_names(child, depth - 1)
    return names


IN_PLACE_GRAPHS = {
    "eq_ with a tensor": lambda m, h, y: h.eq_(y),
    "eq_ with a number": lambda m, h, y: h.eq_(0.6),
    "lt_ with a tensor": lambda m, h, y: h.lt_(y),
    "ge_ with a number": lambda m, h, y: h.ge_(0.5),
    "ne_ with a 0-d tensor": lambda m, h, y: h.ne_(m.tensor(0.6, dtype=m.float64)),
    "greater_ with a tensor": lambda m, h, y: h.greater_(y),
    "less_equal_ with a number": lambda m, h, y: h.less_equal_(1),
    "not_equal_ with a tensor": lambda m, h, y: h.not_equal_(y),
    "logical_and_ (no derivative: the history stays)": lambda m, h, y: h.logical_and_(y),
    "logical_not_": lambda m, h, y: h.logical_not_(),
    "addcmul_": lambda m, h, y: h.addcmul_(y, y, value=0.5),
    "addcdiv_": lambda m, h, y: h.addcdiv_(y, y + 1, value=0.5),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(IN_PLACE_GRAPHS))
def test_in_place_form_graph_and_gradients_match_pytorch(torch, name):
    # In-place comparisons record PyTorch's EqBackward0/1... (zero gradients); an op without a
    # derivative leaves the tensor's history as it was.
    seen = []
    for m in (gradnb, torch):
        x = m.tensor([0.3, 0.6, 0.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([0.5, 0.6, 1.0], dtype=m.float64, requires_grad=True)
        out = IN_PLACE_GRAPHS[name](m, x * 1, y)
        graph = _graph_names(out.grad_fn)
        out.backward(m.tensor([1.0, 2.0, 3.0], dtype=m.float64))
        seen.append((np.round(out.tolist(), 12).tolist(), out.requires_grad, graph,
                     np.round(x.grad.tolist(), 12).tolist(),
                     None if y.grad is None else np.round(y.grad.tolist(), 12).tolist()))
    assert seen[0] == seen[1]


SELF_WRITES = {
    "t[0] = t[1]": lambda m, t: t.__setitem__(0, t[1]),
    "t[1:3] = t[0]": lambda m, t: t.__setitem__(slice(1, 3), t[0]),
    "t[::2] = t[1::2]": lambda m, t: t.__setitem__(slice(None, None, 2), t[1::2]),
    "t[...] = t.flip(0)": lambda m, t: t.__setitem__(Ellipsis, t.flip(0)),
    "t[...] = t.view(4)": lambda m, t: t.__setitem__(Ellipsis, t.view(4)),
    "t[mask] = t[3]": lambda m, t: t.__setitem__(m.tensor([True, False, True, False]), t[3]),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(SELF_WRITES))
def test_write_of_a_view_of_itself_matches_pytorch(torch, name):
    # The value is linked as it was before the write (SelectBackward0, not an AsStridedBackward0
    # regenerated from the written tensor), and the version is bumped once.
    seen = []
    for m in (gradnb, torch):
        x = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)
        t = x * 1
        SELF_WRITES[name](m, t)
        graph = _graph_names(t.grad_fn, depth=4)
        t.backward(m.tensor([1.0, 10.0, 100.0, 1000.0], dtype=m.float64))
        seen.append((t.tolist(), t._version, graph, x.grad.tolist()))
    assert seen[0] == seen[1]


def test_shared_memory_refused_before_anything_changes():
    t = gradnb.arange(4.0)
    with pytest.raises(RuntimeError, match="^unsupported operation: some elements of the input "
                                           "tensor and the written-to tensor refer to a single "
                                           "memory location"):
        t[1:].add_(t[:-1])
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0] and t._version == 0
