"""The gate: today's per-example statistics against thresholds and the baseline → a verdict.

Pure: it reads no files and prints nothing. Its inputs are the scored suite (per-example
statistics, aligned with the golden ids), the suite's baseline (or None), the gate rules and
the significance settings; its output is every metric summary, check and slice of the suite,
and the suite's verdict.

Rules, per metric and optionally per tag slice:

- ``min`` / ``max``: absolute bounds on the current score.
- ``max_drop``: the score may worsen at most this many points from the baseline;
  ``max_drop_rel``: at most this fraction of the baseline score (0.02 = 2 %).
- ``max_flips``: at most this many examples of a binary metric (exact match) may go from
  right (100) to wrong (0).

"Worsen" follows the metric's ``higher_is_better``: for an error rate such as TER a rise is
the drop that ``max_drop`` limits, a fall is an improvement, and a flip to wrong is a move
from 0 to 100. The rules keep their names in both directions (one vocabulary, no pair of
aliases to keep in step); ``min``/``max`` stay plain bounds on the number.

With significance on, a drop beyond ``max_drop``/``max_drop_rel`` fails only when the paired
bootstrap finds the delta significantly different from zero (p < alpha); otherwise the check
is *forgiven* as noise. A rise beyond the same tolerance (significant, when significance is
on) marks the check *improved*. Absolute bounds and flips are never forgiven.
"""

from __future__ import annotations

import array
import functools
import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from goldgate.errors import ConfigError, MetricError, first_of
from goldgate.gate.stats import BootstrapResult, FloatArray, compare_many, sample_score
from goldgate.metrics.base import Metric
from goldgate.model.baseline import SuiteBaseline
from goldgate.model.compact_stats import CompactStats, Statistics, as_float, take
from goldgate.model.result import (
    CheckResult,
    CheckStatus,
    Interval,
    MetricSummary,
    SliceResult,
    Verdict,
    gain,
)
from goldgate.wording import change_decimals, p_is

#: Thresholds are compared with this slack, so a drop of exactly ``max_drop`` passes.
EPSILON = 1e-9

IndexArray = np.ndarray[Any, np.dtype[np.intp]]


class Rule(Protocol):
    """One metric's gate rule (``goldgate.model.config.GateRule`` satisfies it)."""

    @property
    def min(self) -> float | None: ...
    @property
    def max(self) -> float | None: ...
    @property
    def max_drop(self) -> float | None: ...
    @property
    def max_drop_rel(self) -> float | None: ...
    @property
    def max_flips(self) -> int | None: ...
    @property
    def slices(self) -> bool: ...


class Significance(Protocol):
    """Paired-bootstrap settings (``goldgate.model.config.SignificanceConfig`` satisfies it)."""

    @property
    def resamples(self) -> int: ...
    @property
    def alpha(self) -> float: ...
    @property
    def seed(self) -> int: ...


@dataclass(frozen=True)
class MetricScores:
    """One metric over a suite: statistics of shape ``(samples, n, k)`` aligned with the ids
    (compact once scored: see :mod:`goldgate.model.compact_stats`)."""

    spec: str
    metric: Metric[Any]
    signature: str
    stats: Statistics


@dataclass(frozen=True)
class SuiteScores:
    """A scored suite: ids and tags in golden order, and every metric's statistics."""

    name: str
    ids: tuple[str, ...]
    tags: tuple[tuple[str, ...], ...]
    metrics: tuple[MetricScores, ...]


@dataclass
class SuiteEvaluation:
    """Everything the gate decided about one suite."""

    verdict: Verdict
    metrics: list[MetricSummary]
    checks: list[CheckResult]
    slices: list[SliceResult]
    #: spec -> per-example score now (float64, one per example), aligned with the suite's ids
    scores: dict[str, FloatArray]
    #: spec -> id -> per-example score at the baseline (ids paired with the baseline only)
    baseline_scores: dict[str, PairedScores] = field(default_factory=dict)
    #: per suite position, its position in every ``PairedScores.values`` (-1: not in the
    #: baseline), so that baseline scores can be read by index without a lookup by id
    paired_at: IndexArray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    #: spec -> ids of examples that went from right to wrong (binary metrics)
    flipped_to_wrong: dict[str, list[str]] = field(default_factory=dict)
    flipped_to_right: dict[str, list[str]] = field(default_factory=dict)


