"""Run PyTorch's OpInfo database (``op_db``) against gradnb, sample by sample.

For every op_db entry that supports autograd on CPU float64, each of its first samples
(``sample_inputs``, then a few extra ``reference_inputs``) is converted to gradnb and both
libraries compute: the forward (values, shapes, dtypes), first-order gradients for the same
random ``grad_outputs``, and, where the OpInfo ``supports_gradgrad``, second-order gradients.
``error_inputs`` are run separately: gradnb must raise the same exception type, with a message
matching the OpInfo's regex (``torch.`` read as ``gradnb.``).

Used by ``test_opinfo.py`` (one test per entry) and ``opinfo_coverage.py`` (the figures).
Needs torch and ``expecttest`` (torch's testing internals import it).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
import types
import warnings

import numpy as np

import gradnb

MAX_SAMPLES = 8  # sample_inputs per entry
MAX_REFERENCE = 4  # extra reference_inputs per entry (beyond those equal to sample_inputs)
MAX_NUMEL = 4096  # larger reference inputs are skipped: the suite stays fast
MAX_ERROR_INPUTS = 8


@functools.cache
def op_db() -> list:
    """The op_db entries measured: autograd on CPU float64, public names."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db as db

    return [
        op for op in db
        if op.supports_autograd
        and torch.float64 in op.supported_dtypes("cpu")
        and not (op.name.startswith("_") and not op.name.startswith("__"))
    ]


