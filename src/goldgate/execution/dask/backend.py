"""The Dask backend: a run's work on the cluster at ``engine.dask`` (or ``--dask ADDRESS``).

Chunks are scored and a callable system's calls made on the workers
(:mod:`goldgate.execution.dask.engine`); a golden set or predictions given as a glob or URL of
many files are read there, and a predictions suite of such files is joined and scored there
(:mod:`goldgate.execution.dask.data`). A golden set in one file is read here, as a local run
reads it. The registry (:mod:`goldgate.execution.registry`) imports this module only when the
configuration names a cluster.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar

from goldgate.execution.backend import (
    CallableWork,
    CallT,
    SuiteScoring,
    dataset_location,
)
from goldgate.execution.dask.data import load_goldens_on_dask, score_predictions_on_dask
from goldgate.execution.dask.engine import client_for, run_callable_on_dask, score_on_dask
from goldgate.model.goldens import GoldenSet, is_dataset, load_goldens

if TYPE_CHECKING:
    from goldgate.execution.backend import Chunk, FloatArray, MetricPairs
    from goldgate.model.config import Config, DaskConfig
    from goldgate.terminal.progress import ProgressReporter

T = TypeVar("T")


class DaskBackend:
    """The work of a run on one Dask cluster."""

    def __init__(self, *, jobs: int | None = None, dask: DaskConfig | str | None = None) -> None:
        del jobs  # the cluster's workers, not processes here, do the work
        if dask is None:
            raise ValueError("the Dask backend needs a cluster: engine.dask")
        #: the cluster's configuration, its scheduler address or ``local``
        self.cluster = dask

    def score_chunks(
        self, pairs: MetricPairs, chunks: Iterable[Chunk], total: int | None
    ) -> Iterable[list[FloatArray]]:
        return score_on_dask(self.cluster, pairs, chunks)

    def run_calls(self, work: CallableWork[CallT]) -> None:
        run_callable_on_dask(
            client_for(self.cluster),
            work.system,
            work.calls,
            work.deliver,
            root=str(work.root),
            checked=work.checked,
            call_error=work.call_error,
            timeout_error=work.timeout_error,
        )

    def read_goldens(self, config: Config, name: str) -> GoldenSet:
        suite = config.suites[name]
        if is_dataset(suite.goldens_location):
            return load_goldens_on_dask(config, name)
        return load_goldens(suite.goldens, name)

    def partitioned(self, config: Config, name: str) -> bool:
        # A command or callable needs every record here: its golden set is gathered instead.
        on_cluster = dataset_location(config, name) is not None
        return on_cluster and config.system_for(name).kind == "predictions"

    def score_partitioned(
        self,
        config: Config,
        name: str,
        scoring: SuiteScoring[T],
        progress: ProgressReporter | None,
    ) -> T:
        return score_predictions_on_dask(config, name, scoring, progress)
