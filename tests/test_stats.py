"""The paired bootstrap: equal to a naive loop, seeded, and sensible on real and noisy drops."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldgate.gate import stats
from goldgate.gate.stats import (
    as_stats_array,
    compare,
    compare_many,
    paired_bootstrap,
    percentile_interval,
    sample_score,
)
from tests.gate_metrics import accuracy, overlap, right_wrong


def _naive(metric, current, baseline, *, resamples, alpha, seed):  # type: ignore[no-untyped-def]
    """The textbook loop: draw indices, re-sum rows, score both sides."""
    n = len(current)
    draws = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    deltas = []
    for row in draws:
        cur = [sum(current[i][j] for i in row) for j in range(len(current[0]))]
        base = [sum(baseline[i][j] for i in row) for j in range(len(baseline[0]))]
        deltas.append(metric.score_stats(cur) - metric.score_stats(base))
    deltas.sort()
    cut = math.floor(resamples * alpha / 2)
    real = metric.score_stats([sum(c) for c in zip(*current, strict=True)]) - metric.score_stats(
        [sum(c) for c in zip(*baseline, strict=True)]
    )
    mean = sum(deltas) / len(deltas)
    extreme = sum(abs(d - mean) >= abs(real) - 1e-12 for d in deltas)
    return real, deltas[cut], deltas[resamples - cut - 1], (extreme + 1) / (resamples + 1)


def _random_overlap_stats(seed: int, n: int) -> list[tuple[float, float]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        total = rng.randint(1, 20)
        rows.append((float(rng.randint(0, total)), float(total)))
    return rows


@pytest.mark.parametrize("seed", [0, 7])
def test_equals_the_naive_loop(seed: int) -> None:
    metric = overlap()
    current = _random_overlap_stats(1, 40)
    baseline = _random_overlap_stats(2, 40)
    result = paired_bootstrap(metric, current, baseline, resamples=200, alpha=0.1, seed=seed)
    real, low, high, p = _naive(metric, current, baseline, resamples=200, alpha=0.1, seed=seed)
    assert result.delta == pytest.approx(real, abs=1e-9)
    assert result.interval.low == pytest.approx(low, abs=1e-9)
    assert result.interval.high == pytest.approx(high, abs=1e-9)
    assert result.interval.level == pytest.approx(0.9)
    assert result.p_value == pytest.approx(p)


def test_same_seed_same_interval_other_seed_other_interval() -> None:
    metric = overlap()
    current = _random_overlap_stats(3, 60)
    baseline = _random_overlap_stats(4, 60)
    first = paired_bootstrap(metric, current, baseline, resamples=300, seed=11)
    again = paired_bootstrap(metric, current, baseline, resamples=300, seed=11)
    other = paired_bootstrap(metric, current, baseline, resamples=300, seed=12)
    assert first == again
    assert (first.interval.low, first.interval.high) != (other.interval.low, other.interval.high)


def test_block_size_does_not_change_the_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    metric = overlap()
    current = _random_overlap_stats(5, 50)
    baseline = _random_overlap_stats(6, 50)
    whole = paired_bootstrap(metric, current, baseline, resamples=250, seed=3)
    monkeypatch.setattr(stats, "_CHUNK_CELLS", 7 * 50)  # seven resamples per block
    blocks = paired_bootstrap(metric, current, baseline, resamples=250, seed=3)
    assert whole == blocks


def test_compare_many_equals_each_alone() -> None:
    acc, ovl = accuracy(), overlap()
    rng = random.Random(9)
    cur_acc = as_stats_array(right_wrong([rng.random() < 0.7 for _ in range(30)]), 2)
    base_acc = as_stats_array(right_wrong([rng.random() < 0.8 for _ in range(30)]), 2)
    cur_ovl = as_stats_array(_random_overlap_stats(7, 30), 2)
    base_ovl = as_stats_array(_random_overlap_stats(8, 30), 2)
    together = compare_many(
        [(acc, cur_acc, base_acc), (ovl, cur_ovl, base_ovl)], resamples=200, alpha=0.05, seed=0
    )
    alone = [
        compare(acc, cur_acc, base_acc, resamples=200, alpha=0.05, seed=0),
        compare(ovl, cur_ovl, base_ovl, resamples=200, alpha=0.05, seed=0),
    ]
    assert together == alone


def test_identical_sides_give_zero_delta_and_p_one() -> None:
    rows = _random_overlap_stats(10, 25)
    result = paired_bootstrap(overlap(), rows, rows, resamples=100)
    assert result.delta == 0.0
    assert result.interval.low == result.interval.high == 0.0
    assert result.p_value == 1.0
    assert not result.significant(0.05)


def test_small_set_random_drop_is_noise_real_drop_is_significant() -> None:
    metric = accuracy()
    rng = random.Random(0)
    baseline = [rng.random() < 0.8 for _ in range(30)]
    # One example lost: a one-example wobble that a 30-example set cannot distinguish.
    tiny = list(baseline)
    tiny[baseline.index(True)] = False
    # Eight examples lost, none gained: a real regression.
    real = list(baseline)
    for index in [i for i, ok in enumerate(baseline) if ok][:8]:
        real[index] = False
    noise = paired_bootstrap(metric, right_wrong(tiny), right_wrong(baseline))
    drop = paired_bootstrap(metric, right_wrong(real), right_wrong(baseline))
    assert noise.delta < 0 and not noise.significant(0.05)
    assert noise.interval.low < 0 <= noise.interval.high
    assert drop.delta < 0 and drop.significant(0.05)
    assert drop.interval.high < 0


def test_samples_are_scored_separately_and_averaged() -> None:
    metric = overlap()
    first = _random_overlap_stats(11, 20)
    second = _random_overlap_stats(12, 20)
    array = as_stats_array([first, second], 2)
    assert array.shape == (2, 20, 2)
    expected = (
        metric.score_stats([sum(c) for c in zip(*first, strict=True)])
        + metric.score_stats([sum(c) for c in zip(*second, strict=True)])
    ) / 2
    assert sample_score(metric, array) == pytest.approx(expected, abs=1e-12)
    # Two identical samples bootstrap exactly like one.
    doubled = compare(
        metric,
        as_stats_array([first, first], 2),
        as_stats_array([second, second], 2),
        resamples=100,
        alpha=0.05,
        seed=1,
    )
    single = compare(
        metric,
        as_stats_array(first, 2),
        as_stats_array(second, 2),
        resamples=100,
        alpha=0.05,
        seed=1,
    )
    assert doubled.interval.low == pytest.approx(single.interval.low, abs=1e-9)
    assert doubled.p_value == single.p_value


def test_percentile_interval_uses_sacrebleus_positions() -> None:
    deltas = np.arange(1000, dtype=np.float64)[::-1].copy()
    interval = percentile_interval(deltas, 0.05)
    assert (interval.low, interval.high) == (25.0, 974.0)


def test_mismatched_or_empty_inputs_are_rejected() -> None:
    with pytest.raises(ValueError):
        paired_bootstrap(accuracy(), right_wrong([True]), right_wrong([True, False]))
    empty = as_stats_array([], 2)
    with pytest.raises(ValueError):
        compare(accuracy(), empty, empty, resamples=10, alpha=0.05, seed=0)


@settings(max_examples=100, deadline=None)
@given(
    pattern=st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40),
    seed=st.integers(0, 2**32 - 1),
)
def test_interval_is_ordered_and_p_in_range(pattern: list[tuple[bool, bool]], seed: int) -> None:
    current = right_wrong([now for now, _ in pattern])
    baseline = right_wrong([was for _, was in pattern])
    result = paired_bootstrap(accuracy(), current, baseline, resamples=50, seed=seed)
    assert result.interval.low <= result.interval.high
    assert 0 < result.p_value <= 1
    # Every resampled delta is a difference of two accuracies over the same draws.
    assert result.interval.low >= -100.0 and result.interval.high <= 100.0
    if current == baseline:
        assert result.p_value == 1.0


def test_one_exact_metric_on_a_large_set_against_a_baseline_that_mostly_holds() -> None:
    """One integer metric gated alone above the tiled size, 1 % of its examples flipped from
    right to wrong: a real interval around the drop, as the two sides' totals are their own
    (they once aliased, which made every resampled delta zero: interval [0, 0], p = 1/1001)."""
    n = 40_000
    rng = random.Random(3)
    baseline = [rng.random() < 0.8 for _ in range(n)]
    current = list(baseline)
    for index in [i for i, ok in enumerate(baseline) if ok][: n // 100]:
        current[index] = False
    result = paired_bootstrap(
        accuracy(), right_wrong(current), right_wrong(baseline), resamples=200
    )
    assert result.delta == pytest.approx(-100 / 100)
    assert result.interval.low < result.delta < result.interval.high < 0