def entry_id(op) -> str:
    """``name`` or ``name.variant`` (unique across op_db)."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


class Unsupported(Exception):
    """An argument gradnb has no equivalent for (reported as a failure of the sample)."""


# -- resolving names ---------------------------------------------------------------------------
def _method_caller(name):
    def call(x, *args, **kwargs):
        return getattr(x, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _unbound_method(name):
    """``gradnb.Tensor.<name>`` called with its first argument as ``self``, as op_db calls the
    unbound ``torch.Tensor.<name>`` (so ``Tensor.__radd__(2, x)`` is not ``(2).__radd__(x)``)."""
    method = getattr(gradnb.Tensor, name)

    def call(x, *args, **kwargs):
        return method(x, *args, **kwargs)

    call.__name__ = name
    return call


def resolve(name: str):
    """The gradnb callable for an op_db name: ``gradnb.X``, ``gradnb.linalg.X``,
    ``gradnb.nn.functional.X``, ..., else the Tensor method ``X``; None when gradnb has neither."""
    if name.startswith("__") and name.endswith("__"):
        return _unbound_method(name) if hasattr(gradnb.Tensor, name) else None
    obj = gradnb
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if obj is not None and callable(obj) and not isinstance(obj, type):
        return obj
    if "." not in name and callable(getattr(gradnb.Tensor, name, None)):
        return _method_caller(name)
    return None


def _is_lambda(fn) -> bool:
    return getattr(fn, "__name__", "") == "<lambda>"


def _translated(fn, scope=None):
    """An op_db function (a lambda such as ``lambda self, cond, other: torch.where(cond, self,
    other)``, or a ``gradcheck_wrapper``) with its ``torch`` bound to gradnb: the same argument
    plumbing, gradnb's ops. Functions of the same module that it calls by name (one wrapper
    calling another) are translated too, sharing one scope."""
    if scope is None:
        scope = dict(fn.__globals__, torch=gradnb)
    out = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    out.__kwdefaults__ = fn.__kwdefaults__
    for name in fn.__code__.co_names:
        callee = fn.__globals__.get(name)
        if (isinstance(callee, types.FunctionType) and callee.__globals__ is fn.__globals__
                and scope.get(name) is callee):
            scope[name] = out if callee is fn else _translated(callee, scope)
    return out


def resolve_entry(op):
    """The gradnb callable that plays ``op.op`` for an entry (None when gradnb lacks the op)."""
    if _is_lambda(op.op):
        if resolve(op.name) is None and not hasattr(gradnb.Tensor, op.name):
            return None
        return _translated(op.op)
    return resolve(op.name)


# Random ops: values cannot match torch's generator, so only shapes and dtypes are compared.
# (multi_head_attention_forward's samples that require grad all use dropout 0.5 in training.)
RANDOM = {
    "bernoulli", "normal", "normal.number_mean", "multinomial", "uniform", "cauchy",
    "exponential", "geometric", "log_normal", "rand_like", "randn_like", "randint_like",
    "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout.with_train",
    "nn.functional.rrelu", "nn.functional.fractional_max_pool2d",
    "nn.functional.fractional_max_pool3d", "svd_lowrank", "pca_lowrank",
    "nn.functional.multi_head_attention_forward",
}
# Ops random only with some arguments (dropout inside): those samples are compared as RANDOM's.
RANDOM_SAMPLES = {
    "nn.functional.scaled_dot_product_attention":
        lambda sample: sample.kwargs.get("dropout_p", 0.0) > 0,
}


def is_random(op, sample) -> bool:
    """Whether ``sample`` of ``op`` draws random numbers (values cannot match torch's)."""
    eid = entry_id(op)
    return eid in RANDOM or RANDOM_SAMPLES.get(eid, lambda _: False)(sample)


# -- converting torch values to gradnb ---------------------------------------------------------
class Converter:
    """Turns torch values into gradnb ones, remembering which gradnb leaf stands for which torch
    tensor (the same torch tensor twice gives the same gradnb tensor)."""

    def __init__(self, keep_aliasing: bool = False, keep_strides: bool = False):
        self.memo = {}
        # the graph oracle: a non-contiguous torch input (a transposed sample, strides of a
        # size-1 dim) is given to gradnb with the same strides, so saved strides and the
        # choice between view and copy see what torch's see
        self.keep_strides = keep_strides
        # error_inputs' out= cases: views (an expand, a slice) share memory with their base and
        # with each other in gradnb too, so overlap checks see what torch's see
        self.keep_aliasing = keep_aliasing
        self.storages = {}

    def __call__(self, value):
        import torch

        if isinstance(value, torch.Tensor):
            key = id(value)
            if key not in self.memo:
                made = self._view(value) if self.keep_aliasing and value._base is not None else None
                if made is None and self.keep_strides:
                    made = self._strided(value)
                self.memo[key] = (value, made if made is not None else self._tensor(value))
            return self.memo[key][1]
        if isinstance(value, torch.dtype):
            return _gradnb_attr(str(value).removeprefix("torch."))
        if isinstance(value, torch.memory_format):
            return _gradnb_attr(str(value).removeprefix("torch."))
        if isinstance(value, torch.device):
            return str(value)
        if isinstance(value, torch.Size):
            return tuple(value)
        if isinstance(value, torch.Generator):
            raise Unsupported("torch.Generator argument")
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*(self(v) for v in value))
        if isinstance(value, (list, tuple)):
            return type(value)(self(v) for v in value)
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        if isinstance(value, torch.nn.Module):
            return self._module(value)
        if callable(value) and getattr(value, "__module__", "").startswith("torch"):
            raise Unsupported(f"torch callable argument {value!r}")
        return value

    @staticmethod
    def _module(module):
        """A torch module without parameters or buffers (``nn.PairwiseDistance()`` as a distance
        function) as gradnb's module of the same class, with the same settings."""
        if any(True for _ in module.parameters()) or any(True for _ in module.buffers()):
            raise Unsupported(f"torch module argument with state {module!r}")
        cls = getattr(gradnb.nn, type(module).__name__, None)
        if cls is None:
            raise Unsupported(f"gradnb.nn.{type(module).__name__}")
        try:
            twin = cls()
        except TypeError as exc:  # a class whose constructor needs arguments
            raise Unsupported(f"torch module argument {module!r}") from exc
        for name, setting in vars(module).items():
            if not name.startswith("_"):
                setattr(twin, name, setting)
        return twin

    @staticmethod
    def _tensor(t):
        import torch

        if t.layout != torch.strided:
            raise Unsupported(f"{t.layout} tensor")
        dtype = _gradnb_attr(str(t.dtype).removeprefix("torch."))
        try:
            arr = np.array(to_numpy(t), copy=True)  # (bfloat16 as float32, cast back below)
            out = gradnb.tensor(arr, dtype=dtype)
        except Exception as exc:
            raise Unsupported(_describe(exc)) from exc
        if t.requires_grad:
            out.requires_grad_(True)
        return out

    @staticmethod
    def _strided(t):
        """``t`` as a gradnb tensor over its own copy of storage laid out with ``t``'s strides;
        None where the ordinary (contiguous) copy already has them, or cannot."""
        import torch

        if (t.layout != torch.strided or t.dtype in (torch.bfloat16, torch.complex32)
                or t.is_conj() or t.is_neg() or t._is_zerotensor()
                or t.stride() == torch.empty(t.shape).stride()
                or any(s <= 0 for s in t.stride())):  # (an expanded sample: the plain copy)
            return None
        span = max(1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride())), 0)
        copy = torch.empty(span, dtype=t.dtype).as_strided(t.shape, t.stride())
        if torch._debug_has_internal_overlap(copy) == 1:  # (1: it overlaps; 2: too hard to tell)
            return None
        copy.copy_(t.detach())
        array = copy.numpy()
        if t.numel() == 0:  # (torch hands NumPy zero strides for an empty tensor)
            item = array.itemsize
            array = np.lib.stride_tricks.as_strided(np.empty(1, array.dtype), tuple(t.shape),
                                                    tuple(st * item for st in t.stride()))
        out = gradnb.from_numpy(array)
        if t.requires_grad:
            out.requires_grad_(True)
        return out

    def _view(self, t):
        """``t`` (a view) as a gradnb tensor over a NumPy copy of its base's storage, shared by
        every view of that base; None where that cannot be done."""
        base = t._base
        if t.layout != base.layout or t.dtype != base.dtype or t.is_conj() or t.is_neg():
            return None
        key = id(base)
        if key not in self.storages:
            self.storages[key] = (base, np.array(base.detach().cpu().contiguous().numpy()))
        storage = self.storages[key][1].reshape(-1)
        item = storage.itemsize
        start = t.storage_offset() - base.storage_offset()
        view = np.lib.stride_tricks.as_strided(storage[start:], tuple(t.shape),
                                               tuple(st * item for st in t.stride()))
        return gradnb.from_numpy(view)

    def pairs(self):
        """(torch tensor, gradnb tensor) for every tensor converted, inputs first."""
        return list(self.memo.values())


