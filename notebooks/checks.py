"""The check cells of the tutorials: ``check(answer, expected)`` says whether an exercise is solved.

Tensors (gradnb's or PyTorch's) are compared by shape and value (``allclose``), numbers with a
small tolerance, everything else with ``==``. An exercise left at ``None`` is "not answered yet",
so every tutorial runs top to bottom before you have solved anything.
"""

from __future__ import annotations

import numpy as np


def _as_array(value):
    """A NumPy array for a tensor (on any device), or None for anything else."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        return np.asarray(value.detach().cpu().numpy())
    return None


def _matches(answer, expected, rtol: float, atol: float) -> bool:
    expected_array = _as_array(expected)
    if expected_array is not None:
        answer_array = _as_array(answer)
        if answer_array is None:
            answer_array = np.asarray(answer, dtype=expected_array.dtype)
        return (answer_array.shape == expected_array.shape
                and bool(np.allclose(answer_array, expected_array, rtol=rtol, atol=atol)))
    if isinstance(expected, bool) or not isinstance(expected, (int, float)):
        return answer == expected
    try:
        return bool(np.isclose(float(answer), expected, rtol=rtol, atol=atol))
    except (TypeError, ValueError):
        return False


def check(answer, expected, hint: str = "", rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Print ``Correct!`` if ``answer`` matches ``expected``, else what is wrong and ``hint``.

    >>> check(None, 42, hint="d(loss)/dx = 2*y*w")
    Not answered yet. Hint: d(loss)/dx = 2*y*w
    >>> check(42.0, 42)
    Correct!
    """
    if answer is None:
        print("Not answered yet." + (f" Hint: {hint}" if hint else ""))
    elif _matches(answer, expected, rtol, atol):
        print("Correct!")
    else:
        print(f"Not quite: your answer is {answer!r}." + (f" Hint: {hint}" if hint else ""))
