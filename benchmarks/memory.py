"""Process memory probes: resident set size now, and its peak since the last reset."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import re
import resource
from pathlib import Path
from typing import Self

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_kib(field: str) -> int | None:
    try:
        match = re.search(rf"^{field}:\s+(\d+) kB", _STATUS.read_text(), re.MULTILINE)
    except OSError:
        return None
    return int(match.group(1)) if match else None


def current_rss() -> int:
    """Resident set size in bytes (Linux ``VmRSS``; 0 where unavailable)."""
    return (_status_kib("VmRSS") or 0) * 1024


def return_free_heap() -> bool:
    """Ask glibc to give freed heap pages back to the OS (``malloc_trim(0)``).

    Without it, memory a library has freed can stay resident, and RSS would count it as
    still held. False where the C library has no ``malloc_trim`` (not glibc).
    """
    libc = _libc()
    if libc is None or not hasattr(libc, "malloc_trim"):
        return False
    libc.malloc_trim(0)
    return True


@functools.cache
def _libc() -> ctypes.CDLL | None:
    # loaded once: each CDLL builds a class, i.e. cyclic garbage the GC count would see
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark (``VmHWM``); False where the kernel does not allow it."""
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def peak_rss() -> int:
    """Peak resident set size in bytes since start or the last successful reset."""
    peak = _status_kib("VmHWM")
    if peak is None:  # not Linux: ru_maxrss is KiB on Linux, bytes on macOS
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak * 1024


class PeakRss:
    """Context manager measuring the peak RSS growth of its block.

    ``growth`` is the peak during the block minus the RSS at entry; ``exact`` says
    whether the peak mark could be reset at entry (otherwise an earlier, higher peak
    may hide the block's own).
    """

    def __enter__(self) -> Self:
        self.exact = reset_peak_rss()
        self.start = current_rss()
        self.growth = 0
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.growth = max(peak_rss() - self.start, 0)
