"""``linalg.matrix_rank``: the number of singular values (absolute eigenvalues when
``hermitian``) above ``max(atol, rtol * largest)``, as PyTorch counts them, and ``matrix_rank``,
the top-level function PyTorch removed (it only raises now).

PyTorch computes the threshold with tensor ops on 0-dim double tolerances, so a tolerance
tensor broadcasts against the batch (and raises PyTorch's broadcasting error), and its dtype
takes part in the comparison; the count is done here with gradnb's ops for the same reasons.
The result is an int64 tensor with no gradient.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .._core.grad_mode import no_grad
from . import elementwise as ew
from . import reductions as red
from ._args import scalar_type_name
from ._common import Tensor, wrap
from ._out import _castable, accepts_out
from .creation import zeros
from .linalg_decompositions import eigvalsh, svdvals

__all__ = ["matrix_rank"]

_NAME = "gradnb.linalg.matrix_rank"
_NOT_GIVEN = object()  # ``tol`` passed as None is an error in PyTorch, not a default
_SIGNATURES = (
    ("(Tensor input, *, Tensor atol = None, Tensor rtol = None, bool hermitian = False, "
     "Tensor out = None)"),
    ("(Tensor input, *, float atol = None, float rtol = None, bool hermitian = False, "
     "Tensor out = None)"),
    "(Tensor input, Tensor tol, bool hermitian = False, *, Tensor out = None)",
    "(Tensor input, float tol, bool hermitian = False, *, Tensor out = None)",
)


def _type_name(value) -> str:
    """The name PyTorch's parser gives a value's type (``numpy.ndarray`` with its module)."""
    if isinstance(value, Tensor):
        return "Tensor"
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def _is_tolerance(value, optional: bool) -> bool:
    """A tensor or a real Python/NumPy number (PyTorch's parser wraps a number in a tensor)."""
    if value is None:
        return optional
    return isinstance(value, (Tensor, numbers.Real))


def _refuse_arguments(args, kwargs) -> None:
    """PyTorch's parser error for a call matching none of ``linalg_matrix_rank``'s four
    signatures (it lists the keywords last first)."""
    got = [_type_name(v) for v in args]
    got += [f"{k}={_type_name(v)}" for k, v in reversed(kwargs.items())]
    got = ", ".join(got) + ("" if args else ", ")  # PyTorch's "(A=Tensor, )"
    expected = "".join(f"\n * {s}" for s in _SIGNATURES)
    raise TypeError(f"linalg_matrix_rank() received an invalid combination of arguments - got "
                    f"({got}), but expected one of:{expected}\n")


def _parse(args, kwargs):
    """``(input, tol, hermitian, atol, rtol)`` from a call, as PyTorch's parser matches it to
    one of the four signatures (``tol`` ``_NOT_GIVEN`` when absent)."""
    names = ("input", "tol", "hermitian")
    values = dict(zip(names, args))
    known = set(names) | {"atol", "rtol"}
    ok = len(args) <= 3 and set(kwargs) <= known and not set(kwargs) & set(values)
    values.update(kwargs)
    input, tol = values.get("input"), values.get("tol", _NOT_GIVEN)
    hermitian, atol, rtol = (values.get(k) for k in ("hermitian", "atol", "rtol"))
    hermitian = False if hermitian is None and "hermitian" not in values else hermitian
    ok = ok and isinstance(input, Tensor) and isinstance(hermitian, bool)
    if tol is _NOT_GIVEN:  # the keyword-only signatures: hermitian is a keyword there too
        ok = ok and len(args) <= 1 and _is_tolerance(atol, True) and _is_tolerance(rtol, True)
    else:
        ok = ok and _is_tolerance(tol, False) and "atol" not in values and "rtol" not in values
    if not ok:
        _refuse_arguments(args, kwargs)
    return input, tol, hermitian, atol, rtol


def _as_tolerance(value) -> Tensor:
    """A number as PyTorch wraps it for the ``Tensor`` overload: a 0-dim double tensor, which
    takes no part in type promotion."""
    return value if isinstance(value, Tensor) else wrap(np.asarray(value, dtype=np.float64))


def _epsilon(input: Tensor) -> float:
    """PyTorch's ``_get_epsilon`` of the input's real dtype."""
    dtype = input._data.dtype
    real = np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
    if real not in (np.float32, np.float64):
        raise RuntimeError("This function doesn't handle types other than float and double")
    return float(np.finfo(real).eps)


def _tolerances(input: Tensor, atol, rtol):
    """PyTorch's ``get_atol_rtol``: ``atol`` 0 by default; ``rtol`` ``eps * max(m, n)`` by
    default, or 0 where a positive ``atol`` is given."""
    for name, value in (("atol", atol), ("rtol", rtol)):
        if isinstance(value, Tensor) and value.dtype.is_complex:
            raise RuntimeError(f"{_NAME}: {name} tensor of complex type is not supported. Got "
                               f"{scalar_type_name(value._data.dtype)}")
    atol_t = _as_tolerance(0.0 if atol is None else atol)
    if rtol is not None:
        return atol_t, _as_tolerance(rtol)
    default = _as_tolerance(_epsilon(input) * max(input.shape[-2], input.shape[-1]))
    if atol is None:
        return atol_t, default
    return atol_t, ew.where(atol_t > 0, _as_tolerance(0.0), default)


@accepts_out("linalg_matrix_rank", differentiable=False)
def _matrix_rank(*args, **kwargs) -> Tensor:
    """``linalg_matrix_rank`` once its ``out`` has the dtype PyTorch checks first."""
    input, tol, hermitian, atol, rtol = _parse(args, kwargs)
    if input.dim() < 2:
        raise RuntimeError(f"{_NAME}: The input tensor input must have at least 2 dimensions.")
    if tol is not _NOT_GIVEN:
        atol, rtol = tol, (zeros((), dtype=tol.dtype) if isinstance(tol, Tensor) else 0.0)
    with no_grad():
        atol, rtol = _tolerances(input, atol, rtol)
        if input.numel() == 0:  # no singular values: rank 0 (NumPy's max would fail)
            return wrap(np.zeros(input.shape[:-2], dtype=np.int64))
        if hermitian:
            S = ew.abs(eigvalsh(input))
            largest = red.amax(S, -1, keepdim=True)
        else:
            S = svdvals(input)  # descending
            largest = S[..., :1]
        threshold = ew.maximum(atol.unsqueeze(-1), rtol.unsqueeze(-1) * largest)
        rank = red.sum(S > threshold, -1)
    batch = tuple(input.shape[:-2])
    if tuple(rank.shape) != batch and math.prod(batch):
        # PyTorch sums into a result of the batch's shape, which a tolerance with more
        # dimensions resizes: it warns as for any resized ``out``
        warnings.warn(f"An output with one or more elements was resized since it had shape "
                      f"{list(batch)}, which does not match the required output shape "
                      f"{list(rank.shape)}. This behavior is deprecated, and in a future "
                      "PyTorch release outputs will not be resized unless they have zero "
                      "elements. You can explicitly reuse an out tensor t by resizing it, "
                      "inplace, to zero elements with t.resize_(0).", UserWarning, stacklevel=4)
    return rank


def linalg_matrix_rank(*args, out=None, **kwargs) -> Tensor:
    """``linalg.matrix_rank(input, *, atol=None, rtol=None, hermitian=False)``: the numerical
    rank of (batches of) matrices, the number of singular values (absolute eigenvalues of the
    lower triangle when ``hermitian``) above ``max(atol, rtol * sigma_1)``.

    ``matrix_rank(input, tol, hermitian=False)`` (deprecated, NumPy's): ``tol`` an absolute
    tolerance, with ``rtol`` 0. The arguments are matched as PyTorch's parser matches them to
    its four signatures (floats or tensors for the tolerances).
    """
    if isinstance(out, Tensor) and not _castable(np.dtype(np.int64), out._data.dtype):
        raise RuntimeError(f"{_NAME}: Expected result to be safely castable from Long dtype, but "
                           f"got result with dtype {scalar_type_name(out._data.dtype)}")
    return _matrix_rank(*args, out=out, **kwargs)


def matrix_rank(input, tol=None, symmetric: bool = False, *, out=None):
    """``torch.matrix_rank``, removed from PyTorch in favour of ``linalg.matrix_rank``: it only
    raises, as PyTorch's does."""
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed.\n"
                       "Please use the `gradnb.linalg.matrix_rank` function instead. The "
                       "parameter 'symmetric' was renamed in `gradnb.linalg.matrix_rank()` to "
                       "'hermitian'.")

