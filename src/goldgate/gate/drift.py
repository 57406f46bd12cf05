"""The drift rule: how far a score may fall below an *anchor*, however many re-blesses since.

``max_drop`` compares with the last blessed baseline, so ten pull requests that each lose a
little, each re-blessed, pass every check while the product gets steadily worse (the boiling
frog). ``max_drift`` (points) and ``max_drift_rel`` (a fraction) compare with an anchor that
re-blessing does not move:

- a git revision (``anchor: {ref: v1.2}``, or ``goldgate run --anchor-ref v1.2``): the
  baseline file as it is at that revision;
- otherwise the best score of the last N blesses (``anchor: {best_of: 10}``, the default),
  read from the baseline file's git history; each metric takes the bless where *it* was best,
  in the metric's own direction.

The comparison is the gate's own (paired over the examples both sides share, the same
bootstrap, so a drift beyond the tolerance is forgiven as noise exactly when a drop would
be); only the reference differs. A metric whose signature differs from the anchor's, or with
no anchor at all, is skipped and says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from goldgate.errors import BaselineError
from goldgate.gate.rules import Significance, SuiteScores, evaluate_suite, moved_text
from goldgate.history.timeline import blessed_timeline
from goldgate.io.git import GitFailed
from goldgate.model.baseline import Baseline, SuiteBaseline, strip_nrefs
from goldgate.model.baseline_io import read_baseline_at_ref
from goldgate.model.result import CheckResult, CheckStatus, gain
from goldgate.wording import p_is, plural

RULES = ("max_drift", "max_drift_rel")


class DriftRule(Protocol):
    """A metric's drift thresholds (``goldgate.model.config.GateRule`` satisfies it)."""

    @property
    def max_drift(self) -> float | None: ...
    @property
    def max_drift_rel(self) -> float | None: ...


@dataclass(frozen=True)
class _AsDrop:
    """A drift rule presented to the gate as a drop rule against the anchor."""

    max_drop: float | None
    max_drop_rel: float | None
    min: float | None = None
    max: float | None = None
    max_flips: int | None = None
    slices: bool = False


@dataclass
class Anchors:
    """The anchor of every metric, loaded once per run (git is read only if a rule needs it)."""

    root: Path
    baseline_path: Path
    ref: str | None
    best_of: int
    _loaded: bool = False
    _error: str | None = None
    #: (suite, metric) -> (label, suite baseline at the anchor)
    _by_metric: dict[tuple[str, str], tuple[str, SuiteBaseline]] = field(default_factory=dict)
    _by_ref: dict[str, Baseline | None] = field(default_factory=dict)

    def anchor(
        self, suite: str, metric: str, higher_is_better: bool
    ) -> tuple[str, SuiteBaseline] | str:
        """The anchor's label and suite baseline for one metric, or why there is none."""
        if self.ref is not None:
            try:
                baseline = self._at(self.ref)
            except BaselineError as exc:
                return f"cannot read the anchor: {exc}"
            label = f"anchor {self.ref}"
            if baseline is None or suite not in baseline.suites:
                return f"no baseline of suite {suite!r} at {self.ref}"
            return label, baseline.suites[suite]
        return self._best(suite, metric, higher_is_better)

    def _at(self, ref: str) -> Baseline | None:
        if ref not in self._by_ref:
            self._by_ref[ref] = read_baseline_at_ref(self.baseline_path, ref, self.root)
        return self._by_ref[ref]

    def _best(
        self, suite: str, metric: str, higher_is_better: bool
    ) -> tuple[str, SuiteBaseline] | str:
        try:
            timeline = blessed_timeline(self.root, self.baseline_path, limit=self.best_of)
        except GitFailed as exc:
            return f"no blessed history to anchor on (git: {exc})"
        recent = timeline[-self.best_of :]
        holding = [b for b in recent if (suite, metric) in b.scores]
        if not holding:
            return (
                f"no bless of {suite} {metric} in the last {self.best_of} commits of the baseline"
            )
        # The best in the metric's direction; the latest bless among equals.
        best = max(
            reversed(holding),
            key=lambda b: gain(b.scores[(suite, metric)].score, higher_is_better),
        )
        try:
            baseline = self._at(best.commit)
        except BaselineError as exc:
            return f"cannot read the anchor: {exc}"
        if baseline is None or suite not in baseline.suites:  # pragma: no cover - listed above
            return f"no baseline of suite {suite!r} at {best.commit[:8]}"
        label = f"anchor {best.commit[:8]} (best of the last {plural(len(recent), 'bless')})"
        return label, baseline.suites[suite]