class _Positions(Mapping[str, int]):
    """id → its index in ``ids``, the table built on the first lookup: the reports usually
    read paired scores by index (``SuiteEvaluation.paired_at``), and a million-entry table
    nobody asks would cost ~80 MB."""

    def __init__(self, ids: list[str]) -> None:
        self._ids = ids

    @functools.cached_property
    def _table(self) -> dict[str, int]:
        return dict(zip(self._ids, range(len(self._ids)), strict=True))

    def __getitem__(self, example_id: str) -> int:
        return self._table[example_id]

    def __contains__(self, example_id: object) -> bool:
        return example_id in self._table

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


class PairedScores(Mapping[str, float]):
    """id → one metric's per-example score at the baseline, for the paired ids.

    Every metric shares one table of positions: a dict per metric would cost a million
    entries each at a million examples.
    """

    __slots__ = ("_position", "_values")

    def __init__(self, position: Mapping[str, int], values: FloatArray) -> None:
        self._position = position
        self._values = values

    @property
    def values_array(self) -> FloatArray:
        """The scores as float64, in paired order (``position`` maps an id to its index)."""
        return self._values

    @property
    def position(self) -> Mapping[str, int]:
        """id → index into ``values_array`` (shared by every metric of the suite)."""
        return self._position

    def __getitem__(self, example_id: str) -> float:
        return float(self._values[self._position[example_id]])

    def __contains__(self, example_id: object) -> bool:
        return example_id in self._position

    def __iter__(self) -> Iterator[str]:
        return iter(self._position)

    def __len__(self) -> int:
        return len(self._position)


def example_scores(metric: Metric[Any], stats: Statistics) -> FloatArray:
    """Per-example scores of a ``(samples, n, k)`` array, averaged over samples: ``(n,)``.

    Each sample's scores come from ``Metric.example_scores`` (array arithmetic for the
    built-in metrics); the mean over samples is ``math.fsum`` of each example's, as it
    always was, so that the order of the samples cannot change a bit of it.
    """
    samples, n = stats.shape[0], stats.shape[1]
    if isinstance(stats, CompactStats) and samples == 1:
        return sample_scores(metric, stats)  # expanded a block of rows at a time
    expanded = as_float(stats)
    per_sample = [sample_scores(metric, expanded[s]) for s in range(samples)]
    del expanded
    if samples == 1:
        return per_sample[0]
    columns = np.stack(per_sample, axis=1).tolist()
    sums = np.fromiter(map(math.fsum, columns), dtype=np.float64, count=n)
    mean: FloatArray = sums / samples
    return mean


#: Rows scored per ``example_scores`` call: its temporaries (a dozen arrays for BLEU) stay a
#: few MB at a million examples.
_SCORE_ROWS = 65_536


def sample_scores(metric: Metric[Any], stats: FloatArray | CompactStats) -> FloatArray:
    """``metric.example_scores`` of one sample's ``(n, k)`` statistics, checked to be ``(n,)``
    (compact statistics: those of one sample, ``(1, n, k)``)."""
    n = stats.n if isinstance(stats, CompactStats) else stats.shape[0]
    out = np.empty(n, dtype=np.float64)
    for start in range(0, n, _SCORE_ROWS) if n else [0]:
        part = (
            stats.sample_rows(0, start, start + _SCORE_ROWS)
            if isinstance(stats, CompactStats)
            else stats[start : start + _SCORE_ROWS]
        )
        values = np.asarray(metric.example_scores(part), dtype=np.float64)
        if values.shape != (part.shape[0],):
            raise MetricError(
                f"{type(metric).__name__}.example_scores gave an array of shape"
                f" {values.shape} for {part.shape[0]} examples"
            )
        out[start : start + part.shape[0]] = values
    return out


def components_of(metric: Metric[Any], stats: Statistics) -> dict[str, Any]:
    """Components from statistics pooled over examples and samples."""
    if isinstance(stats, CompactStats) and stats.samples == 1:
        exact = stats.exact_totals()  # counts: no float64 copy of every example to sum
        if exact is not None:
            return metric.components(exact[0].tolist())
    return metric.components(as_float(stats).sum(axis=(0, 1)).tolist())


