"""The result turned into display dataclasses: the run, its suites, metrics, checks and slices.

Every report reads these, so rounding and wording are defined once (numbers in
:mod:`goldgate.report.formatting`, sentences in :mod:`goldgate.report.sentences`). Nothing here
decides pass or fail: the verdict and every check status come from the result as they are.
Examples are formatted on demand (:mod:`goldgate.report.example_view`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from goldgate import wording
from goldgate.model.result import (
    CheckResult,
    CheckStatus,
    MetricSummary,
    RunResult,
    SuiteResult,
    Verdict,
    gain,
)
from goldgate.report.diagnosis_view import DiagnosisView, diagnosis_view, run_headline
from goldgate.report.formatting import (
    STATUS_ICONS,
    STATUS_LABELS,
    VERDICT_ICONS,
    VERDICT_LABELS,
    direction,
    fmt_delta,
    fmt_interval,
    fmt_level,
    fmt_p,
    fmt_points,
    fmt_threshold,
    round_points,
    sparkline,
    trend_text,
)
from goldgate.report.must_pass_view import MustPassRow, failing_rows
from goldgate.report.ranking import Moves, _gated, ranking_metrics
from goldgate.report.sentences import (
    budget_sentence,
    check_sentence,
    judge_tally,
    suite_notes,
)

# When a metric has several checks, the row shows the one that matters most.
_STATUS_RANK = {
    CheckStatus.FAIL: 0,
    CheckStatus.FORGIVEN: 1,
    CheckStatus.IMPROVED: 2,
    CheckStatus.PASS: 3,
    CheckStatus.SKIPPED: 4,
}


@dataclass(frozen=True)
class MetricRow:
    """One metric of a suite or slice, formatted."""

    metric: str
    signature: str
    higher_is_better: bool
    baseline: str
    current: str
    delta: str
    interval: str
    p_value: str
    direction: str
    status: CheckStatus | None
    status_label: str
    status_icon: str
    delta_value: float | None
    low: float | None
    high: float | None
    #: the blessed trend of a gated metric, ``74.20 → 74.90 → 75.10`` ("" when none)
    trend: str = ""
    #: the same as SVG polyline points in a 60×16 box ("" when fewer than two)
    spark: str = ""


@dataclass(frozen=True)
class CheckRow:
    """One gate check, formatted."""

    id: str
    suite: str
    metric: str
    slice: str | None
    rule: str
    threshold: str
    status: CheckStatus
    status_label: str
    status_icon: str
    message: str
    #: what happened, in words that are exactly true (see :func:`check_sentence`)
    sentence: str
    current: str
    baseline: str
    delta: str
    interval: str
    p_value: str


@dataclass(frozen=True)
class SliceRow:
    """One metric of one tag slice, formatted."""

    tag: str
    n_examples: int
    row: MetricRow


@dataclass(frozen=True)
class SuiteView:
    """One suite, formatted; examples are produced on demand by :func:`example_rows`."""

    name: str
    verdict: Verdict
    verdict_label: str
    verdict_icon: str
    goldens: str
    golden_hash: str
    n_examples: int
    error: str | None
    metric_names: tuple[str, ...]
    metrics: tuple[MetricRow, ...]
    checks: tuple[CheckRow, ...]
    slices: tuple[SliceRow, ...]
    moved_slices: tuple[SliceRow, ...]
    n_regressed: int
    n_improved: int
    n_new: int
    #: plain-text lines on how the run was obtained: golden-set change, cached outputs reused
    notes: tuple[str, ...] = ()
    #: what judging cost, one line per LLM-judge metric
    tallies: tuple[str, ...] = ()
    #: why quality moved (None when the run made no diagnosis)
    diagnosis: DiagnosisView | None = None


@dataclass(frozen=True)
class ReportView:
    """The whole run, formatted."""

    verdict: Verdict
    verdict_label: str
    verdict_icon: str
    headline: str
    created_at: str
    goldgate_version: str
    config: str | None
    baseline: str | None
    baseline_found: bool
    significance: str | None
    level: str
    ci_label: str
    suites: tuple[SuiteView, ...]
    failed_checks: tuple[CheckRow, ...]
    forgiven_checks: tuple[CheckRow, ...]
    improved_checks: tuple[CheckRow, ...]
    n_checks: int
    hints: tuple[str, ...]
    errors: tuple[str, ...]
    #: the must-pass examples that failed, each with its score, output and reference
    must_pass_failures: tuple[MustPassRow, ...] = ()
    #: the run's spend against its budget ("" when no budget is set)
    budget: str = ""
    #: ``why: …``: the first regressed suite's diagnosis headline ("" when none regressed)
    why: str = ""


def build_view(result: RunResult) -> ReportView:
    """Format a run result for display."""
    alpha = result.significance.alpha if result.significance is not None else None
    suites = tuple(_suite_view(suite, alpha) for suite in result.suites)
    checks = [row for suite in suites for row in suite.checks]
    by_status = {status: [c for c in checks if c.status is status] for status in CheckStatus}
    significance = None
    level = "CI"
    if result.significance is not None:
        sig = result.significance
        level = fmt_level(1 - sig.alpha)
        significance = (
            f"{sig.method.replace('_', ' ')}, {sig.resamples:,} resamples, "
            f"\u03b1 = {sig.alpha:g}, seed {sig.seed}"
        )
    return ReportView(
        verdict=result.verdict,
        verdict_label=VERDICT_LABELS[result.verdict],
        verdict_icon=VERDICT_ICONS[result.verdict],
        headline=_headline(result, checks, by_status),
        created_at=result.created_at,
        goldgate_version=result.goldgate_version,
        config=result.config,
        baseline=result.baseline,
        baseline_found=result.baseline_found,
        significance=significance,
        level=level,
        ci_label=f"{level} CI" if level != "CI" else "CI",
        suites=suites,
        failed_checks=tuple(by_status[CheckStatus.FAIL]),
        forgiven_checks=tuple(by_status[CheckStatus.FORGIVEN]),
        improved_checks=tuple(by_status[CheckStatus.IMPROVED]),
        n_checks=len(checks),
        hints=tuple(result.hints),
        errors=tuple(result.errors),
        must_pass_failures=failing_rows(result),
        budget=budget_sentence(result.budget),
        why=run_headline(result.suites) or "",
    )


def _headline(
    result: RunResult, checks: list[CheckRow], by_status: dict[CheckStatus, list[CheckRow]]
) -> str:
    n = len(checks)
    failed = len(by_status[CheckStatus.FAIL])
    forgiven = len(by_status[CheckStatus.FORGIVEN])
    improved = len(by_status[CheckStatus.IMPROVED])
    skipped = len(by_status[CheckStatus.SKIPPED])
    if result.verdict is Verdict.ERROR:
        broken = [s.name for s in result.suites if s.error]
        where = f" in {wording.plural(len(broken), 'suite')}" if broken else ""
        return f"The run could not be completed{where}."
    parts = []
    if failed:
        parts.append(f"{failed} of {wording.plural(n, 'check')} failed")
    elif n:
        parts.append(f"{wording.plural(n, 'check')}, none failed")
    else:
        parts.append("no gate checks configured")
    if forgiven:
        parts.append(f"{forgiven} forgiven as noise")
    if improved:
        parts.append(f"{improved} improved")
    if skipped:
        parts.append(f"{skipped} skipped")
    text = "; ".join(parts) + "."
    if result.verdict is Verdict.IMPROVED:
        text += " Consider blessing a new baseline with `goldgate bless`."
    return text[0].upper() + text[1:]


def metric_row(summary: MetricSummary, checks: Iterable[CheckResult] = ()) -> MetricRow:
    """Format one metric summary with the most telling status among its checks."""
    statuses = sorted((c.status for c in checks), key=_STATUS_RANK.__getitem__)
    status = statuses[0] if statuses else None
    iv = summary.interval
    return MetricRow(
        metric=summary.metric,
        signature=summary.signature,
        higher_is_better=summary.higher_is_better,
        baseline=fmt_points(summary.baseline),
        current=summary.current_text(fmt_points),
        delta=fmt_delta(summary.delta),
        interval=fmt_interval(iv),
        p_value=fmt_p(summary.p_value),
        direction=direction(summary.delta, summary.higher_is_better),
        status=status,
        status_label=STATUS_LABELS[status] if status else "not gated",
        status_icon=STATUS_ICONS[status] if status else "",
        delta_value=None if summary.delta is None else round_points(summary.delta),
        low=None if iv is None else round_points(iv.low),
        high=None if iv is None else round_points(iv.high),
        trend=trend_text(summary.trend),
        spark=sparkline(summary.trend),
    )


def check_row(check: CheckResult, alpha: float | None = None) -> CheckRow:
    """Format one gate check."""
    return CheckRow(
        id=check.id,
        suite=check.suite,
        metric=check.metric,
        slice=check.slice,
        rule=check.rule,
        threshold=fmt_threshold(check),
        status=check.status,
        status_label=STATUS_LABELS[check.status],
        status_icon=STATUS_ICONS[check.status],
        message=check.message,
        sentence=check_sentence(check, alpha),
        current=fmt_points(check.current),
        baseline=fmt_points(check.baseline),
        delta=fmt_delta(check.delta),
        interval=fmt_interval(check.interval),
        p_value=fmt_p(check.p_value),
    )


#: a slice metric is listed among "slices that moved" when it moved at least this many points
#: either way, or when one of its gate checks failed, was forgiven or improved
SLICE_MIN_MOVE = 1.0


def slice_moved(summary: MetricSummary, checks: Sequence[CheckResult]) -> bool:
    """The one rule, the same up and down, that decides which slices are shown as moved."""
    if any(
        c.status in (CheckStatus.FAIL, CheckStatus.FORGIVEN, CheckStatus.IMPROVED) for c in checks
    ):
        return True
    if summary.delta is None or not math.isfinite(summary.delta):
        return False
    return abs(round_points(summary.delta)) >= SLICE_MIN_MOVE


def slice_rule() -> str:
    """The rule of :func:`slice_moved` in words, printed under the table it decides."""
    return (
        f"Listed: every slice metric that moved at least {SLICE_MIN_MOVE:.2f} point either way, "
        "or whose gate check failed, was forgiven or improved; worst change first."
    )


def _suite_view(suite: SuiteResult, alpha: float | None = None) -> SuiteView:
    suite_checks = [c for c in suite.checks if c.slice is None]
    metrics = tuple(
        metric_row(m, [c for c in suite_checks if c.metric == m.metric]) for m in suite.metrics
    )
    slices: list[SliceRow] = []
    moved: list[SliceRow] = []
    for sl in suite.slices:
        for summary in sl.metrics:
            checks = [c for c in suite.checks if c.slice == sl.tag and c.metric == summary.metric]
            row = SliceRow(sl.tag, sl.n_examples, metric_row(summary, checks))
            slices.append(row)
            if slice_moved(summary, checks):
                moved.append(row)
    moved.sort(key=lambda r: (_row_gain(r.row), r.tag, r.row.metric))
    # Counted from the score columns: no example row is built for a count.
    moves = Moves(suite)
    rank = _gated(suite, ranking_metrics(suite))
    n_regressed = len(moves.any_flipped(to_wrong=True) | moves.moved(rank, worse=True))
    n_improved = len(moves.any_flipped(to_wrong=False) | moves.moved(rank, worse=False))
    return SuiteView(
        name=suite.name,
        verdict=suite.verdict,
        verdict_label=VERDICT_LABELS[suite.verdict],
        verdict_icon=VERDICT_ICONS[suite.verdict],
        goldens=suite.goldens,
        golden_hash=suite.golden_hash,
        n_examples=suite.n_examples,
        error=suite.error,
        metric_names=tuple(m.metric for m in suite.metrics),
        metrics=metrics,
        checks=tuple(check_row(c, alpha) for c in suite.checks),
        slices=tuple(slices),
        moved_slices=tuple(moved),
        n_regressed=n_regressed,
        n_improved=n_improved,
        n_new=moves.table.n_new(),
        tallies=tuple(line for m in suite.metrics if (line := judge_tally(m))),
        notes=tuple(suite_notes(suite)),
        diagnosis=diagnosis_view(suite, versions=False),
    )


def _row_gain(row: MetricRow) -> float:
    return gain(row.delta_value or 0.0, row.higher_is_better)
