"""Obtain a system's outputs for a golden set: a predictions file, a command or a callable.

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

A **callable** ``package.module:function`` (imported with the config's directory on
``sys.path``) is called with each record's ``input`` and returns a string. An ``async def``
runs on one event loop in a thread of its own, at most ``concurrency`` calls at once, each
cancelled after ``timeout_s`` — and a watchdog ends the wait when a call blocks the loop so it
cannot be cancelled; a plain function runs in ``concurrency`` worker threads, and a call that
overruns ``timeout_s`` fails the run (its thread cannot be stopped, and is abandoned).
When a call fails, no new calls start, calls in flight are allowed to finish and are cached,
then the error is raised.
"""

from __future__ import annotations

import array
import asyncio
import collections
import contextlib
import hashlib
import importlib
import inspect
import itertools
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import (
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
)
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from goldgate.errors import (
    InputError,
    SystemRunError,
    describe_exception,
    did_you_mean,
    first_of,
    where_raised,
)
from goldgate.io.user_code import importable_from
from goldgate.model.config import DaskConfig, SystemConfig
from goldgate.model.golden_records import GoldenRecord
from goldgate.model.goldens import GoldenSet
from goldgate.model.text_inputs import json_lines, read_utf8
from goldgate.systems.cache import (
    CacheKey,
    OutputCache,
    StaleCache,
    canonical_json,
    identity_digest,
    input_hash,
)
from goldgate.systems.fingerprint import code_fingerprint
from goldgate.terminal.progress import NullProgress, ProgressReporter

STDERR_TAIL_LINES = 15
STDERR_TAIL_CHARS = 2000
SHOWN_IDS = 10
KILL_GRACE_S = 1.0
#: How often the wait for a command's next line looks at whether it has exited.
POLL_S = 0.1

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One output to obtain: a record and a sample index."""

    record: GoldenRecord
    sample: int
    key: CacheKey


Deliver = Callable[[Call, str], None]


@dataclass(frozen=True)
class Obtained:
    """A system's outputs and how many of them came from the cache instead of the system."""

    outputs: dict[str, list[str]]
    total: int = 0
    resumed: int = 0
    #: when the resumed outputs were first cached (ISO 8601)
    since: str | None = None
    cache_path: Path | None = None
    #: an unfinished cache of the same system under other code, set aside
    stale: StaleCache | None = None
    #: digest of the system's identity (settings, code fingerprint, cache_key); None for files
    identity: str | None = None
    #: a warning naming the predictions left out: ids the golden set does not have
    ignored: str | None = None


def obtain_outputs(
    system: SystemConfig,
    golden: GoldenSet,
    *,
    root: Path,
    cache_dir: Path,
    progress: ProgressReporter | None = None,
    dask: DaskConfig | str | None = None,
) -> dict[str, list[str]]:
    """Outputs of ``system`` for every record: id → ``system.samples`` outputs.

    With ``dask`` (a Dask cluster's configuration, its scheduler address or ``local``) a
    callable runs on that cluster.
    """
    return collect_outputs(
        system, golden, root=root, cache_dir=cache_dir, progress=progress, dask=dask
    ).outputs