def _is_right(scores: FloatArray, higher_is_better: bool) -> npt.NDArray[np.bool_]:
    return scores >= 50.0 if higher_is_better else scores <= 50.0


def _points(value: float) -> str:
    return f"{value:.2f}"


def _signed(value: float) -> str:
    return f"{value:+.2f}"


def moved_text(baseline: float, current: float, delta: float) -> str:
    """``82.00 → 76.00, -6.00``; a change too small for two decimals with more (``+0.004``),
    no change at all as ``unchanged``, never a signed ``+0.00``."""
    places = change_decimals(delta)
    if places is None:
        return f"{_points(baseline)} → {_points(current)}, unchanged"
    return f"{baseline:.{places}f} → {current:.{places}f}, {delta:+.{places}f}"


def _interval_text(interval: Interval | None) -> str:
    if interval is None:
        return ""
    return f"{interval.level:.0%} CI [{_signed(interval.low)}, {_signed(interval.high)}]"


@dataclass
class _MetricState:
    """Per-metric arrays shared by the suite and its slices."""

    scores: MetricScores
    current_examples: FloatArray
    baseline_stats: Statistics | None = None
    baseline_examples: FloatArray | None = None


@dataclass
class _Group:
    tag: str | None
    indices: IndexArray
    #: positions (into the paired id list) of this group's examples that the baseline has
    paired: IndexArray
    #: positions (into the suite's ids) of the same examples
    paired_indices: IndexArray
    #: positions (into ``indices``) of the same examples
    paired_within: IndexArray


@dataclass
class _GroupMetric:
    summary: MetricSummary
    flips_to_wrong: list[str]
    flips_to_right: list[str]
    has_baseline: bool
    #: the metric is blessed but none of the group's examples is shared with the baseline
    #: (every id renamed, every reference edited): nothing to compare, not "no baseline"
    none_shared: bool = False


