"""The local derivative of every backward node, in one line each, as the step player shows it.

``grad`` is the gradient flowing into the node (d loss / d result); each rule says what the node
sends to its inputs (``self``, ``other``, ...), as PyTorch's ``derivatives.yaml`` writes it.
Broadcasting is not part of the rules: the engine sums a gradient back to its input's shape
after the node, and the player shows that as its own step.

A test walks every :class:`~gradnb.autograd.graph.Node` subclass and fails if one has no rule.
"""

from __future__ import annotations

__all__ = ["RULES", "rule_for"]

#: Node class name -> the rule in one line.
RULES: dict[str, str] = {
    # arithmetic
    "AddBackward0": "self: grad; other: grad * alpha",
    "SubBackward0": "self: grad; other: -grad * alpha",
    "RsubBackward1": "self: -grad * alpha",
    "MulBackward0": "self: grad * other; other: grad * self",
    "DivBackward0": "self: grad / other; other: -grad * self / other**2",
    "NegBackward0": "self: -grad",
    "ReciprocalBackward0": "self: -grad * result**2",
    "PowBackward0": "self: grad * exponent * self**(exponent - 1)",
    "PowBackward1": "self: grad * other * self**(other - 1); other: grad * result * log(self)",
    "PowBackward2": "exponent: grad * result * log(base)",
    "AbsBackward0": "self: grad * sign(self)",
    "SignBackward0": "self: zeros (sign is flat almost everywhere)",
    "RoundBackward0": "self: zeros (round is flat almost everywhere)",
    "FloorBackward0": "self: zeros (floor is flat almost everywhere)",
    "CeilBackward0": "self: zeros (ceil is flat almost everywhere)",
    "TruncBackward0": "self: zeros (trunc is flat almost everywhere)",
    "MaximumBackward0": "self: grad where self > other (half on ties); other: the rest",
    "MinimumBackward0": "self: grad where self < other (half on ties); other: the rest",
    "ClampBackward1": "self: grad where min <= self <= max, else 0",
    "ClampMinBackward0": "self: grad where self >= min, else 0",
    "ClampMaxBackward0": "self: grad where self <= max, else 0",
    "WhereBackward0": "self: grad where condition, else 0; other: grad where not condition",
    # elementwise functions
    "ExpBackward0": "self: grad * result",
    "Exp2Backward0": "self: grad * result * log(2)",
    "Expm1Backward0": "self: grad * (result + 1)",
    "LogBackward0": "self: grad / self",
    "Log2Backward0": "self: grad / (self * log(2))",
    "Log10Backward0": "self: grad / (self * log(10))",
    "Log1PBackward0": "self: grad / (1 + self)",
    "SqrtBackward0": "self: grad / (2 * result)",
    "RsqrtBackward0": "self: -grad * result**3 / 2",
    "SinBackward0": "self: grad * cos(self)",
    "CosBackward0": "self: -grad * sin(self)",
    "TanBackward0": "self: grad * (1 + result**2)",
    "AsinBackward0": "self: grad / sqrt(1 - self**2)",
    "AcosBackward0": "self: -grad / sqrt(1 - self**2)",
    "AtanBackward0": "self: grad / (1 + self**2)",
    "SinhBackward0": "self: grad * cosh(self)",
    "CoshBackward0": "self: grad * sinh(self)",
    "TanhBackward0": "self: grad * (1 - result**2)",
    "SigmoidBackward0": "self: grad * result * (1 - result)",
    "ReluBackward0": "self: grad where result != 0 (a NaN result passes it), else 0",
    "GeluBackward0": "self: grad * (Phi(self) + self * phi(self))",
    "EluBackward0": "self: grad * scale where self > 0, else grad * scale * alpha * exp(self)",
    "CeluBackward0": "self: grad where self > 0, else grad * exp(self / alpha)",
    "MishBackward0": "self: grad * (t + self * sigmoid(self) * (1 - t**2)), t = tanh(softplus(self))",
    "ErfBackward0": "self: grad * 2 / sqrt(pi) * exp(-self**2)",
    # reductions
    "SumBackward0": "self: grad expanded to self's shape",
    "SumBackward1": "self: grad unsqueezed on the summed dims, expanded to self's shape",
    "MeanBackward0": "self: grad expanded to self's shape / numel",
    "MeanBackward1": "self: grad expanded over the reduced dims / their size",
    "ProdBackward0": "self: grad * result / self (products of the others where self == 0)",
    "ProdBackward1": "self: grad * result / self along dim (others' product where self == 0)",
    "CumsumBackward0": "self: reversed cumsum of grad along dim",
    "CumprodBackward0": "self: reversed cumsum of grad * result, divided by self",
    "AmaxBackward0": "self: grad shared evenly among the maximal entries",
    "AminBackward0": "self: grad shared evenly among the minimal entries",
    "MaxBackward0": "self: grad shared evenly among the maximal entries",
    "MaxBackward1": "self: grad to the index that held the max along dim",
    "MinBackward0": "self: grad shared evenly among the minimal entries",
    "MinBackward1": "self: grad to the index that held the min along dim",
    "MedianBackward0": "self: grad to the entry that is the median",
    "MedianBackward1": "self: grad to the index of the median along dim",
    "LogsumexpBackward0": "self: grad * exp(self - result)",
    "StdBackward0": "self: grad * (self - mean) / ((n - correction) * result)",
    "VarBackward0": "self: grad * 2 * (self - mean) / (n - correction)",
    "LinalgVectorNormBackward0": "self: grad * self * |self|**(ord - 2) / result**(ord - 1)",
    "_NormBackward": "self: grad * self * |self|**(p - 2) / result**(p - 1)",
    "SoftmaxBackward0": "self: result * (grad - sum(grad * result, dim))",
    "LogSoftmaxBackward0": "self: grad - exp(result) * sum(grad, dim)",
    # linear algebra
    "MmBackward0": "self: grad @ other.T; other: self.T @ grad",
    "BmmBackward0": "self: grad @ other.mT; other: self.mT @ grad",
    "MvBackward0": "self: outer(grad, vec); vec: self.T @ grad",
    "DotBackward0": "self: grad * other; other: grad * self",
    "MatmulBackward": "self: grad @ other.mT; other: self.mT @ grad",
    "BroadcastMatmulBackward": "self: grad @ other.mT summed over broadcast batch dims; "
                               "other: self.mT @ grad, summed likewise",
    "VectorMatmulBackward": "a 1-D operand: its grad is the matmul grad with the added dim "
                            "squeezed back",
    "TraceBackward0": "self: grad on the diagonal, zeros elsewhere",
    "AddmmBackward0": "self: beta * grad; mat1: alpha * grad @ mat2.T; mat2: alpha * mat1.T @ grad",
    "ConvolutionBackward0": "input: conv_transpose(grad, weight); weight: conv(input, grad); "
                            "bias: grad summed over batch and space",
    # shape and views
    "ViewBackward0": "self: grad.reshape(self's shape)",
    "ReshapeAliasBackward0": "self: grad.reshape(self's shape)",
    "UnsafeViewBackward0": "self: grad.reshape(self's shape)",
    "AliasBackward0": "self: grad",
    "CloneBackward0": "self: grad",
    "ToCopyBackward0": "self: grad cast back to self's dtype and device",
    "ExpandBackward0": "self: grad summed over the expanded dims",
    "RepeatBackward0": "self: grad summed over the repeats",
    "PermuteBackward0": "self: grad permuted back (inverse permutation)",
    "TransposeBackward0": "self: grad.transpose(dim0, dim1)",
    "TBackward0": "self: grad.T",
    "SqueezeBackward0": "self: grad.reshape(self's shape)",
    "SqueezeBackward1": "self: grad.unsqueeze(dim)",
    "SqueezeBackward2": "self: grad unsqueezed on the squeezed dims",
    "SqueezeBackward4": "self: grad unsqueezed on the squeezed dims",
    "UnsqueezeBackward0": "self: grad.squeeze(dim)",
    "FlipBackward0": "self: grad.flip(dims)",
    "RollBackward0": "self: grad rolled back by -shifts",
    "SliceBackward0": "self: zeros with grad written into the slice",
    "SelectBackward0": "self: zeros with grad written at the index",
    "IndexBackward0": "self: zeros with grad added at the indices (repeats add up)",
    "AsStridedBackward0": "base: zeros with grad written at the view's positions",
    "AsStridedStorageBackward": "self: grad added into zeros of the storage at the output's "
                                "positions, read back at self's",
    "CatBackward0": "each input: its slice of grad along dim",
    "StackBackward0": "each input: grad.select(dim, i)",
    "SplitBackward0": "self: the pieces' grads concatenated (zeros for unused pieces)",
    "SplitWithSizesBackward0": "self: the pieces' grads concatenated (zeros for unused pieces)",
    "UnbindBackward0": "self: the pieces' grads stacked along dim",
    # gather, scatter, masks
    "GatherBackward0": "self: zeros with grad added at index (scatter_add)",
    "ScatterBackward0": "self: grad with the scattered positions zeroed; src: grad.gather(index)",
    "ScatterBackward1": "self: grad with the scattered positions zeroed",
    "ScatterAddBackward0": "self: grad; src: grad.gather(index)",
    "IndexSelectBackward0": "self: zeros with grad added at index along dim",
    "IndexAddBackward0": "self: grad; source: alpha * grad.index_select(dim, index)",
    "MaskedFillBackward0": "self: grad where not mask, else 0",
    "MaskedFillBackward1": "self: grad where not mask; value: sum of grad where mask",
    "MaskedSelectBackward0": "self: zeros with grad written where mask",
    "EmbeddingBackward0": "weight: grad rows added into the looked-up rows",
    "MaxPool2DWithIndicesBackward0": "self: grad routed to the argmax of each window",
    # in-place and writes
    "CopySlices": "self: grad with the written region zeroed; src: grad of the region",
    "IndexPutBackward0": "self: grad with the written entries zeroed; values: grad at them",
    "_RegionWrite": "self: grad with the written region zeroed; value: grad of the region",
    "CopyBackwards": "self: zeros (overwritten); src: grad cast to src's dtype",
    "FillBackward2": "self: zeros (every entry overwritten)",
    "FillBackward3": "self: zeros (overwritten); value: sum(grad)",
    "ZeroBackward0": "self: zeros (every entry overwritten)",
    "NormalBackward0": "self: zeros (overwritten with random numbers)",
    "UniformBackward0": "self: zeros (overwritten with random numbers)",
    # losses and normalisation
    "MseLossBackward0": "self: grad * 2 * (self - target) / n (for mean); target: the negative",
    "BinaryCrossEntropyWithLogitsBackward0": "self: grad * (sigmoid(self) - target) * weight / n",
    "NllLossBackward0": "self: -grad * weight at the target class / total weight",
    "NllLoss2DBackward0": "self: -grad * weight at the target class per pixel / total weight",
    "NativeBatchNormBackward0": "input: (grad - mean(grad) - x_hat * mean(grad * x_hat)) "
                                "* weight / std; weight: sum(grad * x_hat); bias: sum(grad)",
    "NativeLayerNormBackward0": "input: (grad*w - mean(grad*w) - x_hat * mean(grad*w * x_hat))"
                                " / std; weight: sum(grad * x_hat); bias: sum(grad)",
    # special functions, linear algebra and writes added with the op library
    "Atan2Backward0": "self: grad * other / (self**2 + other**2); "
                      "other: -grad * self / (self**2 + other**2)",
    "BesselBackward": "self: grad * the Bessel function's derivative (recurrence in the order)",
    "CopysignBackward0": "self: grad * sign(self) * sign(result); other: zeros",
    "DiagonalBackward0": "self: zeros with grad written on the diagonal",
    "DiagonalScatterBackward0": "self: grad with the diagonal zeroed; src: grad's diagonal",
    "EinsumBackward": "each operand: einsum of grad with the other operands",
    "NextafterBackward0": "self: grad; other: zeros",
    "ScatterReduceBackward0": "prod: grad * result / factor (zeros: product of the others); "
                              "amax/amin: grad split evenly among the tied extremes",
    "SpecialLogNdtrBackward0": "self: grad / sqrt(2 pi) * exp(-(result + self**2 / 2))",
    "ErfcBackward0": "self: -grad * 2 / sqrt(pi) * exp(-self**2)",
    "ErfcxBackward0": "self: grad * (2 * self * result - 2 / sqrt(pi))",
    "ErfinvBackward0": "self: grad * sqrt(pi) / 2 * exp(result**2)",
    "FmodBackward0": "self: grad; other: -grad * trunc(self / other)",
    "FracBackward0": "self: grad",
    "InverseHyperbolicBackward": "self: grad / sqrt(self**2 + 1) (asinh), / sqrt(self**2 - 1) "
                                 "(acosh), / (1 - self**2) (atanh)",
    "LgammaBackward0": "self: grad * digamma(self)",
    "LinalgCholeskyExBackward0": "self: Phi(L^H grad) pushed through L^-H ... L^-1, symmetrised",
    "LinalgDetBackward0": "self: grad * result * inv(self).mT",
    "LinalgEighBackward0": "self: V (diag(gL) + F * (V^H gV)) V^H, F from eigenvalue gaps",
    "LinalgHouseholderProductBackward0": "input, tau: none (no reflectors: the identity)",
    "LinalgInvExBackward0": "self: -result.mT @ grad @ result.mT",
    "LinalgLuFactorExBackward0": "self: P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H "
                                 "(square; tall and wide split L or U)",
    "LinalgMatrixExpBackward0": "self: the matrix exp of the block [[A^H, grad], [0, A^H]]'s "
                                "upper-right block",
    "LinalgPinvBackward0": "self: -P^H grad P^H + (I - A P) grad^H P P^H + P^H P grad^H "
                           "(I - P A), P = result",
    "LinalgQrBackward0": "self: (gQ + Q copyltu(M)) R^-H, M = R gR^H - gQ^H Q",
    "LinalgSolveBackward0": "B: solve(A^H, grad); A: -solve(A^H, grad) @ result^H",
    "LinalgSvdBackward0": "self: U (gS-diagonal + F-weighted U^H gU, V^H gV terms) V^H",
    "LogaddexpBackward0": "self: grad * exp(self - result); other: grad * exp(other - result)",
    "LogcumsumexpBackward0": "self: reversed cumsum of grad * exp(-result), times exp(self)",
    "MakeDualBackward0": "primal: grad (the tangent carries no gradient)",
    "PolygammaBackward0": "self: grad * polygamma(n + 1, self)",
    "RegionScatterBackward": "self: grad with the region zeroed; src: grad of the region",
    "SincBackward0": "self: grad * (cos(pi x) - sinc(x)) / x (0 at x = 0)",
    "SlogdetBackward0": "self: grad_logabsdet * inv(self).mT (the sign has no gradient)",
    "SpecialEntrBackward0": "self: -grad * (log(self) + 1)",
    "ZeroGradBackward": "self: zeros (the op is flat)",
    # complex numbers (the gradient of z = x + iy is dL/dx + i dL/dy) and Fourier transforms
    "RealBackward0": "self: grad (as a complex number)",
    "ImagBackward0": "self: grad * 1j",
    "ViewAsRealBackward0": "self: view_as_complex(grad)",
    "ViewAsComplexBackward0": "self: view_as_real(grad)",
    "ComplexBackward0": "real: real(grad); imag: imag(grad)",
    "PolarBackward0": "abs: real(grad * conj(e^(i angle))); angle: real(grad * conj(1j * result))",
    "AngleBackward0": "self: grad * 1j * self / abs(self)**2 (0 for real inputs)",
    "SgnBackward0": "self: (grad - result * real(grad * conj(result))) / abs(self)",
    "ConjBackward0": "self: conj(grad)",
    "ConjPhysicalBackward0": "self: conj(grad)",
    "ResizeBackward": "self: grad trimmed or zero-padded back to the input's sizes",
    "FftC2CBackward0": "self: the DFT of grad with the opposite sign, same scale",
    "FftR2CBackward0": "self: real(inverse-sign DFT of grad zero-padded to full length)",
    "FftC2RBackward0": "self: rfft(grad), mirrored entries counted twice",
    "LinalgEigBackward0": "self: V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / "
                          "conj(E)) V^H, E = eigenvalue gaps",
    # engine and user code
    "AccumulateGrad": "adds grad into the leaf's .grad",
    "BackwardCFunction": "your Function's backward(ctx, grad)",
    "CheckpointFunctionBackward": "re-runs the forward, then backward through it",
    "DelayedError": "raises the error of an op that cannot be differentiated",
}


def rule_for(node_name: str, node_class: str | None = None) -> str:
    """The one-line rule of a node (by its class name, then the name it prints)."""
    if node_class is not None and node_class in RULES:
        return RULES[node_class]
    if node_name in RULES:
        return RULES[node_name]
    return "your Function's backward(ctx, grad)" if node_name.endswith("Backward") else "?"
