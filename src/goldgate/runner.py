"""The one orchestration every face calls: plan → obtain outputs → score → compare → record
→ present.

``run`` scores every suite, compares it with the baseline and returns the whole
:class:`~goldgate.model.result.RunResult`; ``bless`` writes the baseline from a fresh scoring;
``check`` validates configuration, golden sets and baseline without running the system.
The library never prints or exits: problems are typed :class:`~goldgate.errors.GoldgateError`
exceptions, or, when they concern one suite of a run, that suite's ``error`` and the
``error`` verdict.

The stages are the modules of :mod:`goldgate.pipeline`: ``plan`` (the suites and their golden
sets), ``score`` (the system's outputs and every metric's statistics), ``compare`` (the
baseline, golden-set change, gate rules and drift), ``record`` (the result, the baseline, the
reports), with ``reuse`` (the outputs a bless already has) and ``verify`` (``check``). The
history is recorded by :mod:`goldgate.history.recording`.

Systems that return several samples per input (``samples > 1``) are scored one sample index
at a time, each as its own candidate set, and the scores are averaged; per-example scores
are averaged the same way, and components are computed from statistics pooled over samples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from goldgate.errors import BaselineError, GoldgateError
from goldgate.execution.memory import release_free_memory
from goldgate.gate.drift import Anchors
from goldgate.metrics.budget import NOT_RUN_ON_BUDGET, Budget, spending
from goldgate.model.baseline import Baseline, BlessedOutputs, SuiteBaseline
from goldgate.model.baseline_io import read_baseline
from goldgate.model.config import Config
from goldgate.model.gate_records import BudgetUse
from goldgate.model.result import CheckStatus, RunResult, SuiteResult, Verdict
from goldgate.pipeline.compare import (
    add_trends,
    drift_anchors,
    fill_blessed_outputs,
    gate_suite,
    load_baseline,
    review_suite,
)
from goldgate.pipeline.diagnose import (
    BlessedFacts,
    blessed_facts,
    diagnose_suite,
    prepare,
    review_max_new,
)
from goldgate.pipeline.plan import relative_path, select_suites
from goldgate.pipeline.record import failed_suite, run_result, write_blessed, write_run_reports
from goldgate.pipeline.reuse import kept_outputs, reviewed_outputs, reviewed_result
from goldgate.pipeline.score import ScoredSuite, score_suite
from goldgate.pipeline.verify import SuiteCheck, check_suite
from goldgate.terminal.progress import ProgressReporter


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
    baseline, baseline_label = load_baseline(config, baseline_ref)
    anchors = drift_anchors(config, anchor_ref)
    results: list[SuiteResult] = []
    hints: list[str] = []
    errors: list[str] = []
    baseline_found = baseline is not None
    # each suite's blessed outputs (ids and one packed block), not the rest of its baseline
    outputs_of: dict[str, Callable[[str], Sequence[str] | None]] = {}
    budget = Budget(config.budget.max_usd) if config.budget is not None else None
    # the detectors (a project's own fail here, before any system is called) and the changes
    diagnosis = prepare(config, baseline, baseline_ref)
    facts: dict[str, BlessedFacts] = {}
    for name in names:
        if budget is not None and budget.stopped:  # the calls a later suite makes cost too
            results.append(failed_suite(config, name, f"not run: {NOT_RUN_ON_BUDGET}"))
            continue
        try:
            with spending(budget):
                suite_result, suite_hints = _score_and_gate(
                    config, name, baseline, baseline_label, anchors, progress
                )
            hints += suite_hints
            # (no name left bound to the suite's baseline: its statistics go with ``baseline``)
            if baseline is not None and name in baseline.suites:
                outputs_of[name] = baseline.suites[name].blessed_outputs()
                facts[name] = blessed_facts(baseline.suites[name])
        except GoldgateError as exc:
            errors.append(str(exc))
            suite_result = failed_suite(config, name, str(exc))
        results.append(suite_result)
        release_free_memory()  # the suite's statistics and texts are gone: give the pages back
    # What the results need of the baseline they hold; the rest (at a million examples,
    # hundreds of MB of statistics) is let go before the history and the reports are written.
    del baseline
    release_free_memory()
    # Only now are the blessed outputs decoded (a packed suite's whole block), for the
    # diagnosis and the edited and removed examples: not on top of the statistics of both sides.
    if diagnosis is not None:
        # after the statistics are gone: the detectors read texts, and each suite's blessed
        # outputs are decoded once, let go after (kept for the examples edited since the
        # baseline, which fill_blessed_outputs reads next and then lets go)
        for index, suite_result in enumerate(results):
            results[index] = diagnose_suite(
                config, diagnosis, suite_result, facts.get(suite_result.name)
            )
            blessed_outputs = outputs_of.get(suite_result.name)
            if isinstance(blessed_outputs, BlessedOutputs) and suite_result.golden_change is None:
                blessed_outputs.release()
    fill_blessed_outputs(results, outputs_of)
    add_trends(config, results)
    if not baseline_found:
        hints.insert(
            0,
            f"no baseline at {baseline_label}: only min/max gates were checked; run"
            " `goldgate bless` to accept these scores as the baseline",
        )
    result = run_result(config, results, baseline_label, baseline_found, hints, errors)
    if budget is not None:
        result.budget = BudgetUse(
            max_usd=budget.max_usd,
            spent_usd=round(budget.spent, 6),
            calls=budget.calls,
            stopped=budget.stopped,
        )
    if history_source is not None:
        from goldgate.history.recording import record_run

        result.hints.extend(record_run(result, config, source=history_source))
        release_free_memory()
    if write_reports:
        write_run_reports(config, result, report_formats)
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
    blessed = baseline.suites.get(name) if baseline is not None else None
    result, hints = gate_suite(
        config,
        name,
        scored,
        blessed,
        baseline_label,
        baseline is not None,
        anchors,
        fill_outputs=False,
    )
    if config.confirm is not None and result.verdict is Verdict.REGRESSED:
        from goldgate.pipeline.confirm import confirm_failures

        result = confirm_failures(
            config, name, scored, result, blessed, baseline_label, baseline is not None, anchors
        )
    return result, hints


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
    label = relative_path(config.baseline, config.root)
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
    reviewed = reviewed_result(config) if reusing else None
    scored: dict[str, ScoredSuite] = {}
    results: list[SuiteResult] = []
    failed: dict[str, list[str]] = {}
    budget = Budget(config.budget.max_usd) if config.budget is not None else None
    gates_categories = any(config.suites[n].max_new for n in names)
    diagnosis = prepare(config, current, None) if gates_categories else None
    for name in names:
        kept = current.suites.get(name) if current is not None and new_only else None
        with spending(budget):
            scored[name] = _score_for_bless(config, name, kept, reviewed, progress)
        previous = current.suites.get(name) if current is not None else None
        suite_result = review_suite(
            config, name, scored[name], previous, label, current is not None
        )
        if diagnosis is not None:  # max_new refuses a bless as any failed check does
            suite_result = review_max_new(
                config, diagnosis, name, scored[name], previous, suite_result
            )
        results.append(suite_result)
        messages = [c.message for c in suite_result.checks if c.status is CheckStatus.FAIL]
        if messages:
            failed[name] = messages
    review = run_result(config, results, label, current is not None, [], [])
    if failed and not allow_regression:
        return BlessOutcome(config.baseline, review, written=False, failed=failed)
    write_blessed(config, names, scored, failed, new_only=new_only, suites=suites)
    return BlessOutcome(config.baseline, review, written=True, failed=failed)


def _score_for_bless(
    config: Config,
    name: str,
    kept: SuiteBaseline | None,
    reviewed: RunResult | None,
    progress: ProgressReporter | None,
) -> ScoredSuite:
    """Score a suite for bless with the outputs already in hand: the blessed ones ``kept``
    (``--new-only``), else the reviewed run's when they stand for today's."""
    if kept is not None:
        return score_suite(
            config,
            name,
            progress=progress,
            known=kept_outputs(config, name, kept),
            known_source="baseline",
        )
    reused = reviewed_outputs(config, name, reviewed)
    if reused is None:
        return score_suite(config, name, progress=progress)
    return score_suite(
        config,
        name,
        progress=progress,
        known=reused.outputs,
        known_source="result",
        known_since=reused.since,
        identity=reused.identity,
    )


def check(config: Config, *, baseline_ref: str | None = None) -> list[SuiteCheck]:
    """Validate golden sets and the baseline against the configuration, running no system."""
    baseline, label = load_baseline(config, baseline_ref)
    return [
        check_suite(
            config, name, baseline.suites.get(name) if baseline is not None else None, label
        )
        for name in config.suites
    ]
