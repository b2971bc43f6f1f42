"""linear: ``x @ W.T + b`` as one ``addmm`` (PyTorch's graph: AddmmBackward0 over TBackward0)."""

from __future__ import annotations

import numpy as np

from ..._core import autocast_state as _autocast
from ..._core.graph import Node
from ..._core.record import record
from ...ops import dual
from ...ops.linalg import matmul
from ._fused import Tensor

__all__ = ["addmm", "bilinear", "linear"]


class AddmmBackward0(Node):
    """``d(bias + m1 @ m2)``: ``g`` summed over the rows for a vector bias (other biases get
    ``g``, which the engine sums down to their shape), ``g @ m2.T`` for ``m1`` and
    ``m1.T @ g`` for ``m2``."""
    rule = "self: beta * grad; mat1: alpha * grad @ mat2.T; mat2: alpha * mat1.T @ grad"

    __slots__ = ()

    def backward(self, g):
        m1, m2 = self.saved(g)
        if type(g) is np.ndarray:  # first order: the same products, without dual's dispatch
            return (
                self._grad_bias(g) if self._next[0] is not None else None,
                g @ m2.T if self._next[1] is not None else None,
                (g.T @ m1).T if self._next[2] is not None else None,
            )
        return (
            self._grad_bias(g) if self.needs(0) else None,
            dual.matmul(g, dual.mT(m2)) if self.needs(1) else None,
            self._grad_mat2(m1, g) if self.needs(2) else None,
        )

    def _grad_bias(self, g):
        # nn.Linear's bias is a vector: summing the rows here skips the engine's general
        # unbroadcast (which works out the axes first), a measurable share of a small-batch
        # step. The same sum over the same axis, so the same numbers.
        if len(self.input_metadata(0)[0]) == 1:
            return dual.sum(g, 0)
        return g

    @staticmethod
    def _grad_mat2(m1, g):
        # ``mat2`` is usually ``weight.t()``: computing (g.T @ m1).T makes the gradient a
        # transposed view of a C-contiguous product, so after TBackward0 the weight's gradient
        # is C-contiguous like the weight and can become ``.grad`` without a copy.
        return dual.mT(dual.matmul(dual.mT(g), m1))


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor) -> Tensor:
    """``input + mat1 @ mat2`` for 2-D ``mat1`` and ``mat2`` (``input`` broadcasts)."""
    out = _bias_plus_product(input._data, mat1._data, mat2._data)
    # Each matrix is needed only for the other one's gradient.
    save = (1 if mat2._requires_grad else None, 2 if mat1._requires_grad else None)
    return record(AddmmBackward0, (input, mat1, mat2), out, save=save)


# OpenBLAS computes ``x @ w.T`` (w stored out x in, as nn.Linear keeps it) up to twice as slowly
# as ``w @ x.T`` when the layer is wide and the batch small; the latter's result is transposed,
# and the copy that makes it C-contiguous (adding the bias on the way) costs less than it saves
# only then. Measured with OpenBLAS 0.3 on AVX2, 1 and 2 threads: a clear gain from 128 outputs
# when the batch is under half the outputs, a loss below 128 outputs or from that batch on.
_WIDE_OUTPUTS = 128


def _transposed_product_pays(m1, m2) -> bool:
    """Whether ``(m2.T @ m1.T).T`` beats ``m1 @ m2`` for ``m2`` a transposed C-contiguous
    weight (NumPy arrays only; other backends use ``@`` as is)."""
    outputs = m2.shape[1]
    # The shapes first: most layers fail them, and reading ``flags`` builds an object each time.
    if outputs < _WIDE_OUTPUTS or m1.shape[0] >= outputs // 2 or type(m1) is not np.ndarray:
        return False
    flags = m2.flags
    return flags.f_contiguous and not flags.c_contiguous


def _bias_plus_product(bias, m1, m2):
    """``bias + m1 @ m2`` as a C-contiguous array, choosing the faster BLAS call for the
    common ``x @ weight.t()``."""
    if _transposed_product_pays(m1, m2):
        out = np.add((m2.T @ m1.T).T, bias, order="C")
        return out if out.dtype is m1.dtype else out.astype(m1.dtype)
    product = m1 @ m2
    if (type(product) is np.ndarray and bias.dtype == product.dtype
            and bias.shape == product.shape[product.ndim - bias.ndim:]):
        # The product is a new array nobody else sees: adding the bias into it saves an
        # activation-sized allocation per layer (the same sum: addition commutes exactly).
        product += bias
        return product
    out = bias + product
    if out.dtype is not m1.dtype and m1.dtype.kind == "V":  # bfloat16: NumPy's product is float32
        out = out.astype(m1.dtype)
    return out


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` over the last dimension of ``input``."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, weight, bias = _autocast.lower(input, weight, bias)
    wt = weight.t()
    if bias is None:
        return matmul(input, wt)
    if input.ndim == 2:
        return addmm(bias, input, wt)
    lead = tuple(input.shape[:-1])
    flat = input.reshape(-1, input.shape[-1])
    return addmm(bias, flat, wt).reshape(*lead, weight.shape[0])


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y_k = x1^T W_k x2 + b_k`` for ``weight`` of shape ``(out, in1, in2)``."""
    out, in1, in2 = weight.shape
    # (..., in1) @ (in1, out * in2) -> (..., out, in2), then contract with x2 over in2.
    left = matmul(input1, weight.permute(1, 0, 2).reshape(in1, out * in2))
    y = (left.reshape(*input1.shape[:-1], out, in2) * input2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias
