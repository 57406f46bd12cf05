"""What ``goldgate history`` shows: recorded rows, the blessed timeline and flaky examples."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from goldgate.history.store import ExampleRun, HistoryRow, HistoryStore, read_safely
from goldgate.history.timeline import Bless, blessed_timeline
from goldgate.io.git import GitFailed
from goldgate.model.config import Config

#: flaky examples listed at most
FLAKY_LIMIT = 20
#: the newest runs (per suite and metric) searched for flaky examples
FLAKY_RUNS = 200


@dataclass(frozen=True)
class TrendPoint:
    """A metric's blessed score at one commit."""

    commit: str
    date: str
    subject: str
    score: float


@dataclass(frozen=True)
class FlakyExample:
    """An example whose score changed between runs of the same system (its settings at the
    same clean commit) while its golden record and the metric's signature did not."""

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
    exported: Path | None = None,
) -> HistoryView:
    """Read the store (if any; or the ``exported`` runs file instead) and the baseline's git
    history, filtered alike."""
    warnings: list[str] = []
    rows: list[HistoryRow] = []
    found_flaky: list[FlakyExample] = []
    path = config.history.path if config.history is not None else None
    if exported is not None:
        from goldgate.history.exported import read_exported

        rows, warnings = read_exported(
            exported, suites=suites, metrics=metrics, since=since, branch=branch, last=last
        )
    elif path is not None and Path(path).exists():

        def read(store: HistoryStore) -> tuple[list[HistoryRow], list[FlakyExample]]:
            found = store.rows(
                suites=suites, metrics=metrics, since=since, branch=branch, last=last
            )
            return found, _flaky(store, found) if flaky else []

        # a store that cannot be read (damaged, locked, too slow) costs the rows, never the
        # command: the blessed timeline is still shown
        nothing: tuple[list[HistoryRow], list[FlakyExample]] = ([], [])
        (rows, found_flaky), warnings = read_safely(Path(path), read, nothing)
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


def _flaky(store: HistoryStore, rows: Sequence[HistoryRow]) -> list[FlakyExample]:
    """Examples whose score changed between consecutive runs of one system while their
    golden record's digest did not.

    One system is one fingerprint of the system's settings at one clean commit, with one
    metric signature: a score that changed across commits may have changed on purpose (a new
    prompt, a new model, new predictions committed), and a dirty tree's changes are not known,
    so neither is counted; only a score that moved under the same code, settings and golden
    record is. Only the newest :data:`FLAKY_RUNS` runs of each suite and metric are read:
    flakiness is a property of the system as it is now, and an unbounded history would make
    every ``goldgate history --last 0`` read every per-example score ever recorded.
    """
    runs: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        runs.setdefault((row.suite, row.metric), []).append(row.run_id)
    found: list[FlakyExample] = []
    for (suite, metric), run_ids in runs.items():
        series = store.example_runs(suite, metric, run_ids[-FLAKY_RUNS:])
        flips: dict[str, int] = {}
        seen: dict[str, list[float]] = {}
        previous: dict[tuple[str, str], ExampleRun] = {}  # the last run of each system
        for run in series:
            for example_id, score in zip(run.ids, run.scores, strict=True):
                seen.setdefault(example_id, []).append(score)
            if run.system is None:
                continue  # outside git or a dirty tree: a change may have been made on purpose
            before = previous.get(run.system)
            if before is not None:
                _count_flips(before, run, flips)
            previous[run.system] = run
        found += [
            FlakyExample(suite, metric, example_id, count, len(seen[example_id]), seen[example_id])
            for example_id, count in flips.items()
        ]
    found.sort(key=lambda f: (-f.flips, f.suite, f.metric, f.id))
    return found[:FLAKY_LIMIT]


def _count_flips(before: ExampleRun, after: ExampleRun, flips: dict[str, int]) -> None:
    if before.ids == after.ids:  # the usual case: compare whole arrays at once
        a = np.asarray(before.scores, dtype=np.float64)
        b = np.asarray(after.scores, dtype=np.float64)
        same_record = np.asarray(before.digests) == np.asarray(after.digests)
        changed = ~np.isclose(a, b, rtol=0, atol=1e-9, equal_nan=True) & same_record
        for index in np.flatnonzero(changed).tolist():
            flips[after.ids[index]] = flips.get(after.ids[index], 0) + 1
        return
    old = {i: (d, s) for i, d, s in zip(before.ids, before.digests, before.scores, strict=True)}
    for example_id, digest, score in zip(after.ids, after.digests, after.scores, strict=True):
        was = old.get(example_id)
        if was is not None and was[0] == digest and not _same(was[1], score):
            flips[example_id] = flips.get(example_id, 0) + 1


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9


def last_run_line(config: Config) -> tuple[str | None, list[str]]:
    """The newest recorded run as one JSON line (scores, not per-example), or None; and the
    warnings of reading it (rows set aside, a store that could not be read)."""
    import json

    path = config.history.path if config.history is not None else None
    if path is None or not Path(path).exists():
        return None, []

    def read(store: HistoryStore) -> list[HistoryRow]:
        return store.rows(last=1)

    no_rows: list[HistoryRow] = []
    newest, warnings = read_safely(Path(path), read, no_rows)
    if not newest:
        return None, warnings
    run_id = max(row.run_id for row in newest)
    rows = [row for row in newest if row.run_id == run_id]
    first = rows[0]
    document = {
        "created_at": first.created_at,
        "commit": first.commit,
        "branch": first.branch,
        "dirty": first.dirty,
        "message": first.message,
        "source": first.source,
        "verdict": first.verdict,
        "scores": [
            {
                "suite": row.suite,
                "metric": row.metric,
                "signature": row.signature,
                "score": row.score,
                "low": row.low,
                "high": row.high,
                "baseline": row.baseline,
                "status": row.status,
            }
            for row in rows
        ],
    }
    # the store's rows are finite (others are set aside): allow_nan=False makes JSON that
    # every reader takes a guarantee, never an ``Infinity`` token
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False), (
        warnings
    )


def score_range(scores: Iterable[float]) -> tuple[float, float]:
    """The range a series' confidence band is drawn and shown within.

    The history keeps a metric's name, not its scale, so the scale is read off the scores: a
    series whose every score lies on the 0–100 points scale (every built-in metric's, TER's
    and length_ratio's too while they stay within it) is taken to be on it, and its band,
    the baseline plus the interval of a difference, which can reach past 100 (or below 0), is
    cut there; any other series is not cut.
    """
    values = list(scores)
    if values and min(values) >= 0.0 and max(values) <= 100.0:
        return 0.0, 100.0
    return -math.inf, math.inf


def within(value: float | None, bounds: tuple[float, float]) -> float | None:
    """``value`` cut to ``bounds`` (None stays None)."""
    return None if value is None else min(max(value, bounds[0]), bounds[1])


def finite_or_none(values: Sequence[float]) -> list[float | None]:
    """``values`` for JSON: NaN (an example with no score) and infinities as null."""
    return [v if math.isfinite(v) else None for v in values]
