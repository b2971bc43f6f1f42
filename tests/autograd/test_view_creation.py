"""Views PyTorch will not write in place or regenerate (its ``CreationMeta``), as PyTorch.

A view made with grad mode off (``no_grad``, inference mode) of a tensor that requires grad
requires grad too, with no history of its own: gradients reaching it go no further. Writing it in
place with grad mode on is refused, and so is using it once its base (or a sibling view) was
written in place; the same for one of several views of one op (``split``, ``unbind``). Each
case runs in both libraries and must end the same way: the same values, or the same error type
and message (with ``gradnb`` for ``torch``).
"""

from __future__ import annotations

import warnings

import pytest

import gradnb


def _view_nograd(lib, base_requires_grad=True, *, size=3):
    a = lib.randn(size, requires_grad=base_requires_grad)
    base = a * 1 if base_requires_grad else a
    with lib.no_grad():
        view = base[:2]
    return a, base, view


def _stale_grad_fn(lib):
    _, base, view = _view_nograd(lib)
    base.mul_(2)
    return view.grad_fn


def _stale_use(lib):
    _, base, view = _view_nograd(lib)
    base.mul_(2)
    (view * 3).sum().backward()


def _stale_use_under_no_grad(lib):
    _, base, view = _view_nograd(lib)
    base.mul_(2)
    with lib.no_grad():
        return (view * 2).requires_grad


def _stale_requires_grad(lib):
    _, base, view = _view_nograd(lib)
    base.add_(1)
    return view.requires_grad  # (reads no grad_fn: no refusal)


def _written_in_place(lib):
    _, _, view = _view_nograd(lib)
    view.mul_(2)


def _written_in_place_under_no_grad(lib):
    _, _, view = _view_nograd(lib)
    with lib.no_grad():
        view.mul_(2)
    return view.grad_fn


def _both_under_no_grad(lib):
    a = lib.randn(3, requires_grad=True)
    base = a.clone()
    with lib.no_grad():
        view = base[:2]
        base.mul_(2)
    return view.grad_fn


def _flags(lib):
    _, _, view = _view_nograd(lib)
    return view.requires_grad, view.is_leaf, view.grad_fn is None, view.detach().requires_grad


def _gradient_goes_nowhere(lib):
    a = lib.randn(3, requires_grad=True)
    with lib.no_grad():
        view = a[:2]
    y = view * 3
    edges = [None if fn is None else type(fn).__name__ for fn, _ in y.grad_fn.next_functions]
    y.sum().backward()
    return view.grad, a.grad, edges


def _of_a_plain_tensor_written_by_a_recorded_op(lib):
    _, _, view = _view_nograd(lib, base_requires_grad=False)
    view.mul_(lib.randn(2, requires_grad=True))


def _of_a_plain_tensor_written_plainly(lib):
    _, _, view = _view_nograd(lib, base_requires_grad=False)
    view.mul_(2)
    return view.requires_grad


def _of_a_plain_tensor_stale(lib):
    _, base, view = _view_nograd(lib, base_requires_grad=False)
    base.add_(1)
    return view.grad_fn


def _copied_into(lib):
    _, _, view = _view_nograd(lib, base_requires_grad=False)
    view.copy_(lib.randn(2, requires_grad=True))


def _written_by_index(lib):
    _, _, view = _view_nograd(lib, base_requires_grad=False)
    value = lib.randn(2, requires_grad=True)
    view[0] = value[0]


def _view_of_it_stale(lib):
    _, base, view = _view_nograd(lib)
    inner = view[:1]
    base.add_(1)
    return inner.grad_fn


def _squeezed_stale(lib):
    a = lib.randn(1, 4, requires_grad=True)
    base = a * 1
    with lib.no_grad():
        view = base[:1]
    inner = view.squeeze(0)  # SqueezeBackward1: named "Squeeze1"
    base.add_(1)
    return inner.grad_fn


def _inference_view_flags(lib):
    base = lib.randn(3, requires_grad=True) * 1
    with lib.inference_mode():
        view = base[:2]
    return view.requires_grad, view.is_inference()


def _inference_view_written(lib):
    base = lib.randn(3, requires_grad=True) * 1
    with lib.inference_mode():
        view = base[:2]
    view.mul_(2)


def _inference_view_stale(lib):
    base = lib.randn(3, requires_grad=True) * 1
    with lib.inference_mode():
        view = base[:2]
    base.add_(1)
    return view.grad_fn


def _split_under_no_grad(lib):
    base = lib.randn(4, requires_grad=True) * 1
    with lib.no_grad():
        first, _ = base.split(2)
    return first.requires_grad


