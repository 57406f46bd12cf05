"""Small metrics for the gate's unit tests, independent of the built-in metric modules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from goldgate.metrics.base import Metric, MetricOptions, Stats


class _Options(MetricOptions):
    pass


class Accuracy(Metric[_Options]):
    """Right or wrong per example: stats (correct, count); a binary metric."""

    name = "accuracy"
    Options: ClassVar[type[MetricOptions]] = _Options
    stat_names = ("correct", "count")
    binary = True

    def example_stats(self, candidate: Any, references: Sequence[Any]) -> Stats:
        return (float(candidate in references), 1.0)

    def score_stats(self, stats: Sequence[float]) -> float:
        return 100.0 * stats[0] / stats[1] if stats[1] else 0.0

    def signature_fields(self) -> list[tuple[str, str]]:
        return [("kind", "accuracy")]


class Overlap(Metric[_Options]):
    """A ratio of sums (like BLEU's precisions): shared words / candidate words, not binary."""

    name = "overlap"
    Options: ClassVar[type[MetricOptions]] = _Options
    stat_names = ("shared", "total")

    def example_stats(self, candidate: Any, references: Sequence[Any]) -> Stats:
        words = str(candidate).split()
        ref = set(str(references[0]).split())
        return (float(sum(word in ref for word in words)), float(len(words)))

    def score_stats(self, stats: Sequence[float]) -> float:
        return 100.0 * stats[0] / stats[1] if stats[1] else 0.0

    def signature_fields(self) -> list[tuple[str, str]]:
        return [("kind", "overlap")]


def accuracy() -> Accuracy:
    return Accuracy(_Options())


def overlap() -> Overlap:
    return Overlap(_Options())


def right_wrong(pattern: Sequence[bool]) -> list[Stats]:
    """Accuracy stats for a pattern of right (True) and wrong (False) examples."""
    return [(1.0 if ok else 0.0, 1.0) for ok in pattern]


class ErrorRate(Metric[_Options]):
    """Accuracy's complement: wrong (100) or right (0) per example; lower is better, like TER."""

    name = "error_rate"
    Options: ClassVar[type[MetricOptions]] = _Options
    stat_names = ("wrong", "count")
    binary = True
    higher_is_better = False

    def example_stats(self, candidate: Any, references: Sequence[Any]) -> Stats:
        return (float(candidate not in references), 1.0)

    def score_stats(self, stats: Sequence[float]) -> float:
        return 100.0 * stats[0] / stats[1] if stats[1] else 0.0

    def signature_fields(self) -> list[tuple[str, str]]:
        return [("kind", "error_rate")]


def error_rate() -> ErrorRate:
    return ErrorRate(_Options())


def wrong_right(pattern: Sequence[bool]) -> list[Stats]:
    """Error-rate stats for a pattern of right (True) and wrong (False) examples."""
    return [(0.0 if ok else 1.0, 1.0) for ok in pattern]
