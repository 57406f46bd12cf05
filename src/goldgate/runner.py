"""The one orchestration every face calls: config → goldens → outputs → scores → verdict.

``run`` scores every suite, compares it with the baseline and returns the whole
:class:`~goldgate.model.result.RunResult`; ``bless`` writes the baseline from a fresh scoring;
``check`` validates configuration, golden sets and baseline without running the system.
The library never prints or exits: problems are typed :class:`~goldgate.errors.GoldgateError`
exceptions, or, when they concern one suite of a run, that suite's ``error`` and the
``error`` verdict.

Systems that return several samples per input (``samples > 1``) are scored one sample index
at a time, each as its own candidate set, and the scores are averaged; per-example scores
are averaged the same way, and components are computed from statistics pooled over samples.
"""

from __future__ import annotations

import glob
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from goldgate._version import __version__
from goldgate.errors import (
    BaselineError,
    GoldgateError,
    MetricError,
    SystemRunError,
    UsageError,
    describe_exception,
    where_raised,
)
from goldgate.execution import pool as parallel
from goldgate.execution.memory import release_free_memory
from goldgate.execution.pool import resolve_jobs, score_chunks_compact
from goldgate.gate.drift import Anchors, drift_checks
from goldgate.gate.golden_change import (
    change_since,
    describe,
    describe_against,
    removed_check,
    with_blessed_outputs,
)
from goldgate.gate.rules import (
    MetricScores,
    SuiteEvaluation,
    SuiteScores,
    combine_verdicts,
    components_of,
    evaluate_suite,
    sample_scores,
    verdict_of,
)
from goldgate.gate.stats import FloatArray, sample_score
from goldgate.io.atomic import locked
from goldgate.metrics.batch import BatchMetric, MetricContext
from goldgate.metrics.engine import MetricComputeError, score_corpus
from goldgate.model.baseline import (
    Baseline,
    BaselineMetric,
    BlessedOutputs,
    SuiteBaseline,
    blessed_nrefs,
    packs,
    strip_nrefs,
)
from goldgate.model.baseline_io import read_baseline, read_baseline_at_ref, write_baseline
from goldgate.model.baseline_verify import verify_scores, verify_suite
from goldgate.model.compact_stats import CompactStats, as_float, stacked_samples
from goldgate.model.config import Config, DaskConfig
from goldgate.model.example_table import ExampleColumns
from goldgate.model.golden_formats import golden_format
from goldgate.model.golden_index import FileComparison, compare_records, file_chunks
from goldgate.model.golden_records import record_references, record_tags
from goldgate.model.goldens import GoldenSet, golden_file_hash, is_dataset, load_goldens
from goldgate.model.packed import PackError
from goldgate.model.result import (
    CacheUse,
    CheckStatus,
    GoldenChange,
    MetricCalls,
    MetricSummary,
    RunResult,
    SignificanceSettings,
    SuiteResult,
    Verdict,
)
from goldgate.terminal.progress import ProgressReporter

RESULT_FILENAME = "result.json"


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


# -- the public entry points ------------------------------------------------------------------


def run(
    config: Config,
    *,
    baseline_ref: str | None = None,
    progress: ProgressReporter | None = None,
    write_reports: bool = True,
    suites: Sequence[str] | None = None,
    report_formats: Sequence[str] | None = None,
    history_source: str | None = "run",
    anchor_ref: str | None = None,
) -> RunResult:
    """Score every suite, gate it against thresholds and the baseline, write the result.

    ``baseline_ref`` reads the baseline as it is at that git revision (in a pull request,
    the merge base), so a change to the baseline file itself is not compared with itself;
    ``"working-tree"`` (or None) reads the file as it is on disk.
    With ``write_reports``, ``<report.dir>/result.json`` and the configured report formats
    are written. Unless ``history_source`` is None (or the configuration says
    ``history: off``), the run is appended to the history, labelled with that source; a
    history that cannot be written is a hint in the result, never a failure.
    ``anchor_ref`` overrides the configured anchor of the ``max_drift`` rules.
    """
    names = select_suites(config, suites)
    baseline, baseline_label = _load_baseline(config, baseline_ref)
    anchors = _anchors(config, anchor_ref)
    results: list[SuiteResult] = []
    hints: list[str] = []
    errors: list[str] = []
    baseline_found = baseline is not None
    # each suite's blessed outputs (ids and one packed block), not the rest of its baseline
    outputs_of: dict[str, Callable[[str], Sequence[str] | None]] = {}
    for name in names:
        try:
            suite_result, suite_hints = _score_and_gate(
                config, name, baseline, baseline_label, anchors, progress
            )
            hints += suite_hints
            # (no name left bound to the suite's baseline: its statistics go with ``baseline``)
            if baseline is not None and name in baseline.suites:
                outputs_of[name] = baseline.suites[name].blessed_outputs()
        except GoldgateError as exc:
            errors.append(str(exc))
            suite_result = failed_suite(config, name, str(exc))
        results.append(suite_result)
        release_free_memory()  # the suite's statistics and texts are gone: give the pages back
    # What the results need of the baseline they hold; the rest (at a million examples,
    # hundreds of MB of statistics) is let go before the history and the reports are written.
    del baseline
    release_free_memory()
    # Only now are the blessed outputs of edited and removed examples decoded (a packed
    # suite's whole block): not on top of the statistics of both sides.
    for index, suite_result in enumerate(results):
        change = suite_result.golden_change
        if change is not None and suite_result.name in outputs_of:
            blessed_outputs = outputs_of[suite_result.name]
            filled = with_blessed_outputs(change, blessed_outputs)
            results[index] = suite_result.model_copy(update={"golden_change": filled})
            if isinstance(blessed_outputs, BlessedOutputs):
                blessed_outputs.release()

    add_trends(config, results)
    if not baseline_found:
        hints.insert(
            0,
            f"no baseline at {baseline_label}: only min/max gates were checked; run"
            " `goldgate bless` to accept these scores as the baseline",
        )
    result = _run_result(config, results, baseline_label, baseline_found, hints, errors)
    if history_source is not None:
        from goldgate.history.recording import record_run

        result.hints.extend(record_run(result, config, source=history_source))
        release_free_memory()
    if write_reports:
        formats = list(config.report.formats) if report_formats is None else list(report_formats)
        examples = sum(suite.n_examples for suite in results)
        threads = resolve_jobs(config.engine.jobs, examples)
        write_result(result, config.report.dir, formats, threads=threads)
    return result


