"""gradnb.distributions against torch.distributions: values and gradients of log_prob,
entropy, moments, cdf/icdf and KL on the same float64 parameters; sampling by shapes, dtypes,
support and moments (gradnb's generator is not PyTorch's); argument validation errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradnb
import gradnb.distributions as D


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


# -- the cases: (id, constructor(dists, **tensors), {param: array}, values to score) -----------
rng = np.random.default_rng(1234)
LOC = rng.normal(size=(2, 3))
SCALE = rng.uniform(0.5, 2.0, size=(2, 3))
PROBS = np.array([[0.2, 0.5, 0.9], [0.01, 0.7, 0.4]])
LOGITS = rng.normal(size=(2, 3))
CAT_PROBS = rng.uniform(0.1, 1.0, size=(2, 4))
CAT_LOGITS = rng.normal(size=(2, 4))
LOW = rng.uniform(-2, 0, size=(2, 3))
HIGH = LOW + rng.uniform(0.5, 2, size=(2, 3))
REAL_VALUES = rng.normal(size=(2, 3)) * 2
BOOL_VALUES = np.array([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
CAT_VALUES = np.array([[0, 3], [2, 1], [1, 1]], dtype=np.float64)  # sample_shape (3,)
UNIT = rng.uniform(0.05, 0.95, size=(2, 3))
UNIFORM_VALUES = LOW + (HIGH - LOW) * rng.uniform(0, 1, size=(2, 3))
RATE = rng.uniform(0.3, 3.0, size=(2, 3))
POSITIVE_VALUES = rng.exponential(size=(2, 3))
_A = rng.normal(size=(2, 3, 3))
COV = _A @ np.swapaxes(_A, -1, -2) + 0.5 * np.eye(3)  # a batch of 2 positive-definite matrices
TRIL = np.linalg.cholesky(COV)
MVN_LOC = rng.normal(size=(3,))
MVN_VALUES = rng.normal(size=(4, 2, 3))
ONE_HOT_VALUES = np.eye(4)[[[0, 3], [2, 2], [1, 0]]]  # sample_shape (3,), batch (2,)
TANH_VALUES = np.tanh(REAL_VALUES)
COUNT_VALUES = np.array([[0.0, 1.0, 3.0], [2.0, 0.0, 5.0]])
MULTINOMIAL_VALUES = np.array([[3.0, 0.0, 5.0, 2.0], [1.0, 1.0, 1.0, 7.0]])
COV_FACTOR = rng.normal(size=(2, 3, 2))
DF = np.array([[0.7, 1.5, 2.0], [2.5, 4.5, 9.0]])  # each branch of StudentT's moments
_STD = np.sqrt(np.diagonal(COV, axis1=-2, axis2=-1))
CORR_CHOLESKY = np.linalg.cholesky(COV / _STD[..., :, None] / _STD[..., None, :])
ANGLES = rng.uniform(-np.pi, np.pi, size=(2, 3))
_SIMPLEX = rng.uniform(0.1, 1.0, size=(2, 4))
SIMPLEX_VALUES = _SIMPLEX / _SIMPLEX.sum(-1, keepdims=True)

CASES = [
    ("normal", lambda d, loc, scale: d.Normal(loc, scale),
     {"loc": LOC, "scale": SCALE}, REAL_VALUES),
    ("normal_scalar_scale", lambda d, loc: d.Normal(loc, 1.5), {"loc": LOC}, REAL_VALUES),
    ("bernoulli_probs", lambda d, probs: d.Bernoulli(probs=probs), {"probs": PROBS},
     BOOL_VALUES),
    ("bernoulli_logits", lambda d, logits: d.Bernoulli(logits=logits), {"logits": LOGITS},
     BOOL_VALUES),
    ("categorical_probs", lambda d, probs: d.Categorical(probs=probs), {"probs": CAT_PROBS},
     CAT_VALUES),
    ("categorical_logits", lambda d, logits: d.Categorical(logits=logits),
     {"logits": CAT_LOGITS}, CAT_VALUES),
    ("uniform", lambda d, low, high: d.Uniform(low, high), {"low": LOW, "high": HIGH},
     UNIFORM_VALUES),
    ("independent_normal", lambda d, loc, scale: d.Independent(d.Normal(loc, scale), 1),
     {"loc": LOC, "scale": SCALE}, REAL_VALUES),
    ("independent_bernoulli", lambda d, logits: d.Independent(d.Bernoulli(logits=logits), 2),
     {"logits": LOGITS}, BOOL_VALUES),
    ("laplace", lambda d, loc, scale: d.Laplace(loc, scale), {"loc": LOC, "scale": SCALE},
     REAL_VALUES),
    ("exponential", lambda d, rate: d.Exponential(rate), {"rate": RATE}, POSITIVE_VALUES),
    ("mvn_covariance", lambda d, loc, cov: d.MultivariateNormal(loc, covariance_matrix=cov),
     {"loc": MVN_LOC, "cov": COV}, MVN_VALUES),
    ("mvn_precision", lambda d, loc, prec: d.MultivariateNormal(loc, precision_matrix=prec),
     {"loc": MVN_LOC, "prec": COV}, MVN_VALUES),
    ("mvn_scale_tril", lambda d, loc, tril: d.MultivariateNormal(loc, scale_tril=tril),
     {"loc": LOC, "tril": TRIL}, MVN_VALUES),
    ("one_hot_probs", lambda d, probs: d.OneHotCategorical(probs=probs), {"probs": CAT_PROBS},
     ONE_HOT_VALUES),
    ("one_hot_logits", lambda d, logits: d.OneHotCategorical(logits=logits),
     {"logits": CAT_LOGITS}, ONE_HOT_VALUES),
    ("log_normal", lambda d, loc, scale: d.LogNormal(loc, scale), {"loc": LOC, "scale": SCALE},
     POSITIVE_VALUES),
    ("tanh_normal", lambda d, loc, scale: d.TransformedDistribution(
        d.Normal(loc, scale), [d.TanhTransform(cache_size=1)]),
     {"loc": LOC, "scale": SCALE}, TANH_VALUES),
    ("logistic", lambda d, loc, scale: d.TransformedDistribution(
        d.Uniform(0.0, 1.0), [d.SigmoidTransform().inv, d.AffineTransform(loc, scale)]),
     {"loc": LOC, "scale": SCALE}, REAL_VALUES),
    ("reflected_exponential", lambda d, rate: d.TransformedDistribution(
        d.Exponential(rate), [d.AffineTransform(1.0, -2.0)]),
     {"rate": RATE}, 1.0 - 2 * POSITIVE_VALUES),
    ("stick_breaking", lambda d, loc, scale: d.TransformedDistribution(
        d.Independent(d.Normal(loc, scale), 1), d.StickBreakingTransform()),
     {"loc": LOC, "scale": SCALE}, SIMPLEX_VALUES),
    ("exp_power", lambda d, loc, scale: d.TransformedDistribution(
        d.Normal(loc, scale), [d.ExpTransform(), d.PowerTransform(scale)]),
     {"loc": LOC, "scale": SCALE}, POSITIVE_VALUES),
    ("cauchy", lambda d, loc, scale: d.Cauchy(loc, scale), {"loc": LOC, "scale": SCALE},
     REAL_VALUES),
    ("gumbel", lambda d, loc, scale: d.Gumbel(loc, scale), {"loc": LOC, "scale": SCALE},
     REAL_VALUES),
    ("half_normal", lambda d, scale: d.HalfNormal(scale), {"scale": SCALE}, POSITIVE_VALUES),
    ("half_cauchy", lambda d, scale: d.HalfCauchy(scale), {"scale": SCALE}, POSITIVE_VALUES),
    ("geometric_probs", lambda d, probs: d.Geometric(probs), {"probs": PROBS}, COUNT_VALUES),
    ("geometric_logits", lambda d, logits: d.Geometric(logits=logits), {"logits": LOGITS},
     COUNT_VALUES),
    ("poisson", lambda d, rate: d.Poisson(rate), {"rate": RATE}, COUNT_VALUES),
    ("binomial_probs", lambda d, probs: d.Binomial(6, probs), {"probs": PROBS}, COUNT_VALUES),
    ("binomial_logits", lambda d, logits: d.Binomial(_tensor_of(d, [[5.0], [9.0]]),
                                                     logits=logits),
     {"logits": LOGITS}, COUNT_VALUES),
    ("multinomial", lambda d, probs: d.Multinomial(10, probs), {"probs": CAT_PROBS},
     MULTINOMIAL_VALUES),
    ("multinomial_logits", lambda d, logits: d.Multinomial(10, logits=logits),
     {"logits": CAT_LOGITS}, MULTINOMIAL_VALUES),
    ("relaxed_bernoulli", lambda d, probs: d.RelaxedBernoulli(
        _tensor_of(d, 0.7), probs=probs), {"probs": PROBS}, UNIT),
    ("relaxed_bernoulli_logits", lambda d, logits, scale: d.RelaxedBernoulli(
        scale, logits=logits), {"logits": LOGITS, "scale": SCALE}, UNIT),
    ("relaxed_one_hot", lambda d, logits: d.RelaxedOneHotCategorical(
        _tensor_of(d, 0.5), logits=logits), {"logits": CAT_LOGITS}, SIMPLEX_VALUES),
    ("mixture_same_family", lambda d, logits, loc: d.MixtureSameFamily(
        d.Categorical(logits=logits), d.Normal(loc, loc.abs() + 0.5)),
     {"logits": CAT_LOGITS, "loc": CAT_LOGITS * 2}, REAL_VALUES[0, :2]),
    ("mixture_of_mvn", lambda d, logits, loc: d.MixtureSameFamily(
        d.Categorical(logits=logits[0, :2]), d.MultivariateNormal(
            loc, scale_tril=_tensor_of(d, TRIL))), {"logits": CAT_LOGITS, "loc": LOC}, MVN_VALUES),
    ("lowrank_mvn", lambda d, loc, factor, diag: d.LowRankMultivariateNormal(loc, factor, diag),
     {"loc": LOC, "factor": COV_FACTOR, "diag": SCALE}, MVN_VALUES),
    ("logistic_normal", lambda d, loc, scale: d.LogisticNormal(loc, scale),
     {"loc": LOC, "scale": SCALE}, SIMPLEX_VALUES),
    ("pareto", lambda d, scale, alpha: d.Pareto(scale, alpha), {"scale": SCALE, "alpha": RATE},
     SCALE + POSITIVE_VALUES),
    ("weibull", lambda d, scale, concentration: d.Weibull(scale, concentration),
     {"scale": SCALE, "concentration": RATE}, POSITIVE_VALUES),
    ("continuous_bernoulli", lambda d, probs: d.ContinuousBernoulli(probs),
     {"probs": np.array([[0.2, 0.5, 0.9], [0.01, 0.4995, 0.45]])}, UNIT),
    ("continuous_bernoulli_logits", lambda d, logits: d.ContinuousBernoulli(logits=logits),
     {"logits": LOGITS}, UNIT),
    ("kumaraswamy", lambda d, a, b: d.Kumaraswamy(a, b), {"a": RATE, "b": SCALE}, UNIT),
    ("gamma", lambda d, concentration, rate: d.Gamma(concentration, rate),
     {"concentration": RATE, "rate": SCALE}, POSITIVE_VALUES),
    ("chi2", lambda d, df: d.Chi2(df), {"df": RATE * 2}, POSITIVE_VALUES),
    ("beta", lambda d, a, b: d.Beta(a, b), {"a": RATE, "b": SCALE}, UNIT),
    ("dirichlet", lambda d, concentration: d.Dirichlet(concentration),
     {"concentration": CAT_PROBS * 3}, SIMPLEX_VALUES),
    ("student_t", lambda d, df, loc, scale: d.StudentT(df, loc, scale),
     {"df": DF, "loc": LOC, "scale": SCALE}, REAL_VALUES),
    ("inverse_gamma", lambda d, concentration, rate: d.InverseGamma(concentration, rate),
     {"concentration": RATE + 2.1, "rate": SCALE}, POSITIVE_VALUES),
    ("fisher_snedecor", lambda d, df1, df2: d.FisherSnedecor(df1, df2),
     {"df1": DF + 1, "df2": DF * 2}, POSITIVE_VALUES),
    ("negative_binomial", lambda d, probs: d.NegativeBinomial(4.5, probs),
     {"probs": PROBS * 0.9}, COUNT_VALUES),
    ("negative_binomial_logits", lambda d, logits, count: d.NegativeBinomial(count,
                                                                              logits=logits),
     {"logits": LOGITS, "count": RATE}, COUNT_VALUES),
    ("generalized_pareto", lambda d, loc, scale, concentration: d.GeneralizedPareto(
        loc, scale, concentration), {"loc": LOC, "scale": SCALE, "concentration": RATE * 0.1},
     LOC + POSITIVE_VALUES),
    ("von_mises", lambda d, loc, concentration: d.VonMises(loc, concentration),
     {"loc": LOC, "concentration": RATE}, ANGLES),
    ("lkj_cholesky", lambda d, concentration: d.LKJCholesky(3, concentration),
     {"concentration": np.array([0.5, 2.0])}, CORR_CHOLESKY),
    ("wishart", lambda d, df, cov: d.Wishart(df, covariance_matrix=cov),
     {"df": np.array([3.5, 6.0]), "cov": COV}, COV[::-1].copy()),
]


def _tensor_of(dists, value):
    """A float64 tensor of the library ``dists`` belongs to."""
    lib = gradnb if dists is D else pytest.importorskip("torch")
    return lib.tensor(value, dtype=lib.float64)

PROPERTIES = ("mean", "mode", "variance", "stddev")
METHODS = ("log_prob", "cdf", "entropy", "icdf", "perplexity")


def _build(lib, dists, case):
    _, ctor, params, _ = case
    tensors = {k: lib.tensor(v, dtype=lib.float64, requires_grad=True) for k, v in params.items()}
    return ctor(dists, **tensors), tensors


def _evaluate(lib, dists, case, what):
    """(value, gradients of a weighted sum w.r.t. the parameters) or the exception raised."""
    dist, tensors = _build(lib, dists, case)
    values = case[3]
    try:
        if what in PROPERTIES:
            out = getattr(dist, what)
        elif what in ("log_prob", "cdf"):
            out = getattr(dist, what)(lib.tensor(values, dtype=lib.float64))
        elif what == "icdf":
            out = dist.icdf(lib.tensor(UNIT, dtype=lib.float64))
        else:
            out = getattr(dist, what)()
    except Exception as exc:  # noqa: BLE001 (compared with what PyTorch raises)
        return type(exc), _first_line(str(exc))
    grads = None
    if out.requires_grad:
        weight = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)),
                            dtype=out.dtype)
        params = list(tensors.values())
        try:
            grads = lib.autograd.grad((out * weight).sum(), params, allow_unused=True)
        except NotImplementedError as exc:  # (Gamma.cdf in the concentration, as PyTorch)
            return _np(out), str(exc)
        grads = [None if g is None else _np(g) for g in grads]
    return _np(out), grads


@pytest.mark.parametrize("what", PROPERTIES + METHODS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(torch, case, what):
    expected = _evaluate(torch, torch.distributions, case, what)
    actual = _evaluate(gradnb, D, case, what)
    if isinstance(expected[0], type):  # raised (GeneralizedPareto of float64: isclose)
        assert actual[0] is expected[0]
        assert actual[1] == expected[1].replace("torch.", "gradnb.")
        return
    np.testing.assert_allclose(actual[0], expected[0], rtol=1e-10, atol=1e-12)
    assert actual[0].dtype == expected[0].dtype
    if isinstance(expected[1], str):
        assert actual[1] == expected[1]
        return
    assert (actual[1] is None) == (expected[1] is None)
    if expected[1] is not None:
        for a, e in zip(actual[1], expected[1]):
            assert (a is None) == (e is None)
            if e is not None:
                np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_shapes_flags_and_repr_match_torch(torch, case):
    expected, _ = _build(torch, torch.distributions, case)
    actual, _ = _build(gradnb, D, case)
    assert tuple(actual.batch_shape) == tuple(expected.batch_shape)
    assert tuple(actual.event_shape) == tuple(expected.event_shape)
    assert type(actual.batch_shape) is gradnb.Size
    assert actual.has_rsample == expected.has_rsample
    assert actual.has_enumerate_support == expected.has_enumerate_support
    assert repr(actual) == repr(expected).replace("torch.", "gradnb.")
    assert repr(actual.support) == repr(expected.support).replace("torch.", "gradnb.")
    for shape in [(), (5,), (2, 1)]:
        sample = actual.sample(shape)
        reference = expected.sample(shape)
        assert tuple(sample.shape) == tuple(reference.shape)
        assert str(sample.dtype).split(".")[1] == str(reference.dtype).split(".")[1]
        assert not sample.requires_grad
        assert bool(actual.support.check(sample).all())
    expanded, expanded_ref = actual.expand((4, 2, 3)[:len(actual.batch_shape) + 1]), None
    expanded_ref = expected.expand((4, 2, 3)[:len(expected.batch_shape) + 1])
    assert tuple(expanded.batch_shape) == tuple(expanded_ref.batch_shape)
    assert tuple(expanded.sample((2,)).shape) == tuple(expanded_ref.sample((2,)).shape)
    if expected.has_enumerate_support:
        for expand in (True, False):
            error = _raised(lambda e=expand: expected.enumerate_support(e))
            if error is not None:  # Binomial with counts that differ across the batch
                assert type(_raised(lambda e=expand: actual.enumerate_support(e))) is type(error)
                continue
            np.testing.assert_array_equal(_np(actual.enumerate_support(expand)),
                                          _np(expected.enumerate_support(expand)))


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in
                                  ("normal", "uniform", "independent_normal")],
                         ids=lambda c: c[0])
def test_rsample_carries_the_reparameterization_gradient(case):
    """rsample is ``loc + eps * scale`` (``low + u * (high - low)``): d sample / d loc = 1 and
    d sample / d scale = eps, recovered from the sample itself."""
    gradnb.manual_seed(3)
    dist, tensors = _build(gradnb, D, case)
    sample = dist.rsample((7,))
    assert sample.requires_grad
    grads = gradnb.autograd.grad(sample.sum(), list(tensors.values()))
    s = _np(sample)
    if "loc" in tensors:
        eps = (s - LOC) / SCALE
        np.testing.assert_allclose(_np(grads[0]), np.full(LOC.shape, 7.0))
        np.testing.assert_allclose(_np(grads[1]), eps.sum(0), rtol=1e-10)
    else:
        u = (s - LOW) / (HIGH - LOW)
        np.testing.assert_allclose(_np(grads[0]), (1 - u).sum(0), rtol=1e-10)
        np.testing.assert_allclose(_np(grads[1]), u.sum(0), rtol=1e-10)


# heavy tails, or angles (von Mises: the mean of the draws is not the circular mean)
HEAVY_TAILED = {"log_normal", "pareto", "weibull", "inverse_gamma", "fisher_snedecor",
                "student_t", "von_mises", "generalized_pareto"}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_sample_moments(case):
    gradnb.manual_seed(0)
    dist, _ = _build(gradnb, D, case)
    n = 40000
    samples = _np(dist.sample((n,)))
    try:  # the empirical CDF at the case's values
        cdf = _np(dist.cdf(gradnb.tensor(case[3], dtype=gradnb.float64)))
        np.testing.assert_allclose((samples <= case[3]).mean(0), cdf, atol=0.015)
    except NotImplementedError:
        pass
    except RuntimeError:  # GeneralizedPareto of float64 (PyTorch's isclose against float32)
        assert case[0] == "generalized_pareto"
    try:
        mean, variance = _np(dist.mean), _np(dist.variance)
    except NotImplementedError:  # a TransformedDistribution: the support is all to check
        assert bool(dist.support.check(gradnb.tensor(samples)).all())
        return
    if isinstance(dist, D.Categorical):  # compare the class frequencies instead
        probs = _np(dist.probs)
        freq = np.stack([(samples == k).mean(0) for k in range(probs.shape[-1])], -1)
        np.testing.assert_allclose(freq, probs, atol=0.015)
        return
    if case[0] in HEAVY_TAILED or not np.isfinite(variance).all():
        return  # the sample moments are too noisy (or do not exist) to compare
    se = np.sqrt(variance / n)
    assert np.all(np.abs(samples.mean(0) - mean) < 5 * se + 1e-12)
    np.testing.assert_allclose(samples.var(0), variance, rtol=0.05, atol=1e-3)


def test_sampling_is_seeded_by_manual_seed():
    dist = D.Normal(gradnb.zeros(3), gradnb.ones(3))
    gradnb.manual_seed(11)
    first = _np(dist.sample((4,)))
    gradnb.manual_seed(11)
    np.testing.assert_array_equal(_np(dist.sample((4,))), first)


def test_float32_parameters_give_float32_results(torch):
    dist = D.Normal(gradnb.zeros(2), 2.0)
    assert dist.scale.dtype == gradnb.float32
    assert dist.rsample((3,)).dtype == gradnb.float32
    assert dist.log_prob(gradnb.zeros(2)).dtype == gradnb.float32
    assert D.Normal(0.0, 1.0).loc.dtype == gradnb.get_default_dtype()
    assert D.Categorical(logits=gradnb.zeros(3)).sample().dtype == gradnb.int64


def test_categorical_normalizes_probs_and_logits(torch):
    logits = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 5.0]])
    for kw in ("probs", "logits"):
        raw = np.abs(logits) if kw == "probs" else logits
        a = D.Categorical(**{kw: gradnb.tensor(raw, dtype=gradnb.float64)})
        e = torch.distributions.Categorical(**{kw: torch.tensor(raw, dtype=torch.float64)})
        np.testing.assert_allclose(_np(a.logits), _np(e.logits), rtol=1e-12)
        np.testing.assert_allclose(_np(a.probs), _np(e.probs), rtol=1e-12)


# -- validation --------------------------------------------------------------------------------
def _first_line(message: str) -> str:
    return message.split("\n")[0]


INVALID = [
    ("normal_negative_scale", lambda d, t: d.Normal(t([0.0, 1.0]), t([1.0, -1.0]))),
    ("normal_nan_loc", lambda d, t: d.Normal(t([math.nan]), t([1.0]))),
    ("normal_scalar", lambda d, t: d.Normal(0.0, 0.0)),
    ("normal_string", lambda d, t: d.Normal("a", 1.0)),
    ("bernoulli_both", lambda d, t: d.Bernoulli(probs=t([0.5]), logits=t([0.0]))),
    ("bernoulli_neither", lambda d, t: d.Bernoulli()),
    ("bernoulli_probs_above_one", lambda d, t: d.Bernoulli(probs=t([0.5, 1.5]))),
    ("categorical_negative", lambda d, t: d.Categorical(probs=t([0.5, -0.1, 0.6]))),
    ("categorical_0d", lambda d, t: d.Categorical(probs=t(1.0))),
    ("categorical_0d_logits", lambda d, t: d.Categorical(logits=t(1.0))),
    ("uniform_low_above_high", lambda d, t: d.Uniform(t([0.0, 2.0]), t([1.0, 1.0]))),
    ("independent_too_many", lambda d, t: d.Independent(d.Normal(t([0.0]), t([1.0])), 2)),
    ("log_prob_outside_support", lambda d, t: d.Bernoulli(t([0.5])).log_prob(t([0.5]))),
    ("log_prob_not_tensor", lambda d, t: d.Normal(t([0.0]), t([1.0])).log_prob(0.0)),
    ("log_prob_bad_shape", lambda d, t: d.Normal(t([0.0, 0.0]), t([1.0, 1.0])).log_prob(
        t([0.0, 0.0, 0.0]))),
    ("log_prob_bad_event", lambda d, t: d.Independent(d.Normal(t([0.0, 0.0]), t([1.0, 1.0])),
                                                      1).log_prob(t([0.0, 0.0, 0.0]))),
    ("categorical_value_out_of_range", lambda d, t: d.Categorical(t([0.5, 0.5])).log_prob(
        t([2.0]))),
    ("uniform_value_outside", lambda d, t: d.Uniform(t([0.0]), t([1.0])).cdf(t([2.0]))),
    ("enumerate_not_implemented", lambda d, t: d.Uniform(t([0.0]), t([1.0])).enumerate_support()),
    ("laplace_negative_scale", lambda d, t: d.Laplace(t([0.0]), t([-1.0]))),
    ("exponential_zero_rate", lambda d, t: d.Exponential(t([1.0, 0.0]))),
    ("exponential_negative_value", lambda d, t: d.Exponential(t([1.0])).log_prob(t([-1.0]))),
    ("one_hot_negative", lambda d, t: d.OneHotCategorical(t([0.5, -0.1, 0.6]))),
    ("one_hot_not_one_hot", lambda d, t: d.OneHotCategorical(t([0.5, 0.5])).log_prob(
        t([1.0, 1.0]))),
    ("mvn_0d_loc", lambda d, t: d.MultivariateNormal(t(0.0), t([[1.0]]))),
    ("mvn_two_matrices", lambda d, t: d.MultivariateNormal(
        t([0.0]), t([[1.0]]), scale_tril=t([[1.0]]))),
    ("mvn_no_matrix", lambda d, t: d.MultivariateNormal(t([0.0]))),
    ("mvn_cov_1d", lambda d, t: d.MultivariateNormal(t([0.0]), t([1.0]))),
    ("mvn_tril_1d", lambda d, t: d.MultivariateNormal(t([0.0]), scale_tril=t([1.0]))),
    ("mvn_precision_1d", lambda d, t: d.MultivariateNormal(t([0.0]), precision_matrix=t([1.0]))),
    ("mvn_not_positive_definite", lambda d, t: d.MultivariateNormal(
        t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]]))),
    ("mvn_not_symmetric", lambda d, t: d.MultivariateNormal(
        t([0.0, 0.0]), t([[1.0, 0.5], [0.0, 1.0]]))),
    ("mvn_tril_not_lower", lambda d, t: d.MultivariateNormal(
        t([0.0, 0.0]), scale_tril=t([[1.0, 0.5], [0.0, 1.0]]))),
    ("mvn_tril_negative_diagonal", lambda d, t: d.MultivariateNormal(
        t([0.0, 0.0]), scale_tril=t([[1.0, 0.0], [0.3, -1.0]]))),
    ("mvn_batch_mismatch", lambda d, t: d.MultivariateNormal(
        t([[0.0, 0.0]] * 3), scale_tril=t([[[1.0, 0.0], [0.0, 1.0]]] * 2))),
    ("mvn_value_bad_event", lambda d, t: d.MultivariateNormal(
        t([0.0, 0.0]), t([[1.0, 0.0], [0.0, 1.0]])).log_prob(t([0.0, 0.0, 0.0]))),
    ("kl_mvn_event_mismatch", lambda d, t: d.kl_divergence(
        d.MultivariateNormal(t([0.0]), t([[1.0]])),
        d.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 0.0], [0.0, 1.0]])))),
    ("binomial_negative_count", lambda d, t: d.Binomial(t([-1.0]), t([0.5]))),
    ("binomial_value_above_count", lambda d, t: d.Binomial(3, t([0.5])).log_prob(t([4.0]))),
    ("poisson_negative_rate", lambda d, t: d.Poisson(t([-1.0]))),
    ("poisson_fractional_value", lambda d, t: d.Poisson(t([1.0])).log_prob(t([0.5]))),
    ("geometric_zero_probs", lambda d, t: d.Geometric(t([0.0]))),
    ("multinomial_value_negative", lambda d, t: d.Multinomial(3, t([0.5, 0.5])).log_prob(
        t([-1.0, 4.0]))),
    ("mixture_not_categorical", lambda d, t: d.MixtureSameFamily(
        d.Normal(t([0.0]), t([1.0])), d.Normal(t([0.0]), t([1.0])))),
    ("mixture_not_distribution", lambda d, t: d.MixtureSameFamily(
        d.Categorical(t([0.5, 0.5])), t([0.0, 1.0]))),
    ("mixture_batch_mismatch", lambda d, t: d.MixtureSameFamily(
        d.Categorical(t([[0.5, 0.5]] * 3)), d.Normal(t([[0.0, 1.0]] * 2), t([[1.0, 1.0]] * 2)))),
    ("mixture_components_mismatch", lambda d, t: d.MixtureSameFamily(
        d.Categorical(t([0.5, 0.5])), d.Normal(t([0.0, 1.0, 2.0]), t([1.0, 1.0, 1.0])))),
    ("lowrank_factor_1d", lambda d, t: d.LowRankMultivariateNormal(
        t([0.0, 0.0]), t([1.0, 1.0]), t([1.0, 1.0]))),
    ("lowrank_diag_0d", lambda d, t: d.LowRankMultivariateNormal(
        t([0.0, 0.0]), t([[1.0], [1.0]]), t(1.0))),
    ("lowrank_bad_event", lambda d, t: d.LowRankMultivariateNormal(
        t([0.0, 0.0]), t([[1.0], [1.0], [1.0]]), t([1.0, 1.0, 1.0]))),
    ("pareto_value_below_scale", lambda d, t: d.Pareto(t([2.0]), t([1.0])).log_prob(t([1.0]))),
    ("relaxed_bernoulli_both", lambda d, t: d.RelaxedBernoulli(t(0.5), t([0.5]), t([0.0]))),
    ("continuous_bernoulli_probs", lambda d, t: d.ContinuousBernoulli(t([1.5]),
                                                                      validate_args=True)),
    ("transformed_not_transform", lambda d, t: d.TransformedDistribution(
        d.Normal(t([0.0]), t([1.0])), [d.ExpTransform(), 3])),
    ("transformed_not_list", lambda d, t: d.TransformedDistribution(
        d.Normal(t([0.0]), t([1.0])), 3)),
    ("kl_independent_ndims", lambda d, t: d.kl_divergence(
        d.Independent(d.Normal(t([[0.0]]), t([[1.0]])), 1),
        d.Independent(d.Normal(t([[0.0]]), t([[1.0]])), 2))),
    ("set_default_validate_args", lambda d, t: d.Distribution.set_default_validate_args(2)),
]


def _raised(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 (the comparison is on whatever is raised)
        return exc
    return None


@pytest.mark.parametrize("build", [b for _, b in INVALID], ids=[n for n, _ in INVALID])
def test_invalid_arguments_raise_as_torch(torch, build):
    expected = _raised(lambda: build(torch.distributions, torch.tensor))
    actual = _raised(lambda: build(D, gradnb.tensor))
    assert expected is not None
    assert type(actual) is type(expected), actual
    assert _first_line(str(actual)) == _first_line(str(expected)).replace("torch.", "gradnb.")


def test_validate_args_false_skips_checks(torch):
    dist = D.Normal(gradnb.tensor([0.0]), gradnb.tensor([-1.0]), validate_args=False)
    assert math.isnan(float(dist.log_prob(gradnb.tensor([0.0]))))
    D.Bernoulli(gradnb.tensor([0.5]), validate_args=False).log_prob(gradnb.tensor([0.5]))


def test_set_default_validate_args():
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(0.0, -1.0)  # no error
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(0.0, -1.0)


def test_lazy_parameters_keep_the_graph():
    probs = gradnb.tensor([0.2, 0.7], dtype=gradnb.float64, requires_grad=True)
    with gradnb.no_grad():
        dist = D.Bernoulli(probs=probs)
    logits = dist.logits  # derived lazily, with grad enabled as PyTorch's lazy_property
    assert logits.requires_grad
    assert "logits" in dist.__dict__


def test_namespace():
    import gradnb as torch_like

    assert torch_like.distributions is D
    assert torch_like.distributions.Normal is D.Normal
    from gradnb.distributions import constraints

    assert constraints.positive.check(gradnb.tensor([1.0, -1.0])).tolist() == [True, False]


# -- kl_divergence -----------------------------------------------------------------------------
LOC2 = rng.normal(size=(2, 3))
SCALE2 = rng.uniform(0.5, 2.0, size=(2, 3))
PROBS2 = np.array([[0.3, 0.5, 0.0], [1.0, 0.6, 0.4]])  # 0 and 1 exercise the infinite terms
_B = rng.normal(size=(3, 3))
COV2 = _B @ _B.T + np.eye(3)

KL_PAIRS = [
    ("normal_normal", lambda d, a, b, c, e: (d.Normal(a, b), d.Normal(c, e)),
     (LOC, SCALE, LOC2, SCALE2)),
    ("bernoulli_bernoulli", lambda d, a, b: (d.Bernoulli(a), d.Bernoulli(b)), (PROBS, PROBS2)),
    ("bernoulli_zero_one", lambda d, a, b: (d.Bernoulli(b), d.Bernoulli(a)), (PROBS, PROBS2)),
    ("bernoulli_logits", lambda d, a, b: (d.Bernoulli(logits=a), d.Bernoulli(logits=b)),
     (LOGITS, LOC2)),
    ("bernoulli_scalar", lambda d, a, b: (d.Bernoulli(a), d.Bernoulli(b)),
     (np.array(0.3), np.array(0.0))),
    ("categorical_categorical", lambda d, a, b: (d.Categorical(a), d.Categorical(logits=b)),
     (CAT_PROBS, CAT_LOGITS)),
    ("categorical_zero", lambda d, a, b: (d.Categorical(a), d.Categorical(b)),
     (np.array([0.5, 0.0, 0.5]), np.array([0.2, 0.3, 0.0]))),
    ("one_hot_one_hot", lambda d, a, b: (d.OneHotCategorical(a),
                                         d.OneHotCategorical(logits=b)),
     (CAT_PROBS, CAT_LOGITS)),
    ("uniform_uniform", lambda d, a, b, c, e: (d.Uniform(a, b), d.Uniform(c, e)),
     (LOW, HIGH, LOW - 0.5, HIGH + np.array([[0.5, -0.1, 0.3], [0.2, 0.2, -1.0]]))),
    ("independent_independent", lambda d, a, b, c, e: (
        d.Independent(d.Normal(a, b), 2), d.Independent(d.Normal(c, e), 2)),
     (LOC, SCALE, LOC2, SCALE2)),
    ("laplace_laplace", lambda d, a, b, c, e: (d.Laplace(a, b), d.Laplace(c, e)),
     (LOC, SCALE, LOC2, SCALE2)),
    ("exponential_exponential", lambda d, a, b: (d.Exponential(a), d.Exponential(b)),
     (RATE, SCALE)),
    ("mvn_mvn", lambda d, a, b, c, e: (d.MultivariateNormal(a, covariance_matrix=b),
                                       d.MultivariateNormal(c, scale_tril=e)),
     (LOC, COV, MVN_LOC, np.linalg.cholesky(COV2))),
    ("mvn_mvn_precision", lambda d, a, b, c, e: (d.MultivariateNormal(a, precision_matrix=e),
                                                 d.MultivariateNormal(c, covariance_matrix=b)),
     (MVN_LOC, COV, LOC[0], COV2)),
    ("laplace_normal", lambda d, a, b, c, e: (d.Laplace(a, b), d.Normal(c, e)),
     (LOC, SCALE, LOC2, SCALE2)),
    ("normal_laplace", lambda d, a, b, c, e: (d.Normal(a, b), d.Laplace(c, e)),
     (LOC, SCALE, LOC2, SCALE2)),
    ("exponential_normal", lambda d, a, b, c: (d.Exponential(a), d.Normal(b, c)),
     (RATE, LOC2, SCALE2)),
    ("uniform_normal", lambda d, a, b, c, e: (d.Uniform(a, b), d.Normal(c, e)),
     (LOW, HIGH, LOC2, SCALE2)),
    ("uniform_exponential", lambda d, a, b, c: (d.Uniform(a, b), d.Exponential(c)),
     (LOW + 1.5, HIGH + 1.5, RATE)),
    ("normal_uniform", lambda d, a, b, c, e: (d.Normal(a, b), d.Uniform(c, e)),
     (LOC, SCALE, LOW, HIGH)),
    ("laplace_exponential", lambda d, a, b, c: (d.Laplace(a, b), d.Exponential(c)),
     (LOC, SCALE, RATE)),
    ("exponential_uniform", lambda d, a, b, c: (d.Exponential(a), d.Uniform(b, c)),
     (RATE, LOW, HIGH)),
    ("binomial_binomial", lambda d, a, b: (d.Binomial(7, a), d.Binomial(7, logits=b)),
     (PROBS, LOGITS)),
    ("geometric_geometric", lambda d, a, b: (d.Geometric(a), d.Geometric(logits=b)),
     (PROBS * 0.9 + 0.05, LOGITS)),
    ("poisson_poisson", lambda d, a, b: (d.Poisson(a), d.Poisson(b)), (RATE, SCALE)),
    ("gumbel_gumbel", lambda d, a, b, c, e: (d.Gumbel(a, b), d.Gumbel(c, e)),
     (LOC, SCALE, LOC2, SCALE2)),
    ("half_normal_half_normal", lambda d, a, b: (d.HalfNormal(a), d.HalfNormal(b)),
     (SCALE, SCALE2)),
    ("pareto_pareto", lambda d, a, b, c, e: (d.Pareto(a, b), d.Pareto(c, e)),
     (SCALE, RATE, SCALE2, RATE + 1)),
    ("cauchy_cauchy", lambda d, a, b, c, e: (d.Cauchy(a, b), d.Cauchy(c, e)),
     (LOC, SCALE, LOC2, SCALE2)),
    ("continuous_bernoulli_pair", lambda d, a, b: (d.ContinuousBernoulli(a),
                                                   d.ContinuousBernoulli(logits=b)),
     (PROBS * 0.9 + 0.05, LOGITS)),
    ("lowrank_lowrank", lambda d, a, b, c, e, f, g: (d.LowRankMultivariateNormal(a, b, c),
                                                     d.LowRankMultivariateNormal(e, f, g)),
     (LOC, COV_FACTOR, SCALE, LOC2, COV_FACTOR[::-1] * 0.5, SCALE2)),
    ("mvn_lowrank", lambda d, a, b, e, f, g: (d.MultivariateNormal(a, b),
                                              d.LowRankMultivariateNormal(e, f, g)),
     (MVN_LOC, COV, LOC2, COV_FACTOR, SCALE2)),
    ("lowrank_mvn", lambda d, e, f, g, a, b: (d.LowRankMultivariateNormal(e, f, g),
                                              d.MultivariateNormal(a, b)),
     (LOC2, COV_FACTOR, SCALE2, MVN_LOC, COV)),
    ("normal_gumbel", lambda d, a, b, c, e: (d.Normal(a, b), d.Gumbel(c, e)),
     (LOC, SCALE, LOC2, SCALE2)),
    ("gumbel_normal", lambda d, a, b, c, e: (d.Gumbel(a, b), d.Normal(c, e)),
     (LOC, SCALE, LOC2, SCALE2)),
    ("exponential_gumbel", lambda d, a, b, c: (d.Exponential(a), d.Gumbel(b, c)),
     (RATE, LOC2, SCALE2)),
    ("uniform_gumbel", lambda d, a, b, c, e: (d.Uniform(a, b), d.Gumbel(c, e)),
     (LOW, HIGH, LOC2, SCALE2)),
    ("pareto_normal", lambda d, a, b, c, e: (d.Pareto(a, b), d.Normal(c, e)),
     (SCALE, RATE + np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 3.0]]), LOC2, SCALE2)),
    ("pareto_exponential", lambda d, a, b, c: (d.Pareto(a, b), d.Exponential(c)),
     (SCALE, RATE, SCALE2)),
    ("uniform_pareto", lambda d, a, b, c, e: (d.Uniform(a, b), d.Pareto(c, e)),
     (LOW + 2, HIGH + 2, SCALE, RATE)),
    ("bernoulli_poisson", lambda d, a, b: (d.Bernoulli(a), d.Poisson(b)), (PROBS, RATE)),
    ("poisson_bernoulli", lambda d, a, b: (d.Poisson(a), d.Bernoulli(b)), (RATE, PROBS)),
    ("continuous_bernoulli_normal", lambda d, a, b, c: (d.ContinuousBernoulli(a),
                                                        d.Normal(b, c)),
     (PROBS * 0.9 + 0.05, LOC2, SCALE2)),
    ("continuous_bernoulli_uniform", lambda d, a, b, c: (d.ContinuousBernoulli(a),
                                                         d.Uniform(b, c)),
     (PROBS * 0.9 + 0.05, LOW, HIGH)),
    ("uniform_continuous_bernoulli", lambda d, a, b, c: (d.Uniform(a, b),
                                                         d.ContinuousBernoulli(c)),
     (np.full((2, 3), 0.1), np.full((2, 3), 0.7), PROBS * 0.9 + 0.05)),
    ("continuous_bernoulli_exponential", lambda d, a, b: (d.ContinuousBernoulli(a),
                                                          d.Exponential(b)),
     (PROBS * 0.9 + 0.05, RATE)),
    ("exponential_continuous_bernoulli", lambda d, a, b: (d.Exponential(a),
                                                          d.ContinuousBernoulli(b)),
     (RATE, PROBS * 0.9 + 0.05)),
]


def _kl(lib, dists, build, arrays):
    params = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    p, q = build(dists, *params)
    out = dists.kl_divergence(p, q)
    grads = lib.autograd.grad(out.sum(), params, allow_unused=True) if out.requires_grad else ()
    return _np(out), [None if g is None else _np(g) for g in grads]


@pytest.mark.parametrize("build,arrays", [(b, a) for _, b, a in KL_PAIRS],
                         ids=[n for n, _, _ in KL_PAIRS])
def test_kl_divergence_matches_torch(torch, build, arrays):
    expected = _kl(torch, torch.distributions, build, arrays)
    actual = _kl(gradnb, D, build, arrays)
    np.testing.assert_allclose(actual[0], expected[0], rtol=1e-9, atol=1e-12)
    assert len(actual[1]) == len(expected[1])
    for a, e in zip(actual[1], expected[1]):
        assert (a is None) == (e is None)
        if e is not None:
            np.testing.assert_allclose(a, e, rtol=1e-8, atol=1e-12)


def test_kl_divergence_of_an_unregistered_pair_raises_as_torch(torch):
    expected = _raised(lambda: torch.distributions.kl_divergence(
        torch.distributions.Categorical(torch.tensor([0.5, 0.5])),
        torch.distributions.Normal(0.0, 1.0)))
    actual = _raised(lambda: D.kl_divergence(D.Categorical(gradnb.tensor([0.5, 0.5])),
                                             D.Normal(0.0, 1.0)))
    assert type(actual) is type(expected) is NotImplementedError
    assert str(actual) == str(expected)


def test_register_kl_takes_the_most_specific_match():
    class MyNormal(D.Normal):
        pass

    calls = []

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        calls.append((type(p), type(q)))
        return gradnb.zeros(())

    try:
        D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0))
        assert calls == [(MyNormal, D.Normal)]
        # Normal-Normal still resolves to the closed form
        kl = D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 1.0))
        assert float(kl) == pytest.approx(0.5)
    finally:
        from gradnb.distributions import kl

        del kl._KL_REGISTRY[MyNormal, D.Normal]
        kl._KL_MEMOIZE.clear()


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in
                                  ("laplace", "exponential", "mvn_scale_tril")],
                         ids=lambda c: c[0])
def test_rsample_is_differentiable_and_in_the_support(case):
    dist, tensors = _build(gradnb, D, case)
    sample = dist.rsample((5,))
    assert sample.requires_grad
    grads = gradnb.autograd.grad(sample.sum(), list(tensors.values()))
    if case[0] == "exponential":  # sample = E / rate: d/d rate = -sample / rate
        np.testing.assert_allclose(_np(grads[0]), (-_np(sample) / RATE).sum(0), rtol=1e-10)
    else:  # location families: d/d loc = 1 per draw
        np.testing.assert_allclose(_np(grads[0]).sum(), sample.numel())
    assert bool(dist.support.check(sample).all())


def test_one_hot_straight_through_gradient(torch):
    logits = gradnb.tensor(CAT_LOGITS, requires_grad=True)
    dist = D.OneHotCategoricalStraightThrough(logits=logits)
    sample = dist.rsample((3,))
    assert set(np.unique(_np(sample))) <= {0.0, 1.0}
    weight = gradnb.tensor(np.random.default_rng(7).normal(size=(3, 2, 4)))
    (grad,) = gradnb.autograd.grad((sample * weight).sum(), [logits])
    t_logits = torch.tensor(CAT_LOGITS, requires_grad=True)
    t_probs = torch.distributions.OneHotCategoricalStraightThrough(logits=t_logits).probs
    (expected,) = torch.autograd.grad((t_probs * torch.tensor(_np(weight)).sum(0)).sum(),
                                      [t_logits])
    np.testing.assert_allclose(_np(grad), expected.numpy(), rtol=1e-6)


# -- transforms --------------------------------------------------------------------------------
TRANSFORMS = [
    ("exp", lambda d, p: d.ExpTransform(), REAL_VALUES),
    ("sigmoid", lambda d, p: d.SigmoidTransform(), REAL_VALUES),
    ("softplus", lambda d, p: d.SoftplusTransform(), REAL_VALUES),
    ("tanh", lambda d, p: d.TanhTransform(), REAL_VALUES / 3),
    ("affine", lambda d, p: d.AffineTransform(p, 2 * p + 3), REAL_VALUES),
    ("affine_event", lambda d, p: d.AffineTransform(p, p.abs() + 0.5, event_dim=1), REAL_VALUES),
    ("power", lambda d, p: d.PowerTransform(p.abs() + 0.5), POSITIVE_VALUES),
    ("stick_breaking", lambda d, p: d.StickBreakingTransform(), REAL_VALUES),
    ("compose", lambda d, p: d.ComposeTransform([d.AffineTransform(p, 2.0), d.ExpTransform(),
                                                 d.AffineTransform(1.0, -1.0)]), REAL_VALUES),
    ("independent", lambda d, p: d.IndependentTransform(d.SigmoidTransform(), 1), REAL_VALUES),
    ("inverse_sigmoid", lambda d, p: d.SigmoidTransform().inv, UNIT),
    ("reshape", lambda d, p: d.ReshapeTransform((3,), (3, 1)), REAL_VALUES),
    ("lower_cholesky", lambda d, p: d.LowerCholeskyTransform(), COV),
    ("corr_cholesky", lambda d, p: d.CorrCholeskyTransform(), REAL_VALUES),
]


def _transform_results(lib, dists, build, values):
    param = lib.tensor(LOC[0], dtype=lib.float64, requires_grad=True)
    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    t = build(dists, param)
    y = t(x)
    outs = [y, t.inv(y.detach())]
    try:
        outs.append(t.log_abs_det_jacobian(x, y))
    except NotImplementedError:
        pass
    results = []
    for out in outs:
        grads = []
        if out.requires_grad:
            weight = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))
            grads = lib.autograd.grad((out * weight).sum(), [param, x], allow_unused=True,
                                      retain_graph=True)
        results.append((_np(out), [None if g is None else _np(g) for g in grads]))
    shapes = (tuple(t.forward_shape(tuple(x.shape))), tuple(t.inverse_shape(tuple(y.shape))))
    return results, shapes, repr(t), t.domain.event_dim, t.codomain.event_dim, t.bijective


@pytest.mark.parametrize("build,values", [(b, v) for _, b, v in TRANSFORMS],
                         ids=[n for n, _, _ in TRANSFORMS])
def test_transforms_match_torch(torch, build, values):
    expected = _transform_results(torch, torch.distributions, build, values)
    actual = _transform_results(gradnb, D, build, values)
    assert actual[1:] == expected[1:]
    assert len(actual[0]) == len(expected[0])
    for (a, ag), (e, eg) in zip(actual[0], expected[0]):
        np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-12)
        for g, h in zip(ag, eg):
            assert (g is None) == (h is None)
            if h is not None:
                np.testing.assert_allclose(g, h, rtol=1e-8, atol=1e-12)


def test_transform_cache_returns_the_input_of_the_last_call():
    t = D.TanhTransform(cache_size=1)
    x = gradnb.tensor([30.0, 0.5], dtype=gradnb.float64)
    y = t(x)
    assert t.inv(y) is x  # atanh(1.0) would be inf: the cache keeps the exact input
    assert D.ExpTransform().inv.inv.__class__ is D.ExpTransform
    assert D.ExpTransform() == D.ExpTransform()
    assert D.ComposeTransform([D.ExpTransform()]).inv.inv is not None
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)


def test_transformed_kl_matches_torch(torch):
    def kl(lib, dists):
        loc = lib.tensor(LOC, requires_grad=True)
        p = dists.LogNormal(loc, lib.tensor(SCALE))
        q = dists.LogNormal(lib.tensor(LOC2), lib.tensor(SCALE2))
        out = dists.kl_divergence(p, q)
        return _np(out), _np(lib.autograd.grad(out.sum(), [loc])[0])

    for a, e in zip(kl(gradnb, D), kl(torch, torch.distributions)):
        np.testing.assert_allclose(a, e, rtol=1e-9)


@pytest.mark.parametrize("family", ["normal", "bernoulli", "exponential", "poisson",
                                    "continuous_bernoulli"])
def test_exponential_family_bregman_forms_match_torch(torch, family):
    """The generic entropy and KL of ExponentialFamily (autograd through the log normalizer)."""
    params = {"normal": (LOC, SCALE), "bernoulli": (PROBS * 0.9 + 0.05,),
              "exponential": (RATE,), "poisson": (RATE,),
              "continuous_bernoulli": (PROBS * 0.9 + 0.05,)}[family]
    name = {"normal": "Normal", "bernoulli": "Bernoulli", "exponential": "Exponential",
            "poisson": "Poisson", "continuous_bernoulli": "ContinuousBernoulli"}[family]

    def run(lib, dists, kl_module):
        p_params = [lib.tensor(a, requires_grad=True) for a in params]
        q_params = [lib.tensor(a[::-1].copy() * 0.8 + 0.1, requires_grad=True) for a in params]
        p, q = getattr(dists, name)(*p_params), getattr(dists, name)(*q_params)
        try:
            entropy = dists.ExponentialFamily.entropy(p)
        except NotImplementedError:  # no mean carrier measure (ContinuousBernoulli)
            entropy = lib.zeros(())
        kl = kl_module._kl_expfamily_expfamily(p, q)
        # (the natural parameters of p are detached, as PyTorch's: only q's get gradients)
        grads = lib.autograd.grad((entropy.sum() + kl.sum()), p_params + q_params,
                                  allow_unused=True)
        return [_np(entropy), _np(kl)] + [None if g is None else _np(g) for g in grads]

    from torch.distributions import kl as torch_kl

    from gradnb.distributions import kl as gradnb_kl

    for a, e in zip(run(gradnb, D, gradnb_kl), run(torch, torch.distributions, torch_kl)):
        assert (a is None) == (e is None)
        if e is not None:
            np.testing.assert_allclose(a, e, rtol=1e-8, atol=1e-12)


# -- implicit reparameterization: Gamma, Beta, Dirichlet --------------------------------------
def test_kl_registry_matches_torch(torch):
    """Every pair gradnb registers resolves to the function PyTorch registers for it, and no
    pair of families gradnb has is missing."""
    from torch.distributions import kl as torch_kl

    from gradnb.distributions import kl

    expected = {(p.__name__, q.__name__): f.__name__ for (p, q), f in torch_kl._KL_REGISTRY.items()}
    actual = {(p.__name__, q.__name__): f.__name__ for (p, q), f in kl._KL_REGISTRY.items()}
    assert {k: v for k, v in actual.items() if expected.get(k) != v} == {}
    assert [k for k in expected if all(hasattr(D, n) for n in k) and k not in actual] == []


GAMMA_POINTS = [(0.1, 1e-5), (0.1, 0.05), (0.5, 0.3), (0.5, 3.0), (1.0, 0.5), (1.0, 5.0),
                (2.5, 1.0), (2.5, 3.6), (2.5, 10.0), (7.0, 6.0), (7.0, 20.0), (30.0, 31.5),
                (30.0, 50.0), (200.0, 190.0), (1000.0, 1001.5)]
BETA_POINTS = [(0.2, 0.5, 0.5), (0.9, 0.5, 0.5), (0.3, 2.0, 3.0), (0.7, 2.0, 3.0),
               (0.01, 0.1, 5.0), (0.99, 5.0, 0.1), (0.5, 30.0, 30.0), (0.6, 1.0, 1.0),
               (0.95, 3.0, 1.5), (0.5, 200.0, 210.0)]


def test_standard_gamma_grad_is_exact():
    """dx/dalpha = -(dP/dalpha) / p against mpmath's incomplete gamma function."""
    mpmath = pytest.importorskip("mpmath")
    from gradnb.ops.gamma_draws import _standard_gamma_grad_array

    mpmath.mp.dps = 30
    alpha, x = (np.array(v) for v in zip(*GAMMA_POINTS))
    actual = _standard_gamma_grad_array(alpha, x)
    for a, v, got in zip(alpha, x, actual):
        a, v = mpmath.mpf(a), mpmath.mpf(v)
        d_cdf = mpmath.diff(lambda s, v=v: mpmath.gammainc(s, 0, v, regularized=True), a)
        pdf = v ** (a - 1) * mpmath.exp(-v) / mpmath.gamma(a)
        assert got == pytest.approx(float(-d_cdf / pdf), rel=1e-12)


