"""``goldgate compare A B C ...``: many systems' per-example statistics → one matrix per
suite and metric (:mod:`goldgate.gate.many`), with the examples each pair differs most on.

A system is a saved result (its outputs are scored again, with the metric rebuilt from the
configuration's options or the defaults, and kept only when that gives back the recorded
score), a baseline (its blessed statistics, as the gate reads them), or the name of a system
in the configuration's ``systems:`` (run on the configuration's golden sets through the
usual pipeline and cache). Every system must hold the same golden sets: another golden hash
is an input error naming the file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from goldgate.errors import GoldgateError, InputError, UsageError
from goldgate.gate.many import MetricMatrix, Settings, Side, compare_systems
from goldgate.gate.rules import example_scores
from goldgate.gate.stats import sample_score
from goldgate.metrics.base import Metric
from goldgate.model.baseline import strip_nrefs
from goldgate.model.compact_stats import Statistics, take
from goldgate.model.config import Config, SignificanceConfig

#: examples shown per pair and metric, where the two systems differ most
EXAMPLES_PER_PAIR = 10
#: characters kept of one text (input, reference, output) of a shown example
TEXT_CHARS = 2_000


@dataclass
class SuiteSide:
    """One system's view of one suite: every metric's statistics in golden order."""

    golden_hash: str
    ids: list[str]
    #: spec → (metric, signature, (samples, n, k) statistics aligned with ``ids``)
    metrics: dict[str, tuple[Metric[Any], str, Statistics]]
    #: id → its outputs (one per sample), None when the system has none
    outputs: Callable[[str], Sequence[str] | None]
    #: id → (input, references), where the system knows them (a baseline does not)
    records: Mapping[str, tuple[Any, Sequence[str]]] = field(default_factory=dict)


@dataclass
class SystemSide:
    """One system of the comparison: its label, where it came from, its suites."""

    name: str
    source: str
    suites: dict[str, SuiteSide]


@dataclass(frozen=True)
class DifferingExample:
    """An example two systems score far apart on one metric."""

    id: str
    input: str
    references: list[str]
    output_a: str
    output_b: str
    score_a: float
    score_b: float


@dataclass
class SuiteMatrix:
    """Every metric of one suite over every system."""

    suite: str
    golden_hash: str
    n_examples: int
    metrics: list[MetricMatrix]
    #: (metric, a, b) → the examples they differ most on, largest difference first
    examples: dict[tuple[str, str, str], list[DifferingExample]]


@dataclass
class Comparison:
    """The whole comparison: systems in the order given, settings, suites, notes."""

    systems: list[tuple[str, str]]
    settings: Settings
    suites: list[SuiteMatrix]
    notes: list[str]


def settings_of(config: Config | None, recorded: Sequence[Any]) -> Settings:
    """The bootstrap settings: the configuration's, else those the results agree they were
    run with, else the defaults (what a gate without configuration uses)."""
    if config is not None and config.significance is not None:
        chosen = config.significance
        return Settings(chosen.resamples, chosen.alpha, chosen.seed)
    found = {(s.resamples, s.alpha, s.seed) for s in recorded if s is not None}
    if len(found) == 1:
        resamples, alpha, seed = found.pop()
        return Settings(resamples, alpha, seed)
    default = SignificanceConfig()
    return Settings(default.resamples, default.alpha, default.seed)


def _unversioned(signature: str) -> str:
    """A signature without its ``version`` and ``nrefs`` fields: a result of another release
    or a baseline (written without the reference counts) still pairs."""
    return "|".join(
        part for part in strip_nrefs(signature).split("|") if not part.startswith("version:")
    )


def _same_score(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _rebuilt_metric(config: Config | None, suite: str, spec: str) -> Metric[Any]:
    """The metric ``spec`` with the configuration's options for the suite, else defaults."""
    from goldgate.metrics.batch import BatchMetric
    from goldgate.metrics.registry import create_metric
    from goldgate.pipeline.score import metric_context

    options: dict[str, Any] = {}
    if config is not None and suite in config.suites:
        options = dict(config.suites[suite].metrics.get(spec, {}))
    metric = create_metric(spec, options)
    if config is not None and isinstance(metric, BatchMetric):
        metric.bind(metric_context(config))
    return metric