def collect_outputs(
    system: SystemConfig,
    golden: GoldenSet,
    *,
    root: Path,
    cache_dir: Path,
    progress: ProgressReporter | None = None,
    ignore: Sequence[Path] = (),
    dask: DaskConfig | str | None = None,
) -> Obtained:
    """Outputs of ``system`` for every record, and what the cache gave of them.

    ``ignore`` lists files whose changes do not change the system (goldgate's own: the
    configuration, golden sets, baseline, reports), left out of its code fingerprint. With
    ``dask`` (a Dask cluster's configuration, its scheduler address or ``local``) a callable
    runs on that cluster.
    """
    if system.kind == "predictions":
        ignored: list[str] = []
        found = read_predictions(
            system.predictions_path(golden.suite, root),
            golden,
            samples=system.samples,
            strict=system.strict,
            ignored=ignored,
        )
        return Obtained(found, ignored=ignored[0] if ignored else None)
    progress = progress or NullProgress()
    function, identity = system_identity(
        system, root=root, ignore=[cache_dir, golden.path, *ignore]
    )
    cache = OutputCache(cache_dir, golden.suite, identity, mode=system.cache)
    outputs: dict[str, list[str | None]] = {i: [None] * system.samples for i in golden.ids()}
    calls: list[Call] = []
    for record in golden.records:
        digest = input_hash(record.input)
        for sample in range(system.samples):
            key = (record.id, digest, sample)
            cached = cache.get(key)
            if cached is None:
                calls.append(Call(record, sample, key))
            else:
                outputs[record.id][sample] = cached

    def deliver(call: Call, output: str) -> None:
        cache.put(call.key, output)
        outputs[call.record.id][call.sample] = output
        progress.advance()

    total = len(golden.records) * system.samples
    resumed = total - len(calls)
    label = f"{golden.suite}: {system.kind}"
    if resumed:
        label += f" ({resumed} resumed from the cache of {cache.since or 'an earlier run'})"
    progress.start(total, label)
    progress.advance(resumed)
    try:
        if calls and function is not None and dask is not None:
            from goldgate.execution.dask.engine import client_for, run_callable_on_dask

            run_callable_on_dask(
                client_for(dask),
                system,
                calls,
                deliver,
                root=str(root),
                checked=_checked_output,
                call_error=_call_error,
                timeout_error=_timeout_error,
            )
        elif calls and function is not None:
            with guard_os_exit():
                run_callable(function, calls, deliver, system=system)
        elif calls:
            run_command(system, calls, deliver, suite=golden.suite, root=root)
    finally:
        progress.finish()
        cache.close()
    missing = [record_id for record_id, values in outputs.items() if None in values]
    if missing:  # every path above raises first; this guards the contract
        raise SystemRunError(f"suite {golden.suite!r}: no output for {_ids(missing)}")
    cache.complete()
    return Obtained(
        outputs={
            record_id: [v for v in values if v is not None] for record_id, values in outputs.items()
        },
        total=total,
        resumed=resumed,
        since=cache.since if resumed else None,
        cache_path=cache.path if system.cache != "off" else None,
        stale=cache.stale,
        identity=identity_digest(identity),
    )


def system_identity(
    system: SystemConfig, *, root: Path, ignore: Sequence[Path] = ()
) -> tuple[Callable[..., Any] | None, dict[str, Any]]:
    """A command or callable (imported) and its identity: settings, code fingerprint, key.

    Two runs with the same identity run the same code on the same settings, so one's
    outputs may stand for the other's: the cache and ``bless`` reusing a reviewed run rely
    on it. ``ignore`` lists files left out of the code fingerprint.
    """
    function: Callable[..., Any] | None = None
    if system.kind == "callable":
        with guard_os_exit():  # also while importing: ``from os import _exit`` gets the guard
            function, identity = load_callable(system, root)
    else:
        identity = command_identity(system)
    identity["code"] = code_fingerprint(
        root, argv=system.argv() if system.command is not None else (), exclude=ignore
    )
    if system.cache_key is not None:
        identity["cache_key"] = system.cache_key
    return function, identity


def command_identity(system: SystemConfig) -> dict[str, Any]:
    """What makes a command the same system for the cache (env values hashed: secrets)."""
    env = canonical_json(dict(sorted(system.env.items()))).encode("utf-8")
    return {
        "kind": "command",
        "argv": system.argv(),
        "env_keys": sorted(system.env),
        "env_sha256": hashlib.sha256(env).hexdigest(),
    }


# -- predictions file ------------------------------------------------------------------------


