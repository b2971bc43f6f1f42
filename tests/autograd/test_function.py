"""autograd.Function: ctx API, node naming, multiple outputs, errors, double backward."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import gradnb
from gradnb import autograd
from gradnb.autograd import Function, gradcheck, gradgradcheck, once_differentiable


def leaf(values, dtype=gradnb.float64):
    return gradnb.tensor(values, dtype=dtype, requires_grad=True)


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x * x * grad


class ScaledAdd(Function):
    """``x * k + y`` with a non-tensor argument in the middle."""

    @staticmethod
    def forward(ctx, x, k, y):
        ctx.k = k
        return x * k + y

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None, grad


class SplitScale(Function):
    """Two tensor outputs and a non-tensor one."""

    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3, "meta"

    @staticmethod
    def backward(ctx, g2, g3, g_meta):
        ctx.seen = (g2, g3, g_meta)
        return g2 * 2 + g3 * 3


# -- the node ----------------------------------------------------------------------------------
def test_node_is_named_after_the_class():
    x = leaf([0.0, 1.0])
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    assert type(y.grad_fn).__name__ == "ExpBackward"
    assert "grad_fn=<ExpBackward>" in repr(y)
    assert y.grad_fn.next_functions[0][0] is not None


def test_backward_matches_the_closed_form():
    x = leaf([0.0, 1.0, -2.0])
    Exp.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0, -2.0]))


def test_forward_runs_without_recording_and_backward_gets_tensors():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen["forward_grad_enabled"] = gradnb.is_grad_enabled()
            inner = x * 2
            seen["inner_requires_grad"] = inner.requires_grad
            return inner

        @staticmethod
        def backward(ctx, grad):
            seen["grad_type"] = type(grad)
            seen["backward_grad_enabled"] = gradnb.is_grad_enabled()
            return grad * 2

    Probe.apply(leaf([1.0])).sum().backward()
    assert seen == {"forward_grad_enabled": False, "inner_requires_grad": False,
                    "grad_type": gradnb.Tensor, "backward_grad_enabled": False}


def test_needs_input_grad_has_one_entry_per_argument():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, k, y):
            seen.append(ctx.needs_input_grad)
            return x * k + y

        @staticmethod
        def backward(ctx, grad):
            seen.append(ctx.needs_input_grad)
            return grad, None, None

    x, y = leaf([1.0]), gradnb.tensor([2.0], dtype=gradnb.float64)
    Probe.apply(x, 2.0, y).sum().backward()
    assert seen == [(True, False, False), (True, False, False)]
    assert len(Probe.apply(x, 2.0, y).grad_fn.next_functions) == 2  # tensors only


def test_non_tensor_arguments_and_unused_gradients():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    out = ScaledAdd.apply(x, 5.0, y)
    out.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]
    assert y.grad.tolist() == [1.0, 1.0]


def test_inputs_without_grad_give_plain_outputs():
    x = gradnb.tensor([1.0, 2.0])
    y = Exp.apply(x)
    assert not y.requires_grad and y.grad_fn is None
    with gradnb.no_grad():
        z = Exp.apply(leaf([1.0]))
    assert not z.requires_grad and z.grad_fn is None


def test_keyword_arguments_are_bound_to_positions():
    x, y = leaf([1.0]), leaf([2.0])
    out = ScaledAdd.apply(x, k=3.0, y=y)
    out.sum().backward()
    assert (x.grad.item(), y.grad.item()) == (3.0, 1.0)


def test_input_returned_unchanged_is_a_new_tensor_in_the_graph():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 10

    x = leaf([1.0, 2.0])
    y = Identity.apply(x)
    assert y is not x and x.grad_fn is None and y.grad_fn.name() == "IdentityBackward"
    y.sum().backward()
    assert x.grad.tolist() == [10.0, 10.0]


# -- saved tensors -------------------------------------------------------------------------------
def test_saved_tensors_are_freed_by_backward():
    x = leaf([1.0, 2.0])
    y = Exp.apply(x)
    node = y.grad_fn
    assert len(node.saved_tensors) == 1
    y.sum().backward()
    assert node.released
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        node.saved_tensors  # noqa: B018
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    y = Cube.apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 3 * np.array([1.0, 4.0]))


def test_saving_an_output_makes_no_reference_cycle():
    gc.disable()
    try:
        x = leaf([1.0, 2.0])
        y = Exp.apply(x)
        node = weakref.ref(y.grad_fn)
        del y
        assert node() is None
    finally:
        gc.enable()


def test_saved_input_modified_in_place_is_detected():
    if not hasattr(gradnb.Tensor, "add_"):
        pytest.skip("in-place ops are not available")
    x = leaf([1.0, 2.0])
    a = x * 1
    y = Cube.apply(a)
    a.add_(1)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation "
                                           "has been modified by an inplace operation"):
        y.sum().backward()


def test_save_for_backward_rejects_non_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(TypeError, match="save_for_backward can only save variables"):
        Bad.apply(leaf([1.0]))


# -- outputs ---------------------------------------------------------------------------------------
def test_multiple_outputs_share_one_node():
    x = leaf([1.0, 2.0])
    a, b, meta = SplitScale.apply(x)
    assert a.grad_fn is b.grad_fn and meta == "meta"
    assert (a._output_nr, b._output_nr) == (0, 1)
    a.sum().backward()
    g2, g3, g_meta = a.grad_fn.seen
    assert g2.tolist() == [1.0, 1.0] and g3.tolist() == [0.0, 0.0] and g_meta is None
    assert x.grad.tolist() == [2.0, 2.0]


def test_set_materialize_grads_false_passes_none():
    class Pair(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            ctx.seen = (ga, gb)
            return (0 if ga is None else ga * 2) + (0 if gb is None else gb * 3)

    x = leaf([1.0])
    a, b = Pair.apply(x)
    b.sum().backward()
    assert a.grad_fn.seen[0] is None and x.grad.tolist() == [3.0]


def test_mark_non_differentiable():
    class SumWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            index = gradnb.tensor(int(np.argmax(x.detach().numpy())))
            mask = x > 0
            scaled = x * 2
            ctx.mark_non_differentiable(mask, scaled)
            return x.sum(), index, mask, scaled

        @staticmethod
        def backward(ctx, g_sum, g_index, g_mask, g_scaled):
            ctx.seen = (g_index, g_mask, g_scaled.tolist())
            return g_sum * gradnb.ones(2, dtype=gradnb.float64)

    x = leaf([1.0, 3.0])
    total, index, mask, scaled = SumWithIndex.apply(x)
    assert total.requires_grad
    assert not index.requires_grad and not mask.requires_grad and not scaled.requires_grad
    assert index.grad_fn is None and scaled.grad_fn is None
    total.backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_mark_dirty_rebases_the_modified_input():
    if not hasattr(gradnb.Tensor, "mul_"):
        pytest.skip("in-place ops are not available")

    class DoubleInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = leaf([1.0, 2.0])
    a = x * 1
    out = DoubleInPlace.apply(a)
    assert out is a and a.grad_fn.name() == "DoubleInPlaceBackward"
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        DoubleInPlace.apply(leaf([1.0]))


# -- errors ----------------------------------------------------------------------------------------
def test_wrong_number_of_gradients():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(RuntimeError, match=r"^function BadBackward returned an incorrect number of "
                                           r"gradients \(expected 2, got 1\)$"):
        Bad.apply(leaf([1.0]), leaf([2.0])).sum().backward()


def test_extra_none_gradients_are_dropped():
    class Extra(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, None, None

    x = leaf([1.0])
    assert autograd.grad(Extra.apply(x).sum(), x)[0].tolist() == [2.0]


def test_gradient_for_a_non_tensor_argument_is_an_error():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    with pytest.raises(RuntimeError, match="returned a gradient different than None at position 2, "
                                           "but the corresponding forward input was not a Variable"):
        Bad.apply(leaf([1.0]), 2.0).sum().backward()


def test_gradient_of_the_wrong_shape_is_an_error():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, grad):
            return gradnb.ones(3, dtype=gradnb.float64) * grad

    with pytest.raises(RuntimeError, match=r"Function BadBackward returned an invalid gradient at "
                                           r"index 0 - got \[3\] but expected shape compatible "
                                           r"with \[2\]"):
        Bad.apply(leaf([1.0, 2.0])).backward()


def test_broadcast_gradient_is_summed_to_the_input_shape():
    class Wide(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad * gradnb.ones(4, 2, dtype=gradnb.float64)

    x = leaf([1.0, 2.0])
    Wide.apply(x).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_apply_on_the_base_class_is_an_error():
    with pytest.raises(RuntimeError):
        Function.apply(leaf([1.0]))


# -- setup_context style -------------------------------------------------------------------------
class MulConst(Function):
    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.k = k
        ctx.save_for_backward(x, output)

    @staticmethod
    def backward(ctx, grad):
        _, out = ctx.saved_tensors
        ctx.seen_output = out.tolist()
        return grad * ctx.k, None


def test_setup_context_style():
    x = leaf([1.0, 2.0])
    y = MulConst.apply(x, 3.0)
    node = y.grad_fn
    assert node.name() == "MulConstBackward"
    y.sum().backward()
    assert node.seen_output == [3.0, 6.0]
    assert x.grad.tolist() == [3.0, 3.0]
    z = MulConst.apply(x, k=4.0)
    assert z.tolist() == [4.0, 8.0]


# -- higher order ----------------------------------------------------------------------------------
def test_double_backward_through_a_backward_written_in_gradnb_ops():
    x = leaf([1.0, 2.0])
    (gx,) = autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert gx.requires_grad
    gx.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])


def test_double_backward_through_a_saved_output():
    x = leaf([0.0, 1.0])
    (gx,) = autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (ggx,) = autograd.grad(gx.sum(), x)
    np.testing.assert_allclose(ggx.numpy(), np.exp([0.0, 1.0]))


@pytest.mark.parametrize("fn", [Exp.apply, Cube.apply, lambda x: SplitScale.apply(x)[:2]])
def test_gradcheck_and_gradgradcheck_pass(fn):
    x = gradnb.randn(3, dtype=gradnb.float64, requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_once_differentiable_forbids_double_backward():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = leaf([3.0])
    Square.apply(x).sum().backward()
    assert x.grad.tolist() == [6.0]
    # As in PyTorch: with a constant grad_output the result is simply not differentiable...
    (gx,) = autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert not gx.requires_grad
    # ...and with one that requires grad, differentiating it again is an error.
    seed = gradnb.ones(1, dtype=gradnb.float64, requires_grad=True)
    (gx,) = autograd.grad(Square.apply(x), x, seed, create_graph=True)
    assert gx.grad_fn.name() == "Error"
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                                           "marked with @once_differentiable"):
        gx.sum().backward()


# -- oracle ----------------------------------------------------------------------------------------
def _make_functions(lib):
    class Swish(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, beta):
            s = (x * beta).sigmoid()
            ctx.save_for_backward(x, s)
            ctx.beta = beta
            return x * s

        @staticmethod
        def backward(ctx, grad):
            x, s = ctx.saved_tensors
            return grad * (s + x * ctx.beta * s * (1 - s)), None

    class Pair(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b, a + b

        @staticmethod
        def backward(ctx, g_prod, g_sum):
            a, b = ctx.saved_tensors
            return g_prod * b + g_sum, g_prod * a + g_sum

    return Swish, Pair


@pytest.mark.torch
def test_gradients_match_torch(torch):
    rng = np.random.default_rng(1)
    av, bv = rng.standard_normal((2, 3)), rng.standard_normal(3)
    results = []
    for lib in (gradnb, torch):
        swish, pair = _make_functions(lib)
        a = lib.tensor(av, dtype=lib.float64, requires_grad=True)
        b = lib.tensor(bv, dtype=lib.float64, requires_grad=True)
        prod, total = pair.apply(a, b)
        loss = (swish.apply(prod, 1.5) * total).sum()
        (ga, gb) = lib.autograd.grad(loss, (a, b), create_graph=True)
        (gga,) = lib.autograd.grad((ga * ga).sum() + gb.sum(), a)
        results.append([t.detach().numpy() for t in (loss, ga, gb, gga)]
                       + [type(prod.grad_fn).__name__])
    for mine, theirs in zip(*results):
        if isinstance(mine, str):
            assert mine == theirs
        else:
            np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.torch
def test_incorrect_gradient_count_message_matches_torch(torch):
    def message(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, grad):
                return grad

        x = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            Bad.apply(x, x).sum().backward()
        return str(info.value)

    assert message(gradnb) == message(torch)
