"""Shape ops: values, gradients (gradcheck and PyTorch), views and version counters, multi-output
nodes, 0-d and empty inputs, grad_fn names, error messages and second derivatives.

The hypothesis tests draw shapes with 0 to 3 dims and sides 0 to 4 and arguments in and out of
range. Where PyTorch raises, gradnb must raise the same exception type with the same first line;
where it does not, values, dtypes, grad_fn names and gradients of every output must agree.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck

SETTINGS = settings(max_examples=40, deadline=None, report_multiple_bugs=False,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


# -- helpers ---------------------------------------------------------------------------------------
def _values(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _tensors(module, arrays):
    return [module.tensor(a, dtype=module.float64, requires_grad=True) for a in arrays]


def _outputs(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else ""


def assert_matches_torch(torch, fn, arrays):
    """Same error as PyTorch, or the same outputs, grad_fn names and input gradients (for a
    random upstream gradient on every output). Returns gradnb's outputs, or None."""
    theirs_in, ours_in = _tensors(torch, arrays), _tensors(gradnb, arrays)
    try:
        theirs = fn(torch, *theirs_in)
    except Exception as exc:  # noqa: BLE001 - whatever PyTorch raises, gradnb must raise too
        with pytest.raises(type(exc)) as info:
            fn(gradnb, *ours_in)
        assert _first_line(info.value) == _first_line(exc)
        return None
    ours = fn(gradnb, *ours_in)
    rng = np.random.default_rng(1)
    ours_loss, theirs_loss = [], []
    for o, t in zip(_outputs(ours), _outputs(theirs), strict=True):
        assert tuple(o.shape) == tuple(t.shape)
        assert o.dtype.name == str(t.dtype).removeprefix("torch.")
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-12)
        assert (o.grad_fn is None) == (t.grad_fn is None)
        if t.grad_fn is not None:
            assert o.grad_fn.name() == t.grad_fn.name()
            assert o._output_nr == t.output_nr
            w = rng.standard_normal(tuple(t.shape))
            ours_loss.append((o * gradnb.tensor(w)).sum())
            theirs_loss.append((t * torch.tensor(w)).sum())
    if theirs_loss:
        sum(theirs_loss).backward()
        sum(ours_loss).backward()
        for o, t in zip(ours_in, theirs_in, strict=True):
            assert (o.grad is None) == (t.grad is None)
            if t.grad is not None:
                np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    return ours


def assert_gradcheck(fn, arrays, *, second_order=False):
    """gradcheck (and gradgradcheck) of ``fn(gradnb, *tensors)`` in float64; multi-output ops
    are checked through every output."""
    inputs = tuple(_tensors(gradnb, arrays))

    def run(*ts):
        out = fn(gradnb, *ts)
        return tuple(out) if isinstance(out, (tuple, list)) else out

    outs = _outputs(run(*inputs))
    if not any(o.requires_grad for o in outs) or not sum(a.size for a in arrays):
        return
    assert gradcheck(run, inputs)
    if second_order:
        assert gradgradcheck(run, inputs)


def _check(torch, fn, arrays):
    if assert_matches_torch(torch, fn, arrays) is not None:
        assert_gradcheck(fn, arrays)


def _dim(draw, ndim, extra=0):
    """A dim for a tensor of ``ndim`` dims, sometimes just out of range."""
    n = max(ndim + extra, 1)
    return draw(st.integers(-n - 1, n))


# -- hypothesis: every op against PyTorch ------------------------------------------------------------
@pytest.mark.torch
@SETTINGS
@given(shape=SHAPES, data=st.data())
def test_squeeze_and_unsqueeze(torch, shape, data):
    x = _values(shape)
    nd = len(shape)
    dim = _dim(data.draw, nd)
    dims = tuple(data.draw(st.lists(st.integers(-max(nd, 1), max(nd, 1) - 1), max_size=3)))
    _check(torch, lambda m, t: t.squeeze(), [x])
    _check(torch, lambda m, t: t.squeeze(dim), [x])
    new_dim = _dim(data.draw, nd, 1)
    _check(torch, lambda m, t: t.squeeze(dims), [x])
    _check(torch, lambda m, t: t.unsqueeze(new_dim), [x])


