"""The seam between the pipeline and where its work runs: the :class:`Backend` protocol.

Three backends implement it: in this process, in a pool of processes on this machine
(:mod:`goldgate.execution.local`) and on a Dask cluster (:mod:`goldgate.execution.dask`);
:mod:`goldgate.execution.registry` picks one from the configuration's ``engine``. A backend

- scores chunks of a corpus with a suite's metrics, each chunk's per-example statistics in
  chunk order (equal, value for value, whichever backend computes them);
- makes a callable system's calls;
- reads a suite's golden set, and may score a predictions suite where its files are (a glob or
  URL of many files, on a cluster): a backend that reads files here refuses such a location
  with :func:`needs_cluster`.

This module also holds the vocabulary backends exchange (a chunk, its statistics), so that
every backend and the pipeline can import it without importing one another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeAlias, TypeVar

from goldgate.errors import SystemRunError, UsageError
from goldgate.model.goldens import is_dataset

if TYPE_CHECKING:
    # Types only: a system that asks a backend for its calls imports neither numpy nor metrics.
    import numpy as np
    import numpy.typing as npt

    from goldgate.metrics.base import Metric
    from goldgate.model.config import Config, SystemConfig
    from goldgate.model.golden_records import GoldenRecord
    from goldgate.model.goldens import GoldenSet
    from goldgate.terminal.progress import ProgressReporter

    FloatArray: TypeAlias = npt.NDArray[np.float64]
    #: A chunk of a corpus: candidates and, aligned with them, each candidate's references.
    Chunk: TypeAlias = tuple[Sequence[str], Sequence[Sequence[str]]]
    MetricPairs: TypeAlias = Sequence[tuple[str, Metric[Any]]]


class SystemCall(Protocol):
    """One call of a system, as a backend sees it: the golden record whose input it is given."""

    @property
    def record(self) -> GoldenRecord: ...


T = TypeVar("T")
CallT = TypeVar("CallT", bound=SystemCall)


@dataclass(frozen=True)
class CallableWork(Generic[CallT]):
    """A callable system's calls to make, and what a backend needs to make them.

    The system gives both ways of calling: ``here`` makes every call in this process (its
    threads or event loop, with ``os._exit`` guarded), and the hooks check a remote call's
    output and word its errors as a local call's would be worded.
    """

    system: SystemConfig
    calls: Sequence[CallT]
    deliver: Callable[[CallT, str], None]
    root: Path
    here: Callable[[], None]
    checked: Callable[[Any, CallT, str], str]
    call_error: Callable[[BaseException, CallT, str], SystemRunError]
    timeout_error: Callable[[float, CallT, str], SystemRunError]


@dataclass(frozen=True)
class SuiteScoring(Generic[T]):
    """What the score stage hands a backend that scores a suite where its files are: how to
    create the suite's metrics and how to make a scored suite of what was computed."""

    #: the suite's metrics, created once the backend's own checks of the files passed
    metrics: Callable[[], dict[str, Any]]
    #: golden set, outputs and metrics scored here in one pass (batch metrics)
    from_outputs: Callable[[GoldenSet, dict[str, list[str]], dict[str, Any]], T]
    #: golden set, outputs, metric pairs and their statistics (per sample, per metric)
    from_arrays: Callable[[GoldenSet, dict[str, list[str]], MetricPairs, list[list[FloatArray]]], T]


class Backend(Protocol):
    """Where a run's work runs: scoring, a callable system's calls, reading a suite's files."""

    def score_chunks(
        self, pairs: MetricPairs, chunks: Iterable[Chunk], total: int | None
    ) -> Iterable[list[FloatArray]]:
        """Each chunk's statistics, one ``(rows, k)`` array per metric, in chunk order.

        ``chunks`` is consumed lazily; ``total`` (examples in all chunks), when known, may size
        the work."""
        ...

    def run_calls(self, work: CallableWork[CallT]) -> None:
        """Make every call of a callable system, delivering each output as it arrives."""
        ...

    def read_goldens(self, config: Config, name: str) -> GoldenSet:
        """A suite's golden set."""
        ...

    def partitioned(self, config: Config, name: str) -> bool:
        """Whether this backend scores the suite itself, where its files are
        (:meth:`score_partitioned`); a location it cannot read is an error here."""
        ...

    def score_partitioned(
        self,
        config: Config,
        name: str,
        scoring: SuiteScoring[T],
        progress: ProgressReporter | None,
    ) -> T:
        """Read, join and score a suite of which :meth:`partitioned` said yes."""
        ...


def dataset_location(config: Config, name: str) -> str | None:
    """The first of a suite's locations (golden set, then predictions) that is a glob or a URL
    of many files; None when every one is a file read here."""
    system = config.system_for(name)
    locations = [config.suites[name].goldens_location]
    if system.kind == "predictions":
        locations.append(system.predictions_location(name, config.root))
    return next((place for place in locations if is_dataset(place)), None)


def needs_cluster(name: str, location: str) -> UsageError:
    """The error for a glob or URL when no Dask cluster is configured."""
    return UsageError(
        f"suite {name!r}: {location} is a glob or a URL: such files are read on a Dask"
        " cluster; set engine.dask (or --dask ADDRESS, 'local' for this machine)"
    )