class _Fresh:
    """Replaces each torch leaf requiring grad by a fresh clone (same tensor, same clone)."""

    def __init__(self):
        self.memo = {}

    def __call__(self, value):
        import torch

        if isinstance(value, torch.Tensor):
            if not (value.requires_grad and value.is_leaf):
                return value
            if id(value) not in self.memo:
                self.memo[id(value)] = (value, value.detach().clone().requires_grad_())
            return self.memo[id(value)][1]
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*(self(v) for v in value))
        if isinstance(value, (list, tuple)):
            return type(value)(self(v) for v in value)
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        return value


def _gradnb_attr(name):
    value = getattr(gradnb, name, None)
    if value is None:
        raise Unsupported(f"gradnb.{name}")
    return value


def to_numpy(value):
    import torch

    if isinstance(value, torch.Tensor):
        if value._is_zerotensor():
            return np.zeros(tuple(value.shape), dtype=str(value.dtype).removeprefix("torch."))
        value = value.detach().resolve_conj().resolve_neg().cpu()
        if value.dtype == torch.bfloat16:  # NumPy has no bfloat16: compared as float32
            value = value.float()
        return value.numpy()
    arr = np.asarray(gradnb.Tensor.detach(value).numpy())
    return arr.astype(np.float32) if arr.dtype.kind == "V" else arr


# -- comparing ---------------------------------------------------------------------------------
def _flatten(out):
    if isinstance(out, (list, tuple)):
        return [x for item in out for x in _flatten(item)]
    return [out]


def _is_torch_tensor(x):
    import torch

    return isinstance(x, torch.Tensor)


def _tolerances(dtype):
    if dtype in (np.float64, np.complex128):
        return 1e-6, 1e-6
    return 1e-4, 1e-4


class Mismatch(AssertionError):
    """gradnb's value differs from torch's."""


