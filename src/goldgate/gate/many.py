"""Many systems on one golden set: every pair's paired bootstrap, Holm's correction, groups.

Pure, like the rest of ``gate/``: statistics in, a :class:`MetricMatrix` out. Each pair is
tested by :func:`goldgate.gate.stats.compare_many`, the very function the gate runs, with the
same resamples and seed, on the examples in id order as the gate orders them: a pair's raw
p-value is the one ``goldgate run`` prints when one of the two is the baseline and the
other the run. Because a matrix of k systems makes k(k-1)/2 tests, the p-values are
corrected with Holm's step-down method (it controls the family-wise error rate whatever the
dependence between the tests); a pair is significantly different when its corrected
p-value is below alpha. Systems that no significant difference separates share a letter
(a compact letter display).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from goldgate.gate.stats import (
    _drawn,
    _flat,
    _one_level_scores,
    _two_level_scores,
    compare_many,
    percentile_interval,
    sample_score,
)
from goldgate.metrics.base import Metric
from goldgate.model.compact_stats import Statistics, as_float
from goldgate.model.result import Interval, gain

#: the correction applied over the pairs of one suite and metric
CORRECTION = "holm"


@dataclass(frozen=True)
class Settings:
    """The paired bootstrap's settings (the configuration's ``significance``)."""

    resamples: int
    alpha: float
    seed: int


@dataclass(frozen=True)
class SystemScore:
    """One system's score on a metric, its interval and its place."""

    system: str
    score: float
    interval: Interval
    rank: int
    #: letters shared by systems no significant difference separates (``a``, ``ab``, ...)
    group: str


@dataclass(frozen=True)
class PairResult:
    """Systems ``a`` and ``b`` (a before b in the order given): ``delta`` is b − a."""

    a: str
    b: str
    delta: float
    interval: Interval
    p_value: float
    #: Holm-adjusted over every pair of the metric
    p_holm: float
    significant: bool

    def better(self, higher_is_better: bool) -> str | None:
        """The system significantly better of the two, in the metric's direction."""
        if not self.significant:
            return None
        return self.b if gain(self.delta, higher_is_better) > 0 else self.a


@dataclass(frozen=True)
class MetricMatrix:
    """One metric of one suite over every system: ranked scores and every pair."""

    metric: str
    signature: str
    higher_is_better: bool
    #: best first
    ranking: list[SystemScore]
    #: in the order the systems were given: (0, 1), (0, 2), ..., (1, 2), ...
    pairs: list[PairResult]

    def pair(self, a: str, b: str) -> PairResult | None:
        """The comparison of ``a`` and ``b`` whichever order they were given in."""
        for found in self.pairs:
            if {found.a, found.b} == {a, b}:
                return found
        return None


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    Sorted ascending, the i-th smallest (from 0) is multiplied by ``m - i``; each adjusted
    value is at least the one before it (monotone), and at most 1.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda index: (p_values[index], index))
    adjusted = [0.0] * m
    running = 0.0
    for position, index in enumerate(order):
        running = max(running, min(1.0, (m - position) * p_values[index]))
        adjusted[index] = running
    return adjusted


def letter_groups(ranked: Sequence[str], different: set[frozenset[str]]) -> dict[str, str]:
    """A compact letter display: systems (best first) → letters, two systems sharing a letter
    when no significant difference separates them (Piepho's insert-and-absorb).

    Every pair in ``different`` is split apart; a group inside another is absorbed. Letters
    go in the order of the best system of each group, so the best system has ``a``.
    """
    groups: list[set[str]] = [set(ranked)]
    for pair in sorted(different, key=lambda p: sorted(ranked.index(s) for s in p)):
        first, second = sorted(pair, key=ranked.index)
        split: list[set[str]] = []
        for group in groups:
            if first in group and second in group:
                split += [group - {first}, group - {second}]
            else:
                split.append(group)
        groups = [g for g in split if g and not any(g < other for other in split)]
        groups = [g for i, g in enumerate(groups) if g not in groups[:i]]
    position = {system: index for index, system in enumerate(ranked)}
    groups.sort(key=lambda g: sorted(position[s] for s in g))
    letters = {system: "" for system in ranked}
    for number, group in enumerate(groups):
        for system in group:
            letters[system] += _letter(number)
    return letters


