"""The compare stage: a scored suite against its baseline entry, gate rules and drift anchors.

Its interface: :func:`load_baseline` (the baseline as on disk or at a git revision),
:func:`drift_anchors` (what ``max_drift`` rules compare with), :func:`gate_suite` (one
:class:`~goldgate.pipeline.score.ScoredSuite` → its :class:`~goldgate.model.result.SuiteResult`
and hints) and :func:`add_trends` (each gated metric's blessed scores at the last blesses).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from goldgate.errors import BaselineError, first_of
from goldgate.execution.pool import resolve_jobs
from goldgate.gate.drift import Anchors, drift_checks
from goldgate.gate.golden_change import change_since, describe, removed_check, with_blessed_outputs
from goldgate.gate.rules import SuiteEvaluation, evaluate_suite, verdict_of
from goldgate.metrics.batch import BatchMetric
from goldgate.model.baseline import Baseline, BlessedOutputs, SuiteBaseline
from goldgate.model.baseline_io import read_baseline, read_baseline_at_ref
from goldgate.model.baseline_verify import verify_scores, verify_suite
from goldgate.model.config import Config
from goldgate.model.example_table import ExampleColumns
from goldgate.model.goldens import GoldenSet
from goldgate.model.result import (
    CheckResult,
    CheckStatus,
    GoldenChange,
    MetricCalls,
    MetricSummary,
    SuiteResult,
    Verdict,
)
from goldgate.pipeline.plan import goldens_label, relative_path
from goldgate.pipeline.score import ScoredSuite

#: the --baseline-ref value meaning "the baseline file as it is on disk" (the Action's spelling)
WORKING_TREE = "working-tree"


def load_baseline(config: Config, ref: str | None) -> tuple[Baseline | None, str]:
    """The baseline at git revision ``ref`` (None or :data:`WORKING_TREE`: the file on disk;
    None when there is none) and the label results give it."""
    label = relative_path(config.baseline, config.root)
    if ref is not None and ref != WORKING_TREE:
        return read_baseline_at_ref(config.baseline, ref, config.root), f"{ref}:{label}"
    if not config.baseline.exists():
        return None, label
    return read_baseline(config.baseline), label


def drift_anchors(config: Config, ref: str | None) -> Anchors | None:
    """The anchors of the drift rules, when any suite has one."""
    if not any(
        rule.max_drift is not None or rule.max_drift_rel is not None
        for suite in config.suites.values()
        for rule in suite.gate.values()
    ):
        return None
    return Anchors(config.root, config.baseline, ref or config.anchor.ref, config.anchor.best_of)


def gate_suite(
    config: Config,
    name: str,
    scored: ScoredSuite,
    blessed: SuiteBaseline | None,
    baseline_label: str,
    baseline_found: bool,
    anchors: Anchors | None = None,
    *,
    examples: bool = True,
    fill_outputs: bool = True,
) -> tuple[SuiteResult, list[str]]:
    """One scored suite gated against its baseline entry ``blessed``. ``fill_outputs``
    false leaves the blessed outputs of the examples edited or removed since the baseline
    for the caller to fill in (:func:`with_blessed_outputs`)."""
    suite = config.suites[name]
    hints: list[str] = [f"suite {name!r}: {scored.ignored}"] if scored.ignored else []
    change: GoldenChange | None = None
    #: blessed ids whose golden record was edited since: not paired with today's example
    unpaired: frozenset[str] = frozenset()
    if blessed is not None:
        signatures = {item.spec: item.signature for item in scored.scores.metrics}
        if (
            blessed.golden_hash != scored.golden.content_hash
            and config.on_golden_change == "compare"
        ):
            change = change_since(
                blessed,
                digests=example_digests(scored.golden),
                metrics={item.spec: item.metric for item in scored.scores.metrics},
                signatures=signatures,
                suite=name,
                source=baseline_label,
            )
            # The whole baseline, with the edited examples left unpaired, pairs as the
            # baseline cut down to the shared ones would (the added and removed ones have no
            # partner anyway), without a second copy of a million examples' statistics.
            unpaired = frozenset(example.id for example in change.edited)
            advice = (
                "; run `goldgate bless --new-only` to add the new examples to the baseline"
                if change.added and not change.removed and not change.edited
                else ""
            )
            hints.append(f"suite {name!r}: {describe(change)}{advice}")
            gone = len(change.removed) + len(change.edited)
            if gone:
                hints.append(
                    f"suite {name!r}: {gone} example{'s' if gone != 1 else ''} removed or"
                    " edited since the baseline: a removal can hide a regression; review their"
                    " blessed scores in the report (max_removed caps them)"
                )
        else:
            verify_suite(
                blessed,
                suite=name,
                golden_hash=scored.golden.content_hash,
                signatures=signatures,
                source=baseline_label,
                digests=example_digests(scored.golden),
            )
        # the blessed scores must follow from the blessed statistics
        verify_scores(
            blessed,
            {item.spec: item.metric for item in scored.scores.metrics},
            signatures=signatures,
            suite=name,
            source=baseline_label,
        )
        missing = [item.spec for item in scored.scores.metrics if item.spec not in blessed.metrics]
        if missing:
            hints.append(
                f"suite {name!r}: {', '.join(missing)} not in the baseline yet; run"
                " `goldgate bless --new-only` to add them"
            )
    elif baseline_found:
        hints.append(
            f"suite {name!r} is not in the baseline yet: only min/max gates were checked;"
            f" run `goldgate bless --suite {name}` to add it"
        )
    evaluation = evaluate_suite(
        scored.scores,
        blessed,
        suite.gate,
        config.significance,
        slices=suite.slices,
        jobs=resolve_jobs(config.engine.jobs, len(scored.scores.ids)),
        unpaired=unpaired,
    )
    _record_calls(scored, evaluation.metrics)
    if change is not None and blessed is not None and fill_outputs:
        change = with_blessed_outputs(change, blessed.blessed_outputs())
    if change is not None:
        removed = removed_check(name, change, config.max_removed)
        if removed is not None:
            evaluation.checks.append(removed)
            evaluation.verdict = verdict_of(evaluation.checks)
    if anchors is not None:
        drift = drift_checks(scored.scores, suite.gate, anchors, config.significance)
        evaluation.checks.extend(drift)
        evaluation.verdict = verdict_of(evaluation.checks)
    if suite.must_pass:
        evaluation.checks.extend(_must_pass(config, name, scored, evaluation, hints))
        evaluation.verdict = verdict_of(evaluation.checks)
    if evaluation.verdict is Verdict.IMPROVED:
        risen = [
            f"{check.metric} {check.delta:+.2f}"
            for check in evaluation.checks
            if check.status is CheckStatus.IMPROVED and check.slice is None and check.delta
        ]
        detail = f" ({', '.join(dict.fromkeys(risen))})" if risen else ""
        hints.append(
            f"suite {name!r} improved{detail}: run `goldgate bless` to make these scores"
            " the new baseline"
        )
    result = SuiteResult(
        name=name,
        verdict=evaluation.verdict,
        goldens=goldens_label(config, name),
        golden_hash=scored.golden.content_hash,
        n_examples=len(scored.golden),
        metrics=evaluation.metrics,
        checks=evaluation.checks,
        slices=evaluation.slices,
        examples=_examples(scored, blessed, evaluation, unpaired) if examples else [],
        golden_change=change,
        cache=scored.cache,
        system=scored.identity,
    )
    return result, hints


def _must_pass(
    config: Config, name: str, scored: ScoredSuite, evaluation: SuiteEvaluation, hints: list[str]
) -> list[CheckResult]:
    """The suite's must-pass checks on each example's score (its mean over samples)."""
    from goldgate.gate.must_pass import missing_ids, must_pass_checks

    rules = config.suites[name].must_pass
    ids = scored.scores.ids
    for rule in rules:
        gone = missing_ids(rule, ids)
        if gone:
            hints.append(
                f"suite {name!r}: must_pass {rule.describe()} names ids the golden set does"
                f" not hold: {first_of(gone, 5)}"
            )
    records = scored.golden.records
    return must_pass_checks(
        name,
        rules,
        ids=ids,
        tags=scored.scores.tags,
        scores=evaluation.scores,
        higher_is_better={m.spec: m.metric.higher_is_better for m in scored.scores.metrics},
        outputs=scored.outputs,
        references=lambda at: records[at].references,
    )


def fill_blessed_outputs(
    results: list[SuiteResult], outputs_of: Mapping[str, Callable[[str], Sequence[str] | None]]
) -> None:
    """Give the examples edited or removed since the baseline, in the suites gated with
    ``fill_outputs`` false, their blessed outputs from ``outputs_of`` (suite -> id -> outputs);
    a packed suite's decoded block is let go after."""
    for index, suite_result in enumerate(results):
        change = suite_result.golden_change
        if change is not None and suite_result.name in outputs_of:
            blessed_outputs = outputs_of[suite_result.name]
            filled = with_blessed_outputs(change, blessed_outputs)
            results[index] = suite_result.model_copy(update={"golden_change": filled})
            if isinstance(blessed_outputs, BlessedOutputs):
                blessed_outputs.release()


