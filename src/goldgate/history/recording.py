"""A finished run → a :class:`~goldgate.history.store.RunRecord` appended to the store."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from goldgate.history.store import MetricRecord, RunRecord, SuiteRecord, append_safely
from goldgate.io.git import WorkTree, work_tree
from goldgate.model.config import Config
from goldgate.model.example_table import ExampleTable, example_table
from goldgate.model.golden_hashing import record_digest
from goldgate.model.goldens import loaded_digests
from goldgate.model.result import CheckStatus, RunResult, SuiteResult

#: the worst status a metric's checks reached wins; a metric with no check has no status
_SEVERITY = {
    CheckStatus.SKIPPED: 0,
    CheckStatus.PASS: 1,
    CheckStatus.IMPROVED: 2,
    CheckStatus.FORGIVEN: 3,
    CheckStatus.FAIL: 4,
}


def config_hash(config: Config) -> str:
    """A short hash of the configuration as written (the file), else as parsed."""
    if config.source is not None:
        try:
            return hashlib.sha256(config.source.read_bytes()).hexdigest()[:16]
        except OSError:
            pass
    text = config.model_dump_json(exclude={"root", "source"})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def system_fingerprint(config: Config, tree: WorkTree) -> str:
    """What makes the system the same: every suite's system settings and the code's commit.

    A dirty tree is a different system (its changes are unknown), so it never matches.
    """
    systems = {name: config.system_for(name).model_dump(mode="json") for name in config.suites}
    data = json.dumps([systems, tree.commit, tree.dirty], sort_keys=True, default=str)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]


def run_record(
    result: RunResult,
    config: Config,
    *,
    tree: WorkTree | None = None,
    source: str = "run",
    examples: bool = True,
) -> RunRecord:
    """What the history keeps of ``result``."""
    tree = work_tree(config.root) if tree is None else tree
    suites: list[SuiteRecord] = []
    metrics: list[MetricRecord] = []
    for suite in result.suites:
        if suite.error is not None:
            suites.append(SuiteRecord(suite.name, suite.verdict.value))
            continue
        # read as columns: a row is not built per example (nor a score looked up per row)
        table = example_table(suite.examples)
        keep = examples and len(table) > 0
        suites.append(
            SuiteRecord(
                suite.name,
                suite.verdict.value,
                ids=table.ids if keep else (),
                digests=_digests(suite, table) if keep else (),
            )
        )
        statuses = _statuses(suite)
        for summary in suite.metrics:
            low = high = None
            if summary.interval is not None and summary.baseline is not None:
                low = summary.baseline + summary.interval.low
                high = summary.baseline + summary.interval.high
            metrics.append(
                MetricRecord(
                    suite=suite.name,
                    metric=summary.metric,
                    signature=summary.signature,
                    score=summary.current,
                    low=low,
                    high=high,
                    baseline=summary.baseline,
                    status=statuses.get(summary.metric),
                    # NaN where an example has no score on the metric
                    examples=table.current(summary.metric) if keep else (),
                )
            )
        metrics += category_records(suite, statuses)
    return RunRecord(
        created_at=result.created_at,
        verdict=result.verdict.value,
        goldgate_version=result.goldgate_version,
        commit=tree.commit,
        branch=tree.branch,
        dirty=tree.dirty,
        message=tree.message,
        config_hash=config_hash(config),
        system=system_fingerprint(config, tree),
        source=source,
        suites=tuple(suites),
        metrics=tuple(metrics),
    )


#: the prefix of a category's series in the history (beside the metrics' own)
CATEGORY_PREFIX = "category:"


def category_records(suite: SuiteResult, statuses: dict[str, str]) -> list[MetricRecord]:
    """Each category's count of current outputs as a series of its own (``category:empty``),
    the blessed count as its baseline: the history charts failure modes like scores."""
    found = suite.diagnosis
    if found is None:
        return []
    return [
        MetricRecord(
            suite=suite.name,
            metric=f"{CATEGORY_PREFIX}{name}",
            signature=f"diagnosis:{name}|v{found.detectors.get(name, 0)}",
            score=float(counts.current),
            baseline=None if counts.baseline is None else float(counts.baseline),
            status=statuses.get(name),
        )
        for name, counts in found.categories.items()
        # a mode found on neither side is not recorded: a clean run adds no series
        if counts.current or counts.baseline
    ]


def record_run(result: RunResult, config: Config, *, source: str = "run") -> list[str]:
    """Append ``result`` to the configured history; returns warnings. Never raises a store error.

    Nothing is recorded when the configuration says ``history: off``.
    """
    if config.history is None or config.history.path is None:
        return []
    record = run_record(result, config, source=source, examples=config.history.examples)
    _, warnings = append_safely(Path(config.history.path), record)
    return warnings


def _digests(suite: SuiteResult, table: ExampleTable) -> Sequence[str]:
    # The golden set just read has them already: the run's table was given them, or the
    # set is still held (the same content hash, the same digests).
    given = table.record_digests()
    if given is not None:
        return given
    known = loaded_digests(suite.golden_hash)
    if known is not None:
        digests = known.of(table.ids)
        if digests is not None:
            return digests
    return [record_digest(*fields) for fields in table.golden_fields()]


def _statuses(suite: SuiteResult) -> dict[str, str]:
    worst: dict[str, CheckStatus] = {}
    for check in suite.checks:
        if check.slice is not None:
            continue
        now = worst.get(check.metric)
        if now is None or _SEVERITY[check.status] > _SEVERITY[now]:
            worst[check.metric] = check.status
    return {metric: status.value for metric, status in worst.items()}
