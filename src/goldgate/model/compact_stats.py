"""Per-example statistics held compactly in memory, expanded to float64 where they are summed.

A million examples scored with BLEU, chrF, ROUGE-1/2/L, exact match and token F1 carry 44
statistics each: 352 MB as float64, twice over with a baseline, and the largest holder of
memory in a run. Most statistics are small counts (n-gram matches, lengths, hits) that fit
exactly in one or two bytes; only true fractions (ROUGE's per-example F) need float64. So a
suite's statistics are kept column by column, each column in the smallest type that holds
every value exactly (the rule of the packed baseline, :func:`goldgate.model.packed.column_type`),
and turned back into float64, bit for bit, one metric or one tile of examples at a time:
whatever sums them sees exactly the numbers it saw before.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias, overload

import numpy as np
import numpy.typing as npt

from goldgate.model.packed import COLUMN_DTYPES, ColumnType, column_type

FloatArray = npt.NDArray[np.float64]
#: float64 holds every integer below this exactly
_EXACT_BELOW = 2**53
IndexArray = npt.NDArray[np.intp]


#: Examples expanded at a time: their float64 rows stay in the cache while every column fills
#: them (8,192 × 44 statistics × 8 bytes = 2.9 MB).
_EXPAND_ROWS = 8_192
#: Ascending indices that leave out at most this share of the positions between their first
#: and last are taken as a :class:`GappedStats` view, not a copy: the paired examples of a run
#: after a few golden records were edited (a copy of both sides' statistics is ~230 MB at a
#: million examples). With more left out, the view's tiles would be gathered pass after pass.
_GAPPED_SHARE = 0.01


@dataclass(frozen=True, eq=False)
class CompactStats:
    """A ``(samples, n, k)`` statistics array stored as ``samples * k`` typed columns.

    Column ``s * k + j`` holds ``stats[s, :, j]``: the layout of the bootstrap's flattened
    matrix, whose tiles :meth:`rows` gives without expanding the rest.

    ``example_major`` records the memory order that the float64 array would have had: NumPy
    lays out ``stats[:, indices]`` example by example, and a sum over samples and examples
    together adds in memory order, so :meth:`expand` restores that order too (it matters
    only with several samples, and only in the last bit).
    """

    samples: int
    n: int
    k: int
    columns: Sequence[npt.NDArray[np.generic]]
    example_major: bool = False

    @classmethod
    def of(cls, stats: FloatArray) -> CompactStats:
        """The compact form of a ``(samples, n, k)`` float64 array."""
        samples, n, k = stats.shape
        columns = []
        for s in range(samples):
            for j in range(k):
                column = stats[s, :, j]
                columns.append(
                    np.ascontiguousarray(column, dtype=COLUMN_DTYPES[column_type(column)])
                )
        return cls(samples, n, k, tuple(columns))

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.samples, self.n, self.k)

    @property
    def nbytes(self) -> int:
        return sum(column.nbytes for column in self.columns)

    def take(self, indices: IndexArray, *, view: bool = True) -> CompactStats:
        """The examples at ``indices`` (``stats[:, indices]``). When ``view`` is allowed, not
        a copy: views when they are a contiguous run, a :class:`GappedStats` when they
        ascend with a few positions left out (the copy's numbers and memory order)."""
        size = len(indices)
        if view and _is_run(indices):
            first = int(indices[0])
            cut = slice(first, first + size)
            columns = tuple(c[cut] for c in self.columns)
            return CompactStats(self.samples, size, self.k, columns, self.example_major)
        gaps = _gaps(indices) if view else None
        if gaps is not None:
            first = int(indices[0])
            cut = slice(first, first + size + len(gaps))
            spans = tuple(c[cut] for c in self.columns)
            without = _GappedColumns(spans, gaps)
            return GappedStats(
                self.samples, size, self.k, without, example_major=True, spans=spans, gaps=gaps
            )
        columns = tuple(c[indices] for c in self.columns)
        return CompactStats(self.samples, size, self.k, columns, example_major=True)

    def column_slices(
        self, start: int, stop: int, first: int = 0, last: int | None = None
    ) -> list[npt.NDArray[np.generic]]:
        """Examples ``start:stop`` of columns ``first:last``, each in its own type (views)."""
        return [column[start:stop] for column in self.columns[first:last]]

    def expand(self) -> FloatArray:
        """The float64 ``(samples, n, k)`` array, equal bit for bit to the one compacted."""
        if self.example_major:
            out = np.empty((self.n, self.samples, self.k), dtype=np.float64).transpose(1, 0, 2)
        else:
            out = np.empty((self.samples, self.n, self.k), dtype=np.float64)
        # A few thousand examples at a time: column by column over the whole array, every
        # column's strided writes would pass over all of its memory (4x slower at 1M).
        for start in range(0, self.n, _EXPAND_ROWS):
            stop = min(start + _EXPAND_ROWS, self.n)
            for index, column in enumerate(self.column_slices(start, stop)):
                out[index // self.k, start:stop, index % self.k] = column
        return out

    def sample_rows(self, sample: int, start: int, stop: int) -> FloatArray:
        """Examples ``start:stop`` of one sample index as a float64 ``(m, k)`` matrix: equal
        to ``expand()[sample, start:stop]``, without expanding the other examples."""
        stop = min(stop, self.n)
        out = np.empty((max(0, stop - start), self.k), dtype=np.float64)
        first = sample * self.k
        for j, column in enumerate(self.column_slices(start, stop, first, first + self.k)):
            out[:, j] = column
        return out

    def exact_totals(self) -> FloatArray | None:
        """Every column summed over the examples, ``(samples, k)`` float64, from integer sums;
        None when a column is not of an unsigned integer type or its sum reaches 2**53.

        The float64 sum of such a column is exact in any order (every partial sum is an
        integer below 2**53), so this equals ``expand().sum(axis=1)`` bit for bit without
        expanding a float64 copy of every column.
        """
        totals = np.empty(len(self.columns), dtype=np.float64)
        for index, column in enumerate(self.columns):
            if column.dtype.kind != "u":
                return None
            # int64 cannot overflow: below 2**32 per value, and far fewer than 2**31 values
            total = int(column.sum(dtype=np.int64))
            if total >= _EXACT_BELOW:
                return None
            totals[index] = total
        return totals.reshape(self.samples, self.k)

    def rows(self, start: int, stop: int, *, into: FloatArray | None = None) -> FloatArray:
        """Examples ``start:stop`` as a float64 ``(m, samples * k)`` matrix (flattened layout);
        the first ``m`` rows of ``into`` when given, a C-ordered buffer reused tile after tile."""
        stop = min(stop, self.n)
        size = max(0, stop - start)
        out = np.empty((size, len(self.columns))) if into is None else into[:size]
        for index, column in enumerate(self.column_slices(start, stop)):
            out[:, index] = column
        return out


@dataclass(frozen=True, eq=False)
class GappedStats(CompactStats):
    """:meth:`CompactStats.take` of ascending indices with a few positions left out: equal to
    the copy, read from views of the columns taken from, a few thousand examples at a time.

    ``columns`` gives each column without its gaps, a copy made when asked for, one column
    at a time; what reads examples in ranges (:meth:`column_slices`, and so :meth:`rows`,
    :meth:`sample_rows` and :meth:`expand`) slices the views around the gaps instead.
    """

    #: the columns taken from, cut from the first example taken to the last
    spans: tuple[npt.NDArray[np.generic], ...] = ()
    #: the positions in ``spans`` left out, ascending
    gaps: IndexArray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))

    @property
    def nbytes(self) -> int:
        return sum(self.n * span.dtype.itemsize for span in self.spans)

    @functools.cached_property
    def _after(self) -> IndexArray:
        """For each gap, the first example after it: example p sits past the gaps g_j with
        g_j - j <= p (gap j being the j-th left out)."""
        after: IndexArray = self.gaps - np.arange(len(self.gaps))
        return after

    def _positions(self, indices: IndexArray) -> IndexArray:
        """Where examples ``indices`` are in ``spans``: past each gap before them."""
        positions: IndexArray = indices + np.searchsorted(self._after, indices, side="right")
        return positions

    def column_slices(
        self, start: int, stop: int, first: int = 0, last: int | None = None
    ) -> list[npt.NDArray[np.generic]]:
        stop = min(stop, self.n)
        if stop <= start:
            return [span[0:0] for span in self.spans[first:last]]
        ends = self._positions(np.array([start, stop - 1], dtype=np.intp))
        low, high = int(ends[0]), int(ends[1]) + 1
        if high - low == stop - start:  # no gap inside: views
            return [span[low:high] for span in self.spans[first:last]]
        where = self._positions(np.arange(start, stop, dtype=np.intp))
        return [span[where] for span in self.spans[first:last]]

    def take(self, indices: IndexArray, *, view: bool = True) -> CompactStats:
        spans = CompactStats(self.samples, len(self.spans[0]), self.k, self.spans, True)
        return spans.take(self._positions(np.asarray(indices, dtype=np.intp)), view=view)


