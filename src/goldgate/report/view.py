"""The result turned into display dataclasses: rounded numbers, labels, rankings.

Every report reads these, so rounding and wording are defined once, here. Nothing here decides
pass or fail: the verdict and every check status come from the result as they are.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from goldgate import wording
from goldgate.model.example_table import ExampleResult, ExampleTable, FloatColumn, example_table
from goldgate.model.result import (
    CheckResult,
    CheckStatus,
    Interval,
    MetricSummary,
    RunResult,
    SuiteResult,
    Verdict,
    gain,
)
from goldgate.report.diff import DiffOp, word_diff
from goldgate.terminal.console import escape_controls

#: decimals shown for every score, delta and interval bound (points on the 0-100 scale)
DECIMALS = 2
#: characters of each output diffed: a diff past this is not read, and diffing costs
DIFF_CHARS = 2_000
MINUS = "\u2212"
DASH = "\u2014"

VERDICT_ICONS = {
    Verdict.PASS: "\u2705",
    Verdict.REGRESSED: "\u274c",
    Verdict.IMPROVED: "\U0001f680",
    Verdict.ERROR: "\u26a0\ufe0f",
}
VERDICT_LABELS = {
    Verdict.PASS: "passed",
    Verdict.REGRESSED: "regressed",
    Verdict.IMPROVED: "improved",
    Verdict.ERROR: "error",
}
STATUS_ICONS = {
    CheckStatus.PASS: "\u2705",
    CheckStatus.FAIL: "\u274c",
    CheckStatus.FORGIVEN: "\u3030\ufe0f",
    CheckStatus.IMPROVED: "\u2b06\ufe0f",
    CheckStatus.SKIPPED: "\u23ed\ufe0f",
}
STATUS_LABELS = {
    CheckStatus.PASS: "pass",
    CheckStatus.FAIL: "fail",
    CheckStatus.FORGIVEN: "forgiven (noise)",
    CheckStatus.IMPROVED: "improved",
    CheckStatus.SKIPPED: "skipped",
}
# When a metric has several checks, the row shows the one that matters most.
_STATUS_RANK = {
    CheckStatus.FAIL: 0,
    CheckStatus.FORGIVEN: 1,
    CheckStatus.IMPROVED: 2,
    CheckStatus.PASS: 3,
    CheckStatus.SKIPPED: 4,
}


def round_points(value: float) -> float:
    """Round a score or delta for display (``-0.0`` becomes ``0.0``)."""
    # round() rounds the binary value correctly, as formatting does, and far faster.
    return round(value, DECIMALS) + 0.0


def fmt_points(value: float | None) -> str:
    """A score such as ``38.52``; an em dash when absent."""
    if value is None or not math.isfinite(value):
        return DASH
    return f"{round_points(value):.{DECIMALS}f}".replace("-", MINUS)


def fmt_delta(value: float | None) -> str:
    """A signed delta such as ``+1.20`` or ``−0.35``; ``0.00`` carries no sign."""
    if value is None or not math.isfinite(value):
        return DASH
    rounded = round_points(value)
    if rounded == 0:
        return f"{0:.{DECIMALS}f}"
    return f"{rounded:+.{DECIMALS}f}".replace("-", MINUS)


def fmt_interval(interval: Interval | None) -> str:
    """An interval such as ``[−2.10, +0.30]``."""
    if interval is None:
        return DASH
    return f"[{fmt_delta(interval.low)}, {fmt_delta(interval.high)}]"


def fmt_level(level: float | None) -> str:
    """A confidence level such as ``95%``."""
    if level is None:
        return "CI"
    return f"{level * 100:g}%"


def fmt_p(p_value: float | None) -> str:
    """A p-value to three decimals, ``<0.001`` below that (:func:`goldgate.wording.p_value`)."""
    return wording.p_value(p_value)


def fmt_threshold(check: CheckResult) -> str:
    """The rule and its threshold as a user wrote it, e.g. ``max_drop 1.0``."""
    if check.rule == "max_flips":
        return f"{check.rule} {int(check.threshold)}"
    return f"{check.rule} {check.threshold:g}"


def direction(delta: float | None, higher_is_better: bool = True) -> str:
    """``down`` (worse), ``up`` (better), ``flat`` or ``none``: the CSS class of a delta.

    The class says worse or better, not the sign: a TER delta of +2 is ``down`` (red).
    """
    if delta is None or not math.isfinite(delta):
        return "none"
    rounded = gain(round_points(delta), higher_is_better)
    return "down" if rounded < 0 else "up" if rounded > 0 else "flat"


def directions(suite: SuiteResult) -> dict[str, bool]:
    """Each metric's ``higher_is_better`` in a suite (metrics it does not list: True)."""
    return {m.metric: m.higher_is_better for m in suite.metrics}


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