def _score_and_gate(
    config: Config,
    name: str,
    baseline: Baseline | None,
    baseline_label: str,
    anchors: Anchors | None,
    progress: ProgressReporter | None,
) -> tuple[SuiteResult, list[str]]:
    """One suite scored and gated; its statistics are let go on return (the result keeps
    what the reports need)."""
    scored = score_suite(config, name, progress=progress)
    suite_baseline = baseline.suites.get(name) if baseline is not None else None
    return _gate_suite(
        config,
        name,
        scored,
        suite_baseline,
        baseline_label,
        baseline is not None,
        anchors,
        fill_outputs=False,
    )


def _run_result(
    config: Config,
    results: list[SuiteResult],
    baseline_label: str,
    baseline_found: bool,
    hints: list[str],
    errors: list[str],
) -> RunResult:
    significance = config.significance
    return RunResult(
        goldgate_version=__version__,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        verdict=combine_verdicts([suite.verdict for suite in results]),
        config=_relative(config.source, config.root) if config.source else None,
        baseline=baseline_label,
        baseline_found=baseline_found,
        significance=(
            SignificanceSettings(
                method=significance.method,
                resamples=significance.resamples,
                alpha=significance.alpha,
                seed=significance.seed,
            )
            if significance is not None
            else None
        ),
        suites=results,
        hints=hints,
        errors=errors,
    )


def bless(
    config: Config,
    *,
    new_only: bool = False,
    progress: ProgressReporter | None = None,
    suites: Sequence[str] | None = None,
) -> Path:
    """Score the suites and write the baseline from today's outputs; returns its path.

    ``new_only`` keeps what is blessed and adds only examples new to the golden set (and
    metrics new to a suite). Suites not selected keep their blessed entries. A regression
    is accepted, and recorded in the baseline as forced; :func:`bless_reviewed` refuses it.
    """
    outcome = bless_reviewed(
        config,
        new_only=new_only,
        progress=progress,
        suites=suites,
        allow_regression=True,
        rerun=True,
    )
    return outcome.path


@dataclass(frozen=True)
class BlessOutcome:
    """What a bless decided: the new scores against the old baseline, and whether it wrote."""

    path: Path
    #: the new scores gated against the baseline being replaced (the table ``run`` shows;
    #: its suites hold no per-example rows)
    review: RunResult
    written: bool
    #: suite -> messages of the checks that failed (accepted only with allow_regression)
    failed: dict[str, list[str]]


