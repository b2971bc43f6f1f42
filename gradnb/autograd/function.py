"""Custom differentiable operations: ``autograd.Function``.

A subclass writes ``forward`` and ``backward`` as static methods; ``apply`` runs ``forward``
under ``no_grad`` and, when some input requires grad, attaches one graph node to the outputs.
As in PyTorch that node *is* the ``ctx`` that ``forward`` and ``backward`` receive: an instance
of ``<ClassName>Backward``, created per subclass, so ``y.grad_fn`` prints ``<ExpBackward>`` and
``y.grad_fn.saved_tensors`` works.

The engine hands nodes raw arrays in a first-order backward and tensors under
``create_graph=True``. User code always sees tensors: the node wraps incoming arrays, and
unwraps the returned gradients again in a first-order pass, so a ``backward`` written with
gradnb ops is differentiable a second time for free.
"""

from __future__ import annotations

import functools
import inspect

from .._core.backend import get_array_module
from .._core.grad_mode import no_grad
from .._core.grad_mode import state as _grad_state
from .._core.graph import Node, Output, switches, unlinked
from .._core.record import record
from .._core.tensor import Tensor

__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """What ``forward``/``setup_context`` use to talk to ``backward``: saved tensors, which
    inputs need gradients, and which outputs are special."""

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (inputs, outputs or intermediates, or None) for ``backward``, where
        ``ctx.saved_tensors`` returns them; modifying one in place afterwards makes backward
        raise PyTorch's in-place error. Call at most once."""
        self._to_save = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs that ``forward`` modified in place (and returns as outputs)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that carry no gradient (indices, masks): they get
        ``requires_grad=False`` and ``backward`` still receives a (zero) gradient for them."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, ``backward`` receives None (not zeros) for outputs that got no
        gradient."""
        self._materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node of a custom Function, and its ``ctx``. Each Function subclass gets its own
    subclass named ``<ClassName>Backward``."""
    rule = "your Function's backward(ctx, grad)"

    _forward_cls: type = None  # set on each generated subclass
    runs_user_code = True  # its backward may raise: the engine holds leaf grads back

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward`` (PyTorch's errors when they were freed
        or modified in place since)."""
        return self.saved_as(Tensor)

    @property
    def needs_input_grad(self) -> tuple:
        """One bool per ``forward`` argument: does it need a gradient?"""
        return self._needs_input_grad

    def backward(self, *grad_outputs):
        """Engine entry point: call the user's ``backward`` with tensors, validate and convert
        what it returns."""
        tensor_mode = _grad_state.enabled
        grads = tuple(self._incoming(i, g) for i, g in enumerate(grad_outputs))
        result = self._forward_cls.backward(self, *grads)
        return self._outgoing(result, tensor_mode)

    def _incoming(self, i, g):
        meta = self._output_meta[i]
        if meta is None:
            return None  # a non-tensor output
        if g is None:
            if not self._materialize_grads:
                return None
            shape, dtype, xp = meta
            return Tensor._make(xp.zeros(shape, dtype=dtype))
        return g if isinstance(g, Tensor) else Tensor._make(g)

    def _outgoing(self, result, tensor_mode):
        result = result if isinstance(result, tuple) else (
            tuple(result) if isinstance(result, list) else (result,))
        expected = len(self._needs_input_grad)
        if len(result) > expected and all(g is None for g in result[expected:]):
            result = result[:expected]
        if len(result) != expected:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{expected}, got {len(result)})"
            )
        out = []
        for pos, g in enumerate(result):
            if self._input_shapes[pos] is None:  # not a tensor argument
                if g is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {pos + 1}, but the corresponding forward input was not a "
                        "Variable"
                    )
                continue
            if g is not None and not self._needs_input_grad[pos]:
                g = None  # PyTorch drops gradients for inputs that do not need one
            if g is not None:
                if not isinstance(g, Tensor):
                    raise TypeError(
                        f"function {self.name()} returned a gradient of type "
                        f"{type(g).__name__} at position {pos + 1}; expected a Tensor or None"
                    )
                self._check_shape(pos, g)
                if not tensor_mode:
                    g = g._data
            out.append(g)
        return tuple(out)

    def _check_shape(self, pos, g) -> None:
        shape = tuple(self._input_shapes[pos])
        got = tuple(g._data.shape)
        if got != shape and not _reducible(got, shape):
            raise RuntimeError(
                f"Function {self.name()} returned an invalid gradient at index {pos} - got "
                f"{list(got)} but expected shape compatible with {list(shape)}"
            )


class Function:
    """Base class of custom differentiable operations.

    >>> import gradnb
    >>> class Exp(gradnb.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         y = x.exp()
    ...         ctx.save_for_backward(y)
    ...         return y
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         (y,) = ctx.saved_tensors
    ...         return grad * y
    >>> x = gradnb.tensor([0.0, 1.0], requires_grad=True)
    >>> y = Exp.apply(x)
    >>> y.grad_fn
    <ExpBackward object at 0x...>
    >>> y.sum().backward()
    >>> x.grad
    tensor([1.0000, 2.7183])

    ``forward(ctx, *args)`` may instead be written as ``forward(*args)`` plus
    ``setup_context(ctx, inputs, output)``, PyTorch's newer style.
    """

    _backward_cls: type = BackwardCFunction

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """Compute the outputs from the inputs (runs under ``no_grad``)."""
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output) -> None:
        """Optional: save what backward needs, given the inputs and ``forward``'s output."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Given one gradient per output, return one gradient (or None) per forward input."""
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    @classmethod
    def vjp(cls, ctx, *grad_outputs):
        """Alias of ``backward``."""
        return cls.backward(ctx, *grad_outputs)

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the Function on ``args`` and connect its outputs to the graph."""
        if cls is Function:
            raise RuntimeError("Function.apply must be called on a subclass of "
                               "autograd.Function")
        separate_context = _has_setup_context(cls)
        args = _bind(cls, args, kwargs, separate_context)
        tensor_args = [a if isinstance(a, Tensor) else None for a in args]
        executable = _grad_state.enabled and any(
            t is not None and t._requires_grad for t in tensor_args)
        ctx = _new_ctx(cls, tensor_args, executable)
        ctx._needs_input_grad = tuple(executable and t is not None and t._requires_grad
                                      for t in tensor_args)
        ctx._input_shapes = tuple(None if t is None else t._data.shape for t in tensor_args)
        with no_grad():
            if separate_context:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        return _connect_outputs(ctx, output, args, tensor_args, executable)


def once_differentiable(fn):
    """Decorate a Function's ``backward`` that is not itself differentiable: it runs under
    ``no_grad``, and differentiating its result a second time raises an error."""

    @functools.wraps(fn)
    def wrapper(ctx, *grads):
        with no_grad():
            result = fn(ctx, *grads)
        if not _grad_state.enabled:
            return result
        needs = [g for g in grads if isinstance(g, Tensor) and g._requires_grad]
        if not needs:
            return result
        if isinstance(result, tuple):
            return tuple(_delayed_error(g, needs) for g in result)
        return _delayed_error(result, needs)

    return wrapper


class DelayedError(Node):
    """Stands in for the derivative of a ``once_differentiable`` backward: raises if reached."""
    rule = "raises the error of an op that cannot be differentiated"

    __slots__ = ()
    runs_user_code = True  # it raises by design

    def name(self) -> str:
        """PyTorch's name for this node."""
        return "Error"

    def backward(self, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


def _delayed_error(g, inputs):
    if not isinstance(g, Tensor):
        return g
    switches.user_code = True
    return record(DelayedError, tuple(inputs), g._data)


# -- apply's steps ---------------------------------------------------------------------------------
def _has_setup_context(cls) -> bool:
    return inspect.getattr_static(cls, "setup_context") is not inspect.getattr_static(
        Function, "setup_context")


def _forward_signature(cls, separate_context: bool):
    sig = inspect.signature(cls.forward)
    if separate_context:
        return sig
    params = list(sig.parameters.values())[1:]  # drop ctx
    return sig.replace(parameters=params)


def _bind(cls, args, kwargs, separate_context) -> tuple:
    """Keyword arguments become positional, so each gets a ``needs_input_grad`` slot."""
    if not kwargs:
        return args
    bound = _forward_signature(cls, separate_context).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args) + tuple(bound.kwargs.values())


def _new_ctx(cls, tensor_args, executable):
    """The ctx ``forward`` receives: the node itself, linked into the graph once the outputs
    exist (``_connect_outputs``)."""
    switches.user_code = True  # its backward is the user's
    ctx = unlinked(cls._backward_cls, sum(t is not None for t in tensor_args))
    ctx._to_save = ()
    ctx._dirty = ()
    ctx._non_differentiable = ()
    ctx._materialize_grads = True
    ctx._output_meta = ()
    return ctx


def _connect_outputs(ctx, output, args, tensor_args, executable):
    """Give each tensor output its place in the graph and save what ``backward`` needs."""
    outputs = output if isinstance(output, tuple) else (output,)
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_differentiable}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    result = []
    into = []  # the outputs that join the graph as outputs of ctx (None for the others)
    metas = []
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            metas.append(None)
            result.append(out)
            into.append(None)
            continue
        metas.append((out._data.shape, out._data.dtype, get_array_module(out._data)))
        if id(out) in input_ids and id(out) not in dirty:
            out = _alias(out)  # an input returned as is: a new tensor, same storage
        joins = executable and id(outputs[i]) not in non_diff and out._data.dtype.kind in "fcV"
        if executable and not joins:
            out._requires_grad = False
        elif joins:
            _check_dirty_leaf(out, dirty)
        result.append(out)
        into.append(out if joins else None)
    ctx._output_meta = tuple(metas)
    ctx.num_outputs = len(outputs)
    _mark_views(into, dirty)
    save = _save_spec(ctx, outputs, into)
    del ctx._to_save
    if executable:
        record(type(ctx), tuple(t for t in tensor_args if t is not None), None, ctx=ctx,
               into=tuple(into), save=save)
    return tuple(result) if isinstance(output, tuple) else result[0]