class _GappedColumns(Sequence[npt.NDArray[np.generic]]):
    """A :class:`GappedStats`'s columns: each span without its gaps, copied when asked for."""

    def __init__(self, spans: tuple[npt.NDArray[np.generic], ...], gaps: IndexArray) -> None:
        self._spans = spans
        self._gaps = gaps

    def __len__(self) -> int:
        return len(self._spans)

    @overload
    def __getitem__(self, index: int) -> npt.NDArray[np.generic]: ...
    @overload
    def __getitem__(self, index: slice) -> list[npt.NDArray[np.generic]]: ...
    def __getitem__(
        self, index: int | slice
    ) -> npt.NDArray[np.generic] | list[npt.NDArray[np.generic]]:
        if isinstance(index, slice):
            return [np.delete(span, self._gaps) for span in self._spans[index]]
        return np.delete(self._spans[index], self._gaps)

    def __iter__(self) -> Iterator[npt.NDArray[np.generic]]:
        return (np.delete(span, self._gaps) for span in self._spans)


#: column types from narrowest to widest: a column whose blocks have several types has the
#: widest of them, which is the type ``column_type`` gives the whole column
_WIDTH_ORDER: dict[ColumnType, int] = {"u1": 0, "u2": 1, "u4": 2, "i8": 3, "f8": 4}