def bless_reviewed(
    config: Config,
    *,
    new_only: bool = False,
    progress: ProgressReporter | None = None,
    suites: Sequence[str] | None = None,
    allow_regression: bool = False,
    rerun: bool = False,
) -> BlessOutcome:
    """Score the suites, gate them against the current baseline, and write it unless refused.

    A failed check (a regression beyond the gate, a ``min`` missed) refuses the bless, unless
    ``allow_regression``: then the failed checks are recorded in the suite's ``forced`` entry,
    so the baseline's diff shows it. Unless ``rerun``, the outputs of the run just reviewed
    (``result.json`` in the report directory) are reused when its golden hash, system
    identity (code fingerprint included) and metric signatures match: a paid model is not
    called twice for the same outputs.
    """
    names = select_suites(config, suites)
    label = _relative(config.baseline, config.root)
    current: Baseline | None = None
    if config.baseline.exists():
        try:
            current = read_baseline(config.baseline)  # damage stops before any system call
        except BaselineError:
            # A full bless of every suite keeps nothing of the old file: it may replace a
            # damaged one (with nothing to compare against).
            if new_only or suites is not None:
                raise
    # Only a system that costs something to call reuses the reviewed run's outputs: for a
    # predictions file the saved result (a million example rows) would be read for nothing.
    reusing = not rerun and any(config.system_for(n).kind != "predictions" for n in names)
    reviewed = _reviewed_result(config) if reusing else None
    scored: dict[str, ScoredSuite] = {}
    results: list[SuiteResult] = []
    failed: dict[str, list[str]] = {}
    for name in names:
        kept = current.suites.get(name) if current is not None and new_only else None
        if kept is not None:
            scored[name] = score_suite(
                config,
                name,
                progress=progress,
                known=_kept_outputs(config, name, kept),
                known_source="baseline",
            )
        else:
            scored[name] = _score_reusing(config, name, reviewed, progress)
        previous = current.suites.get(name) if current is not None else None
        # The review is a table of scores and checks: no per-example rows are built for it.
        try:
            suite_result, _ = _gate_suite(
                config, name, scored[name], previous, label, current is not None, examples=False
            )
        except BaselineError:  # other metric settings: being accepted, nothing to compare
            suite_result, _ = _gate_suite(
                config, name, scored[name], None, label, False, examples=False
            )
        results.append(suite_result)
        messages = [c.message for c in suite_result.checks if c.status is CheckStatus.FAIL]
        if messages:
            failed[name] = messages
    review = _run_result(config, results, label, current is not None, [], [])
    if failed and not allow_regression:
        return BlessOutcome(config.baseline, review, written=False, failed=failed)
    # The read-modify-write under the baseline's lock, the file read afresh: a bless of
    # another suite running at the same time lands either before (and is kept) or after (and
    # keeps ours). The scoring above stays outside the lock.
    with locked(config.baseline.parent):
        existing: Baseline | None = None
        # A full bless of every suite keeps nothing of the old file: it may replace a damaged one.
        if config.baseline.exists() and (new_only or suites is not None):
            existing = read_baseline(config.baseline)
        blessed: dict[str, SuiteBaseline] = {}
        if existing is not None:
            blessed.update(
                (name, suite) for name, suite in existing.suites.items() if name in config.suites
            )
        for name in names:
            fresh = suite_baseline(config, scored[name])
            old = existing.suites.get(name) if existing is not None and new_only else None
            blessed[name] = fresh if old is None else merge_new_only(old, fresh, scored[name], name)
            if name in failed:
                blessed[name] = blessed[name].model_copy(update={"forced": failed[name]})
        baseline = Baseline(
            goldgate_version=__version__,
            suites={name: blessed[name] for name in config.suites if name in blessed},
        )
        write_baseline(config.baseline, baseline)
    return BlessOutcome(config.baseline, review, written=True, failed=failed)


def _reviewed_result(config: Config) -> RunResult | None:
    """The last result written to the report directory, when there is a readable one."""
    path = config.report.dir / RESULT_FILENAME
    if not path.is_file():
        return None
    try:
        return RunResult.from_json_file(path)
    except GoldgateError:
        return None


def _score_reusing(
    config: Config, name: str, reviewed: RunResult | None, progress: ProgressReporter | None
) -> ScoredSuite:
    """Score a suite for bless, with the reviewed run's outputs when they stand for today's."""
    from goldgate.systems.cache import identity_digest
    from goldgate.systems.obtain import system_identity

    system = config.system_for(name)
    previous = next((s for s in (reviewed.suites if reviewed else []) if s.name == name), None)
    if previous is None or previous.system is None or system.kind == "predictions":
        return score_suite(config, name, progress=progress)
    suite = config.suites[name]
    golden = load_suite_goldens(config, name)
    counts = golden.reference_counts()
    signatures = {
        spec: str(metric.signature(counts)) for spec, metric in suite.create_metrics().items()
    }
    outputs = {example.id: [example.output] for example in previous.examples}
    _, identity = system_identity(system, root=config.root, ignore=_own_files(config))
    digest = identity_digest(identity)
    if (
        previous.error is None
        and system.samples == 1
        and previous.golden_hash == golden.content_hash
        and previous.system == digest
        and {m.metric: m.signature for m in previous.metrics} == signatures
        and len(outputs) == len(golden)
        and all(example_id in outputs for example_id in golden.ids())
    ):
        assert reviewed is not None  # previous came from it
        return score_suite(
            config,
            name,
            progress=progress,
            known=outputs,
            known_source="result",
            known_since=reviewed.created_at,
            identity=digest,
        )
    return score_suite(config, name, progress=progress)


@dataclass(frozen=True)
class SuiteCheck:
    """What ``check`` found for one suite."""

    suite: str
    n_examples: int
    #: the golden set's content hash; None when ``check`` counted a change from the region of
    #: the file that changed, without reading every record (see golden_file_index)
    golden_hash: str | None
    #: None when the suite agrees with the baseline (or has none yet); else the problem
    error: str | None = None
    in_baseline: bool = False
    #: how the golden set changed since the baseline, when it did (compared on the shared part)
    note: str | None = None
    #: configured metrics the baseline has no score of yet (nothing to compare them with)
    unblessed: tuple[str, ...] = ()