def review_suite(
    config: Config,
    name: str,
    scored: ScoredSuite,
    previous: SuiteBaseline | None,
    baseline_label: str,
    baseline_found: bool,
) -> SuiteResult:
    """A bless's review of one scored suite against the entry ``previous`` it replaces."""
    # The review is a table of scores and checks: no per-example rows are built for it.
    try:
        suite_result, _ = gate_suite(
            config, name, scored, previous, baseline_label, baseline_found, examples=False
        )
    except BaselineError:  # other metric settings: being accepted, nothing to compare
        suite_result, _ = gate_suite(
            config, name, scored, None, baseline_label, False, examples=False
        )
    return suite_result


def _record_calls(scored: ScoredSuite, summaries: Sequence[MetricSummary]) -> None:
    """Put this run's requests, retries and cache hits beside each calling metric's score."""
    metrics = {item.spec: item.metric for item in scored.scores.metrics}
    for summary in summaries:
        metric = metrics.get(summary.metric)
        tally = metric.call_tally() if isinstance(metric, BatchMetric) else None
        if tally is not None:
            summary.calls = MetricCalls(
                requests=tally.requests, retries=tally.retries, cached=tally.cached
            )


def _examples(
    scored: ScoredSuite,
    blessed: SuiteBaseline | None,
    evaluation: SuiteEvaluation,
    unpaired: frozenset[str] = frozenset(),
) -> ExampleColumns:
    """The suite's examples as columns over what the run holds anyway (golden records,
    outputs, the gate's score columns): a row is built only when a report reads it. An
    example in ``unpaired`` (edited since the baseline) has no blessed outputs."""
    outputs_of = blessed.blessed_outputs() if blessed is not None else None
    if outputs_of is not None and unpaired:
        blessed_outputs = outputs_of

        def outputs_of(example_id: str) -> list[str] | None:
            return None if example_id in unpaired else blessed_outputs(example_id)

    return ExampleColumns(
        scored.golden.records,
        scored.outputs,
        scores=evaluation.scores,
        baseline_scores=evaluation.baseline_scores,
        # not the baseline itself: its statistics are let go once the suite is gated
        baseline_outputs=outputs_of,
        flipped_to_wrong=evaluation.flipped_to_wrong,
        flipped_to_right=evaluation.flipped_to_right,
        notes=scored.notes,
        paired_at=evaluation.paired_at,
        # the digests the golden set computed as it was read (8 bytes an example), not
        # computed again from every record for the history
        record_digests=scored.golden.digests().of,
    )


def example_digests(golden: GoldenSet) -> Mapping[str, str]:
    """Each example's digest of its input, references and tags, by id."""
    return golden.digests()  # computed once per golden set, as it was read


#: blesses shown in a gated metric's trend
TREND_BLESSES = 5


def add_trends(config: Config, results: Sequence[SuiteResult]) -> None:
    """Give each gated metric its blessed scores at the last blesses (read from git).

    Outside a git work tree, or before the baseline is committed, there is no trend.
    """
    from goldgate.history.query import blessed_trends
    from goldgate.history.timeline import blessed_timeline
    from goldgate.io.git import GitFailed

    gated = {
        id(summary)
        for suite in results
        for summary in suite.metrics
        if suite.name in config.suites and summary.metric in config.suites[suite.name].gate
    }
    if not gated:
        return
    try:
        # Twice the shown length: a bless of another suite does not move this metric's line.
        timeline = blessed_timeline(config.root, config.baseline, limit=2 * TREND_BLESSES)
    except GitFailed:
        return
    trends = blessed_trends(timeline)
    for suite in results:
        for summary in suite.metrics:
            points = trends.get((suite.name, summary.metric))
            if points and id(summary) in gated:
                summary.trend = [point.score for point in points[-TREND_BLESSES:]]
