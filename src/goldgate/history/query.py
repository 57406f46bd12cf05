"""What ``goldgate history`` shows: recorded rows, the blessed timeline and flaky examples."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from goldgate.config import Config
from goldgate.gitinfo import GitFailed
from goldgate.history.store import HistoryRow, StoreProblem, open_store
from goldgate.history.timeline import Bless, blessed_timeline

#: flaky examples listed at most
FLAKY_LIMIT = 20


@dataclass(frozen=True)
class TrendPoint:
    """A metric's blessed score at one commit."""

    commit: str
    date: str
    subject: str
    score: float


@dataclass(frozen=True)
class FlakyExample:
    """An example whose score changed between runs while its golden record did not."""

    suite: str
    metric: str
    id: str
    flips: int
    runs: int
    scores: list[float]


@dataclass
class HistoryView:
    """Everything the history command, page and JSON show."""

    rows: list[HistoryRow]
    blessed: list[Bless]
    flaky: list[FlakyExample] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    title: str = "goldgate history"

    def series(self) -> dict[tuple[str, str], list[HistoryRow]]:
        """Rows grouped by (suite, metric), each oldest first."""
        grouped: dict[tuple[str, str], list[HistoryRow]] = {}
        for row in self.rows:
            grouped.setdefault((row.suite, row.metric), []).append(row)
        return grouped

    def blessed_trends(self) -> dict[tuple[str, str], list[TrendPoint]]:
        """Per (suite, metric), its blessed score at every bless that holds it, oldest first."""
        return blessed_trends(self.blessed)


def blessed_trends(blessed: Sequence[Bless]) -> dict[tuple[str, str], list[TrendPoint]]:
    """Per (suite, metric), the blessed score at every commit that changed it, oldest first."""
    trends: dict[tuple[str, str], list[TrendPoint]] = {}
    for bless in blessed:
        for key, entry in bless.scores.items():
            points = trends.setdefault(key, [])
            if points and points[-1].score == entry.score:
                continue  # a bless of another suite or metric: this one did not move
            points.append(TrendPoint(bless.commit, bless.date, bless.subject, entry.score))
    return trends


def load_history(
    config: Config,
    *,
    suites: Sequence[str] = (),
    metrics: Sequence[str] = (),
    since: str | None = None,
    branch: str | None = None,
    last: int | None = 10,
    flaky: bool = True,
) -> HistoryView:
    """Read the store (if any) and the baseline's git history, filtered alike."""
    warnings: list[str] = []
    rows: list[HistoryRow] = []
    found_flaky: list[FlakyExample] = []
    path = config.history.path if config.history is not None else None
    if path is not None and Path(path).exists():
        try:
            store, warnings = open_store(Path(path), create=False)
        except StoreProblem as exc:
            warnings.append(f"history: {exc}")
        else:
            with store:
                rows = store.rows(
                    suites=suites, metrics=metrics, since=since, branch=branch, last=last
                )
                if flaky:
                    found_flaky = _flaky(store, rows)
    try:
        blessed = blessed_timeline(config.root, config.baseline)
    except GitFailed as exc:
        blessed = []
        warnings.append(f"no blessed timeline (git): {exc}")
    if suites or metrics:
        for bless in blessed:
            for key in list(bless.scores):
                if (suites and key[0] not in suites) or (metrics and key[1] not in metrics):
                    del bless.scores[key]
    if since is not None:
        blessed = [b for b in blessed if _utc(b.date) >= since]
    return HistoryView(rows=rows, blessed=blessed, flaky=found_flaky, warnings=warnings)


def _utc(date: str) -> str:
    from datetime import UTC, datetime

    return datetime.fromisoformat(date).astimezone(UTC).isoformat(timespec="seconds")


def _flaky(store: object, rows: Sequence[HistoryRow]) -> list[FlakyExample]:
    from goldgate.history.store import HistoryStore

    assert isinstance(store, HistoryStore)
    runs: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        runs.setdefault((row.suite, row.metric), []).append(row.run_id)
    found: list[FlakyExample] = []
    for (suite, metric), run_ids in runs.items():
        series = store.example_series(suite, metric, run_ids)
        for example_id, points in series.examples.items():
            flips = 0
            for (_, digest_a, a), (_, digest_b, b) in itertools.pairwise(points):
                if digest_a == digest_b and not _same(a, b):
                    flips += 1
            if flips:
                found.append(
                    FlakyExample(
                        suite, metric, example_id, flips, len(points), [p[2] for p in points]
                    )
                )
    found.sort(key=lambda f: (-f.flips, f.suite, f.metric, f.id))
    return found[:FLAKY_LIMIT]


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9