@pytest.mark.torch
@SETTINGS
@given(shape=SHAPES, data=st.data(), transposed=st.booleans())
def test_flatten_and_unflatten(torch, shape, data, transposed):
    x = _values(shape)
    nd = len(shape)

    def fn(m, t):
        t = t.transpose(0, -1) if transposed and nd else t  # non-contiguous: a copy, not a view
        return t.flatten(start, end)

    start, end = _dim(data.draw, nd), _dim(data.draw, nd)
    _check(torch, fn, [x])
    if nd:
        dim = data.draw(st.integers(0, nd - 1))
        size = shape[dim]
        sizes = data.draw(st.sampled_from([(size,), (1, size), (size, 1), (-1, 1), (2, -1),
                                           (size, 2)]))
        _check(torch, lambda m, t: t.unflatten(dim, sizes), [x])


@pytest.mark.torch
@SETTINGS
@given(shape=SHAPES, data=st.data(), count=st.integers(1, 3))
def test_cat_and_stack(torch, shape, data, count):
    nd = len(shape)
    dim = _dim(data.draw, nd)
    arrays = []
    for i in range(count):
        s = list(shape)
        if nd and data.draw(st.booleans()):
            s[dim % nd if -nd <= dim < nd else 0] = data.draw(st.integers(0, 3))
        arrays.append(_values(tuple(s), i))
    _check(torch, lambda m, *ts: m.cat(ts, dim), arrays)
    new_dim = _dim(data.draw, nd, 1)
    _check(torch, lambda m, *ts: m.concat(ts, dim=dim), arrays)
    _check(torch, lambda m, *ts: m.stack(ts, new_dim), arrays)


@pytest.mark.torch
@SETTINGS
@given(shape=SHAPES, data=st.data())
def test_split_chunk_unbind(torch, shape, data):
    x = _values(shape)
    nd = len(shape)
    dim = _dim(data.draw, nd)
    size = shape[dim % nd] if nd and -nd <= dim < nd else 0
    split_size = data.draw(st.integers(-1, 5))
    parts = data.draw(st.lists(st.integers(0, size), max_size=3))
    sections = parts + [size - sum(parts)] if sum(parts) <= size else parts
    _check(torch, lambda m, t: t.split(split_size, dim), [x])
    _check(torch, lambda m, t: t.split(sections, dim), [x])
    chunks = data.draw(st.integers(0, 5))
    _check(torch, lambda m, t: t.chunk(chunks, dim), [x])
    _check(torch, lambda m, t: t.unbind(dim), [x])


@pytest.mark.torch
@SETTINGS
@given(shape=SHAPES, data=st.data())
def test_narrow(torch, shape, data):
    x = _values(shape)
    nd = len(shape)
    dim = _dim(data.draw, nd)
    start, length = data.draw(st.integers(-5, 5)), data.draw(st.integers(-1, 5))
    _check(torch, lambda m, t: m.narrow(t, dim, start, length), [x])


@pytest.mark.torch
@SETTINGS
@given(shape=SHAPES, data=st.data())
def test_repeat_and_tile(torch, shape, data):
    x = _values(shape)
    nd = len(shape)
    sizes = tuple(data.draw(st.lists(st.integers(0, 3), min_size=max(nd - 1, 0), max_size=nd + 2)))
    _check(torch, lambda m, t: t.repeat(*sizes), [x])
    _check(torch, lambda m, t: t.tile(sizes), [x])


@pytest.mark.torch
@SETTINGS
@given(shape=SHAPES, data=st.data())
def test_flip_roll_movedim(torch, shape, data):
    x = _values(shape)
    nd = len(shape)
    n = max(nd, 1)
    dims = tuple(data.draw(st.lists(st.integers(-n, n - 1), max_size=3)))
    shifts = tuple(data.draw(st.lists(st.integers(-5, 5), min_size=len(dims),
                                      max_size=len(dims) + 1)))
    shift = data.draw(st.integers(-5, 5))
    _check(torch, lambda m, t: t.flip(dims), [x])
    _check(torch, lambda m, t: t.roll(shift), [x])
    _check(torch, lambda m, t: t.roll(shifts, dims), [x])
    if nd:
        source = tuple(data.draw(st.lists(st.integers(-nd, nd - 1), max_size=nd)))
        destination = tuple(data.draw(st.lists(st.integers(-nd, nd - 1), min_size=len(source),
                                                max_size=len(source))))
        _check(torch, lambda m, t: t.movedim(source, destination), [x])
        _check(torch, lambda m, t: m.moveaxis(t, 0, -1), [x])


