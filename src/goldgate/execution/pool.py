"""Score a corpus chunk by chunk, on every core when it pays.

A metric's statistics are per example, so scoring a corpus in chunks and stacking the
chunks' rows gives exactly the array one pass over the whole corpus gives: the same float64
values in the same order, hence the same sums, scores and bootstrap. Chunking also bounds
memory: a chunk's texts and preprocessed forms (n-gram tables) are released once its rows
are stored, so what stays is ``examples × statistics`` numbers, not text.

Chunks are scored by a process pool when ``jobs > 1``; by default (``jobs=None``) that is
every available core once a corpus has at least :data:`PARALLEL_MIN_EXAMPLES` examples,
below which starting workers costs more than it saves. The functions that take ``jobs`` and
``dask`` score through the backend those settings pick (:mod:`goldgate.execution.registry`);
the in-process and pool backends (:mod:`goldgate.execution.local`) score with this module's
:func:`score_here` and :func:`score_in_pool`.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

import numpy as np

from goldgate.errors import GoldgateError
from goldgate.execution.registry import select_backend
from goldgate.metrics import PARALLEL_MIN_EXAMPLES
from goldgate.metrics.batch import BatchMetric
from goldgate.metrics.engine import MetricComputeError, score_corpus, stat_arrays
from goldgate.model.compact_stats import CompactBuilder, CompactStats

if TYPE_CHECKING:
    from goldgate.execution.backend import Chunk, FloatArray, MetricPairs
    from goldgate.model.config import DaskConfig

#: Examples per chunk: large enough that pickling a chunk is cheap beside scoring it, small
#: enough that a chunk's n-gram tables stay a few MB and every worker gets several chunks.
DEFAULT_CHUNK_SIZE = 2_000


class ScoringWorkerError(GoldgateError):
    """A scoring worker process died (killed, out of memory): no partial score is given."""


def available_cpus() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def resolve_jobs(jobs: int | None, n_examples: int) -> int:
    """How many processes score ``n_examples``: ``jobs`` when given, else automatic."""
    if jobs is not None:
        return max(1, jobs)
    return available_cpus() if n_examples >= PARALLEL_MIN_EXAMPLES else 1


def chunked(
    candidates: Sequence[str], references: Sequence[Sequence[str]], size: int
) -> Iterator[Chunk]:
    """Consecutive chunks of at most ``size`` examples."""
    for start in range(0, len(candidates), size):
        yield candidates[start : start + size], references[start : start + size]


def score_arrays(
    metrics: MetricPairs,
    candidates: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    jobs: int | None = None,
    chunk_size: int | None = None,
    dask: DaskConfig | str | None = None,
) -> list[FloatArray]:
    """Per-example statistics of every metric, one ``(n, k)`` float64 array each.

    Equal, value for value, to the rows ``score_corpus`` gives for the whole corpus, for any
    ``jobs``, ``chunk_size`` and ``dask`` (a Dask cluster's configuration, or its scheduler
    address, or ``local``).
    """
    size = chunk_size or DEFAULT_CHUNK_SIZE
    return score_chunks(
        metrics,
        chunked(candidates, references, size),
        total=len(candidates),
        jobs=resolve_jobs(jobs, len(candidates)),
        dask=dask,
    )


def score_chunks(
    metrics: MetricPairs,
    chunks: Iterable[Chunk],
    *,
    total: int | None = None,
    jobs: int = 1,
    dask: DaskConfig | str | None = None,
) -> list[FloatArray]:
    """Score a stream of chunks in order; the rows of all chunks stacked, per metric.

    ``chunks`` is consumed lazily (at most ``2 × jobs`` chunks are in flight), so a caller
    can read texts from disk as they are scored. ``total``, when known, lets the result be
    filled in place instead of concatenated.
    """
    pairs = list(metrics)
    parts = select_backend(jobs=jobs, dask=dask).score_chunks(pairs, chunks, total)
    return stack_parts(pairs, parts, total)


def chunk_arrays(pairs: MetricPairs, chunk: Chunk) -> list[FloatArray]:
    """One chunk's statistics, one ``(rows, k)`` array per metric."""
    candidates, references = chunk
    if not candidates:  # an empty chunk of a stream adds no rows
        return [np.zeros((0, len(metric.stat_names)), dtype=np.float64) for _, metric in pairs]
    if not any(isinstance(metric, BatchMetric) for _, metric in pairs):
        return stat_arrays(pairs, candidates, references)
    results = score_corpus(pairs, candidates, references)
    arrays = []
    for (_, metric), result in zip(pairs, results, strict=True):
        width = len(result.stats[0]) if result.stats else len(metric.stat_names)
        array = np.asarray(result.stats, dtype=np.float64).reshape(len(result.stats), width)
        arrays.append(array)
    return arrays


def score_here(pairs: MetricPairs, chunks: Iterable[Chunk]) -> Iterator[list[FloatArray]]:
    """Each chunk's statistics, computed in this process as the chunks are consumed."""
    for chunk in chunks:
        yield chunk_arrays(pairs, chunk)


# The worker's metrics, set once per process by the pool's initializer.
_WORKER_METRICS: MetricPairs = ()


def _init_worker(payload: bytes) -> None:
    global _WORKER_METRICS
    _WORKER_METRICS = pickle.loads(payload)


def _score_in_worker(chunk: Chunk) -> list[FloatArray]:
    return chunk_arrays(_WORKER_METRICS, chunk)


def picklable(pairs: MetricPairs) -> bool:
    """Whether the metrics can travel to a worker process (a local function cannot)."""
    try:
        pickle.dumps(list(pairs))
    except Exception:  # any object a user's metric holds may refuse in its own way
        return False
    return True


def _pool_context() -> Any:
    # forkserver: workers do not inherit the threads a callable system may have started (fork
    # would), yet start faster than spawn; spawn where the OS has nothing else.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def score_in_pool(
    pairs: MetricPairs, chunks: Iterable[Chunk], jobs: int
) -> Iterator[list[FloatArray]]:
    """Each chunk's statistics, computed by a pool of ``jobs`` processes, in chunk order (at
    most ``2 × jobs`` chunks in flight); a worker that dies is a :class:`ScoringWorkerError`."""
    payload = pickle.dumps(list(pairs))
    executor = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=_pool_context(),
        initializer=_init_worker,
        initargs=(payload,),
    )
    pending: deque[Future[list[FloatArray]]] = deque()
    try:
        for chunk in chunks:
            try:
                future = executor.submit(_score_in_worker, (list(chunk[0]), list(chunk[1])))
            except BrokenProcessPool:  # a worker died before its result was asked for
                raise _worker_died() from None
            pending.append(future)
            if len(pending) >= 2 * jobs:
                yield _result(pending.popleft())
        while pending:
            yield _result(pending.popleft())
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def _result(future: Future[list[FloatArray]]) -> list[FloatArray]:
    try:
        return future.result()
    except BrokenProcessPool:
        raise _worker_died() from None


def _worker_died() -> ScoringWorkerError:
    return ScoringWorkerError(
        "a scoring worker process died (killed or out of memory); no score was computed;"
        " run again, or with --jobs 1"
    )


def _placed(
    parts: Iterable[list[FloatArray]],
) -> Iterator[tuple[int, int, list[FloatArray]]]:
    """Each part with the corpus rows it starts and stops at; an error in a part is named at
    its corpus position."""
    row = 0
    iterator = iter(parts)
    while True:
        try:
            part = next(iterator)
        except StopIteration:
            return
        except MetricComputeError as exc:
            # The chunk counted from its own first example: say where it is in the corpus.
            raise MetricComputeError(exc.spec, exc.index + row, exc.problem) from None
        stop = row + (part[0].shape[0] if part else 0)
        yield row, stop, part
        row = stop


def stack_parts(
    pairs: MetricPairs, parts: Iterable[list[FloatArray]], total: int | None
) -> list[FloatArray]:
    """The parts' rows stacked per metric; an error in a part is named at its corpus position."""
    collected: list[list[FloatArray]] = []
    out: list[FloatArray] | None = None
    row = 0
    for start, stop, part in _placed(parts):
        row = stop
        if total is None:
            collected.append(part)
        else:
            if out is None:
                out = [np.empty((total, array.shape[1]), dtype=np.float64) for array in part]
            for target, array in zip(out, part, strict=True):
                target[start:stop] = array
    if total is None and collected:
        out = [
            np.concatenate([part[index] for part in collected], axis=0)
            for index in range(len(pairs))
        ]
    if out is None:
        return [np.zeros((0, len(m.stat_names)), dtype=np.float64) for _, m in pairs]
    if total is not None and row != total:
        raise ValueError(f"scored {row} examples, expected {total}")
    for (spec, _), array in zip(pairs, out, strict=True):
        _check_sums(spec, array)
    return out


def score_chunks_compact(
    metrics: MetricPairs,
    chunks: Iterable[Chunk],
    *,
    total: int,
    jobs: int = 1,
    dask: DaskConfig | str | None = None,
) -> list[CompactStats]:
    """``score_chunks``, each metric's statistics compacted a chunk at a time as they arrive:
    ``(1, n, k)`` compact statistics equal to ``CompactStats.of`` of its rows, without the
    float64 array of every example ever being held."""
    pairs = list(metrics)
    parts = select_backend(jobs=jobs, dask=dask).score_chunks(pairs, chunks, total)
    return compact_parts(pairs, parts, total)


def compact_parts(
    pairs: MetricPairs, parts: Iterable[list[FloatArray]], total: int
) -> list[CompactStats]:
    """The parts' rows compacted per metric as they arrive (see :func:`score_chunks_compact`);
    an error in a part is named at its corpus position."""
    builders: list[CompactBuilder] | None = None
    row = 0
    for _, stop, part in _placed(parts):
        if builders is None:
            builders = [CompactBuilder(array.shape[1]) for array in part]
        for builder, array in zip(builders, part, strict=True):
            builder.add(array)
        row = stop
    if row != total:
        raise ValueError(f"scored {row} examples, expected {total}")
    if builders is None:
        empty = [np.zeros((1, 0, len(m.stat_names)), dtype=np.float64) for _, m in pairs]
        return [CompactStats.of(array) for array in empty]
    stats = [builder.build() for builder in builders]
    for (spec, _), compact in zip(pairs, stats, strict=True):
        fractions = [c for c in compact.columns if c.dtype == np.float64]
        with np.errstate(over="ignore", invalid="ignore"):
            finite = all(np.isfinite(column.sum()) for column in fractions)
        if not finite:  # only fractions can add up to infinity; the error names the row
            _check_sums(spec, compact.expand()[0])
    return stats


def _check_sums(spec: str, array: FloatArray) -> None:
    # Each chunk's rows were checked finite where they were scored; only the corpus sum can
    # still overflow (a custom metric's huge statistics), as score_corpus refuses it too.
    with np.errstate(over="ignore", invalid="ignore"):
        if np.all(np.isfinite(array.sum(axis=0))):
            return
    largest = int(np.abs(array).max(axis=1).argmax())
    value = max(array[largest].tolist(), key=abs)
    raise MetricComputeError(
        spec, largest, f"gave statistics too large to add up (the largest: {value!r})"
    )
