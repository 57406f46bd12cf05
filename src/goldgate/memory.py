"""Give the C allocator's free memory back to the operating system between a run's phases.

glibc's malloc keeps freed blocks of a few MB (NumPy's temporaries, a golden file's text)
inside its heap for reuse, so a process's resident memory after one phase stays at that
phase's peak: at a million examples the phases of a run (reading, scoring, gating, writing)
would each start from the previous one's high-water mark. ``malloc_trim(0)`` returns every
whole free page, in the middle of the heap too; Dask's workers do the same for the same reason.
Elsewhere (macOS, musl) there is no such call and nothing is done.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # a libc without it (musl)
        return None
    return trim


def release_free_memory() -> bool:
    """Return free heap pages to the OS; whether the C library could be asked to."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
