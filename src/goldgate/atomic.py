"""Atomic file writes: an interrupted write never leaves a damaged file behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Any


def _umask() -> int:
    # os.umask can only be read by setting it; restore it at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomic(path: Path, text: str, *, newline: str | None = "") -> None:
    """Write through a temporary file beside ``path``, fsync, ``os.replace``, fsync the folder.

    The file gets the permissions a plain ``open`` would give it (mkstemp's are 0600).
    """
    _write_atomic(path, text, newline)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """:func:`write_text_atomic` for bytes."""
    _write_atomic(path, data, None)


def _write_atomic(path: Path, content: str | bytes, newline: str | None) -> None:
    directory = path.parent
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        stream: IO[Any]
        if isinstance(content, bytes):
            stream = os.fdopen(descriptor, "wb")
        else:
            stream = os.fdopen(descriptor, "w", encoding="utf-8", newline=newline)
        with stream:
            written: Any = content  # the mode above matches the content's type
            stream.write(written)
            stream.flush()
            os.fchmod(stream.fileno(), 0o666 & ~_umask())
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable; not possible on every platform, so best effort.
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
