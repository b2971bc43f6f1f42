"""Complex tensors: their parts (``real``, ``imag``, ``view_as_real``, ``view_as_complex``, all
views sharing storage), building them (``complex``, ``polar``), ``angle`` and conjugation.

Gradients follow PyTorch's convention: for a real loss ``L`` of a complex ``z = x + iy`` the
gradient is ``dL/dx + i dL/dy`` (twice the conjugate Wirtinger derivative ``dL/dz*``). A real
input of a complex op gets the real part of what flows back to it (the engine's central cast).

PyTorch's ``conj`` is a lazy view (a conjugate bit on shared storage); gradnb's ``conj``
computes the conjugate into a new tensor, so ``is_conj()`` is always False, ``resolve_conj``
returns its input, and writing into ``x.conj()`` does not write into ``x``.
"""

from __future__ import annotations

import numpy as np

from .._core import dtype as _dtype
from .._core.backend import get_array_module
from .._core.graph import Node
from .._core.record import record, wrap
from . import dual
from ._args import scalar_type_name
from ._common import Tensor, check_broadcast
from .creation import zeros_like

__all__ = [
    "angle", "complex", "conj", "conj_physical", "imag", "is_complex", "is_conj", "isreal",
    "polar", "real", "resolve_conj", "view_as_complex", "view_as_real",
]


def _real_dtype(data):
    return _dtype.real_of(data.dtype)


class RealBackward0(Node):
    """``real(z)``: the gradient is ``g`` itself, made complex by the engine's cast."""
    rule = "self: grad (as a complex number)"

    __slots__ = ()
    is_view = True

    def backward(self, g):
        return (g,)


def real(input: Tensor) -> Tensor:
    """The real part: a view sharing ``input``'s storage (``input`` itself for real tensors)."""
    if input._data.dtype.kind != "c":
        return input
    return record(RealBackward0, (input,), input._data.real)


class ImagBackward0(Node):
    """``imag(z)``: the gradient is ``i g``."""
    rule = "self: grad * 1j"

    __slots__ = ()
    is_view = True

    def backward(self, g):
        return (g * 1j,)


def imag(input: Tensor) -> Tensor:
    """The imaginary part: a view sharing ``input``'s storage."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return record(ImagBackward0, (input,), input._data.imag)


def isreal(input: Tensor) -> Tensor:
    """Where ``input`` is real, as a bool tensor: its imaginary part is 0 (NaN is not 0); every
    element of a real tensor (no gradient, as in PyTorch)."""
    data = input._data
    if data.dtype.kind != "c":
        return wrap(get_array_module(data).ones(data.shape, dtype=bool))
    return wrap(data.imag == 0)


class ViewAsRealBackward0(Node):
    rule = "self: view_as_complex(grad)"
    __slots__ = ()
    is_view = True
    fit_grads = False  # the rule builds the complex gradient itself

    def backward(self, g):
        if isinstance(g, Tensor):
            return (view_as_complex(g.contiguous()),)
        return (g[..., 0] + 1j * g[..., 1],)


def view_as_real(input: Tensor) -> Tensor:
    """A real view of a complex tensor, with a last dimension of size 2 holding (real, imag)."""
    data = input._data
    if data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    parts = data[..., None].view(_real_dtype(data))
    return record(ViewAsRealBackward0, (input,), parts)


class ViewAsComplexBackward0(Node):
    rule = "self: view_as_real(grad)"
    __slots__ = ()
    is_view = True
    fit_grads = False

    def backward(self, g):
        if isinstance(g, Tensor):
            return (view_as_real(g),)
        xp = get_array_module(g)
        return (xp.stack((g.real, g.imag), axis=-1),)


def view_as_complex(input: Tensor) -> Tensor:
    """A complex view of a float tensor whose last dimension (of size 2, stride 1) holds
    (real, imag) pairs."""
    data = input._data
    if data.dtype not in (np.float32, np.float64):
        name = scalar_type_name(data.dtype)
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, "
                           f"but got a tensor of scalar type: {name}")
    if data.ndim == 0 or data.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if data.strides[-1] != data.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * data.itemsize) for s, n in zip(data.strides[:-1], data.shape[:-1]) if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    out = data.view(_dtype.complex_of(data.dtype))[..., 0]
    return record(ViewAsComplexBackward0, (input,), out)


class ComplexBackward0(Node):
    rule = "real: at::real(grad); imag: at::imag(grad)"
    __slots__ = ()
    on_tensors = True
    inputs = ("real", "imag")
    saves = ("imag", "real")  # unread, but PyTorch saves them

    def backward(self, g):
        return real(g), imag(g)


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``real + i imag`` (two float tensors of one dtype, broadcast together); with ``out``,
    written into that complex tensor."""
    a, b = real._data, imag._data
    if a.dtype != b.dtype or a.dtype.kind != "f":
        names = [scalar_type_name(a.dtype), scalar_type_name(b.dtype)]
        if a.dtype.kind != "f" or b.dtype.kind != "f":
            raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                               f"{names[0]} and {names[1]}")
        raise RuntimeError(f"Expected object of scalar type {names[0]} but got scalar type "
                           f"{names[1]} for second argument")
    check_broadcast(a.shape, b.shape)
    kind = _dtype.complex_of(a.dtype)
    if out is not None and out._data.dtype != kind:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(kind)} but got "
                           f"scalar type {scalar_type_name(out._data.dtype)} for argument 'out'")
    data = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=kind)
    data.real, data.imag = a, b
    result = record(ComplexBackward0, (real, imag), data)
    return result if out is None else out.copy_(result)