def check(config: Config, *, baseline_ref: str | None = None) -> list[SuiteCheck]:
    """Validate golden sets and the baseline against the configuration, running no system."""
    baseline, label = _load_baseline(config, baseline_ref)
    found: list[SuiteCheck] = []
    for name in config.suites:
        blessed = baseline.suites.get(name) if baseline is not None else None
        try:
            if blessed is not None:
                _check_outputs(blessed, name, label)
            unblessed = (
                tuple(spec for spec in config.suites[name].metrics if spec not in blessed.metrics)
                if blessed is not None
                else ()
            )
            quick = _check_by_index(config, name, blessed, label)
            if quick is not None:
                found.append(replace(quick, unblessed=unblessed))
                continue
            golden = load_suite_goldens(config, name)
            metrics = create_suite_metrics(config, name)
            counts = golden.reference_counts()
            signatures = {spec: str(metric.signature(counts)) for spec, metric in metrics.items()}
            note = None
            if blessed is not None:
                if (
                    blessed.golden_hash != golden.content_hash
                    and config.on_golden_change == "compare"
                ):
                    note = describe_against(
                        blessed,
                        digests=_digests(golden),
                        signatures=signatures,
                        suite=name,
                        source=label,
                    )
                else:
                    verify_suite(
                        blessed,
                        suite=name,
                        golden_hash=golden.content_hash,
                        signatures=signatures,
                        source=label,
                        digests=_digests(golden),
                    )
                # the blessed scores must follow from the blessed statistics
                verify_scores(blessed, metrics, signatures=signatures, suite=name, source=label)
            found.append(
                SuiteCheck(
                    name,
                    len(golden),
                    golden.content_hash,
                    None,
                    blessed is not None,
                    note,
                    unblessed,
                )
            )
        except GoldgateError as exc:
            found.append(SuiteCheck(name, 0, "", str(exc)))
    return found


def _check_outputs(blessed: SuiteBaseline, name: str, label: str) -> None:
    """Refuse a packed suite's outputs block of the wrong number of examples or samples, as
    a run's reports do when they decode it."""
    try:
        blessed.check_outputs()
    except PackError as exc:
        raise BaselineError(
            f"{label}: damaged baseline: suite {name!r}: {exc}; restore it from git or run"
            " `goldgate bless` again"
        ) from None


def _check_by_index(
    config: Config, name: str, blessed: SuiteBaseline | None, label: str
) -> SuiteCheck | None:
    """``check`` of a packed suite from the blessed golden set file's hash and index, reading
    at most the region of the file that changed; None when they do not settle it and every
    record must be read.

    The same bytes read by the same rules are the same records: the blessed signatures carry
    goldgate's version, so a baseline of another version (other rules) fails as it would.
    Only a packed suite is taken on trust: its ids and digests were checked against their
    blocks' SHA-256 when the baseline was read, where an edited digest of an unpacked suite
    would only show against the records (and an unpacked suite is small enough to read).
    """
    location = config.suites[name].goldens_location
    if (
        blessed is None
        or blessed.packed is None
        or blessed.golden_file_hash is None
        # the file hash and index are trusted only when bound to the packed blocks (checked
        # as the baseline was read): a baseline merged hunk by hunk from two blesses could
        # pair one bless's hash with another's examples. Older baselines read the records.
        or blessed.binding is None
        or is_dataset(location)
    ):
        return None
    nrefs = blessed_nrefs(blessed)
    path = config.suites[name].goldens
    if nrefs is None:
        return None
    # The same bytes are the same records only when read by the same reader: a file renamed
    # from .jsonl to .csv (or .json) holds other records, or none, in the blessed bytes.
    reader = golden_format(path.name)
    if reader is None or reader != golden_format(blessed.goldens):
        return None
    if golden_file_hash(path) == blessed.golden_file_hash:
        return _check_unchanged(config, name, blessed, nrefs, label)
    chunks = blessed.golden_file_chunks
    compared = compare_records(path, chunks) if chunks is not None else None
    if compared is None:
        return None
    if compared.same:
        return _check_unchanged(config, name, blessed, nrefs, label)
    if config.on_golden_change != "compare":  # the error names the new content hash
        return None
    return _check_edited(config, name, blessed, nrefs, compared, label)


def _check_unchanged(
    config: Config, name: str, blessed: SuiteBaseline, nrefs: str, label: str
) -> SuiteCheck:
    """``check`` of a suite whose golden set file holds the blessed records: the metrics'
    signatures and the blessed scores are checked, the records need not be read."""
    metrics = create_suite_metrics(config, name)
    signatures = {spec: str(metric.signature(nrefs=nrefs)) for spec, metric in metrics.items()}
    verify_suite(
        blessed, suite=name, golden_hash=blessed.golden_hash, signatures=signatures, source=label
    )
    verify_scores(blessed, metrics, signatures=signatures, suite=name, source=label)
    return SuiteCheck(name, blessed.n_examples, blessed.golden_hash, None, True)


