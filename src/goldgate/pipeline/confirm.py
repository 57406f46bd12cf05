"""Confirmation by re-run: a failing check of a nondeterministic system, gated again on
re-runs of the examples that decided it, before the build goes red.

``confirm: {reruns: K, max_examples: M}``. When a suite's gate fails, the examples that
decided its failing checks — in each check's group (the suite, or its tag slice), those whose
score worsened most against the baseline (without one: those worst past the threshold), at
most ``M`` over the suite — are asked of the system again, ``K`` times, through the same path
as the run's own calls (:func:`goldgate.systems.obtain.collect_outputs`, the configured
execution backend) with the output cache off for them: nothing is read from it, nothing
written to it, so the cache keeps the outputs the run scored.

Each re-run's outputs take the place of those examples' outputs, the suite is scored and
gated again, and a check **holds** on that re-run when it fails again. A failing check is
*confirmed* when it holds on every re-run; when it passes on any of them, it is *not
confirmed: forgiven as noise* (status ``forgiven``). That is what "confirmed on 2 re-runs"
says, and it answers the question confirmation asks — did the failure reproduce? — with the
gate's own rules, bootstrap included, on each re-run. (Averaging the re-runs into the first
run's scores was the alternative: it keeps part of a one-off dip in every recomputation, so
a single flip under ``max_flips: 0`` could never be forgiven however often it failed to
reproduce.)

Only the rules about the system's outputs are confirmed (min, max, max_drop, max_drop_rel,
max_flips, max_drift, max_drift_rel). A must-pass example is a contract, never forgiven as
noise; a golden-set rule (max_removed) does not depend on the system. A predictions file
cannot be re-run: the suite says so and its failures stand.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from goldgate.execution.registry import backend_for
from goldgate.gate.drift import Anchors
from goldgate.gate.rules import MetricScores, example_scores, verdict_of
from goldgate.model.baseline import SuiteBaseline
from goldgate.model.compact_stats import CompactStats, as_float
from goldgate.model.config import Config
from goldgate.model.gate_records import Confirmation, ConfirmedCheck, RerunExample
from goldgate.model.goldens import GoldenSet
from goldgate.model.result import CheckResult, CheckStatus, SuiteResult, gain
from goldgate.pipeline.compare import gate_suite
from goldgate.pipeline.plan import own_files
from goldgate.pipeline.score import ScoredSuite, metric_context, score_outputs

#: the rules whose failure a re-run of the system can confirm or forgive
CONFIRMABLE = frozenset(
    {"min", "max", "max_drop", "max_drop_rel", "max_flips", "max_drift", "max_drift_rel"}
)


def confirm_failures(
    config: Config,
    name: str,
    scored: ScoredSuite,
    result: SuiteResult,
    blessed: SuiteBaseline | None,
    baseline_label: str,
    baseline_found: bool,
    anchors: Anchors | None = None,
) -> SuiteResult:
    """``result`` with its failing checks confirmed or forgiven by re-running the system
    (unchanged when ``confirm`` is off or nothing it can confirm failed)."""
    settings = config.confirm
    failing = [c for c in result.checks if c.status is CheckStatus.FAIL and c.rule in CONFIRMABLE]
    if settings is None or not failing:
        return result
    system = config.system_for(name)
    if system.kind == "predictions":
        note = (
            "the system is a predictions file, which cannot be re-run: the failing checks"
            " stand unconfirmed"
        )
        return result.model_copy(
            update={"confirmation": Confirmation(reruns=settings.reruns, note=note)}
        )
    started = time.monotonic()
    positions = decisive_examples(scored, blessed, failing, settings.max_examples)
    if not positions:
        note = "no example worsened: nothing to re-run, the failing checks stand unconfirmed"
        return result.model_copy(
            update={"confirmation": Confirmation(reruns=settings.reruns, note=note)}
        )
    from goldgate.systems.obtain import collect_outputs

    ids = scored.scores.ids
    subset = replace(scored.golden, records=tuple(scored.golden.records[at] for at in positions))
    backend = backend_for(config.engine)
    # the re-runs bypass the output cache: nothing read from it, nothing written to it
    uncached = system.model_copy(update={"cache": "off"})
    reruns: list[dict[str, list[str]]] = []
    failed_on = {check.id: 0 for check in failing}
    for _ in range(settings.reruns):
        obtained = collect_outputs(
            uncached,
            subset,
            root=config.root,
            cache_dir=config.cache_dir,
            ignore=own_files(config),
            backend=backend,
        )
        reruns.append(obtained.outputs)
        again = _with_outputs(config, name, scored, positions, subset, obtained.outputs)
        regated, _ = gate_suite(
            config,
            name,
            again,
            blessed,
            baseline_label,
            baseline_found,
            anchors,
            examples=False,
            fill_outputs=False,
        )
        status = {check.id: check.status for check in regated.checks}
        for check_id in failed_on:
            failed_on[check_id] += status.get(check_id) is CheckStatus.FAIL
    k = settings.reruns
    runs = f"{k} re-run{'s' if k != 1 else ''}"
    checks: list[CheckResult] = []
    for check in result.checks:
        if check.id not in failed_on:
            checks.append(check)
            continue
        confirmed = failed_on[check.id] == k
        words = (
            f"confirmed on {runs}"
            if confirmed
            else f"not confirmed: forgiven as noise (it passed on {k - failed_on[check.id]} of"
            f" {runs})"
        )
        update = {"confirmation": words, "message": f"{check.message}; {words}"}
        if not confirmed:
            update["status"] = CheckStatus.FORGIVEN
        checks.append(check.model_copy(update=update))
    confirmation = Confirmation(
        reruns=k,
        examples=[
            RerunExample(id=ids[at], outputs=[run[ids[at]] for run in reruns]) for at in positions
        ],
        calls=k * len(positions) * system.samples,
        seconds=round(time.monotonic() - started, 3),
        checks=[
            ConfirmedCheck(check=check_id, confirmed=count == k, failed_reruns=count)
            for check_id, count in failed_on.items()
        ],
    )
    return result.model_copy(
        update={"checks": checks, "verdict": verdict_of(checks), "confirmation": confirmation}
    )


def decisive_examples(
    scored: ScoredSuite,
    blessed: SuiteBaseline | None,
    failing: Sequence[CheckResult],
    limit: int,
) -> list[int]:
    """Positions of the examples that decided the failing checks, the most worsened first
    (at most ``limit``), returned in golden order."""
    scores = scored.scores
    ids = scores.ids
    worst: dict[int, float] = {}
    by_spec = {item.spec: item for item in scores.metrics}
    for check in failing:
        item = by_spec.get(check.metric)
        if item is None:
            continue
        now = example_scores(item.metric, item.stats)
        higher = item.metric.higher_is_better
        member = np.ones(len(ids), dtype=bool)
        if check.slice is not None:
            member = np.fromiter((check.slice in tags for tags in scores.tags), bool, len(ids))
        loss = _losses(item, now, blessed, ids)
        if loss is None:  # nothing to compare with: the examples past the check's threshold
            loss = np.array([-gain(value - check.threshold, higher) for value in now.tolist()])
        for at in np.flatnonzero(member & (loss > 0)).tolist():
            worst[at] = max(worst.get(at, 0.0), float(loss[at]))
    ranked = sorted(worst, key=lambda at: (-worst[at], ids[at]))[:limit]
    return sorted(ranked)


def _losses(
    item: MetricScores,
    now: np.ndarray,
    blessed: SuiteBaseline | None,
    ids: Sequence[str],
) -> np.ndarray | None:
    """How much each example worsened against the baseline (0 where it did not, or has no
    blessed score); None when the baseline has no score of this metric."""
    if blessed is None or item.spec not in blessed.metrics:
        return None
    where = blessed.positions_of(ids)
    paired = np.flatnonzero(where >= 0)
    loss = np.zeros(len(ids), dtype=np.float64)
    if not len(paired):
        return loss
    stats = blessed.compact_stats(item.spec, [ids[at] for at in paired.tolist()], at=where[paired])
    before = example_scores(item.metric, stats)
    change = now[paired] - before
    loss[paired] = -change if item.metric.higher_is_better else change
    return loss


def _with_outputs(
    config: Config,
    name: str,
    scored: ScoredSuite,
    positions: Sequence[int],
    subset: GoldenSet,
    outputs: dict[str, list[str]],
) -> ScoredSuite:
    """The scored suite with the examples at ``positions`` given ``outputs``: only they are
    scored again, their statistics put in place of the first run's."""
    pairs = {item.spec: item.metric for item in scored.scores.metrics}
    part = score_outputs(
        name,
        subset,
        outputs,
        pairs,
        context=metric_context(config),
        backend=backend_for(config.engine),
    )
    at = np.asarray(positions, dtype=np.intp)
    metrics = []
    for item, redone in zip(scored.scores.metrics, part.scores.metrics, strict=True):
        stats = as_float(item.stats).copy()
        stats[:, at, :] = as_float(redone.stats)
        # the first run's signature: the subset's reference counts may differ from the set's
        metrics.append(MetricScores(item.spec, item.metric, item.signature, CompactStats.of(stats)))
    merged = dict(scored.outputs)
    merged.update(outputs)
    return replace(scored, outputs=merged, scores=replace(scored.scores, metrics=tuple(metrics)))
