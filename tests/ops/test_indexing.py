"""Indexing: reading (basic, advanced, boolean), writing, gather/scatter and friends.

Values, gradients and grad_fn names are compared with PyTorch on the same inputs (``check``
from conftest, which also runs gradcheck), shapes come from hypothesis (0-d and empty
included), and error messages are compared with PyTorch's.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradnb
from gradnb.autograd import gradgradcheck

FAST = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
X345 = np.random.default_rng(0).standard_normal((3, 4, 5))

# Keys built per module, so tensor indices are gradnb tensors for gradnb and torch tensors for
# torch.
KEYS = {
    "int": lambda m: 1,
    "negative int": lambda m: -1,
    "slice": lambda m: slice(1, None),
    "full slice": lambda m: slice(None),
    "step": lambda m: slice(None, None, 2),
    "None": lambda m: None,
    "Ellipsis": lambda m: Ellipsis,
    "ellipsis then int": lambda m: (Ellipsis, 0),
    "int slice None": lambda m: (1, slice(None), None),
    "full slices alias": lambda m: (slice(0, 3), slice(0, 4)),
    "empty slice": lambda m: slice(2, 1),
    "0-d int tensor": lambda m: m.tensor(1),
    "list": lambda m: [0, 2],
    "repeated list": lambda m: [0, 0, 2, 0],
    "negative list": lambda m: [-1, 0],
    "empty list": lambda m: m.tensor([], dtype=m.int64),
    "int tensor 2-d": lambda m: m.tensor([[0, 1], [1, 2]]),
    "advanced after slice": lambda m: (slice(1, None), [0, 1]),
    "int then advanced": lambda m: (1, slice(None), [0, 1]),
    "separated advanced": lambda m: ([0, 1], slice(None), [1, 1]),
    "advanced and None": lambda m: (None, [0, 1]),
    "bool True": lambda m: True,
    "bool False": lambda m: False,
    "mask 1-d": lambda m: m.tensor([True, False, True]),
    "mask 2-d": lambda m: m.tensor(X345[:, :, 0] > 0),
    "mask full": lambda m: m.tensor(X345 > 0),
    "mask after slice": lambda m: (slice(None), m.tensor([True, False, True, True])),
}


@pytest.mark.parametrize("name", sorted(KEYS))
def test_getitem_matches_pytorch(check, name):
    check(lambda m, x: x[KEYS[name](m)], [X345])


@pytest.mark.parametrize("name", ["repeated list", "mask 2-d", "int then advanced", "int"])
def test_getitem_second_order(check, name):
    check(lambda m, x: x[KEYS[name](m)] ** 2, [X345], gradgrad=True)


def test_index_may_be_numpy_array_list_or_tensor():
    x = gradnb.tensor(X345, requires_grad=True)
    expected = X345[[2, 0, 2]]
    for index in ([2, 0, 2], np.array([2, 0, 2]), gradnb.tensor([2, 0, 2])):
        np.testing.assert_array_equal(x[index].detach().numpy(), expected)


def test_repeated_indices_accumulate():
    x = gradnb.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]


def test_views_share_the_version_counter_and_base():
    x = gradnb.tensor(X345)
    for key in (1, slice(1, None), None, Ellipsis, (0, 1)):
        view = x[key]
        assert view._version_counter is x._version_counter
        assert view._base is x
        assert np.shares_memory(view._data, x._data)
    advanced = x[[0, 1]]
    assert advanced._version_counter is not x._version_counter and advanced._base is None


def test_view_of_view_points_to_the_root_base():
    x = gradnb.tensor(X345)
    assert x[1][2]._base is x


def test_zero_dim_reads():
    x = gradnb.tensor(2.0, requires_grad=True)
    assert x[None].shape == (1,)
    assert x[...].shape == ()
    assert x[True].shape == (1,)
    x[None].sum().backward()
    assert x.grad.item() == 1.0


# -- hypothesis: keys of every kind on shapes with 0-d and empty sides ----------------------------
def _forward_slices(key):
    parts = key if isinstance(key, tuple) else (key,)
    return all(not isinstance(p, slice) or p.step is None or p.step > 0 for p in parts)


@st.composite
def basic_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    key = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True).filter(
        _forward_slices))
    return shape, key


@FAST
@given(case=basic_cases(), seed=st.integers(0, 2**16))
def test_basic_indexing_matches_numpy_and_gradient(case, seed):
    shape, key = case
    data = np.random.default_rng(seed).standard_normal(shape)
    x = gradnb.tensor(data, requires_grad=True)
    y = x[key]
    np.testing.assert_array_equal(y.detach().numpy(), data[key])
    upstream = np.random.default_rng(seed + 1).standard_normal(y.shape)
    y.backward(gradnb.tensor(upstream))
    expected = np.zeros(shape)
    expected[key] += upstream
    np.testing.assert_allclose(x.grad.numpy(), expected)


@st.composite
def advanced_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    key = draw(hnp.integer_array_indices(shape, result_shape=hnp.array_shapes(
        min_dims=0, max_dims=2, min_side=0, max_side=3)))
    return shape, key


@FAST
@given(case=advanced_cases(), seed=st.integers(0, 2**16))
def test_integer_array_indexing_accumulates_like_add_at(case, seed):
    shape, key = case
    data = np.random.default_rng(seed).standard_normal(shape)
    x = gradnb.tensor(data, requires_grad=True)
    y = x[key]
    np.testing.assert_array_equal(y.detach().numpy(), data[key])
    upstream = np.random.default_rng(seed + 1).standard_normal(y.shape)
    y.backward(gradnb.tensor(upstream))
    expected = np.zeros(shape)
    np.add.at(expected, key, upstream)
    np.testing.assert_allclose(x.grad.numpy(), expected)


@FAST
@given(data=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0,
                                                    max_side=4),
                       elements=st.floats(-5, 5)))
def test_boolean_mask_reads_and_scatters_back(data):
    x = gradnb.tensor(data, requires_grad=True)
    mask = data > 0
    y = x[gradnb.tensor(mask)]
    np.testing.assert_array_equal(y.detach().numpy(), data[mask])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), mask.astype(float))


# -- errors ---------------------------------------------------------------------------------------
BAD_KEYS = {
    "int out of range": lambda m: 5,
    "negative out of range": lambda m: -4,
    "list out of range": lambda m: [0, 5],
    "too many": lambda m: (1, 2, 3, 4),
    "mask shape": lambda m: m.tensor([True, False]),
    "mask shape later dim": lambda m: (slice(None), m.tensor([True, False])),
    "float tensor": lambda m: m.tensor([0.5]),
    "negative step": lambda m: slice(None, None, -1),
    "float": lambda m: 0.5,
}


def _outcome(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type is part of what is compared
        return type(exc).__name__, str(exc).replace("torch.", "gradnb.")
    return None


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(BAD_KEYS))
def test_getitem_errors_match_pytorch(torch, name):
    ours = _outcome(lambda: gradnb.tensor(X345)[BAD_KEYS[name](gradnb)])
    theirs = _outcome(lambda: torch.tensor(X345)[BAD_KEYS[name](torch)])
    assert ours is not None and ours == theirs


@pytest.mark.torch
def test_zero_dim_int_index_error_matches_pytorch(torch):
    ours = _outcome(lambda: gradnb.tensor(1.0)[0])
    assert ours == _outcome(lambda: torch.tensor(1.0)[0])


# -- writing: t[key] = value ----------------------------------------------------------------------
SET_KEYS = {
    "int": lambda m: 1,
    "slice": lambda m: slice(1, None),
    "tuple": lambda m: (1, slice(None)),
    "column": lambda m: (slice(None), 2),
    "list": lambda m: [0, 2],
    "mask": lambda m: m.tensor(X345[:, :, 0] > 0),
    "int then advanced": lambda m: (1, slice(None), [0, 1]),
    "ellipsis": lambda m: Ellipsis,
}


def _torch_name(node) -> str:
    return node.name().split("::")[-1]


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(SET_KEYS))
@pytest.mark.parametrize("value_kind", ["scalar", "tensor"])
def test_setitem_values_and_gradients_match_pytorch(torch, name, value_kind):
    results = []
    for m in (gradnb, torch):
        x = m.tensor(X345, requires_grad=True)
        y = x * 1.0
        region_shape = tuple(y.detach()[SET_KEYS[name](m)].shape)
        value = m.tensor(np.linspace(-1, 1, int(np.prod(region_shape[-1:], dtype=int))).reshape(
            region_shape[-1:]), requires_grad=True) if value_kind == "tensor" else 7.5
        y[SET_KEYS[name](m)] = value
        y.backward(m.tensor(np.arange(60.0).reshape(3, 4, 5)))
        grads = [x.grad.numpy()] + ([value.grad.numpy()] if value_kind == "tensor" else [])
        version = y._version
        results.append((y.detach().numpy(), grads, version, _torch_name(y.grad_fn)))
    ours, theirs = results
    np.testing.assert_allclose(ours[0], theirs[0])
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b)
    assert ours[2:] == theirs[2:]


def test_setitem_gradcheck_for_target_and_value():
    from gradnb.autograd import gradcheck

    def fn(x, v):
        y = x * 1.0
        y[1:, [0, 2]] = v
        return y * y

    x = gradnb.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    v = gradnb.tensor([0.5, -2.0], dtype=gradnb.float64, requires_grad=True)
    assert gradcheck(fn, (x, v))


def test_setitem_without_grad_writes_in_place_and_bumps_version():
    x = gradnb.zeros(3, 4)
    data = x._data
    x[1] = 2.0
    x[[0, 2], 0] = gradnb.tensor([5.0, 6.0])
    assert x._data is data and x._version == 2
    assert x.tolist()[0][0] == 5.0 and x.tolist()[1] == [2.0] * 4 and x.grad_fn is None


def test_setitem_value_requiring_grad_makes_target_require_grad():
    x = gradnb.zeros(3)
    w = gradnb.tensor(2.0, requires_grad=True)
    x[1] = w
    assert x.requires_grad and x.grad_fn.name() == "gradnb::autograd::CopySlices"
    (x * gradnb.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert w.grad.item() == 10.0


def test_setitem_casts_to_the_tensor_dtype():
    x = gradnb.zeros(3, dtype=gradnb.int64)
    x[0] = 1.7
    x[1:] = gradnb.tensor([2.9, 3.2])
    assert x.tolist() == [1, 2, 3] and x.dtype is gradnb.int64


@pytest.mark.torch
@pytest.mark.parametrize("key", [0, slice(None), [0], Ellipsis, (0, slice(1, None))])
def test_setitem_on_leaf_raises_and_changes_nothing(torch, key):
    x = gradnb.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    ours = _outcome(lambda: x.__setitem__(key, 0.0))
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert ours == _outcome(lambda: t.__setitem__(key, 0.0))
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]] and x._version == 0 and x.is_leaf


@pytest.mark.torch
@pytest.mark.parametrize("key,shape", [(0, (2,)), ([0, 1], (3,)), (0, (2, 4))])
def test_setitem_shape_errors_match_pytorch(torch, key, shape):
    x = gradnb.zeros(3, 4)
    ours = _outcome(lambda: x.__setitem__(key, gradnb.ones(shape)))
    assert ours == _outcome(lambda: torch.zeros(3, 4).__setitem__(key, torch.ones(shape)))
    assert x._version == 0 and not x._data.any()


def test_setitem_invalidates_saved_tensors():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    z = (y * y).sum()
    y[0] = 5.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_setitem_through_a_view_rebases_the_base():
    x = gradnb.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x * 1.0
    row = y[1]
    row[0] = 10.0
    assert y.grad_fn.name() == "gradnb::autograd::CopySlices" and row.grad_fn.name() == "AsStridedBackward0"
    assert y.tolist()[1][0] == 10.0
    (y * y).sum().backward()
    expected = 2 * np.arange(6.0).reshape(2, 3)
    expected[1, 0] = 0.0
    np.testing.assert_allclose(x.grad.numpy(), expected)


# -- gather / scatter / index_select / masks ------------------------------------------------------
A34 = np.random.default_rng(1).standard_normal((3, 4))
IDX = [[0, 2, 2, 1], [2, 2, 0, 0]]


@pytest.mark.parametrize("dim,index", [(0, IDX), (1, [[0, 0], [3, 1], [2, 2]]), (-1, [[1], [1], [0]])])
def test_gather(check, dim, index):
    check(lambda m, x: x.gather(dim, m.tensor(index)), [A34], gradgrad=True)


def test_gather_zero_dim(check):
    check(lambda m, x: x.gather(0, m.tensor(0)), [np.array(2.5)])


def test_scatter_tensor_source(check):
    src = np.random.default_rng(2).standard_normal((2, 4))
    index = [[0, 1, 2, 0], [2, 0, 1, 1]]
    check(lambda m, x, s: x.scatter(0, m.tensor(index), s), [A34, src])


def test_scatter_source_larger_than_index_gets_zero_gradient_outside():
    # PyTorch's own backward rejects this case; the gradient here is the natural one.
    from gradnb.autograd import gradcheck

    index = gradnb.tensor([[0, 1, 2, 0], [2, 0, 1, 1]])
    x = gradnb.tensor(A34, requires_grad=True)
    src = gradnb.tensor(np.ones((3, 5)), requires_grad=True)
    assert gradcheck(lambda a, s: a.scatter(0, index, s), (x, src))
    x.scatter(0, index, src).sum().backward()
    assert src.grad.numpy()[:2, :4].all() and not src.grad.numpy()[2:].any()


def test_scatter_value(check):
    check(lambda m, x: x.scatter(1, m.tensor([[0, 3], [1, 1], [2, 0]]), 4.5), [A34])


def test_scatter_add_repeated_indices(check):
    src = np.random.default_rng(3).standard_normal((2, 4))
    check(lambda m, x, s: x.scatter_add(0, m.tensor(IDX), s), [A34, src], gradgrad=True)


@pytest.mark.parametrize("dim,index", [(0, [2, 0, 2]), (1, [3]), (1, [])])
def test_index_select(check, dim, index):
    check(lambda m, x: x.index_select(dim, m.tensor(index, dtype=m.int64)), [A34],
          gradgrad=True)


def test_index_add(check):
    src = np.random.default_rng(4).standard_normal((3, 3))
    check(lambda m, x, s: x.index_add(1, m.tensor([0, 3, 0]), s, alpha=2.0), [A34, src])


def test_index_put_accumulate(check):
    values = np.array([1.0, 2.0, 3.0])
    check(lambda m, x, v: x.index_put((m.tensor([0, 0, 2]), m.tensor([1, 1, 3])), v,
                                      accumulate=True), [A34, values])


@pytest.mark.parametrize("mask_shape", [(3, 4), (4,), (3, 1)])
def test_masked_fill_scalar_broadcast_mask(check, mask_shape):
    mask = np.random.default_rng(5).standard_normal(mask_shape) > 0
    check(lambda m, x: x.masked_fill(m.tensor(mask), -1.5), [A34], gradgrad=True)


def test_masked_fill_tensor_value(check):
    check(lambda m, x, v: x.masked_fill(m.tensor(A34 > 0), v), [A34, np.array(0.25)])


@pytest.mark.parametrize("write", ["masked_fill", "index_put"])
def test_overwritten_entries_get_zero_gradient_even_from_inf(torch, write):
    """PyTorch writes zeros into the gradient where a value was overwritten, so an inf upstream
    (``sum / 0``) leaves 0 there, not ``0 * inf`` = NaN."""
    def run(m):
        x = m.tensor(A34, requires_grad=True)
        if write == "masked_fill":
            y = x.masked_fill(m.tensor(A34 > 0), 0.0)
        else:
            y = x.index_put((m.tensor([0, 2]),), m.tensor(0.0, dtype=m.float64))
        (y.sum() / 0.0).backward()
        return x.grad.numpy()

    np.testing.assert_array_equal(run(gradnb), run(torch))


@pytest.mark.parametrize("mask_shape", [(3, 4), (4,), ()])
def test_masked_select(check, mask_shape):
    mask = np.random.default_rng(6).standard_normal(mask_shape) > -0.3
    check(lambda m, x: x.masked_select(m.tensor(mask)), [A34])


@pytest.mark.torch
@pytest.mark.parametrize("data", [A34 > 0, np.array(3.0), np.zeros((0, 2)), np.array([0, 1, 2])])
def test_nonzero_matches_pytorch(torch, data):
    np.testing.assert_array_equal(gradnb.tensor(data).nonzero().numpy(),
                                  torch.tensor(data).nonzero().numpy())
    ours = gradnb.tensor(data).nonzero(as_tuple=True)
    theirs = torch.tensor(data).nonzero(as_tuple=True)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("dim,index", [(1, [[0], [1], [2]]), (1, [[0, 3]]), (None, [0, 11, 0])])
def test_take_along_dim(check, dim, index):
    check(lambda m, x: x.take_along_dim(m.tensor(index), dim), [A34])


def test_select(check):
    check(lambda m, x: x.select(1, -1), [A34])


def test_iteration_yields_rows_with_select():
    x = gradnb.tensor(A34, requires_grad=True)
    rows = list(x)
    assert len(rows) == 3 and rows[0].grad_fn.name() == "SelectBackward0"
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(gradnb.tensor(1.0))


BAD_CALLS = {
    "gather float index": lambda m, x: x.gather(1, m.tensor([[0.0]])),
    "gather rank": lambda m, x: x.gather(1, m.tensor([0, 1])),
    "gather size": lambda m, x: x.gather(1, m.zeros(4, 1, dtype=m.int64)),
    "gather bounds": lambda m, x: x.gather(1, m.tensor([[5]])),
    "index_select matrix": lambda m, x: x.index_select(0, m.tensor([[0]])),
    "index_select bounds": lambda m, x: x.index_select(0, m.tensor([5])),
    "index_select float": lambda m, x: x.index_select(0, m.tensor([0.0])),
    "masked_fill float mask": lambda m, x: x.masked_fill(m.ones(4), 1.0),
    "masked_fill value dims": lambda m, x: x.masked_fill(m.ones(4, dtype=m.bool), m.ones(2)),
    "masked_select float mask": lambda m, x: x.masked_select(m.ones(4)),
    "scatter bounds": lambda m, x: x.scatter(0, m.tensor([[5]]), 1.0),
    "scatter size": lambda m, x: x.scatter(0, m.tensor([[0, 0, 0, 0, 0]]), 1.0),
    "scatter src size": lambda m, x: x.scatter(0, m.tensor([[0, 0]]),
                                                   m.ones(1, 1, dtype=m.float64)),
    "scatter dtype": lambda m, x: x.scatter(0, m.tensor([[0]]), m.ones(1, 1)),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_op_errors_match_pytorch(torch, name):
    ours = _outcome(lambda: BAD_CALLS[name](gradnb, gradnb.tensor(A34)))
    theirs = _outcome(lambda: BAD_CALLS[name](torch, torch.tensor(A34)))
    assert ours is not None and ours == theirs


@st.composite
def write_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    key = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True).filter(
        _forward_slices) | (hnp.integer_array_indices(shape) if shape and min(shape) else
                            st.just(Ellipsis)))
    return shape, key


@FAST
@given(case=write_cases(), seed=st.integers(0, 2**16))
def test_setitem_matches_numpy_and_splits_the_gradient(case, seed):
    shape, key = case
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape)
    region_shape = data[key].shape
    values = rng.standard_normal(region_shape)
    x = gradnb.tensor(data, requires_grad=True)
    v = gradnb.tensor(values, requires_grad=True)
    y = x * 1.0
    y[key] = v
    expected = data.copy()
    expected[key] = values
    np.testing.assert_array_equal(y.detach().numpy(), expected)
    upstream = rng.standard_normal(shape)
    y.backward(gradnb.tensor(upstream))
    written = np.zeros(shape, dtype=bool)
    written[key] = True
    np.testing.assert_allclose(x.grad.numpy(), np.where(written, 0.0, upstream))
    if not isinstance(key, tuple) or not any(isinstance(k, np.ndarray) for k in key):
        np.testing.assert_allclose(v.grad.numpy(), upstream[key])


def test_setitem_second_order():
    from gradnb.autograd import gradgradcheck

    def fn(x, v):
        y = x * x
        y[0, 1:] = v * v
        return y

    x = gradnb.tensor(A34, requires_grad=True)
    v = gradnb.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    assert gradgradcheck(fn, (x, v))


def test_observers_see_the_nodes_of_writes():
    from gradnb.autograd import events

    class Recorder:
        def __init__(self):
            self.names = []

        def op_recorded(self, node, outputs):
            self.names.append(node.name().rpartition("::")[2])

    recorder = Recorder()
    x = gradnb.tensor(A34, requires_grad=True)
    with events.subscribe(recorder):
        y = x * 1.0
        y[0] = 1.0
        y[1].mul_(2.0)
    assert recorder.names[:2] == ["MulBackward0", "CopySlices"]
    assert recorder.names[-2:] == ["CopySlices", "AsStridedBackward0"]


@pytest.mark.parametrize("in_shape, index_shape", [((), (1,)), ((3,), ()), ((), ()), ((5,), (2, 0))])
def test_gather_reads_0d_as_1d_and_skips_checks_for_an_empty_index(torch, in_shape, index_shape):
    data = np.arange(1.0, 1.0 + np.prod(in_shape)).reshape(in_shape)
    index = np.zeros(index_shape, dtype=np.int64)
    x = gradnb.tensor(data, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out = gradnb.gather(x, 0, gradnb.tensor(index))
    t_out = torch.gather(tx, 0, torch.tensor(index))
    assert tuple(out.shape) == tuple(t_out.shape)
    np.testing.assert_array_equal(out.detach().numpy(), t_out.detach().numpy())
    (out * 2).sum().backward()
    (t_out * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dimensions"):
        gradnb.gather(gradnb.zeros(()), 0, gradnb.zeros((2, 2), dtype=gradnb.int64))


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_matches_torch(torch, accumulate):
    data = np.arange(9.0).reshape(3, 3)
    index = np.array([[0, -1], [4, 4 if accumulate else 2]])
    src = np.array([[10.0, 20.0], [30.0, 40.0]])
    x, s = gradnb.tensor(data, requires_grad=True), gradnb.tensor(src, requires_grad=True)
    tx, ts = torch.tensor(data, requires_grad=True), torch.tensor(src, requires_grad=True)
    out = gradnb.put(x, gradnb.tensor(index), s, accumulate)
    t_out = torch.put(tx, torch.tensor(index), ts, accumulate)
    np.testing.assert_array_equal(out.detach().numpy(), t_out.detach().numpy())
    weights = np.arange(1.0, 10.0).reshape(3, 3)
    (out * gradnb.tensor(weights)).sum().backward()
    (t_out * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(s.grad.numpy(), ts.grad.numpy())
    assert gradgradcheck(lambda a, b: gradnb.put(a, gradnb.tensor(index), b, accumulate) ** 2,
                         (x, s))
    y = x.detach().clone()
    y.put_(gradnb.tensor(index), s.detach(), accumulate)
    np.testing.assert_array_equal(y.numpy(), t_out.detach().numpy())


def test_put_errors_match_torch():
    x = gradnb.zeros(3, 3)
    with pytest.raises(IndexError, match="out of range: tried to access index 9 on a tensor of 9"):
        x.put(gradnb.tensor([9]), gradnb.tensor([1.0]))
    with pytest.raises(IndexError, match="Expected source and index to have the same number"):
        x.put(gradnb.tensor([1]), gradnb.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="Expected a long tensor for index, but got Float"):
        x.put(gradnb.tensor([1.0]), gradnb.tensor([1.0]))


def _packed(fn):
    """What ``fn()`` hands to saved_tensors_hooks' pack hook, and its output."""
    seen = []

    def pack(t):
        seen.append(t)
        return t

    with gradnb.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return seen, out