def read_predictions(
    path: Path,
    golden: GoldenSet,
    *,
    samples: int = 1,
    strict: bool = True,
    ignored: list[str] | None = None,
) -> dict[str, list[str]]:
    """Read ``{"id", "output"}`` lines (``"outputs": [...]`` for samples > 1) for a golden set.

    Lines of ids the golden set does not have are an error when ``strict``; else they are
    left out, and a warning naming them is appended to ``ignored`` (examples removed from
    the golden set in a pull request whose pipeline still answered them).

    Outputs are kept by golden position and returned keyed by the golden set's own id
    strings: at a million lines, the file's id strings and a line number per id, kept until
    the end, would be freed between the outputs kept and leave the memory in holes.
    """
    ids = golden.ids()
    index_of = {example_id: index for index, example_id in enumerate(ids)}
    lines = _FirstLines(index_of)
    outputs_at: list[list[str] | None] = [None] * len(ids)
    unknown: list[tuple[str, int]] = []
    for number, item in _prediction_rows(path):
        if samples == 1 and type(item) is dict and len(item) == 2:
            # The usual line, {"id": text, "output": text} for a known id not seen yet,
            # taken as the checks below would take it.
            record_id, output = item.get("id"), item.get("output")
            if type(record_id) is str and type(output) is str:
                at = index_of.get(record_id)
                if (
                    at is not None
                    and outputs_at[at] is None
                    and (output.isascii() or lone_surrogate(output) is None)
                ):
                    lines.note(at, number)
                    outputs_at[at] = [output]
                    continue
        where = f"{path}:{number}"
        record_id = prediction_id(item, where, number, lines)
        at = index_of.get(record_id)
        if at is None:
            unknown.append((record_id, number))
            continue
        outputs_at[at] = _prediction_outputs(item, samples, f"{where}: id {record_id!r}")
    if unknown:
        shown = first_of([f"{rid!r} (line {n})" for rid, n in unknown], SHOWN_IDS)
        problem = f"{path}: {len(unknown)} id(s) not in the golden set {golden.path}: {shown}"
        if strict or ignored is None:
            raise SystemRunError(problem)
        ignored.append(f"{problem}; left out (system.strict: true makes this an error)")
    missing = [example_id for example_id, got in zip(ids, outputs_at, strict=True) if got is None]
    if missing:
        raise SystemRunError(
            f"{path}: no output for {len(missing)} of {len(ids)} golden id(s): {_ids(missing)}"
        )
    return {
        example_id: got for example_id, got in zip(ids, outputs_at, strict=True) if got is not None
    }


class _FirstLines(MutableMapping[str, int]):
    """id → the line it was first seen on: a number per golden position in an array (no
    object per line), a dict for ids the golden set does not have."""

    def __init__(self, index_of: Mapping[str, int]) -> None:
        self._index_of = index_of
        self._lines = array.array("q", [-1]) * len(index_of)
        self._others: dict[str, int] = {}

    def note(self, at: int, line: int) -> None:
        """The golden id at position ``at`` was seen on ``line``."""
        self._lines[at] = line

    def __getitem__(self, record_id: str) -> int:
        at = self._index_of.get(record_id)
        if at is None:
            return self._others[record_id]
        if self._lines[at] < 0:
            raise KeyError(record_id)
        return self._lines[at]

    def __setitem__(self, record_id: str, line: int) -> None:
        at = self._index_of.get(record_id)
        if at is None:
            self._others[record_id] = line
        else:
            self._lines[at] = line

    def __delitem__(self, record_id: str) -> None:
        self[record_id]  # KeyError when not seen
        at = self._index_of.get(record_id)
        if at is None:
            del self._others[record_id]
        else:
            self._lines[at] = -1

    def __contains__(self, record_id: object) -> bool:
        if not isinstance(record_id, str):
            return False
        at = self._index_of.get(record_id)
        return record_id in self._others if at is None else self._lines[at] >= 0

    def __iter__(self) -> Iterator[str]:
        seen = (record_id for record_id, at in self._index_of.items() if self._lines[at] >= 0)
        return itertools.chain(seen, self._others)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def prediction_id(item: Any, where: str, number: int, lines: MutableMapping[str, int]) -> str:
    """The id of one predictions row (noted in ``lines``); a bad or repeated one is an error."""
    if not isinstance(item, dict):
        raise InputError(f"{where}: expected an object with 'id' and 'output'")
    record_id = _text_id(item.get("id"))
    if record_id is None:
        raise InputError(f"{where}: the line has no 'id' (text)")
    if record_id in lines:
        raise InputError(f"{where}: duplicate id {record_id!r} (first on line {lines[record_id]})")
    lines[record_id] = number
    return record_id


#: the keys of a predictions row goldgate reads (a Parquet file's other columns are not decoded)
PREDICTION_FIELDS = ("id", "output", "outputs")


