"""Free heap pages go back to the operating system between a run's phases (glibc only)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from goldgate.memory import release_free_memory


def _resident() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_freed_heap_blocks_are_given_back() -> None:
    if not release_free_memory():
        pytest.skip("this C library has no malloc_trim")
    # Blocks below glibc's mmap threshold live in the heap; once freed, with a live block
    # above them, the heap cannot shrink from its top and the pages stay resident.
    blocks = [np.ones(12_000) for _ in range(2_500)]  # ~96 KB each, ~240 MB in all
    keep = np.ones(12_000)
    before = _resident()
    del blocks
    freed = _resident()
    release_free_memory()
    after = _resident()
    assert keep.sum() == 12_000
    assert before - after > (before - freed) + 100 * 2**20 // 4096  # >100 MB more given back