def test_index_nodes_save_what_pytorch_saves():
    x = gradnb.randn(4, 3, requires_grad=True)
    index = gradnb.tensor([[0, 2, 1], [3, 3, 0]])
    seen, out = _packed(lambda: x.gather(-2, index))
    assert out.grad_fn.name() == "GatherBackward0"
    assert seen[0] is index and seen[1] is x  # PyTorch's pack order: index, self
    out = x.gather(-2, index)
    assert out.grad_fn._saved_index is index and out.grad_fn._saved_self is x
    assert out.grad_fn._saved_dim == 2**64 - 2  # a negative dim shows unsigned, as PyTorch's
    assert out.grad_fn._saved_sparse_grad is False

    rows = gradnb.tensor([1, 3])
    y = x[rows, 1:]
    assert y.grad_fn.name() == "IndexBackward0"
    assert y.grad_fn._saved_indices == (rows,)
    assert y.grad_fn._saved_self_sym_sizes == (4, 2)
    z = x[:, [0, 2]]
    assert z.grad_fn._saved_indices[0] is None
    assert z.grad_fn._saved_indices[1].tolist() == [0, 2]

    mask = x > 0
    seen, out = _packed(lambda: x.masked_select(mask))
    assert seen[0] is mask and seen[1] is x
    s = x[-1]
    assert (s.grad_fn._saved_dim, s.grad_fn._saved_index) == (0, 2**64 - 1)


def test_rebuilt_nodes_keep_their_gradients():
    x = gradnb.randn(3, 4, requires_grad=True)
    src = gradnb.randn(3, 2, requires_grad=True)
    index = gradnb.tensor([3, 1])
    out = x.index_copy(1, index, src)
    assert out.grad_fn.name() == "IndexCopyBackward0"
    out.backward(gradnb.ones(3, 4))
    assert x.grad[:, [1, 3]].abs().sum().item() == 0 and src.grad.sum().item() == 6
    value = gradnb.tensor(2.0, requires_grad=True)
    out = x.index_fill(0, gradnb.tensor([0, 2]), value)
    assert out.grad_fn.name() == "IndexFillBackward1"
    out.sum().backward()
    assert value.grad.item() == 8
    mask = gradnb.tensor([[True, False, True, False]] * 3)
    assert gradgradcheck(lambda a, b: a.masked_scatter(mask, b) ** 2,
                         (x.detach().double().requires_grad_(),
                          gradnb.randn(12, dtype=gradnb.float64, requires_grad=True)))
