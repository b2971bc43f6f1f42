"""Indexing: ``t[...]`` (basic, advanced, boolean), ``t[...] = v``, gather/scatter,
index_select, masked_fill, nonzero."""

from __future__ import annotations

TENSOR_METHODS: dict = {}