def compare(what: str, expected, actual, values: bool = True) -> None:
    """Raise ``Mismatch`` unless gradnb's ``actual`` matches torch's ``expected`` (flattened)."""
    exp, act = _flatten(expected), _flatten(actual)
    if len(exp) != len(act):
        raise Mismatch(f"{what}: {len(exp)} values from torch, {len(act)} from gradnb")
    for i, (e, a) in enumerate(zip(exp, act)):
        where = f"{what}[{i}]" if len(exp) > 1 else what
        if e is None or a is None:
            _compare_missing(where, e, a)
            continue
        if _is_torch_tensor(e):
            if not isinstance(a, gradnb.Tensor):
                raise Mismatch(f"{where}: torch gives a tensor, gradnb {type(a).__name__}")
            _compare_tensors(where, e, a, values)
        elif not values:
            continue
        elif isinstance(a, gradnb.Tensor):
            raise Mismatch(f"{where}: torch gives {type(e).__name__}, gradnb a tensor")
        elif isinstance(e, float) and isinstance(a, float):
            if not (np.isclose(e, a, rtol=1e-6, atol=1e-6, equal_nan=True)):
                raise Mismatch(f"{where}: {e} != {a}")
        elif e != a and not (isinstance(e, (int, float)) and isinstance(a, (int, float))
                             and np.isclose(e, a)):
            raise Mismatch(f"{where}: {e!r} != {a!r}")


def _compare_missing(where, e, a):
    """None and an all-zero gradient mean the same thing."""
    other = a if e is None else e
    if other is None:
        return
    values = to_numpy(other)
    if np.any(values != 0):
        raise Mismatch(f"{where}: {'torch' if e is None else 'gradnb'} gives None, the other "
                       "nonzero values")


def _compare_tensors(where, e, a, values=True):
    e_np = to_numpy(e)
    a_np = to_numpy(a)
    e_dt = str(e.dtype).removeprefix("torch.")
    a_dt = str(a.dtype).removeprefix("gradnb.")
    if e_dt != a_dt:
        raise Mismatch(f"{where}: dtype torch.{e_dt}, gradnb.{a_dt}")
    if e_np.shape != a_np.shape:
        raise Mismatch(f"{where}: shape {list(e_np.shape)} in torch, {list(a_np.shape)} in gradnb")
    if not values:
        return
    if e_np.dtype.kind in "fc":
        rtol, atol = _tolerances(e_np.dtype)
        ok = np.isclose(a_np, e_np, rtol=rtol, atol=atol, equal_nan=True)
        if not ok.all():
            bad = np.argwhere(~ok)[0]
            raise Mismatch(f"{where}: at {tuple(bad.tolist())} torch {e_np[tuple(bad)]}, "
                           f"gradnb {a_np[tuple(bad)]}")
    elif not np.array_equal(e_np, a_np):
        raise Mismatch(f"{where}: values differ")


# -- running one sample ------------------------------------------------------------------------
@dataclasses.dataclass
class SampleResult:
    """What one sample gave: ``first`` (forward + gradients) and ``second`` (gradgrad, None when
    not applicable) are "ok" or a failure message."""

    first: str
    second: str | None = None


def _call(fn, wrapper, inp, args, kwargs):
    return wrapper(fn, inp, *args, **kwargs)


def _describe(exc: BaseException) -> str:
    msg = str(exc).split("\n")[0][:160]
    return f"{type(exc).__name__}: {msg}"


def _random_like(t, gen):
    import torch

    return torch.randn(t.shape, dtype=t.dtype, generator=gen)