def _split_under_no_grad_written(lib):
    base = lib.randn(4, requires_grad=True) * 1
    with lib.no_grad():
        first, _ = base.split(2)
    first.mul_(2)


def _split_piece_written(lib):
    first, _ = (lib.randn(4, requires_grad=True) * 1).split(2)
    first.mul_(2)


def _split_piece_stale(lib):
    base = lib.randn(4, requires_grad=True) * 1
    first, _ = base.split(2)
    base.add_(1)
    return first.grad_fn


def _unbind_piece_stale(lib):
    base = lib.randn(3, 2, requires_grad=True) * 1
    pieces = base.unbind(0)
    base.add_(1)
    return pieces[2].grad_fn


def _unbind_of_a_no_grad_view_stale(lib):
    base = lib.randn(4, 4, requires_grad=True) * 1
    with lib.no_grad():
        view = base[:2]
    piece = view.unbind(0)[1]
    base.add_(1)
    return piece.grad_fn


def _optimizer_step_under_a_view(lib):
    param = lib.nn.Parameter(lib.randn(3))
    with lib.no_grad():
        view = param[:2]
    optimizer = lib.optim.SGD([param], lr=0.1)
    (param * param).sum().backward()
    optimizer.step()
    with lib.no_grad():
        return bool(((view * 1) == param[:2]).all())


def _differentiated_view(lib):
    _, _, view = _view_nograd(lib)
    return lib.autograd.grad((view * 2).sum(), view)


def _in_place_view_op(lib):
    _, _, view = _view_nograd(lib)
    view.t_()


def _own_flag_cleared(lib):
    _, _, view = _view_nograd(lib)
    view.requires_grad_(False)
    return view.requires_grad  # (still True: through its base)


def _diagonal_written(lib):
    base = lib.zeros(3, 4)
    base.diagonal(1).add_(1)
    return base.sum().item(), base.diagonal()._base is base


def _diagonal_written_through_history(lib):
    a = lib.arange(12.0).reshape(3, 4).requires_grad_()
    b = a * 1
    b.diagonal().mul_(3)
    (b * b).sum().backward()
    return a.grad.tolist(), type(b.grad_fn).__name__


def _diagonal_of_a_leaf_written(lib):
    lib.randn(3, 3, requires_grad=True).diagonal().zero_()


def _base_requires_grad_later(lib):
    a = lib.zeros(3)
    with lib.no_grad():
        view = a[:2]
    a.requires_grad_()
    return view.requires_grad


def _own_flag_set(lib):
    a = lib.zeros(3)
    with lib.no_grad():
        view = a[:2]
    view.requires_grad_()
    (view * 2).sum().backward()
    return view.grad


def _written_through_data(lib):
    layer = lib.nn.Linear(4, 3)
    with lib.no_grad():
        view = layer.weight.T
    layer.weight.data.mul_(0.5)  # (``.data`` has a version counter of its own)
    return (view * 1).requires_grad


def _graph_after_a_write_through_data(lib):
    x = lib.randn(3, requires_grad=True)
    y = x.exp()
    x.data.mul_(2)
    y.sum().backward()
    return x._version


def _split_in_inference_mode_written(lib):
    base = lib.randn(4, requires_grad=True) * 1
    with lib.inference_mode():
        piece = base.split(2)[0]
        detached = base.detach()
    return piece.is_inference(), detached.is_inference(), piece.add_(1)


