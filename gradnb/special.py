"""``gradnb.special``: PyTorch's ``torch.special`` namespace."""



from __future__ import annotations

from .ops.elementwise import erf, exp2, expm1, log1p, round
from .ops.elementwise import sigmoid as expit
from .ops.incomplete_gamma import igamma as gammainc
from .ops.incomplete_gamma import igammac as gammaincc
from .ops.pointwise import erfc, erfinv, logit, sinc, xlogy
from .ops.reductions import logsumexp
from .ops.softmax import log_softmax, softmax
from .ops.special_functions import (
    digamma,
    entr,
    erfcx,
    i0,
    i0e,
    i1,
    i1e,
    log_ndtr,
    mvlgamma,
    ndtr,
    ndtri,
    polygamma,
    xlog1py,
)
from .ops.special_functions import digamma as psi
from .ops.special_functions import lgamma as gammaln
from .ops.special_functions import mvlgamma as multigammaln

__all__ = [
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "multigammaln",
    "mvlgamma",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "sinc",
    "softmax",
    "xlog1py",
    "xlogy",
]
