"""Paired bootstrap over a golden set: seeded, float64, and deterministic for a seed.

Every metric's corpus score is a function of summed per-example statistics, so a resample is
a vector of per-example counts (how often each example was drawn) times the statistics
matrix. One set of counts serves every metric and both sides of a comparison, which is what
makes the test *paired*: the baseline and the current system are always scored on the same
resampled examples.

With ``samples > 1`` a side's statistics have shape ``(samples, n, k)``: each sample index is
scored as its own candidate set and the scores are averaged, in the corpus score and in every
resample alike. The bootstrap is then two-level: each resample draws the examples, and within
every drawn example its samples, with replacement, so that the interval reflects the system's
sampling noise as well as the choice of examples. A metric that pools several noisy
measurements per example (an LLM judge asked ``samples`` times) hands the bootstrap one
pseudo-sample per measurement (``Metric.bootstrap_stats``), so its noise is drawn the same way.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from goldgate.metrics.base import Metric, Stats
from goldgate.model.compact_stats import CompactStats, Statistics, as_float
from goldgate.model.result import Interval

FloatArray = npt.NDArray[np.float64]

#: Resample counts are built this many matrix cells at a time, to bound memory on big sets.
_CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class BootstrapResult:
    """A paired comparison: the observed delta, its confidence interval and a p-value."""

    delta: float
    interval: Interval
    #: two-sided: how often a resampled delta, centred on zero, is at least as far from zero
    p_value: float

    def significant(self, alpha: float) -> bool:
        """True when the delta differs from zero at level ``alpha``."""
        return self.p_value < alpha


def as_stats_array(rows: Sequence[Stats] | Sequence[Sequence[Stats]], width: int) -> FloatArray:
    """Per-example statistics as a float64 array of shape ``(samples, n, width)``.

    Accepts ``n`` rows (one sample) or ``samples`` lists of ``n`` rows.
    """
    array = np.asarray(rows, dtype=np.float64)
    if array.size == 0:
        samples = 1 if array.ndim < 3 else array.shape[0]
        return np.zeros((samples, 0, width), dtype=np.float64)
    if array.ndim == 2:
        array = array[np.newaxis]
    if array.ndim != 3 or array.shape[2] != width:
        raise ValueError(f"statistics of shape {array.shape} do not have {width} columns")
    return array


def sample_score(metric: Metric[Any], stats: Statistics) -> float:
    """The score of ``(samples, n, k)`` statistics: the mean over sample indices."""
    exact = stats.exact_totals() if isinstance(stats, CompactStats) else None
    totals = as_float(stats).sum(axis=1) if exact is None else exact
    return float(np.mean([metric.score_stats(row.tolist()) for row in totals]))


def resample_counts(n: int, *, resamples: int, seed: int) -> Iterator[FloatArray]:
    """Yield blocks of per-example draw counts, ``(rows, n)`` each, ``resamples`` rows in all.

    The draws are ``default_rng(seed).integers(0, n, (resamples, n))`` taken row by row, so
    the counts do not depend on the block size.
    """
    if n <= 0 or resamples <= 0:
        return
    rng = np.random.default_rng(seed)
    block = max(1, _CHUNK_CELLS // n)
    done = 0
    while done < resamples:
        rows = min(block, resamples - done)
        draws = rng.integers(0, n, size=(rows, n))
        # One bincount over row-offset indices counts every row at once.
        offsets = draws + (np.arange(rows, dtype=np.int64) * n)[:, np.newaxis]
        counts = np.bincount(offsets.ravel(), minlength=rows * n).reshape(rows, n)
        yield counts.astype(np.float64)
        done += rows


def resampled_totals(columns: FloatArray, *, resamples: int, seed: int) -> npt.NDArray[np.float64]:
    """Summed statistics of every resample: ``(resamples, m)`` from an ``(n, m)`` matrix."""
    return resampled_totals_many([columns], resamples=resamples, seed=seed)[0]


#: Above this many examples the product is tiled: resamples are drawn a pass at a time (counts
#: kept as 1-byte integers) and multiplied ``_TILE`` examples at a time, so every pass reads
#: each example's statistics once instead of once per two resamples. At 1,000,000 examples
#: that is the difference between hours and seconds; memory stays ~90 MB.
_TILED_ABOVE = 32_768
#: Examples per tile: the tile's counts as float64 (a pass's: 64 × 4,096 × 8 bytes = 2 MB)
#: stay in the cache while every metric's block is multiplied by them (with 32,768 they were
#: re-read from memory per block: 2× slower at a million examples).
_TILE = 4_096
#: Resample rows of every product of a block with fractional statistics. BLAS rounds a row's
#: sums differently when the product has another number of rows, or the row another place in
#: it, so these products keep the shapes the results were first computed with.
_PASS_ROWS = 32
#: A pass draws this many times ``_PASS_ROWS`` resamples: each tile's statistics are expanded
#: once per pass, and blocks of integers are multiplied by the whole pass at once. The pass's
#: 1-byte counts are 64 MB at a million examples (four products a pass, 128 MB, were no
#: faster: 63.1 against 61.2 s of CPU for the gate of bench_gate_scale.py at 1M). Bootstraps
#: running at once in threads share it: each draws ``_PASS_ROWS`` resamples a pass.
_PRODUCTS_PER_PASS = 2
#: A count above this is not kept in the pass: that resample is multiplied whole, at once.
_COUNT_LIMIT = np.iinfo(np.uint16).max
#: Integer statistics whose products with counts up to ``_COUNT_LIMIT`` stay below this are
#: summed exactly by float64 in any order and grouping (half of 2**53, for the rounding of
#: the bound's own sum).
_EXACT_BELOW = 2.0**52
#: A tile of exact blocks is multiplied in float32 (twice as fast) when its largest count
#: times its largest column sum of magnitudes stays below this: every product and partial
#: sum is then an integer float32 holds exactly (2**24), so the totals keep their bits.
_SINGLE_BELOW = 2.0**24


#: a flattened ``(n, m)`` statistics matrix, or compact statistics whose rows are expanded a
#: tile at a time (:meth:`CompactStats.rows`, the same layout)
Block = FloatArray | CompactStats


def _block_shape(block: Block) -> tuple[int, int]:
    if isinstance(block, CompactStats):
        return block.n, len(block.columns)
    return block.shape[0], block.shape[1]


def _block_rows(block: Block, start: int, stop: int) -> FloatArray:
    return block.rows(start, stop) if isinstance(block, CompactStats) else block[start:stop]


def _exact_products(block: Block) -> bool:
    """Whether every sum of ``block``'s columns weighted by counts up to ``_COUNT_LIMIT`` is
    exact in float64: integers only, small enough that no partial sum is ever rounded."""
    largest = 0.0
    for column in _columns_of(block):
        if column.dtype.kind == "f" and not (
            np.all(np.isfinite(column)) and np.array_equal(column, np.trunc(column))
        ):
            return False
        largest = max(largest, float(np.abs(column.astype(np.float64)).sum()))
    return largest * _COUNT_LIMIT < _EXACT_BELOW


def _tile_sums(blocks: Sequence[Block], n: int) -> npt.NDArray[np.float64]:
    """For each tile of ``_TILE`` examples, the largest sum of magnitudes of one of the
    blocks' columns over the tile (what bounds every partial sum of its products)."""
    largest = np.zeros(-(-n // _TILE), dtype=np.float64)
    starts = np.arange(0, n, _TILE)
    for block in blocks:
        for column in _columns_of(block):
            sums = np.add.reduceat(np.abs(column.astype(np.float64)), starts)
            np.maximum(largest, sums, out=largest)
    return largest


def _side_by_side(
    blocks: Sequence[Block], columns: npt.NDArray[np.floating[Any]], start: int, stop: int
) -> npt.NDArray[np.floating[Any]]:
    """Examples ``start:stop`` of ``blocks``, transposed: one row of ``columns`` a statistic,
    in order, each written in one contiguous run."""
    size = stop - start
    at = 0
    for block in blocks:
        if isinstance(block, CompactStats):
            for column in block.column_slices(start, stop):
                columns[at, :size] = column
                at += 1
        else:
            columns[at : at + block.shape[1], :size] = block[start:stop].T
            at += block.shape[1]
    return columns[:, :size]


def resampled_totals_many(
    blocks: Sequence[Block], *, resamples: int, seed: int, concurrent: int = 1
) -> list[FloatArray]:
    """``resampled_totals`` of several ``(n, m_i)`` matrices with the same resamples.

    The draws are those of ``resample_counts`` whatever the size: row by row from
    ``default_rng(seed)``. Compact statistics are expanded a tile at a time, never whole.
    ``concurrent`` (bootstraps running at once in this process) shares the pass's counts
    among them; the totals do not depend on it.
    """
    n = _block_shape(blocks[0])[0]
    if n == 0:  # nothing drawn: every total is zero (the paths below would leave them unset)
        return [np.zeros((resamples, _block_shape(block)[1])) for block in blocks]
    if n <= _TILED_ABOVE:
        return _whole_totals(blocks, n, resamples=resamples, seed=seed)
    products = max(1, _PRODUCTS_PER_PASS // max(1, concurrent))
    return _tiled_totals(blocks, n, resamples=resamples, seed=seed, products=products)


@dataclass(frozen=True)
class _Layout:
    """How ``resampled_totals_many`` multiplies its blocks, whatever the size of the set:
    which are exact (:func:`_exact_products`), which repeat the block before them
    (:func:`_repeats`), and where each exact block that does not repeat has its columns in
    the one product of them all side by side."""

    exact: list[bool]
    repeated: dict[int, _Delta | None]
    #: the exact blocks multiplied side by side, in order, and where their columns start
    merged: list[int]
    merged_at: dict[int, int]
    merged_width: int

    @classmethod
    def of(cls, blocks: Sequence[Block]) -> _Layout:
        exact = [_exact_products(block) for block in blocks]
        repeated = _repeats(blocks, exact)
        merged = [i for i, is_exact in enumerate(exact) if is_exact and i not in repeated]
        widths = (_block_shape(blocks[index])[1] for index in merged)
        starts = list(itertools.accumulate(widths, initial=0))
        merged_at = dict(zip(merged, starts[:-1], strict=True))
        return cls(exact, repeated, merged, merged_at, starts[-1])

    @property
    def fractional(self) -> list[int]:
        """The blocks that are not exact and do not repeat: each multiplied on its own."""
        return [
            index
            for index, is_exact in enumerate(self.exact)
            if not is_exact and index not in self.repeated
        ]

    @property
    def deltas(self) -> dict[int, _Delta]:
        """The exact blocks taken as the block before them plus a difference."""
        return {index: found for index, found in self.repeated.items() if found is not None}


def _whole_totals(
    blocks: Sequence[Block], n: int, *, resamples: int, seed: int
) -> list[FloatArray]:
    """``resampled_totals_many`` of a small set: every block whole, times counts as float64.

    Exact blocks (:func:`_exact_products`) are multiplied side by side in one product, and a
    block that repeats the block before it (:func:`_repeats`) is that block's totals plus the
    changed examples' difference: exact integers, the same bits however they are grouped.
    Every other block keeps its own product of every resample block, as it always had.
    """
    layout = _Layout.of(blocks)
    merged_matrix = np.empty((n, layout.merged_width), dtype=np.float64)
    for index in layout.merged:
        at = layout.merged_at[index]
        merged_matrix[:, at : at + _block_shape(blocks[index])[1]] = _block_rows(
            blocks[index], 0, n
        )
    fractional = {index: _block_rows(blocks[index], 0, n) for index in layout.fractional}
    deltas = layout.deltas
    merged_out = np.empty((resamples, layout.merged_width), dtype=np.float64)
    outs = {i: np.empty((resamples, m.shape[1]), dtype=np.float64) for i, m in fractional.items()}
    changed = {
        i: np.empty((resamples, d.diff.shape[1]), dtype=np.float64) for i, d in deltas.items()
    }
    row = 0
    for counts in resample_counts(n, resamples=resamples, seed=seed):
        rows = slice(row, row + counts.shape[0])
        if layout.merged:
            merged_out[rows] = counts @ merged_matrix
        for index, matrix in fractional.items():
            outs[index][rows] = counts @ matrix
        for index, found in deltas.items():
            changed[index][rows] = found.product(counts)
        row += counts.shape[0]
    return _assembled(blocks, layout, merged_out, outs, changed)


def _assembled(
    blocks: Sequence[Block],
    layout: _Layout,
    merged_out: FloatArray,
    fractional: Mapping[int, FloatArray],
    changed: Mapping[int, FloatArray],
) -> list[FloatArray]:
    """Every block's totals, each an array of its own: an exact block's columns of
    ``merged_out``, plus the changed examples' difference when it repeats the block before
    it; a fractional block's own totals, or its predecessor's."""
    totals: list[FloatArray] = []
    for index, block in enumerate(blocks):
        source = index - 1 if index in layout.repeated else index
        if not layout.exact[source]:
            own = fractional[source]
            totals.append(own.copy() if index in layout.repeated else own)
            continue
        at = layout.merged_at[source]
        # A copy even when the columns are all of merged_out (a single exact block): the
        # totals of a repeating block are added to below, and must not be its source's.
        total = merged_out[:, at : at + _block_shape(block)[1]].copy()
        if index in changed:
            # both exact integers below 2**52: their float64 sum is the exact total
            total += changed[index]
        totals.append(total)
    return totals


def _tiled_totals(
    blocks: Sequence[Block], n: int, *, resamples: int, seed: int, products: int
) -> list[FloatArray]:
    """``resampled_totals_many`` of a large set, a pass of resamples and a tile at a time.

    Blocks of integers whose sums are exact (:func:`_exact_products`) are multiplied side by
    side, a whole pass in one product: exact sums do not depend on how they are grouped. Any
    other block keeps products of ``_PASS_ROWS`` resamples and one tile, added to its totals
    tile after tile: the very operations, and so the very roundings, of its first results.
    A block that repeats the block before it (:func:`_repeats`) is not multiplied whole.
    """
    layout = _Layout.of(blocks)
    merged = layout.merged
    merged_blocks = [blocks[index] for index in merged]
    merged_width = layout.merged_width
    merged_out = np.zeros((resamples, merged_width), dtype=np.float64)
    fractional = {
        index: (blocks[index], np.zeros((resamples, _block_shape(blocks[index])[1])))
        for index in layout.fractional
    }
    deltas = {
        index: (found, np.zeros((resamples, found.diff.shape[1]), dtype=np.float64))
        for index, found in layout.deltas.items()
    }
    rng = np.random.default_rng(seed)
    pass_rows = _PASS_ROWS * products
    byte_counts = np.empty((pass_rows, n), dtype=np.uint8)
    # Buffers refilled tile after tile: fresh arrays of a few megabytes cost more in page
    # faults than in filling (10x for the counts). The last, narrower tile has its own
    # counts buffer and the expanded rows are C-ordered, so that every product of a
    # fractional block sees operands of the very shapes and strides it always had.
    sizes = {min(n, _TILE), n % _TILE} - {0}
    parts = {size: np.empty((pass_rows, size)) for size in sizes}
    merged_columns = np.empty((merged_width, _TILE), dtype=np.float64)
    single_parts = {size: np.empty((pass_rows, size), dtype=np.float32) for size in sizes}
    single_columns = np.empty((merged_width, _TILE), dtype=np.float32)
    tile_sums = _tile_sums(merged_blocks, n)
    expanded = {
        index: np.empty((_TILE, _block_shape(block)[1]))
        for index, (block, _) in fractional.items()
        if isinstance(block, CompactStats)
    }
    for start in range(0, resamples, pass_rows):
        rows = min(pass_rows, resamples - start)
        counts = _draw_pass(
            rng,
            byte_counts,
            rows,
            start,
            merged_blocks,
            merged_out,
            list(fractional.values()),
            list(deltas.values()),
        )
        # below this column sum a tile's exact products are made in float32
        single_below = _SINGLE_BELOW / max(1, int(counts[:rows].max(initial=0)))
        for tile in range(0, n, _TILE):
            stop = min(tile + _TILE, n)
            single = bool(merged) and tile_sums[tile // _TILE] < single_below
            # the changed examples' differences, from the tile's counts while they are cached
            # (exact integers: summed tile by tile, the totals are those of one product)
            for found, out in deltas.values():
                changed = found.tile_product(counts[:rows, tile:stop], tile)
                if changed is not None:
                    out[start : start + rows] += changed
            if single:
                small = single_parts[stop - tile][:rows]
                small[...] = counts[:rows, tile:stop]
                columns = _side_by_side(merged_blocks, single_columns, tile, stop)
                merged_out[start : start + rows] += small @ columns.T
            if not fractional and single:
                continue
            part = parts[stop - tile][:rows]
            part[...] = counts[:rows, tile:stop]
            if merged and not single:
                columns = _side_by_side(merged_blocks, merged_columns, tile, stop)
                merged_out[start : start + rows] += part @ columns.T
            for index, (block, out) in fractional.items():
                if isinstance(block, CompactStats):
                    matrix = block.rows(tile, stop, into=expanded[index])
                else:
                    matrix = block[tile : tile + _TILE]
                for first in range(0, rows, _PASS_ROWS):
                    last = min(first + _PASS_ROWS, rows)
                    out[start + first : start + last] += part[first:last] @ matrix
    return _assembled(
        blocks,
        layout,
        merged_out,
        {index: out for index, (_, out) in fractional.items()},
        {index: out for index, (_, out) in deltas.items()},
    )


#: A block is taken as the block before it plus a difference when at most this share of its
#: examples differ: a run against a baseline whose outputs mostly did not change.
_DELTA_SHARE = 0.1


@dataclass(frozen=True)
class _Delta:
    """An exact block as the exact block before it and the difference on a few examples:
    its totals are that block's plus ``counts[:, rows] @ diff``, exact integers both."""

    rows: npt.NDArray[np.intp]
    #: the block's statistics minus the block before it, at ``rows``: ``(len(rows), width)``
    #: integers, in the smallest of int16, int32 and int64 that holds them
    diff: npt.NDArray[np.signedinteger[Any]]

    @functools.cached_property
    def _tile_bounds(self) -> list[int]:
        """Where each tile's rows start in ``rows`` (and where the last ends)."""
        last = int(self.rows[-1]) + 1 if len(self.rows) else 0
        starts = np.arange(0, last + _TILE, _TILE)
        return [int(at) for at in np.searchsorted(self.rows, starts)]

    def tile_product(self, counts: npt.NDArray[np.integer[Any]], tile: int) -> FloatArray | None:
        """The part of :meth:`product` of the tile of examples from ``tile`` (``_TILE`` of
        them), from that tile's ``counts`` (``counts[:, tile : tile + _TILE]`` of the pass,
        read beside the tile's conversion to floats, while its bytes are in the cache); None
        when none of its examples changed."""
        bounds = self._tile_bounds
        index = tile // _TILE
        if index + 1 >= len(bounds):
            return None
        first, last = bounds[index], bounds[index + 1]
        if first == last:
            return None
        local = self.rows[first:last] - tile
        gathered = counts[:, local].astype(np.float64)
        return gathered @ self.diff[first:last].astype(np.float64)

    def product(self, counts: npt.NDArray[np.integer[Any] | np.float64]) -> FloatArray:
        """``counts[:, rows] @ diff`` in float64, ``_TILE`` rows at a time (exact integers, so
        grouped in any way), with no gathered copy of every changed example's counts."""
        out = np.zeros((counts.shape[0], self.diff.shape[1]), dtype=np.float64)
        for first in range(0, len(self.rows), _TILE):
            rows = self.rows[first : first + _TILE]
            gathered = counts[:, rows].astype(np.float64)
            out += gathered @ self.diff[first : first + _TILE].astype(np.float64)
        return out


def _columns_of(block: Block) -> Sequence[npt.NDArray[Any]]:
    return block.columns if isinstance(block, CompactStats) else list(block.T)


def _repeats(blocks: Sequence[Block], exact: Sequence[bool]) -> dict[int, _Delta | None]:
    """The blocks that repeat the block just before them, which is multiplied whole:
    ``compare_many`` hands over each metric's current statistics followed by its baseline's,
    and in a run against a baseline most examples' outputs, and so statistics, are the same.

    An exact block that differs from an exact predecessor in few examples maps to the
    :class:`_Delta` that gives its totals from the predecessor's, exactly; a compact
    fractional block whose columns have the very bits of its compact predecessor's maps to
    None (its products would be the very same operations on the very same numbers).
    """
    found: dict[int, _Delta | None] = {}
    for index in range(1, len(blocks)):
        before, block = blocks[index - 1], blocks[index]
        if index - 1 in found or _block_shape(before) != _block_shape(block):
            continue
        if exact[index] and exact[index - 1]:
            delta = _delta(before, block)
            if delta is not None:
                found[index] = delta
        elif (
            not exact[index]
            and not exact[index - 1]
            and isinstance(before, CompactStats)
            and isinstance(block, CompactStats)
            and all(
                a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))
                for a, b in zip(before.columns, block.columns, strict=True)
            )
        ):
            found[index] = None
    return found


def _delta(before: Block, block: Block) -> _Delta | None:
    """``block`` as ``before`` plus an exact difference on few examples, else None."""
    n, width = _block_shape(block)
    # Column by column: a gapped view's columns are copies made when asked for.
    changed = np.zeros(n, dtype=bool)
    for a, b in zip(_columns_of(before), _columns_of(block), strict=True):
        changed |= a != b
    rows = np.flatnonzero(changed)
    if len(rows) > n * _DELTA_SHARE:
        return None
    diff = np.empty((len(rows), width), dtype=np.float64)
    for j, (a, b) in enumerate(zip(_columns_of(before), _columns_of(block), strict=True)):
        diff[:, j] = b[rows].astype(np.float64) - a[rows].astype(np.float64)
    sizes = np.abs(diff)
    if float(sizes.sum(axis=0).max(initial=0.0)) * _COUNT_LIMIT >= _EXACT_BELOW:
        return None
    largest = float(sizes.max(initial=0.0))
    kind = next(t for t in (np.int16, np.int32, np.int64) if largest <= np.iinfo(t).max)
    return _Delta(rows, diff.astype(kind))


def _draw_pass(
    rng: np.random.Generator,
    byte_counts: npt.NDArray[np.uint8],
    rows: int,
    start: int,
    merged: Sequence[Block],
    merged_out: FloatArray,
    fractional: Sequence[tuple[Block, FloatArray]],
    deltas: Sequence[tuple[_Delta, FloatArray]],
) -> npt.NDArray[np.uint8] | npt.NDArray[np.uint16]:
    """The counts of resamples ``start:start+rows``, drawn into ``byte_counts`` while every
    count fits a byte (else a 2-byte copy); a resample with a count above ``_COUNT_LIMIT`` is
    multiplied whole here, into the totals (the deltas' too), and left with zero counts in
    the pass."""
    n = byte_counts.shape[1]
    total_type = np.uint32 if n <= np.iinfo(np.uint32).max else np.uint64
    counts: npt.NDArray[np.uint8] | npt.NDArray[np.uint16] = byte_counts
    for offset in range(rows):
        draws = rng.integers(0, n, size=n)
        counted = counts[offset]
        counted[:] = 0
        # Counting into the pass's own small integers is ~3× faster than bincount at a
        # million examples (its 8-byte counts miss the cache); they wrap past the type's
        # largest value, which leaves fewer than n draws counted (so the sum is at most n:
        # exact in 4 bytes, twice as fast as in 8).
        np.add.at(counted, draws, counted.dtype.type(1))
        if int(counted.sum(dtype=total_type)) == n:
            continue
        drawn = np.bincount(draws, minlength=n)
        if drawn.max() > _COUNT_LIMIT:  # beyond 2 bytes: never in practice, exact anyway
            whole = drawn.astype(np.float64)
            at = 0
            for block in merged:
                width = _block_shape(block)[1]
                merged_out[start + offset, at : at + width] = whole @ _block_rows(block, 0, n)
                at += width
            for block, out in fractional:
                out[start + offset] = whole @ _block_rows(block, 0, n)
            for found, out in deltas:
                out[start + offset] = found.product(drawn[np.newaxis])[0]
            drawn[:] = 0
        elif counts.dtype == np.uint8:  # beyond 1 byte: never in practice either
            counts = counts.astype(np.uint16)
        counts[offset] = drawn
    return counts


def _flatten(stats: FloatArray) -> FloatArray:
    """``(samples, n, k)`` → ``(n, samples * k)`` so that one matrix product resamples all."""
    samples, n, k = stats.shape
    return np.ascontiguousarray(stats.transpose(1, 0, 2).reshape(n, samples * k))


def _scores_of_totals(metric: Metric[Any], totals: FloatArray, samples: int) -> FloatArray:
    """Per-resample scores from ``(resamples, samples * k)`` totals, averaged over samples."""
    k = totals.shape[1] // samples
    score = metric.score_stats
    if samples == 1:  # fsum of one score divided by one is that score, bit for bit
        return np.array([score(row) for row in totals.tolist()], dtype=np.float64)
    values = np.empty(totals.shape[0], dtype=np.float64)
    for index, row in enumerate(totals.tolist()):
        values[index] = math.fsum(score(row[s * k : (s + 1) * k]) for s in range(samples)) / samples
    return values


def percentile_interval(deltas: FloatArray, alpha: float) -> Interval:
    """The percentile interval of resampled deltas at level ``1 - alpha``.

    With 1,000 resamples and alpha 0.05 these are the 26th and 975th sorted values, as in
    sacrebleu's paired bootstrap.
    """
    ordered = np.sort(deltas)
    size = len(ordered)
    cut = math.floor(size * alpha / 2)
    low, high = ordered[cut], ordered[size - cut - 1]
    return Interval(low=float(low), high=float(high), level=1.0 - alpha)


def two_sided_p(delta: float, deltas: FloatArray) -> float:
    """How often a resampled delta, shifted to a zero mean, is as extreme as ``delta``."""
    centred = deltas - deltas.mean()
    # A tolerance keeps a zero delta at p = 1 despite rounding in the centring.
    extreme = int(np.count_nonzero(np.abs(centred) >= abs(delta) - 1e-12))
    return (extreme + 1) / (len(deltas) + 1)


def _drawn(metric: Metric[Any], stats: Statistics) -> Statistics:
    """What the bootstrap draws of a metric's statistics (``Metric.bootstrap_stats``); compact
    statistics stay compact when the metric draws them as they are."""
    if isinstance(stats, CompactStats) and type(metric).bootstrap_stats is Metric.bootstrap_stats:
        return stats
    return metric.bootstrap_stats(as_float(stats))


def _flat(stats: Statistics) -> Block:
    return stats if isinstance(stats, CompactStats) else _flatten(stats)


def compare_many(
    pairs: Sequence[tuple[Metric[Any], Statistics, Statistics]],
    *,
    resamples: int,
    alpha: float,
    seed: int,
    concurrent: int = 1,
) -> list[BootstrapResult]:
    """Paired bootstraps of several metrics over the same examples, from one set of draws.

    Each pair holds a metric with its current and baseline ``(samples, n, k)`` statistics
    (float64 or compact); every metric sees the same resampled examples, and each result
    equals that of ``compare`` alone. ``concurrent``: how many bootstraps run at once in
    this process's threads (they share the memory of a pass; the results do not change).
    """
    if not pairs:
        return []
    # What each metric has the bootstrap draw: its statistics, or one pseudo-sample per
    # judgment for a judge asked several times (then resampled like a system's samples).
    pairs = [(m, _drawn(m, cur), _drawn(m, base)) for m, cur, base in pairs]
    n = pairs[0][1].shape[1]
    for _metric, current, baseline in pairs:
        if current.shape[1] != n or baseline.shape[1] != n:
            raise ValueError("paired statistics must cover the same examples")
    if n == 0:
        raise ValueError("cannot bootstrap an empty set of examples")
    if any(side.shape[0] > 1 for _, current, baseline in pairs for side in (current, baseline)):
        # sampled outputs: small sets in practice, drawn from float64 arrays
        expanded = [(m, as_float(cur), as_float(base)) for m, cur, base in pairs]
        scored = _two_level_scores(expanded, resamples=resamples, seed=seed)
    else:
        blocks = [_flat(side) for _, current, baseline in pairs for side in (current, baseline)]
        scored = _one_level_scores(
            pairs, blocks, resamples=resamples, seed=seed, concurrent=concurrent
        )
    results = []
    for (metric, current, baseline), (now, then) in zip(pairs, scored, strict=True):
        # A custom metric's huge scores may overflow here; inf and nan are then the honest
        # answer (the report shows them), and NumPy's warnings would only litter stderr.
        with np.errstate(over="ignore", invalid="ignore"):
            deltas = now - then
            delta = sample_score(metric, current) - sample_score(metric, baseline)
            results.append(
                BootstrapResult(
                    delta=delta,
                    interval=percentile_interval(deltas, alpha),
                    p_value=two_sided_p(delta, deltas),
                )
            )
    return results


def _one_level_scores(
    pairs: Sequence[tuple[Metric[Any], Statistics, Statistics]],
    blocks: Sequence[Block] | FloatArray,
    *,
    resamples: int,
    seed: int,
    concurrent: int = 1,
) -> list[tuple[FloatArray, FloatArray]]:
    """Per-resample scores of both sides, resampling examples only (one product per block).

    ``blocks`` are the sides' flattened statistics in order, or all of them side by side.
    """
    if isinstance(blocks, np.ndarray):
        widths = [side.shape[0] * side.shape[2] for _, c, b in pairs for side in (c, b)]
        edges = np.cumsum([0, *widths])
        blocks = [blocks[:, edges[i] : edges[i + 1]] for i in range(len(widths))]
    totals = iter(
        resampled_totals_many(blocks, resamples=resamples, seed=seed, concurrent=concurrent)
    )
    scored = []
    for metric, current, baseline in pairs:
        sides = [
            _scores_of_totals(metric, next(totals), side.shape[0]) for side in (current, baseline)
        ]
        scored.append((sides[0], sides[1]))
    return scored


def _two_level_scores(
    pairs: Sequence[tuple[Metric[Any], FloatArray, FloatArray]],
    *,
    resamples: int,
    seed: int,
) -> list[tuple[FloatArray, FloatArray]]:
    """Per-resample scores of both sides when outputs are sampled: examples, then samples.

    Each resample draws examples with replacement (the same counts as the one-level
    bootstrap for this seed) and then, within every example, its samples with replacement,
    independently for the two sides: the current and the baseline outputs are separate
    draws of their systems. Each side's sample draws come from a generator of its own
    (seeded ``[seed, 1, side, samples]``), consumed in resample order, so the result does
    not depend on how the resamples are chunked nor on which other metrics are compared
    alongside. One draw of samples serves every metric of a side, since a sample is one
    output scored by all of them.
    """
    n = pairs[0][1].shape[1]
    generators: dict[tuple[int, int], np.random.Generator] = {}
    columns = np.arange(n)
    scores = [
        (np.empty(resamples, dtype=np.float64), np.empty(resamples, dtype=np.float64))
        for _ in pairs
    ]
    widest = max(side.shape[0] * side.shape[2] for _, cur, base in pairs for side in (cur, base))
    row = 0
    for counts in resample_counts(n, resamples=resamples, seed=seed):
        # Bound the gathered (rows, samples, n, k) arrays as resample_counts bounds its own.
        parts = max(1, -(-counts.shape[0] * widest * n // _CHUNK_CELLS))
        for part in np.array_split(counts, min(parts, counts.shape[0])):
            rows = part.shape[0]
            draws: dict[tuple[int, int], npt.NDArray[np.intp]] = {}
            for index, (metric, current, baseline) in enumerate(pairs):
                for side_index, side in enumerate((current, baseline)):
                    samples = side.shape[0]
                    key = (side_index, samples)
                    if key not in draws:
                        if key not in generators:
                            generators[key] = np.random.default_rng([seed, 1, *key])
                        draws[key] = generators[key].integers(0, samples, size=(rows, samples, n))
                    gathered = side[draws[key], columns]  # (rows, samples, n, k)
                    totals = np.einsum("ri,rsik->rsk", part, gathered)
                    flat = totals.reshape(rows, samples * side.shape[2])
                    scores[index][side_index][row : row + rows] = _scores_of_totals(
                        metric, flat, samples
                    )
            row += rows
    return scores


def compare(
    metric: Metric[Any],
    current: FloatArray,
    baseline: FloatArray,
    *,
    resamples: int,
    alpha: float,
    seed: int,
) -> BootstrapResult:
    """Paired bootstrap of ``score(current) - score(baseline)`` on ``(samples, n, k)`` arrays."""
    return compare_many([(metric, current, baseline)], resamples=resamples, alpha=alpha, seed=seed)[
        0
    ]


def paired_bootstrap(
    metric: Metric[Any],
    current: Sequence[Stats],
    baseline: Sequence[Stats],
    *,
    resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> BootstrapResult:
    """Paired bootstrap of a metric's delta between two aligned lists of per-example stats."""
    if len(current) != len(baseline):
        raise ValueError(
            f"paired statistics differ in length: {len(current)} current, {len(baseline)} baseline"
        )
    width = len(metric.stat_names) or (len(current[0]) if current else 0)
    return compare(
        metric,
        as_stats_array(current, width),
        as_stats_array(baseline, width),
        resamples=resamples,
        alpha=alpha,
        seed=seed,
    )
