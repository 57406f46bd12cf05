"""Per-example statistics held compactly in memory, expanded to float64 where they are summed.

A million examples scored with BLEU, chrF, ROUGE-1/2/L, exact match and token F1 carry 44
statistics each: 352 MB as float64, twice over with a baseline, and the largest holder of
memory in a run. Most statistics are small counts (n-gram matches, lengths, hits) that fit
exactly in one or two bytes; only true fractions (ROUGE's per-example F) need float64. So a
suite's statistics are kept column by column, each column in the smallest type that holds
every value exactly (the rule of the packed baseline, :func:`goldgate.packed.column_type`),
and turned back into float64, bit for bit, one metric or one tile of examples at a time:
whatever sums them sees exactly the numbers it saw before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from goldgate.packed import COLUMN_DTYPES, ColumnType, column_type

FloatArray = npt.NDArray[np.float64]
#: float64 holds every integer below this exactly
_EXACT_BELOW = 2**53
IndexArray = npt.NDArray[np.intp]


#: Examples expanded at a time: their float64 rows stay in the cache while every column fills
#: them (8,192 × 44 statistics × 8 bytes = 2.9 MB).
_EXPAND_ROWS = 8_192


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
    columns: tuple[npt.NDArray[np.generic], ...]
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
        """The examples at ``indices`` (``stats[:, indices]``); views, not copies, when they
        are a contiguous run and ``view`` is allowed."""
        size = len(indices)
        if view and _is_run(indices):
            first = int(indices[0])
            cut = slice(first, first + size)
            columns = tuple(c[cut] for c in self.columns)
            return CompactStats(self.samples, size, self.k, columns, self.example_major)
        columns = tuple(c[indices] for c in self.columns)
        return CompactStats(self.samples, size, self.k, columns, example_major=True)

    def expand(self) -> FloatArray:
        """The float64 ``(samples, n, k)`` array, equal bit for bit to the one compacted."""
        if self.example_major:
            out = np.empty((self.n, self.samples, self.k), dtype=np.float64).transpose(1, 0, 2)
        else:
            out = np.empty((self.samples, self.n, self.k), dtype=np.float64)
        # A few thousand examples at a time: column by column over the whole array, every
        # column's strided writes would pass over all of its memory (4x slower at 1M).
        for start in range(0, self.n, _EXPAND_ROWS):
            stop = start + _EXPAND_ROWS
            for index, column in enumerate(self.columns):
                out[index // self.k, start:stop, index % self.k] = column[start:stop]
        return out

    def sample_rows(self, sample: int, start: int, stop: int) -> FloatArray:
        """Examples ``start:stop`` of one sample index as a float64 ``(m, k)`` matrix: equal
        to ``expand()[sample, start:stop]``, without expanding the other examples."""
        stop = min(stop, self.n)
        out = np.empty((max(0, stop - start), self.k), dtype=np.float64)
        for j, column in enumerate(self.columns[sample * self.k : (sample + 1) * self.k]):
            out[:, j] = column[start:stop]
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
        for index, column in enumerate(self.columns):
            out[:, index] = column[start:stop]
        return out


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


def _is_run(indices: IndexArray) -> bool:
    """Whether ``indices`` are consecutive ascending positions (at least one)."""
    n = len(indices)
    return bool(n and int(indices[-1]) - int(indices[0]) == n - 1 and np.all(np.diff(indices) == 1))
