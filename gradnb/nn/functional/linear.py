"""linear: ``x @ W.T + b`` as one ``addmm`` (PyTorch's graph: AddmmBackward0 over TBackward0)."""

from __future__ import annotations

import numpy as np

from ..._core.record import record
from ...ops.linalg import AddmmBackward0, matmul
from ._fused import Tensor

__all__ = ["addmm", "bilinear", "linear"]


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor) -> Tensor:
    """``input + mat1 @ mat2`` for 2-D ``mat1`` and ``mat2`` (``input`` broadcasts)."""
    return record(AddmmBackward0, (input, mat1, mat2),
                  _bias_plus_product(input._data, mat1._data, mat2._data))


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
        return np.add((m2.T @ m1.T).T, bias, order="C")
    product = m1 @ m2
    if (type(product) is np.ndarray and bias.dtype == product.dtype
            and bias.shape == product.shape[product.ndim - bias.ndim:]):
        # The product is a new array nobody else sees: adding the bias into it saves an
        # activation-sized allocation per layer (the same sum: addition commutes exactly).
        product += bias
        return product
    return bias + product


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` over the last dimension of ``input``."""
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
