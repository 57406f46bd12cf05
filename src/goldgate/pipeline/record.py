"""The record stage: what a run and a bless leave behind.

Its interface: :func:`run_result` and :func:`failed_suite` (a run's
:class:`~goldgate.model.result.RunResult` and the result of a suite that could not be
scored), :func:`suite_baseline` and :func:`merge_new_only` (a scored suite's baseline entry,
whole or added to the blessed one), :func:`write_blessed` (the baseline file, under its lock),
and :func:`write_result` and :func:`write_run_reports` (``result.json`` and the report
formats).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from goldgate._version import __version__
from goldgate.errors import BaselineError, GoldgateError
from goldgate.execution.pool import resolve_jobs
from goldgate.gate.rules import combine_verdicts, components_of
from goldgate.gate.stats import sample_score
from goldgate.io.atomic import locked
from goldgate.model.baseline import Baseline, BaselineMetric, SuiteBaseline, packs, strip_nrefs
from goldgate.model.baseline_io import read_baseline, write_baseline
from goldgate.model.config import Config
from goldgate.model.golden_index import file_chunks
from goldgate.model.result import RunResult, SignificanceSettings, SuiteResult, Verdict
from goldgate.pipeline.blessed_categories import with_blessed_categories
from goldgate.pipeline.compare import example_digests
from goldgate.pipeline.plan import goldens_label, relative_path
from goldgate.pipeline.score import ScoredSuite

#: the file in the report directory that holds a run's whole result; a bless reads it back to
#: reuse the outputs it reviewed
RESULT_FILENAME = "result.json"


def run_result(
    config: Config,
    results: list[SuiteResult],
    baseline_label: str,
    baseline_found: bool,
    hints: list[str],
    errors: list[str],
) -> RunResult:
    """The whole result of a run (or of a bless's review) from its suites' results."""
    significance = config.significance
    return RunResult(
        goldgate_version=__version__,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        verdict=combine_verdicts([suite.verdict for suite in results]),
        config=relative_path(config.source, config.root) if config.source else None,
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


def failed_suite(config: Config, name: str, error: str) -> SuiteResult:
    """The result of a suite that could not be scored: verdict error, with the reason."""
    return SuiteResult(
        name=name,
        verdict=Verdict.ERROR,
        goldens=goldens_label(config, name),
        golden_hash="",
        n_examples=0,
        metrics=[],
        checks=[],
        error=error,
    )


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


def write_run_reports(
    config: Config, result: RunResult, report_formats: Sequence[str] | None
) -> list[Path]:
    """Write a run's ``result.json`` and report formats (the configured ones unless
    ``report_formats``) into the report directory, in threads as the run's size allows."""
    formats = list(config.report.formats) if report_formats is None else list(report_formats)
    examples = sum(suite.n_examples for suite in result.suites)
    threads = resolve_jobs(config.engine.jobs, examples)
    return write_result(result, config.report.dir, formats, threads=threads)


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
    digests = example_digests(scored.golden)
    ids = scored.scores.ids
    return SuiteBaseline.build(
        golden_hash=scored.golden.content_hash,
        goldens=goldens_label(config, scored.scores.name),
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


def write_blessed(
    config: Config,
    names: Sequence[str],
    scored: Mapping[str, ScoredSuite],
    failed: Mapping[str, list[str]],
    *,
    new_only: bool,
    suites: Sequence[str] | None,
) -> None:
    """Write the baseline with the entries of the suites ``names`` from their ``scored``
    suites (with ``new_only``, added to what is blessed); the others keep theirs. A suite in
    ``failed`` is recorded as forced, with the messages of its failed checks.

    ``suites`` is the selection the bless was given (None: every suite).
    """
    # (the blessed outputs' categories found before the lock is taken: a large suite's take
    # a while, and a bless of another suite need not wait for them)
    fresh_of = {
        name: with_blessed_categories(config, scored[name], suite_baseline(config, scored[name]))
        for name in names
    }
    # The read-modify-write under the baseline's lock, the file read afresh: a bless of
    # another suite running at the same time lands either before (and is kept) or after (and
    # keeps ours). The bless scored its suites before, outside the lock.
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
            fresh = fresh_of[name]
            old = existing.suites.get(name) if existing is not None and new_only else None
            blessed[name] = fresh if old is None else merge_new_only(old, fresh, scored[name], name)
            if name in failed:
                blessed[name] = blessed[name].model_copy(update={"forced": failed[name]})
        baseline = Baseline(
            goldgate_version=__version__,
            suites={name: blessed[name] for name in config.suites if name in blessed},
        )
        write_baseline(config.baseline, baseline)
