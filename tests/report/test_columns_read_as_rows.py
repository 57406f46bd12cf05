"""Reports read a suite's examples from its score columns; they must find what rows gave.

Each function below that ranks or counts examples (worst regressed, most improved, the
HTML selection and histograms, the GitHub annotation's worst example, the pytest failure's
examples) is checked against its plain definition over rows (kept here as the reference),
on a result whose examples are columns and on the same result as a list of rows.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from pathlib import Path

import pytest

from goldgate.github import pull_request as github
from goldgate.model.example_table import ExampleColumns, ExampleResult
from goldgate.model.result import RunResult, SuiteResult, gain
from goldgate.pytest import rendering as pytest_rendering
from goldgate.report import html, ranking, selection, view
from goldgate.report.formatting import directions, round_points
from goldgate.report.ranking import ranking_metrics
from tests.report.fixtures import make_result
from tests.test_example_table import _as_rows
from tests.test_example_table import project as project


def _gain_of(ex: ExampleResult, name: str, higher: dict[str, bool]) -> float | None:
    cur, base = ex.scores.get(name), ex.baseline_scores.get(name)
    if cur is None or base is None:
        return None
    return gain(round_points(cur - base), higher.get(name, True))


def _ranked(suite: SuiteResult, *, improved: bool) -> list[ExampleResult]:
    rank = ranking_metrics(suite, improved=improved)
    gated = ranking._gated(suite, rank)
    higher = directions(suite)
    sign = -1.0 if improved else 1.0
    keyed = []
    for position, ex in enumerate(suite.examples):
        gains = [g for g in (_gain_of(ex, m, higher) for m in gated) if g is not None]
        flips = ex.flipped_to_right if improved else ex.flipped_to_wrong
        if flips or any((g > 0) if improved else (g < 0) for g in gains):
            key = tuple(sign * (_gain_of(ex, name, higher) or 0.0) for name in rank)
            keyed.append((key, -len(flips), position, ex))
    keyed.sort(key=lambda item: item[:3])
    return [item[3] for item in keyed]


def _counts(suite: SuiteResult) -> tuple[int, int, int]:
    higher = directions(suite)
    rank = ranking._gated(suite, ranking_metrics(suite))
    n_regressed = n_improved = 0
    for ex in suite.examples:
        gains = [g for g in (_gain_of(ex, m, higher) for m in rank) if g is not None]
        worst, best = (min(gains), max(gains)) if gains else (None, None)
        n_regressed += bool(ex.flipped_to_wrong) or (worst is not None and worst < 0)
        n_improved += bool(ex.flipped_to_right) or (best is not None and best > 0)
    return n_regressed, n_improved, sum(ex.new for ex in suite.examples)


def _positions(suite: SuiteResult) -> set[int]:
    higher = directions(suite)
    names = [m.metric for m in suite.metrics] or sorted(
        {k for ex in suite.examples for k in ex.scores}
    )
    chosen: set[int] = set()
    n = selection.EXAMPLES_PER_METRIC
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
    linked = _ranked(suite, improved=False)[: selection.LINKED_PER_SUITE]
    chosen.update(position[id(ex)] for ex in linked)
    return chosen


def _deltas(suite: SuiteResult, metric: str) -> list[float]:
    return [
        round_points(ex.scores[metric] - ex.baseline_scores[metric])
        for ex in suite.examples
        if metric in ex.scores and metric in ex.baseline_scores
    ]


def _worst_example(suite: SuiteResult, metric: str, tag: str | None) -> ExampleResult | None:
    higher = next((m.higher_is_better for m in suite.metrics if m.metric == metric), True)
    worst, worst_delta = None, 0.0
    for example in suite.examples:
        if tag is not None and tag not in example.tags:
            continue
        before, now = example.baseline_scores.get(metric), example.scores.get(metric)
        if before is None or now is None:
            continue
        change = gain(now - before, higher)
        if change < worst_delta:
            worst, worst_delta = example, change
    return worst


def _failure_lines(suite: SuiteResult, metrics: Sequence[str], limit: int) -> list[str]:
    higher = {m.metric: m.higher_is_better for m in suite.metrics}
    ranked: list[tuple[float, int, list[str]]] = []
    for position, example in enumerate(suite.examples):
        moves, fall = [], 0.0
        for metric in metrics:
            now, then = example.scores.get(metric), example.baseline_scores.get(metric)
            if now is None or then is None:
                continue
            worsening = -gain(now - then, higher.get(metric, True))
            if worsening <= 0:
                continue
            fall = max(fall, worsening)
            moves.append(f"{metric} {then:.2f} → {now:.2f}")
        if moves:
            lines = pytest_rendering._example_lines(suite, example, ", ".join(moves))
            ranked.append((-fall, position, lines))
    ranked.sort(key=lambda item: item[:2])
    shown = [line for _, _, lines in ranked[:limit] for line in lines]
    if len(ranked) > limit:
        shown.append(f"  … and {len(ranked) - limit} more")
    return shown


def _extreme_lines(suite: SuiteResult, metric: str, highest: bool, limit: int) -> list[str]:
    ranked = []
    for position, example in enumerate(suite.examples):
        score = example.scores.get(metric)
        if score is not None:
            lines = pytest_rendering._example_lines(suite, example, f"{metric} {score:.2f}")
            ranked.append((-score if highest else score, position, lines))
    ranked.sort(key=lambda item: item[:2])
    return [line for _, _, lines in ranked[:limit] for line in lines]


def _results(project: tuple[Path, RunResult]) -> list[RunResult]:
    gated = project[1]
    assert isinstance(gated.suites[0].examples, ExampleColumns)
    return [gated, _as_rows(gated), make_result("regressed", n_examples=40), make_result("pass")]


@pytest.mark.parametrize("which", range(4))
def test_rankings_and_counts_are_those_of_rows(
    which: int, project: tuple[Path, RunResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    # small enough that the HTML selection keeps only part of the examples
    monkeypatch.setattr(selection, "MAX_ALL_EXAMPLES", 5)
    monkeypatch.setattr(selection, "EXAMPLES_PER_METRIC", 3)
    monkeypatch.setattr(selection, "LINKED_PER_SUITE", 4)
    result = _results(project)[which]
    for suite in result.suites:
        rows = suite.model_copy(update={"examples": list(suite.examples)})
        assert list(ranking.worst_regressed(suite)) == _ranked(rows, improved=False)
        assert list(ranking.most_improved(suite)) == _ranked(rows, improved=True)
        shown = view._suite_view(suite)
        assert (shown.n_regressed, shown.n_improved, shown.n_new) == _counts(rows)
        assert selection._positions(suite) == _positions(rows)
        for summary in suite.metrics:
            metric = summary.metric
            assert [h.metric for h in html.histograms(suite)] == [
                m.metric for m in suite.metrics if _deltas(rows, m.metric)
            ]
            for tag in (None, "x", "geography"):
                assert github._worst_example(suite, metric, tag) == _worst_example(
                    rows, metric, tag
                )
            for highest in (True, False):
                assert pytest_rendering.extreme_examples(
                    suite, metric, highest=highest, limit=3
                ) == _extreme_lines(rows, metric, highest, 3)
        names = [m.metric for m in suite.metrics]
        for limit in (1, 3, 100):
            assert pytest_rendering.worst_regressed(suite, names, limit) == _failure_lines(
                rows, names, limit
            )
            assert pytest_rendering.worst_regressed(suite, names[:1], limit) == _failure_lines(
                rows, names[:1], limit
            )
    first = result.suites[0]
    # the cases are not empty: examples worsened, improved, were new; part was selected
    if which < 3:
        assert ranking.worst_regressed(first) and ranking.most_improved(first)
        assert 0 < len(selection._positions(first)) < len(first.examples)


def test_the_histograms_count_the_deltas_of_rows(project: tuple[Path, RunResult]) -> None:
    for result in _results(project):
        for suite in result.suites:
            rows = suite.model_copy(update={"examples": list(suite.examples)})
            expected = [
                html._histogram(m.metric, _deltas(rows, m.metric), m.higher_is_better)
                for m in suite.metrics
                if _deltas(rows, m.metric)
            ]
            assert list(html.histograms(suite)) == expected