def _custom_functions(lib):
    """Views a custom Function returns: one (made in forward, or an input returned as is), or
    several; written directly, or through their base."""

    class Narrow(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2]

        @staticmethod
        def backward(ctx, g):
            return lib.cat([g, lib.zeros(2)])

    class Halves(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2], x[2:]

        @staticmethod
        def backward(ctx, g1, g2):
            return lib.cat([g1, g2])

    class Same(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = lib.randn(4, requires_grad=True)
    outcomes = []
    for name, write in [("one, direct", lambda: Narrow.apply(x * 1).mul_(2)),
                        ("several, direct", lambda: Halves.apply(x * 1)[0].mul_(2)),
                        ("an input returned", lambda: Same.apply(x * 1).mul_(2))]:
        try:
            write()
            outcomes.append((name, "written"))
        except RuntimeError as error:
            outcomes.append((name, str(error)))
    base = x * 1
    view = Narrow.apply(base)
    base.add_(1)
    try:
        view.grad_fn  # noqa: B018 - reading it regenerates (here: refuses) the stale view
        outcomes.append(("indirect", "regenerated"))
    except RuntimeError as error:
        outcomes.append(("indirect", str(error)))
    return outcomes


VIEW_OPS = {
    "t": lambda v: v.t(), "view": lambda v: v.view(-1), "unsqueeze": lambda v: v.unsqueeze(0),
    "expand": lambda v: v.expand(2, 2, 3), "narrow": lambda v: v.narrow(0, 0, 1),
    "select": lambda v: v[0], "diagonal": lambda v: v.diagonal(), "flatten": lambda v: v.flatten(),
    "movedim": lambda v: v.movedim(0, 1), "reshape": lambda v: v.reshape(3, 2),
    "view_as": lambda v: v.view_as(v), "split": lambda v: v.split(1)[0],
    "chunk": lambda v: v.chunk(2)[0], "unbind": lambda v: v.unbind()[0],
    "swapaxes": lambda v: v.swapaxes(0, 1), "squeeze": lambda v: v.squeeze(),
    "index with a list (a copy)": lambda v: v[[0]], "ellipsis": lambda v: v[...],
}


def _each_view_op_under_no_grad_written(lib):
    outcomes = []
    for name, make in VIEW_OPS.items():
        base = lib.randn(2, 3, requires_grad=True) * 1
        with lib.no_grad():
            view = make(base)
        try:
            view.mul_(2)
            outcomes.append((name, "written", view.requires_grad))
        except RuntimeError as error:
            outcomes.append((name, str(error)[:40]))
    return outcomes


CASES = [
    _stale_grad_fn, _stale_use, _stale_use_under_no_grad, _stale_requires_grad,
    _written_in_place, _written_in_place_under_no_grad, _both_under_no_grad, _flags,
    _gradient_goes_nowhere, _of_a_plain_tensor_written_by_a_recorded_op,
    _of_a_plain_tensor_written_plainly, _of_a_plain_tensor_stale, _copied_into, _written_by_index,
    _view_of_it_stale, _squeezed_stale, _inference_view_flags, _inference_view_written,
    _inference_view_stale, _split_under_no_grad, _split_under_no_grad_written,
    _split_piece_written, _split_piece_stale, _unbind_piece_stale,
    _unbind_of_a_no_grad_view_stale, _optimizer_step_under_a_view, _differentiated_view,
    _in_place_view_op, _own_flag_cleared, _diagonal_written, _diagonal_written_through_history,
    _diagonal_of_a_leaf_written, _each_view_op_under_no_grad_written,
    _base_requires_grad_later, _own_flag_set, _written_through_data,
    _graph_after_a_write_through_data, _split_in_inference_mode_written, _custom_functions,
]


def _outcome(lib, case):
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = case(lib)
        except Exception as error:  # noqa: BLE001 - the outcome compared is the error itself
            return type(error).__name__, str(error).replace("torch.", "gradnb.")
    if value is not None and hasattr(value, "next_functions"):  # a node: compare its class
        value = type(value).__name__
    return "ok", repr(value).replace("torch.", "gradnb.")


@pytest.mark.parametrize("case", CASES, ids=lambda f: f.__name__.strip("_"))
def test_as_pytorch(torch, case):
    assert _outcome(gradnb, case) == _outcome(torch, case)


def test_a_refused_write_changes_nothing():
    _, _, view = _view_nograd(gradnb)
    before, version = view.detach().numpy().copy(), view._version
    with pytest.raises(RuntimeError, match="^A view was created in no_grad mode and is being "):
        view.mul_(2)
    assert (view.detach().numpy() == before).all() and view._version == version


def test_a_refused_stale_view_keeps_refusing_and_links_nothing():
    _, base, view = _view_nograd(gradnb)
    base.mul_(2)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="its base or another view of its base has been"):
            view * 3  # (recording reads the stale view's grad_fn)
    assert view._grad_fn is None


def test_a_base_frozen_later_takes_the_view_out_of_the_graph():
    """``requires_grad`` of a view made under no_grad is its base's, read now: once the base is
    frozen, no gradient reaches the view. (PyTorch then refuses ``backward`` outright, since
    ``y`` does not require grad; gradnb records ``y`` from the flag the view had when made, and
    its backward reaches no leaf.)"""
    layer = gradnb.nn.Linear(4, 3)
    with gradnb.no_grad():
        view = layer.weight[:, :2]
    layer.weight.requires_grad_(False)
    assert not view.requires_grad
    y = (view * 2).sum()
    if y.requires_grad:
        y.backward()
    assert view.grad is None and layer.weight.grad is None