def evaluate_suite(
    scored: SuiteScores,
    baseline: SuiteBaseline | None,
    rules: Mapping[str, Rule],
    significance: Significance | None,
    *,
    slices: bool = True,
    jobs: int = 1,
    unpaired: Collection[str] = frozenset(),
) -> SuiteEvaluation:
    """Apply a suite's gate rules; the baseline's ids are paired with today's by id, but for
    ``unpaired`` (examples whose golden record changed since the baseline).

    With ``jobs`` above 1 the suite and its tag slices are measured by that many threads at
    once (their bootstraps are independent; NumPy's draws and BLAS products release the
    GIL). Every number is the one a single thread computes.
    """
    ids = scored.ids
    # Per suite position, its position in the paired id list (-1: not in the baseline).
    paired_at = np.full(len(ids), -1, dtype=np.intp)
    paired_ids: list[str] = []
    blessed_at = np.zeros(0, dtype=np.intp)  # the paired ids' positions in the baseline
    if baseline is not None:
        where = baseline.positions_of(ids)
        blessed = where >= 0
        if unpaired:
            blessed &= np.fromiter((i not in unpaired for i in ids), dtype=bool, count=len(ids))
        positions = np.flatnonzero(blessed)
        paired_at[positions] = np.arange(len(positions))
        paired_ids = [ids[i] for i in positions.tolist()]
        blessed_at = where[positions]
    paired_pos = _Positions(paired_ids)

    states: dict[str, _MetricState] = {}
    for item in scored.metrics:
        state = _MetricState(item, example_scores(item.metric, item.stats))
        if baseline is not None and item.spec in baseline.metrics:
            state.baseline_stats = baseline.compact_stats(item.spec, paired_ids, at=blessed_at)
            state.baseline_examples = example_scores(item.metric, state.baseline_stats)
        states[item.spec] = state

    for spec, rule in rules.items():
        if rule.max_flips is not None and spec in states and not states[spec].scores.metric.binary:
            raise ConfigError(
                f"suite {scored.name!r}, gate {spec!r}: max_flips needs a metric whose examples"
                " are right or wrong (exact_match, for example)"
            )

    # Examples in id order: the resamples then do not depend on the order of the golden
    # file, which (like its formatting) does not change the golden set's hash.
    # (argsort of the ids as objects compares them as sorted() does, without a million ints)
    order = np.argsort(np.array(ids, dtype=object), kind="stable").astype(np.intp, copy=False)
    groups = [_group(None, order, paired_at)]
    sliced_rules = any(rule.slices for rule in rules.values())
    if slices or sliced_rules:
        # every (example, tag) pair as two flat arrays of numbers, not a list per tag
        codes: dict[str, int] = {}
        indices, tag_codes = array.array("q"), array.array("q")
        for index, tags in enumerate(scored.tags):
            for tag in tags:
                indices.append(index)
                tag_codes.append(codes.setdefault(tag, len(codes)))
        pairs_index = np.frombuffer(indices, dtype=np.int64)
        pairs_code = np.frombuffer(tag_codes, dtype=np.int64)
        for tag in sorted(codes):
            member = np.zeros(len(ids), dtype=bool)
            member[pairs_index[pairs_code == codes[tag]]] = True
            groups.append(_group(tag, order[member[order]], paired_at))

    evaluation = SuiteEvaluation(
        verdict=Verdict.PASS,
        metrics=[],
        checks=[],
        slices=[],
        scores={spec: state.current_examples for spec, state in states.items()},
        paired_at=paired_at,
    )
    for spec, state in states.items():
        if state.baseline_examples is not None:
            evaluation.baseline_scores[spec] = PairedScores(paired_pos, state.baseline_examples)

    slice_checks: list[CheckResult] = []
    all_measured = _measure_groups(scored, groups, states, significance, jobs)
    for group, measured in zip(groups, all_measured, strict=True):
        summaries = [measured[spec].summary for spec in states]
        if group.tag is None:
            evaluation.metrics = summaries
            for spec, result in measured.items():
                if result.has_baseline and states[spec].scores.metric.binary:
                    evaluation.flipped_to_wrong[spec] = result.flips_to_wrong
                    evaluation.flipped_to_right[spec] = result.flips_to_right
        elif slices:
            evaluation.slices.append(
                SliceResult(tag=group.tag, n_examples=len(group.indices), metrics=summaries)
            )
        for spec, rule in rules.items():
            if spec not in measured or (group.tag is not None and not rule.slices):
                continue
            checks = _checks(scored.name, group.tag, measured[spec], rule, significance)
            (evaluation.checks if group.tag is None else slice_checks).extend(checks)
    evaluation.checks.extend(slice_checks)
    evaluation.verdict = verdict_of(evaluation.checks)
    return evaluation


def _measure_groups(
    scored: SuiteScores,
    groups: Sequence[_Group],
    states: Mapping[str, _MetricState],
    significance: Significance | None,
    jobs: int,
) -> list[dict[str, _GroupMetric]]:
    """``_measure_group`` of every group, in order; by ``jobs`` threads when that pays."""
    bootstraps = significance is not None and any(
        s.baseline_stats is not None for s in states.values()
    )
    if jobs <= 1 or len(groups) < 2 or not bootstraps:
        return [_measure_group(scored, group, states, significance) for group in groups]
    # The largest groups first, so that no thread is left with a big one at the end.
    by_size = sorted(range(len(groups)), key=lambda g: -len(groups[g].paired))
    threads = min(jobs, len(groups))
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="gate")
    try:
        futures = {
            g: pool.submit(_measure_group, scored, groups[g], states, significance, threads)
            for g in by_size
        }
        return [futures[g].result() for g in range(len(groups))]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def verdict_of(checks: Sequence[CheckResult]) -> Verdict:
    """Regressed if any check failed, else improved if any improved, else pass."""
    statuses = {check.status for check in checks}
    if CheckStatus.FAIL in statuses:
        return Verdict.REGRESSED
    if CheckStatus.IMPROVED in statuses:
        return Verdict.IMPROVED
    return Verdict.PASS


