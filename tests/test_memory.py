"""Free heap pages go back to the operating system between a run's phases (glibc only)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from goldgate.execution import memory
from goldgate.execution.memory import release_free_memory


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


ARENAS = """\
import ctypes, sys, threading
from goldgate.execution.memory import one_heap_arena
if sys.argv[1] == "one":
    assert one_heap_arena()
def allocate():
    blocks = [bytearray(200) for _ in range(10_000)]
thread = threading.Thread(target=allocate)
thread.start()
thread.join()
ctypes.CDLL(None).malloc_stats()  # one "Arena N:" line per arena, on stderr
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
@pytest.mark.parametrize(("how", "arenas"), [("one", 1), ("default", 2)])
def test_threads_share_one_heap_arena_when_asked(how: str, arenas: int) -> None:
    # asked of the C library without calling it: this process keeps its own arenas
    if memory._libc_function("mallopt") is None:
        pytest.skip("this C library has no mallopt")
    done = subprocess.run(
        [sys.executable, "-c", ARENAS, how], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stderr.count("Arena ") == arenas, done.stderr


def test_the_bootstrapping_commands_ask_for_one_arena(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldgate.cli import main as cli

    asked: list[str] = []
    monkeypatch.setattr(memory, "one_heap_arena", lambda: asked.append("arena") or True)
    missing = str(tmp_path / "missing.yaml")
    assert cli.main(["check", "--config", missing]) == 2  # no gate, no threads: not asked
    assert asked == []
    assert cli.main(["run", "--config", missing]) == 2  # asked before the command runs
    assert asked == ["arena"]