def _check_edited(
    config: Config,
    name: str,
    blessed: SuiteBaseline,
    nrefs: str,
    compared: FileComparison,
    label: str,
) -> SuiteCheck | None:
    """``check`` of a suite whose golden set file changed in one region: its records and the
    blessed digests of the pieces found around it tell what was added, edited and removed,
    as reading every record would (None when they cannot: an id twice, say, or the region
    holds the examples it replaced, where only the content hash tells whether the set is
    the blessed one)."""
    blessed_raw = blessed.digest_bytes()
    now = compared.nrefs(nrefs)
    if blessed_raw is None or now is None:
        return None
    digests = compared.digests(blessed.example_ids(), blessed_raw)
    if digests is None:
        return None
    metrics = create_suite_metrics(config, name)
    signatures = {spec: str(metric.signature(nrefs=now)) for spec, metric in metrics.items()}
    note = describe_against(
        blessed, digests=digests, signatures=signatures, suite=name, source=label
    )
    verify_scores(blessed, metrics, signatures=signatures, suite=name, source=label)
    return SuiteCheck(name, len(digests), None, None, True, note)


# -- scoring ----------------------------------------------------------------------------------


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
    whole, since reading it costs nothing.
    """
    from goldgate.systems.obtain import collect_outputs

    system = config.system_for(name)
    if _partitions_on_dask(config, name):
        from goldgate.execution.dask.data import score_predictions_on_dask

        return score_predictions_on_dask(config, name, progress)
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
            ignore=_own_files(config),
            dask=config.engine.dask,
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
                path=_relative(obtained.cache_path, config.root) if obtained.cache_path else None,
                dropped=obtained.stale.outputs if obtained.stale else 0,
                dropped_reason=obtained.stale.reason if obtained.stale else None,
            )
    release_free_memory()  # what reading the outputs held besides them
    scored = score_outputs(
        name,
        golden,
        outputs,
        create_suite_metrics(config, name),
        context=metric_context(config),
        jobs=config.engine.jobs,
        dask=config.engine.dask,
    )
    release_free_memory()  # the chunks' texts and statistics, compacted and let go
    return replace(scored, cache=cache, identity=identity, ignored=ignored)


def load_suite_goldens(config: Config, name: str) -> GoldenSet:
    """A suite's golden set: its file read here, or a glob/URL read on the Dask cluster."""
    suite = config.suites[name]
    if is_dataset(suite.goldens_location):
        from goldgate.execution.dask.data import load_goldens_on_dask

        return load_goldens_on_dask(config, name)
    return load_goldens(suite.goldens, name)


def _partitions_on_dask(config: Config, name: str) -> bool:
    """Whether a predictions suite is read, joined and scored on the cluster (see dask_data)."""
    system = config.system_for(name)
    locations = [config.suites[name].goldens_location]
    if system.kind == "predictions":
        locations.append(system.predictions_location(name, config.root))
    if not any(is_dataset(location) for location in locations):
        return False
    if config.engine.dask_address is None:
        from goldgate.execution.dask.data import needs_cluster

        raise needs_cluster(name, next(place for place in locations if is_dataset(place)))
    return system.kind == "predictions"


def _goldens_label(config: Config, name: str) -> str:
    """The golden set as results and the baseline name it: a URL as written, else a path."""
    suite = config.suites[name]
    return suite.goldens_url or _relative(suite.goldens, config.root)


def _own_files(config: Config) -> list[Path]:
    """goldgate's own files: editing them does not change the system under test."""
    own = [config.baseline, config.report.dir, config.cache_dir]
    for suite in config.suites.values():
        # a glob's files, each (a URL names no file of the project)
        many = is_dataset(suite.goldens_location) and suite.goldens_url is None
        own += [Path(p) for p in glob.glob(str(suite.goldens))] if many else [suite.goldens]
    if config.source is not None:
        own.append(config.source)
    return own


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
    jobs: int | None = None,
    dask: DaskConfig | str | None = None,
) -> ScoredSuite:
    """Score given outputs (id → one output per sample) of a golden set with ``metrics``.

    ``jobs`` processes score chunks of the set (None: every core on large sets), or the Dask
    cluster at ``dask``; the statistics do not depend on either.
    """
    ids = golden.ids()
    samples = _sample_count(name, ids, outputs)
    pairs = list(metrics.items())
    workers = resolve_jobs(jobs, len(ids))
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
                per_sample.append(
                    score_chunks_compact(pairs, chunks, total=len(ids), jobs=workers, dask=dask)
                )
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


# -- gating -----------------------------------------------------------------------------------


