"""The metric contract: texts → additive per-example statistics → scores.

Every metric turns one example (a candidate and its references) into a flat tuple of
numbers that can be summed across examples. A corpus score, a tag slice and a bootstrap
resample are all computed from such sums, so nothing is ever tokenised twice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from goldgate import __version__

Stats = tuple[float, ...]


class MetricOptions(BaseModel):
    """Base of every metric's options: strict about unknown keys, immutable once parsed."""

    model_config = ConfigDict(extra="forbid", frozen=True)


OptionsT = TypeVar("OptionsT", bound=MetricOptions)


@dataclass(frozen=True)
class Signature:
    """Every setting that changes a metric's value, printed sacrebleu-style.

    ``nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:0.1.0``
    """

    metric: str
    fields: tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        return "|".join(f"{key}:{value}" for key, value in self.fields)

    def with_fields(self, **extra: str) -> Signature:
        return Signature(self.metric, self.fields + tuple(extra.items()))


@dataclass(frozen=True)
class Score:
    """A metric's score on the 0–100 scale, with its signature and components."""

    metric: str
    score: float
    signature: str
    components: dict[str, Any] = field(default_factory=dict)


def nrefs_label(reference_counts: Sequence[int]) -> str:
    """sacrebleu's nrefs field: the count when every example has the same, else 'var'."""
    distinct = set(reference_counts)
    if len(distinct) == 1:
        return str(next(iter(distinct)))
    return "var" if distinct else "0"


class Metric(ABC, Generic[OptionsT]):
    """A reference-based metric. Subclasses set ``name``, ``Options`` and the four hooks.

    The pipeline the engine runs:

    1. ``preprocess(text)`` for every candidate and reference. Metrics whose ``preprocess_key``
       is equal share the result, so ROUGE-1, ROUGE-2 and ROUGE-L tokenise a text once.
    2. ``example_stats(candidate, references)`` → additive statistics for one example.
    3. ``score_stats(summed)`` → the corpus score (0–100) from summed statistics.
    4. ``example_score(stats)`` → the sentence-level score of one example (0–100).
    """

    name: ClassVar[str]
    Options: ClassVar[type[MetricOptions]]
    #: Names of the additive statistics, in order.
    stat_names: ClassVar[tuple[str, ...]] = ()
    #: True when an example is simply right or wrong (0 or 100), so flips can be counted.
    binary: ClassVar[bool] = False

    def __init__(self, options: OptionsT) -> None:
        self.options: OptionsT = options

    # -- text preprocessing, shared between metrics with the same key ---------------------
    def preprocess_key(self) -> Hashable:
        """Identifies what ``preprocess`` does; metrics with equal keys share its results."""
        return (type(self).__name__, self.options)

    def preprocess(self, text: str) -> Any:
        """Turn a text into what ``example_stats`` consumes (tokens, n-gram counts, ...)."""
        return text

    # -- statistics -------------------------------------------------------------------------
    @abstractmethod
    def example_stats(self, candidate: Any, references: Sequence[Any]) -> Stats:
        """Additive statistics of one example from preprocessed texts."""

    @abstractmethod
    def score_stats(self, stats: Sequence[float]) -> float:
        """The corpus score on the 0–100 scale from statistics summed over examples."""

    def example_score(self, stats: Sequence[float]) -> float:
        """The sentence-level score of one example; the corpus formula by default."""
        return self.score_stats(stats)

    def components(self, stats: Sequence[float]) -> dict[str, Any]:
        """Extra figures reported beside the score (precision, recall, brevity penalty...)."""
        return {}

    # -- signature --------------------------------------------------------------------------
    @abstractmethod
    def signature_fields(self) -> list[tuple[str, str]]:
        """Settings that change this metric's value, as (key, value) pairs."""

    def signature(self, reference_counts: Sequence[int] = ()) -> Signature:
        """The signature, with nrefs from the data and goldgate's version appended."""
        fields = [("nrefs", nrefs_label(reference_counts))]
        fields += self.signature_fields()
        fields.append(("version", __version__))
        return Signature(self.name, tuple(fields))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options!r})"


def sum_stats(rows: Sequence[Sequence[float]], width: int | None = None) -> list[float]:
    """Column sums of per-example statistics (an empty corpus sums to zeros)."""
    if not rows:
        return [0.0] * (width or 0)
    return [sum(column) for column in zip(*rows, strict=True)]