def trend_text(trend: Sequence[float]) -> str:
    """Blessed scores, oldest first, as ``74.20 → 74.90 → 75.10``."""
    return " \u2192 ".join(fmt_points(value) for value in trend)


def sparkline(trend: Sequence[float], width: float = 60, height: float = 16) -> str:
    """SVG polyline points of a trend in a ``width``×``height`` box; "" for fewer than two."""
    if len(trend) < 2:
        return ""
    low, high = min(trend), max(trend)
    span = (high - low) or 1.0
    step = width / (len(trend) - 1)
    return " ".join(
        f"{i * step:.1f},{height - 1 - (value - low) / span * (height - 2):.1f}"
        for i, value in enumerate(trend)
    )


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
class ScoreCell:
    """One metric of one example: rounded baseline, current and delta."""

    metric: str
    baseline: float | None
    current: float | None
    delta: float | None
    flip: str | None  # "wrong", "right" or None
    #: the delta turned so that negative is worse (for TER, a rise)
    gain: float | None = None


@dataclass(frozen=True)
class ExampleRow:
    """One example ready to display: texts, scores and the diff of its outputs."""

    suite: str
    id: str
    anchor: str
    line: int | None
    tags: tuple[str, ...]
    input: str | None
    references: tuple[str, ...]
    output: str
    baseline_output: str | None
    diff: tuple[DiffOp, ...]
    scores: tuple[ScoreCell, ...]
    #: the ranking metrics' cells in ranking order: the failed check's metric first
    ranked: tuple[ScoreCell, ...]
    worst: ScoreCell | None
    regressed: bool
    improved: bool
    new: bool
    #: (metric, note) pairs: an LLM judge's rationale for this example
    notes: tuple[tuple[str, str], ...] = ()


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


def _moved(check: CheckResult) -> str:
    """``fell 6.00 points (82.00 → 76.00)``: the change as it happened, whatever the rule.

    A change too small for two decimals is shown with more (``rose 0.004 points``), never as
    "rose 0.00 points"; no change at all is ``unchanged``.
    """
    delta = check.delta or 0.0
    places = wording.change_decimals(delta)
    if places is None:
        return f"unchanged ({fmt_points(check.baseline)} \u2192 {fmt_points(check.current)})"
    verb = "fell" if delta < 0 else "rose"

    def shown(value: float | None) -> str:
        if value is None or not math.isfinite(value):
            return DASH
        return f"{round(value, places) + 0.0:.{places}f}".replace("-", MINUS)

    amount = shown(abs(delta))
    unit = "point" if amount == f"{1:.{places}f}" else "points"
    return f"{verb} {amount} {unit} ({shown(check.baseline)} \u2192 {shown(check.current)})"


def _tolerance(check: CheckResult) -> str:
    if check.rule == "max_drop_rel" and check.baseline is not None:
        tolerance = abs(check.baseline) * check.threshold
        return f"the {fmt_points(tolerance)} tolerance (max_drop_rel {check.threshold:g})"
    return f"the {fmt_points(check.threshold)} tolerance"