def run_sample(op, fn, sample, gradgrad: bool) -> SampleResult:
    """Compare gradnb's ``fn`` with torch's ``op`` on one SampleInput."""
    import torch

    wrapper = op.gradcheck_wrapper  # e.g. symmetrizes the input of eigh; else calls op
    process = sample.output_process_fn_grad
    # torch side, on fresh leaves: some reference inputs are views made leaves with
    # requires_grad_(), through which torch's own autograd.grad returns None
    fresh = _Fresh()
    t_inp, t_args, t_kwargs = fresh(sample.input), fresh(sample.args), fresh(sample.kwargs)
    t_out = _call(op.op, wrapper, t_inp, t_args, t_kwargs)
    t_out = process(t_out)
    # gradnb side
    conv = Converter()
    try:
        g_inp = conv(t_inp)
        g_args = conv(t_args)
        g_kwargs = conv(t_kwargs)
    except Unsupported as exc:
        return SampleResult(f"unsupported argument: {exc}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # NumPy warnings torch would not give
            g_out = _call(fn, _translated(wrapper), g_inp, g_args, g_kwargs)
            g_out = process(g_out)
    except Exception as exc:  # noqa: BLE001 - any failure of gradnb is the finding
        return SampleResult(f"forward raises {_describe(exc)}")
    values = not is_random(op, sample)
    try:
        compare("forward", t_out, g_out, values)
    except Mismatch as exc:
        return SampleResult(str(exc))

    # first order
    leaves = [(t, g) for t, g in conv.pairs() if t.requires_grad and t.is_leaf]
    t_outs = [o for o in _flatten(t_out) if _is_torch_tensor(o) and o.requires_grad]
    if not leaves or not t_outs:
        return SampleResult("ok")
    g_outs_all = _flatten(g_out)
    t_all = _flatten(t_out)
    idx = [i for i, o in enumerate(t_all) if _is_torch_tensor(o) and o.requires_grad]
    g_outs = [g_outs_all[i] for i in idx]
    gen = torch.Generator().manual_seed(0)
    t_go = [_random_like(o, gen) for o in t_outs]
    g_go = [Converter._tensor(v) for v in t_go]
    t_leaves = [t for t, _ in leaves]
    g_leaves = [g for _, g in leaves]
    try:
        t_grads = torch.autograd.grad(t_outs, t_leaves, t_go, allow_unused=True,
                                      create_graph=gradgrad)
    except RuntimeError:
        return SampleResult("ok")  # torch cannot differentiate this sample either
    try:
        missing = [i for i, o in enumerate(g_outs) if not getattr(o, "requires_grad", False)]
        if missing:
            return SampleResult(f"gradnb output {missing[0]} does not require grad")
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            g_grads = gradnb.autograd.grad(g_outs, g_leaves, g_go, allow_unused=True,
                                           create_graph=gradgrad)
    except Exception as exc:  # noqa: BLE001
        return SampleResult(f"backward raises {_describe(exc)}")
    try:
        compare("gradient", list(t_grads), list(g_grads), values)
    except Mismatch as exc:
        return SampleResult(str(exc))
    if not gradgrad:
        return SampleResult("ok")
    return SampleResult("ok", _second_order(t_grads, g_grads, t_leaves, g_leaves, gen, values))


def _second_order(t_grads, g_grads, t_leaves, g_leaves, gen, values) -> str:
    import torch

    pairs = [(t, g) for t, g in zip(t_grads, g_grads) if t is not None and t.requires_grad]
    if not pairs:
        return "ok"
    t_v = [_random_like(t, gen) for t, _ in pairs]
    g_v = [Converter._tensor(v) for v in t_v]
    try:
        t_gg = torch.autograd.grad([t for t, _ in pairs], t_leaves, t_v, allow_unused=True)
    except RuntimeError:
        return "ok"
    # A gradnb gradient without a graph is constant in the inputs: it adds nothing (torch's
    # threshold_backward, say, records a node whose derivative is zero).
    live = [(g, v) for (_, g), v in zip(pairs, g_v)
            if isinstance(g, gradnb.Tensor) and g.requires_grad]
    try:
        if live:
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                g_gg = gradnb.autograd.grad([g for g, _ in live], g_leaves, [v for _, v in live],
                                            allow_unused=True)
        else:
            g_gg = [None] * len(g_leaves)
    except Exception as exc:  # noqa: BLE001
        return f"double backward raises {_describe(exc)}"
    try:
        compare("second-order gradient", list(t_gg), list(g_gg), values)
    except Mismatch as exc:
        return str(exc)
    return "ok"


# -- one entry ---------------------------------------------------------------------------------
@dataclasses.dataclass
class EntryResult:
    """The outcome of one op_db entry."""

    entry: str
    status: str  # "pass", "partial", "error" (no sample passes), "missing"
    samples: int = 0
    passed: int = 0
    first_failure: str = ""
    gradgrad: str | None = None  # "pass", "fail: ..." or None (not supported / first order fails)


def samples_of(op):
    """The first ``MAX_SAMPLES`` sample_inputs, then up to ``MAX_REFERENCE`` small
    reference_inputs that are not among them."""
    import torch

    torch.manual_seed(0)
    samples = _take(op.sample_inputs("cpu", torch.float64, requires_grad=True), 0, MAX_SAMPLES)
    if op.reference_inputs_func is not None:
        torch.manual_seed(1)
        refs = op.reference_inputs("cpu", torch.float64, requires_grad=True)
        extra = _take(refs, MAX_SAMPLES, MAX_SAMPLES + 4 * MAX_REFERENCE)
        samples += [s for s in extra if _small(s)][:MAX_REFERENCE]
    return samples


def _take(generator, start, stop) -> list:
    """Items ``start:stop`` of a sample generator, stopping early where it raises (some
    reference generators ask for integer tensors that require grad past their first items)."""
    out = []
    try:
        for i, item in enumerate(generator):
            if i >= stop:
                break
            if i >= start:
                out.append(item)
    except (ValueError, RuntimeError, TypeError):
        pass
    return out


def _small(sample) -> bool:
    import torch

    tensors = [x for x in _flatten([sample.input, list(sample.args), list(sample.kwargs.values())])
               if isinstance(x, torch.Tensor)]
    return all(t.numel() <= MAX_NUMEL for t in tensors)


def run_entry(op) -> EntryResult:
    """Run every sample of ``op`` through gradnb."""
    eid = entry_id(op)
    fn = resolve_entry(op)
    if fn is None:
        return EntryResult(eid, "missing", first_failure=f"gradnb has no {op.name}")
    samples = samples_of(op)
    results = []
    for sample in samples:
        try:
            results.append(run_sample(op, fn, sample, op.supports_gradgrad))
        except Exception as exc:  # noqa: BLE001 - torch itself rejects the sample
            results.append(SampleResult(f"harness: {_describe(exc)}"))
    passed = sum(r.first == "ok" for r in results)
    failures = [r.first for r in results if r.first != "ok"]
    if not results or passed == len(results):
        status = "pass"
    elif passed:
        status = "partial"
    else:
        status = "error"
    gradgrad = None
    if op.supports_gradgrad and status == "pass":
        bad = [r.second for r in results if r.second not in (None, "ok")]
        gradgrad = "pass" if not bad else f"fail: {bad[0]}"
    return EntryResult(eid, status, len(results), passed, failures[0] if failures else "",
                       gradgrad)


# -- error_inputs ------------------------------------------------------------------------------
@dataclasses.dataclass
class ErrorResult:
    """error_inputs of one entry: how many raised the same type, how many matched the regex."""

    entry: str
    total: int = 0
    same_type: int = 0
    message_match: int = 0
    first_failure: str = ""


def _regex_matches(regex: str, message: str) -> bool:
    if not regex:
        return True
    for pattern in (regex, regex.replace("torch", "gradnb")):
        try:
            if re.search(pattern, message):
                return True
        except re.error:
            if pattern in message:
                return True
    return False


def run_error_inputs(op) -> ErrorResult | None:
    """Run ``op``'s error_inputs through gradnb; None when the op has none or gradnb lacks it."""
    import torch

    eid = entry_id(op)
    fn = resolve_entry(op)
    if fn is None or op.error_inputs_func is None:
        return None
    torch.manual_seed(0)
    try:
        cases = list(itertools.islice(op.error_inputs("cpu"), MAX_ERROR_INPUTS))
    except Exception:  # noqa: BLE001 - generator not runnable on this build
        return None
    if not cases:
        return None
    result = ErrorResult(eid)
    for case in cases:
        sample = case.sample_input
        result.total += 1
        try:
            conv = Converter(keep_aliasing=True)
            inp, args, kwargs = conv(sample.input), conv(sample.args), conv(sample.kwargs)
        except Unsupported as exc:
            result.first_failure = result.first_failure or f"unsupported argument: {exc}"
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(inp, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            if isinstance(exc, case.error_type):
                result.same_type += 1
                if _regex_matches(case.error_regex, str(exc)):
                    result.message_match += 1
                elif not result.first_failure:
                    result.first_failure = (f"message {str(exc)[:120]!r} does not match "
                                            f"{case.error_regex!r}")
            elif not result.first_failure:
                result.first_failure = (f"raises {_describe(exc)}, torch "
                                        f"{case.error_type.__name__}")
        else:
            result.first_failure = result.first_failure or (
                f"no error, torch raises {case.error_type.__name__}: {case.error_regex!r}")
    return result
