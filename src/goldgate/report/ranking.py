"""Which examples of a suite worsened or improved, and in which order reports show them.

The metrics whose gate check failed rank and label examples first (:func:`ranking_metrics`);
the per-example changes are read from the examples' score columns (:class:`Moves`), and the
examples shown are built as rows only when read (:class:`Picked`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

from goldgate.model.example_table import ExampleResult, ExampleTable, FloatColumn, example_table
from goldgate.model.result import CheckStatus, SuiteResult, gain
from goldgate.report.formatting import directions, round_points

_RANK_STATUSES = (CheckStatus.FAIL, CheckStatus.FORGIVEN, CheckStatus.IMPROVED)


def ranking_metrics(suite: SuiteResult, *, improved: bool = False) -> tuple[str, ...]:
    """The metrics that rank and label examples, most telling first.

    The metrics whose check failed come first (then forgiven, then improved; for the most
    improved examples, improved first), then the other gated metrics, then the rest: an
    example list under a failed BLEU check is ranked and labelled by BLEU, not by chrF.
    """
    order = (
        (CheckStatus.IMPROVED, CheckStatus.FAIL, CheckStatus.FORGIVEN)
        if improved
        else _RANK_STATUSES
    )
    names: list[str] = []
    for status in order:
        names += [c.metric for c in suite.checks if c.status is status]
    names += [c.metric for c in suite.checks]
    names += [m.metric for m in suite.metrics]
    if not names:
        names = sorted(set(example_table(suite.examples).score_names()))
    return tuple(dict.fromkeys(names))


def _gated(suite: SuiteResult, metrics: Sequence[str]) -> list[str]:
    gated = {c.metric for c in suite.checks}
    return [m for m in metrics if m in gated] or list(metrics)


def gains(now: FloatColumn, then: FloatColumn, higher_is_better: bool) -> FloatColumn:
    """Each example's change (not rounded), positive when better: ``gain(now - then)`` of
    a column (NaN where a score is absent; a change past the largest float is infinite, as
    Python's subtraction gives it, without a warning)."""
    with np.errstate(over="ignore", invalid="ignore"):
        change: FloatColumn = now - then
    return change if higher_is_better else -change


class Moves:
    """A suite's per-example changes, read from its examples' score columns.

    A report asks every example whether it worsened or improved, but shows a few: the
    columns (numpy) find the candidates, and the exact rounded gain, as a row would give
    it, is computed only for those.
    """

    def __init__(self, suite: SuiteResult) -> None:
        self.table: ExampleTable = example_table(suite.examples)
        self.higher = directions(suite)
        self._columns: dict[str, tuple[FloatColumn, FloatColumn]] = {}
        self._flips: dict[bool, dict[str, frozenset[int]]] = {}

    def columns(self, name: str) -> tuple[FloatColumn, FloatColumn]:
        """Scores on ``name`` now and at the baseline, by position (NaN where absent)."""
        if name not in self._columns:
            self._columns[name] = (self.table.current(name), self.table.baseline(name))
        return self._columns[name]

    def gain_at(self, name: str, position: int) -> float | None:
        """An example's rounded change on a metric, negative when worse (as _gain_of)."""
        now, then = self.columns(name)
        cur, base = float(now[position]), float(then[position])
        if math.isnan(cur) or math.isnan(base):
            return None
        return gain(round_points(cur - base), self.higher.get(name, True))

    def moved(self, metrics: Sequence[str], *, worse: bool) -> set[int]:
        """Positions whose rounded gain on one of ``metrics`` is negative (or positive)."""
        found: set[int] = set()
        for name in metrics:
            now, then = self.columns(name)
            change = gains(now, then, self.higher.get(name, True))
            # rounding never turns a change's sign: these are the only candidates
            candidates = np.flatnonzero(change < 0 if worse else change > 0).tolist()
            for position in candidates:
                if position not in found:
                    g = self.gain_at(name, position)
                    if g is not None and (g < 0 if worse else g > 0):
                        found.add(position)
        return found

    def flipped(self, *, to_wrong: bool) -> dict[str, frozenset[int]]:
        """Metric → positions of the examples that flipped on it."""
        if to_wrong not in self._flips:
            self._flips[to_wrong] = self.table.flipped(to_wrong=to_wrong)
        return self._flips[to_wrong]

    def any_flipped(self, *, to_wrong: bool) -> set[int]:
        """Positions of the examples that flipped on any metric."""
        return set().union(*self.flipped(to_wrong=to_wrong).values())


class Picked(Sequence[ExampleResult]):
    """Examples of a table at chosen positions, in the chosen order; rows built when read."""

    def __init__(self, table: ExampleTable, positions: Sequence[int]) -> None:
        self.table = table
        self.positions = list(positions)

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, index: int) -> ExampleResult: ...
    @overload
    def __getitem__(self, index: slice) -> Picked: ...
    def __getitem__(self, index: int | slice) -> ExampleResult | Picked:
        if isinstance(index, slice):
            return Picked(self.table, self.positions[index])
        return self.table.row(self.positions[index])

    def __iter__(self) -> Iterator[ExampleResult]:
        return (self.table.row(position) for position in self.positions)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


def _ranked(suite: SuiteResult, *, improved: bool) -> Picked:
    rank = ranking_metrics(suite, improved=improved)
    gated = _gated(suite, rank)
    moves = Moves(suite)
    flips = moves.flipped(to_wrong=not improved)
    sign = -1.0 if improved else 1.0
    keyed = []
    for position in moves.any_flipped(to_wrong=not improved) | moves.moved(
        gated, worse=not improved
    ):
        # Lexicographic: the first metric decides, the next ones break its ties.
        key = tuple(sign * (moves.gain_at(name, position) or 0.0) for name in rank)
        n_flips = sum(position in positions for positions in flips.values())
        keyed.append((key, -n_flips, position))
    keyed.sort()
    return Picked(moves.table, [position for _, _, position in keyed])


def worst_regressed(suite: SuiteResult) -> Picked:
    """The suite's regressed examples, worst first (rows built as they are read).

    Regressed: a gated metric (every metric when none is gated) worsened in its direction,
    or an example flipped to wrong. Ranked by the worsening of the failed check's metric,
    then the other metrics in :func:`ranking_metrics` order, then flips, then golden order.
    """
    return _ranked(suite, improved=False)


def most_improved(suite: SuiteResult) -> Picked:
    """The suite's improved examples, most improved first (the mirror of worst_regressed)."""
    return _ranked(suite, improved=True)
