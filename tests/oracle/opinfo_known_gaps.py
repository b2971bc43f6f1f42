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
    "cholesky_inverse": "error: the OpInfo's wrapper calls torch.diag_embed on gradnb's output",
    "diagonal_copy": "missing: gradnb has no diagonal_copy",
    "sparse.sampled_addmm": "missing: sparse tensors have no autograd in gradnb",
    "sparse.mm.reduce": "missing: sparse tensors have no autograd in gradnb",
    "gradient": "missing: gradnb has no gradient",
    "as_strided": "missing: gradnb has no as_strided",
    "as_strided.partial_views": "missing: gradnb has no as_strided",
    "as_strided_copy": "missing: gradnb has no as_strided_copy",
    "as_strided_scatter": "missing: gradnb has no as_strided_scatter",
    "nn.functional.conv_transpose1d": "error: backward raises RuntimeError: double backward thr...",
    "nn.functional.conv_transpose2d": "error: backward raises RuntimeError: double backward thr...",
    "nn.functional.conv_transpose3d": "error: backward raises RuntimeError: double backward thr...",
    "nn.functional.conv1d": "error: backward raises RuntimeError: double backward through Convo...",
    "nn.functional.conv2d": "error: backward raises RuntimeError: double backward through Convo...",
    "nn.functional.conv3d": "error: backward raises RuntimeError: double backward through Convo...",
    "nn.functional.max_pool1d": "error: backward raises RuntimeError: double backward through M...",
    "nn.functional.max_pool2d": "error: backward raises RuntimeError: double backward through M...",
    "max_pool2d_with_indices_backward": _ATEN_ONLY,
    "nn.functional.max_pool3d": "error: backward raises RuntimeError: double backward through M...",
    "nn.functional.elu": "second order: second-order gradient: at (0,) torch -0.0, gradnb -3.87...",
    "nn.functional.celu": "second order: second-order gradient: at (0,) torch -0.0, gradnb -6.0...",
    "nn.functional.selu": "second order: second-order gradient: at (0,) torch -0.0, gradnb -8.5...",
    "torch.ops.aten._safe_softmax.default": _ATEN_ONLY,
    "nn.functional.scaled_dot_product_attention": "partial: forward: at (0, 0, 0) torch -8.5209...",
    "nn.functional.mish": "second order: second-order gradient: at (30,) torch nan, gradnb 0.0",
    "nextafter": "missing: gradnb has no nextafter",
    "nn.functional.batch_norm": "partial: forward raises ValueError: expected 2D or 3D input (g...",
    "mode": "missing: gradnb has no mode",
    "sinc": "second order: second-order gradient: at (0,) torch nan, gradnb 0.0",
    "slice": "missing: gradnb has no slice",
    "gather": "partial: forward raises RuntimeError: Index tensor must have the same number of ...",
    "index_reduce.mean": "missing: gradnb has no index_reduce",
    "index_reduce.prod": "missing: gradnb has no index_reduce",
    "index_reduce.amin": "missing: gradnb has no index_reduce",
    "index_reduce.amax": "missing: gradnb has no index_reduce",
    "put": "missing: gradnb has no put",
    "bfloat16": "missing: NumPy has no bfloat16",
    "chalf": "missing: NumPy has no complex32 (half-precision complex), so gradnb offers no chalf",
    "to_sparse": "missing: sparse tensors have no autograd in gradnb",
    "logcumsumexp": "second order: the log-space rule's own derivative meets -inf - -inf (first order passes)",
    "digamma": "partial: gradient: at (96,) torch -3.895053597904997e+32, gradnb -inf",
    "native_dropout_backward": _ATEN_ONLY,
    "nn.functional.embedding": "error: backward raises RuntimeError: double backward through Em...",
    "scatter_reduce.prod": "error: scatter_reduce(reduce='prod') not written yet",
    "scatter_reduce.amin": "error: scatter_reduce(reduce='amin') not written yet",
    "scatter_reduce.amax": "error: scatter_reduce(reduce='amax') not written yet",
    "linalg.norm.subgradients_at_zero": "partial: forward raises RuntimeWarning: divide by zero...",
    "special.log_ndtr": "partial: gradient: at (60,) torch -1377674.349209682, gradnb -1371992....",
    "special.erfcx": "second order: second-order gradient: at (90,) torch -4.5401605787553646e-...",
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
