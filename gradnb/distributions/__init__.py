"""``gradnb.distributions``: probability distributions with PyTorch's API, as
``torch.distributions`` (``import gradnb.distributions as D``; ``D.Normal(loc, scale)``).

Everything is written with gradnb's differentiable ops, so ``log_prob``, ``entropy``,
``rsample`` (``loc + eps * scale``) and ``kl_divergence`` carry gradients to the parameters
as PyTorch's do; samples are drawn from gradnb's seeded generator (``gradnb.manual_seed``).
The layout and code follow PyTorch's ``torch/distributions`` (BSD-3-Clause).
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "CatTransform",
    "Categorical",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "Independent",
    "IndependentTransform",
    "Laplace",
    "LogNormal",
    "LowerCholeskyTransform",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transforms",
]
