"""Ops whose derivative is written in gradnb ops (``Node.on_tensors``): first and second order
against finite differences in float64."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck


def _t(*shape, seed=0, low=-1.0, high=1.0):
    rng = np.random.default_rng(seed)
    return gradnb.tensor(rng.uniform(low, high, shape), dtype=gradnb.float64, requires_grad=True)


def _spd(n, seed=0):
    a = np.random.default_rng(seed).normal(size=(n, n))
    return gradnb.tensor(a @ a.T + n * np.eye(n), requires_grad=True)


CASES = {
    "einsum_matmul": (lambda a, b: gradnb.einsum("ij,jk->ik", a, b), lambda: (_t(2, 3), _t(3, 2, seed=1))),
    "einsum_trace_diag": (lambda a: gradnb.einsum("ii->i", a), lambda: (_t(3, 3),)),
    "einsum_sum_out": (lambda a, b: gradnb.einsum("bij,bj->b", a, b), lambda: (_t(2, 3, 4), _t(2, 4, seed=1))),
    "inv": (lambda a: gradnb.linalg.inv(a), lambda: (_spd(3),)),
    "det": (lambda a: gradnb.linalg.det(a), lambda: (_spd(3),)),
    "solve": (lambda a, b: gradnb.linalg.solve(a, b), lambda: (_spd(3), _t(3, 2, seed=2))),
    "cholesky": (lambda a: gradnb.linalg.cholesky(0.5 * (a + a.mT)), lambda: (_spd(3),)),
    "eigh_values": (lambda a: gradnb.linalg.eigh(0.5 * (a + a.mT)).eigenvalues, lambda: (_spd(3),)),
    "svdvals": (lambda a: gradnb.linalg.svdvals(a), lambda: (_t(3, 2),)),
    "qr": (lambda a: gradnb.linalg.qr(a).R, lambda: (_t(3, 2),)),
    "matrix_exp": (lambda a: gradnb.linalg.matrix_exp(a), lambda: (_t(3, 3),)),
    "atan2": (gradnb.atan2, lambda: (_t(4), _t(4, seed=1))),
    "logaddexp": (gradnb.logaddexp, lambda: (_t(4), _t(4, seed=1))),
    "sinc": (gradnb.sinc, lambda: (_t(5),)),
    "erfinv": (gradnb.erfinv, lambda: (_t(5, low=-0.9, high=0.9),)),
    "lgamma": (gradnb.lgamma, lambda: (_t(5, low=0.5, high=4.0),)),
    "digamma": (gradnb.digamma, lambda: (_t(5, low=0.5, high=4.0),)),
    "polygamma_2": (lambda a: gradnb.polygamma(2, a), lambda: (_t(5, low=0.5, high=4.0),)),
    "i1e": (gradnb.special.i1e, lambda: (_t(5, low=-3.0, high=3.0),)),
    "erfcx": (gradnb.special.erfcx, lambda: (_t(5, low=-3.0, high=3.0),)),
    "logcumsumexp": (lambda a: gradnb.logcumsumexp(a, 1), lambda: (_t(2, 4),)),
    "diagonal_scatter": (lambda a, b: gradnb.diagonal_scatter(a, b), lambda: (_t(3, 3), _t(3, seed=1))),
    "sort_values": (lambda a: gradnb.sort(a, 1).values, lambda: (_t(2, 5),)),
    "quantile": (lambda a: gradnb.quantile(a, 0.3, dim=1), lambda: (_t(2, 5),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_first_and_second_order(name):
    fn, make = CASES[name]
    inputs = make()
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)
