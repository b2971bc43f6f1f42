"""``gradcheck`` and ``gradgradcheck``: compare autograd's gradients with finite differences.

The numerical Jacobian perturbs one input element at a time, in place, by ``±eps`` and takes
central differences; the analytical Jacobian is built row by row from vector-Jacobian products
(``autograd.grad`` with a one-hot ``grad_outputs``). Both are laid out as PyTorch lays them out,
``(input.numel(), output.numel())``, and a mismatch raises ``GradcheckError`` with PyTorch's
message, so a failing check reads the same in gradnb as in ``torch.autograd``.

Jacobians are assembled on the host in NumPy: gradcheck is a test tool for small inputs, and
host arrays keep it independent of the device the function runs on.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np

from .._core.backend import get_array_module
from .._core.tensor import Tensor
from ..ops.complex import imag, real
from ..ops.creation import default_generator
from .engine import grad

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` and ``gradgradcheck`` when a check fails."""


_FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

_FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()

_UNDEFINED_GRAD_BC_WARNING = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by "
    "default, but it may break existing callers of this function. If this is true for you, you "
    'can call this function with "check_undefined_grad=False" to disable the feature'
)


def gradcheck(
    func: Callable,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_backward_ad: bool = True,
    check_forward_ad: bool = False,
    fast_mode: bool = False,
) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against central finite differences.

    Inputs that are floating-point tensors with ``requires_grad=True`` are checked; use float64
    inputs (float32 is too coarse for ``eps=1e-6``, and a warning says so). Returns True, or
    raises ``GradcheckError`` (returns False with ``raise_exception=False``).

    >>> import gradnb
    >>> x = gradnb.randn(3, dtype=gradnb.float64, requires_grad=True)
    >>> gradnb.autograd.gradcheck(gradnb.sin, (x,))
    True
    """
    if check_forward_ad:
        raise NotImplementedError("gradnb has no forward-mode AD: check_forward_ad=True is not "
                                  "supported")
    if check_batched_grad:
        raise NotImplementedError("gradnb has no vmap: check_batched_grad=True is not supported")
    if not check_backward_ad:
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    try:
        return _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol,
                          check_undefined_grad, check_grad_dtypes, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(
    func: Callable,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_rev_over_rev: bool = True,
    check_fwd_over_rev: bool = False,
    fast_mode: bool = False,
) -> bool:
    """Check second derivatives: gradcheck the map ``(inputs, grad_outputs) -> input grads``
    computed with ``create_graph=True``.

    Without ``grad_outputs``, random ones in ``[-1, 1)`` are drawn from gradnb's generator
    (seed it with ``gradnb.manual_seed`` for a reproducible check).

    >>> import gradnb
    >>> x = gradnb.randn(3, dtype=gradnb.float64, requires_grad=True)
    >>> gradnb.autograd.gradgradcheck(lambda t: (t ** 3).sum(), (x,))
    True
    """
    if check_fwd_over_rev:
        raise NotImplementedError("gradnb has no forward-mode AD: check_fwd_over_rev=True is not "
                                  "supported")
    if not check_rev_over_rev:
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )

    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(_random_grad_output(o) for o in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_indices = {i for i, x in enumerate(tupled_inputs)
                          if _is_tensor(x) and x.requires_grad}

    def grads_of_func(*args):
        input_args = args[:len(args) - num_outputs]
        outputs = _differentiable_outputs(func(*input_args))
        diff_inputs = tuple(x for i, x in enumerate(input_args) if i in diff_input_indices)
        grads = grad(outputs, diff_inputs, args[len(args) - num_outputs:], create_graph=True,
                     allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        grads_of_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol, rtol=rtol,
        raise_exception=raise_exception, nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad, fast_mode=fast_mode,
    )


# -- the check -------------------------------------------------------------------------------------
def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
               fast_mode) -> bool:
    _check_inputs(inputs)
    func = _real_outputs(func)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    if not outputs:
        _check_no_differentiable_outputs(func, inputs, func_out, eps)
    elif fast_mode:
        _fast_gradcheck(func, inputs, outputs, eps, atol, rtol, nondet_tol, check_grad_dtypes)
    else:
        _slow_gradcheck(func, inputs, func_out, outputs, eps, atol, rtol, nondet_tol,
                        check_grad_dtypes)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, inputs)
        if check_undefined_grad:
            _test_undefined_backward_mode(func, inputs)
    return True


def _slow_gradcheck(func, inputs, func_out, outputs, eps, atol, rtol, nondet_tol,
                    check_grad_dtypes) -> None:
    # numerical[j][i]: Jacobian of float output i w.r.t. differentiable input j.
    numerical = _numerical_jacobian(func, inputs, func_out, eps)
    float_outputs = [o for o in _as_tuple(func_out) if _is_float_tensor(o)]
    diff_index = [k for k, o in enumerate(float_outputs) if o.requires_grad]
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][diff_index[i]]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j))


def _fast_gradcheck(func, inputs, outputs, eps, atol, rtol, nondet_tol, check_grad_dtypes):
    """PyTorch's fast mode: compare the scalars ``v^T J u`` for random unit vectors u, v."""
    diff_positions = [k for k, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    rng = np.random.default_rng(0)
    all_u = [_unit_vector(rng, inputs[k]) for k in diff_positions]
    all_v = [_unit_vector(rng, o) for o in outputs]

    out_positions = [k for k, o in enumerate(_as_tuple(func(*inputs)))
                     if _is_tensor(o) and o.requires_grad]
    for j, (k, u) in enumerate(zip(diff_positions, all_u)):
        jvps = _numerical_directional(func, inputs, k, u, eps)
        for i, (o, v) in enumerate(zip(outputs, all_v)):
            numerical = np.asarray(jvps[out_positions[i]] @ v)
            v_tensor = _like(o, v.reshape(o._data.shape).astype(o._data.dtype))
            vjps = grad(o, _diff_inputs(inputs), v_tensor, retain_graph=True, allow_unused=True)
            vj = vjps[j]
            analytical = np.asarray(0.0 if vj is None else _host(vj._data).reshape(-1) @ u)
            adjusted_atol = atol * float(u.sum()) * float(v.sum())
            if not _allclose(analytical, numerical, rtol, adjusted_atol):
                raise GradcheckError(
                    _notallclose_msg(analytical, numerical, i, j)
                    + _slow_mode_report(func, inputs, outputs, j, i, rtol, atol, eps)
                )


def _slow_mode_report(func, inputs, outputs, input_idx, output_idx, rtol, atol, eps) -> str:
    """The slow-mode Jacobians that PyTorch appends when fast mode fails."""
    numerical = _numerical_jacobian(func, inputs, None, eps)[input_idx][output_idx]
    analytical = _analytical_jacobian(inputs, outputs[output_idx], float("inf"), False)[input_idx]
    max_diff = np.abs(numerical - analytical).max() if numerical.size else 0.0
    msg = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
        "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
        f"Numerical:\n {_show(numerical)}\n"
        f"Analytical:\n{_show(analytical)}\n\n"
        f"The max per-element difference (slow mode) is: {_show(np.asarray(max_diff))}.\n"
    )
    if _allclose(analytical, numerical, rtol, atol):
        msg += _FAST_FAIL_SLOW_OK_MSG
    return msg


