"""Run a **command** system: one process per suite, inputs on its stdin, outputs on its stdout.

A **command** is started once per suite without a shell (``shlex.split``), in the config's
directory. goldgate writes one JSON line ``{"id", "input"}`` per call to its stdin (with
``"sample": k`` too when ``samples`` > 1), closes stdin, and reads ``{"id", "output"}`` lines
from its stdout in any order, caching each as it arrives. ``timeout_s`` bounds the wait for
each next output line; on expiry the command's whole process group is killed and the error
names the ids still in flight. Once the command and its process group are gone, goldgate stops
reading even if a process that left the group (``setsid``) still holds stdout open. How to use
``concurrency`` is the command's business: it gets it as ``GOLDGATE_CONCURRENCY`` (and the
suite as ``GOLDGATE_SUITE``). ``PYTHONUNBUFFERED=1`` is set so a Python command's prints
arrive as they happen; other programs should flush stdout after each line.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from goldgate.errors import SystemRunError
from goldgate.model.config import SystemConfig
from goldgate.systems.calls import (
    KILL_GRACE_S,
    POLL_S,
    Call,
    Deliver,
    _daemon,
    _ids,
    _text_id,
    _type,
    lone_surrogate,
)

STDERR_TAIL_LINES = 15
STDERR_TAIL_CHARS = 2000

_EOF = object()


def run_command(
    system: SystemConfig, calls: Sequence[Call], deliver: Deliver, *, suite: str, root: Path
) -> None:
    """Run the command once for ``calls``, delivering outputs as lines arrive."""
    argv = system.argv()
    label = f"system.command {_shown_command(argv)}"
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "GOLDGATE_SUITE": suite,
        "GOLDGATE_CONCURRENCY": str(system.concurrency),
        "GOLDGATE_SAMPLES": str(system.samples),
        **system.env,
    }
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=root,
            env=env,
            start_new_session=True,  # its own process group, so a kill reaches its children
        )
    except FileNotFoundError:
        raise SystemRunError(f"{label}: program {argv[0]!r} not found") from None
    except OSError as exc:
        raise SystemRunError(f"{label}: cannot start: {exc.strerror or exc}") from None
    session = _CommandSession(process, label, system, calls, deliver)
    try:
        session.run()
    finally:
        session.close()


class _CommandSession:
    def __init__(
        self,
        process: subprocess.Popen[bytes],
        label: str,
        system: SystemConfig,
        calls: Sequence[Call],
        deliver: Deliver,
    ) -> None:
        self.process = process
        self.label = label
        self.timeout = system.timeout_s
        self.samples = system.samples
        self.calls = calls
        self.deliver = deliver
        self.pending: dict[str, dict[int, Call]] = {}
        for call in calls:
            self.pending.setdefault(call.record.id, {})[call.sample] = call
        self.known_ids = set(self.pending)
        self.remaining = len(calls)
        self.received = 0
        self.stdout: queue.Queue[object] = queue.Queue()
        self.stdout_ended = False
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self.threads = [
            _daemon(self._write_inputs),
            _daemon(self._read_stdout),
            _daemon(self._read_stderr),
        ]

    def run(self) -> None:
        try:
            self._run()
        except BaseException:
            # Interrupted (Ctrl-C) or failed: stop the command, then keep every output it
            # had already written to the pipe; those are paid for.
            self._kill()
            self._salvage()
            raise

    def _salvage(self) -> None:
        deadline = time.monotonic() + 2 * KILL_GRACE_S
        while self.remaining and not self.stdout_ended:
            try:
                item = self.stdout.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                return
            if item is _EOF:
                return
            assert isinstance(item, bytes)
            try:
                self._accept(item, 0)
            except SystemRunError:
                continue

    def _run(self) -> None:
        line_number = 0
        deadline = time.monotonic() + self.timeout
        exited_at: float | None = None
        while True:
            now = time.monotonic()
            if exited_at is None and self.process.poll() is not None:
                exited_at = now
            if (
                exited_at is not None
                and now - exited_at > KILL_GRACE_S
                and not _group_alive(self.process.pid)
            ):
                # The command and its process group are gone, yet its stdout stays open: a
                # process that left the group (a daemon, a ``setsid`` grandchild) holds the
                # pipe. What the command wrote has been read by now; EOF may never come.
                break
            if now >= deadline:
                self._fail_timeout()
            try:
                item = self.stdout.get(timeout=min(POLL_S, max(deadline - now, 0.0)))
            except queue.Empty:
                continue
            if item is _EOF:
                self.stdout_ended = True
                break
            assert isinstance(item, bytes)
            line_number += 1
            self._accept(item, line_number)
            deadline = time.monotonic() + self.timeout  # timeout_s bounds each next line
        try:
            code = self.process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self._fail_timeout(closed_stdout=True)
        if code != 0:
            raise self._error(
                f"{_exit_text(code)} after {self._progress_text()}{self._in_flight_text()}"
            )
        if self.remaining:
            waiting = [rid for rid, samples in self.pending.items() if samples]
            raise self._error(
                f"exited without output for {self.remaining} of {len(self.calls)} call(s): "
                f"{_ids(waiting)}",
                stderr=False,
            )

    def close(self) -> None:
        if self.process.poll() is None:
            _kill_group(self.process)
        streams = (self.process.stdin, self.process.stdout, self.process.stderr)
        for thread, stream in zip(self.threads, streams, strict=True):
            thread.join(timeout=KILL_GRACE_S)
            # A thread still blocked on a pipe that an escaped grandchild holds open keeps its
            # stream: closing a buffered stream another thread is reading waits for that read
            # to end — possibly forever. The daemon thread and its pipe go with the process.
            if stream is not None and not thread.is_alive():
                with contextlib.suppress(OSError):
                    stream.close()

    def _accept(self, raw: bytes, line_number: int) -> None:
        where = f"stdout line {line_number}"
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            # Scoring mojibake would be a silent wrong score: the system's encoding is wrong.
            self._kill()
            shown = _clip(raw.decode("utf-8", errors="replace").strip())
            raise self._error(
                f"printed a line that is not valid UTF-8 ({where}): {shown}"
            ) from None
        if not text:
            return
        try:
            item = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, too deep, or a number int() refuses
            item = None
        record_id = _text_id(item.get("id")) if isinstance(item, dict) else None
        if not isinstance(item, dict) or record_id is None or "output" not in item:
            self._kill()
            raise self._error(
                f"printed a line that is not a JSON object with 'id' and 'output' "
                f"({where}): {_clip(text)}"
            )
        samples = self.pending.get(record_id)
        if not samples:
            self._kill()
            problem = "more outputs than calls" if record_id in self.known_ids else "unknown id"
            raise self._error(f"{problem} {record_id!r} ({where})")
        output = item["output"]
        if not isinstance(output, str):
            self._kill()
            raise self._error(
                f"'output' for id {record_id!r} is {_type(output)}, not text ({where})"
            )
        bad = lone_surrogate(output)
        if bad is not None:
            self._kill()
            raise self._error(
                f"'output' for id {record_id!r} holds a lone surrogate '{bad}' ({where}),"
                " which is not text"
            )
        sample = item.get("sample")
        call = samples.pop(
            sample if isinstance(sample, int) and sample in samples else min(samples)
        )
        self.remaining -= 1
        self.received += 1
        self.deliver(call, output)

    def _fail_timeout(self, *, closed_stdout: bool = False) -> NoReturn:
        self._kill()
        what = "did not exit" if closed_stdout or not self.remaining else "produced no output"
        raise self._error(
            f"{what} within timeout_s={self.timeout:g}s and was killed "
            f"(after {self._progress_text()}){self._in_flight_text()}"
        )

    def _progress_text(self) -> str:
        return f"{self.received} of {len(self.calls)} output(s), which are cached"

    def _in_flight_text(self) -> str:
        # Every input was sent at once: each one still without an answer was in flight.
        waiting = [record_id for record_id, samples in self.pending.items() if samples]
        return f"; in flight (no output yet): {_ids(waiting)}" if waiting else ""

    def _error(self, message: str, *, stderr: bool = True) -> SystemRunError:
        if stderr and self.process.poll() is not None:
            # The command is gone: let the reader take the last of its stderr (a grandchild
            # holding the pipe open costs a grace, not a hang).
            self.threads[2].join(timeout=KILL_GRACE_S)
        tail = _tail(self.stderr) if stderr else ""
        return SystemRunError(f"{self.label}: {message}{tail}")

    def _kill(self) -> None:
        _kill_group(self.process)

    # -- threads ---------------------------------------------------------------------------
    def _write_inputs(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            for call in self.calls:
                request: dict[str, Any] = {"id": call.record.id, "input": call.record.input}
                if self.samples > 1:
                    request["sample"] = call.sample
                stdin.write((json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8"))
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return  # the command stopped reading; its exit status tells the story
        finally:
            with contextlib.suppress(BrokenPipeError, OSError):
                stdin.close()

    def _read_stdout(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            for line in stdout:
                self.stdout.put(line)
        except (OSError, ValueError):
            pass
        finally:
            self.stdout.put(_EOF)

    def _read_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        try:
            for line in stderr:
                self.stderr.append(line.decode("utf-8", errors="replace").rstrip("\n"))
        except (OSError, ValueError):
            pass


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Stop the command and everything it started: SIGTERM, then SIGKILL after a grace."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=KILL_GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue


def _group_alive(pgid: int) -> bool:
    """Whether any process is left in the process group ``pgid`` (the command's own)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with code {code}"


def _tail(lines: Iterable[str]) -> str:
    text = "\n".join(lines).strip()
    if not text:
        return ""
    if len(text) > STDERR_TAIL_CHARS:
        text = "..." + text[-STDERR_TAIL_CHARS:]
    return "\n--- stderr (last lines) ---\n" + text


def _shown_command(argv: list[str]) -> str:
    import shlex

    return _clip(shlex.join(argv), 120)


def _clip(text: str, limit: int = 200) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")
