"""Atomic writes: all or nothing, with the permissions a plain open would give."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from goldgate import atomic
from goldgate.atomic import write_text_atomic


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