def combine_verdicts(verdicts: Sequence[Verdict]) -> Verdict:
    """The run's verdict: error, then regressed, then improved, then pass."""
    for candidate in (Verdict.ERROR, Verdict.REGRESSED, Verdict.IMPROVED):
        if candidate in verdicts:
            return candidate
    return Verdict.PASS


def _group(tag: str | None, indices: IndexArray, paired_at: IndexArray) -> _Group:
    positions = paired_at[indices]
    has = positions >= 0
    return _Group(tag, indices, positions[has], indices[has], np.flatnonzero(has))


def _measure_group(
    scored: SuiteScores,
    group: _Group,
    states: Mapping[str, _MetricState],
    significance: Significance | None,
    concurrent: int = 1,
) -> dict[str, _GroupMetric]:
    current_all = {spec: take(state.scores.stats, group.indices) for spec, state in states.items()}
    paired_current: dict[str, Statistics] = {}
    paired_baseline: dict[str, Statistics] = {}
    # Usually every example is paired: then the paired ones are the group itself, and a
    # second copy of its statistics would only cost memory. Else they are taken from the
    # group's (a view when only a few are left out: golden records edited since).
    all_paired = len(group.paired_indices) == len(group.indices)
    for spec, state in states.items():
        if state.baseline_stats is not None and len(group.paired):
            paired_current[spec] = (
                current_all[spec] if all_paired else take(current_all[spec], group.paired_within)
            )
            paired_baseline[spec] = take(state.baseline_stats, group.paired)

    tests: dict[str, BootstrapResult] = {}
    if significance is not None and paired_current:
        specs = list(paired_current)
        results = compare_many(
            [(states[s].scores.metric, paired_current[s], paired_baseline[s]) for s in specs],
            resamples=significance.resamples,
            alpha=significance.alpha,
            seed=significance.seed,
            concurrent=concurrent,
        )
        tests = dict(zip(specs, results, strict=True))

    measured: dict[str, _GroupMetric] = {}
    for spec, state in states.items():
        metric = state.scores.metric
        summary = MetricSummary(
            metric=spec,
            signature=state.scores.signature,
            higher_is_better=metric.higher_is_better,
            current=sample_score(metric, current_all[spec]),
            components=components_of(metric, current_all[spec]),
        )
        to_wrong: list[str] = []
        to_right: list[str] = []
        has_baseline = spec in paired_current
        if has_baseline:
            base = sample_score(metric, paired_baseline[spec])
            paired_score = sample_score(metric, paired_current[spec])
            summary.baseline = base
            summary.delta = paired_score - base
            if not all_paired:  # the delta is the shared examples': say their score too
                summary.current_shared = paired_score
            summary.baseline_components = components_of(metric, paired_baseline[spec])
            if spec in tests:
                summary.interval = tests[spec].interval
                summary.p_value = tests[spec].p_value
            if metric.binary:
                assert state.baseline_examples is not None  # set together with baseline_stats
                was = _is_right(state.baseline_examples[group.paired], metric.higher_is_better)
                now = _is_right(
                    state.current_examples[group.paired_indices], metric.higher_is_better
                )
                ids = scored.ids
                to_wrong = [ids[i] for i in group.paired_indices[was & ~now].tolist()]
                to_right = [ids[i] for i in group.paired_indices[now & ~was].tolist()]
        none_shared = state.baseline_stats is not None and not len(group.paired)
        measured[spec] = _GroupMetric(summary, to_wrong, to_right, has_baseline, none_shared)
    return measured


