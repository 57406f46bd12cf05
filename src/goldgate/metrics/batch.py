"""Metrics that need the whole corpus at once, and state: a model, an on-disk cache, a server.

The n-gram metrics are pure functions of one example's texts. An embedding metric wants to
encode thousands of texts in one batch with a model it loads once; an LLM judge wants many
HTTP calls in flight and a cache of judgments. Both still end in the same contract — additive
per-example statistics — so slices, the bootstrap and the baseline treat them like any other
metric; only how the statistics are obtained differs. The engine calls ``corpus_stats`` once
per candidate set instead of ``example_stats`` once per example.

Where such a metric may read and write (the cache directory) and how relative paths in its
options resolve (the configuration's directory) is a :class:`MetricContext`, bound by whoever
runs it (the runner, ``goldgate score``); a metric never guesses from the process.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldgate.metrics.base import Metric, OptionsT, Stats


@dataclass(frozen=True)
class MetricContext:
    """Where a stateful metric resolves paths, keeps its cache and finds its environment."""

    #: relative model, rubric and function paths in options resolve against this directory
    root: Path
    #: goldgate's cache directory (``.goldgate``); None: cache nothing
    cache_dir: Path | None
    #: the environment that API keys are read from (by the variable name the config gives)
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ), repr=False)

    def resolve(self, path: str) -> Path:
        """A configured path, ``~`` expanded, relative to ``root``."""
        return self.root / Path(path).expanduser()


@dataclass(frozen=True)
class Batch:
    """One candidate set: every example's candidate, references and, where known, input and id."""

    candidates: Sequence[str]
    references: Sequence[Sequence[str]]
    inputs: Sequence[Any] | None = None
    ids: Sequence[str] | None = None
    #: which of a system's samples these candidates are (0 when it gives one per input)
    sample: int = 0

    def example_id(self, index: int) -> str:
        """The example's id, or its 1-based position when the data has no ids."""
        return self.ids[index] if self.ids is not None else f"#{index + 1}"


@dataclass(frozen=True)
class BatchStats:
    """What ``corpus_stats`` returns: statistics per example and an optional note per example."""

    rows: list[Stats]
    #: a short text shown beside an example in reports (a judge's rationale); None for none
    notes: list[str | None] | None = None


@dataclass(frozen=True)
class CallTally:
    """What a metric that calls a service did since it was made: not part of any score."""

    requests: int
    retries: int
    cached: int


class BatchMetric(Metric[OptionsT]):
    """A metric computed over a whole candidate set, with a context for its I/O."""

    def __init__(self, options: OptionsT) -> None:
        super().__init__(options)
        self.context = MetricContext(root=Path.cwd(), cache_dir=None)

    def bind(self, context: MetricContext) -> None:
        """Set where this metric resolves paths and keeps its cache (before it is used)."""
        self.context = context

    def preprocess_key(self) -> Any:
        return ("raw",)

    def call_tally(self) -> CallTally | None:
        """This run's traffic, for a metric that calls a service; None for one that does not."""
        return None

    def example_stats(self, candidate: Any, references: Sequence[Any]) -> Stats:
        """One example alone: a batch of one."""
        return self.corpus_stats(Batch([candidate], [list(references)])).rows[0]

    @abstractmethod
    def corpus_stats(self, batch: Batch) -> BatchStats:
        """Additive statistics of every example of ``batch``, in order."""
