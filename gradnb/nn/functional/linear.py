"""linear: ``x @ W.T + b`` as one ``addmm`` (PyTorch's graph: AddmmBackward0 over TBackward0)."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..._core import autocast_state as _autocast
from ..._core.backend import get_array_module
from ..._core.graph import Node
from ..._core.record import record
from ...ops.linalg import AddmmBackward0, matmul
from ...ops.matrices import einsum
from ._fused import Tensor

__all__ = ["addmm", "bilinear", "linear"]


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor) -> Tensor:
    """``input + mat1 @ mat2`` for 2-D ``mat1`` and ``mat2`` (``input`` broadcasts)."""
    return record(AddmmBackward0, (input, mat1, mat2),
                  _bias_plus_product(input._data, mat1._data, mat2._data))


# OpenBLAS computes ``x @ w.T`` (w stored out x in, as nn.Linear keeps it) up to a third more
# slowly than ``w @ x.T`` when the layer is wide and the batch small; the latter's result is
# transposed, and the copy that makes it C-contiguous (adding the bias on the way) costs less than
# it saves only then. Measured with OpenBLAS 0.3.31 on AVX2, 1 and 2 threads, layers of 128 to
# 1024 outputs (``python benchmarks/bench_linear_layout.py``): a gain of 5-20% for batches of 2
# to 32 from 128 outputs, about even at 64, and a loss of 5-40% from 128 rows on (a 784-512 layer
# at batch 128: 0.62 ms plain, 0.70 ms transposed), below 128 outputs and for one row.
_WIDE_OUTPUTS = 128
_SMALL_BATCH = 64


def _transposed_product_pays(m1, m2) -> bool:
    """Whether ``(m2.T @ m1.T).T`` beats ``m1 @ m2`` for ``m2`` a transposed C-contiguous
    weight (NumPy arrays only; other backends use ``@`` as is)."""
    outputs = m2.shape[1]
    # The shapes first: most layers fail them, and reading ``flags`` builds an object each time.
    rows = m1.shape[0]
    if outputs < _WIDE_OUTPUTS or rows >= _SMALL_BATCH or rows < 2 or type(m1) is not np.ndarray:
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
    try:  # (free until it raises: the shapes are checked by the product itself)
        if input._data.ndim == 2:  # (``addmm``'s one line, without its call)
            return record(AddmmBackward0, (bias, input, wt),
                          _bias_plus_product(bias._data, input._data, wt._data))
        lead = tuple(input.shape[:-1])
        flat = input.reshape(-1, input.shape[-1])
        return addmm(bias, flat, wt).reshape(*lead, weight.shape[0])
    except ValueError:
        x, w = input._data, weight._data
        if x.ndim and w.ndim == 2 and x.shape[-1] != w.shape[1]:
            rows = x.size // x.shape[-1] if x.shape[-1] else math.prod(x.shape[:-1])
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{x.shape[-1]} "
                               f"and {w.shape[1]}x{w.shape[0]})") from None
        raise


class TrilinearBackward0(Node):
    """``_trilinear`` as ``bilinear`` calls it: ``out[b, o] = sum_ij i1[b, i] i2[o, i, j]
    i3[b, j]``; each input's gradient contracts ``grad`` with the other two."""
    rule = ("i1, i2, i3: _trilinear_backward(grad, i1, i2, i3, expand1, expand2, expand3, "
            "sumdim, grad_input_mask)")

    __slots__ = ()
    on_tensors = True
    inputs = ("i1", "i2", "i3")
    saves = ("expand1", "expand2", "expand3", "i1", "i2", "i3", "sumdim")
    saved_when: ClassVar[dict] = {"i1": ("i2", "i3"), "i2": ("i1", "i3"), "i3": ("i1", "i2")}
    # the only expansion ``bilinear`` asks for
    expand1, expand2, expand3, sumdim = (1, 3), (0,), (1, 2), (2, 3)

    def backward(self, g):
        i1, i2, i3 = self.saved(g)
        return (einsum("bo,oij,bj->bi", g, i2, i3) if self.needs(0) else None,
                einsum("bo,bi,bj->oij", g, i1, i3) if self.needs(1) else None,
                einsum("bo,bi,oij->bj", g, i1, i2) if self.needs(2) else None)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y_k = x1^T W_k x2 + b_k`` for ``weight`` of shape ``(out, in1, in2)``: PyTorch's
    composition, both inputs flattened to matrices for one ``_trilinear``."""
    out_shape = tuple(input1.shape[:-1]) + (weight.shape[0],)
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    a, w, b = x1._data, weight._data, x2._data
    data = get_array_module(a).einsum("bi,oij,bj->bo", a, w, b, optimize=True)
    y = record(TrilinearBackward0, (x1, weight, x2), data).reshape(out_shape)
    return y if bias is None else y + bias
