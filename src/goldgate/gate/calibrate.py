"""Calibration: how noisy is the system on unchanged code, and how often would the gate cry wolf?

``calibrate`` runs the system K times with its output cache off, then for every suite and
metric reports:

- the run-to-run **spread** (standard deviation of the score over runs) and the examples
  whose outputs changed between runs;
- the **false-alarm rate** of today's gate: every ordered pair of runs (i, j), i ≠ j, is
  replayed through the configured rules with run i blessed as the baseline and run j as the
  candidate — exactly what the gate would do if nothing had changed — and the rate is the
  fraction of pairs in which a check failed;
- a **suggested max_drop** that keeps false alarms under a target rate.

The suggestion comes from a model, not from the replay, because K runs give only K(K-1)
correlated pairs: a 1 % target needs thresholds far in the tail, which a dozen runs cannot
observe. Under the model the scores of two unchanged runs differ by a normal variable with
standard deviation sqrt(2)·sigma (sigma the run-to-run spread); the suggestion is the
one-sided (1 - target) quantile of that difference, with sigma taken at the upper end of its
95 % confidence interval (chi-square, K - 1 degrees of freedom) so that too few runs err on
the side of fewer false alarms. Significance (the paired bootstrap) can only forgive more,
so the suggestion holds with significance on as well.

With few runs that upper end is far out (3 runs: 4.4 times the spread measured), so the
suggestion never loosens a ``max_drop`` that already kept false alarms under the target in
the replay, and none is made when it reaches the score's range (a rule that cannot fail).
A ``predictions`` system is refused: re-reading one file K times measures no noise.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from goldgate.errors import UsageError
from goldgate.gate.rules import evaluate_suite
from goldgate.gate.stats import sample_score
from goldgate.model.config import Config
from goldgate.model.result import CheckStatus, gain
from goldgate.pipeline.plan import select_suites
from goldgate.pipeline.record import suite_baseline
from goldgate.pipeline.score import ScoredSuite, score_outputs
from goldgate.terminal.progress import ProgressReporter

#: confidence used for the upper bound of the run-to-run spread
SPREAD_CONFIDENCE = 0.95
#: below this many runs the spread's upper bound is loose: calibrate warns
RELIABLE_RUNS = 10
#: the smallest target rate: the normal quantile of 1 - target must stay a finite number
#: (1 - 1e-300 is 1.0 in floating point), and a rarer false alarm cannot be told from none
MIN_TARGET = 1e-6
#: the points a score spans (every metric scores on 0-100): a max_drop this large never fails
SCORE_RANGE = 100.0


@dataclass(frozen=True)
class RuleRate:
    """How often one rule failed when nothing had changed."""

    rule: str
    threshold: float
    fails: int
    pairs: int

    @property
    def rate(self) -> float:
        """The false-alarm rate: failing pairs / pairs."""
        return self.fails / self.pairs if self.pairs else 0.0


@dataclass
class MetricCalibration:
    """One metric of one suite over K unchanged runs."""

    suite: str
    metric: str
    higher_is_better: bool
    scores: list[float]
    spread: float
    #: the gate's configured rules on this metric, each with its false-alarm rate
    rules: list[RuleRate] = field(default_factory=list)
    #: pairs in which any check on this metric failed
    fails: int = 0
    pairs: int = 0
    #: the max_drop to write; None when there is none to suggest (see ``note``)
    suggested_max_drop: float | None = 0.0
    max_drop: float | None = None
    #: why the suggestion is not the model's quantile (kept rule, out of range), or None
    note: str | None = None

    @property
    def mean(self) -> float:
        """The mean score over runs."""
        return statistics.fmean(self.scores)

    @property
    def false_alarm_rate(self) -> float:
        """How often a check on this metric failed with nothing changed."""
        return self.fails / self.pairs if self.pairs else 0.0


@dataclass
class SuiteCalibration:
    """One suite over K unchanged runs."""

    suite: str
    n_examples: int
    #: example id -> how many distinct outputs it gave over the runs (only those > 1)
    changing: dict[str, int]
    metrics: list[MetricCalibration]
    fails: int = 0
    pairs: int = 0

    @property
    def false_alarm_rate(self) -> float:
        """How often the suite's gate regressed with nothing changed."""
        return self.fails / self.pairs if self.pairs else 0.0


@dataclass
class Calibration:
    """The whole calibration."""

    runs: int
    target: float
    suites: list[SuiteCalibration]
    #: what makes the suggestions less trustworthy (too few runs)
    warnings: list[str] = field(default_factory=list)


def calibrate(
    config: Config,
    *,
    runs: int = 10,
    target: float = 0.01,
    suites: Sequence[str] | None = None,
    progress: ProgressReporter | None = None,
) -> Calibration:
    """Run each suite's system ``runs`` times uncached and measure its noise and false alarms."""
    if runs < 2:
        raise ValueError("calibration needs at least 2 runs")
    if not MIN_TARGET <= target < 0.5:
        raise ValueError(f"the target false-alarm rate must be from {MIN_TARGET:g} to 0.5")
    from goldgate.model.goldens import load_goldens
    from goldgate.systems.obtain import obtain_outputs

    names = select_suites(config, suites)
    for name in names:
        predictions = config.system_for(name).predictions
        if predictions is not None:
            raise UsageError(
                f"suite {name!r}: its system reads predictions from a file ({predictions!r}):"
                " re-reading a file gives the same outputs every run and measures no noise;"
                " calibrate a command or callable system that generates them"
            )
    found = []
    for name in names:
        suite = config.suites[name]
        golden = load_goldens(suite.goldens, name)
        metrics = suite.create_metrics()
        # Fresh outputs every run: the cache would replay the first run K times.
        system = config.system_for(name).model_copy(update={"cache": "off"})
        scored = [
            score_outputs(
                name,
                golden,
                obtain_outputs(
                    system, golden, root=config.root, cache_dir=config.cache_dir, progress=progress
                ),
                metrics,
            )
            for _ in range(runs)
        ]
        found.append(calibrate_suite(config, name, scored, target=target))
    warnings = []
    if runs < RELIABLE_RUNS:
        warnings.append(
            f"only {runs} runs: the spread's upper bound is wide and the suggestions loose;"
            f" use --runs {RELIABLE_RUNS} or more"
        )
    return Calibration(runs=runs, target=target, suites=found, warnings=warnings)


def calibrate_suite(
    config: Config, name: str, runs: Sequence[ScoredSuite], *, target: float
) -> SuiteCalibration:
    """Spread, changing examples and false alarms of one suite from its scored runs."""
    rules = config.suites[name].gate
    first = runs[0]
    metrics = {
        item.spec: MetricCalibration(
            suite=name,
            metric=item.spec,
            higher_is_better=item.metric.higher_is_better,
            scores=[sample_score(item.metric, run.scores.metrics[i].stats) for run in runs],
            spread=0.0,
            max_drop=rules[item.spec].max_drop if item.spec in rules else None,
        )
        for i, item in enumerate(first.scores.metrics)
    }
    for entry in metrics.values():
        entry.spread = statistics.stdev(entry.scores) if len(entry.scores) > 1 else 0.0
    changing = {}
    for record in first.golden.records:
        distinct = {tuple(run.outputs[record.id]) for run in runs}
        if len(distinct) > 1:
            changing[record.id] = len(distinct)
    suite = SuiteCalibration(name, len(first.golden), changing, list(metrics.values()))

    # Replay every ordered pair through the configured gate (drift rules aside: they need git).
    baselines = [suite_baseline(config, run) for run in runs]
    counts: dict[tuple[str, str], list[int]] = {}
    thresholds: dict[tuple[str, str], float] = {}
    for i, baseline in enumerate(baselines):
        for j, candidate in enumerate(runs):
            if i == j:
                continue
            evaluation = evaluate_suite(
                candidate.scores, baseline, rules, config.significance, slices=False
            )
            suite.pairs += 1
            suite.fails += any(c.status is CheckStatus.FAIL for c in evaluation.checks)
            failed_metrics = set()
            for check in evaluation.checks:
                if check.slice is not None:
                    continue
                key = (check.metric, check.rule)
                thresholds[key] = check.threshold
                tally = counts.setdefault(key, [0, 0])
                tally[1] += 1
                if check.status is CheckStatus.FAIL:
                    tally[0] += 1
                    failed_metrics.add(check.metric)
            for entry in metrics.values():
                entry.pairs += 1
                entry.fails += entry.metric in failed_metrics
    for (metric, rule), (fails, pairs) in counts.items():
        metrics[metric].rules.append(RuleRate(rule, thresholds[(metric, rule)], fails, pairs))
    for entry in metrics.values():
        entry.suggested_max_drop, entry.note = _suggestion(entry, len(runs), target)
    return suite


def _suggestion(
    entry: MetricCalibration, runs: int, target: float
) -> tuple[float | None, str | None]:
    """The max_drop to suggest for one metric, and why it is not the model's, if it is not."""
    modelled = suggested_max_drop(entry.spread, runs, target)
    current = next((rule for rule in entry.rules if rule.rule == "max_drop"), None)
    if current is not None and current.rate <= target and modelled > current.threshold:
        return current.threshold, (
            f"max_drop {current.threshold:g} kept false alarms at {current.rate:.1%} (target"
            f" {target:.1%}): not loosened to {modelled:.2f}"
        )
    if modelled >= SCORE_RANGE:
        return None, (
            f"no max_drop suggested: {modelled:.2f} is beyond the score's 0-{SCORE_RANGE:g}"
            " range (a rule that cannot fail); the system is too noisy for a max_drop rule"
            " or the runs too few"
        )
    return modelled, None


def pair_rate(scores: Sequence[float], threshold: float, *, higher_is_better: bool = True) -> float:
    """How often, over ordered pairs of runs, the second is worse than the first by > threshold."""
    worse = 0
    pairs = 0
    for i, base in enumerate(scores):
        for j, now in enumerate(scores):
            if i != j:
                pairs += 1
                worse += gain(now - base, higher_is_better) < -threshold - 1e-9
    return worse / pairs if pairs else 0.0


def suggested_max_drop(spread: float, runs: int, target: float) -> float:
    """The max_drop at which two unchanged runs fail with probability ``target`` (see above).

    Rounded up to 0.01 point; 0 when the system showed no spread at all.
    """
    if spread <= 0 or runs < 2:
        return 0.0
    upper = spread * math.sqrt((runs - 1) / _chi2_quantile(1 - SPREAD_CONFIDENCE, runs - 1))
    z = statistics.NormalDist().inv_cdf(1 - target)
    return math.ceil(z * math.sqrt(2) * upper * 100 - 1e-9) / 100


def _chi2_quantile(p: float, dof: int) -> float:
    """The chi-square quantile, by Wilson and Hilferty's cube-root normal approximation."""
    z = statistics.NormalDist().inv_cdf(p)
    c = 2 / (9 * dof)
    return float(dof * (1 - c + z * math.sqrt(c)) ** 3)
