"""Which examples a report page holds, so that its size does not grow with the golden set.

A small run keeps every example. A large one keeps, per suite and metric, the examples that
worsened most and those that improved most (in the metric's direction), plus the ones the
Markdown report lists, so that every link from it lands. Aggregates (metric tables,
histograms, slices) are computed from every example elsewhere; this only bounds the table.
Every example, in full, stays in ``examples.jsonl.gz`` beside ``result.json``.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from goldgate.model.example_table import ExampleResult
from goldgate.model.result import RunResult, SuiteResult
from goldgate.report.example_view import DIFF_CHARS
from goldgate.report.ranking import Moves, gains, worst_regressed
from goldgate.wording import plural

#: a run with at most this many examples keeps them all in the HTML report
MAX_ALL_EXAMPLES = 2_000
#: otherwise, per suite and metric: this many most worsened and this many most improved
EXAMPLES_PER_METRIC = 50
#: the Markdown report's worst examples per suite, always kept so its links land
LINKED_PER_SUITE = 10
#: characters of one text (input, reference, output) kept in the HTML report
TEXT_CHARS = DIFF_CHARS
#: references kept per example in the HTML report
MAX_REFERENCES = 5
#: where every example is, in full (written beside result.json)
EXAMPLES_FILE = "examples.jsonl.gz"


@dataclass(frozen=True)
class Selection:
    """The examples kept, per suite in golden order, and how many there were."""

    suites: tuple[tuple[SuiteResult, tuple[ExampleResult, ...]], ...]
    total: int
    kept: int
    complete: bool

    def describe(self) -> str:
        """What the page holds and where the rest is, in one sentence."""
        if self.complete:
            return f"All {plural(self.total, 'example')}."
        return (
            f"{self.kept:,} of {plural(self.total, 'example')}: of each suite, the "
            f"{EXAMPLES_PER_METRIC} that worsened most and the {EXAMPLES_PER_METRIC} that "
            f"improved most on each metric (the lowest-scoring {EXAMPLES_PER_METRIC} where "
            f"there is no baseline). Every example, in full, is in {EXAMPLES_FILE} beside "
            "result.json."
        )


def select_examples(result: RunResult) -> Selection:
    """The examples an HTML report holds (all of them for a small run)."""
    total = sum(len(s.examples) for s in result.suites)
    if total <= MAX_ALL_EXAMPLES:
        suites = tuple((s, tuple(s.examples)) for s in result.suites)
        return Selection(suites, total, total, True)
    kept = []
    for suite in result.suites:
        positions = _positions(suite)
        table = Moves(suite).table
        kept.append((suite, tuple(table[i] for i in sorted(positions))))
    n_kept = sum(len(examples) for _, examples in kept)
    return Selection(tuple(kept), total, n_kept, n_kept == total)


def _positions(suite: SuiteResult) -> set[int]:
    """Per metric, the most worsened and most improved (or lowest-scoring) examples.

    Read from the score columns: the exact rounded gain is computed only for the examples
    that moved (or flipped), and no row is built for an example that is not kept.
    """
    moves = Moves(suite)
    names = [m.metric for m in suite.metrics] or sorted(set(moves.table.score_names()))
    to_wrong, to_right = moves.flipped(to_wrong=True), moves.flipped(to_wrong=False)
    chosen: set[int] = set()
    n = EXAMPLES_PER_METRIC
    for name in names:
        now, then = moves.columns(name)
        direction = 1.0 if moves.higher.get(name, True) else -1.0
        change = gains(now, then, direction > 0)
        wrong, right = to_wrong.get(name, frozenset()), to_right.get(name, frozenset())
        worse: list[tuple[float, int]] = []
        better: list[tuple[float, int]] = []
        # rounding never turns a change's sign: the others have a gain of 0 (or none)
        for i in sorted(set(np.flatnonzero(change != 0).tolist()) | wrong | right):
            g = moves.gain_at(name, i)
            if g is None:
                continue
            if g < 0 or i in wrong:
                worse.append((g, i))
            elif g > 0 or i in right:
                better.append((-g, i))
        chosen.update(i for _, i in heapq.nsmallest(n, worse))
        chosen.update(i for _, i in heapq.nsmallest(n, better))
        if not worse and not better:
            # no baseline: the lowest-scoring (in the metric's direction), first on a tie
            unpaired = np.flatnonzero(~np.isnan(now) & np.isnan(then))
            scores = now[unpaired] * direction
            order = np.lexsort((unpaired, scores))[:n]
            chosen.update(unpaired[order].tolist())
    chosen.update(worst_regressed(suite).positions[:LINKED_PER_SUITE])
    return chosen
