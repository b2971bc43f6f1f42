"""The dtypes PyTorch 2.13's CPU kernels lack, op by op, and how each op refuses them: the one
table of gradnb's ops that refuse complex inputs (and of the activations, scans and reductions
that refuse integer or bool inputs).

A refusal is PyTorch's, word for word. Most are its dispatch error for a kernel compiled without
the dtype (``"erf_vml_cpu" not implemented for 'ComplexDouble'``); a few are an op's own check
(``deg2rad is not supported for complex tensors.``). An op calls ``refuse(op, x)`` with its input
(or promoted) array or dtype before it computes anything, so nothing is half done when it
raises. ``tests/ops/test_dtype_refusals.py`` checks every row against PyTorch.
"""

from __future__ import annotations

import dataclasses

from ._args import scalar_type_name

__all__ = ["REFUSALS", "Refusal", "refuse"]


@dataclasses.dataclass(frozen=True)
class Refusal:
    """``error(message)`` for an input whose NumPy dtype kind is in ``kinds`` (``"c"`` complex,
    ``"b"`` bool, ``"iu"`` integers, and ``"h"`` here for the half floats, float16 and
    bfloat16); ``{dtype}`` in ``message`` is PyTorch's name of the dtype.
    ``empty_ok``: PyTorch returns before the kernel runs when the input is empty."""

    kinds: str
    error: type
    message: str
    empty_ok: bool = False


def _kernel(name: str, kinds: str = "c", *, empty_ok: bool = False) -> Refusal:
    """PyTorch's dispatch error: kernel ``name`` was compiled without these dtypes."""
    return Refusal(kinds, NotImplementedError, f'"{name}" not implemented for \'{{dtype}}\'',
                   empty_ok)


_FLOATING_ONLY = "biuc"  # kernels dispatched for floating types only (float16/bfloat16 included)
_CLAMP = Refusal("c", NotImplementedError, "clamp is not supported for complex types")
_SORT = Refusal("c", RuntimeError, " Sort does not support complex dtypes on CPU")

