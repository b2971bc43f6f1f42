"""Cross-checking a system's numbers against the NumPy limit's."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CheckResult:
    """Outcome of comparing one system's results with the reference."""

    ok: bool
    worst_error: float  # largest relative error over all compared arrays
    worst_key: str
    problem: str = ""  # set when a key or shape is missing or wrong

    def describe(self) -> str:
        """Short text for a table cell."""
        if self.problem:
            return f"**WRONG**: {self.problem}"
        verdict = "ok" if self.ok else "**WRONG**"
        return f"{verdict} (max rel err {self.worst_error:.1e} in {self.worst_key})"


def relative_error(candidate: np.ndarray, reference: np.ndarray) -> float:
    """max |candidate - reference| over max |reference| (absolute when the reference is 0)."""
    scale = float(np.max(np.abs(reference), initial=0.0)) or 1.0
    return float(np.max(np.abs(candidate - reference), initial=0.0)) / scale


def compare(
    candidate: dict[str, np.ndarray], reference: dict[str, np.ndarray], tolerance: float
) -> CheckResult:
    """Compare every array of ``reference`` with the same key in ``candidate``.

    Errors are relative to each array's largest magnitude, so summation order (BLAS
    blocking, pairwise sums) stays well inside ``tolerance`` while a wrong formula,
    a missing factor or a transposed gradient does not. NaN anywhere fails.
    """
    worst, worst_key = 0.0, ""
    for key, expected in reference.items():
        if key not in candidate:
            return CheckResult(False, np.inf, key, f"no `{key}` returned")
        actual = np.asarray(candidate[key], dtype=np.float64)
        if actual.shape != np.shape(expected):
            return CheckResult(
                False, np.inf, key, f"`{key}` has shape {actual.shape}, expected {expected.shape}"
            )
        error = relative_error(actual, np.asarray(expected, dtype=np.float64))
        if not np.isfinite(error):
            error = np.inf
        if error >= worst:
            worst, worst_key = error, key
    return CheckResult(worst <= tolerance, worst, worst_key)
