"""Internal errors: the traceback goes to a file, the user gets one line naming it.

A crash is a bug (in goldgate or in a user's plugin), not a verdict and not bad input: the
faces turn it into exit code 3 (``EXIT_INTERNAL``) and never print a traceback, which in a CI
log would bury the message and could carry untrusted text. The file is
``.goldgate/crash-<UTC time>-<pid>.txt`` in the current directory, or the system's temporary
directory when that cannot be written.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import tempfile
import traceback
from datetime import UTC, datetime
from pathlib import Path

from goldgate._version import __version__
from goldgate.errors import Terminated, describe_exception

EXIT_INTERNAL = 3
CRASH_DIR = ".goldgate"


def is_crash(exc: BaseException) -> bool:
    """Whether ``exc`` reaching a face is an internal error (exit 3).

    Everything is, but the ways out asked for: Ctrl-C, ``sys.exit`` and a stop signal
    (:class:`~goldgate.errors.Terminated`), and a generator being closed. A ``BaseException``
    that is none of them is a crash: pyo3 raises a Rust panic (a tokenizer's) as
    ``PanicException``, a ``BaseException`` so that ``except Exception`` lets it through.
    """
    return not isinstance(exc, KeyboardInterrupt | SystemExit | Terminated | GeneratorExit)


def save_traceback(exc: BaseException, *, directory: Path | None = None) -> Path | None:
    """Write ``exc``'s traceback to a new file; its path, or None when nothing was writable."""
    text = _report(exc)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    name = f"crash-{stamp}-{os.getpid()}"
    candidates = [directory if directory is not None else Path.cwd() / CRASH_DIR]
    candidates.append(Path(tempfile.gettempdir()))
    for folder in candidates:
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
            # mkstemp: a fresh name even for two crashes in one second, never a symlink followed
            descriptor, path = tempfile.mkstemp(prefix=f"{name}-", suffix=".txt", dir=folder)
            with os.fdopen(descriptor, "w", encoding="utf-8", errors="backslashreplace") as out:
                out.write(text)
            return Path(path)
    return None


def crash_message(exc: BaseException, saved: Path | None) -> str:
    """The one line a face prints for an internal error."""
    where = (
        f"the traceback is in {saved}"
        if saved is not None
        else "the traceback could not be saved (no writable directory)"
    )
    return (
        f"goldgate: internal error: {describe_exception(exc, limit=200)}; this is a bug"
        f" (in goldgate or a plugin): {where}"
    )


def _report(exc: BaseException) -> str:
    try:
        trace = "".join(traceback.format_exception(exc))
    except Exception as failed:  # str() of an exception in the chain may itself raise
        trace = f"(the traceback could not be formatted: {type(failed).__name__})\n"
        trace += "".join(traceback.format_tb(exc.__traceback__))
    return (
        f"goldgate {__version__} internal error\n"
        f"python {sys.version.split()[0]} on {platform.platform()}\n"
        f"argv: {sys.argv!r}\n"
        f"cwd: {os.getcwd()!r}\n\n{trace}"
    )
