"""The score stage: a suite's golden set and outputs → every metric's statistics."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from goldgate.errors import (
    GoldgateError,
    MetricError,
    SystemRunError,
    describe_exception,
    where_raised,
)
from goldgate.execution import pool as parallel
from goldgate.execution.backend import Backend, SuiteScoring
from goldgate.execution.memory import release_free_memory
from goldgate.execution.pool import compact_parts
from goldgate.execution.registry import backend_for, select_backend
from goldgate.gate.rules import (
    MetricScores,
    SuiteScores,
    components_of,
    sample_scores,
)
from goldgate.gate.stats import FloatArray, sample_score
from goldgate.metrics.batch import BatchMetric, MetricContext
from goldgate.metrics.budget import BudgetExceeded
from goldgate.metrics.engine import MetricComputeError, score_corpus
from goldgate.model.compact_stats import CompactStats, as_float, stacked_samples
from goldgate.model.config import Config
from goldgate.model.golden_records import record_references, record_tags
from goldgate.model.goldens import GoldenSet
from goldgate.model.result import (
    CacheUse,
)
from goldgate.pipeline.plan import load_suite_goldens, own_files, relative_path
from goldgate.systems.cache import keep_for_resume
from goldgate.terminal.progress import ProgressReporter


@dataclass(frozen=True)
class ScoredSuite:
    """A suite after its system ran and its metrics were computed."""

    golden: GoldenSet
    outputs: dict[str, list[str]]
    scores: SuiteScores
    #: metric spec → a note per example (a judge's rationale on the first sample's output)
    notes: dict[str, tuple[str | None, ...]] = field(default_factory=dict)
    #: outputs reused (from the cache, a saved result or the baseline), or cached ones dropped
    cache: CacheUse | None = None
    #: digest of the system's identity when a command or callable ran (see systems)
    identity: str | None = None
    #: a warning naming the predictions left out: ids the golden set does not have
    ignored: str | None = None

    @property
    def samples(self) -> int:
        """Outputs per input."""
        return self.scores.metrics[0].stats.shape[0] if self.scores.metrics else 1


def score_suite(
    config: Config,
    name: str,
    *,
    progress: ProgressReporter | None = None,
    known: Mapping[str, Sequence[str]] | None = None,
    known_source: str = "result",
    known_since: str | None = None,
    identity: str | None = None,
) -> ScoredSuite:
    """Load a suite's golden set, obtain the system's outputs and compute every metric.

    ``known`` (id → outputs) are outputs already in hand, from the baseline or the run just
    reviewed: the system is called only for the other examples. A predictions file is read
    whole, since reading it costs nothing. The configured backend scores, makes a callable
    system's calls, and may score the suite itself where its files are (many files on a
    cluster).
    """
    from goldgate.systems.obtain import collect_outputs

    system = config.system_for(name)
    backend = backend_for(config.engine)
    if backend.partitioned(config, name):
        scoring = _suite_scoring(config, name, backend)
        return backend.score_partitioned(config, name, scoring, progress)
    golden = load_suite_goldens(config, name)
    release_free_memory()  # the file's text, parsed and let go
    outputs: dict[str, list[str]] = {}
    if known and system.kind != "predictions":
        outputs = {
            example_id: list(known[example_id])
            for example_id in golden.ids()
            if len(known.get(example_id, ())) == system.samples
        }
    reused = len(outputs) * system.samples
    # the records still without outputs: all of them (the set itself) unless some are known
    missing = golden
    if outputs:
        ids = golden.ids()
        kept = tuple(golden.records[at] for at in range(len(ids)) if ids[at] not in outputs)
        missing = replace(golden, records=kept)
    cache: CacheUse | None = None
    ignored: str | None = None
    if reused:
        cache = CacheUse(
            reused=reused,
            total=len(golden) * system.samples,
            source=known_source,
            since=known_since,
        )
    if missing.records:
        obtained = collect_outputs(
            system,
            missing,
            root=config.root,
            cache_dir=config.cache_dir,
            progress=progress,
            ignore=own_files(config),
            backend=backend,
        )
        outputs.update(obtained.outputs)
        identity = obtained.identity
        ignored = obtained.ignored
        if obtained.resumed or obtained.stale is not None:
            cache = CacheUse(
                reused=obtained.resumed,
                total=len(golden) * system.samples,
                source="cache",
                since=obtained.since,
                path=relative_path(obtained.cache_path, config.root)
                if obtained.cache_path
                else None,
                dropped=obtained.stale.outputs if obtained.stale else 0,
                dropped_reason=obtained.stale.reason if obtained.stale else None,
            )
    release_free_memory()  # what reading the outputs held besides them
    try:
        scored = score_outputs(
            name,
            golden,
            outputs,
            create_suite_metrics(config, name),
            context=metric_context(config),
            backend=backend,
        )
    except BudgetExceeded:
        # The outputs were paid for but not scored: the next run resumes them (a finished
        # cache in resume mode would be asked again from the system).
        if missing.records and system.cache == "resume" and identity is not None:
            keep_for_resume(config.cache_dir, name, identity)
        raise
    release_free_memory()  # the chunks' texts and statistics, compacted and let go
    return replace(scored, cache=cache, identity=identity, ignored=ignored)


def _suite_scoring(config: Config, name: str, backend: Backend) -> SuiteScoring[ScoredSuite]:
    """How a backend that scores a suite where its files are makes a scored suite of it."""
    return SuiteScoring(
        metrics=lambda: create_suite_metrics(config, name),
        from_outputs=lambda golden, outputs, metrics: score_outputs(
            name, golden, outputs, metrics, context=metric_context(config), backend=backend
        ),
        from_arrays=lambda golden, outputs, pairs, per_sample: scored_from_arrays(
            name, golden, outputs, pairs, per_sample
        ),
    )


def metric_context(config: Config) -> MetricContext:
    """Where metrics with state (models, judges) resolve paths and keep their caches."""
    return MetricContext(root=config.root, cache_dir=config.cache_dir)


def create_suite_metrics(config: Config, name: str) -> dict[str, Any]:
    """A suite's metrics, those with state bound to the configuration's context."""
    metrics = config.suites[name].create_metrics()
    context = metric_context(config)
    for metric in metrics.values():
        if isinstance(metric, BatchMetric):
            metric.bind(context)
    return metrics


def score_outputs(
    name: str,
    golden: GoldenSet,
    outputs: dict[str, list[str]],
    metrics: dict[str, Any],
    *,
    context: MetricContext | None = None,
    backend: Backend | None = None,
) -> ScoredSuite:
    """Score given outputs (id → one output per sample) of a golden set with ``metrics``.

    ``backend`` scores chunks of the set (None: a pool of every core on large sets, else this
    process); the statistics do not depend on it.
    """
    ids = golden.ids()
    samples = _sample_count(name, ids, outputs)
    pairs = list(metrics.items())
    chunk_scorer = backend or select_backend()
    # Batch metrics need inputs, ids and context: they are scored in one pass here.
    in_one_pass = any(isinstance(metric, BatchMetric) for _, metric in pairs)
    per_sample: list[list[FloatArray] | list[CompactStats]] = []
    notes: dict[str, Any] = {}
    for s in range(samples):
        try:
            if in_one_pass:
                candidates = [outputs[example_id][s] for example_id in ids]
                references = [list(record.references) for record in golden.records]
                inputs = [record.input for record in golden.records]
                results = score_corpus(
                    pairs,
                    candidates,
                    references,
                    inputs=inputs,
                    ids=ids,
                    sample=s,
                    context=context,
                )
                per_sample.append(
                    [
                        np.asarray(result.stats, dtype=np.float64).reshape(
                            len(ids), len(metric.stat_names) or len(result.stats[0])
                        )
                        for (_, metric), result in zip(pairs, results, strict=True)
                    ]
                )
                if s == 0:
                    notes = {r.spec: r.notes for r in results if r.notes is not None}
            else:
                chunks = _text_chunks(golden, outputs, s, parallel.DEFAULT_CHUNK_SIZE)
                parts = chunk_scorer.score_chunks(pairs, chunks, len(ids))
                per_sample.append(compact_parts(pairs, parts, len(ids)))
        except MetricComputeError as exc:
            sample = f", sample {s}" if samples > 1 else ""
            raise exc.naming(f"suite {name!r}, id {ids[exc.index]!r}{sample}") from None
    return scored_from_arrays(name, golden, outputs, pairs, per_sample, notes)


def scored_from_arrays(
    name: str,
    golden: GoldenSet,
    outputs: dict[str, list[str]],
    pairs: Sequence[tuple[str, Any]],
    per_sample: Sequence[Sequence[FloatArray] | Sequence[CompactStats]],
    notes: dict[str, Any] | None = None,
) -> ScoredSuite:
    """A scored suite from per-example statistics (per sample, per metric) already computed:
    an ``(n, k)`` float64 array, or ``(1, n, k)`` compact statistics, per sample and metric."""
    ids = golden.ids()
    samples = len(per_sample)
    counts = golden.reference_counts()
    scored_metrics = []
    for position, (spec, metric) in enumerate(pairs):
        # held compact for the rest of the run: the largest per-example holder of memory
        stats = _compact([per_sample[s][position] for s in range(samples)])
        signature = str(metric.signature(counts))
        if not type(metric).__module__.startswith("goldgate."):
            _check_plugin_scores(name, spec, metric, as_float(stats), ids)
        scored_metrics.append(MetricScores(spec, metric, signature, stats))
    return ScoredSuite(
        golden=golden,
        outputs=outputs,
        scores=SuiteScores(
            name=name,
            ids=tuple(ids),
            tags=tuple(record_tags(golden.records)),
            metrics=tuple(scored_metrics),
        ),
        notes=notes or {},
    )


def _compact(per_sample: Sequence[FloatArray | CompactStats]) -> CompactStats:
    """One metric's ``(samples, n, k)`` compact statistics from each sample's."""
    if all(isinstance(stats, CompactStats) for stats in per_sample):
        return stacked_samples([s for s in per_sample if isinstance(s, CompactStats)])
    arrays = [as_float(s)[0] if isinstance(s, CompactStats) else s for s in per_sample]
    return CompactStats.of(np.stack(arrays))


def _text_chunks(
    golden: GoldenSet, outputs: Mapping[str, Sequence[str]], sample: int, size: int
) -> Iterator[tuple[list[str], list[list[str]]]]:
    """The candidates of one sample index and their references, ``size`` examples at a time.

    Built as the scoring consumes them: lists of every candidate and every reference list
    of a million-example set are never held at once.
    """
    ids = golden.ids()
    for start in range(0, len(ids), size):
        candidates = [outputs[example_id][sample] for example_id in ids[start : start + size]]
        yield candidates, record_references(golden.records, start, start + size)


def _check_plugin_scores(
    name: str, spec: str, metric: Any, stats: FloatArray, ids: Sequence[str]
) -> None:
    """A plugin's ``score_stats``, ``components`` and ``example_score`` run once here, where a
    mistake can be named: an exception or a NaN later, in the gate or a report, would read as
    goldgate's own crash."""
    where = f"suite {name!r}, metric {spec!r}"
    try:
        score = sample_score(metric, stats)
        components_of(metric, stats)  # the reports and the baseline call it
        worst = None
        for sample in stats:  # every example's score at once, as the gate asks for them
            values = sample_scores(metric, sample)
            bad = np.flatnonzero(~np.isfinite(values))
            if bad.size:
                worst = (ids[int(bad[0])], float(values[bad[0]]))
                break
    except MetricError as exc:  # an array of the wrong shape, say: named where it was found
        raise MetricError(f"{where}: {exc}") from None
    except GoldgateError:
        raise
    except Exception as exc:  # a plugin may raise anything
        raise MetricError(f"{where}: raised {describe_exception(exc)}{where_raised(exc)}") from exc
    if not math.isfinite(score):
        raise MetricError(f"{where}: its corpus score is {score!r}, not a finite number")
    if worst is not None:
        raise MetricError(
            f"{where}: its score of id {worst[0]!r} is {worst[1]!r}, not a finite number"
        )


def _sample_count(name: str, ids: Sequence[str], outputs: dict[str, list[str]]) -> int:
    counts = set()
    for example_id in ids:
        got = outputs.get(example_id)
        if not got:
            raise SystemRunError(f"suite {name!r}: no output for example {example_id!r}")
        if not all(isinstance(text, str) for text in got):
            raise SystemRunError(f"suite {name!r}: an output of {example_id!r} is not text")
        counts.add(len(got))
    if len(counts) > 1:
        raise SystemRunError(
            f"suite {name!r}: examples have different numbers of samples ({sorted(counts)})"
        )
    return counts.pop() if counts else 1