def read_result_side(
    path: Path,
    name: str,
    config: Config | None,
    notes: list[str],
    only: Sequence[str] | None = None,
) -> SystemSide:
    """A saved result: each suite's outputs (of ``only``, when given) scored again with the
    rebuilt metrics."""
    from goldgate.model.golden_records import GoldenRecord
    from goldgate.model.goldens import GoldenSet
    from goldgate.model.result import RunResult
    from goldgate.pipeline.score import score_outputs

    result = RunResult.from_json_file(path)
    suites: dict[str, SuiteSide] = {}
    for suite in result.suites:
        if only and suite.name not in only:
            continue
        if suite.error is not None:
            notes.append(f"{path}: suite {suite.name!r} ended in an error: left out")
            continue
        rows = list(suite.examples)
        if len(rows) != suite.n_examples or not rows:
            raise InputError(
                f"{path}: suite {suite.name!r} has {len(rows)} example rows for"
                f" {suite.n_examples} examples: compare needs every example's output"
            )
        records = [
            GoldenRecord(row.id, row.input, tuple(row.references), tuple(row.tags)) for row in rows
        ]
        golden = GoldenSet(suite.name, path, records, suite.golden_hash)
        outputs = {row.id: [row.output] for row in rows}
        metrics: dict[str, tuple[Metric[Any], str, Statistics]] = {}
        for summary in suite.metrics:
            why = ""
            try:
                metric = _rebuilt_metric(config, suite.name, summary.metric)
                scored = score_outputs(suite.name, golden, outputs, {summary.metric: metric})
                item = scored.scores.metrics[0]
                again = sample_score(metric, item.stats)
                if _unversioned(item.signature) != _unversioned(summary.signature):
                    why = "its options are not the defaults: pass the configuration with -c"
                elif not _same_score(again, summary.current):
                    why = (
                        f"scoring its outputs again gives {again:.4f}, not the recorded"
                        f" {summary.current:.4f} (sampled outputs, or options the"
                        " configuration does not hold)"
                    )
                else:
                    metrics[summary.metric] = (metric, summary.signature, item.stats)
            except GoldgateError as exc:
                why = f"cannot be scored again here: {exc}"
            if why:
                notes.append(f"{path}: suite {suite.name!r}, metric {summary.metric!r}: {why}")
        suites[suite.name] = SuiteSide(
            golden_hash=suite.golden_hash,
            ids=[row.id for row in rows],
            metrics=metrics,
            outputs=outputs.get,
            records={row.id: (row.input, list(row.references)) for row in rows},
        )
    return SystemSide(name, str(path), suites)


def read_baseline_side(
    path: Path,
    text: str,
    name: str,
    config: Config | None,
    notes: list[str],
    only: Sequence[str] | None = None,
) -> SystemSide:
    """A baseline: its blessed statistics (of the suites ``only`` names, when given), with
    metrics rebuilt to score them."""
    from goldgate.model.baseline_io import parse_baseline

    baseline = parse_baseline(text, str(path))
    suites: dict[str, SuiteSide] = {}
    for suite_name, suite in baseline.suites.items():
        if only and suite_name not in only:
            continue
        ids = suite.example_ids()
        metrics: dict[str, tuple[Metric[Any], str, Statistics]] = {}
        for spec, blessed in suite.metrics.items():
            why = ""
            try:
                metric = _rebuilt_metric(config, suite_name, spec)
                stats = suite.compact_stats(spec, ids)
                rebuilt = str(metric.signature([1]))
                if _unversioned(rebuilt) != _unversioned(blessed.signature):
                    why = "its options are not the defaults: pass the configuration with -c"
                elif not _same_score(sample_score(metric, stats), blessed.score):
                    why = "its blessed score does not follow from its statistics"
                else:
                    metrics[spec] = (metric, blessed.signature, stats)
            except GoldgateError as exc:
                why = f"cannot be rebuilt here: {exc}"
            if why:
                notes.append(f"{path}: suite {suite_name!r}, metric {spec!r}: {why}")
        suites[suite_name] = SuiteSide(suite.golden_hash, ids, metrics, suite.blessed_outputs())
    return SystemSide(name, str(path), suites)


def run_config_system(
    config: Config, name: str, progress: Any = None, only: Sequence[str] | None = None
) -> SystemSide:
    """A system of the configuration's ``systems:`` run on every suite (of ``only``, when
    given), its outputs cached as a run's are."""
    from goldgate.pipeline.score import score_suite

    system = config.systems[name]
    suites = {
        suite_name: suite.model_copy(update={"system": None})
        for suite_name, suite in config.suites.items()
    }
    variant = config.model_copy(update={"system": system, "suites": suites})
    sides: dict[str, SuiteSide] = {}
    for suite_name in config.suites:
        if only and suite_name not in only:
            continue
        scored = score_suite(variant, suite_name, progress=progress)
        sides[suite_name] = SuiteSide(
            golden_hash=scored.golden.content_hash,
            ids=list(scored.scores.ids),
            metrics={
                item.spec: (item.metric, item.signature, item.stats)
                for item in scored.scores.metrics
            },
            outputs=scored.outputs.get,
            records={
                record.id: (record.input, list(record.references))
                for record in scored.golden.records
            },
        )
    return SystemSide(name, f"systems.{name}", sides)


