"""Compact statistics give back the float64 arrays bit for bit, and the sums taken of them."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st

from goldgate.compact_stats import CompactStats, as_float, take
from goldgate.metrics.registry import create_metric
from goldgate.stats import _flatten, compare_many


def _stats(seed: int, samples: int, n: int) -> npt.NDArray[np.float64]:
    rng = np.random.default_rng(seed)
    array = rng.random((samples, n, 5)) * rng.choice([1.0, 1e-3, 1e6])
    array[:, :, 1] = rng.integers(0, 9, (samples, n))  # one byte
    array[:, :, 2] = rng.integers(0, 70_000, (samples, n))  # four bytes
    array[:, :, 3] = -rng.integers(0, 5, (samples, n))  # negative integers
    array[:, : n // 2, 4] = -0.0  # integral, yet its sign bit must survive
    return array


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.integers(0, 40))
def test_compact_statistics_expand_take_and_sum_like_the_array(
    seed: int, samples: int, n: int
) -> None:
    array = _stats(seed, samples, n)
    compact = CompactStats.of(array)
    assert compact.shape == array.shape
    assert compact.expand().tobytes() == array.tobytes()
    assert np.signbit(compact.expand()[:, : n // 2, 4]).all()
    assert compact.nbytes < array.nbytes or n == 0
    rng = np.random.default_rng(seed)
    cuts = [np.arange(min(3, n)), rng.integers(0, max(n, 1), 7) if n else np.arange(0)]
    cuts += [np.arange(n // 2, n), rng.permutation(n)[: n // 2]]
    for indices in cuts:
        indices = indices.astype(np.intp)
        want, got = take(array, indices), as_float(take(compact, indices))
        assert got.tobytes() == want.tobytes()
        # sums over samples and examples add in memory order: the order must be the array's
        assert got.sum(axis=(0, 1)).tobytes() == want.sum(axis=(0, 1)).tobytes()
        assert got.sum(axis=1).tobytes() == want.sum(axis=1).tobytes()
        if len(indices):
            again = rng.integers(0, len(indices), 5).astype(np.intp)
            nested = as_float(take(take(compact, indices), again))
            assert nested.sum(axis=(0, 1)).tobytes() == take(want, again).sum(axis=(0, 1)).tobytes()
    flat = _flatten(array)
    for start in (0, 1, n // 3, n):
        assert compact.rows(start, start + 7).tobytes() == flat[start : start + 7].tobytes()


def test_large_statistics_expand_a_run_of_examples_at_a_time() -> None:
    """More examples than one run of the expansion, in both memory orders."""
    samples, n = 2, 3 * 8_192 + 5
    array = _stats(11, samples, n)
    compact = CompactStats.of(array)
    assert compact.expand().tobytes() == array.tobytes()
    indices = np.random.default_rng(11).permutation(n).astype(np.intp)
    shuffled = compact.take(indices)  # example-major
    assert shuffled.example_major
    assert shuffled.expand().tobytes() == array[:, indices].tobytes()
    assert shuffled.expand().strides == array[:, indices].strides
    buffer = np.full((4_096, samples * 5), np.nan)
    for start in (0, n - 100):
        fresh, reused = (
            compact.rows(start, start + 4_096),
            compact.rows(start, start + 4_096, into=buffer),
        )
        assert reused.base is buffer
        assert reused.shape == fresh.shape and reused.strides == fresh.strides
        assert (
            reused.tobytes() == fresh.tobytes() == _flatten(array)[start : start + 4_096].tobytes()
        )


def test_the_bootstrap_of_compact_statistics_is_that_of_the_arrays() -> None:
    """Tiled (expanded a tile at a time) and whole, one metric or several."""
    rng = np.random.default_rng(7)
    n = 40_000  # above the size where the product is tiled
    metric = create_metric("rouge1")
    now = np.zeros((1, n, 4))
    now[0, :, :3] = rng.random((n, 3))
    now[0, :, 3] = 1.0
    then = now.copy()
    then[0, : n // 10, :3] = rng.random((n // 10, 3))
    bleu = create_metric("exact_match")
    hits = rng.integers(0, 2, (1, n, 2)).astype(np.float64)
    hits[:, :, 1] = 1.0
    for size in (n, 500):
        arrays = [(metric, now[:, :size], then[:, :size]), (bleu, hits[:, :size], hits[:, :size])]
        compact = [(m, CompactStats.of(a), CompactStats.of(b)) for m, a, b in arrays]
        want = compare_many(arrays, resamples=40, alpha=0.05, seed=3)
        assert compare_many(compact, resamples=40, alpha=0.05, seed=3) == want
