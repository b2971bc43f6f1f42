"""op_db entries gradnb does not pass yet, each with its reason. This list only shrinks.

``test_opinfo.py`` expects every entry not listed here to pass (forward, gradients and, where
the OpInfo supports it, second order, on every sample) and every listed one to still fail: an
entry that starts passing must be removed from here.
"""

# torch exposes these ops only through its dispatcher (``torch.ops.aten.X.default``).
_ATEN_ONLY = ("out of scope: torch has this op only in its dispatcher namespace torch.ops.aten "
              "(no torch.X or torch.nn.functional.X name); gradnb offers torch's public names "
              "only and gradnb.ops is its own op package, so it has no aten registry")

# Entry -> why it fails (the first failing sample's finding).
KNOWN_GAPS = {
    "norm.nuc": "error: norm(p='nuc') needs the SVD from a higher op family (an import circle); use linalg.matrix_norm",
    "cholesky_inverse": "error: the OpInfo's wrapper calls torch.diag_embed on gradnb's output",
    "diagonal_copy": "missing: gradnb has no diagonal_copy",
    "sparse.sampled_addmm": "missing: sparse tensors have no autograd in gradnb",
    "sparse.mm.reduce": "missing: sparse tensors have no autograd in gradnb",
    "gradient": "missing: gradnb has no gradient",
    "lu_unpack": "missing: no LU/Householder factorizations (NumPy has none; needs its own kernel)",
    "lu": "missing: no LU/Householder factorizations (NumPy has none; needs its own kernel)",
    "lu_solve": "missing: no LU/Householder factorizations (NumPy has none; needs its own kernel)",
    "as_strided": "missing: gradnb has no as_strided",
    "as_strided.partial_views": "missing: gradnb has no as_strided",
    "as_strided_copy": "missing: gradnb has no as_strided_copy",
    "as_strided_scatter": "missing: gradnb has no as_strided_scatter",
    "max_pool2d_with_indices_backward": _ATEN_ONLY,
    "torch.ops.aten._safe_softmax.default": _ATEN_ONLY,
    "nextafter": "missing: gradnb has no nextafter",
    "mode": "missing: gradnb has no mode",
    "ormqr": "missing: no LU/Householder factorizations (NumPy has none; needs its own kernel)",
    "qr": "partial: the derivative of qr for wide matrices (rows < columns) is not written yet",
    "slice": "missing: gradnb has no slice",
    "svd_lowrank": "missing: gradnb has no svd_lowrank",
    "pca_lowrank": "missing: gradnb has no pca_lowrank",
    "gather": "partial: forward raises RuntimeError: Index tensor must have the same number of ...",
    "index_reduce.mean": "missing: gradnb has no index_reduce",
    "index_reduce.prod": "missing: gradnb has no index_reduce",
    "index_reduce.amin": "missing: gradnb has no index_reduce",
    "index_reduce.amax": "missing: gradnb has no index_reduce",
    "put": "missing: gradnb has no put",
    "bfloat16": "missing: NumPy has no bfloat16",
    "chalf": "missing: NumPy has no complex32 (half-precision complex), so gradnb offers no chalf",
    "to_sparse": "missing: sparse tensors have no autograd in gradnb",
    "digamma": "partial: gradient: at (96,) torch -3.895053597904997e+32, gradnb -inf",
    "native_dropout_backward": _ATEN_ONLY,
    "scatter_reduce.prod": "error: scatter_reduce(reduce='prod') not written yet",
    "scatter_reduce.amin": "error: scatter_reduce(reduce='amin') not written yet",
    "scatter_reduce.amax": "error: scatter_reduce(reduce='amax') not written yet",
    "linalg.householder_product": "missing: no LU/Householder factorizations (NumPy has none; needs its own kernel)",
    "linalg.lstsq": "partial: residuals/rank follow the driver's rules, which gradnb does not model",
    "linalg.lstsq.grad_oriented": "partial: residuals/rank follow the driver's rules, which gradnb does not model",
    "linalg.norm.subgradients_at_zero": "partial: forward raises RuntimeWarning: divide by zero...",
    "linalg.qr": "partial: the derivative of qr for wide matrices (rows < columns) is not written yet",
    "linalg.lu_factor": "missing: no LU/Householder factorizations (NumPy has none; needs its own kernel)",
    "linalg.lu_factor_ex": "missing: no LU/Householder factorizations (NumPy has none; needs its own kernel)",
    "linalg.lu": "missing: no LU/Householder factorizations (NumPy has none; needs its own kernel)",
    "linalg.lu_solve": "missing: no LU/Householder factorizations (NumPy has none; needs its own kernel)",
    "linalg.pinv.singular": "partial: pinv through the SVD differs from torch's rank-deficient pinv derivative",
    "special.log_ndtr": "partial: gradient: at (60,) torch -1377674.349209682, gradnb -1371992....",
    "masked.sum": "missing: gradnb has no torch.masked reductions",
    "masked.prod": "missing: gradnb has no torch.masked reductions",
    "masked.cumsum": "missing: gradnb has no torch.masked reductions",
    "masked.cumprod": "missing: gradnb has no torch.masked reductions",
    "masked.amax": "missing: gradnb has no torch.masked reductions",
    "masked.amin": "missing: gradnb has no torch.masked reductions",
    "masked.mean": "missing: gradnb has no torch.masked reductions",
    "masked.median": "missing: gradnb has no torch.masked reductions",
    "masked.norm": "missing: gradnb has no torch.masked reductions",
    "masked.var": "missing: gradnb has no torch.masked reductions",
    "masked.std": "missing: gradnb has no torch.masked reductions",
    "masked.softmax": "missing: gradnb has no torch.masked reductions",
    "masked.log_softmax": "missing: gradnb has no torch.masked reductions",
    "masked.softmin": "missing: gradnb has no torch.masked reductions",
    "masked.normalize": "missing: gradnb has no torch.masked reductions",
    "masked.logaddexp": "missing: gradnb has no torch.masked reductions",
    "masked.logsumexp": "missing: gradnb has no torch.masked reductions",
}

# Entries whose error_inputs gradnb does not all raise as torch does (type and message).
ERROR_GAPS = {
    "clamp_max": "no error, torch raises Exception: ''",
    "clamp_min": "no error, torch raises Exception: ''",
    "aminmax": "message 'amin(): Expected reduction dim to be specified for input.numel() == 0....",
    "narrow_copy": "raises IndexError: Dimension out of range (expected to be in range of [-3, ...",
    "gather": "raises TypeError: gather() got an unexpected keyword argument 'out', torch Runti...",
    "amax": "unsupported argument: ValueError: number of dimensions must be within [0, 64]",
    "amin": "unsupported argument: ValueError: number of dimensions must be within [0, 64]",
}
