"""In-place ops (``add_``, ``mul_``, ``zero_``, ...), guarded by version counters."""

from __future__ import annotations

TENSOR_METHODS: dict = {}
