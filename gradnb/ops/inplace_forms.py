"""The in-place forms PyTorch offers beside its ops: ``x.sin_()`` and ``torch.sin_(x)``.

Each is its out-of-place op run through ``inplace.apply_inplace``, the one path every in-place
write takes (the leaf check, the version bump, the node rebased onto the written tensor, a view's
base updated through ``CopySlices``). So ``x.sin_()`` records ``SinBackward0`` as PyTorch does,
and a form exists exactly where its out-of-place op does.
"""

from __future__ import annotations

from .._core.tensor import Tensor
from ._args import scalar_type_name
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
    "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "selu_", "celu_", "sigmoid_",
    "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "threshold_", "trunc_",
    "xlogy_", "addmv_", "fill_", "zero_", "detach_",
)

# The forms PyTorch has only as ``Tensor`` methods (no ``torch.<name>``).
METHOD_FORMS = (
    "absolute_", "addbmm_", "addmm_", "addr_", "arctan2_", "atan2_", "baddbmm_",
    "bitwise_and_", "bitwise_left_shift_", "bitwise_not_", "bitwise_or_", "bitwise_right_shift_",
    "bitwise_xor_", "copysign_", "cumprod_", "cumsum_", "digamma_", "erfinv_",
    "floor_divide_", "fmod_", "heaviside_", "hypot_", "index_copy_",
    "index_fill_", "lerp_", "lgamma_", "logical_and_", "logical_not_", "logical_or_",
    "logical_xor_", "masked_scatter_", "mvlgamma_", "nextafter_", "remainder_", "renorm_",
    "sgn_", "sign_", "tril_", "triu_",
    # comparisons write 0/1 in ``self``'s dtype
    "eq_", "ne_", "not_equal_", "ge_", "greater_equal_", "greater_", "gt_", "le_",
    "less_equal_", "less_", "lt_",
)


def _in_place(name: str, op):
    def form(self: Tensor, *args, **kwargs) -> Tensor:
        others = tuple(a for a in (*args, *kwargs.values()) if isinstance(a, Tensor))
        return apply_inplace(self, lambda s: op(s, *args, **kwargs), others)

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