def _evidence(check: CheckResult, alpha: float | None) -> str:
    if check.p_value is None:
        return ""
    level = f" < \u03b1 {alpha:g}" if alpha is not None else ""
    return f"{wording.p_is(check.p_value)}{level}"


def check_sentence(check: CheckResult, alpha: float | None = None) -> str:
    """What the check saw, in words that are exactly true of its numbers and status.

    ``rose 13.33 points (31.12 → 44.45), more than the 2.00 tolerance; bless to accept``,
    never "improved beyond max_drop". Rules this module does not know keep the gate's message.
    """
    status = check.status
    if status is CheckStatus.SKIPPED:
        return "no baseline to compare with; run `goldgate bless` to create one"
    if check.rule in ("min", "max") and check.current is not None:
        bound = "minimum" if check.rule == "min" else "maximum"
        ok = status is CheckStatus.PASS
        where = (
            ("at least" if check.rule == "min" else "at most")
            if ok
            else ("below" if check.rule == "min" else "above")
        )
        the = "" if ok else " the"
        return f"{fmt_points(check.current)} is {where}{the} {bound} {fmt_points(check.threshold)}"
    if check.rule == "max_flips" and check.flips is not None:
        n = check.flips
        allowed = int(check.threshold)
        went = f"{wording.plural(n, 'example')} went from right to wrong"
        if status is CheckStatus.FAIL:
            return f"{went}, more than the {allowed:,} allowed"
        return f"{went}; {allowed:,} allowed"
    if check.rule in ("max_drop", "max_drop_rel") and check.delta is not None:
        moved = _moved(check)
        tolerance = _tolerance(check)
        p = _evidence(check, alpha)
        if status is CheckStatus.FAIL:
            return f"{moved}, more than {tolerance}" + (f"; significant ({p})" if p else "")
        if status is CheckStatus.FORGIVEN:
            why = (
                wording.p_is(check.p_value) + (f" \u2265 \u03b1 {alpha:g}" if alpha else "")
                if check.p_value is not None
                else "the interval includes zero"
            )
            return (
                f"{moved}, more than {tolerance}, but not significantly ({why}): forgiven as noise"
            )
        if status is CheckStatus.IMPROVED:
            return f"{moved}, more than {tolerance}; bless to accept"
        return f"{moved}, within {tolerance}"
    return check.message


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
    )


#: removed or edited examples listed by name in a note (the JSON result has them all)
MAX_NOTE_IDS = 10


def suite_notes(suite: SuiteResult) -> list[str]:
    """Plain-text lines on the golden-set change and reused outputs (same words everywhere)."""
    from goldgate.gate.golden_change import describe

    notes: list[str] = []
    change = suite.golden_change
    if change is not None:
        # with none shared, describe says that only min and max judged, on the whole set
        decided = "; the verdict is decided on them" if change.n_shared else ""
        notes.append(describe(change) + decided)
        if change.added:
            shown = ", ".join(change.added[:MAX_NOTE_IDS])
            extra = len(change.added) - MAX_NOTE_IDS
            more = f" and {extra:,} more" if extra > 0 else ""
            notes.append(f"added (no baseline): {shown}{more}")
        for label, items in (("removed", change.removed), ("edited", change.edited)):
            if not items:
                continue
            listed = [
                item.id
                + (
                    " ("
                    + ", ".join(f"{m} {fmt_points(v)}" for m, v in item.baseline_scores.items())
                    + ")"
                    if item.baseline_scores
                    else ""
                )
                for item in items[:MAX_NOTE_IDS]
            ]
            more = f" and {len(items) - MAX_NOTE_IDS:,} more" if len(items) > MAX_NOTE_IDS else ""
            why = " (a removal can hide a regression)" if label == "removed" else ""
            notes.append(f"{label}{why}, blessed scores: {'; '.join(listed)}{more}")
    cache = suite.cache
    if cache is not None and cache.reused:
        where = {
            "cache": "the output cache",
            "result": "the run just reviewed (result.json)",
            "baseline": "the baseline",
        }.get(cache.source, cache.source)
        since = f" of {cache.since}" if cache.since else ""
        notes.append(
            f"{cache.reused:,} of {wording.plural(cache.total, 'output')} reused from"
            f" {where}{since}, not obtained from the system in this run (--no-cache to call it"
            " for every example)"
        )
    if cache is not None and cache.dropped:
        notes.append(
            f"{cache.dropped:,} cached outputs of an earlier run not reused:"
            f" {cache.dropped_reason or 'the system changed'}"
        )
    return notes