# -- fixed cases that run without PyTorch -------------------------------------------------------------
GRADCHECKS = {
    "squeeze": lambda m, t: t.reshape(2, 1, 3).squeeze(1),
    "unsqueeze": lambda m, t: t.unsqueeze(1),
    "flatten": lambda m, t: t.t().flatten(),
    "unflatten": lambda m, t: t.unflatten(1, (3, 1)),
    "cat": lambda m, t: m.cat([t, t * 2.0, t[:1]], 0),
    "stack": lambda m, t: m.stack([t, t * t], 2),
    "split": lambda m, t: t.split(2, 1),
    "split_sizes": lambda m, t: t.split([1, 0, 2], 1),
    "chunk": lambda m, t: t.chunk(2, 1),
    "unbind": lambda m, t: t.unbind(1),
    "narrow": lambda m, t: t.narrow(1, -2, 2),
    "repeat": lambda m, t: t.repeat(2, 1, 3),
    "tile": lambda m, t: t.tile((2,)),
    "flip": lambda m, t: t.flip(0, 1),
    "roll": lambda m, t: t.roll((1, -1), (0, 1)),
    "movedim": lambda m, t: t.unsqueeze(0).movedim((0, 1), (2, 0)),
    "contiguous": lambda m, t: t.t().contiguous(),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck_and_second_order(name):
    assert_gradcheck(GRADCHECKS[name], [_values((2, 3))], second_order=True)


def test_second_order_through_a_split_piece_and_squares():
    x = gradnb.tensor(_values((2, 4)), dtype=gradnb.float64, requires_grad=True)
    first, _ = x.split(2, 1)
    (g,) = gradnb.autograd.grad((first ** 3).sum(), x, create_graph=True)
    (gg,) = gradnb.autograd.grad(g.sum(), x)
    expected = np.zeros((2, 4))
    expected[:, :2] = 6 * x.detach().numpy()[:, :2]
    np.testing.assert_allclose(gg.numpy(), expected)


GRAD_FN_NAMES = [
    (lambda x: x.squeeze(), "SqueezeBackward0"), (lambda x: x.squeeze(1), "SqueezeBackward1"),
    (lambda x: x.squeeze((0, 1)), "SqueezeBackward2"), (lambda x: x.unsqueeze(0), "UnsqueezeBackward0"),
    (lambda x: x.flatten(), "ViewBackward0"), (lambda x: x.transpose(0, 2).flatten(), "UnsafeViewBackward0"),
    (lambda x: x.transpose(0, 2).flatten(0, 1), "ReshapeAliasBackward0"),
    (lambda x: x.unflatten(2, (3, 1)), "ViewBackward0"), (lambda x: gradnb.cat([x, x]), "CatBackward0"),
    (lambda x: gradnb.stack([x, x]), "StackBackward0"), (lambda x: x.split(2, 2)[0], "SplitBackward0"),
    (lambda x: x.split([1, 2], 2)[1], "SplitWithSizesBackward0"),
    (lambda x: x.chunk(3, 2)[2], "SplitBackward0"), (lambda x: x.unbind(2)[1], "UnbindBackward0"),
    (lambda x: gradnb.narrow(x, 2, 0, 2), "SliceBackward0"),
    (lambda x: x.transpose(0, 2).contiguous(), "CloneBackward0"), (lambda x: x.repeat(2, 1, 1), "RepeatBackward0"),
    (lambda x: x.tile((2,)), "RepeatBackward0"), (lambda x: x.flip(0), "FlipBackward0"),
    (lambda x: x.roll(1), "RollBackward0"), (lambda x: x.movedim(0, 2), "PermuteBackward0"),
    (lambda x: x.swapdims(0, 1), "TransposeBackward0"),
]


@pytest.mark.parametrize(("op", "name"), GRAD_FN_NAMES)
def test_grad_fn_names(op, name):
    x = gradnb.zeros(2, 1, 3, requires_grad=True)
    assert op(x).grad_fn.name() == name


def test_flatten_of_one_dim_and_contiguous_of_contiguous_return_the_input():
    x = gradnb.zeros(2, 3, requires_grad=True)
    assert x.flatten(1, 1) is x
    assert x.contiguous() is x
    assert gradnb.tensor(1.0).flatten().shape == (1,)


def test_multi_output_nodes_number_their_outputs_and_fill_missing_gradients():
    x = gradnb.tensor(_values((2, 5)), requires_grad=True)
    pieces = x.split(2, 1)
    assert [p._output_nr for p in pieces] == [0, 1, 2]
    assert len({id(p.grad_fn) for p in pieces}) == 1
    assert pieces[0].grad_fn.num_outputs == 3
    (pieces[1] * 3.0).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 3.0, 3.0, 0.0]] * 2
    y = gradnb.tensor(_values((3, 2)), requires_grad=True)
    rows = y.unbind(0)
    (rows[0] + rows[2]).sum().backward()
    assert y.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]