def test_dirichlet_grad_is_exact():
    """PyTorch's _dirichlet_grad, (dx/dalpha) / (1 - x) of the Beta marginal, against mpmath."""
    mpmath = pytest.importorskip("mpmath")
    from gradnb.ops.gamma_draws import _dirichlet_grad_array

    mpmath.mp.dps = 30
    x, a, b = (np.array(v) for v in zip(*BETA_POINTS))
    actual = _dirichlet_grad_array(x, a, a + b)
    for v, p, q, got in zip(x, a, b, actual):
        v, p, q = mpmath.mpf(v), mpmath.mpf(p), mpmath.mpf(q)
        d_cdf = mpmath.diff(lambda s, q=q, v=v: mpmath.betainc(s, q, 0, v, regularized=True), p)
        pdf = v ** (p - 1) * (1 - v) ** (q - 1) / mpmath.beta(p, q)
        assert got == pytest.approx(float(-d_cdf / pdf / (1 - v)), rel=1e-12)


def test_implicit_gradients_agree_with_torch_approximations(torch):
    """PyTorch approximates the same quantities (relative errors up to about 1e-3)."""
    from gradnb.ops.gamma_draws import _dirichlet_grad_array, _standard_gamma_grad_array

    alpha, x = (np.array(v) for v in zip(*GAMMA_POINTS))
    expected = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(_standard_gamma_grad_array(alpha, x), expected, rtol=1e-3)
    x, a, b = (np.array(v) for v in zip(*BETA_POINTS))
    expected = torch._dirichlet_grad(*(torch.tensor(v) for v in (x, a, a + b))).numpy()
    np.testing.assert_allclose(_dirichlet_grad_array(x, a, a + b), expected, rtol=1e-3)


def test_gamma_rsample_gradient_is_the_implicit_one(torch):
    concentration = gradnb.tensor(RATE, requires_grad=True)
    rate = gradnb.tensor(SCALE, requires_grad=True)
    sample = D.Gamma(concentration, rate).rsample((4,))
    assert sample.grad_fn.name() == "DivBackward0"
    g_conc, g_rate = gradnb.autograd.grad(sample.sum(), [concentration, rate])
    # the same draws through PyTorch's graph: x = standard_gamma / rate
    standard = torch.tensor(_np(sample) * SCALE)
    t_conc = torch.tensor(RATE, requires_grad=True)
    t_rate = torch.tensor(SCALE, requires_grad=True)
    grad_standard = torch._standard_gamma_grad(t_conc.detach().expand(4, 2, 3), standard)
    expected_conc = (grad_standard / t_rate.detach()).sum(0)
    np.testing.assert_allclose(_np(g_conc), expected_conc.numpy(), rtol=1e-3)
    np.testing.assert_allclose(_np(g_rate), (-_np(sample) / SCALE).sum(0), rtol=1e-12)


def test_dirichlet_and_beta_rsample_gradients_follow_torchs_backward(torch):
    concentration = gradnb.tensor(CAT_PROBS * 3, requires_grad=True)
    sample = D.Dirichlet(concentration).rsample((5,))
    assert sample.grad_fn.name() == "_DirichletBackward"
    weight = np.random.default_rng(8).normal(size=(5, 2, 4))
    (grad,) = gradnb.autograd.grad((sample * gradnb.tensor(weight)).sum(), [concentration])
    from torch.distributions.dirichlet import _Dirichlet_backward

    x = torch.tensor(_np(sample))
    expected = _Dirichlet_backward(x, torch.tensor(CAT_PROBS * 3).expand(5, 2, 4),
                                   torch.tensor(weight)).sum(0)
    # (PyTorch's factors are approximate, to about 1e-3: sums over draws can cancel)
    np.testing.assert_allclose(_np(grad), expected.numpy(), rtol=1e-3,
                               atol=1e-3 * np.abs(expected.numpy()).max())
    beta = D.Beta(gradnb.tensor(RATE, requires_grad=True), gradnb.tensor(SCALE))
    assert beta.rsample((2,)).requires_grad


