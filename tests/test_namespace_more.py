"""The rest of PyTorch's top-level namespace that real code calls: constants, the less common
factories and index sets, samplers, dtype questions, the deprecated and removed linear algebra
names, ``gradnb.random``. Each call gives torch's result (dtype, shape, values, graph) or raises
torch's error type with torch's first sentence (``gradnb.`` for ``torch.``)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import gradnb

torch = pytest.importorskip("torch")


def _first_sentence(message: str) -> str:
    line = message.split("\n")[0].replace("torch.", "gradnb.")
    return line.split(". ")[0]


def _describe(lib, value):
    """What is compared of a result: tensors by dtype, shape, values (close), graph."""
    if isinstance(value, lib.Tensor):
        return ("tensor", str(value.dtype).split(".")[-1], tuple(value.shape),
                np.asarray(value.detach().tolist(), dtype=object if value.dtype == lib.bool
                           else None),
                value.requires_grad, None if value.grad_fn is None else value.grad_fn.name())
    if isinstance(value, (tuple, list)):
        return type(value).__name__, tuple(_describe(lib, v) for v in value)
    if isinstance(value, lib.dtype):
        return "dtype", str(value).split(".")[-1]
    return "value", str(value).replace("torch", "gradnb")


def _outcome(lib, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", _describe(lib, call(lib))
        except Exception as e:  # noqa: BLE001 - the error is the outcome compared
            return type(e).__name__, _first_sentence(str(e))


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.dtype == object or b.dtype == object:
            return a.shape == b.shape and (a == b).all()
        return a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=1e-7, equal_nan=True)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _f(t, values, **kw):
    return t.tensor(values, dtype=t.float64, **kw)


def _storage_facts(t, x):
    """What code reads off a storage: its size in bytes, its bytes, and where it starts."""
    u = x.untyped_storage()
    return (u.nbytes(), u.size(), len(u), u.tolist(), u.element_size(), u.is_shared(),
            x.data_ptr() - u.data_ptr() == x.storage_offset() * x.element_size(),
            str(u.device))


def _typed_storage_facts(x):
    s = x.storage()
    return s.dtype, s.size(), len(s), s.nbytes(), s.element_size()


def _set_to_facts(a):
    return a.is_set_to(a), a.is_set_to(a.view(2, 2)), a.is_set_to(a[:]), a.is_set_to(a.clone())


def _x_grad(t, fn):
    x = _f(t, [0.5, 3.0, 7.5, 0.01], requires_grad=True)
    fn(_f(t, [1.0, 2.0, 8.0, 0.5]), x).sum().backward()
    return x.grad


CALLS = {
    # factories
    "logspace": lambda t: t.logspace(0, 2, 3),
    "logspace base 2 int64": lambda t: t.logspace(0, 3, 4, base=2, dtype=t.int64),
    "logspace float64": lambda t: t.logspace(-1, 1, 5, dtype=t.float64),
    "logspace negative steps": lambda t: t.logspace(0, 2, -1),
    "range": lambda t: t.range(0, 1, 0.25),
    "range int64": lambda t: t.range(0, 3, dtype=t.int64),
    "range zero step": lambda t: t.range(0, 3, 0),
    "range wrong sign": lambda t: t.range(3, 0),
    "scalar_tensor": lambda t: t.scalar_tensor(3),
    "scalar_tensor int64": lambda t: t.scalar_tensor(3, dtype=t.int64),
    "scalar_tensor requires grad": lambda t: t.scalar_tensor(2.5, requires_grad=True),
    "scalar_tensor of a string": lambda t: t.scalar_tensor("a"),
    "empty_strided strides": lambda t: t.empty_strided((2, 3), (1, 2)).stride(),
    "empty_strided shape": lambda t: t.empty_strided((2, 3), (1, 2), dtype=t.float64).shape,
    "empty_strided too few strides": lambda t: t.empty_strided((2, 3), (1,)),
    "empty_strided negative size": lambda t: t.empty_strided((2, -3), (1, 2)),
    "frombuffer": lambda t: t.frombuffer(bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00"),
                                         dtype=t.int32),
    "frombuffer count offset": lambda t: t.frombuffer(bytearray(range(8)), dtype=t.uint8,
                                                      count=3, offset=2),
    "frombuffer bad length": lambda t: t.frombuffer(bytearray(7), dtype=t.int32),
    "frombuffer bad offset": lambda t: t.frombuffer(bytearray(8), dtype=t.int32, offset=8),
    "frombuffer count too large": lambda t: t.frombuffer(bytearray(8), dtype=t.int32, count=3),
    "frombuffer empty": lambda t: t.frombuffer(bytearray(0), dtype=t.int32),
    "frombuffer of a list": lambda t: t.frombuffer([1, 2], dtype=t.int32),
    # index sets
    "tril_indices": lambda t: t.tril_indices(3, 4, 1),
    "triu_indices int32": lambda t: t.triu_indices(3, 4, -1, dtype=t.int32),
    "tril_indices float": lambda t: t.tril_indices(3, 3, dtype=t.float32),
    "tril_indices int8": lambda t: t.tril_indices(3, 3, dtype=t.int8),
    "tril_indices negative row": lambda t: t.tril_indices(-1, 4),
    "triu_indices negative col": lambda t: t.triu_indices(3, -1),
    "triu_indices empty": lambda t: t.triu_indices(0, 0),
    "unravel_index": lambda t: t.unravel_index(t.tensor([5, 7]), (2, 4)),
    "unravel_index wraps": lambda t: t.unravel_index(t.tensor([9, -9, -1]), (2, 4)),
    "unravel_index 0-d": lambda t: t.unravel_index(t.tensor(5), (2, 3)),
    "unravel_index int shape": lambda t: t.unravel_index(t.tensor([1, 2]), 3),
    "unravel_index float": lambda t: t.unravel_index(t.tensor([1.5]), (2, 4)),
    "unravel_index bool": lambda t: t.unravel_index(t.tensor(True), (2,)),
    "unravel_index negative shape": lambda t: t.unravel_index(t.tensor([1]), (2, -1)),
    "isin": lambda t: t.isin(t.tensor([1, 2, 3]), t.tensor([2, 5])),
    "isin invert number": lambda t: t.isin(t.tensor([1, 2, 3]), 2, invert=True),
    "isin number in tensor": lambda t: t.isin(2, t.tensor([1, 2])),
    "isin mixed dtypes": lambda t: t.isin(t.tensor([1, 2]), t.tensor([1.5, 2.0])),
    "isin complex": lambda t: t.isin(t.tensor([1.0, 2]), t.tensor([1 + 0j])),
    "isin grad input": lambda t: t.isin(_f(t, [1.0, 2.0], requires_grad=True), _f(t, [1.0])),
    # samplers: dtypes, graphs and errors (values are the generator's)
    "poisson dtype": lambda t: t.poisson(_f(t, [1.0, 2.0])).dtype,
    "poisson graph": lambda t: t.poisson(_f(t, [1.0], requires_grad=True)).grad_fn.name(),
    "poisson gradient": lambda t: t.autograd.grad(
        t.poisson(_f(t, [1.0, 2.0], requires_grad=True)).sum(),
        t.tensor([1.0, 2.0], dtype=t.float64, requires_grad=True), allow_unused=True),
    "poisson negative rate": lambda t: t.poisson(t.tensor([-1.0])),
    "poisson int64": lambda t: t.poisson(t.tensor([1, 2])),
    "poisson generator int": lambda t: t.poisson(t.tensor([1.0]), generator=1),
    "binomial dtype": lambda t: t.binomial(t.tensor([10.0]), t.tensor([0.5])).dtype,
    "binomial broadcast": lambda t: t.binomial(t.tensor([10.0, 3.0]), t.tensor([0.5])).shape,
    "binomial int count": lambda t: t.binomial(t.tensor([10]), t.tensor([0.5])),
    "binomial mixed dtypes": lambda t: t.binomial(t.tensor([10.0]),
                                                  t.tensor([0.5], dtype=t.float64)),
    "binomial backward": lambda t: t.binomial(t.tensor([10.0], requires_grad=True),
                                              t.tensor([0.5])).sum().backward(),
    "binomial certain": lambda t: t.binomial(t.tensor([7.0, 0.0]), t.tensor([1.0, 0.5])),
    "randint_like dtype": lambda t: t.randint_like(t.zeros(2, dtype=t.float64), 5).dtype,
    "randint_like int32": lambda t: t.randint_like(t.zeros(2, dtype=t.int32), 3, 5).dtype,
    "randint_like empty range": lambda t: t.randint_like(t.zeros(2), 5, 3),
    "randint_like requires_grad": lambda t: t.randint_like(
        t.zeros(2), 5, dtype=t.float64, requires_grad=True).requires_grad,
    # dtype questions and function forms
    "result_type tensor number": lambda t: t.result_type(t.tensor([1]), 2.5),
    "result_type numbers": lambda t: t.result_type(True, 1),
    "result_type 0-d": lambda t: t.result_type(t.tensor(1.0, dtype=t.float64),
                                               t.tensor([1], dtype=t.int32)),
    "result_type of a string": lambda t: t.result_type("a", 1),
    "promote_types": lambda t: t.promote_types(t.uint8, t.int8),
    "promote_types complex": lambda t: t.promote_types(t.bool, t.complex64),
    "promote_types float16 int": lambda t: t.promote_types(t.int32, t.float16),
    "promote_types of a string": lambda t: t.promote_types(t.int32, "a"),
    "typename double": lambda t: t.typename(t.zeros(1, dtype=t.float64)),
    "typename complex64": lambda t: t.typename(t.zeros(1, dtype=t.complex64)),
    "typename float": lambda t: t.typename(1.0),
    "typename module": lambda t: t.typename(t.nn.Linear).split(".")[-1],
    "is_floating_point": lambda t: t.is_floating_point(t.zeros(1)),
    "is_floating_point of a float": lambda t: t.is_floating_point(3.0),
    "is_inference": lambda t: t.is_inference(t.zeros(1)),
    "is_inference of an int": lambda t: t.is_inference(1),
    "detach": lambda t: t.detach(_f(t, [1.0], requires_grad=True) * 2),
    "detach of an int": lambda t: t.detach(1),
    "constants": lambda t: (t.pi, t.e, t.inf, t.newaxis, math.isnan(t.nan)),
    "newaxis indexing": lambda t: t.zeros(3)[:, t.newaxis].shape,
    # linear algebra beside torch.linalg
    "vander": lambda t: t.vander(_f(t, [1.0, 2.0, 3.0])),
    "vander N increasing": lambda t: t.vander(_f(t, [1.0, 2.0]), N=3, increasing=True),
    "vander grad": lambda t: t.vander(_f(t, [1.0, 2.0], requires_grad=True), N=3),
    "vander N 0": lambda t: t.vander(_f(t, [1.0, 2.0]), N=0),
    "vander N 1": lambda t: t.vander(_f(t, [1.0, 2.0]), N=1),
    "vander int32": lambda t: t.vander(t.tensor([1, 2], dtype=t.int32)),
    "vander bool": lambda t: t.vander(t.tensor([True, False])),
    "vander 2-d": lambda t: t.vander(_f(t, [[1.0, 2.0]])),
    "vander negative N": lambda t: t.vander(_f(t, [1.0, 2.0]), N=-1),
    "chain_matmul": lambda t: t.chain_matmul(t.ones(2, 3), t.ones(3, 4), t.ones(4, 2)),
    "chain_matmul one": lambda t: t.chain_matmul(_f(t, [[1.0, 2.0]], requires_grad=True)),
    "chain_matmul none": lambda t: t.chain_matmul(),
    "frobenius_norm": lambda t: t.frobenius_norm(_f(t, [[1.0, 2.0], [3.0, 4.0]]), dim=(0, 1)),
    "frobenius_norm keepdim": lambda t: t.frobenius_norm(t.ones(2, 3), dim=1, keepdim=True),
    "frobenius_norm three dims": lambda t: t.frobenius_norm(t.ones(2, 2, 2), dim=(0, 1, 2)),
    "nuclear_norm": lambda t: t.nuclear_norm(_f(t, [[1.0, 2.0], [3.0, 4.0]])),
    "nuclear_norm dims": lambda t: t.nuclear_norm(t.ones(2, 3, 4), dim=(1, 2)),
    "nuclear_norm keepdim": lambda t: t.nuclear_norm(t.ones(2, 3), True),
    "nuclear_norm 3-d": lambda t: t.nuclear_norm(t.ones(2, 3, 4)),
    "eig removed": lambda t: t.eig(t.eye(2)),
    "solve removed": lambda t: t.solve(t.eye(2), t.eye(2)),
    "lstsq removed": lambda t: t.lstsq(t.eye(2), t.eye(2)),
    "symeig removed": lambda t: t.symeig(t.eye(2)),
    "matrix_rank removed": lambda t: t.matrix_rank(t.eye(2)),
    # Tensor methods
    "output_nr": lambda t: [v.output_nr for v in (_f(t, [1.0, 2.0], requires_grad=True) * 2)
                            .split(1)],
    "output_nr of a leaf": lambda t: _f(t, [1.0], requires_grad=True).output_nr,
    "volatile": lambda t: t.zeros(1).volatile,
    "apply_": lambda t: t.tensor([1.0, 2.0]).apply_(lambda v: v * 2),
    "apply_ int casts": lambda t: t.tensor([1, 2]).apply_(lambda v: v * 1.5),
    "apply_ requires grad": lambda t: _f(t, [1.0], requires_grad=True).apply_(abs),
    "apply_ not callable": lambda t: t.zeros(2).apply_(1),
    "map_": lambda t: t.tensor([1.0, 2.0]).map_(t.tensor([1.0, 1.0]), lambda a, b: a + b),
    "map_ broadcast": lambda t: t.zeros(2, 2).map_(t.tensor([1.0, 2.0]), lambda a, b: a - b),
    "map_ bad shape": lambda t: t.zeros(2).map_(t.ones(3), lambda a, b: a),
    "map2_": lambda t: t.ones(2).map2_(t.ones(2), t.tensor([3.0, 4.0]),
                                       lambda a, b, c: a + b * c),
    "Tensor.eig removed": lambda t: t.eye(2).eig(),
    "Tensor.solve removed": lambda t: t.eye(2).solve(t.eye(2)),
    "Tensor.lstsq removed": lambda t: t.eye(2).lstsq(t.eye(2)),
    "Tensor.symeig removed": lambda t: t.eye(2).symeig(),
    # the regularized incomplete gamma functions
    "igamma": lambda t: t.igamma(t.tensor([1.0, 2.0]), t.tensor([0.5, 3.0])),
    "igamma int and float": lambda t: t.igamma(t.tensor([1, 2]), t.tensor([0.5, 3.0])),
    "igamma ints": lambda t: t.igamma(t.tensor([1, 2]), t.tensor([1, 3])),
    "igammac ints": lambda t: t.igammac(t.tensor([1, 2]), t.tensor([1, 3])),
    "igamma promotes": lambda t: t.igamma(t.tensor([1.0], dtype=t.float64), t.tensor([0.5])),
    "igamma of a number": lambda t: t.igamma(t.tensor([1.0]), 0.5),
    "igamma complex": lambda t: t.igamma(t.tensor([1 + 0j]), t.tensor([1 + 0j])),
    "igamma broadcast": lambda t: t.igamma(t.ones(2, 1), t.ones(3)),
    "igamma bad broadcast": lambda t: t.igamma(t.ones(2), t.ones(3)),
    "gammainc edges": lambda t: t.special.gammainc(
        t.tensor([0.0, 1.0, float("inf"), -1.0, 2.0, 0.5]),
        t.tensor([1.0, 0.0, 2.0, 1.0, float("inf"), 100.0])),
    "gammaincc edges": lambda t: t.special.gammaincc(
        t.tensor([0.0, 1.0, float("inf"), -1.0, 2.0, 0.5]),
        t.tensor([1.0, 0.0, 2.0, 1.0, float("inf"), 100.0])),
    "gammaincc tails": lambda t: t.special.gammaincc(_f(t, [30.0, 100.0, 0.1, 1e-3]),
                                                     _f(t, [5.0, 150.0, 20.0, 1e-4])),
    "gammainc tails": lambda t: t.special.gammainc(_f(t, [30.0, 100.0, 0.1, 1e-3]),
                                                   _f(t, [5.0, 150.0, 20.0, 1e-4])),
    "igamma graph": lambda t: t.igamma(_f(t, [1.0, 2.0], requires_grad=True), _f(t, [1.0, 2.0])),
    "igamma input gradient": lambda t: t.igamma(
        _f(t, [1.0, 2.0], requires_grad=True), _f(t, [1.0, 2.0])).sum().backward(),
    "igammac input gradient": lambda t: t.igammac(
        _f(t, [1.0, 2.0], requires_grad=True), _f(t, [1.0, 2.0])).sum().backward(),
    "igamma gradient": lambda t: _x_grad(t, t.igamma),
    "igammac gradient": lambda t: _x_grad(t, t.igammac),
    "igamma_": lambda t: t.tensor([1.0, 2.0]).igamma_(t.tensor([0.5, 3.0])),
    "igamma_ bad shape": lambda t: t.tensor([1.0]).igamma_(t.tensor([0.5, 3.0])),
    "igammac_ casts": lambda t: t.tensor([1.0, 2.0]).igammac_(t.tensor([0.5], dtype=t.float64)),
    # storages
    "untyped_storage of a view": lambda t: _storage_facts(t, t.arange(6.0).view(2, 3)[:, 1:]),
    "untyped_storage of a tensor": lambda t: _storage_facts(t, t.ones(3, dtype=t.float64)),
    "untyped_storage of a slice": lambda t: _storage_facts(t, t.arange(10, dtype=t.int32)[3:7]),
    "storage values": lambda t: t.arange(6.0).view(2, 3)[:, 1:].storage().tolist(),
    "storage item": lambda t: t.arange(6.0)[2:].storage()[1],
    "storage dtype and sizes": lambda t: _typed_storage_facts(t.zeros(2, 3, dtype=t.int16)),
    "storage repr": lambda t: repr(t.tensor([1.0, 2.0]).storage()),
    "untyped_storage repr": lambda t: repr(t.tensor([1, 2], dtype=t.uint8).untyped_storage()),
    "is_set_to": lambda t: _set_to_facts(t.zeros(4)),
    "is_storage of a storage": lambda t: t.is_storage(t.zeros(2).untyped_storage()),
    # the generator's state
    "get_rng_state": lambda t: (t.get_rng_state().dtype, t.get_rng_state().ndim),
    "set_rng_state float": lambda t: t.set_rng_state(t.zeros(3)),
    "set_rng_state list": lambda t: t.set_rng_state([1, 2]),
    "Generator set_state float": lambda t: t.Generator().set_state(t.zeros(3)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_call_matches_torch(name):
    call = CALLS[name]
    ours, theirs = _outcome(gradnb, call), _outcome(torch, call)
    assert ours[0] == theirs[0], (ours, theirs)
    assert _same(ours[1], theirs[1]), (ours, theirs)


def test_vander_gradient_is_exact():
    """Checked against finite differences: torch 2.13's own ``vander`` backward raises for
    N > 1 (its cumprod's input is overwritten in place by the copy it feeds)."""
    x = gradnb.tensor([1.0, -2.0, 0.5], dtype=gradnb.float64, requires_grad=True)
    assert gradnb.autograd.gradcheck(lambda v: gradnb.vander(v, N=4), (x,))
    assert gradnb.autograd.gradgradcheck(lambda v: gradnb.vander(v, N=3, increasing=True), (x,))


@pytest.mark.parametrize("name", ["chain_matmul", "frobenius_norm", "nuclear_norm"])
def test_gradients_match_torch(name):
    """The compositions' gradients, against torch's on the same input."""
    fns = {
        "chain_matmul": lambda t, x: t.chain_matmul(
            x, t.ones(3, 2, dtype=t.float64), t.full((2, 4), 0.5, dtype=t.float64)),
        "frobenius_norm": lambda t, x: t.frobenius_norm(x, dim=(0, 1)),
        "nuclear_norm": lambda t, x: t.nuclear_norm(x),
    }
    data = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]])
    grads = []
    for lib in (gradnb, torch):
        x = lib.tensor(data, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fns[name](lib, x)
        (out * lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)))).sum() \
            .backward()
        grads.append(np.asarray(x.grad.tolist()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_deprecated_names_warn_once_per_process():
    """As PyTorch's ``TORCH_WARN_ONCE``: only the first call warns, even under 'always'."""
    from gradnb._core import warn_once

    warn_once._warned.discard("chain_matmul")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        gradnb.chain_matmul(gradnb.ones(2, 2), gradnb.ones(2, 2))
        gradnb.chain_matmul(gradnb.ones(2, 2), gradnb.ones(2, 2))
    assert [str(w.message).split(" is ")[0] for w in seen] == ["gradnb.chain_matmul"]


def test_rng_state_round_trips_and_fork_rng_restores():
    gradnb.manual_seed(3)
    state = gradnb.get_rng_state()
    first = gradnb.rand(4)
    gradnb.set_rng_state(state)
    assert gradnb.equal(gradnb.rand(4), first)
    gradnb.set_rng_state(state)
    with gradnb.random.fork_rng():
        gradnb.randn(10)
    assert gradnb.equal(gradnb.rand(4), first)
    before = gradnb.get_rng_state()
    with pytest.raises(RuntimeError):
        gradnb.set_rng_state(gradnb.zeros(3, dtype=gradnb.uint8))
    assert gradnb.equal(gradnb.get_rng_state(), before)  # nothing changed


def test_samplers_follow_their_distributions():
    gradnb.manual_seed(0)
    rates = gradnb.full((20000,), 3.0, dtype=gradnb.float64)
    draws = gradnb.poisson(rates)
    assert abs(draws.mean().item() - 3.0) < 0.1 and abs(draws.var().item() - 3.0) < 0.2
    counts = gradnb.binomial(gradnb.full((20000,), 10.0), gradnb.full((20000,), 0.3))
    assert abs(counts.mean().item() - 3.0) < 0.1 and abs(counts.var().item() - 2.1) < 0.15
    assert counts.min().item() >= 0 and counts.max().item() <= 10
    ints = gradnb.randint_like(gradnb.zeros(20000, dtype=gradnb.int64), 2, 5)
    assert set(ints.unique().tolist()) == {2, 3, 4}


def test_frombuffer_shares_a_writable_buffer():
    buffer = bytearray(8)
    t = gradnb.frombuffer(buffer, dtype=gradnb.int32)
    t[1] = 7
    assert buffer[4] == 7


def test_empty_strided_overlapping_strides_share_memory():
    t = gradnb.empty_strided((3, 2), (0, 1))
    assert t.stride() == (0, 1) and tuple(t.shape) == (3, 2)


SWITCH_CALLS = {
    "set_default_tensor_type cuda": lambda t: t.set_default_tensor_type("torch.cuda.FloatTensor"),
    "set_default_tensor_type LongTensor": lambda t: t.set_default_tensor_type(t.LongTensor),
    "set_default_tensor_type unknown module": lambda t: t.set_default_tensor_type("x"),
    "set_default_tensor_type int": lambda t: t.set_default_tensor_type(1),
    "set_default_tensor_type DoubleTensor": lambda t: (t.set_default_tensor_type(t.DoubleTensor),
                                                       t.tensor([1.0]).dtype),
    "set_default_tensor_type by name": lambda t: (t.set_default_tensor_type("torch.DoubleTensor"),
                                                  t.get_default_dtype()),
    "deterministic debug modes": lambda t: [
        (t.set_deterministic_debug_mode(m), t.get_deterministic_debug_mode(),
         t.are_deterministic_algorithms_enabled(),
         t.is_deterministic_algorithms_warn_only_enabled())
        for m in (1, 2, "default", "warn", "error", 0)],
    "deterministic debug mode 3": lambda t: t.set_deterministic_debug_mode(3),
    "deterministic debug mode name": lambda t: t.set_deterministic_debug_mode("x"),
    "interop threads zero": lambda t: t.set_num_interop_threads(0),
    "interop threads str": lambda t: t.set_num_interop_threads("a"),
    "warn always": lambda t: (t.set_warn_always(True), t.is_warn_always_enabled(),
                              t.set_warn_always(False), t.is_warn_always_enabled()),
    "anomaly switch": lambda t: (t.set_anomaly_enabled(True, check_nan=False),
                                 t.is_anomaly_enabled(), t.is_anomaly_check_nan_enabled(),
                                 t.set_anomaly_enabled(False), t.is_anomaly_enabled()),
    "is_storage": lambda t: t.is_storage(t.zeros(1)),
}


@pytest.mark.parametrize("name", list(SWITCH_CALLS))
def test_switch_matches_torch(name):
    """Process-wide switches: each call is undone after (the default dtype above all)."""
    outcomes = []
    for lib in (gradnb, torch):
        dtype = lib.get_default_dtype()
        try:
            outcomes.append(_outcome(lib, SWITCH_CALLS[name]))
        finally:
            lib.set_default_dtype(dtype)
            lib.use_deterministic_algorithms(False)
            lib.set_anomaly_enabled(False)
    assert outcomes[0][0] == outcomes[1][0], outcomes
    assert _same(outcomes[0][1], outcomes[1][1]), outcomes


def test_interop_threads_are_set_once():
    from gradnb import _runtime

    before = _runtime._settings.interop_threads
    try:
        _runtime._settings.interop_threads = None
        gradnb.set_num_interop_threads(3)
        assert gradnb.get_num_interop_threads() == 3
        with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
            gradnb.set_num_interop_threads(2)
        assert gradnb.get_num_interop_threads() == 3
    finally:
        _runtime._settings.interop_threads = before


def test_warn_always_repeats_once_per_process_warnings():
    gradnb.chain_matmul(gradnb.ones(2, 2), gradnb.ones(2, 2))  # (the first warning, if any)
    gradnb.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            gradnb.chain_matmul(gradnb.ones(2, 2), gradnb.ones(2, 2))
            gradnb.chain_matmul(gradnb.ones(2, 2), gradnb.ones(2, 2))
        assert len(seen) == 2
    finally:
        gradnb.set_warn_always(False)


def test_flush_denormal_is_reported_unsupported():
    assert gradnb.set_flush_denormal(True) is False
    assert np.finfo(np.float64).smallest_subnormal * gradnb.ones(1).double().item() > 0