def _gate_suite(
    config: Config,
    name: str,
    scored: ScoredSuite,
    blessed: SuiteBaseline | None,
    baseline_label: str,
    baseline_found: bool,
    anchors: Anchors | None = None,
    *,
    examples: bool = True,
    fill_outputs: bool = True,
) -> tuple[SuiteResult, list[str]]:
    """One scored suite gated against its baseline entry ``blessed``. ``fill_outputs``
    false leaves the blessed outputs of the examples edited or removed since the baseline
    for the caller to fill in (:func:`with_blessed_outputs`)."""
    suite = config.suites[name]
    hints: list[str] = [f"suite {name!r}: {scored.ignored}"] if scored.ignored else []
    change: GoldenChange | None = None
    #: blessed ids whose golden record was edited since: not paired with today's example
    unpaired: frozenset[str] = frozenset()
    if blessed is not None:
        signatures = {item.spec: item.signature for item in scored.scores.metrics}
        if (
            blessed.golden_hash != scored.golden.content_hash
            and config.on_golden_change == "compare"
        ):
            change = change_since(
                blessed,
                digests=_digests(scored.golden),
                metrics={item.spec: item.metric for item in scored.scores.metrics},
                signatures=signatures,
                suite=name,
                source=baseline_label,
            )
            # The whole baseline, with the edited examples left unpaired, pairs as the
            # baseline cut down to the shared ones would (the added and removed ones have no
            # partner anyway), without a second copy of a million examples' statistics.
            unpaired = frozenset(example.id for example in change.edited)
            advice = (
                "; run `goldgate bless --new-only` to add the new examples to the baseline"
                if change.added and not change.removed and not change.edited
                else ""
            )
            hints.append(f"suite {name!r}: {describe(change)}{advice}")
            gone = len(change.removed) + len(change.edited)
            if gone:
                hints.append(
                    f"suite {name!r}: {gone} example{'s' if gone != 1 else ''} removed or"
                    " edited since the baseline: a removal can hide a regression; review their"
                    " blessed scores in the report (max_removed caps them)"
                )
        else:
            verify_suite(
                blessed,
                suite=name,
                golden_hash=scored.golden.content_hash,
                signatures=signatures,
                source=baseline_label,
                digests=_digests(scored.golden),
            )
        # the blessed scores must follow from the blessed statistics
        verify_scores(
            blessed,
            {item.spec: item.metric for item in scored.scores.metrics},
            signatures=signatures,
            suite=name,
            source=baseline_label,
        )
        missing = [item.spec for item in scored.scores.metrics if item.spec not in blessed.metrics]
        if missing:
            hints.append(
                f"suite {name!r}: {', '.join(missing)} not in the baseline yet; run"
                " `goldgate bless --new-only` to add them"
            )
    elif baseline_found:
        hints.append(
            f"suite {name!r} is not in the baseline yet: only min/max gates were checked;"
            f" run `goldgate bless --suite {name}` to add it"
        )
    evaluation = evaluate_suite(
        scored.scores,
        blessed,
        suite.gate,
        config.significance,
        slices=suite.slices,
        jobs=resolve_jobs(config.engine.jobs, len(scored.scores.ids)),
        unpaired=unpaired,
    )
    _record_calls(scored, evaluation.metrics)
    if change is not None and blessed is not None and fill_outputs:
        change = with_blessed_outputs(change, blessed.blessed_outputs())
    if change is not None:
        removed = removed_check(name, change, config.max_removed)
        if removed is not None:
            evaluation.checks.append(removed)
            evaluation.verdict = verdict_of(evaluation.checks)
    if anchors is not None:
        drift = drift_checks(scored.scores, suite.gate, anchors, config.significance)
        evaluation.checks.extend(drift)
        evaluation.verdict = verdict_of(evaluation.checks)
    if evaluation.verdict is Verdict.IMPROVED:
        risen = [
            f"{check.metric} {check.delta:+.2f}"
            for check in evaluation.checks
            if check.status is CheckStatus.IMPROVED and check.slice is None and check.delta
        ]
        detail = f" ({', '.join(dict.fromkeys(risen))})" if risen else ""
        hints.append(
            f"suite {name!r} improved{detail}: run `goldgate bless` to make these scores"
            " the new baseline"
        )
    result = SuiteResult(
        name=name,
        verdict=evaluation.verdict,
        goldens=_goldens_label(config, name),
        golden_hash=scored.golden.content_hash,
        n_examples=len(scored.golden),
        metrics=evaluation.metrics,
        checks=evaluation.checks,
        slices=evaluation.slices,
        examples=_examples(scored, blessed, evaluation, unpaired) if examples else [],
        golden_change=change,
        cache=scored.cache,
        system=scored.identity,
    )
    return result, hints


def _record_calls(scored: ScoredSuite, summaries: Sequence[MetricSummary]) -> None:
    """Put this run's requests, retries and cache hits beside each calling metric's score."""
    metrics = {item.spec: item.metric for item in scored.scores.metrics}
    for summary in summaries:
        metric = metrics.get(summary.metric)
        tally = metric.call_tally() if isinstance(metric, BatchMetric) else None
        if tally is not None:
            summary.calls = MetricCalls(
                requests=tally.requests, retries=tally.retries, cached=tally.cached
            )