# -- complex numbers ---------------------------------------------------------------------------------
# As in PyTorch: a complex output is checked as its real and imaginary parts (two real outputs),
# and a complex input z = x + iy is perturbed along x and along y, its numerical Jacobian entry
# being ds/dx + i ds/dy (the gradient convention of backward, 2 dL/dz*).
def _real_outputs(func):
    """``func`` with each complex tensor output replaced by its real and imaginary parts."""
    def split(*args):
        out = func(*args)
        if not any(_is_tensor(o) and o._data.dtype.kind == "c" for o in _as_tuple(out)):
            return out
        parts = []
        for o in _as_tuple(out):
            if _is_tensor(o) and o._data.dtype.kind == "c":
                parts += [real(o), imag(o)]
            else:
                parts.append(o)
        return tuple(parts)

    return split


def _complex_difference(data, idx_or_all, delta, evaluate):
    """Central differences of ``evaluate()`` (a list of host arrays) for ``data`` perturbed by
    ``delta`` at ``idx_or_all``; a complex ``data`` is perturbed along its real and then its
    imaginary axis, and the two combine as ``ds/dx + i ds/dy``."""
    def central(step):
        orig = data[idx_or_all].copy()
        data[idx_or_all] = orig - step
        before = evaluate()
        data[idx_or_all] = orig + step
        after = evaluate()
        data[idx_or_all] = orig
        return before, after

    before, after = central(delta)
    diffs = [None if a is None else (b - a) / 2 for a, b in zip(before, after)]
    if data.dtype.kind != "c":
        return before, after, diffs
    before_y, after_y = central(delta * 1j)
    diffs = [None if d is None else d + 1j * (b - a) / 2
             for d, a, b in zip(diffs, before_y, after_y)]
    return before, after, diffs


