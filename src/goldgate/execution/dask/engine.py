"""Scoring and callable systems on a Dask cluster (the ``goldgate[dask]`` extra).

``engine: {dask: {address: tcp://host:8786}}`` (or ``--dask ADDRESS``) sends the work of a
run to an existing cluster; ``local`` starts a ``LocalCluster`` on this machine (loopback,
ephemeral ports). Two kinds of work go there (and golden sets or predictions given as globs or
URLs are read there too: see :mod:`goldgate.execution.dask.data`):

- scoring: chunks of the golden set are mapped to per-example statistics on the workers and
  gathered in order, so the arrays (hence every score, bootstrap and ``result.json``) are
  those of a local run;
- a ``callable`` system: each input is one task calling the function on a worker. Outputs
  come back to this process, which keeps the cache, the timeout and the errors exactly as a
  local run does: an output is cached as it arrives, a call past ``timeout_s`` or one that
  raises is an error naming its id, and no partial score is ever given.

A worker that dies is replaced and its task retried by the scheduler; when a task has killed
workers more often than the cluster allows (``distributed.scheduler.allowed-failures``) the
run stops with an error saying so. Every wait for a task watches the cluster too: when it has
had no worker at all for ``engine.dask.no_workers_timeout_s`` (workers that died and were not
replaced, a cluster scaled to nothing) the run stops with the same error instead of waiting
for ever. Nothing else in goldgate imports dask.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib
import inspect
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldgate.errors import GoldgateError, SystemRunError, UsageError
from goldgate.io.user_code import importable_from

if TYPE_CHECKING:
    from goldgate.execution.pool import Chunk, FloatArray, MetricPairs
    from goldgate.model.config import DaskConfig, SystemConfig
    from goldgate.systems.calls import Call, Deliver

LOCAL = "local"
#: how often a wait looks at the cluster's workers
_POLL_S = 2.0
_CLIENTS: dict[str, Any] = {}


class DaskWorkerError(GoldgateError):
    """A task kept killing Dask workers, or the cluster went away: no partial score."""


def no_workers_timeout(target: DaskConfig | str) -> float:
    """Seconds a wait on ``target`` tolerates a cluster without workers (an address alone:
    the configuration's default)."""
    from goldgate.model.config import DaskConfig

    config = DaskConfig(address=target) if isinstance(target, str) else target
    return config.no_workers_timeout_s


def client_for(target: DaskConfig | str) -> Any:
    """A ``distributed.Client`` for ``target`` (``local``: a new LocalCluster), one per process.

    Clients are kept for the life of the process (a run scores several suites) and closed at
    exit.
    """
    address = target if isinstance(target, str) else target.address
    client = _CLIENTS.get(address)
    if client is not None and client.status == "running":
        return client
    distributed = _distributed()
    try:
        if address == LOCAL:
            cluster = distributed.LocalCluster(
                processes=True,
                threads_per_worker=1,
                # None still serves the scheduler's HTTP routes on 8787: an ephemeral port
                # instead, so that two runs on one machine do not collide.
                dashboard_address="127.0.0.1:0",
                host="127.0.0.1",
            )
            client = distributed.Client(cluster)
            atexit.register(cluster.close)
        else:
            client = distributed.Client(address, timeout=30)
    except (OSError, TimeoutError) as exc:
        raise UsageError(f"engine.dask.address {address}: cannot connect: {exc}") from None
    atexit.register(client.close)
    _CLIENTS[address] = client
    return client


def _distributed() -> Any:
    # Typed as Any: distributed's own annotations are partial, and strict mypy would need
    # an ignore at every call.
    try:
        import distributed
    except ImportError:
        raise UsageError(
            "engine.dask needs dask.distributed: pip install 'goldgate[dask]'"
        ) from None
    return distributed


def close_clients() -> None:
    """Close every client this process opened (and the LocalClusters they started)."""
    while _CLIENTS:
        _, client = _CLIENTS.popitem()
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None:
            cluster.close()


# -- waiting ------------------------------------------------------------------------------------


def _workerless(client: Any) -> bool:
    """Whether the cluster has no worker now; a scheduler that cannot be reached has none."""
    try:
        return not client.nthreads()
    except (OSError, TimeoutError):
        return True


def result_of(future: Any, *, patience_s: float, what: str) -> Any:
    """``future``'s result; a DaskWorkerError when workers kept dying on its task, when it was
    lost with the cluster, or when the cluster has had no worker for ``patience_s`` seconds.

    ``future.result()`` alone would wait for ever on a task that no worker will ever run: a
    LocalCluster closes a nanny whose worker died twice ``lost-worker-timeout`` apart, and a
    remote cluster may lose every worker. Waiting in steps lets the cluster be looked at.
    """
    distributed = _distributed()
    workerless_since: float | None = None
    while not future.done():
        # wait, not result(timeout=): a task that itself raised TimeoutError (a read from a
        # slow store) must be that error, not one more step of waiting
        with contextlib.suppress(TimeoutError):
            distributed.wait([future], timeout=_POLL_S)
        if future.done() or not _workerless(future.client):
            workerless_since = None
            continue
        now = time.monotonic()
        workerless_since = now if workerless_since is None else workerless_since
        if now - workerless_since >= patience_s:
            raise DaskWorkerError(
                f"the Dask cluster has had no workers for {patience_s:g} s"
                f" (engine.dask.no_workers_timeout_s) {what}; no score was computed"
            )
    try:
        return future.result()
    except (distributed.KilledWorker, distributed.client.FutureCancelledError) as exc:
        raise DaskWorkerError(
            f"Dask workers died {what} ({type(exc).__name__}: {exc}); no score was computed"
        ) from None


# -- scoring ------------------------------------------------------------------------------------


def _score_chunk_task(pairs: MetricPairs, chunk: Chunk) -> list[FloatArray]:
    from goldgate.execution.pool import chunk_arrays

    return chunk_arrays(pairs, chunk)


def score_on_dask(
    target: DaskConfig | str, pairs: MetricPairs, chunks: Iterable[Chunk]
) -> Iterator[list[FloatArray]]:
    """Each chunk's statistics, computed on the cluster, yielded in chunk order."""
    client = client_for(target)
    patience_s = no_workers_timeout(target)
    # The metrics travel with every task (a few KB): a scattered copy would be lost with the
    # workers that held it, and a retried task would find nothing.
    metrics = list(pairs)
    # Enough chunks in flight to keep every worker busy, few enough to bound memory here.
    window = 2 * max(1, sum(client.nthreads().values()))
    pending: deque[Any] = deque()

    def gather(future: Any) -> list[FloatArray]:
        result: list[FloatArray] = result_of(future, patience_s=patience_s, what="scoring a chunk")
        future.release()
        return result

    try:
        for chunk in chunks:
            payload = (list(chunk[0]), [list(refs) for refs in chunk[1]])
            pending.append(client.submit(_score_chunk_task, metrics, payload, pure=False))
            if len(pending) >= window:
                yield gather(pending.popleft())
        while pending:
            yield gather(pending.popleft())
    finally:
        for future in pending:
            future.cancel()


# -- a callable system ---------------------------------------------------------------------------


def _call_task(path: str, root: str, value: Any) -> Any:
    """On a worker: import ``module:function`` (root on sys.path) and call it with ``value``."""
    importable_from(Path(root))
    module_name, _, attribute = path.partition(":")
    function: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        function = getattr(function, part)
    result = function(value)
    if inspect.isawaitable(result):
        result = asyncio.run(_await(result))
    return result


async def _await(value: Any) -> Any:
    return await value


def run_callable_on_dask(
    client: Any,
    system: SystemConfig,
    calls: Sequence[Call],
    deliver: Deliver,
    *,
    root: str,
    checked: Callable[[Any, Call, str], str],
    call_error: Callable[[BaseException, Call, str], SystemRunError],
    timeout_error: Callable[[float, Call, str], SystemRunError],
) -> None:
    """Call the system's function for every call on the cluster, ``concurrency`` at a time.

    Each output is checked and delivered (cached) here as it arrives; the first failure,
    timeout or lost task stops the run with an error naming its id.
    """
    distributed = _distributed()
    label = f"system.callable {system.callable!r}"
    path = system.callable or ""
    queue = deque(calls)
    running: dict[Any, tuple[Call, float]] = {}
    try:
        while queue or running:
            while queue and len(running) < system.concurrency:
                call = queue.popleft()
                future = client.submit(_call_task, path, root, call.record.input, pure=False)
                running[future] = (call, time.monotonic())
            oldest = min(started for _, started in running.values())
            left = max(0.0, oldest + system.timeout_s - time.monotonic())
            try:
                done = distributed.wait(
                    list(running), timeout=left, return_when="FIRST_COMPLETED"
                ).done
            except TimeoutError:  # distributed.wait raises where concurrent.futures returns
                done = set()
            if not done:
                late = min(running.values(), key=lambda item: item[1])[0]
                if _workerless(client):  # nothing ran it: not the system's slowness
                    raise DaskWorkerError(
                        f"{label}: the Dask cluster has no workers to call the system for id"
                        f" {late.record.id!r}; no score was computed"
                    )
                raise timeout_error(system.timeout_s, late, label)
            for future in done:
                call, _ = running.pop(future)
                exc = future.exception() if future.status == "error" else None
                if future.status == "cancelled" or isinstance(exc, distributed.KilledWorker):
                    raise DaskWorkerError(
                        f"{label}: Dask workers died or went away calling the system for id"
                        f" {call.record.id!r}; no score was computed"
                    )
                if exc is not None:
                    raise call_error(exc, call, label)
                deliver(call, checked(future.result(), call, label))
    finally:
        for future in running:
            future.cancel()
