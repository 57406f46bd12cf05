"""Forked ``goldgate bless`` processes for the baseline fault-injection tests.

``os.fork`` from the test process, where goldgate is imported already: a bless then costs
milliseconds, not an interpreter start. The child replaces its standard streams (a lock held
by another thread at the fork would otherwise be inherited held) and leaves with ``os._exit``,
so nothing of pytest runs in it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

from goldgate.cli.main import main


def start_bless(root: str, suite: str) -> int:
    """Fork ``goldgate bless --suite SUITE -q`` in ``root``; returns the child's pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 70
    try:
        os.chdir(root)
        sys.stdout = sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
        code = main(["bless", "--suite", suite, "-q"])
    finally:
        os._exit(code)


def wait(pid: int) -> int:
    """The child's exit code, or minus the signal that killed it."""
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def kill(pid: int) -> int:
    """SIGKILL the child (it may have finished already) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return wait(pid)


def bless(root: str, suite: str) -> int:
    """Run one bless to the end; its exit code."""
    return wait(start_bless(root, suite))


def warm_up(root: str, suite: str) -> None:
    """One bless in this process first, so that every module a bless imports lazily is
    imported before the forks (each child would import them again otherwise)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    here = os.getcwd()
    os.chdir(root)
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            assert main(["bless", "--suite", suite, "-q"]) == 0
    finally:
        os.chdir(here)