class CompactBuilder:
    """One sample's compact statistics built from consecutive blocks of rows as they are
    scored, equal to ``CompactStats.of`` of the stacked float64 array without ever holding
    it (at a million examples that array is the largest thing a scoring run would hold).

    Each block's columns are kept in their own smallest type; :meth:`build` gives every
    column the widest type of its blocks.
    """

    def __init__(self, k: int) -> None:
        self.k = k
        self.n = 0
        self._kinds: list[ColumnType] = ["u1"] * k
        self._blocks: list[list[npt.NDArray[np.generic]]] = [[] for _ in range(k)]

    def add(self, rows: FloatArray) -> None:
        """Append a float64 ``(m, k)`` block of rows."""
        if rows.ndim != 2 or rows.shape[1] != self.k:
            raise ValueError(f"rows of shape {rows.shape} do not have {self.k} columns")
        for j in range(self.k):
            column = rows[:, j]
            kind = column_type(column)
            if _WIDTH_ORDER[kind] > _WIDTH_ORDER[self._kinds[j]]:
                self._kinds[j] = kind
            self._blocks[j].append(np.array(column, dtype=COLUMN_DTYPES[kind]))
        self.n += rows.shape[0]

    def build(self) -> CompactStats:
        """The ``(1, n, k)`` statistics of every block added, in order; the blocks are let go."""
        columns = []
        for j in range(self.k):
            column = np.empty(self.n, dtype=COLUMN_DTYPES[self._kinds[j]])
            row = 0
            for block in self._blocks[j]:
                column[row : row + len(block)] = block  # exact: the type holds every value
                row += len(block)
            self._blocks[j] = []
            columns.append(column)
        return CompactStats(1, self.n, self.k, tuple(columns))


def stacked_samples(per_sample: Sequence[CompactStats]) -> CompactStats:
    """The ``(samples, n, k)`` statistics of one ``(1, n, k)`` per sample index, as
    ``CompactStats.of`` of the stacked array would give them."""
    first = per_sample[0]
    columns = tuple(column for stats in per_sample for column in stats.columns)
    return CompactStats(len(per_sample), first.n, first.k, columns)


#: statistics as a run holds them: float64 as computed, or compact once scored
Statistics: TypeAlias = FloatArray | CompactStats


def as_float(stats: Statistics) -> FloatArray:
    """A ``(samples, n, k)`` float64 array of either form."""
    return stats.expand() if isinstance(stats, CompactStats) else stats


def take(stats: Statistics, indices: IndexArray) -> Statistics:
    """``stats[:, indices]`` of either form; a view, not a copy, when the indices are a run.

    The suite's own group usually is one (ids in sorted order, all of them paired): at a
    million examples a copy of every metric's statistics per use would triple the memory.
    """
    if isinstance(stats, CompactStats):
        return stats.take(indices)
    if _is_run(indices):
        return stats[:, int(indices[0]) : int(indices[0]) + len(indices)]
    return stats[:, indices]


def _gaps(indices: IndexArray) -> IndexArray | None:
    """The positions from ``indices[0]`` to ``indices[-1]`` that ascending ``indices`` leave
    out, counted from ``indices[0]``, when they are at most ``_GAPPED_SHARE`` of them (and
    some); else None."""
    n = len(indices)
    if n < 2:
        return None
    first, last = int(indices[0]), int(indices[-1])
    missing = last - first + 1 - n
    if not 0 < missing <= n * _GAPPED_SHARE or not np.all(np.diff(indices) > 0):
        return None
    left_out = np.ones(last - first + 1, dtype=bool)
    left_out[indices - first] = False
    gaps: IndexArray = np.flatnonzero(left_out)
    return gaps


def _is_run(indices: IndexArray) -> bool:
    """Whether ``indices`` are consecutive ascending positions (at least one)."""
    n = len(indices)
    return bool(n and int(indices[-1]) - int(indices[0]) == n - 1 and np.all(np.diff(indices) == 1))
