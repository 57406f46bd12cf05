"""Run a **callable** system: a Python function called in goldgate's own process.

A **callable** ``package.module:function`` (imported with the config's directory on
``sys.path``) is called with each record's ``input`` and returns a string. An ``async def``
runs on one event loop in a thread of its own, at most ``concurrency`` calls at once, each
cancelled after ``timeout_s`` — and a watchdog ends the wait when a call blocks the loop so it
cannot be cancelled; a plain function runs in ``concurrency`` worker threads, and a call that
overruns ``timeout_s`` fails the run (its thread cannot be stopped, and is abandoned).
When a call fails, no new calls start, calls in flight are allowed to finish and are cached,
then the error is raised.

While a callable is imported or runs, ``os._exit`` in goldgate's process raises
:class:`ExitCalled` (:func:`guard_os_exit`), and a call's ``sys.exit`` fails the run as that
call's error instead of ending it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import inspect
import os
import queue
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from goldgate.errors import SystemRunError, describe_exception, did_you_mean, where_raised
from goldgate.io.user_code import importable_from
from goldgate.model.config import SystemConfig
from goldgate.systems.calls import (
    KILL_GRACE_S,
    POLL_S,
    Call,
    Deliver,
    _daemon,
    _ids,
    _type,
    lone_surrogate,
)

T = TypeVar("T")


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