def _mark_views(into, dirty) -> None:
    """PyTorch's CreationMeta for outputs that are views of an input (made in ``forward``, or an
    input returned as is): the custom backward stands for them, so an in-place write into one
    (or into its base, found when it is next used) is refused rather than rebased. With several
    differentiable outputs, each is "one of several views of one op"."""
    joining = [t for t in into if t is not None]
    for t in joining:
        if t._base is not None and id(t) not in dirty:
            t._creation = "multi_output" if len(joining) > 1 else "custom_function"
            t._grad_through_base = False  # (it has the Function's node now)


def _alias(t):
    alias = Tensor._make(t._data, t._requires_grad, t.grad_fn, t._output_nr, t._version_counter)
    alias._base = t if t._base is None else t._base
    return alias


def _check_dirty_leaf(out, dirty) -> None:
    if id(out) in dirty and out.grad_fn is None and out._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                           "operation.")


def _save_spec(ctx, outputs, into) -> tuple:
    """What to save for ``save_for_backward``'s tensors: outputs of ctx as outputs (their array,
    not the tensor, so no output -> node -> output cycle); inputs and intermediates as tensors,
    with a version check."""
    position = {id(o): i for i, o in enumerate(outputs) if isinstance(o, Tensor)}
    spec = []
    for t in ctx._to_save:
        if t is None:
            spec.append(None)
        elif not isinstance(t, Tensor):
            raise TypeError(f"save_for_backward can only save variables, but argument "
                            f"{len(spec)} is of type {type(t).__name__}")
        elif id(t) in position and into[position[id(t)]] is not None:
            spec.append(Output(position[id(t)]))
        else:
            spec.append(t)
    return tuple(spec)


def _reducible(got: tuple, shape: tuple) -> bool:
    """Whether a gradient of shape ``got`` sums down to ``shape`` (``shape`` expands to it)."""
    if len(shape) > len(got):
        return False
    tail = got[len(got) - len(shape):]
    return all(s == g or s == 1 for s, g in zip(shape, tail))
