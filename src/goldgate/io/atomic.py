"""Atomic, serialised file writes: an interrupted write never leaves a damaged file behind,
and two goldgate processes never lose each other's update.

Writers of files in one directory take an exclusive ``flock`` on the directory itself (no lock
file to commit or ignore), held from the temporary file's creation to its rename. So while a
writer holds the lock, any ``.<name>.*.tmp`` beside the file is the leftover of a writer that
was killed (``kill -9``, a power cut) and is removed. A read-modify-write (``bless`` of one
suite) holds the same lock around the read and the write: :func:`locked` is re-entrant within
a process.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from goldgate.errors import GoldgateError

#: Every hold of the lock is short (one read-modify-write, one file): a wait this long means
#: the holder hangs, and a gate must not wait forever.
LOCK_TIMEOUT_S = 120.0
LOCK_POLL_S = 0.02


class _DirectoryLock:
    def __init__(self) -> None:
        self.thread_lock = threading.RLock()
        self.depth = 0
        self.descriptor: int | None = None


_locks: dict[str, _DirectoryLock] = {}
_locks_guard = threading.Lock()


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Hold the exclusive lock of ``directory`` (created if missing) across processes.

    Re-entrant in one process; threads of the process take turns. Where the file system
    cannot lock (some network mounts), writes are still atomic but not serialised.
    """
    key = os.path.realpath(directory)
    with _locks_guard:
        lock = _locks.setdefault(key, _DirectoryLock())
    with lock.thread_lock:
        if lock.depth == 0:
            lock.descriptor = _acquire(Path(key))
        lock.depth += 1
        try:
            yield
        finally:
            lock.depth -= 1
            if lock.depth == 0 and lock.descriptor is not None:
                os.close(lock.descriptor)  # closing the descriptor releases the flock
                lock.descriptor = None


def _acquire(directory: Path) -> int | None:
    if sys.platform == "win32":  # pragma: no cover - no flock: atomic, not serialised
        return None
    import fcntl

    try:
        directory.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:  # no such folder can be made or read: the write itself will say why
        return None
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return descriptor
        except BlockingIOError:
            if time.monotonic() < deadline:
                time.sleep(LOCK_POLL_S)
                continue
            os.close(descriptor)
            raise GoldgateError(
                f"{directory}: another process has held goldgate's write lock on this folder"
                f" for {LOCK_TIMEOUT_S:g} s (a goldgate that hangs or was stopped with"
                " Ctrl-Z?); nothing was written"
            ) from None
        except OSError:  # a file system without flock: atomic, not serialised
            os.close(descriptor)
            return None


def _umask() -> int:
    # os.umask can only be read by setting it; restore it at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomic(path: Path, text: str, *, newline: str | None = "") -> None:
    """Write through a temporary file beside ``path``, fsync, ``os.replace``, fsync the folder.

    The file gets the permissions a plain ``open`` would give it (mkstemp's are 0600). The
    directory's lock is held throughout, and stale temporaries of ``path`` are removed first.
    A symbolic link is written through to its file; a device, a FIFO or ``/dev/stdout`` is
    written into directly (see :func:`_rename_destination`): never renamed over.
    """
    _write_atomic(path, text, newline)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """:func:`write_text_atomic` for bytes."""
    _write_atomic(path, data, None)


def _write_atomic(path: Path, content: str | bytes, newline: str | None) -> None:
    destination = _rename_destination(path)
    if destination is None:
        _write_directly(path, content, newline)
        return
    path = destination
    directory = path.parent
    with locked(directory):
        remove_stale_temporaries(path)
        descriptor, temporary = tempfile.mkstemp(
            dir=directory, prefix=f".{path.name}.", suffix=".tmp"
        )
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


#: links followed at most while looking for a descriptor's link (the kernel stops at 40)
_MAX_LINKS = 40


def _rename_destination(path: Path) -> Path | None:
    """The file an atomic write of ``path`` replaces, or None to write into ``path`` directly.

    Only a regular file (or a name not taken yet) is replaced by a rename. A symbolic link the
    user keeps (a configuration shared between checkouts) is written through: its target is
    replaced and the link stays. A device, a FIFO or a descriptor's link (``/dev/stdout`` →
    ``/proc/self/fd/1``, whatever it leads to) is written into, as ``open`` would: renaming
    over it would replace ``/dev/full`` with a file as root, or the link with a copy.
    """
    try:
        info = os.lstat(path)
    except OSError:  # not there yet (or unreadable: the write itself will say why)
        return path
    if stat.S_ISREG(info.st_mode):
        return path
    if not stat.S_ISLNK(info.st_mode) or _descriptor_link(path):
        return None
    try:
        final = os.stat(path)
    except FileNotFoundError:  # a dangling link: the file it names is created, as open would
        return Path(os.path.realpath(path))
    except OSError:
        return None
    return Path(os.path.realpath(path)) if stat.S_ISREG(final.st_mode) else None


def _descriptor_link(path: Path) -> bool:
    """Whether ``path`` resolves through ``/proc`` (``/dev/stdout``, ``/dev/fd/N``).

    Such a link names an open descriptor, not a file to replace: ``report -o /dev/stdout >>
    log`` must write into the shell's descriptor, not rename a new file over ``log``.
    """
    current = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        if os.path.realpath(os.path.dirname(current)).startswith("/proc/"):
            return True
        try:
            link = os.readlink(current)
        except OSError:  # not a link: the chain ended outside /proc
            return False
        current = os.path.join(os.path.dirname(current), link)
    return False


def _write_directly(path: Path, content: str | bytes, newline: str | None) -> None:
    """Write into what ``path`` names (a device, a FIFO, a descriptor): no temporary, no rename."""
    if isinstance(content, bytes):
        with open(path, "wb") as binary:
            binary.write(content)
    else:
        with open(path, "w", encoding="utf-8", newline=newline) as text:
            text.write(content)


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Remove the ``.<name>.*.tmp`` files that killed writers of ``path`` left; call locked.

    Every writer holds the directory's lock while its temporary exists, so under the lock
    none of them belongs to a live writer.
    """
    removed = []
    for candidate in path.parent.glob(f".{_glob_escape(path.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            candidate.unlink()
            removed.append(candidate)
    return removed


def _glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


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
