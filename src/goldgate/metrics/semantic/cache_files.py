"""Opening the semantic metrics' cache files for writing, never through a link or into a FIFO.

A cache directory may hold what someone planted: a symbolic link at a cache file's path
(to ``~/.bashrc``, say) must not be written through, and a FIFO must not hang the open.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def open_cache_file(path: Path, flags: int, mode: int) -> int:
    """A descriptor on the regular file ``path`` (created if missing) opened with ``flags``.

    ``OSError`` saying why when ``path`` is a symbolic link or not a regular file.
    """
    # O_NOFOLLOW: a link at the path is refused, not followed; O_NONBLOCK: opening a FIFO
    # cannot wait for a reader.
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(
                f"{path} is a symbolic link; goldgate does not write through it"
            ) from None
        if exc.errno == errno.ENXIO:
            raise OSError(f"{path} is a FIFO, not a regular file") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd
