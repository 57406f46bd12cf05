"""The two-level bootstrap (examples, then samples within examples) used when samples > 1."""

from __future__ import annotations

import numpy as np
import pytest

import goldgate.gate.stats as stats
from goldgate.gate.stats import compare, compare_many
from goldgate.metrics.registry import create_metric


def _exact(rng: np.random.Generator, p: np.ndarray, samples: int) -> np.ndarray:
    """exact_match statistics (correct, count) of shape (samples, n, 2)."""
    correct = (rng.random((samples, len(p))) < p).astype(np.float64)
    return np.stack([correct, np.ones_like(correct)], axis=2)


def test_identical_samples_give_the_one_level_result_exactly() -> None:
    metric = create_metric("exact_match")
    rng = np.random.default_rng(0)
    one_now, one_then = _exact(rng, np.full(120, 0.7), 1), _exact(rng, np.full(120, 0.7), 1)
    # every sample of an example is the same output: drawing samples changes nothing
    four_now, four_then = np.repeat(one_now, 4, axis=0), np.repeat(one_then, 4, axis=0)
    single = compare(metric, one_now, one_then, resamples=500, alpha=0.05, seed=3)
    double = compare(metric, four_now, four_then, resamples=500, alpha=0.05, seed=3)
    assert double == single


def test_within_example_noise_widens_the_interval() -> None:
    metric = create_metric("exact_match")
    rng = np.random.default_rng(1)
    p = rng.uniform(0.2, 0.9, 300)
    now, then = _exact(rng, p, 4), _exact(rng, p, 4)
    two = compare(metric, now, then, resamples=2000, alpha=0.05, seed=0)
    flat = [(metric, now, then)]
    blocks = np.hstack([stats._flatten(now), stats._flatten(then)])
    ((a, b),) = stats._one_level_scores(flat, blocks, resamples=2000, seed=0)
    one = stats.percentile_interval(a - b, 0.05)
    assert two.interval.high - two.interval.low > 1.05 * (one.high - one.low)
    # the observed delta is the same: only the spread around it changed
    assert two.delta == pytest.approx(float(np.mean(now[:, :, 0]) - np.mean(then[:, :, 0])) * 100)


def test_chunking_and_grouping_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    exact, f1 = create_metric("exact_match"), create_metric("token_f1")
    rng = np.random.default_rng(2)
    p = rng.uniform(0.2, 0.9, 50)
    now, then = _exact(rng, p, 3), _exact(rng, p, 3)
    f1_now = np.concatenate([now[:, :, :1] * 0.8, now[:, :, 1:]], axis=2)
    f1_then = np.concatenate([then[:, :, :1] * 0.8, then[:, :, 1:]], axis=2)
    together = compare_many(
        [(exact, now, then), (f1, f1_now, f1_then)], resamples=300, alpha=0.05, seed=9
    )
    monkeypatch.setattr(stats, "_CHUNK_CELLS", 400)  # many small chunks
    alone = [
        compare(exact, now, then, resamples=300, alpha=0.05, seed=9),
        compare(f1, f1_now, f1_then, resamples=300, alpha=0.05, seed=9),
    ]
    assert together == alone