# -- numerical Jacobians ---------------------------------------------------------------------------
def _numerical_jacobian(func, inputs, func_out, eps):
    """``result[j][i]``: the (input j numel, output i numel) Jacobian for each differentiable
    input j and each floating-point output i, by central differences."""
    if func_out is None:
        func_out = func(*inputs)
    float_outputs = [o for o in _as_tuple(func_out) if _is_float_tensor(o)]
    jacobians = []
    for x in _diff_inputs(inputs):
        data = x._data
        columns = [np.zeros((data.size, o._data.size),
                            dtype=np.promote_types(o._data.dtype, data.dtype))
                   for o in float_outputs]
        for d_idx in range(data.size):
            idx = np.unravel_index(d_idx, data.shape)
            # Perturb the raw array: the change is invisible to autograd (no version bump),
            # exactly like PyTorch perturbing ``x.data``.
            before, after, diffs = _complex_difference(
                data, idx, eps, lambda: _float_outputs_on_host(func(*inputs)))
            for col, a, b, d in zip(columns, before, after, diffs):
                _check_same_dtype_and_shape(a, b, eps, idx)
                col[d_idx] = (d / eps).reshape(-1)
        jacobians.append(columns)
    return jacobians


def _numerical_directional(func, inputs, k, u, eps):
    """Central-difference ``J u`` of every output for a perturbation of input ``k`` along ``u``
    (None for outputs that are not floating point)."""
    data = inputs[k]._data
    delta = u.reshape(data.shape).astype(data.dtype) * eps
    if type(data) is not np.ndarray:
        delta = _device_array(data, delta)

    def evaluate():
        return [_host(o._data).copy() if _is_float_tensor(o) else None
                for o in _as_tuple(func(*inputs))]

    _, _, diffs = _complex_difference(data, Ellipsis, delta, evaluate)
    return [None if d is None else (d / eps).reshape(-1) for d in diffs]


def _float_outputs_on_host(out):
    # Copy at once: an output may share memory with an input that is perturbed next.
    return [_host(o._data).copy() for o in _as_tuple(out) if _is_float_tensor(o)]


def _check_same_dtype_and_shape(a, b, eps, idx) -> None:
    on_index = f"on index {tuple(int(i) for i in idx)} "
    if a.shape != b.shape:
        raise AssertionError(
            f"Expected `func` to return outputs with the same shape when inputs are perturbed "
            f"{on_index}by {eps}, but got: shapes {a.shape} and {b.shape}."
        )
    if a.dtype != b.dtype:
        raise AssertionError(
            f"Expected `func` to return outputs with the same dtype when inputs are perturbed "
            f"{on_index}by {eps}, but got: dtypes {a.dtype} and {b.dtype}."
        )


def _check_no_differentiable_outputs(func, inputs, func_out, eps) -> None:
    for per_input in _numerical_jacobian(func, inputs, func_out, eps):
        for jacobian in per_input:
            if np.count_nonzero(jacobian):
                raise GradcheckError("Numerical gradient for function expected to be zero")


# -- analytical Jacobians --------------------------------------------------------------------------
def _analytical_jacobian(inputs, output, nondet_tol, check_grad_dtypes):
    """One (input numel, output numel) Jacobian per differentiable input, from one VJP per
    output element; computed twice to catch a non-deterministic backward."""
    diff_inputs = _diff_inputs(inputs)
    first, types_ok, sizes_ok = _jacobian_rows(diff_inputs, output)
    second, _, _ = _jacobian_rows(diff_inputs, output)
    reentrant = all(
        a.shape == b.shape and (a.size == 0 or np.abs(a - b).max() <= nondet_tol)
        for a, b in zip(first, second)
    )
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
            + _FAILED_NONDET_MSG
        )
    return first


def _jacobian_rows(diff_inputs, output):

    out_data = output._data
    jacobians = [np.zeros((x._data.size, out_data.size), dtype=x._data.dtype)
                 for x in diff_inputs]
    types_ok = sizes_ok = True
    one_hot = np.zeros(out_data.size, dtype=out_data.dtype)
    for j in range(out_data.size):
        one_hot[:] = 0
        one_hot[j] = 1
        grad_output = _like(output, one_hot.reshape(out_data.shape))
        grads = grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)
        for jacobian, x, g in zip(jacobians, diff_inputs, grads):
            if g is None:
                continue
            if tuple(g.shape) != tuple(x.shape):
                sizes_ok = False
                continue
            if g.dtype != x.dtype:
                types_ok = False
            jacobian[:, j] = _host(g._data).reshape(-1)
    return jacobians, types_ok, sizes_ok


