"""Compact statistics give back the float64 arrays bit for bit, and the sums taken of them."""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldgate.gate.stats import _flatten, compare_many
from goldgate.metrics.registry import create_metric
from goldgate.model.compact_stats import (
    CompactBuilder,
    CompactStats,
    GappedStats,
    as_float,
    stacked_samples,
    take,
)


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


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.integers(0, 300))
def test_rows_of_one_sample_and_integer_totals_are_those_of_the_array(
    seed: int, samples: int, n: int
) -> None:
    array = _stats(seed, samples, n)
    compact = CompactStats.of(array)
    expanded = compact.expand()
    for sample in range(samples):
        for start, stop in ((0, n), (1, 7), (n // 3, n + 5), (n, n + 1)):
            got = compact.sample_rows(sample, start, stop)
            assert got.tobytes() == np.ascontiguousarray(expanded[sample, start:stop]).tobytes()
    # fractions, negative and signed-zero columns: no integer totals (none to sum: zeros)
    whole = compact.exact_totals()
    assert whole is None if n else whole is not None and not whole.any()
    unsigned = CompactStats.of(array[:, :, 1:3])
    totals = unsigned.exact_totals()
    assert totals is not None
    assert totals.tobytes() == array[:, :, 1:3].sum(axis=1).tobytes()


def test_integer_totals_that_float64_could_not_hold_are_left_to_the_float_sum() -> None:
    big = np.full((1, 3, 1), 2.0**32 - 1)
    assert CompactStats.of(big).exact_totals() is not None
    huge = np.full((1, 2_100_000, 1), 2.0**32 - 1)  # sums past 2**53
    assert CompactStats.of(huge).exact_totals() is None


def test_scores_of_compact_statistics_are_those_of_the_array() -> None:
    """Per-example and corpus scores of compact statistics, taken without expanding them
    whole, equal those of the float64 array for every built-in metric family."""
    from goldgate.gate.rules import components_of, example_scores
    from goldgate.gate.stats import sample_score
    from goldgate.metrics.engine import score_corpus

    rng = np.random.default_rng(11)
    words = ["a", "the", "cat", "sat", "on", "mat", "dog", "."]
    n = 70_000  # past one block of rows scored at a time
    hyps = [" ".join(rng.choice(words, rng.integers(0, 6))) for _ in range(n)]
    refs = [[" ".join(rng.choice(words, rng.integers(1, 6)))] for _ in range(n)]
    pairs = [(spec, create_metric(spec)) for spec in ("bleu", "chrf", "rougeL", "token_f1")]
    for (_, metric), result in zip(pairs, score_corpus(pairs, hyps, refs), strict=True):
        array = np.asarray(result.stats, dtype=np.float64)[np.newaxis]
        compact = CompactStats.of(array)
        assert example_scores(metric, compact).tobytes() == example_scores(metric, array).tobytes()
        assert sample_score(metric, compact) == sample_score(metric, array)
        assert components_of(metric, compact) == components_of(metric, array)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 120), st.lists(st.integers(0, 40), max_size=6))
def test_compact_statistics_built_block_by_block_equal_those_of_the_whole_array(
    seed: int, n: int, cuts: list[int]
) -> None:
    """Every column gets the type the whole column would get, whatever blocks its values
    arrive in: a fraction, a negative value, -0.0 or a large count in a late block widens it."""
    rng = np.random.default_rng(seed)
    array = _stats(seed, 1, n)[0]
    wide = np.zeros((n, 3))
    if n:
        wide[rng.integers(0, n), 0] = 2.0**40  # an eight-byte integer in one block only
        wide[rng.integers(0, n), 1] = 300.0  # two bytes in one block, one in the others
        wide[rng.integers(0, n), 2] = -0.0
    array = np.concatenate([array, wide], axis=1)
    edges = sorted({0, n, *(min(cut * 3, n) for cut in cuts)})
    builder = CompactBuilder(array.shape[1])
    for start, stop in itertools.pairwise(edges):
        builder.add(array[start:stop])
    built, want = builder.build(), CompactStats.of(array[np.newaxis])
    assert built.shape == want.shape
    assert [c.dtype for c in built.columns] == [c.dtype for c in want.columns]
    assert all(a.tobytes() == b.tobytes() for a, b in zip(built.columns, want.columns, strict=True))
    several = stacked_samples([built, CompactStats.of(array[np.newaxis] * 2)])
    assert several.expand().tobytes() == np.stack([array, array * 2]).tobytes()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 2), st.integers(0, 50))
def test_compact_statistics_pack_to_the_bytes_of_their_float64_array(
    seed: int, samples: int, n: int
) -> None:
    """Packed a column at a time, in the type the column needs now (a subset may need a
    narrower one than the set it was taken from), as the float64 array would be packed."""
    from goldgate.model.packed import pack_column_list, pack_columns

    array = _stats(seed, samples, n)
    array[:, :1, 2] = 2.0**40  # eight bytes in the first example only
    compact = CompactStats.of(array)
    rest = np.arange(1, n, dtype=np.intp)
    for stats, whole in ((compact, array), (take(compact, rest), take(array, rest))):
        assert isinstance(stats, CompactStats)
        flat = as_float(whole).transpose(1, 0, 2).reshape(stats.n, samples * stats.k)
        assert pack_column_list(stats.columns) == pack_columns(flat)


@pytest.mark.parametrize("samples", [1, 2])
def test_a_few_examples_left_out_are_a_gapped_view_equal_to_the_copy(samples: int) -> None:
    """Ascending indices with a few gaps (one after the first, a pair, one before the last)
    read views of the columns, and every way of reading them gives the copy's bytes."""
    n = 3 * 8_192 + 5  # more than one run of the expansion
    array = _stats(3, samples, n)
    compact = CompactStats.of(array)
    kept = np.setdiff1d(np.arange(n), [1, 9_000, 9_001, 20_000, n - 2]).astype(np.intp)
    view, copy = compact.take(kept), compact.take(kept, view=False)
    assert isinstance(view, GappedStats) and not isinstance(copy, GappedStats)
    assert all(np.shares_memory(s, c) for s, c in zip(view.spans, compact.columns, strict=True))
    assert view.shape == copy.shape and view.nbytes == copy.nbytes
    assert view.example_major == copy.example_major
    assert view.expand().tobytes() == copy.expand().tobytes() == array[:, kept].tobytes()
    assert view.expand().strides == array[:, kept].strides
    assert [c.tobytes() for c in view.columns] == [c.tobytes() for c in copy.columns]
    assert [c.tobytes() for c in view.columns[2:4]] == [c.tobytes() for c in copy.columns[2:4]]
    assert [c.dtype for c in view.columns] == [c.dtype for c in compact.columns]
    for start, stop in ((0, 1), (0, 2), (1, 5), (8_990, 9_010), (9_100, 13_196), (n - 9, n + 3)):
        assert view.rows(start, stop).tobytes() == copy.rows(start, stop).tobytes()
        for sample in range(samples):
            got, want = view.sample_rows(sample, start, stop), copy.sample_rows(sample, start, stop)
            assert got.tobytes() == want.tobytes()
    unsigned = CompactStats.of(array[:, :, 1:3]).take(kept)
    want_totals = array[:, kept][:, :, 1:3].sum(axis=1)
    assert isinstance(unsigned, GappedStats)
    assert (got_totals := unsigned.exact_totals()) is not None
    assert got_totals.tobytes() == want_totals.tobytes()
    rng = np.random.default_rng(3)
    for again in (np.arange(100, 20_000), rng.integers(0, len(kept), 50), kept[kept < n - 10]):
        nested, wanted = view.take(again.astype(np.intp)), copy.take(again.astype(np.intp))
        got_array, want_array = nested.expand(), wanted.expand()
        assert got_array.tobytes() == want_array.tobytes()
        assert got_array.sum(axis=(0, 1)).tobytes() == want_array.sum(axis=(0, 1)).tobytes()


def test_only_ascending_indices_with_few_gaps_are_a_gapped_view() -> None:
    compact = CompactStats.of(_stats(4, 1, 1_000))
    few = np.setdiff1d(np.arange(1_000), [5, 500]).astype(np.intp)
    many = np.setdiff1d(np.arange(1_000), np.arange(0, 1_000, 50)).astype(np.intp)  # 2 %
    assert isinstance(compact.take(few), GappedStats)
    for indices in (many, few[::-1], np.sort(np.append(few, 7)), few[:1]):
        taken = compact.take(indices.astype(np.intp))
        assert not isinstance(taken, GappedStats)
        assert taken.expand().tobytes() == compact.expand()[:, indices].tobytes()
