"""The code fingerprint: every uncommitted change counts, and no change can hang or fill memory.

``tests/test_workflows.py`` holds the same through ``goldgate run`` (a resume refused).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest

from goldgate.systems import fingerprint
from goldgate.systems.fingerprint import code_fingerprint, fingerprint_change


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        capture_output=True,
        check=True,
        timeout=60,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git work tree with one committed file, ``answer.py``."""
    (tmp_path / "answer.py").write_text("print('a')\n")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "code")
    return tmp_path


def test_a_second_edit_of_a_dirty_file_changes_the_fingerprint(repo: Path) -> None:
    script = repo / "answer.py"
    script.write_text("print('b')\n")
    once = code_fingerprint(repo)
    assert once["paths"] == ["answer.py"]
    script.write_text("print('c')\n")  # the same file, still dirty, other contents
    twice = code_fingerprint(repo)
    assert twice["paths"] == once["paths"] and twice["worktree"] != once["worktree"]
    assert fingerprint_change(once, twice) == "uncommitted changes differ (answer.py)"
    assert code_fingerprint(repo) == twice  # and nothing else moves it


def test_a_new_untracked_file_changes_the_fingerprint(repo: Path) -> None:
    before = code_fingerprint(repo)
    (repo / "helpers").mkdir()
    (repo / "helpers" / "prompt.py").write_text("PROMPT = 'x'\n")
    after = code_fingerprint(repo)
    assert after["worktree"] != before["worktree"]
    assert fingerprint_change(before, after) == "uncommitted changes differ (helpers/prompt.py)"
    # Its contents count too, not only its name.
    (repo / "helpers" / "prompt.py").write_text("PROMPT = 'y'\n")
    assert code_fingerprint(repo)["worktree"] != after["worktree"]


def test_an_untracked_link_to_dev_zero_is_not_read(repo: Path) -> None:
    # Read whole, /dev/zero fills memory; a fresh process, with its memory capped, says so
    # quickly instead of taking the machine with it.
    (repo / "zero").symlink_to("/dev/zero")
    code = textwrap.dedent(
        f"""
        import resource
        from pathlib import Path
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from goldgate.systems.fingerprint import code_fingerprint
        print(code_fingerprint(Path({str(repo)!r}))["paths"])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['zero']"


def test_a_link_to_a_regular_file_is_hashed_by_its_contents(repo: Path) -> None:
    outside = repo.parent / f"{repo.name}-outside.py"
    outside.write_text("x = 1\n")
    (repo / "linked.py").symlink_to(outside)
    before = code_fingerprint(repo)
    outside.write_text("x = 2\n")
    assert code_fingerprint(repo)["worktree"] != before["worktree"]


def test_a_large_untracked_file_is_hashed_in_blocks(repo: Path) -> None:
    size = 64 << 20
    with open(repo / "weights.bin", "wb") as handle:
        handle.truncate(size)  # sparse: nothing written, 64 MiB of zeros to read
    tracemalloc.start()
    try:
        code_fingerprint(repo)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak:,} bytes held while hashing a {size:,}-byte file"


def test_what_cannot_be_read_is_marked_never_waited_on(repo: Path) -> None:
    os.mkfifo(repo / "pipe")
    # git lists no FIFO: ask for one as if it did (a status raced by a file turned FIFO).
    assert fingerprint._content_digest(repo / "pipe").endswith(
        b"a FIFO (named pipe); goldgate reads only regular files"
    )
    assert fingerprint._content_digest(repo / "gone") == b"deleted"
    (repo / "sub").mkdir()
    assert b"is a directory" in fingerprint._content_digest(repo / "sub")