def _checks(
    suite: str,
    tag: str | None,
    measured: _GroupMetric,
    rule: Rule,
    significance: Significance | None,
) -> list[CheckResult]:
    summary = measured.summary
    label = f"{suite} [tag={tag}]" if tag else suite
    name = f"{label}: {summary.metric}"
    common: dict[str, Any] = {
        "suite": suite,
        "metric": summary.metric,
        "slice": tag,
        "higher_is_better": summary.higher_is_better,
        "current": summary.current,
        "baseline": summary.baseline,
        "delta": summary.delta,
        "interval": summary.interval,
        "p_value": summary.p_value,
    }
    checks: list[CheckResult] = []
    bounds = (
        ("min", rule.min, "at least", "below the minimum"),
        ("max", rule.max, "at most", "above the maximum"),
    )
    for kind, threshold, within, beyond in bounds:
        if threshold is None:
            continue
        if kind == "min":
            ok = summary.current >= threshold - EPSILON
        else:
            ok = summary.current <= threshold + EPSILON
        words = within if ok else beyond
        checks.append(
            CheckResult(
                rule=kind,
                threshold=threshold,
                status=CheckStatus.PASS if ok else CheckStatus.FAIL,
                message=f"{name} {_points(summary.current)} is {words} {_points(threshold)}",
                **common,
            )
        )
    if rule.max_drop is not None:
        checks.append(
            _relative_check(
                "max_drop", rule.max_drop, rule.max_drop, name, measured, common, significance
            )
        )
    if rule.max_drop_rel is not None:
        tolerance = None if summary.baseline is None else abs(summary.baseline) * rule.max_drop_rel
        checks.append(
            _relative_check(
                "max_drop_rel", rule.max_drop_rel, tolerance, name, measured, common, significance
            )
        )
    if rule.max_flips is not None:
        if not measured.has_baseline:
            checks.append(_skipped("max_flips", rule.max_flips, name, common, measured))
        else:
            flips = len(measured.flips_to_wrong)
            ok = flips <= rule.max_flips
            detail = f" ({first_of(measured.flips_to_wrong, 5)})" if flips else ""
            checks.append(
                CheckResult(
                    rule="max_flips",
                    threshold=float(rule.max_flips),
                    status=CheckStatus.PASS if ok else CheckStatus.FAIL,
                    message=(
                        f"{name}: {flips} example{'s' if flips != 1 else ''} went from right to"
                        f" wrong{detail}; "
                        + ("at most" if ok else "more than the allowed")
                        + f" {rule.max_flips}"
                    ),
                    flips=flips,
                    **common,
                )
            )
    return checks


def _skipped(
    rule: str, threshold: float, name: str, common: dict[str, Any], measured: _GroupMetric
) -> CheckResult:
    why = (
        f"{name}: nothing to compare: 0 shared examples with the baseline; run `goldgate bless`"
        " to start afresh"
        if measured.none_shared
        else f"{name}: no baseline to compare with; run `goldgate bless` to create one"
    )
    return CheckResult(
        rule=rule, threshold=float(threshold), status=CheckStatus.SKIPPED, message=why, **common
    )


def _relative_check(
    rule: str,
    threshold: float,
    tolerance: float | None,
    name: str,
    measured: _GroupMetric,
    common: dict[str, Any],
    significance: Significance | None,
) -> CheckResult:
    summary = measured.summary
    if not measured.has_baseline or summary.delta is None or tolerance is None:
        return _skipped(rule, threshold, name, common, measured)
    delta = summary.delta
    # Positive is better in either direction: for TER a rise is a negative gain.
    better = gain(delta, summary.higher_is_better)
    worsened = "dropped" if summary.higher_is_better else "rose"
    assert summary.baseline is not None  # set together with delta
    moved = moved_text(summary.baseline, summary.current, delta)
    limit = (
        f"max_drop {_points(threshold)}"
        if rule == "max_drop"
        else f"max_drop_rel {threshold:g} ({_points(tolerance)} points)"
    )
    evidence = ""
    significant = True
    if significance is not None and summary.p_value is not None:
        significant = summary.p_value < significance.alpha
        evidence = f" ({p_is(summary.p_value)}, {_interval_text(summary.interval)})"
    if better < -tolerance - EPSILON:
        if significant:
            status = CheckStatus.FAIL
            message = f"{name} {worsened} beyond {limit} ({moved}){evidence}"
        else:
            status = CheckStatus.FORGIVEN
            message = (
                f"{name} {worsened} beyond {limit} ({moved}) but the change is not significant"
                f"{evidence}: forgiven as noise"
            )
    elif better > tolerance + EPSILON and significant:
        status = CheckStatus.IMPROVED
        message = f"{name} improved beyond {limit} ({moved}){evidence}"
    else:
        status = CheckStatus.PASS
        message = f"{name} is within {limit} of the baseline ({moved}){evidence}"
    return CheckResult(rule=rule, threshold=threshold, status=status, message=message, **common)