def _prediction_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line or row, item)`` of a JSONL predictions file, or of a Parquet one in batches."""
    from goldgate.io.parquet import is_parquet, iter_rows

    if is_parquet(path):
        yield from iter_rows(path, InputError, what="predictions file", columns=PREDICTION_FIELDS)
        return
    text = read_utf8(path, InputError, what="predictions file")
    yield from json_lines(text, str(path), InputError)


def _prediction_outputs(item: dict[str, Any], samples: int, where: str) -> list[str]:
    if "outputs" in item and "output" in item:
        raise InputError(f"{where}: give 'output' or 'outputs', not both")
    if "outputs" in item:
        values = item["outputs"]
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise InputError(f"{where}: 'outputs' must be a list of texts")
        if len(values) != samples:
            raise InputError(
                f"{where}: 'outputs' holds {len(values)} text(s), expected {samples} "
                f"(system.samples)"
            )
        for value in values:
            bad = lone_surrogate(value)
            if bad is not None:
                raise InputError(f"{where}: 'outputs' holds a lone surrogate '{bad}', not text")
        return list(values)
    if "output" not in item:
        raise InputError(f"{where}: no 'output'")
    if not isinstance(item["output"], str):
        raise InputError(f"{where}: 'output' must be text, got {_type(item['output'])}")
    bad = lone_surrogate(item["output"])
    if bad is not None:
        raise InputError(f"{where}: 'output' holds a lone surrogate '{bad}', which is not text")
    if samples != 1:
        raise InputError(
            f"{where}: system.samples is {samples}: give 'outputs', a list of {samples} texts"
        )
    return [item["output"]]


# -- command ---------------------------------------------------------------------------------

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


def _daemon(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


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


# -- callable --------------------------------------------------------------------------------


class ExitCalled(BaseException):
    """A callable called ``os._exit`` (or ``sys.exit``) in goldgate's process: caught, not obeyed.

    A ``BaseException``, so that the user's own ``except Exception`` cannot swallow it.
    """

    def __init__(self, code: object, function: str = "os._exit") -> None:
        super().__init__(code)
        self.code = code
        self.function = function


_exit_guard_depth = 0
_exit_guard_lock = threading.Lock()
_real_os_exit = os._exit


def _guarded_os_exit(status: int) -> NoReturn:
    # A forked child (multiprocessing) must still end the way it asks to; only goldgate's own
    # process is protected, and only while a callable system runs.
    if _exit_guard_depth and os.getpid() == _guard_pid:
        raise ExitCalled(status)
    _real_os_exit(status)


_guard_pid = os.getpid()


@contextlib.contextmanager
def guard_os_exit() -> Iterator[None]:
    """While a callable runs, ``os._exit`` in goldgate's process raises :class:`ExitCalled`.

    ``os._exit`` ends a process at once, with no message and no cleanup: a callable that calls
    it would end the whole run silently with its exit code (7 reads as a crash of goldgate,
    1 as a regression). Exits from C code cannot be caught this way.
    """
    global _exit_guard_depth, _guard_pid
    with _exit_guard_lock:
        _exit_guard_depth += 1
        _guard_pid = os.getpid()
        os._exit = _guarded_os_exit
    try:
        yield
    finally:
        with _exit_guard_lock:
            _exit_guard_depth -= 1
            if not _exit_guard_depth:
                os._exit = _real_os_exit


def load_callable(system: SystemConfig, root: Path) -> tuple[Callable[..., Any], dict[str, Any]]:
    """Import ``package.module:function`` (root on sys.path) and its cache identity."""
    path = system.callable or ""
    module_name, _, attribute = path.partition(":")
    label = f"system.callable {path!r}"
    importable_from(root)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the user's module may raise anything while importing
        raise SystemRunError(
            f"{label}: cannot import {module_name!r}: {describe_exception(exc)}{where_raised(exc)}"
        ) from None
    obj: Any = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            names = [name for name in dir(obj) if not name.startswith("_")]
            raise SystemRunError(
                f"{label}: {module_name!r} has no {part!r}{did_you_mean(part, names)}"
            )
        obj = getattr(obj, part)
    if not callable(obj):
        raise SystemRunError(f"{label}: {attribute!r} is a {type(obj).__name__}, not a function")
    source = getattr(module, "__file__", None)
    digest = None
    if source:
        try:
            digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()
        except OSError:
            digest = None
    # The module's source is part of the identity: editing it means new outputs.
    return obj, {"kind": "callable", "callable": path, "source_sha256": digest}


def run_callable(
    function: Callable[..., Any], calls: Sequence[Call], deliver: Deliver, *, system: SystemConfig
) -> None:
    """Call ``function`` for every call, at most ``concurrency`` at once, each within timeout."""
    label = f"system.callable {system.callable!r}"
    if _is_async(function):
        _run_async_watched(function, calls, deliver, system.concurrency, system.timeout_s, label)
    else:
        _run_threads(function, calls, deliver, system.concurrency, system.timeout_s, label)


def _is_async(function: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        getattr(function, "__call__", None)  # noqa: B004 (an object with an async __call__)
    )


def _checked_output(value: Any, call: Call, label: str) -> str:
    if not isinstance(value, str):
        raise SystemRunError(
            f"{label}: returned {_type(value)} for id {call.record.id!r}; it must return text"
        )
    bad = lone_surrogate(value)
    if bad is not None:
        raise SystemRunError(
            f"{label}: returned text with a lone surrogate '{bad}' for id {call.record.id!r};"
            " it cannot be stored or reported"
        )
    return value


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in ``text``, escaped (``\\ud800``); None for real text.

    JSON escapes and Python strings can hold one, UTF-8 cannot: the cache, the baseline and
    the reports could not write it.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return text[exc.start].encode("unicode_escape").decode("ascii")
    return None


def _call_error(exc: BaseException, call: Call, label: str) -> SystemRunError:
    where = f"(id {call.record.id!r}){where_raised(exc)}"
    if isinstance(exc, ExitCalled | SystemExit):
        name = exc.function if isinstance(exc, ExitCalled) else "sys.exit"
        return SystemRunError(
            f"{label}: called {name}({exc.code!r}) {where}; a callable must return its output"
            " (goldgate kept the run alive to say so)"
        )
    return SystemRunError(f"{label}: raised {describe_exception(exc)} {where}")


def _timeout_error(
    timeout: float, call: Call, label: str, in_flight: Sequence[Call] = ()
) -> SystemRunError:
    others = [c.record.id for c in in_flight if c is not call]
    also = f"; also in flight: {_ids(others)}" if others else ""
    return SystemRunError(
        f"{label}: no answer within timeout_s={timeout:g}s (id {call.record.id!r}){also}"
    )


class _Flight:
    """Which calls are running since when; shared by an event loop's thread and its watchdog."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: dict[int, float] = {}
        self.abandoned = threading.Event()

    def begin(self, index: int) -> None:
        with self.lock:
            self.started[index] = time.monotonic()

    def end(self, index: int) -> None:
        with self.lock:
            self.started.pop(index, None)

    def overdue(self, limit: float) -> tuple[list[int], list[int]]:
        """Calls running longer than ``limit`` seconds, and every call in flight."""
        now = time.monotonic()
        with self.lock:
            return (
                sorted(i for i, t in self.started.items() if now - t > limit),
                sorted(self.started),
            )


