"""Op families, one module each; every forward function sits beside its derivative node.

Adding an op touches its family module and its test file, nothing else:

1. the node class, named as PyTorch names it, with ``saves`` (what backward reads) and
   ``backward(self, g)`` written with operators and ``dual`` helpers (so it runs on arrays and,
   under ``create_graph=True``, on tensors: double backward for free);
2. the function: compute on raw arrays, then ``return record(Node, (input,), out)``
   (``gradnb._core.record``), which decides whether to record, links and saves;
3. its name in the module's ``__all__`` (``gradnb`` star-imports it) and, for a Tensor method,
   in ``TENSOR_METHODS``.

See ``linalg.trace`` for a small complete example.
"""