# -- extra backward checks -------------------------------------------------------------------------
def _test_backward_mul_by_grad_output(outputs, inputs) -> None:
    """A zero ``grad_output`` must give zero gradients of the inputs' dtype and shape."""

    diff_inputs = _diff_inputs(inputs)
    zeros = [_like(o, np.zeros(o._data.shape, dtype=o._data.dtype)) for o in outputs]
    grads = grad(outputs, diff_inputs, zeros, allow_unused=True, retain_graph=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if np.count_nonzero(_host(gi._data)):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError("grad is incorrect size")


def _test_undefined_backward_mode(func, inputs) -> None:
    """Backward must cope with outputs that get no gradient at all.

    PyTorch feeds "undefined" gradients; gradnb's equivalent is to leave an output out of the
    roots, so a multi-output node receives ``None`` for it. Every input gradient must then be
    zero or absent (the other outputs get zero gradients)."""

    diff_inputs = _diff_inputs(inputs)
    n_outputs = len(_differentiable_outputs(func(*inputs)))
    if n_outputs < 2:
        return
    for skipped in range(n_outputs):
        kept = [o for i, o in enumerate(_differentiable_outputs(func(*inputs))) if i != skipped]
        zeros = [_like(o, np.zeros(o._data.shape, dtype=o._data.dtype)) for o in kept]
        try:
            grads = grad(kept, diff_inputs, zeros, allow_unused=True)
        except RuntimeError as e:
            warnings.warn(_UNDEFINED_GRAD_BC_WARNING, stacklevel=4)
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ) from e
        for gi in grads:
            if gi is not None and np.count_nonzero(_host(gi._data)):
                warnings.warn(_UNDEFINED_GRAD_BC_WARNING, stacklevel=4)
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    'undefined or zero. Please look at "Notes about undefined output gradients" '
                    'in "tools/autograd/derivatives.yaml"'
                )


# -- helpers ---------------------------------------------------------------------------------------
def _check_inputs(inputs: Sequence) -> None:
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if not (_is_tensor(inp) and inp.requires_grad):
            continue
        if inp._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{idx} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ",
                stacklevel=4,
            )
        data = inp._data
        if data.size and any(st == 0 and sz > 1 for st, sz in zip(data.strides, data.shape)):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck."
            )
        any_requires_grad = True
    if not any_requires_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        )


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x) -> bool:

    return isinstance(x, Tensor)


def _is_float_tensor(x) -> bool:
    return _is_tensor(x) and x._data.dtype.kind in "fc"


def _differentiable_outputs(out) -> tuple:
    return tuple(o for o in _as_tuple(out) if _is_tensor(o) and o.requires_grad)


def _diff_inputs(inputs) -> list:
    return [x for x in inputs if _is_tensor(x) and x.requires_grad]


def _host(arr) -> np.ndarray:
    return arr if type(arr) is np.ndarray else arr.get()


def _device_array(like, host_array):

    return get_array_module(like).asarray(host_array)


def _like(t, host_array):
    """A tensor (no grad) holding ``host_array`` on ``t``'s device."""

    data = host_array if type(t._data) is np.ndarray else _device_array(t._data, host_array)
    return Tensor._make(data)


def _random_grad_output(o):

    dtype = o._data.dtype if o._data.dtype.kind in "fc" else np.dtype(np.float64)
    values = default_generator._rng.uniform(-1, 1, o._data.shape).astype(dtype)
    if dtype.kind == "c":
        values = values + 1j * default_generator._rng.uniform(-1, 1, o._data.shape)
    t = _like(o, values)
    return Tensor._make(t._data, True)


def _unit_vector(rng, t) -> np.ndarray:
    """A random unit vector with one entry per element of ``t`` (PyTorch's fast-mode u, v)."""
    vec = rng.random(t._data.size).astype(t._data.dtype if t._data.dtype.kind == "f"
                                          else np.float64)
    norm = np.linalg.norm(vec)
    return vec / norm if norm else vec


def _allclose(a, n, rtol, atol) -> bool:
    dtype = np.promote_types(a.dtype, n.dtype)
    return bool(np.allclose(a.astype(dtype), n.astype(dtype), rtol=rtol, atol=atol))


def _show(arr) -> str:

    return repr(Tensor._make(np.asarray(arr)))


def _notallclose_msg(analytical, numerical, output_idx, input_idx) -> str:
    # Fast mode compares scalars, which PyTorch prints as plain numbers.
    def show(x):
        return repr(float(x)) if np.ndim(x) == 0 else _show(x)

    return (
        f"Jacobian mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
        f"numerical:{show(numerical)}\nanalytical:{show(analytical)}\n"
    )
