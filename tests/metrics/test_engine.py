"""The engine preprocesses each text once per shared key, whatever the order of metrics."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

from goldgate.metrics.base import Metric, MetricOptions, Stats
from goldgate.metrics.engine import score_corpus


class _Options(MetricOptions):
    pass


class _Counting(Metric[_Options]):
    """Counts candidate tokens; records every text it preprocesses."""

    name = "counting"
    Options: ClassVar[type[MetricOptions]] = _Options
    stat_names = ("tokens",)

    def __init__(self, key: str, calls: Counter[tuple[str, str]]) -> None:
        super().__init__(_Options())
        self.key = key
        self.calls = calls

    def preprocess_key(self) -> Any:
        return self.key

    def preprocess(self, text: str) -> list[str]:
        self.calls[(self.key, text)] += 1
        return text.split()

    def example_stats(self, candidate: Any, references: Sequence[Any]) -> Stats:
        return (float(len(candidate)),)

    def score_stats(self, stats: Sequence[float]) -> float:
        return stats[0]

    def signature_fields(self) -> list[tuple[str, str]]:
        return [("key", self.key)]


def test_shared_key_preprocesses_once_even_when_not_adjacent() -> None:
    calls: Counter[tuple[str, str]] = Counter()
    metrics = [
        ("a1", _Counting("a", calls)),
        ("b", _Counting("b", calls)),
        ("a2", _Counting("a", calls)),
    ]
    candidates = ["x y", "x y", "z"]
    references = [["r"], ["r", "x y"], ["s t"]]
    results = score_corpus(metrics, candidates, references)
    assert [result.corpus_score().score for result in results] == [5.0, 5.0, 5.0]
    texts = {"x y", "z", "r", "s t"}
    assert calls == Counter({(key, text): 1 for key in "ab" for text in texts})