def _letter(number: int) -> str:
    """``a`` … ``z``, then ``a1`` … (26 groups are more than a table shows anyway)."""
    return chr(ord("a") + number % 26) + (str(number // 26) if number >= 26 else "")


def score_interval(metric: Metric[Any], stats: Statistics, settings: Settings) -> Interval:
    """The percentile interval of one system's score over the resamples that
    :func:`~goldgate.gate.stats.compare_many` draws for the seed: the same examples (and
    samples) every paired comparison of the matrix is computed on."""
    # The bootstrap's own building blocks: the side is drawn exactly as a paired side is.
    drawn = _drawn(metric, stats)
    if drawn.shape[0] > 1:
        both = as_float(drawn)
        scores = _two_level_scores(
            [(metric, both, both)], resamples=settings.resamples, seed=settings.seed
        )
    else:
        block = _flat(drawn)
        scores = _one_level_scores(
            [(metric, drawn, drawn)],
            [block, block],
            resamples=settings.resamples,
            seed=settings.seed,
        )
    return percentile_interval(scores[0][0], settings.alpha)


@dataclass(frozen=True)
class Side:
    """One system's statistics of one metric, ``(samples, n, k)``, the examples in id order
    (the order every side of the matrix shares)."""

    system: str
    stats: Statistics


def compare_systems(
    metrics: Sequence[tuple[str, Metric[Any], str, Sequence[Side]]], settings: Settings
) -> list[MetricMatrix]:
    """Per metric (spec, metric, signature, one side per system, the systems in the same
    order): every system's score and interval, every pair's paired bootstrap and Holm's
    correction over the pairs, the ranking and its letter groups.

    A pair's metrics are bootstrapped together in one :func:`compare_many` call, as the gate
    does for a run and its baseline, with the first of the two in the baseline's place.
    """
    if not metrics:
        return []
    systems = [side.system for side in metrics[0][3]]
    n = len(systems)
    tested: dict[tuple[int, int], list[Any]] = {}
    for i in range(n):
        for j in range(i + 1, n):
            tested[(i, j)] = compare_many(
                [(metric, sides[j].stats, sides[i].stats) for _, metric, _, sides in metrics],
                resamples=settings.resamples,
                alpha=settings.alpha,
                seed=settings.seed,
            )
    matrices = []
    for position, (spec, metric, signature, sides) in enumerate(metrics):
        keys = list(tested)
        raw = [tested[key][position].p_value for key in keys]
        adjusted = holm(raw)
        pairs = [
            PairResult(
                a=systems[i],
                b=systems[j],
                delta=tested[(i, j)][position].delta,
                interval=tested[(i, j)][position].interval,
                p_value=p,
                p_holm=p_holm,
                significant=p_holm < settings.alpha,
            )
            for (i, j), p, p_holm in zip(keys, raw, adjusted, strict=True)
        ]
        scores = [sample_score(metric, side.stats) for side in sides]
        better = metric.higher_is_better
        order = sorted(
            range(n),
            key=lambda index: (
                -gain(scores[index], better) if math.isfinite(scores[index]) else math.inf,
                index,
            ),
        )
        ranked = [systems[index] for index in order]
        different = {frozenset((pair.a, pair.b)) for pair in pairs if pair.significant}
        letters = letter_groups(ranked, different)
        ranking = [
            SystemScore(
                system=systems[index],
                score=scores[index],
                interval=score_interval(metric, sides[index].stats, settings),
                # equal scores share a rank (1, 1, 3)
                rank=1 + sum(gain(scores[other] - scores[index], better) > 0 for other in order),
                group=letters[systems[index]],
            )
            for index in order
        ]
        matrices.append(
            MetricMatrix(
                metric=spec,
                signature=signature,
                higher_is_better=better,
                ranking=ranking,
                pairs=pairs,
            )
        )
    return matrices
