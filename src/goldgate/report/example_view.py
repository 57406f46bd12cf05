"""One example formatted for display: its texts, rounded scores and the diff of its outputs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from goldgate.model.example_table import ExampleResult, example_table
from goldgate.model.result import RunResult, SuiteResult, gain
from goldgate.report.diff import DiffOp, word_diff
from goldgate.report.formatting import directions, round_points
from goldgate.report.ranking import _gated, ranking_metrics
from goldgate.terminal.console import escape_controls

#: characters of each output diffed: a diff past this is not read, and diffing costs
DIFF_CHARS = 2_000


@dataclass(frozen=True)
class ScoreCell:
    """One metric of one example: rounded baseline, current and delta."""

    metric: str
    baseline: float | None
    current: float | None
    delta: float | None
    flip: str | None  # "wrong", "right" or None
    #: the delta turned so that negative is worse (for TER, a rise)
    gain: float | None = None


@dataclass(frozen=True)
class ExampleRow:
    """One example ready to display: texts, scores and the diff of its outputs."""

    suite: str
    id: str
    anchor: str
    line: int | None
    tags: tuple[str, ...]
    input: str | None
    references: tuple[str, ...]
    output: str
    baseline_output: str | None
    diff: tuple[DiffOp, ...]
    scores: tuple[ScoreCell, ...]
    #: the ranking metrics' cells in ranking order: the failed check's metric first
    ranked: tuple[ScoreCell, ...]
    worst: ScoreCell | None
    regressed: bool
    improved: bool
    new: bool
    #: (metric, note) pairs: an LLM judge's rationale for this example
    notes: tuple[tuple[str, str], ...] = ()
    #: the failure modes of its current output, and those its blessed output had not
    categories: tuple[str, ...] = ()
    new_categories: tuple[str, ...] = ()


def format_input(value: Any) -> str | None:
    """An example's input as text: a string as is, an object as compact ``key: value`` lines."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            text = item if isinstance(item, str) else _compact_json(item)
            lines.append(f"{key}: {text}")
        return "\n".join(lines)
    return _compact_json(value)


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def anchor_of(suite: str, example_id: str, *, unique: bool = True) -> str:
    """The example's fragment in the HTML report: its id (``qa-017``), or ``suite/id`` when
    the same id appears in several suites. Control characters are escaped (``\\u202e``), as the
    page shows the id, so that a link from the Markdown report finds it."""
    shown = escape_controls(example_id)
    return shown if unique else f"{escape_controls(suite)}/{shown}"


def shared_ids(result: RunResult) -> frozenset[str]:
    """Ids used by more than one suite: their anchors carry the suite name."""
    seen: set[str] = set()
    shared: set[str] = set()
    for suite in result.suites:
        for ex_id in set(example_table(suite.examples).ids):
            (shared if ex_id in seen else seen).add(ex_id)
    return frozenset(shared)


def example_row(
    suite: SuiteResult,
    ex: ExampleResult,
    *,
    rank: Sequence[str] | None = None,
    shared: frozenset[str] = frozenset(),
) -> ExampleRow:
    """Format one example, with the word diff of its baseline and current outputs."""
    rank = ranking_metrics(suite) if rank is None else rank
    names = [m.metric for m in suite.metrics] or sorted(ex.scores)
    extra = sorted(k for k in ex.scores if k not in names)
    higher = directions(suite)
    cells = []
    for name in [*names, *extra]:
        cur, base = ex.scores.get(name), ex.baseline_scores.get(name)
        flip = (
            "wrong"
            if name in ex.flipped_to_wrong
            else "right"
            if name in ex.flipped_to_right
            else None
        )
        delta = None if cur is None or base is None else round_points(cur - base)
        cells.append(
            ScoreCell(
                metric=name,
                baseline=None if base is None else round_points(base),
                current=None if cur is None else round_points(cur),
                delta=delta,
                flip=flip,
                gain=None if delta is None else gain(delta, higher.get(name, True)),
            )
        )
    by_name = {c.metric: c for c in cells}
    ranked = tuple(by_name[m] for m in rank if m in by_name and by_name[m].gain is not None)
    gated = set(_gated(suite, rank))
    gains = [c.gain for c in ranked if c.gain is not None and c.metric in gated]
    if ex.baseline_output is None:
        diff: tuple[DiffOp, ...] = (DiffOp("equal", ex.output),) if ex.output else ()
    else:
        diff = tuple(word_diff(ex.baseline_output[:DIFF_CHARS], ex.output[:DIFF_CHARS]))
    return ExampleRow(
        suite=suite.name,
        id=ex.id,
        anchor=anchor_of(suite.name, ex.id, unique=ex.id not in shared),
        line=ex.line,
        tags=tuple(ex.tags),
        input=format_input(ex.input),
        references=tuple(ex.references),
        output=ex.output,
        baseline_output=ex.baseline_output,
        diff=diff,
        scores=tuple(cells),
        ranked=ranked,
        worst=ranked[0] if ranked else None,
        regressed=bool(ex.flipped_to_wrong) or any(g < 0 for g in gains),
        improved=bool(ex.flipped_to_right) or any(g > 0 for g in gains),
        new=ex.new,
        notes=tuple(sorted((getattr(ex, "notes", None) or {}).items())),
        categories=_categories(ex),
        new_categories=_new_categories(ex),
    )


def _categories(ex: ExampleResult) -> tuple[str, ...]:
    found = getattr(ex, "diagnosis", None)  # rows built field by field may leave it out
    return tuple(found.current) if found is not None else ()


def _new_categories(ex: ExampleResult) -> tuple[str, ...]:
    found = getattr(ex, "diagnosis", None)
    if found is None or found.baseline is None:
        return ()
    return tuple(name for name in found.current if name not in found.baseline)


def example_rows(
    result: RunResult,
    chosen: Iterable[tuple[SuiteResult, Iterable[ExampleResult]]] | None = None,
) -> Iterator[ExampleRow]:
    """Every example of every suite (or the ``chosen`` ones), in golden order."""
    shared = shared_ids(result)
    pairs = chosen if chosen is not None else ((s, s.examples) for s in result.suites)
    for suite, examples in pairs:
        rank = ranking_metrics(suite)
        for ex in examples:
            yield example_row(suite, ex, rank=rank, shared=shared)