def judge_tally(summary: MetricSummary) -> str | None:
    """'llm_judge: 12 judgments, 1,440 prompt + 360 completion tokens, $0.0014; this run: 6
    requests (1 retry), 6 judgments from the cache' from a judge's components and calls.

    The first part is what judging the set costs (cached judgments included), the second
    what this run itself sent.
    """
    c = summary.components
    if not {"judgments", "prompt_tokens", "completion_tokens", "cost_usd"} <= set(c):
        return None
    text = (
        f"{summary.metric}: {wording.plural(c['judgments'], 'judgment')},"
        f" {c['prompt_tokens']:,} prompt +"
        f" {c['completion_tokens']:,} completion tokens"
    )
    if c["cost_usd"]:
        text += f", ${c['cost_usd']:,.4f}"
    if c.get("judge_spread"):
        text += f", judge spread {c['judge_spread']:.2f} points"
    calls = summary.calls
    if calls is not None:
        text += (
            f"; this run: {wording.plural(calls.requests, 'request')}"
            f" ({wording.plural(calls.retries, 'retry', 'retries')}),"
            f" {wording.plural(calls.cached, 'judgment')} from the cache"
        )
    return text


_RANK_STATUSES = (CheckStatus.FAIL, CheckStatus.FORGIVEN, CheckStatus.IMPROVED)


def ranking_metrics(suite: SuiteResult, *, improved: bool = False) -> tuple[str, ...]:
    """The metrics that rank and label examples, most telling first.

    The metrics whose check failed come first (then forgiven, then improved; for the most
    improved examples, improved first), then the other gated metrics, then the rest: an
    example list under a failed BLEU check is ranked and labelled by BLEU, not by chrF.
    """
    order = (
        (CheckStatus.IMPROVED, CheckStatus.FAIL, CheckStatus.FORGIVEN)
        if improved
        else _RANK_STATUSES
    )
    names: list[str] = []
    for status in order:
        names += [c.metric for c in suite.checks if c.status is status]
    names += [c.metric for c in suite.checks]
    names += [m.metric for m in suite.metrics]
    if not names:
        names = sorted(set(example_table(suite.examples).score_names()))
    return tuple(dict.fromkeys(names))


def _gated(suite: SuiteResult, metrics: Sequence[str]) -> list[str]:
    gated = {c.metric for c in suite.checks}
    return [m for m in metrics if m in gated] or list(metrics)


def _row_gain(row: MetricRow) -> float:
    return gain(row.delta_value or 0.0, row.higher_is_better)


def gains(now: FloatColumn, then: FloatColumn, higher_is_better: bool) -> FloatColumn:
    """Each example's change (not rounded), positive when better: ``gain(now - then)`` of
    a column (NaN where a score is absent; a change past the largest float is infinite, as
    Python's subtraction gives it, without a warning)."""
    with np.errstate(over="ignore", invalid="ignore"):
        change: FloatColumn = now - then
    return change if higher_is_better else -change


