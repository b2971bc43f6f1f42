"""Tensor layouts (``gradnb.strided``, ``gradnb.sparse_coo``), printed as PyTorch prints its own."""

from __future__ import annotations

from ._memory_format import NamedTag

__all__ = ["layout", "sparse_coo", "sparse_csr", "strided"]


class layout(NamedTag):
    """A layout tag: ``Tensor.layout`` is ``gradnb.strided``, a sparse tensor's ``gradnb.sparse_coo``."""

    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")  # named for PyTorch code's comparisons; gradnb has no CSR
