"""Tensor layouts (``gradnb.strided``, ``gradnb.sparse_coo``), printed as PyTorch prints its own."""

from __future__ import annotations

__all__ = ["layout", "sparse_coo", "sparse_csr", "strided"]


class layout:
    """A layout tag: ``Tensor.layout`` is ``gradnb.strided``, a sparse tensor's ``gradnb.sparse_coo``."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"gradnb.{self._name}"

    def __reduce__(self):
        return self._name  # a module-level singleton: pickles by name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")  # named for PyTorch code's comparisons; gradnb has no CSR