def compare_sides(
    sides: Sequence[SystemSide],
    settings: Settings,
    notes: list[str],
    only: Sequence[str] | None = None,
) -> Comparison:
    """The matrices of every suite all systems hold (of ``only``, when given), on the metrics
    they all score alike."""
    names = [side.name for side in sides]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise UsageError(f"a system is named twice: {', '.join(twice)}; give each a NAME=")
    first = sides[0]
    if only:
        unknown = [name for name in only if not any(name in side.suites for side in sides)]
        if unknown:
            raise UsageError(f"no suite {', '.join(map(repr, unknown))} in the systems compared")
    suites: list[SuiteMatrix] = []
    for suite in first.suites:
        if only and suite not in only:
            continue
        missing = [side for side in sides if suite not in side.suites]
        if missing:
            notes.append(
                f"suite {suite!r} is not in {', '.join(s.source for s in missing)}: left out"
            )
            continue
        views = [side.suites[suite] for side in sides]
        for side, view in zip(sides, views, strict=True):
            if view.golden_hash != views[0].golden_hash:
                raise InputError(
                    f"{side.source}: suite {suite!r} was run on another golden set"
                    f" ({view.golden_hash[:19]}) than {first.source}"
                    f" ({views[0].golden_hash[:19]}): compare systems on the same golden sets"
                )
        suites.append(_suite_matrix(suite, sides, views, settings, notes))
    for side in sides[1:]:
        for suite in side.suites:
            if suite not in first.suites and (not only or suite in only):
                notes.append(f"suite {suite!r} is not in {first.source}: left out")
    if not suites:
        raise InputError("the systems share no suite: nothing to compare")
    return Comparison([(s.name, s.source) for s in sides], settings, suites, notes)


def _suite_matrix(
    suite: str,
    sides: Sequence[SystemSide],
    views: Sequence[SuiteSide],
    settings: Settings,
    notes: list[str],
) -> SuiteMatrix:
    # The examples all share, in id order: the order the gate resamples them in.
    shared = sorted(set(views[0].ids).intersection(*(set(v.ids) for v in views[1:])))
    if not shared:
        raise InputError(f"suite {suite!r}: the systems share no example")
    aligned: list[Any] = []
    # each side's positions of the shared ids, in id order
    positions = []
    for view in views:
        position = {example_id: at for at, example_id in enumerate(view.ids)}
        positions.append(
            np.fromiter((position[i] for i in shared), dtype=np.intp, count=len(shared))
        )
    for spec, (metric, signature, _) in views[0].metrics.items():
        absent = [s.source for s, v in zip(sides, views, strict=True) if spec not in v.metrics]
        if absent:
            notes.append(f"suite {suite!r}, metric {spec!r}: not comparable in {', '.join(absent)}")
            continue
        others = {_unversioned(v.metrics[spec][1]) for v in views}
        if len(others) > 1:
            notes.append(f"suite {suite!r}, metric {spec!r}: the signatures differ: left out")
            continue
        per_side = [
            Side(side.name, take(view.metrics[spec][2], at))
            for side, view, at in zip(sides, views, positions, strict=True)
        ]
        aligned.append((spec, metric, signature, per_side))
    matrices = compare_systems(aligned, settings)
    examples: dict[tuple[str, str, str], list[DifferingExample]] = {}
    for matrix, (spec, metric, _, per_side) in zip(matrices, aligned, strict=True):
        scores = {side.system: example_scores(metric, side.stats) for side in per_side}
        for pair in matrix.pairs:
            examples[(spec, pair.a, pair.b)] = _differing(
                shared, views, [s.name for s in sides], pair.a, pair.b, scores
            )
    return SuiteMatrix(suite, views[0].golden_hash, len(shared), matrices, examples)


def _differing(
    shared: Sequence[str],
    views: Sequence[SuiteSide],
    names: Sequence[str],
    a: str,
    b: str,
    scores: Mapping[str, Any],
) -> list[DifferingExample]:
    """The examples ``a`` and ``b`` score furthest apart, largest first (ties by id),
    whichever of the two is better on them."""
    difference = np.abs(scores[b] - scores[a])
    apart = np.flatnonzero(difference > 0)  # NaN (no score) is never apart
    # largest first; ties in id order, which is the shared ids' own order
    order = apart[np.lexsort((apart, -difference[apart]))][:EXAMPLES_PER_PAIR].tolist()
    view_a, view_b = views[names.index(a)], views[names.index(b)]
    found = []
    for at in order:
        example_id = shared[at]
        record = next((v.records[example_id] for v in views if example_id in v.records), None)
        given, references = record if record is not None else (None, [])
        found.append(
            DifferingExample(
                id=example_id,
                input=_text(given),
                references=[_text(r) for r in references],
                output_a=_first(view_a.outputs(example_id)),
                output_b=_first(view_b.outputs(example_id)),
                score_a=float(scores[a][at]),
                score_b=float(scores[b][at]),
            )
        )
    return found


def _first(outputs: Sequence[str] | None) -> str:
    """The first output (of several samples) for the report, or nothing."""
    return _text(outputs[0]) if outputs else ""


def _text(value: Any) -> str:
    """A text of an example for the report: a string as is, anything else as JSON, clipped."""
    import json

    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + "\u2026"