def _examples(
    scored: ScoredSuite,
    blessed: SuiteBaseline | None,
    evaluation: SuiteEvaluation,
    unpaired: frozenset[str] = frozenset(),
) -> ExampleColumns:
    """The suite's examples as columns over what the run holds anyway (golden records,
    outputs, the gate's score columns): a row is built only when a report reads it. An
    example in ``unpaired`` (edited since the baseline) has no blessed outputs."""
    outputs_of = blessed.blessed_outputs() if blessed is not None else None
    if outputs_of is not None and unpaired:
        blessed_outputs = outputs_of

        def outputs_of(example_id: str) -> list[str] | None:
            return None if example_id in unpaired else blessed_outputs(example_id)

    return ExampleColumns(
        scored.golden.records,
        scored.outputs,
        scores=evaluation.scores,
        baseline_scores=evaluation.baseline_scores,
        # not the baseline itself: its statistics are let go once the suite is gated
        baseline_outputs=outputs_of,
        flipped_to_wrong=evaluation.flipped_to_wrong,
        flipped_to_right=evaluation.flipped_to_right,
        notes=scored.notes,
        paired_at=evaluation.paired_at,
        # the digests the golden set computed as it was read (8 bytes an example), not
        # computed again from every record for the history
        record_digests=scored.golden.digests().of,
    )


# -- the baseline -----------------------------------------------------------------------------


def suite_baseline(config: Config, scored: ScoredSuite) -> SuiteBaseline:
    """The baseline entry of a scored suite: everything a later paired comparison needs."""
    metrics = {
        item.spec: BaselineMetric(
            signature=item.signature,
            score=sample_score(item.metric, item.stats),
            stat_names=list(item.metric.stat_names),
            components=components_of(item.metric, item.stats),
        )
        for item in scored.scores.metrics
    }
    digests = _digests(scored.golden)
    ids = scored.scores.ids
    return SuiteBaseline.build(
        golden_hash=scored.golden.content_hash,
        goldens=_goldens_label(config, scored.scores.name),
        golden_file_hash=scored.golden.file_hash(),
        # what tells the blessed records in other bytes, for a suite large enough to pack
        golden_file_chunks=file_chunks(scored.golden) if packs(len(ids)) else None,
        samples=scored.samples,
        metrics=metrics,
        ids=ids,
        digests=[digests[example_id] for example_id in ids],
        outputs=[scored.outputs[example_id] for example_id in ids],
        stats={item.spec: item.stats for item in scored.scores.metrics},
    )


def _kept_outputs(config: Config, name: str, old: SuiteBaseline) -> dict[str, list[str]]:
    """The blessed outputs ``bless --new-only`` keeps; an edited example is refused first."""
    golden = load_suite_goldens(config, name)
    digests = _digests(golden)
    blessed_digests = old.digests()
    for example_id, digest in digests.items():
        blessed = blessed_digests.get(example_id)
        if blessed is not None and blessed != digest:
            raise BaselineError(
                f"suite {name!r}, example {example_id!r}: changed since it was blessed (input,"
                " references or tags); run `goldgate bless` (without --new-only) to accept"
                " every score again"
            )
    return {
        example_id: list(old.outputs_of(example_id) or [])
        for example_id in digests
        if example_id in blessed_digests
    }


def merge_new_only(
    old: SuiteBaseline, fresh: SuiteBaseline, scored: ScoredSuite, name: str
) -> SuiteBaseline:
    """Keep the blessed examples of ``old`` and add from ``fresh`` only examples new to it.

    Metrics new to the suite are taken from ``fresh`` whole, since nothing of theirs was
    blessed. An example whose content changed, a changed signature or sample count cannot be
    kept and is a ``BaselineError``: that needs a full ``goldgate bless``.
    """
    advice = "; run `goldgate bless` (without --new-only) to accept every score again"
    if old.samples != fresh.samples:
        raise BaselineError(
            f"suite {name!r}: the baseline has {old.samples} samples per input, the system now"
            f" gives {fresh.samples}{advice}"
        )
    for spec, entry in fresh.metrics.items():
        kept = old.metrics.get(spec)
        if kept is not None and strip_nrefs(kept.signature) != strip_nrefs(entry.signature):
            raise BaselineError(
                f"suite {name!r}, metric {spec!r}: the signature changed (baseline"
                f" {kept.signature}, now {entry.signature}){advice}"
            )
    ids = list(scored.scores.ids)
    old_digests = old.digests()
    fresh_digests = fresh.digests()
    for example_id in ids:
        blessed = old_digests.get(example_id)
        if blessed is not None and blessed != fresh_digests[example_id]:
            raise BaselineError(
                f"suite {name!r}, example {example_id!r}: changed since it was blessed"
                f" (input, references or tags){advice}"
            )
    # Positions of the examples kept from the old baseline; the rest come from today.
    kept_ids = [example_id for example_id in ids if example_id in old_digests]
    kept_at = np.fromiter(
        (index for index, example_id in enumerate(ids) if example_id in old_digests),
        dtype=np.int64,
    )
    stats = {}
    for spec in fresh.metrics:
        array = np.array(fresh.stats_array(spec, ids), dtype=np.float64)
        if spec in old.metrics and len(kept_ids):
            array[:, kept_at, :] = old.stats_array(spec, kept_ids)
        stats[spec] = array
    outputs = [
        old.outputs_of(example_id) or fresh.outputs_of(example_id) or [] for example_id in ids
    ]

    metrics_by_spec = {item.spec: item.metric for item in scored.scores.metrics}
    metrics = {}
    for spec, entry in fresh.metrics.items():
        metric = metrics_by_spec[spec]
        metrics[spec] = BaselineMetric(
            # today's signature: its nrefs describes the whole set as it is now
            signature=entry.signature,
            score=sample_score(metric, stats[spec]),
            stat_names=entry.stat_names,
            components=metric.components(stats[spec].sum(axis=(0, 1)).tolist()),
        )
    return SuiteBaseline.build(
        golden_hash=fresh.golden_hash,
        goldens=fresh.goldens,
        golden_file_hash=fresh.golden_file_hash,
        golden_file_chunks=fresh.golden_file_chunks,
        samples=fresh.samples,
        metrics=metrics,
        ids=ids,
        digests=[old_digests.get(example_id, fresh_digests[example_id]) for example_id in ids],
        outputs=outputs,
        stats=stats,
        packed=fresh.packed is not None,
    )


