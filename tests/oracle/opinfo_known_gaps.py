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
    "linalg.norm.subgradients_at_zero": "second order: at a zero vector torch's second derivative of the norm is NaN, gradnb's safe denominators give a finite value",
    "sparse.sampled_addmm": "missing: its samples are sparse CSR tensors; gradnb has the sparse COO layout only",
    "sparse.mm.reduce": "missing: its samples are sparse CSR tensors (and torch.sparse.mm's reduce= works only on CSR); gradnb has the sparse COO layout only",
    "as_strided.partial_views": "harness: the sample is a view into a larger storage; the harness gives both libraries fresh leaves (torch itself then rejects storage offset 10) and gradnb a copy without the storage",
    "as_strided_scatter": "torch's gradient for input is wrong (g at the overwritten positions; its own op_db skips test_fn_grad and torch.autograd.gradcheck fails); gradnb keeps the true derivative",
    "max_pool2d_with_indices_backward": _ATEN_ONLY,
    "torch.ops.aten._safe_softmax.default": _ATEN_ONLY,
    "slice": "missing: op_db calls torch.ops.aten.slice.Tensor, an ATen operator with no public torch.slice; gradnb has no aten namespace (t[a:b:c] and narrow do the same)",
    "chalf": "missing: NumPy has no complex32 (half-precision complex), so gradnb offers no chalf",
    "native_dropout_backward": _ATEN_ONLY,
}

# Entries whose error_inputs gradnb does not all raise as torch does (type and message).
ERROR_GAPS = {
    "gradient": "unsupported argument: two error_inputs are meta tensors (no data to convert); the other six match",
    "clamp_max": "no error, torch raises Exception: ''",
    "clamp_min": "no error, torch raises Exception: ''",
    "aminmax": "message 'amin(): Expected reduction dim to be specified for input.numel() == 0....",
    "narrow_copy": "raises IndexError: Dimension out of range (expected to be in range of [-3, ...",
    "gather": "raises TypeError: gather() got an unexpected keyword argument 'out', torch Runti...",
    "amax": "unsupported argument: ValueError: number of dimensions must be within [0, 64]",
    "amin": "unsupported argument: ValueError: number of dimensions must be within [0, 64]",
}
