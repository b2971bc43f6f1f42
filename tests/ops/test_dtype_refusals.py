"""Every row of ``gradnb.ops._refusals.REFUSALS`` (the ops whose PyTorch kernels lack complex,
integer, bool or half dtypes) against PyTorch: for each call of each op, on tensors of every
dtype kind (empty and 0-d ones too), gradnb gives torch's result dtype or raises torch's error
type with torch's first sentence."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradnb
from gradnb.ops._refusals import REFUSALS

torch = pytest.importorskip("torch")

# The calls that exercise each row of the table (the key), as ``call(lib, x)``.
CALLS = {
    "erf": [lambda t, x: t.erf(x), lambda t, x: t.special.erf(x), lambda t, x: x.clone().erf_()],
    "erfc": [lambda t, x: t.erfc(x), lambda t, x: t.special.erfc(x)],
    "erfinv": [lambda t, x: t.erfinv(x), lambda t, x: t.special.erfinv(x)],
    "erfcx": [lambda t, x: t.special.erfcx(x)],
    "lgamma": [lambda t, x: t.lgamma(x), lambda t, x: t.special.gammaln(x),
               lambda t, x: x.clone().lgamma_()],
    "digamma": [lambda t, x: t.digamma(x), lambda t, x: t.special.psi(x),
                lambda t, x: t.polygamma(0, x)],
    "trigamma": [lambda t, x: t.polygamma(1, x)],
    "polygamma": [lambda t, x: t.special.polygamma(3, x), lambda t, x: x.polygamma(2)],
    "mvlgamma": [lambda t, x: t.mvlgamma(x, 2), lambda t, x: t.mvlgamma(x, 0)],
    "mvlgamma_arange": [lambda t, x: t.special.multigammaln(x, 1)],
    "i0": [lambda t, x: t.i0(x), lambda t, x: t.special.i0(x)],
    "i0e": [lambda t, x: t.special.i0e(x)],
    "i1": [lambda t, x: t.special.i1(x)],
    "i1e": [lambda t, x: t.special.i1e(x)],
    "log_ndtr": [lambda t, x: t.special.log_ndtr(x)],
    "ndtri": [lambda t, x: t.special.ndtri(x)],
    "entr": [lambda t, x: t.special.entr(x)],
    "logit": [lambda t, x: t.logit(x), lambda t, x: t.special.logit(x, 0.1)],
    "xlogy": [lambda t, x: t.xlogy(x, x), lambda t, x: t.xlogy(2, x),
              lambda t, x: t.special.xlogy(x, 2.0)],
    "xlog1py": [lambda t, x: t.special.xlog1py(x, x)],
    "deg2rad": [lambda t, x: t.deg2rad(x), lambda t, x: x.clone().deg2rad_()],
    "rad2deg": [lambda t, x: t.rad2deg(x)],
    "abs_": [lambda t, x: x.clone().abs_(), lambda t, x: t.abs_(x.clone()),
             lambda t, x: x.clone().absolute_()],
    "heaviside": [lambda t, x: t.heaviside(x, x), lambda t, x: t.heaviside(x.real, x)],
    "fmax": [lambda t, x: t.fmax(x, x)],
    "fmin": [lambda t, x: t.fmin(x, x)],
    "logaddexp": [lambda t, x: t.logaddexp(x, x)],
    "logaddexp2": [lambda t, x: t.logaddexp2(x, x)],
    "nextafter": [lambda t, x: t.nextafter(x, x)],
    "relu": [lambda t, x: t.relu(x), lambda t, x: t.relu_(x.clone()),
             lambda t, x: t.nn.functional.relu(x)],
    "hardtanh": [lambda t, x: t.nn.functional.hardtanh(x), lambda t, x: t.nn.functional.relu6(x)],
    "threshold": [lambda t, x: t.nn.functional.threshold(x, 0.5, 2)],
    "elu": [lambda t, x: t.nn.functional.elu(x), lambda t, x: t.nn.functional.selu(x),
            lambda t, x: t.nn.functional.celu(x)],
    "gelu": [lambda t, x: t.nn.functional.gelu(x),
             lambda t, x: t.nn.functional.gelu(x, approximate="tanh")],
    "leaky_relu": [lambda t, x: t.nn.functional.leaky_relu(x),
                   lambda t, x: t.nn.functional.rrelu(x)],
    "softplus": [lambda t, x: t.nn.functional.softplus(x)],
    "glu": [lambda t, x: t.nn.functional.glu(x.reshape(-1, 2) if x.ndim else x)],
    "prelu": [lambda t, x: t.nn.functional.prelu(x, t.ones(1, dtype=x.dtype))],
    "hardshrink": [lambda t, x: t.nn.functional.hardshrink(x)],
    "softshrink": [lambda t, x: t.nn.functional.softshrink(x)],
    "hardsigmoid": [lambda t, x: t.nn.functional.hardsigmoid(x)],
    "hardswish": [lambda t, x: t.nn.functional.hardswish(x)],
    "logsigmoid": [lambda t, x: t.nn.functional.logsigmoid(x)],
    "mish": [lambda t, x: t.nn.functional.mish(x)],
    "silu": [lambda t, x: t.nn.functional.silu(x)],
    "softmax": [lambda t, x: t.softmax(x, 0), lambda t, x: t.special.softmax(x, 0),
                lambda t, x: t.softmax(x, 0, dtype=t.complex64),
                lambda t, x: t.nn.functional.softmin(x, 0)],
    "softmax_lastdim": [lambda t, x: t.softmax(x, -1), lambda t, x: t.nn.functional.softmax(x)],
    "log_softmax": [lambda t, x: t.log_softmax(x, 0)],
    "log_softmax_lastdim": [lambda t, x: x.log_softmax(-1),
                            lambda t, x: t.special.log_softmax(x, x.ndim - 1)],
    "median": [lambda t, x: t.median(x), lambda t, x: t.nanmedian(x)],
    "median_dim": [lambda t, x: t.median(x, 0), lambda t, x: x.nanmedian(-1)],
    "mode": [lambda t, x: t.mode(x, 0), lambda t, x: t.mode(x, -1)],
    "kthvalue": [lambda t, x: t.kthvalue(x, 1, 0)],
    "nansum": [lambda t, x: t.nansum(x), lambda t, x: t.nansum(x, 0), lambda t, x: t.nanmean(x)],
    "cummax": [lambda t, x: t.cummax(x, 0)],
    "cummin": [lambda t, x: t.cummin(x, -1)],
    "logcumsumexp": [lambda t, x: t.logcumsumexp(x, 0)],
    "aminmax": [lambda t, x: t.aminmax(x), lambda t, x: t.aminmax(x, dim=-1)],
    "aminmax_0d": [lambda t, x: t.aminmax(x, dim=0)],
    "sort": [lambda t, x: t.sort(x), lambda t, x: t.argsort(x, 0), lambda t, x: t.msort(x)],
    "topk": [lambda t, x: t.topk(x, 1), lambda t, x: t.topk(x, 0)],
    "unique": [lambda t, x: t.unique(x), lambda t, x: t.unique(x, sorted=False),
               lambda t, x: t.unique_consecutive(x)],
    "unique_dim": [lambda t, x: t.unique(x, dim=-1), lambda t, x: x.unique_consecutive(dim=-1)],
    "searchsorted": [lambda t, x: t.searchsorted(x, x),
                     lambda t, x: t.bucketize(x, x.reshape(-1))],
    "log_normal_": [lambda t, x: x.clone().log_normal_()],
    "geometric_": [lambda t, x: x.clone().geometric_(0.5)],
    "bernoulli_scalar": [lambda t, x: x.clone().bernoulli_(0.5), lambda t, x: t.bernoulli(x, 0.5)],
    "bernoulli_tensor_p": [lambda t, x: t.zeros(x.shape).bernoulli_(x)],
    "bernoulli_tensor_self": [lambda t, x: x.clone().bernoulli_(t.zeros(x.shape)),
                              lambda t, x: t.bernoulli(x)],
    "arange": [lambda t, x: t.hann_window(3, dtype=x.dtype),
               lambda t, x: t.kaiser_window(4, False, dtype=x.dtype)],
}

_VALUES = np.array([[0.5 + 1j, 0.25, 2], [1.5, -0.5j, 0]])
INPUTS = {
    "complex128": lambda t: t.tensor(_VALUES),
    "complex64": lambda t: t.tensor(_VALUES, dtype=t.complex64),
    "float32": lambda t: t.tensor(_VALUES.real, dtype=t.float32),
    "float16": lambda t: t.tensor(_VALUES.real, dtype=t.float16),
    "bfloat16": lambda t: t.tensor(_VALUES.real, dtype=t.float32).to(t.bfloat16),
    "int64": lambda t: t.tensor([[1, 2, 3], [0, -4, 5]]),
    "uint8": lambda t: t.tensor([[1, 2, 3], [0, 4, 5]], dtype=t.uint8),
    "bool": lambda t: t.tensor([[True, False, True], [True, True, False]]),
    "empty complex128": lambda t: t.zeros(0, 3, dtype=t.complex128),
    "empty complex64, empty last dim": lambda t: t.zeros(2, 0, dtype=t.complex64),
    "empty bool": lambda t: t.zeros(0, 3, dtype=t.bool),
    "empty int64": lambda t: t.zeros(0, 3, dtype=t.int64),
    "0-d complex128": lambda t: t.tensor(1 - 1j),
    "0-d bool": lambda t: t.tensor(True),
}


def _outcome(lib, call, make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = call(lib, make(lib))
        except Exception as e:  # noqa: BLE001 - the error is the outcome compared
            return type(e).__name__, str(e).split("\n")[0].replace("torch.", "gradnb.")
    out = out[0] if isinstance(out, tuple) else out
    return "ok", str(out.dtype).split(".")[-1]


def test_every_row_of_the_table_is_checked():
    assert set(CALLS) == set(REFUSALS)


@pytest.mark.parametrize("key, index", [(key, i) for key, calls in CALLS.items()
                                        for i in range(len(calls))])
def test_refusals_match_torch(key, index):
    call = CALLS[key][index]
    differences = {name: (_outcome(torch, call, make), _outcome(gradnb, call, make))
                   for name, make in INPUTS.items()}
    # Where torch's own error is about something else (a 0-d tensor's missing dim, say), the
    # messages may differ; a refusal's outcome must match exactly.
    differences = {name: pair for name, pair in differences.items() if pair[0] != pair[1]}
    assert not differences