def _run_async_watched(
    function: Callable[..., Awaitable[Any]],
    calls: Sequence[Call],
    deliver: Deliver,
    concurrency: int,
    timeout: float,
    label: str,
) -> None:
    """Run the async calls on an event loop in a thread of their own, under a watchdog.

    ``asyncio.wait_for`` cancels a call only when its event loop gets control back; a
    coroutine that blocks the loop (``time.sleep``, a synchronous HTTP client) never gives it.
    The watchdog in this thread sees such a call overrun ``timeout_s`` and stops waiting: the
    run fails naming the ids in flight, and the loop's daemon thread is abandoned (a Python
    thread cannot be killed); nothing it delivers afterwards is taken.
    """
    flight = _Flight()

    def delivering(call: Call, output: str) -> None:
        if not flight.abandoned.is_set():
            deliver(call, output)

    box: list[tuple[bool, Any]] = []

    def target() -> None:
        try:
            box.append(
                (
                    True,
                    asyncio.run(
                        _run_async(function, calls, delivering, concurrency, timeout, label, flight)
                    ),
                )
            )
        except BaseException as exc:  # handed back to the watching thread
            box.append((False, exc))

    thread = _daemon(target)
    try:
        while thread.is_alive():
            thread.join(timeout=POLL_S)
            # wait_for cancels a cooperative call at timeout_s; a grace later, the loop is stuck
            overdue, in_flight = flight.overdue(timeout + KILL_GRACE_S)
            if overdue and thread.is_alive():
                late = [calls[i].record.id for i in overdue]
                others = [calls[i].record.id for i in in_flight if i not in overdue]
                also = f"; also in flight: {_ids(others)}" if others else ""
                raise SystemRunError(
                    f"{label}: no answer within timeout_s={timeout:g}s for {_ids(late)}: a call"
                    " blocks the event loop (blocking code inside `async def`), so none of them"
                    f" could be cancelled{also}"
                )
    finally:
        if thread.is_alive():
            flight.abandoned.set()
    ok, value = box[0]
    if not ok:
        raise value


