"""float16 and bfloat16 against PyTorch, bit for bit: forward and gradients where gradnb
computes PyTorch's numbers, and the known gaps.

PyTorch's CPU kernels compute a reduced-precision tensor in float32 ("op math") and round once:
a scalar second operand (a Python number, or a 0-d tensor of another dtype) enters unrounded,
and a composite formula (``softplus``, ``elu``, ``addcmul``, ``add`` with ``alpha``, ``lerp``)
rounds only its result, a fused multiply-add in it included. NumPy rounds a scalar to the
tensor's dtype first, and a composite written in NumPy rounds every step. gradnb computes
``x * s`` and ``x / s`` (and their gradients, in-place forms and reflections), ``leaky_relu``
and the composites above in op math (``gradnb/ops/op_math.py``); a plain ufunc of one or two
half tensors (``x + y``, ``exp``) rounds once in both, and so does adding a scalar, whose
rounding first happens not to change a sum.

The tensors have 2048 elements, a multiple of PyTorch's vector width: PyTorch computes the last
elements of a longer tensor in its scalar loop, which for ``add`` with ``alpha`` rounds
``alpha * b`` before adding (its vector loop does not), so its own numbers there depend on the
length. The cases marked ``gap`` (for the dtypes named) differ from PyTorch in the last bit of a
few elements; they are expected failures, and a second test checks that each still differs, so
the day one is fixed its mark has to go.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradnb

torch = pytest.importorskip("torch")

S = 0.7
VALUES = np.random.default_rng(0).uniform(-4, 4, 2048).astype(np.float32)

# name -> (the call, on the module ``m`` and tensors ``x``, ``y`` of the dtype; the dtypes of a
# known gap)
CASES = {
    "x + y": (lambda m, x, y: x + y, ()),
    "x * y": (lambda m, x, y: x * y, ()),
    "x / y": (lambda m, x, y: x / y, ()),
    "x + s": (lambda m, x, y: x + S, ()),
    "x - s": (lambda m, x, y: x - S, ()),
    "s - x": (lambda m, x, y: S - x, ()),
    "exp": (lambda m, x, y: m.exp(x), ()),
    "tanh": (lambda m, x, y: m.tanh(x), ()),
    "|x| ** s": (lambda m, x, y: x.abs() ** S, ()),
    "clamp": (lambda m, x, y: m.clamp(x, -S, S), ()),
    "hardtanh": (lambda m, x, y: m.nn.functional.hardtanh(x, -S, S), ()),
    "x * s": (lambda m, x, y: x * S, ()),
    "s * x": (lambda m, x, y: S * x, ()),
    "x / s": (lambda m, x, y: x / S, ()),
    "s / x": (lambda m, x, y: S / x, ()),
    "x * 0-d float32": (lambda m, x, y: x * m.tensor(S), ()),
    "x.mul_(s)": (lambda m, x, y: x.clone().mul_(S), ()),
    "x.div_(s)": (lambda m, x, y: x.clone().div_(S), ()),
    "x / 0-d float64": (lambda m, x, y: x / m.tensor(S, dtype=m.float64), ()),
    "0-d float32 * x": (lambda m, x, y: m.tensor(S) * x, ()),
    "0-d x * s": (lambda m, x, y: x[3] * S, ()),
    "add(alpha=s)": (lambda m, x, y: m.add(x, y, alpha=S), ()),
    "sub(alpha=s)": (lambda m, x, y: m.sub(x, y, alpha=S), ()),
    "add(number, alpha=s)": (lambda m, x, y: m.add(x, 1.3, alpha=S), ()),
    "sub(number, alpha=s)": (lambda m, x, y: m.sub(x, 1.3, alpha=S), ()),
    "addcmul": (lambda m, x, y: m.addcmul(x, x, y, value=S), ()),
    "addcdiv": (lambda m, x, y: m.addcdiv(x, x, y, value=S), ()),
    "x.addcmul_": (lambda m, x, y: x.clone().addcmul_(x, y, value=S), ()),
    "lerp": (lambda m, x, y: m.lerp(x, y, S), ()),
    "lerp, tensor weight": (lambda m, x, y: m.lerp(x, y, x.abs() / 4), ()),
    "leaky_relu": (lambda m, x, y: m.nn.functional.leaky_relu(x, S), ()),
    # float32 expm1's last bit (NumPy's against PyTorch's SLEEF) shows in 2 float16 elements
    "elu": (lambda m, x, y: m.nn.functional.elu(x, S), ("float16",)),
    "selu": (lambda m, x, y: m.nn.functional.selu(x), ()),
    "celu": (lambda m, x, y: m.nn.functional.celu(x, S), ()),
    "softplus": (lambda m, x, y: m.nn.functional.softplus(x, beta=S), ()),
}


def _result(m, dtype: str, call) -> np.ndarray:
    x = m.tensor(VALUES).to(getattr(m, dtype))
    y = m.tensor(VALUES[::-1].copy()).to(getattr(m, dtype))
    return call(m, x, y).float().numpy()


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", list(CASES))
def test_reduced_precision_matches_pytorch_bit_for_bit(name, dtype):
    call, gap = CASES[name]
    if dtype in gap:
        pytest.xfail("PyTorch computes this in float32 op math with the scalar unrounded and "
                     "rounds once; gradnb rounds the scalar (or each step) to the dtype")
    ours, theirs = _result(gradnb, dtype, call), _result(torch, dtype, call)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.torch
@pytest.mark.parametrize(("name", "dtype"),
                         [(n, dtype) for n, (_, gap) in CASES.items() for dtype in gap])
def test_the_known_gaps_are_still_gaps(name, dtype):
    """Each ``gap`` case still differs: when one starts to match, move it to the matching ones."""
    call, _ = CASES[name]
    ours, theirs = _result(gradnb, dtype, call), _result(torch, dtype, call)
    assert not np.array_equal(ours, theirs)


# name -> the loss whose gradient with respect to ``x`` is compared
GRADIENTS = {
    "x * s": lambda m, x, y: x * S,
    "x / s": lambda m, x, y: x / S,
    "s / x": lambda m, x, y: S / x,
    "x * 0-d float32": lambda m, x, y: x * m.tensor(S),
    "x / 0-d float32": lambda m, x, y: x / m.tensor(S),
    "(x * s) * y": lambda m, x, y: (x * S) * y,
    "leaky_relu": lambda m, x, y: m.nn.functional.leaky_relu(x, S),
}


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", list(GRADIENTS))
def test_reduced_precision_gradients_match_pytorch_bit_for_bit(name, dtype):
    """The gradient of each product and quotient by a scalar, seeded with a gradient that is not
    all ones (so the rule's own product by the scalar is seen)."""
    grads = []
    for m in (gradnb, torch):
        x = m.tensor(VALUES).to(getattr(m, dtype)).requires_grad_()
        y = m.tensor(VALUES[::-1].copy()).to(getattr(m, dtype))
        out = GRADIENTS[name](m, x, y)
        out.backward(m.tensor(VALUES[::-1].copy() / 3).to(getattr(m, dtype)))
        grads.append(x.grad.float().numpy())
    np.testing.assert_array_equal(*grads)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_alpha_that_overflows_the_dtype_is_refused_and_overflow_is_silent(dtype):
    """``alpha`` is converted to the tensors' dtype, checked (PyTorch's error); a result that
    overflows to inf is silent, as in PyTorch (no NumPy warning reaches the user)."""
    x = gradnb.tensor(VALUES[:8]).to(getattr(gradnb, dtype))
    if dtype == "float16":
        with pytest.raises(RuntimeError, match="^value cannot be converted to type c10::Half "
                           "without overflow$"):
            gradnb.add(x, x, alpha=1e5)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = gradnb.addcmul(x, x, x, value=1e38 if dtype == "bfloat16" else 1e6)
    assert out.float().isinf().any()
