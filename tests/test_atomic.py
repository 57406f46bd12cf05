"""Atomic writes: all or nothing, with the permissions a plain open would give."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from goldgate.io import atomic
from goldgate.io.atomic import write_text_atomic


def test_writes_and_replaces(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    write_text_atomic(path, "one\n")
    write_text_atomic(path, "two\n")
    assert path.read_text(encoding="utf-8") == "two\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]


def test_follows_the_umask_not_mkstemps_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "f", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "f").stat().st_mode) == 0o644


def test_interrupted_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f"
    write_text_atomic(path, "old")

    def crash(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        write_text_atomic(path, "new")
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_a_lock_held_too_long_is_an_error_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process (here: another open file description) holds the folder's lock."""
    import fcntl

    from goldgate.errors import GoldgateError

    monkeypatch.setattr(atomic, "LOCK_TIMEOUT_S", 0.2)
    holder = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        with pytest.raises(GoldgateError, match="another process has held goldgate's write lock"):
            write_text_atomic(tmp_path / "f", "x")
    finally:
        os.close(holder)
    assert not (tmp_path / "f").exists()
    write_text_atomic(tmp_path / "f", "x")  # released: the write goes through
    with atomic.locked(tmp_path), atomic.locked(tmp_path):  # re-entrant in one process
        write_text_atomic(tmp_path / "f", "y")
    assert (tmp_path / "f").read_text(encoding="utf-8") == "y"


# -- what is at the path and is not a regular file: written into or through, never replaced --


def test_a_fifo_is_written_into_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the write cannot block
    try:
        write_text_atomic(fifo, "through the pipe\n")
        assert os.read(reader, 100) == b"through the pipe\n"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_a_link_to_a_device_is_written_into_and_stays_a_link(tmp_path: Path) -> None:
    link = tmp_path / "null"
    link.symlink_to(os.devnull)
    write_text_atomic(link, "nothing\n")
    assert link.is_symlink() and os.readlink(link) == os.devnull
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_link_to_a_regular_file_is_written_through(tmp_path: Path) -> None:
    """``calibrate --write`` on a goldgate.yaml linked from a shared folder keeps the link."""
    (tmp_path / "shared").mkdir()
    target = tmp_path / "shared" / "goldgate.yaml"
    target.write_text("old\n")
    link = tmp_path / "goldgate.yaml"
    link.symlink_to(target)
    write_text_atomic(link, "new\n")
    assert link.is_symlink() and link.resolve() == target
    assert target.read_text() == "new\n"
    dangling = tmp_path / "later.txt"
    dangling.symlink_to(tmp_path / "shared" / "later.txt")
    write_text_atomic(dangling, "made\n")
    assert dangling.is_symlink() and (tmp_path / "shared" / "later.txt").read_text() == "made\n"


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_descriptors_link_like_dev_stdout_is_written_into_the_open_file(
    tmp_path: Path,
) -> None:
    """``report -o /dev/stdout > out.md``: the shell's open file gets the text, the link stays."""
    out = tmp_path / "out.md"
    with out.open("w") as handle:
        link = tmp_path / "stdout"
        link.symlink_to(f"/proc/self/fd/{handle.fileno()}")
        write_text_atomic(link, "the report\n")
        assert link.is_symlink()
    assert out.read_text() == "the report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.md", "stdout"]