VIEWS = {
    "squeeze": lambda t: t.squeeze(), "unsqueeze": lambda t: t.unsqueeze(0),
    "flatten": lambda t: t.flatten(), "unflatten": lambda t: t.unflatten(1, (1, 3)),
    "split": lambda t: t.split(1, 1)[1], "chunk": lambda t: t.chunk(2, 0)[0],
    "unbind": lambda t: t.unbind(0)[1], "narrow": lambda t: t.narrow(1, 1, 2),
    "movedim": lambda t: t.movedim(0, 1),
}
COPIES = {
    "cat": lambda t: gradnb.cat([t, t]), "stack": lambda t: gradnb.stack([t]),
    "repeat": lambda t: t.repeat(1, 1), "flip": lambda t: t.flip(0), "roll": lambda t: t.roll(1),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_data_and_version_counter(name):
    base = gradnb.zeros(2, 3)
    view = VIEWS[name](base)
    assert view._version_counter is base._version_counter
    view.add_(1.0)
    assert base.sum().item() == view.numel()
    assert base._version == 1


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copies_do_not_share(name):
    base = gradnb.zeros(2, 3)
    out = COPIES[name](base)
    assert out._version_counter is not base._version_counter
    out.add_(1.0)
    assert base.sum().item() == 0.0


def test_modifying_a_split_piece_in_place_is_refused_by_backward():
    """As in PyTorch: the saved piece is one of several views of one op, which cannot be
    regenerated after the write (even one made under no_grad)."""
    x = gradnb.tensor(_values((2, 4)), requires_grad=True)
    a, _ = x.split(2, 1)
    y = (a * a).sum()
    with gradnb.no_grad():
        a.mul_(2.0)
    with pytest.raises(RuntimeError, match="^Output 0 of Split is a view and its base or another "
                       "view of its base has been modified inplace. This view is the output of a "
                       "function that returns multiple views."):
        y.backward()


def test_cat_promotes_dtypes_and_skips_legacy_empty_tensors():
    assert gradnb.cat([gradnb.zeros(2, dtype=gradnb.int32), gradnb.zeros(2)]).dtype == gradnb.float32
    assert gradnb.cat([gradnb.zeros(1, dtype=gradnb.uint8),
                       gradnb.zeros(1, dtype=gradnb.int8)]).dtype == gradnb.int16
    x = gradnb.ones(2, 3, requires_grad=True)
    empty = gradnb.zeros(0, requires_grad=True)
    gradnb.cat([x, empty], 1).sum().backward()
    assert x.grad.shape == (2, 3) and empty.grad.shape == (0,)


def test_float32_gradients_stay_float32():
    x = gradnb.ones(2, 3, requires_grad=True)
    y = gradnb.cat([x, x.double()], 0)
    assert y.dtype == gradnb.float64
    y.sum().backward()
    assert x.grad.dtype == gradnb.float32


ERRORS = [
    (lambda: gradnb.zeros(2, 1).squeeze((1, 1)), RuntimeError,
     "dim 1 appears multiple times in the list of dims"),
    (lambda: gradnb.zeros(2, 3).unsqueeze(3), IndexError,
     "Dimension out of range (expected to be in range of [-3, 2], but got 3)"),
    (lambda: gradnb.zeros(2, 3).flatten(1, 0), RuntimeError,
     "flatten() has invalid args: start_dim cannot come after end_dim"),
    (lambda: gradnb.zeros(2, 3).unflatten(1, (2, 2)), RuntimeError,
     ("unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input "
      "tensor")),
    (lambda: gradnb.cat([]), ValueError, "gradnb.cat(): expected a non-empty list of Tensors"),
    (lambda: gradnb.cat([gradnb.tensor(1.0)]), RuntimeError,
     "zero-dimensional tensor (at position 0) cannot be concatenated"),
    (lambda: gradnb.cat([gradnb.zeros(2, 3), gradnb.zeros(2, 2)]), RuntimeError,
     ("Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for "
      "tensor number 1 in the list.")),
    (lambda: gradnb.cat([gradnb.zeros(2, 3), gradnb.zeros(3)]), RuntimeError,
     "Tensors must have same number of dimensions: got 2 and 1"),
    (lambda: gradnb.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    (lambda: gradnb.stack([gradnb.zeros(2), gradnb.zeros(3)]), RuntimeError,
     "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1"),
    (lambda: gradnb.zeros(2, 3).split([1, 1], 1), RuntimeError,
     ("split_with_sizes expects split_sizes to sum exactly to 3 (input tensor's size at dimension "
      "1), but got split_sizes=[1, 1]")),
    (lambda: gradnb.zeros(2, 3).split(0, 1), RuntimeError,
     "split_size can only be 0 if dimension size is 0, but got dimension size of 3"),
    (lambda: gradnb.zeros(2, 3).chunk(0), RuntimeError,
     "chunk expects `chunks` to be greater than 0, got: 0"),
    (lambda: gradnb.tensor(1.0).unbind(0), IndexError,
     "Dimension specified as 0 but tensor has no dimensions"),
    (lambda: gradnb.zeros(2, 3).narrow(1, 2, 2), RuntimeError,
     "start (2) + length (2) exceeds dimension size (3)."),
    (lambda: gradnb.zeros(2, 3).repeat(2), RuntimeError,
     "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"),
    (lambda: gradnb.zeros(2, 3).flip(0, 0), RuntimeError,
     "dim 0 appears multiple times in the list of dims"),
    (lambda: gradnb.zeros(2, 3).roll((1, 2), (0,)), RuntimeError,
     "shifts and dimensions must align. shifts: 2, dims:1"),
    (lambda: gradnb.zeros(2, 3).movedim((0, 1), (1,)), RuntimeError,
     ("movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the same "
      "number of dims as destination ([1] dims)")),
    (lambda: gradnb.zeros(2, 3).movedim((0, 0), (0, 1)), RuntimeError,
     "movedim: repeated dim in `source` ([0, 0])"),
]


@pytest.mark.parametrize(("call", "exc_type", "message"), ERRORS)
def test_error_messages(call, exc_type, message):
    with pytest.raises(exc_type) as info:
        call()
    assert str(info.value) == message


@pytest.mark.torch
@pytest.mark.parametrize(("call", "exc_type", "message"), ERRORS)
def test_error_messages_are_pytorchs(torch, call, exc_type, message):
    """The messages above are PyTorch's own (with ``gradnb.`` where torch names itself): the
    same calls, with ``gradnb`` bound to torch."""
    torch_call = types.FunctionType(call.__code__, {**call.__globals__, "gradnb": torch})
    with pytest.raises(exc_type) as info:
        torch_call()
    assert _first_line(info.value).replace("torch.", "gradnb.") == message


# -- devices ----------------------------------------------------------------------------------------
def _first_and_second_order(fn, array, device):
    x = gradnb.tensor(array, dtype=gradnb.float64, device=device, requires_grad=True)
    outs = _outputs(fn(gradnb, x))
    loss = sum((o * o * (i + 1)).sum() for i, o in enumerate(outs))
    (g,) = gradnb.autograd.grad(loss, x, create_graph=True)
    (gg,) = gradnb.autograd.grad((g * g).sum(), x)
    assert all(t.device == x.device for t in (*outs, g, gg))
    return [t.detach().cpu().numpy() for t in (*outs, g, gg)]


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_runs_on_device_like_on_the_cpu(device, name):
    x = _values((2, 3))
    ours = _first_and_second_order(GRADCHECKS[name], x, device)
    for got, expected in zip(ours, _first_and_second_order(GRADCHECKS[name], x, "cpu"),
                             strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