class Moves:
    """A suite's per-example changes, read from its examples' score columns.

    A report asks every example whether it worsened or improved, but shows a few: the
    columns (numpy) find the candidates, and the exact rounded gain, as a row would give
    it, is computed only for those.
    """

    def __init__(self, suite: SuiteResult) -> None:
        self.table: ExampleTable = example_table(suite.examples)
        self.higher = directions(suite)
        self._columns: dict[str, tuple[FloatColumn, FloatColumn]] = {}
        self._flips: dict[bool, dict[str, frozenset[int]]] = {}

    def columns(self, name: str) -> tuple[FloatColumn, FloatColumn]:
        """Scores on ``name`` now and at the baseline, by position (NaN where absent)."""
        if name not in self._columns:
            self._columns[name] = (self.table.current(name), self.table.baseline(name))
        return self._columns[name]

    def gain_at(self, name: str, position: int) -> float | None:
        """An example's rounded change on a metric, negative when worse (as _gain_of)."""
        now, then = self.columns(name)
        cur, base = float(now[position]), float(then[position])
        if math.isnan(cur) or math.isnan(base):
            return None
        return gain(round_points(cur - base), self.higher.get(name, True))

    def moved(self, metrics: Sequence[str], *, worse: bool) -> set[int]:
        """Positions whose rounded gain on one of ``metrics`` is negative (or positive)."""
        found: set[int] = set()
        for name in metrics:
            now, then = self.columns(name)
            change = gains(now, then, self.higher.get(name, True))
            # rounding never turns a change's sign: these are the only candidates
            candidates = np.flatnonzero(change < 0 if worse else change > 0).tolist()
            for position in candidates:
                if position not in found:
                    g = self.gain_at(name, position)
                    if g is not None and (g < 0 if worse else g > 0):
                        found.add(position)
        return found

    def flipped(self, *, to_wrong: bool) -> dict[str, frozenset[int]]:
        """Metric → positions of the examples that flipped on it."""
        if to_wrong not in self._flips:
            self._flips[to_wrong] = self.table.flipped(to_wrong=to_wrong)
        return self._flips[to_wrong]

    def any_flipped(self, *, to_wrong: bool) -> set[int]:
        """Positions of the examples that flipped on any metric."""
        return set().union(*self.flipped(to_wrong=to_wrong).values())


class Picked(Sequence[ExampleResult]):
    """Examples of a table at chosen positions, in the chosen order; rows built when read."""

    def __init__(self, table: ExampleTable, positions: Sequence[int]) -> None:
        self.table = table
        self.positions = list(positions)

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, index: int) -> ExampleResult: ...
    @overload
    def __getitem__(self, index: slice) -> Picked: ...
    def __getitem__(self, index: int | slice) -> ExampleResult | Picked:
        if isinstance(index, slice):
            return Picked(self.table, self.positions[index])
        return self.table.row(self.positions[index])

    def __iter__(self) -> Iterator[ExampleResult]:
        return (self.table.row(position) for position in self.positions)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


def _ranked(suite: SuiteResult, *, improved: bool) -> Picked:
    rank = ranking_metrics(suite, improved=improved)
    gated = _gated(suite, rank)
    moves = Moves(suite)
    flips = moves.flipped(to_wrong=not improved)
    sign = -1.0 if improved else 1.0
    keyed = []
    for position in moves.any_flipped(to_wrong=not improved) | moves.moved(
        gated, worse=not improved
    ):
        # Lexicographic: the first metric decides, the next ones break its ties.
        key = tuple(sign * (moves.gain_at(name, position) or 0.0) for name in rank)
        n_flips = sum(position in positions for positions in flips.values())
        keyed.append((key, -n_flips, position))
    keyed.sort()
    return Picked(moves.table, [position for _, _, position in keyed])


def worst_regressed(suite: SuiteResult) -> Picked:
    """The suite's regressed examples, worst first (rows built as they are read).

    Regressed: a gated metric (every metric when none is gated) worsened in its direction,
    or an example flipped to wrong. Ranked by the worsening of the failed check's metric,
    then the other metrics in :func:`ranking_metrics` order, then flips, then golden order.
    """
    return _ranked(suite, improved=False)


def most_improved(suite: SuiteResult) -> Picked:
    """The suite's improved examples, most improved first (the mirror of worst_regressed)."""
    return _ranked(suite, improved=True)


