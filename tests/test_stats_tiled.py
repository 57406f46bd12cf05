"""The tiled bootstrap of large sets gives, bit for bit, the totals of its first version.

``_reference_totals`` is ``resampled_totals_many``'s tiled path as it was before blocks of
integers were multiplied side by side and counts were kept in one byte: 32 resamples a pass
as 2-byte counts, every block multiplied by every tile on its own. Every figure a gate has
reported at scale came from it, so the current code must give exactly its numbers, the last
bit and the sign of zero included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from goldgate.gate import stats
from goldgate.model.compact_stats import CompactStats, GappedStats

FloatArray = Any


def _reference_totals(
    blocks: Sequence[stats.Block],
    *,
    resamples: int,
    seed: int,
    tile: int = 4_096,
    pass_rows: int = 32,
    count_limit: int = int(np.iinfo(np.uint16).max),
) -> list[FloatArray]:
    """The tiled path of ``resampled_totals_many`` before it merged blocks (at edd0373)."""
    n = stats._block_shape(blocks[0])[0]
    outs = [np.zeros((resamples, stats._block_shape(b)[1]), dtype=np.float64) for b in blocks]
    rng = np.random.default_rng(seed)
    counts = np.empty((pass_rows, n), dtype=np.uint16)
    for start in range(0, resamples, pass_rows):
        rows = min(pass_rows, resamples - start)
        for offset in range(rows):
            drawn = np.bincount(rng.integers(0, n, size=n), minlength=n)
            if drawn.max() > count_limit:
                for out, block in zip(outs, blocks, strict=True):
                    out[start + offset] = drawn.astype(np.float64) @ stats._block_rows(block, 0, n)
                drawn[:] = 0
            counts[offset] = drawn
        for first in range(0, n, tile):
            part = counts[:rows, first : first + tile].astype(np.float64)
            for out, block in zip(outs, blocks, strict=True):
                out[start : start + rows] += part @ stats._block_rows(block, first, first + tile)
    return outs


def _assert_bitwise_equal(got: Sequence[FloatArray], expected: Sequence[FloatArray]) -> None:
    assert len(got) == len(expected)
    for mine, theirs in zip(got, expected, strict=True):
        assert mine.dtype == theirs.dtype == np.float64
        assert mine.shape == theirs.shape
        # int64 views compare the bits: -0.0 against 0.0 and NaN against NaN included
        assert np.array_equal(mine.view(np.int64), theirs.view(np.int64))


def _blocks(n: int, rng: np.random.Generator) -> list[stats.Block]:
    """Statistics of every kind a gate bootstraps, compact and float64, exact and not."""
    bleu_like = rng.integers(0, 30, size=(n, 10)).astype(np.float64)
    signed = rng.integers(-50, 50, size=(n, 3)).astype(np.float64)
    rouge_like = np.column_stack([rng.random((n, 3)), np.ones(n)])
    f1_like = np.column_stack([rng.random(n), np.ones(n)])
    scaled = rng.random((n, 2)) * np.array([1e-6, 1e9])
    huge = rng.integers(0, 2**40, size=(n, 2)).astype(np.float64)  # integers, but not exact
    side_by_side = np.column_stack([rng.random((n, 2)), rng.integers(0, 5, size=(n, 2))])
    return [
        CompactStats.of(bleu_like[np.newaxis]),
        CompactStats.of(rouge_like[np.newaxis]),
        bleu_like[:, :4].copy(),
        rouge_like.copy(),
        CompactStats.of(signed[np.newaxis]),
        signed.copy(),
        f1_like,
        CompactStats.of(f1_like[np.newaxis]),
        scaled,
        huge,
        CompactStats.of(huge[np.newaxis]),
        # column slices of one matrix, as _one_level_scores hands them over
        side_by_side[:, :2],
        side_by_side[:, 2:],
    ]


def test_exact_products_are_told_from_the_others() -> None:
    rng = np.random.default_rng(0)
    blocks = _blocks(5_000, rng)
    exact = [stats._exact_products(block) for block in blocks]
    assert exact == [True, False, True, False, True, True] + [False] * 6 + [True]
    assert not stats._exact_products(np.array([[1.0], [np.nan]]))
    assert not stats._exact_products(np.array([[1.0], [np.inf]]))
    assert stats._exact_products(np.array([[-0.0], [3.0]]))


@pytest.mark.parametrize("n", [stats._TILED_ABOVE + 1, 9 * stats._TILE + 1_001])
@pytest.mark.parametrize("resamples", [1, 31, 129, 300])
def test_large_sets_give_the_reference_totals(n: int, resamples: int) -> None:
    """Just above the tiled threshold and at a size that is no multiple of the tile; passes
    of one row, less than one product, one row more than a pass, and a partial last pass."""
    blocks = _blocks(n, np.random.default_rng(n + resamples))
    got = stats.resampled_totals_many(blocks, resamples=resamples, seed=resamples)
    _assert_bitwise_equal(got, _reference_totals(blocks, resamples=resamples, seed=resamples))


@pytest.mark.parametrize("concurrent", [2, 3, 8])
def test_bootstraps_sharing_a_pass_give_the_reference_totals(concurrent: int) -> None:
    """Threads that run bootstraps at once draw smaller passes: the same totals, bit for bit."""
    n = stats._TILED_ABOVE + 2_345
    blocks = _blocks(n, np.random.default_rng(concurrent))
    got = stats.resampled_totals_many(blocks, resamples=200, seed=5, concurrent=concurrent)
    _assert_bitwise_equal(got, _reference_totals(blocks, resamples=200, seed=5))


@pytest.mark.parametrize("kinds", ["exact", "fractional"])
def test_sets_of_one_kind_of_block(kinds: str) -> None:
    n = stats._TILED_ABOVE + 4_321
    blocks = _blocks(n, np.random.default_rng(3))
    chosen = [b for b in blocks if stats._exact_products(b) == (kinds == "exact")]
    got = stats.resampled_totals_many(chosen, resamples=150, seed=4)
    _assert_bitwise_equal(got, _reference_totals(chosen, resamples=150, seed=4))


@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_small_tiles_and_passes_give_the_reference_totals(
    seed: int, paired: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tiled path scaled down: odd tiles, passes and sizes, shuffled blocks (or, paired,
    blocks that repeat the one before them but for a few examples)."""
    rng = np.random.default_rng(seed)
    tile = int(rng.integers(5, 60))
    pass_rows = int(rng.integers(1, 12))
    n = int(rng.integers(101, 700))
    resamples = int(rng.integers(1, 5 * pass_rows * stats._PRODUCTS_PER_PASS))
    monkeypatch.setattr(stats, "_TILED_ABOVE", 100)
    monkeypatch.setattr(stats, "_TILE", tile)
    monkeypatch.setattr(stats, "_PASS_ROWS", pass_rows)
    if paired:
        chosen = _paired(n, rng, changed=int(rng.integers(0, n // 10)))
    else:
        blocks = _blocks(n, rng)
        chosen = [blocks[i] for i in rng.permutation(len(blocks))[: int(rng.integers(1, 14))]]
    got = stats.resampled_totals_many(chosen, resamples=resamples, seed=seed)
    expected = _reference_totals(
        chosen, resamples=resamples, seed=seed, tile=tile, pass_rows=pass_rows
    )
    _assert_bitwise_equal(got, expected)


class _Skewed:
    """A generator that, every ``every`` draws of examples, draws example 0 ``repeats``
    times: counts beyond what a byte (or two) holds, which fair draws never reach."""

    def __init__(self, seed: int, *, every: int, repeats: int) -> None:
        self._rng = _real_default_rng(seed)
        self._every, self._repeats, self._calls = every, repeats, 0

    def integers(self, low: int, high: int, size: int) -> Any:
        draws = self._rng.integers(low, high, size=size)
        self._calls += 1
        if self._calls % self._every == 0:
            draws[: self._repeats] = 0
        return draws


_real_default_rng = np.random.default_rng


def _skew(monkeypatch: pytest.MonkeyPatch, *, every: int, repeats: int) -> None:
    def skewed(seed: int) -> _Skewed:
        return _Skewed(seed, every=every, repeats=repeats)

    monkeypatch.setattr(np.random, "default_rng", skewed)


def test_counts_beyond_one_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass with a count above 255 is counted in two bytes, with the same totals."""
    n = stats._TILED_ABOVE + 1_234
    blocks = _blocks(n, np.random.default_rng(5))
    _skew(monkeypatch, every=7, repeats=300)
    got = stats.resampled_totals_many(blocks, resamples=270, seed=6)
    _assert_bitwise_equal(got, _reference_totals(blocks, resamples=270, seed=6))


def test_counts_beyond_two_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A resample with a count above 65,535 is multiplied whole, as it always was."""
    n = 70_001
    blocks = _blocks(n, np.random.default_rng(7))
    _skew(monkeypatch, every=5, repeats=66_000)
    got = stats.resampled_totals_many(blocks, resamples=40, seed=8)
    _assert_bitwise_equal(got, _reference_totals(blocks, resamples=40, seed=8))


def test_negative_zeros_keep_their_sign(monkeypatch: pytest.MonkeyPatch) -> None:
    """Columns of -0.0 (integers to the exactness test) total as the reference totals them."""
    monkeypatch.setattr(stats, "_TILED_ABOVE", 100)
    monkeypatch.setattr(stats, "_TILE", 16)
    n = 150
    zeros = np.full((n, 2), -0.0)
    blocks: list[stats.Block] = [zeros, np.column_stack([zeros[:, 0], np.ones(n)])]
    got = stats.resampled_totals_many(blocks, resamples=20, seed=1)
    _assert_bitwise_equal(got, _reference_totals(blocks, resamples=20, seed=1, tile=16))


def _paired(n: int, rng: np.random.Generator, *, changed: int) -> list[stats.Block]:
    """Each metric's current statistics followed by its baseline's, as ``compare_many`` hands
    them over: the same but for ``changed`` examples (a run whose outputs mostly held)."""
    bleu_like = rng.integers(0, 30, size=(n, 10)).astype(np.float64)
    rouge_like = np.column_stack([rng.random((n, 3)), np.ones(n)])
    signed = rng.integers(-50, 50, size=(n, 3)).astype(np.float64)
    rows = rng.choice(n, size=changed, replace=False)

    def edited(array: FloatArray, *, integers: bool) -> FloatArray:
        copy = array.copy()
        if integers:
            copy[rows] = rng.integers(0, 200, size=(changed, array.shape[1]))
        else:
            copy[rows] = rng.random((changed, array.shape[1]))
        return copy

    return [
        CompactStats.of(bleu_like[np.newaxis]),
        CompactStats.of(edited(bleu_like, integers=True)[np.newaxis]),
        CompactStats.of(rouge_like[np.newaxis]),
        CompactStats.of(rouge_like.copy()[np.newaxis]),  # fractional, unchanged
        signed,
        edited(signed, integers=True),  # float64 blocks, one exact
        CompactStats.of(rouge_like[np.newaxis]),
        CompactStats.of(edited(rouge_like, integers=False)[np.newaxis]),  # fractional, changed
        bleu_like[:, :4],
        bleu_like[:, :4].copy(),  # exact, unchanged
    ]


@pytest.mark.parametrize("changed", [0, 1, 37, 2_000])
def test_baseline_blocks_that_repeat_the_current_ones_give_the_reference_totals(
    changed: int,
) -> None:
    """A block that repeats the one before it but for a few examples is not multiplied
    whole (its totals are the other's plus the changed examples'): the same totals."""
    n = stats._TILED_ABOVE + 3_001
    blocks = _paired(n, np.random.default_rng(changed), changed=changed)
    exact = [stats._exact_products(block) for block in blocks]
    repeated = stats._repeats(blocks, exact)
    # fractional with a change is multiplied whole; with none, its totals are reused
    assert sorted(repeated) == ([1, 3, 5, 7, 9] if changed == 0 else [1, 3, 5, 9])
    assert repeated[3] is None
    for index in (1, 5, 9):
        found = repeated[index]
        assert isinstance(found, stats._Delta)
        assert len(found.rows) == (0 if index == 9 else changed)
    got = stats.resampled_totals_many(blocks, resamples=150, seed=changed)
    _assert_bitwise_equal(got, _reference_totals(blocks, resamples=150, seed=changed))
    assert got[3] is not got[2]  # each block has totals of its own


def test_blocks_too_different_or_too_large_are_multiplied_whole() -> None:
    n = stats._TILED_ABOVE + 1_000
    rng = np.random.default_rng(11)
    counts = rng.integers(0, 30, size=(n, 3)).astype(np.float64)
    many = counts.copy()
    many[: int(n * stats._DELTA_SHARE) + 1] += 1  # more examples changed than pays
    bits = np.column_stack([rng.random(n), np.ones(n)])
    signs = bits.copy()
    signs[5, 0] = -0.0  # the same number to ==, not the same bits
    bits[5, 0] = 0.0
    blocks: list[stats.Block] = [
        counts,
        many,
        CompactStats.of(bits[np.newaxis]),
        CompactStats.of(signs[np.newaxis]),
        bits,
        bits.copy(),  # float64 fractional blocks are multiplied as they always were
    ]
    exact = [stats._exact_products(block) for block in blocks]
    assert stats._repeats(blocks, exact) == {}
    # exact each (a sum of sizes times 65,535 below 2**52), their difference not
    limit = stats._EXACT_BELOW / stats._COUNT_LIMIT
    signed = rng.integers(-5, 5, size=(n, 1)).astype(np.float64)
    signed[0] = round(0.6 * limit)
    flipped = signed.copy()
    flipped[0] = -signed[0]
    assert stats._exact_products(signed) and stats._exact_products(flipped)
    assert stats._delta(signed, flipped) is None
    assert stats._delta(signed, signed + (np.arange(n) == 1)[:, np.newaxis]) is not None
    blocks += [signed, flipped]
    got = stats.resampled_totals_many(blocks, resamples=70, seed=3)
    _assert_bitwise_equal(got, _reference_totals(blocks, resamples=70, seed=3))


def test_repeating_blocks_with_counts_beyond_two_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A resample multiplied whole gives a repeating block's totals too."""
    n = 70_001
    blocks = _paired(n, np.random.default_rng(9), changed=500)
    _skew(monkeypatch, every=5, repeats=66_000)
    got = stats.resampled_totals_many(blocks, resamples=40, seed=8)
    _assert_bitwise_equal(got, _reference_totals(blocks, resamples=40, seed=8))


def test_tiles_past_single_precision_are_multiplied_in_double() -> None:
    """Exact tiles whose sums float32 would round are multiplied in float64; the rest in
    float32, which is what makes the bound matter: without it the totals would differ."""
    n = 9 * stats._TILE + 77
    rng = np.random.default_rng(4)
    big = rng.integers(0, 5, size=(n, 3)).astype(np.float64)
    # tiles 2 and 5 past float32's exact integers (2**24) with any count; the others within
    big[2 * stats._TILE + 9, 1] = 2.0**24 + 1
    big[5 * stats._TILE : 6 * stats._TILE, 0] = 4_097.0
    small = CompactStats.of(rng.integers(0, 3, size=(1, n, 2)).astype(np.float64))
    blocks: list[stats.Block] = [big, small]
    sums = stats._tile_sums(blocks, n)
    assert [bool(s >= stats._SINGLE_BELOW / 2) for s in sums] == [
        t in (2, 5) for t in range(len(sums))
    ]
    got = stats.resampled_totals_many(blocks, resamples=70, seed=6)
    _assert_bitwise_equal(got, _reference_totals(blocks, resamples=70, seed=6))


def test_single_precision_without_its_bound_would_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """The float32 products are taken: with the bound lifted, a tile past it rounds."""
    n = stats._TILED_ABOVE + 1
    column = np.ones((n, 1))
    column[:: stats._TILE // 4] = 2.0**24 + 1  # float32 holds 2**24 and 2**24 + 2
    assert stats._exact_products(column)
    expected = _reference_totals([column], resamples=20, seed=0)
    _assert_bitwise_equal(stats.resampled_totals_many([column], resamples=20, seed=0), expected)
    monkeypatch.setattr(stats, "_SINGLE_BELOW", np.inf)
    lifted = stats.resampled_totals_many([column], resamples=20, seed=0)
    assert not np.array_equal(lifted[0], expected[0])


def _left_out(n: int, spread: int) -> npt.NDArray[np.intp]:
    """Every example of ``n`` but a few: one after the first, a pair in the middle, one
    inside a later tile and one before the last (the paired examples of a run after a few
    golden records were edited), and ``spread`` more drawn at random."""
    gaps = {1, n // 2, n // 2 + 1, 3 * 4_096 + 17, n - 2}
    gaps |= set(np.random.default_rng(spread).choice(np.arange(2, n - 2), spread).tolist())
    return np.setdiff1d(np.arange(n), np.fromiter(gaps, dtype=np.intp)).astype(np.intp)


@pytest.mark.parametrize("spread", [0, 300])
def test_gapped_views_give_the_totals_of_copies(spread: int) -> None:
    """The bootstrap of every compact block (and of a pair that repeats but for a few
    examples) taken with a few examples left out: a view, and the totals of the copy."""
    n = stats._TILED_ABOVE + 3_001
    kept = _left_out(n, spread)
    blocks = _blocks(n, np.random.default_rng(5)) + _paired(n, np.random.default_rng(6), changed=9)
    views = [b.take(kept) if isinstance(b, CompactStats) else b[kept] for b in blocks]
    copies = [b.take(kept, view=False) if isinstance(b, CompactStats) else b[kept] for b in blocks]
    assert all(isinstance(v, GappedStats) for v in views if isinstance(v, CompactStats))
    assert not any(isinstance(c, GappedStats) for c in copies)
    for concurrent in (1, 2):
        got = stats.resampled_totals_many(views, resamples=70, seed=spread, concurrent=concurrent)
        want = stats.resampled_totals_many(copies, resamples=70, seed=spread, concurrent=concurrent)
        _assert_bitwise_equal(got, want)


def _whole_reference(
    blocks: Sequence[stats.Block], *, resamples: int, seed: int
) -> list[FloatArray]:
    """The small sets' path of ``resampled_totals_many`` before it merged blocks: every block
    whole, its own product with every block of float64 counts."""
    n = stats._block_shape(blocks[0])[0]
    whole = [stats._block_rows(block, 0, n) for block in blocks]
    outs = [np.empty((resamples, matrix.shape[1]), dtype=np.float64) for matrix in whole]
    row = 0
    for counts in stats.resample_counts(n, resamples=resamples, seed=seed):
        for out, matrix in zip(outs, whole, strict=True):
            out[row : row + counts.shape[0]] = counts @ matrix
        row += counts.shape[0]
    return outs


@pytest.mark.parametrize("changed", [0, 1, 37, 900])
@pytest.mark.parametrize("n", [1, 50, 9_000])
def test_small_sets_merge_exact_blocks_with_the_same_totals(n: int, changed: int) -> None:
    """Below the tiled size exact blocks are multiplied side by side and a repeating block
    from its predecessor's totals: the totals keep the bits of one product per block."""
    changed = min(changed, n // 10)
    blocks = _paired(n, np.random.default_rng(n + changed), changed=changed)
    got = stats.resampled_totals_many(blocks, resamples=230, seed=changed)
    _assert_bitwise_equal(got, _whole_reference(blocks, resamples=230, seed=changed))
    for index, total in enumerate(got):
        assert all(not np.shares_memory(total, other) for other in got[index + 1 :])


@pytest.mark.parametrize("n", [2_000, stats._TILED_ABOVE + 1_000])
def test_one_exact_metric_against_a_baseline_that_mostly_repeats_it(n: int) -> None:
    """A single exact block merged alone: the baseline's totals (its own plus the changed
    examples') once aliased the current side's, so that every resampled delta was zero and
    any drop read as significant with an interval of [0, 0]."""
    rng = np.random.default_rng(5)
    baseline = np.column_stack([rng.integers(0, 2, n), np.ones(n)]).astype(np.float64)
    current = baseline.copy()
    current[: n // 50, 0] = 1 - current[: n // 50, 0]
    blocks: list[stats.Block] = [
        CompactStats.of(current[np.newaxis]),
        CompactStats.of(baseline[np.newaxis]),
    ]
    assert isinstance(stats._repeats(blocks, [True, True])[1], stats._Delta)
    got = stats.resampled_totals_many(blocks, resamples=40, seed=3)
    reference = (
        _reference_totals(blocks, resamples=40, seed=3)
        if n > stats._TILED_ABOVE
        else _whole_reference(blocks, resamples=40, seed=3)
    )
    _assert_bitwise_equal(got, reference)
    assert not np.shares_memory(got[0], got[1])
    assert not np.array_equal(got[0], got[1])


def test_an_empty_set_has_zero_totals() -> None:
    # counts of (resamples, 0) times any (0, m) block: zeros, never the buffers' old bytes
    blocks = [np.zeros((0, 2)), CompactStats.of(np.zeros((1, 0, 2))), np.zeros((0, 3)) + 0.5]
    for _ in range(5):
        leftovers = [np.full((40, 3), 9.0) for _ in range(10)]
        del leftovers
        totals = stats.resampled_totals_many(blocks, resamples=40, seed=0)
        assert [t.shape for t in totals] == [(40, 2), (40, 2), (40, 3)]
        assert all(not t.any() for t in totals)
