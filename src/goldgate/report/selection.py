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

from goldgate.report.view import DIFF_CHARS, directions, round_points, worst_regressed
from goldgate.result import ExampleResult, RunResult, SuiteResult, gain

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
            return f"All {self.total:,} examples."
        return (
            f"{self.kept:,} of {self.total:,} examples: of each suite, the "
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
        kept.append((suite, tuple(suite.examples[i] for i in sorted(positions))))
    n_kept = sum(len(examples) for _, examples in kept)
    return Selection(tuple(kept), total, n_kept, n_kept == total)


def _positions(suite: SuiteResult) -> set[int]:
    higher = directions(suite)
    names = [m.metric for m in suite.metrics] or sorted(
        {k for ex in suite.examples for k in ex.scores}
    )
    chosen: set[int] = set()
    n = EXAMPLES_PER_METRIC
    for name in names:
        worse: list[tuple[float, int]] = []
        better: list[tuple[float, int]] = []
        scores: list[tuple[float, int]] = []
        for i, ex in enumerate(suite.examples):
            cur = ex.scores.get(name)
            if cur is None:
                continue
            base = ex.baseline_scores.get(name)
            if base is None:
                scores.append((gain(cur, higher.get(name, True)), i))
                continue
            g = gain(round_points(cur - base), higher.get(name, True))
            if g < 0 or name in ex.flipped_to_wrong:
                worse.append((g, i))
            elif g > 0 or name in ex.flipped_to_right:
                better.append((-g, i))
        chosen.update(i for _, i in heapq.nsmallest(n, worse))
        chosen.update(i for _, i in heapq.nsmallest(n, better))
        if not worse and not better:
            chosen.update(i for _, i in heapq.nsmallest(n, scores))
    position = {id(ex): i for i, ex in enumerate(suite.examples)}
    chosen.update(position[id(ex)] for ex in worst_regressed(suite)[:LINKED_PER_SUITE])
    return chosen