def format_input(value: Any) -> str | None:
    """An example's input as text: a string as is, an object as compact ``key: value`` lines."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            text = item if isinstance(item, str) else _compact_json(item)
            lines.append(f"{key}: {text}")
        return "\n".join(lines)
    return _compact_json(value)


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def anchor_of(suite: str, example_id: str, *, unique: bool = True) -> str:
    """The example's fragment in the HTML report: its id (``qa-017``), or ``suite/id`` when
    the same id appears in several suites. Control characters are escaped (``\\u202e``), as the
    page shows the id, so that a link from the Markdown report finds it."""
    shown = escape_controls(example_id)
    return shown if unique else f"{escape_controls(suite)}/{shown}"


def shared_ids(result: RunResult) -> frozenset[str]:
    """Ids used by more than one suite: their anchors carry the suite name."""
    seen: set[str] = set()
    shared: set[str] = set()
    for suite in result.suites:
        for ex_id in set(example_table(suite.examples).ids):
            (shared if ex_id in seen else seen).add(ex_id)
    return frozenset(shared)


def example_row(
    suite: SuiteResult,
    ex: ExampleResult,
    *,
    rank: Sequence[str] | None = None,
    shared: frozenset[str] = frozenset(),
) -> ExampleRow:
    """Format one example, with the word diff of its baseline and current outputs."""
    rank = ranking_metrics(suite) if rank is None else rank
    names = [m.metric for m in suite.metrics] or sorted(ex.scores)
    extra = sorted(k for k in ex.scores if k not in names)
    higher = directions(suite)
    cells = []
    for name in [*names, *extra]:
        cur, base = ex.scores.get(name), ex.baseline_scores.get(name)
        flip = (
            "wrong"
            if name in ex.flipped_to_wrong
            else "right"
            if name in ex.flipped_to_right
            else None
        )
        delta = None if cur is None or base is None else round_points(cur - base)
        cells.append(
            ScoreCell(
                metric=name,
                baseline=None if base is None else round_points(base),
                current=None if cur is None else round_points(cur),
                delta=delta,
                flip=flip,
                gain=None if delta is None else gain(delta, higher.get(name, True)),
            )
        )
    by_name = {c.metric: c for c in cells}
    ranked = tuple(by_name[m] for m in rank if m in by_name and by_name[m].gain is not None)
    gated = set(_gated(suite, rank))
    gains = [c.gain for c in ranked if c.gain is not None and c.metric in gated]
    if ex.baseline_output is None:
        diff: tuple[DiffOp, ...] = (DiffOp("equal", ex.output),) if ex.output else ()
    else:
        diff = tuple(word_diff(ex.baseline_output[:DIFF_CHARS], ex.output[:DIFF_CHARS]))
    return ExampleRow(
        suite=suite.name,
        id=ex.id,
        anchor=anchor_of(suite.name, ex.id, unique=ex.id not in shared),
        line=ex.line,
        tags=tuple(ex.tags),
        input=format_input(ex.input),
        references=tuple(ex.references),
        output=ex.output,
        baseline_output=ex.baseline_output,
        diff=diff,
        scores=tuple(cells),
        ranked=ranked,
        worst=ranked[0] if ranked else None,
        regressed=bool(ex.flipped_to_wrong) or any(g < 0 for g in gains),
        improved=bool(ex.flipped_to_right) or any(g > 0 for g in gains),
        new=ex.new,
        notes=tuple(sorted((getattr(ex, "notes", None) or {}).items())),
    )


def example_rows(
    result: RunResult,
    chosen: Iterable[tuple[SuiteResult, Iterable[ExampleResult]]] | None = None,
) -> Iterator[ExampleRow]:
    """Every example of every suite (or the ``chosen`` ones), in golden order."""
    shared = shared_ids(result)
    pairs = chosen if chosen is not None else ((s, s.examples) for s in result.suites)
    for suite, examples in pairs:
        rank = ranking_metrics(suite)
        for ex in examples:
            yield example_row(suite, ex, rank=rank, shared=shared)


def clip(text: str, limit: int) -> tuple[str, int]:
    """Cut text to at most ``limit`` characters; returns the text and how many were cut."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit
