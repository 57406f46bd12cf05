"""The backends that run on this machine: in this process, and in a pool of processes.

Both read a suite's files here (a glob or URL of many files needs a cluster:
:func:`~goldgate.execution.backend.needs_cluster`) and make a callable system's calls in this
process, as the system's own runner makes them (its threads or event loop; the process pool
scores metrics, it does not call systems). They differ in where chunks are scored: here, or by
``jobs`` worker processes (``jobs`` unset: every core once a corpus is large enough to pay for
starting them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NoReturn, TypeVar

from goldgate.execution.backend import (
    CallableWork,
    CallT,
    SuiteScoring,
    dataset_location,
    needs_cluster,
)
from goldgate.execution.pool import picklable, resolve_jobs, score_here, score_in_pool
from goldgate.model.goldens import GoldenSet, is_dataset, load_goldens

if TYPE_CHECKING:
    from goldgate.execution.backend import Chunk, FloatArray, MetricPairs
    from goldgate.model.config import Config, DaskConfig
    from goldgate.terminal.progress import ProgressReporter

T = TypeVar("T")


class _OnThisMachine:
    """What both local backends do alike: calls and files here."""

    def run_calls(self, work: CallableWork[CallT]) -> None:
        work.here()

    def read_goldens(self, config: Config, name: str) -> GoldenSet:
        suite = config.suites[name]
        if is_dataset(suite.goldens_location):
            raise needs_cluster(name, suite.goldens_location)
        return load_goldens(suite.goldens, name)

    def partitioned(self, config: Config, name: str) -> bool:
        location = dataset_location(config, name)
        if location is not None:
            raise needs_cluster(name, location)
        return False

    def score_partitioned(
        self,
        config: Config,
        name: str,
        scoring: SuiteScoring[T],
        progress: ProgressReporter | None,
    ) -> NoReturn:
        raise needs_cluster(name, dataset_location(config, name) or "the golden set")


class InProcessBackend(_OnThisMachine):
    """Everything in this process (``engine.jobs: 1``)."""

    def __init__(self, *, jobs: int | None = 1, dask: DaskConfig | str | None = None) -> None:
        del jobs, dask  # one process, no cluster: nothing to configure

    def score_chunks(
        self, pairs: MetricPairs, chunks: Iterable[Chunk], total: int | None
    ) -> Iterable[list[FloatArray]]:
        return score_here(pairs, chunks)


class PoolBackend(_OnThisMachine):
    """Chunks scored by ``jobs`` processes (None: every core on a large corpus, else here)."""

    def __init__(self, *, jobs: int | None = None, dask: DaskConfig | str | None = None) -> None:
        del dask  # no cluster: the registry gives the Dask backend when one is set
        self.jobs = jobs

    def score_chunks(
        self, pairs: MetricPairs, chunks: Iterable[Chunk], total: int | None
    ) -> Iterable[list[FloatArray]]:
        jobs = resolve_jobs(self.jobs, total or 0)
        if jobs > 1 and not picklable(pairs):
            jobs = 1  # a metric that cannot travel to a worker (a local function) scores here
        return score_here(pairs, chunks) if jobs <= 1 else score_in_pool(pairs, chunks, jobs)