@pytest.mark.parametrize("family", ["gamma", "beta", "dirichlet", "student_t", "chi2"])
def test_reparameterized_gradients_are_unbiased(family):
    """d/dtheta E[f(x)] estimated by averaging pathwise gradients matches the closed form."""
    gradnb.manual_seed(5)
    n = 20000
    if family == "gamma":  # E[x] = alpha / beta
        alpha = gradnb.tensor([0.4, 2.0, 9.0], dtype=gradnb.float64, requires_grad=True)
        x = D.Gamma(alpha, 2.0).rsample((n,))
        (grad,) = gradnb.autograd.grad(x.mean(0).sum(), [alpha])
        expected = np.full(3, 0.5)
    elif family == "chi2":  # E[x] = df
        df = gradnb.tensor([0.8, 3.0], dtype=gradnb.float64, requires_grad=True)
        (grad,) = gradnb.autograd.grad(D.Chi2(df).rsample((n,)).mean(0).sum(), [df])
        expected = np.ones(2)
    elif family == "beta":  # E[x] = a / (a + b)
        a = gradnb.tensor([0.5, 2.0, 6.0], dtype=gradnb.float64, requires_grad=True)
        b = np.array([1.5, 2.0, 0.7])
        x = D.Beta(a, gradnb.tensor(b, dtype=gradnb.float64)).rsample((n,))
        (grad,) = gradnb.autograd.grad(x.mean(0).sum(), [a])
        expected = b / (_np(a) + b) ** 2
    elif family == "dirichlet":  # E[x_0] = a_0 / sum(a)
        a = gradnb.tensor([0.6, 1.5, 3.0], dtype=gradnb.float64, requires_grad=True)
        x = D.Dirichlet(a).rsample((n,))
        (grad,) = gradnb.autograd.grad(x[:, 0].mean(), [a])
        total = _np(a).sum()
        expected = np.array([1 / total - 0.6 / total**2, -0.6 / total**2, -0.6 / total**2])
    else:  # E[x^2] = scale^2 df / (df - 2)
        df = gradnb.tensor([4.0, 6.0], dtype=gradnb.float64, requires_grad=True)
        x = D.StudentT(df, 0.0, 1.0).rsample((n,))
        (grad,) = gradnb.autograd.grad((x**2).mean(0).sum(), [df])
        expected = -2 / (_np(df) - 2) ** 2
    np.testing.assert_allclose(_np(grad), expected, rtol=0.12, atol=0.01)


