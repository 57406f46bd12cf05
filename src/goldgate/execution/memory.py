"""Give the C allocator's free memory back to the operating system between a run's phases,
and keep the gate's threads in one heap.

glibc's malloc keeps freed blocks of a few MB (NumPy's temporaries, a golden file's text)
inside its heap for reuse, so a process's resident memory after one phase stays at that
phase's peak: at a million examples the phases of a run (reading, scoring, gating, writing)
would each start from the previous one's high-water mark. ``malloc_trim(0)`` returns every
whole free page, in the middle of the heap too; Dask's workers do the same for the same reason.
Elsewhere (macOS, musl) there is no such call and nothing is done.

glibc also gives every thread that allocates its own heap arena. With ``--jobs 2`` the gate
bootstraps the suite and a slice in two threads, and each arena holds its own free blocks at
its own high-water mark: at a million examples one arena for the whole process peaks 20 MiB
lower in the gate, no slower (the threads allocate large arrays, which are mapped, not carved
from the arena). The command line asks for that (:func:`one_heap_arena`); the library, which
may live in someone else's process, does not.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable

#: mallopt's parameter for the most arenas (glibc's malloc.h)
_M_ARENA_MAX = -8


@functools.cache
def _libc_function(name: str) -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        function: Callable[..., int] = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):  # a libc without it (musl)
        return None
    return function


def release_free_memory() -> bool:
    """Return free heap pages to the OS; whether the C library could be asked to."""
    trim = _libc_function("malloc_trim")
    if trim is None:
        return False
    trim(0)
    return True


def one_heap_arena() -> bool:
    """Have every thread of this process allocate from glibc's main arena (call it before
    threads start); whether the C library agreed."""
    mallopt = _libc_function("mallopt")
    return mallopt is not None and mallopt(_M_ARENA_MAX, 1) == 1