class PolarBackward0(Node):
    """``out = abs * u`` with ``u = e^{i angle}``: for a real parameter ``p`` the gradient is
    ``Re(g * conj(d out / dp))``, so ``Re(conj(g) sgn(result))`` and ``Re(conj(g) i result)``
    (PyTorch's ``polar_backward``, from the output alone)."""
    rule = "abs: real(conj(grad) * sgn(result)); angle: real(conj(grad) * 1j * result)"

    __slots__ = ()
    on_tensors = True
    inputs = ("abs", "angle")
    saves = ("result",)

    def backward(self, g):
        (y,) = self.saved(g)
        gc = g.conj()
        return real(gc * complex_sgn(y)), real(gc * y * 1j)


def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """``abs * (cos(angle) + i sin(angle))``."""
    r, t = abs._data, angle._data
    if r.dtype != t.dtype or r.dtype.kind != "f":
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{scalar_type_name(r.dtype)} and {scalar_type_name(t.dtype)}")
    check_broadcast(r.shape, t.shape)
    out = np.empty(np.broadcast_shapes(r.shape, t.shape), dtype=_dtype.complex_of(r.dtype))
    out.real, out.imag = r * np.cos(t), r * np.sin(t)
    return record(PolarBackward0, (abs, angle), out)


class AngleBackward0(Node):
    """``atan2(y, x)``: ``i z / |z|^2 * g`` for complex ``z`` (0 at ``z = 0``); a real input's
    angle is piecewise constant, so its gradient is 0."""
    rule = "self: grad * 1j * self / abs(self)**2 (0 for real inputs)"

    __slots__ = ()
    on_tensors = True
    saves = ("self",)

    def backward(self, g):
        (z,) = self.saved(g)
        if z._data.dtype.kind != "c":
            return (g * 0,)

        sq = (z * z.conj()).real
        safe = sq.where(sq != 0, 1)
        return ((g * z * 1j / safe).where(sq != 0, zeros_like(z)),)


def angle(input: Tensor) -> Tensor:
    """The argument of each element, in radians (for real tensors: ``pi`` where negative, 0
    elsewhere, NaN kept)."""
    data = input._data
    xp = get_array_module(data)
    if data.dtype.kind == "c":
        out = xp.angle(data)
    else:
        if data.dtype.kind != "f":
            data = data.astype(_dtype.get_default_dtype().np)
        out = xp.where(data < 0, np.pi, 0).astype(data.dtype)
        out = xp.where(xp.isnan(data), data, out)
    return record(AngleBackward0, (input,), out)


class SgnBackward0(Node):
    """``z / |z|``: ``(g - s Re(g conj(s))) / |z|``, 0 where ``z = 0``."""
    rule = "self: (grad - result * real(grad * conj(result))) / abs(self) (0 for real inputs)"

    __slots__ = ()
    on_tensors = True
    saves = ("self", "result")

    def backward(self, g):
        z, s = self.saved(g)
        if z._data.dtype.kind != "c":
            return (g * 0,)
        a = z.abs()
        out = (g - s * real(g * s.conj())) / a.where(a != 0, 1)
        return (out.where(a != 0, 0),)


def complex_sgn(input: Tensor) -> Tensor:
    """``z / |z|`` (0 at 0) of a complex tensor: ``sgn``'s complex case, and the derivative of
    ``abs`` for complex inputs."""
    return record(SgnBackward0, (input,), sgn_array(input._data))


def sgn_array(data):
    """``z / |z|`` (0 at 0) of a complex array."""
    xp = get_array_module(data)
    a = xp.abs(data)
    with np.errstate(all="ignore"):
        return xp.where(a == 0, 0, data / xp.where(a == 0, 1, a)).astype(data.dtype)


class ConjBackward0(Node):
    rule = "self: conj(grad)"
    __slots__ = ()

    def backward(self, g):
        return (dual.conj(g),)


class ConjPhysicalBackward0(ConjBackward0):
    rule = "self: conj(grad)"
    __slots__ = ()


def conj(input: Tensor) -> Tensor:
    """The complex conjugate: ``input`` itself for real tensors, else a new tensor (PyTorch
    returns a lazily conjugated view; see the module's docstring)."""
    if input._data.dtype.kind != "c":
        return input
    return record(ConjBackward0, (input,), get_array_module(input._data).conj(input._data))


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate as a new tensor (``input`` itself for real tensors, as PyTorch)."""
    if input._data.dtype.kind != "c":
        return input
    data = input._data
    return record(ConjPhysicalBackward0, (input,), get_array_module(data).conj(data))


def resolve_conj(input: Tensor) -> Tensor:
    """``input``: gradnb's conjugates are never lazy."""
    return input


def is_conj(input: Tensor) -> bool:
    """False: gradnb's conjugates are computed, never a lazy bit (see the module's docstring)."""
    return False


def is_complex(input: Tensor) -> bool:
    """Whether ``input`` has a complex dtype."""
    return input._data.dtype.kind == "c"


TENSOR_METHODS = {
    "angle": angle, "conj": conj, "conj_physical": conj_physical, "is_conj": is_conj,
    "resolve_conj": resolve_conj, "imag": property(imag, doc="The imaginary part (a view)."),
    "real": property(real, doc="The real part (a view; the tensor itself for real dtypes)."),
    "is_complex": is_complex, "isreal": isreal, "view_as_real": view_as_real,
    "view_as_complex": view_as_complex,
}
