"""The Tensor: an array (NumPy or CuPy) plus its place in the autograd graph.

The floor of the package: this module imports nothing above ``gradnb._core``. It holds the
state and the autograd API that needs no op: ``requires_grad``, ``grad``, ``grad_fn``,
``is_leaf``, hooks, ``detach``, conversion and ``repr``. Math lives in ``gradnb.ops`` (one module
per op family, forward and derivative side by side) and ``backward``/``to`` in the layers above;
``gradnb._tensor_methods`` binds all of them as methods and operators.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import backend as _backend
from . import dtype as _dtype
from .deepcopy import copy_tensor
from .events import emit as _emit
from .events import observers as _observers
from .grad_mode import inference_threads as _inference_threads
from .grad_mode import state as _grad_state
from .graph import switches
from .hooks import register
from .printing import format_tensor
from .views import refresh

__all__ = ["Size", "Tensor", "is_tensor", "numel"]


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``gradnb.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"gradnb.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n


# PyTorch's words when a factory, ``nn.Parameter`` or ``Variable`` is asked for an integer
# tensor that requires grad (``requires_grad_()`` and the attribute word it differently).
FACTORY_REQUIRES_GRAD_MESSAGE = ("Only Tensors of floating point and complex dtype can require "
                                 "gradients")


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    >>> import gradnb
    >>> x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    # Slots for what every tensor carries; rarer state defaults to these class attributes and
    # is stored in the instance ``__dict__`` only when set, so making a tensor sets five fields.
    __slots__ = (
        "__dict__",
        "__weakref__",
        "_data",
        "_grad_fn",
        "_output_nr",
        "_requires_grad",
        "_version_counter",
    )
    _base = None
    # For a view: the shared version counter's value when its grad_fn was last set. If the base
    # (or a sibling view) is written in place afterwards, the counter moves on and the view's
    # grad_fn is regenerated before its next use (views.refresh). None: not tracked.
    _grad_fn_version = None
    # For a view PyTorch will not write in place or regenerate: how it was made ("no_grad",
    # "inference", "multi_output", "custom_function"; see views.py). None: any other tensor.
    _creation = None
    # A view made with grad mode off requires grad through its base alone, whatever its own flag
    # was (PyTorch's DifferentiableViewMeta): read dynamically by ``requires_grad``, and it gets
    # no AccumulateGrad (graph.accumulator).
    _grad_through_base = False
    # For ``view(dtype)``, no autograd view but the same storage: the tensor whose storage it is
    # (``storage_offset`` counts from it).
    _storage_of = None
    _grad = None
    _hooks = None
    _post_hooks = None
    _retains_grad = False
    _accumulator = None
    _is_param = False
    _inference = False

    # NumPy defers to us in mixed expressions such as ``np.float64(2) * tensor``.
    __array_priority__ = 1000

    # Set by the ops layer (gradnb.ops.tensor_api), which the core floor does not import.
    _legacy_new = None

    def __new__(cls, *args, **kwargs):
        """``gradnb.Tensor(data)`` or ``gradnb.Tensor(2, 3)``: PyTorch's legacy constructor, in
        the default dtype (``gradnb.tensor`` infers the dtype instead)."""
        return Tensor._legacy_new(_dtype.get_default_dtype(), args, dict(kwargs))

    def __init__(self, *args, **kwargs) -> None:
        """All state is set by ``__new__`` (or ``_make``)."""

    @classmethod
    def _make(cls, data, requires_grad=False, grad_fn=None, output_nr=0, version=None):
        """Wrap an array without copying. The engine's one constructor (hot path)."""
        t = object.__new__(cls)
        t._data = data
        t._requires_grad = requires_grad
        t._grad_fn = grad_fn
        t._output_nr = output_nr
        t._version_counter = [0] if version is None else version
        if _inference_threads[0] and _grad_state.inference:
            t._inference = True
        return t

    # -- autograd state -----------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients are computed for this tensor (for a view made with grad mode off,
        whether its base requires grad now, as PyTorch reads it)."""
        if self._grad_through_base and self._grad_fn is None:
            return self._base._requires_grad
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self._set_requires_grad(flag, "only Tensors of floating point and complex dtype can "
                                      "require gradients")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place on a leaf; returns ``self``."""
        # PyTorch words each way in differently (a factory's requires_grad=True, the attribute,
        # this method); the check is the same.
        return self._set_requires_grad(requires_grad, "only Tensors of floating point dtype can "
                                                      "require gradients")

    def _set_requires_grad(self, requires_grad: bool, dtype_message: str) -> Tensor:
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(dtype_message)
        if requires_grad and self._inference and not _grad_state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        if self._grad_through_base:
            if not requires_grad:
                return self  # it requires grad through its base, whatever its own flag says
            self._grad_through_base = False  # its own flag: a leaf gradients now reach
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def _version(self) -> int:
        """How many times the tensor (or any view of its memory) was written in place; autograd
        compares it with the count a node saved. The counter itself is ``_version_counter``, a
        one-item list that views share."""
        if self._inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter[0]

    @property
    def grad_fn(self):
        """The node that produced this tensor (None for leaves and tensors outside the graph).

        A view whose base (or a sibling view) was written in place since is regenerated first,
        as in PyTorch: its grad_fn is then ``AsStridedBackward0`` of the base's new history.
        """
        if self._grad_fn_version is not None and self._grad_fn_version != self._version_counter[0]:
            refresh(self)
        return self._grad_fn

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is (0 for leaves and single outputs)."""
        self.grad_fn  # noqa: B018 - a stale view is regenerated first, as for ``grad_fn``
        return self._output_nr

    @property
    def volatile(self) -> bool:
        """Removed from PyTorch (``no_grad`` replaced it): always False, with its warning."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                      stacklevel=2)
        return False

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded op (inputs, parameters, detached)."""
        return self.grad_fn is None

    @property
    def grad(self):
        """The accumulated gradient (None until a backward reaches this tensor)."""
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None and getattr(value, "is_sparse", False):
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError("assigned grad has data of a different size")
        elif value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError("attempting to assign a gradient with dtype "
                                   f"'{value.dtype}' to a tensor with dtype '{self.dtype}'. "
                                   "Please ensure that the gradient and the tensor have the same dtype")
            if tuple(value.shape) != tuple(self.shape) and not getattr(value, "is_sparse", False):
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward (a no-op on leaves)."""
        if self.grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        self._retains_grad = True
        switches.user_code = True
        # The node refers to this tensor weakly: tensor -> grad_fn is the only strong direction.
        fn = self.grad_fn
        if fn._tensor_hooks is None:
            fn._tensor_hooks = {}
        fn._tensor_hooks.setdefault(self._output_nr, []).append(
            ("retain", weakref.ref(self), None))

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def register_hook(self, hook):
        """``hook(grad) -> Tensor | None`` runs when the gradient for this tensor is computed;
        a returned tensor replaces the gradient. Returns a handle with ``remove()``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._hooks is None:
            self._hooks = {}
        switches.user_code = True
        handle = register(self._hooks, hook)
        if self.grad_fn is not None:
            fn = self.grad_fn
            if fn._tensor_hooks is None:
                fn._tensor_hooks = {}
            fn._tensor_hooks.setdefault(self._output_nr, []).append(("user", self._hooks, handle.id))
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs on a leaf after its ``.grad`` was accumulated."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._post_hooks is None:
            self._post_hooks = {}
        switches.user_code = True
        return register(self._post_hooks, hook)

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's data (and version counter), cut from the graph."""
        return self._cut_from_graph(self._version_counter, "detach()")

    def _cut_from_graph(self, version_counter, how: str) -> Tensor:
        """``detach()`` and ``.data``: a leaf over the same memory that autograd does not track,
        with ``version_counter`` (None: one of its own)."""
        t = Tensor._make(self._data, False, None, 0, version_counter)
        t._base = self._base
        if t._inference and not self._inference:  # (in inference mode: a view of a normal one)
            t._inference = False
        if _observers and self._requires_grad:
            _emit("value_detached", self, t, how)
        return t

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph in place; it becomes a leaf."""
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        """The tensor's data as a new leaf that autograd does not track: ``detach()``, but with a
        version counter of its own, as PyTorch's (a write through ``.data`` is not seen by the
        graph's version checks, nor by views made under no_grad)."""
        return self._cut_from_graph(None, ".data")

    @data.setter
    def data(self, value: Tensor) -> None:
        data = value._data if isinstance(value, Tensor) else value
        if data.shape != self._data.shape or data.dtype != self._data.dtype:
            # The leaf's AccumulateGrad recorded the old shape and dtype: a graph built from
            # now on gets a new one (PyTorch resets it too).
            self._accumulator = None
        self._data = data

    # -- metadata -----------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        """The shape, or the size of one dimension."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype.from_numpy_dtype(self._data.dtype)

    @property
    def device(self) -> _backend.device:
        return _backend.device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def nelement(self) -> int:
        return int(self._data.size)

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return int(self._data.nbytes)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f" or _dtype.is_bfloat16_np(self._data.dtype)

    def is_inference(self) -> bool:
        """True for tensors created inside ``inference_mode``."""
        return self._inference

    is_sparse = False

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __hash__(self) -> int:
        return id(self)

    # -- conversion ---------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a NumPy array sharing memory (CPU tensors; one that requires grad only
        where grad mode is off, e.g. inside ``no_grad`` or a custom ``Function.forward``)."""
        if self._requires_grad and not force and _grad_state.enabled:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if type(self._data) is not np.ndarray:
            if not force:
                raise TypeError(
                    f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to "
                    "copy the tensor to host memory first."
                )
            return self._data.get()
        if _observers and self._requires_grad:
            _emit("value_detached", self, None, ".numpy()")
        return self._data

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        if _observers and self._requires_grad:
            _emit("value_detached", self, None, ".item()")
        return self._data.reshape(()).item()

    def tolist(self):
        """The data as (nested) Python lists."""
        if _observers and self._requires_grad:
            _emit("value_detached", self, None, ".tolist()")
        data = self._data if type(self._data) is np.ndarray else self._data.get()
        return data.tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __array__(self, dtype=None, copy=None):
        data = self.numpy(force=True) if not self._requires_grad else self._data
        if type(data) is not np.ndarray:
            data = data.get()
        return data if dtype is None else data.astype(dtype)

    def __repr__(self) -> str:
        suffixes = []
        if self.device.type != "cpu":
            suffixes.append(f"device='{self.device}'")
        if self.grad_fn is not None:
            suffixes.append(f"grad_fn=<{self.grad_fn.name().rpartition('::')[2]}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        data = self._data if type(self._data) is np.ndarray else self._data.get()
        return format_tensor(data, default_dtype_name=_dtype.get_default_dtype().name,
                             dtype_name=self.dtype.name, suffixes=suffixes)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        # As in PyTorch, a 0-d tensor formats as its Python number: f"{loss}" prints 49.0.
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __reduce_ex__(self, protocol):
        raise TypeError("gradnb tensors are not pickled; save arrays with gradnb.save (npz)")

    def __deepcopy__(self, memo):
        """``copy.deepcopy`` of a leaf (see ``gradnb._core.deepcopy``)."""
        return copy_tensor(self, memo)


def is_tensor(obj) -> bool:
    """True if ``obj`` is a gradnb tensor."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    """The number of elements of ``input``."""
    return input.numel()


def _wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n