def drift_checks(
    scored: SuiteScores,
    rules: Mapping[str, DriftRule],
    anchors: Anchors,
    significance: Significance | None,
) -> list[CheckResult]:
    """The ``max_drift``/``max_drift_rel`` checks of one suite, in rule order."""
    wanted = {
        spec: rule
        for spec, rule in rules.items()
        if rule.max_drift is not None or rule.max_drift_rel is not None
    }
    by_spec = {item.spec: item for item in scored.metrics}
    checks: list[CheckResult] = []
    for spec, rule in wanted.items():
        item = by_spec.get(spec)
        if item is None:
            continue
        direction = item.metric.higher_is_better
        found = anchors.anchor(scored.name, spec, direction)
        if isinstance(found, str):
            checks += _skipped(scored.name, spec, rule, direction, found)
            continue
        label, anchor = found
        blessed = anchor.metrics.get(spec)
        if blessed is None:
            checks += _skipped(scored.name, spec, rule, direction, f"{label} has no {spec}")
            continue
        if strip_nrefs(blessed.signature) != strip_nrefs(item.signature):
            reason = f"{label} was scored with another signature ({blessed.signature})"
            checks += _skipped(scored.name, spec, rule, direction, reason)
            continue
        single = SuiteScores(scored.name, scored.ids, scored.tags, (item,))
        as_drop = {spec: _AsDrop(rule.max_drift, rule.max_drift_rel)}
        evaluation = evaluate_suite(single, anchor, as_drop, significance, slices=False)
        for check in evaluation.checks:
            checks.append(_as_drift(check, label))
    return checks


def _as_drift(check: CheckResult, label: str) -> CheckResult:
    rule = check.rule.replace("max_drop", "max_drift")
    name = f"{check.suite}: {check.metric}"
    if check.status is CheckStatus.SKIPPED:
        return check.model_copy(
            update={"rule": rule, "message": f"{name}: no example shared with the {label}"}
        )
    # not skipped: the three are set together
    assert check.baseline is not None and check.current is not None and check.delta is not None
    worse = "below" if check.higher_is_better else "above"
    limit = (
        f"max_drift {check.threshold:.2f}"
        if rule == "max_drift"
        else f"max_drift_rel {check.threshold:g}"
    )
    moved = moved_text(check.baseline, check.current, check.delta)
    evidence = ""
    if check.p_value is not None and check.interval is not None:
        evidence = (
            f" ({p_is(check.p_value)}, {check.interval.level:.0%} CI"
            f" [{check.interval.low:+.2f}, {check.interval.high:+.2f}])"
        )
    status = check.status
    if status is CheckStatus.FAIL:
        message = f"{name} drifted {worse} the {label} beyond {limit} ({moved}){evidence}"
    elif status is CheckStatus.FORGIVEN:
        message = (
            f"{name} drifted {worse} the {label} beyond {limit} ({moved}) but the change is"
            f" not significant{evidence}: forgiven as noise"
        )
    else:
        # Rising above the anchor is no reason to bless: that is max_drop's business.
        status = CheckStatus.PASS
        message = f"{name} is within {limit} of the {label} ({moved}){evidence}"
    return check.model_copy(update={"rule": rule, "status": status, "message": message})


def _skipped(
    suite: str, spec: str, rule: DriftRule, higher_is_better: bool, reason: str
) -> list[CheckResult]:
    common: dict[str, Any] = {
        "suite": suite,
        "metric": spec,
        "status": CheckStatus.SKIPPED,
        "higher_is_better": higher_is_better,
        "message": f"{suite}: {spec}: drift not checked: {reason}",
    }
    return [
        CheckResult(rule=name, threshold=float(threshold), **common)
        for name, threshold in (
            ("max_drift", rule.max_drift),
            ("max_drift_rel", rule.max_drift_rel),
        )
        if threshold is not None
    ]