REFUSALS: dict[str, Refusal | tuple[Refusal, ...]] = {
    # special functions: real kernels only
    "erf": _kernel("erf_vml_cpu"),
    "erfc": _kernel("erfc_vml_cpu"),
    "erfinv": _kernel("erfinv_vml_cpu"),
    "erfcx": _kernel("erfcx_cpu", "ch"),
    "lgamma": _kernel("lgamma_vml_cpu"),
    "digamma": _kernel("digamma"),
    "trigamma": _kernel("trigamma"),  # polygamma(1, x)
    "polygamma": _kernel("polygamma"),  # polygamma(n >= 2, x)
    "mvlgamma": Refusal("b", RuntimeError, "The input tensor may not be a boolean tensor."),
    "mvlgamma_arange": _kernel("arange_cpu"),  # (its shifts: an arange in the input's dtype)
    "i0": _kernel("i0_vml_cpu"),
    "i0e": _kernel("i0e_cpu"),
    "i1": _kernel("i1_cpu"),
    "i1e": _kernel("i1e_cpu"),
    "log_ndtr": _kernel("log_ndtr_cpu", "ch"),
    "ndtri": _kernel("ndtri_cpu", "ch"),
    "entr": _kernel("entr_cpu"),
    "logit": _kernel("logit_cpu"),
    "xlogy": _kernel("xlogy_cpu"),
    "xlog1py": _kernel("xlog1py_cpu"),
    # pointwise ops defined on the real line
    "deg2rad": Refusal("c", RuntimeError, "deg2rad is not supported for complex tensors."),
    "rad2deg": Refusal("c", RuntimeError, "rad2deg is not supported for complex tensors."),
    "abs_": Refusal("c", RuntimeError, "In-place abs is not supported for complex tensors."),
    "heaviside": Refusal("c", RuntimeError, "heaviside is not yet implemented for complex tensors."),
    "fmax": Refusal("c", RuntimeError, "fmax not implemented for complex tensors."),
    "fmin": Refusal("c", RuntimeError, "fmin not implemented for complex tensors."),
    "logaddexp": _kernel("logaddexp_cpu", "biu"),  # (complex has its own formula)
    "logaddexp2": _kernel("logaddexp2_cpu", _FLOATING_ONLY),
    "nextafter": _kernel("nextafter_cpu", _FLOATING_ONLY),
    # activations (relu and hardtanh are clamps in PyTorch)
    "relu": (Refusal("b", RuntimeError, "Boolean inputs not supported for relu"), _CLAMP),
    "hardtanh": (Refusal("b", RuntimeError, "Bool inputs not supported for hardtanh"), _CLAMP),
    "threshold": _kernel("threshold_cpu", "bc"),
    "elu": _kernel("elu_cpu", _FLOATING_ONLY),  # selu and celu too
    "gelu": _kernel("GeluKernelImpl", _FLOATING_ONLY),
    "leaky_relu": _kernel("leaky_relu_cpu", _FLOATING_ONLY),  # rrelu too
    "softplus": _kernel("softplus_cpu", _FLOATING_ONLY),
    "glu": _kernel("glu_cpu", _FLOATING_ONLY),
    "prelu": _kernel("prelu_cpu", _FLOATING_ONLY),
    "hardshrink": _kernel("hardshrink_cpu", _FLOATING_ONLY),
    "softshrink": _kernel("softshrink_check", _FLOATING_ONLY),
    "hardsigmoid": _kernel("hardsigmoid_cpu", _FLOATING_ONLY),
    "hardswish": _kernel("hardswish_cpu", _FLOATING_ONLY),
    "logsigmoid": _kernel("log_sigmoid_cpu", _FLOATING_ONLY),
    "mish": _kernel("mish_cpu", _FLOATING_ONLY),
    "silu": _kernel("silu_cpu", "biu"),  # (complex silu is computed)
    # softmax: the last dimension has its own kernel; an empty input never reaches either
    "softmax": _kernel("softmax_kernel_impl", _FLOATING_ONLY, empty_ok=True),
    "softmax_lastdim": _kernel("softmax_lastdim_kernel_impl", _FLOATING_ONLY, empty_ok=True),
    "log_softmax": _kernel("log_softmax_kernel_impl", _FLOATING_ONLY, empty_ok=True),
    "log_softmax_lastdim": _kernel("log_softmax_lastdim_kernel_impl", _FLOATING_ONLY,
                                   empty_ok=True),
    # reductions, scans and selections that compare or accumulate in real arithmetic
    "median": _kernel("median_cpu", "bc", empty_ok=True),  # nanmedian too
    "median_dim": _kernel("median_out", "bc"),
    "mode": _kernel("mode_cpu", empty_ok=True),
    "kthvalue": _kernel("kthvalue_cpu", "bc"),
    "nansum": Refusal("c", RuntimeError, "nansum on CPU does not support complex inputs"),
    "cummax": _kernel("cummax_cpu", empty_ok=True),
    "cummin": _kernel("cummin_cpu", empty_ok=True),
    "logcumsumexp": _kernel("logcumsumexp_out_cpu", "biu"),
    "aminmax": _kernel("aminmax_cpu"),
    "aminmax_0d": Refusal("c", RuntimeError, "aminmax not implemented for {dtype}"),  # with a dim
    "sort": _SORT,  # argsort and msort too
    "topk": (Refusal("c", RuntimeError, " topk does not support complex dtypes on CPU"),
             Refusal("b", RuntimeError, "topk does not support bool dtypes on CPU")),
    "unique": _kernel("unique"),
    "searchsorted": _kernel("searchsorted_out_cpu", "cb"),
    "arange": _kernel("arange_cpu"),
    # (the random fills return before their kernel when there is nothing to fill)
    "log_normal_": _kernel("log_normal_cpu", "biuc", empty_ok=True),
    "geometric_": _kernel("geometric_cpu", "bc", empty_ok=True),
    "bernoulli_scalar": _kernel("bernoulli_scalar_cpu_", empty_ok=True),
    "bernoulli_tensor_p": _kernel("bernoulli_tensor_cpu_p_", "biuc", empty_ok=True),
    "bernoulli_tensor_self": _kernel("bernoulli_tensor_cpu_self_", empty_ok=True),
    "unique_dim": _kernel("unique_dim"),
}


def refuse(op: str, x) -> None:
    """Raise PyTorch's error if ``op`` (a key of ``REFUSALS``) lacks the dtype of ``x``, a NumPy
    array (whose emptiness some ops consult) or dtype."""
    dtype = getattr(x, "dtype", x)
    kind = dtype.kind
    if kind == "f" and dtype.itemsize > 2:  # every kernel has float32 and float64
        return
    if kind in "fV":
        kind = "h"
    rules = REFUSALS[op]
    for rule in (rules,) if isinstance(rules, Refusal) else rules:
        if kind in rule.kinds and not (rule.empty_ok and getattr(x, "size", 1) == 0):
            raise rule.error(rule.message.format(dtype=scalar_type_name(dtype)))