def test_second_derivative_through_a_gamma_draw_raises_as_torch(torch):
    def run(lib, draw):
        alpha = lib.tensor([1.5, 2.0], dtype=lib.float64, requires_grad=True)
        (grad,) = lib.autograd.grad(draw(alpha).sum(), [alpha], create_graph=True)
        return _raised(lambda: lib.autograd.grad(grad.sum(), [alpha]))

    from gradnb.ops.gamma_draws import _standard_gamma

    expected = run(torch, torch._standard_gamma)
    actual = run(gradnb, _standard_gamma)
    assert type(actual) is type(expected) is NotImplementedError
    assert str(actual) == str(expected)


def test_gamma_cdf_matches_torch_at_the_edges(torch):
    a = np.array([0.0, 0.0, 1.0, 2.0, np.inf, 1.0, 0.3, 2.5, 30.0, 1000.0, 0.01, 1e-3])
    x = np.array([1.0, 0.0, 0.0, 1.0, 1.0, np.inf, 0.1, 9.0, 25.0, 1010.0, 1e-5, 50.0])
    actual = _np(gradnb.special.gammainc(gradnb.tensor(a), gradnb.tensor(x)))
    expected = torch.special.gammainc(torch.tensor(a), torch.tensor(x)).numpy()
    # (PyTorch's kernel is off by up to about 1e-9 inside: mpmath says which is exact)
    np.testing.assert_allclose(actual, expected, rtol=1e-8, atol=1e-300)
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    for i in range(6, len(a)):
        exact = float(mpmath.gammainc(mpmath.mpf(a[i]), 0, mpmath.mpf(x[i]), regularized=True))
        assert actual[i] == pytest.approx(exact, rel=1e-13)
    upper = _np(gradnb.special.gammaincc(gradnb.tensor(a), gradnb.tensor(x)))
    for i in range(6, len(a)):  # Q computed directly: exact also where it is tiny
        exact = float(mpmath.gammainc(mpmath.mpf(a[i]), mpmath.mpf(x[i]), mpmath.inf,
                                      regularized=True))
        assert upper[i] == pytest.approx(exact, rel=1e-12, abs=1e-300)


