"""The in-place forms PyTorch offers beside its ops: ``x.sin_()`` and ``torch.sin_(x)``.

Each is its out-of-place op run through ``inplace.apply_inplace``, the one path every in-place
write takes (the leaf check, the version bump, the node rebased onto the written tensor, a view's
base updated through ``CopySlices``). So ``x.sin_()`` records ``SinBackward0`` as PyTorch does,
and a form exists exactly where its out-of-place op does.
"""

from __future__ import annotations

import numpy as np

from .._core.dtype import get_default_dtype
from .._core.tensor import Tensor
from ._args import scalar_type_name, type_name
from ._common import check_broadcast, check_fits_output, result_type_of
from .inplace import apply_inplace

__all__ = ["install"]

# PyTorch's in-place forms that are their out-of-place op written back (``torch.<name>`` and
# ``Tensor.<name>``), the out-of-place op being the name without its trailing underscore.
FORMS = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_", "deg2rad_", "erf_", "erfc_",
    "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "gcd_", "i0_", "lcm_", "ldexp_",
    "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_",
    "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_",
    "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_",
    "xlogy_", "addmv_", "fill_", "zero_", "detach_",
)
# (``torch.selu_``, ``celu_``, ``threshold_`` and ``rrelu_`` have no Tensor method in PyTorch:
# they are ``nn.functional``'s in-place ops at the top level, ``nn.functional.toplevel``.)

# The forms PyTorch has only as ``Tensor`` methods (no ``torch.<name>``).
METHOD_FORMS = (
    "absolute_", "addbmm_", "addmm_", "addr_", "arctan2_", "atan2_", "baddbmm_",
    "bitwise_and_", "bitwise_left_shift_", "bitwise_not_", "bitwise_or_", "bitwise_right_shift_",
    "bitwise_xor_", "copysign_", "cumprod_", "cumsum_", "digamma_", "erfinv_",
    "floor_divide_", "fmod_", "heaviside_", "hypot_", "igamma_", "igammac_", "index_copy_",
    "index_fill_", "lerp_", "lgamma_", "logical_and_", "logical_not_", "logical_or_",
    "logical_xor_", "masked_scatter_", "mvlgamma_", "nextafter_", "remainder_", "renorm_",
    "sgn_", "sign_", "tril_", "triu_",
)
# (the comparisons' in-place forms, ``eq_`` and the rest, record their own nodes: ``inplace``)


# Binary ops PyTorch runs through one TensorIterator that promotes its operands: before the
# kernel it checks that the operands broadcast to ``self``'s shape and that their promoted dtype
# casts to ``self``'s, so ``int64.fmod_(complex)`` is refused as a cast, not by the kernel.
PROMOTING = frozenset((
    "atan2_", "arctan2_", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_",
    "bitwise_right_shift_", "copysign_", "floor_divide_", "fmod_", "gcd_", "lcm_", "hypot_",
    "nextafter_", "remainder_", "xlogy_",
))
# ... of which these compute integers and bools as the default float dtype
TO_FLOAT = frozenset(("atan2_", "arctan2_", "copysign_", "xlogy_"))


def _check_promoted(name: str, self: Tensor, other) -> None:
    shape = self._data.shape
    if isinstance(other, Tensor):
        check_broadcast(shape, other._data.shape)
        shape = np.broadcast_shapes(shape, other._data.shape)
    dtype = result_type_of(self, other)
    if name in TO_FLOAT and dtype.kind in "biu":
        dtype = get_default_dtype().np
    check_fits_output(self._data, shape, dtype)


# The forms whose other operand must be a tensor (no number), by the argument's name.
TENSOR_ONLY = {"atan2_": "other", "arctan2_": "other", "gcd_": "other", "lcm_": "other",
               "hypot_": "other", "nextafter_": "other", "heaviside_": "values",
               "logical_and_": "other", "logical_or_": "other", "logical_xor_": "other"}


# The index ops, which refuse a source sharing any of ``self``'s memory (PyTorch's
# ``assert_no_overlap``; the others refuse only a partly shared one), and the ops PyTorch does
# not check at all (index_fill_ reads its value as a number).
INDEX_OPS = frozenset(("index_copy_", "index_reduce_"))
UNCHECKED = frozenset(("index_fill_", "masked_scatter_"))


def _in_place(name: str, op):
    promoting = name in PROMOTING
    tensor_only = TENSOR_ONLY.get(name)
    index_op = name in INDEX_OPS
    unchecked = name in UNCHECKED

    def compute(s, args, kwargs):
        if promoting and len(args) == 1 and not kwargs:
            _check_promoted(name, s, args[0])
        return op(s, *args, **kwargs)

    def form(self: Tensor, *args, **kwargs) -> Tensor:
        if tensor_only and len(args) == 1 and not isinstance(args[0], Tensor):
            raise TypeError(f"{name}(): argument '{tensor_only}' (position 1) must be Tensor, "
                            f"not {type_name(args[0])}")
        others = tuple(a for a in (*args, *kwargs.values()) if isinstance(a, Tensor))
        return apply_inplace(self, lambda s: compute(s, args, kwargs), others,
                             reads=() if unchecked else None, refuse_full_overlap=index_op)

    form.__name__ = form.__qualname__ = name
    form.__doc__ = f"``{name[:-1]}`` written into ``self`` (PyTorch's ``Tensor.{name}``)."
    return form


def _function(name: str, method):
    def function(input: Tensor, *args, **kwargs) -> Tensor:
        return method(input, *args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``input.{name}(...)``, as PyTorch's ``torch.{name}``."
    return function


def _float_power_(self: Tensor, exponent) -> Tensor:
    """``float_power`` written into ``self``, which must already be double (or complex double):
    the op computes in double precision."""
    op = _in_place("float_power_", _namespace["float_power"])
    result = "ComplexDouble" if self._data.dtype.kind == "c" or (
        isinstance(exponent, Tensor) and exponent._data.dtype.kind == "c") else "Double"
    expected = {"Double": "float64", "ComplexDouble": "complex128"}[result]
    if self._data.dtype.name != expected:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{scalar_type_name(self._data.dtype)} but the operation's result "
                           f"requires dtype {result}")
    return op(self, exponent)


_namespace: dict = {}


def install(namespace: dict) -> None:
    """Give ``Tensor`` each in-place form it lacks whose op ``namespace`` (gradnb's top level)
    has, and ``namespace`` the function form of each."""
    _namespace.update(namespace)
    if not hasattr(Tensor, "float_power_") and "float_power" in namespace:
        Tensor.float_power_ = _float_power_
    for name in (*FORMS, *METHOD_FORMS):
        method = getattr(Tensor, name, None)
        if method is None:
            op = namespace.get(name[:-1])
            if op is None:
                continue
            method = _in_place(name, op)
            setattr(Tensor, name, method)
        if name in FORMS:
            namespace.setdefault(name, _function(name, method))