async def _run_async(
    function: Callable[..., Awaitable[Any]],
    calls: Sequence[Call],
    deliver: Deliver,
    concurrency: int,
    timeout: float,
    label: str,
    flight: _Flight,
) -> None:
    semaphore = asyncio.Semaphore(concurrency)
    errors: list[SystemRunError] = []

    async def one(index: int, call: Call) -> None:
        async with semaphore:
            if errors:
                return
            flight.begin(index)
            try:
                value = await asyncio.wait_for(_awaitable(function, call.record.input), timeout)
            except TimeoutError:
                _, in_flight = flight.overdue(0.0)
                errors.append(_timeout_error(timeout, call, label, [calls[i] for i in in_flight]))
                return
            except (Exception, ExitCalled) as exc:  # the user's code may raise anything
                errors.append(_call_error(exc, call, label))
                return
            finally:
                flight.end(index)
            try:
                deliver(call, _checked_output(value, call, label))
            except SystemRunError as exc:
                errors.append(exc)

    await asyncio.gather(*(one(index, call) for index, call in enumerate(calls)))
    if errors:
        raise errors[0]


async def _awaitable(function: Callable[..., Any], value: Any) -> Any:
    try:
        result = function(value)
        return await result if inspect.isawaitable(result) else result
    except SystemExit as exc:
        # asyncio re-raises SystemExit out of the event loop, past every caller: the run would
        # end with the callable's exit code. Turned into a call error here, inside the task.
        raise ExitCalled(exc.code, "sys.exit") from None


def _run_threads(
    function: Callable[..., Any],
    calls: Sequence[Call],
    deliver: Deliver,
    concurrency: int,
    timeout: float,
    label: str,
) -> None:
    # Daemon threads rather than a ThreadPoolExecutor: a call that hangs past its timeout
    # must not keep the interpreter from exiting.
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    for index in range(len(calls)):
        todo.put(index)
    done: queue.Queue[tuple[int, bool, Any]] = queue.Queue()
    started: dict[int, float] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def worker() -> None:
        while True:
            # Taking work and registering it happen under the lock that the main thread
            # holds when it reads what is in flight, so no call starts unseen after a stop.
            with lock:
                if stop.is_set():
                    return
                try:
                    index = todo.get_nowait()
                except queue.Empty:
                    return
                started[index] = time.monotonic()
            try:
                value = function(calls[index].record.input)
                if inspect.isawaitable(value):
                    value = asyncio.run(_await(value))
                ok = isinstance(value, str)
            except BaseException as exc:  # handed to the main thread
                value, ok = exc, False
            if not ok:
                with lock:  # before this thread could take more work
                    stop.set()
            done.put((index, ok, value))

    for _ in range(min(concurrency, len(calls))):
        _daemon(worker)
    first_error: SystemRunError | None = None
    finished = 0
    try:
        while True:
            with lock:
                in_flight = dict(started)
            if finished == len(calls) or (first_error is not None and not in_flight):
                break
            now = time.monotonic()
            overdue = [i for i, t in in_flight.items() if now - t > timeout]
            if overdue:
                with lock:
                    stop.set()
                    for index in overdue:
                        started.pop(index, None)
                finished += len(overdue)
                first_error = first_error or _timeout_error(
                    timeout, calls[overdue[0]], label, [calls[i] for i in sorted(in_flight)]
                )
                continue
            wait = min((t + timeout - now for t in in_flight.values()), default=timeout)
            try:
                batch = [done.get(timeout=max(wait, 0.001) + 0.001)]
            except queue.Empty:
                continue
            # Take every result that is ready in one go: fast functions finish by the
            # thousand, and one lock round per result would starve the workers.
            while True:
                try:
                    batch.append(done.get_nowait())
                except queue.Empty:
                    break
            with lock:  # results that arrive after their timeout was declared are dropped
                fresh = [item for item in batch if started.pop(item[0], None) is not None]
            for index, ok, value in fresh:
                finished += 1
                call = calls[index]
                if not ok and isinstance(value, BaseException):
                    first_error = first_error or _call_error(value, call, label)
                    continue
                try:
                    output = _checked_output(value, call, label)
                except SystemRunError as exc:
                    stop.set()
                    first_error = first_error or exc
                    continue
                deliver(call, output)
    finally:
        stop.set()
    if first_error is not None:
        raise first_error


async def _await(value: Awaitable[T]) -> T:
    return await value


# -- helpers ---------------------------------------------------------------------------------


def _text_id(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value)


def _ids(ids: Sequence[str]) -> str:
    return first_of([repr(i) for i in ids], SHOWN_IDS)


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _clip(text: str, limit: int = 200) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")