# -- files ------------------------------------------------------------------------------------


def write_result(
    result: RunResult, directory: Path, formats: Sequence[str], *, threads: int = 1
) -> list[Path]:
    """Write ``result.json`` (always) and the other report formats into ``directory``, in
    ``threads`` threads at most."""
    from goldgate.report import write_reports

    wanted = list(dict.fromkeys(["json", *formats]))
    try:
        return write_reports(result, directory, wanted, threads=threads)
    except OSError as exc:
        where = exc.filename2 or exc.filename or directory
        raise GoldgateError(f"{where}: cannot write the reports: {exc.strerror or exc}") from None


#: the --baseline-ref value meaning "the baseline file as it is on disk" (the Action's spelling)
WORKING_TREE = "working-tree"


def _load_baseline(config: Config, ref: str | None) -> tuple[Baseline | None, str]:
    label = _relative(config.baseline, config.root)
    if ref is not None and ref != WORKING_TREE:
        return read_baseline_at_ref(config.baseline, ref, config.root), f"{ref}:{label}"
    if not config.baseline.exists():
        return None, label
    return read_baseline(config.baseline), label


def _anchors(config: Config, ref: str | None) -> Anchors | None:
    """The anchors of the drift rules, when any suite has one."""
    if not any(
        rule.max_drift is not None or rule.max_drift_rel is not None
        for suite in config.suites.values()
        for rule in suite.gate.values()
    ):
        return None
    return Anchors(config.root, config.baseline, ref or config.anchor.ref, config.anchor.best_of)


#: blesses shown in a gated metric's trend
TREND_BLESSES = 5


def add_trends(config: Config, results: Sequence[SuiteResult]) -> None:
    """Give each gated metric its blessed scores at the last blesses (read from git).

    Outside a git work tree, or before the baseline is committed, there is no trend.
    """
    from goldgate.history.query import blessed_trends
    from goldgate.history.timeline import blessed_timeline
    from goldgate.io.git import GitFailed

    gated = {
        id(summary)
        for suite in results
        for summary in suite.metrics
        if suite.name in config.suites and summary.metric in config.suites[suite.name].gate
    }
    if not gated:
        return
    try:
        # Twice the shown length: a bless of another suite does not move this metric's line.
        timeline = blessed_timeline(config.root, config.baseline, limit=2 * TREND_BLESSES)
    except GitFailed:
        return
    trends = blessed_trends(timeline)
    for suite in results:
        for summary in suite.metrics:
            points = trends.get((suite.name, summary.metric))
            if points and id(summary) in gated:
                summary.trend = [point.score for point in points[-TREND_BLESSES:]]


def select_suites(config: Config, suites: Sequence[str] | None) -> list[str]:
    """The names of the chosen suites (all when None), in configuration order."""
    if suites is None:
        return list(config.suites)
    from goldgate.errors import did_you_mean

    for name in suites:
        if name not in config.suites:
            hint = did_you_mean(name, list(config.suites))
            raise UsageError(
                f"no suite {name!r} in {config.source or 'the configuration'}{hint};"
                f" suites: {', '.join(config.suites)}"
            )
    return [name for name in config.suites if name in set(suites)]


def _digests(golden: GoldenSet) -> Mapping[str, str]:
    return golden.digests()  # computed once per golden set, as it was read


def failed_suite(config: Config, name: str, error: str) -> SuiteResult:
    """The result of a suite that could not be scored: verdict error, with the reason."""
    return SuiteResult(
        name=name,
        verdict=Verdict.ERROR,
        goldens=_goldens_label(config, name),
        golden_hash="",
        n_examples=0,
        metrics=[],
        checks=[],
        error=error,
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