# -- end to end: the calls RL and VAE code makes -----------------------------------------------
def test_policy_gradient_and_vae_losses_match_torch(torch):
    """A REINFORCE loss with an entropy bonus (Categorical over a Linear's logits), a squashed
    Gaussian policy's log-probability (SAC's tanh TransformedDistribution) and a VAE's
    reparameterized reconstruction plus KL term: gradnb's actions and noise, fed to both."""
    weights = np.random.default_rng(3).normal(size=(4, 3))
    states = np.random.default_rng(4).normal(size=(6, 3))
    returns = np.random.default_rng(5).normal(size=(6,))

    def losses(lib, dists, actions, eps):
        w = lib.tensor(weights, requires_grad=True)
        x = lib.tensor(states)
        out = x @ w.T  # (6, 4)
        policy = dists.Categorical(logits=out)
        reinforce = -(policy.log_prob(lib.tensor(actions)) * lib.tensor(returns)).mean()
        reinforce = reinforce - 0.01 * policy.entropy().mean()
        mu, log_std = out[:, :2], out[:, 2:].clamp(-5, 2)
        squashed = dists.TransformedDistribution(dists.Normal(mu, log_std.exp()),
                                                 [dists.TanhTransform(cache_size=1)])
        pre_tanh = mu + lib.tensor(eps) * log_std.exp()
        sac = squashed.log_prob(lib.tanh(pre_tanh).clamp(-0.999, 0.999)).sum(-1).mean()
        posterior = dists.Independent(dists.Normal(mu, log_std.exp()), 1)
        prior = dists.Independent(dists.Normal(lib.zeros(2, dtype=lib.float64),
                                               lib.ones(2, dtype=lib.float64)), 1)
        vae = ((pre_tanh - 1) ** 2).sum(-1).mean() + dists.kl_divergence(posterior, prior).mean()
        total = reinforce + sac + vae
        (grad,) = lib.autograd.grad(total, [w])
        return [_np(v) for v in (reinforce, sac, vae, grad)]

    gradnb.manual_seed(2)
    logits = gradnb.tensor(states) @ gradnb.tensor(weights).T
    actions = _np(D.Categorical(logits=logits).sample())
    eps = _np(gradnb.randn(6, 2, dtype=gradnb.float64))
    for a, e in zip(losses(gradnb, D, actions, eps), losses(torch, torch.distributions,
                                                            actions, eps)):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)
