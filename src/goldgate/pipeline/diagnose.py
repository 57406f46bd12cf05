"""The diagnose stage: why a gated suite's quality moved.

After the compare stage (and once the suites' statistics are let go), each suite's examples
are run through the failure-mode detectors on both sides (today's outputs and the blessed
ones), their transitions counted per category, the regressed examples no detector explains
clustered, the headline written and the changes since the baseline attached; a suite's
``max_new`` rule adds its checks and may turn the verdict to regressed.

Its interface: :func:`prepare` (the run's detectors and changes, None with
``diagnose: off``), :func:`blessed_facts` (what the stage needs of a suite's baseline entry,
taken while the baseline is held) and :func:`diagnose_suite`.
"""

from __future__ import annotations

import functools
import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from goldgate.diagnosis.changes import run_changes, signature_changes
from goldgate.diagnosis.chosen import check_categories, detector_identity
from goldgate.diagnosis.clusters import MAX_EXAMPLES, Unexplained, find_clusters
from goldgate.diagnosis.detector import Detector
from goldgate.diagnosis.headline import headline
from goldgate.diagnosis.sides import Masks, diagnose_sides
from goldgate.diagnosis.transitions import category_counts, newly
from goldgate.gate.categories import max_new_checks
from goldgate.gate.rules import verdict_of
from goldgate.io.atomic import write_bytes_atomic
from goldgate.model.baseline import PACK_MIN_EXAMPLES, Baseline, PackedCategories, SuiteBaseline
from goldgate.model.config import Config
from goldgate.model.diagnosis import Changes, SuiteDiagnosis
from goldgate.model.example_table import DiagnosisColumns, example_table
from goldgate.model.packed import json_bytes
from goldgate.model.result import CheckStatus, SuiteResult, Verdict, gain
from goldgate.pipeline.blessed_categories import configured_detectors, scored_texts, stored_masks
from goldgate.pipeline.score import ScoredSuite

#: a per-example score worse than the blessed one by more than this has regressed
EPSILON = 1e-9


@dataclass(frozen=True)
class RunDiagnosis:
    """What every suite of a run shares: the detectors and the changes since the baseline."""

    detectors: tuple[Detector, ...]
    changes: Changes
    cache_dir: Path


@dataclass(frozen=True)
class BlessedFacts:
    """What the stage needs of a suite's baseline entry, once the baseline is let go."""

    signatures: dict[str, str]
    #: the packed outputs' digest (a large suite): the blessed side's masks are cached by it
    outputs_digest: str | None
    #: the blessed outputs' categories found at bless time (a large suite), aligned with
    #: the blessed ids, whose packed JSON has this digest
    categories: PackedCategories | None = None
    ids_sha256: str | None = None


def prepare(
    config: Config, baseline: Baseline | None, baseline_ref: str | None
) -> RunDiagnosis | None:
    """The run's detectors and changes; None when the configuration turns diagnosis off."""
    detectors = configured_detectors(config)
    if detectors is None:
        return None
    for name, suite in config.suites.items():
        check_categories(list(suite.max_new), detectors, name)
    changes = (
        run_changes(
            config.root,
            config.baseline,
            config.source,
            ref=None if baseline_ref in (None, "working-tree") else baseline_ref,
            baseline_goldgate=baseline.goldgate_version,
        )
        if baseline is not None
        else Changes()
    )
    return RunDiagnosis(detectors, changes, config.cache_dir / "diagnosis")


def blessed_facts(suite: SuiteBaseline) -> BlessedFacts:
    """The blessed signatures and, for a packed suite, the digest of its outputs block."""
    packed = suite.packed
    return BlessedFacts(
        signatures={spec: metric.signature for spec, metric in suite.metrics.items()},
        outputs_digest=packed.outputs.sha256 if packed is not None else None,
        categories=packed.categories if packed is not None else None,
        ids_sha256=packed.ids.sha256 if packed is not None else None,
    )


def _cache_path(
    run: RunDiagnosis, facts: BlessedFacts | None, ids: Sequence[str], golden_hash: str
) -> Path | None:
    """Where the blessed side's masks of a large suite are kept between runs: keyed by the
    blessed outputs, the golden set, the order of today's examples and the detectors."""
    if facts is None or facts.outputs_digest is None or len(ids) < PACK_MIN_EXAMPLES:
        return None
    key = hashlib.sha256()
    for part in (facts.outputs_digest, golden_hash, *map(detector_identity, run.detectors)):
        key.update(part.encode("utf-8", "surrogatepass") + b"\0")
    key.update("\n".join(ids).encode("utf-8", "surrogatepass"))
    return run.cache_dir / f"blessed-{key.hexdigest()[:32]}.npy"


def _cached(path: Path | None, n: int) -> Masks | None:
    if path is None:
        return None
    try:
        loaded = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if loaded.dtype != np.uint64 or loaded.shape != (n,):
        return None
    masks: Masks = loaded
    return masks


def _keep(path: Path | None, masks: Masks) -> None:
    if path is None:
        return
    buffer = io.BytesIO()
    np.save(buffer, masks, allow_pickle=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, buffer.getvalue())
    except OSError:
        return  # a cache that cannot be written only costs the next run the same work


def _regressed(
    config: Config, suite: SuiteResult
) -> tuple[str | None, npt.NDArray[np.bool_] | None]:
    """The metric regressed examples are measured on (the one whose check failed, else the
    first gated metric, else the first), and which examples got worse on it."""
    table = example_table(suite.examples)
    names = table.score_names()
    directions = {m.metric: m.higher_is_better for m in suite.metrics}
    failed = [c.metric for c in suite.checks if c.status is CheckStatus.FAIL]
    gated = list(config.suites[suite.name].gate) if suite.name in config.suites else []
    candidates = [m for m in [*failed, *gated, *names] if m in names and m in directions]
    if not candidates:
        return None, None
    metric = candidates[0]
    now = table.current(metric)
    then = table.baseline(metric)
    paired = ~np.isnan(then)
    if not paired.any():
        return metric, None
    with np.errstate(over="ignore", invalid="ignore"):  # a custom metric's 1e308
        change = np.where(paired, now - np.where(paired, then, 0.0), 0.0)
        worse = gain(1.0, directions[metric]) * change < -EPSILON
    return metric, worse & paired


def diagnose_suite(
    config: Config, run: RunDiagnosis, suite: SuiteResult, facts: BlessedFacts | None
) -> SuiteResult:
    """``suite`` with its diagnosis, each example's categories, and its ``max_new`` checks."""
    table = example_table(suite.examples)
    n = len(table)
    if suite.error is not None or suite.verdict is Verdict.ERROR:
        return suite
    detectors = run.detectors
    names = [d.name for d in detectors]
    cache = _cache_path(run, facts, table.ids, suite.golden_hash) if n else None
    cached = _cached(cache, n)
    if cached is None and facts is not None and facts.categories is not None:
        # found at bless time (a fresh checkout has no cache), for the same examples in the
        # same order
        same = hashlib.sha256(json_bytes(list(table.ids))).hexdigest() == facts.ids_sha256
        if same:
            cached = stored_masks(facts.categories, detectors, suite.golden_hash, n)
    masks = diagnose_sides(
        table.diagnosis_inputs,
        n,
        detectors,
        blessed_masks=cached,
        outputs_only=table.diagnosis_outputs,
        texts_at=table.diagnosis_inputs_at,
    )
    if cached is None and cache is not None:
        _keep(cache, np.where(masks.has_baseline, masks.baseline, np.uint64(0)))
    diagnosed = facts is not None
    metric, worse = _regressed(config, suite) if diagnosed else (None, None)
    counts = category_counts(names, masks, worse, baseline_diagnosed=diagnosed)
    fresh = newly(masks)
    regressed = int(np.count_nonzero(worse)) if worse is not None else 0
    explained = int(np.count_nonzero(fresh[worse] != 0)) if worse is not None else 0
    clusters = []
    if worse is not None and regressed > explained:
        left = np.flatnonzero(worse & (fresh == 0))[:MAX_EXAMPLES].tolist()
        rows = [table.row(i) for i in left]
        clusters = find_clusters(
            [Unexplained(row.id, row.output, row.baseline_output) for row in rows]
        )
    side: Literal["diagnosed", "no baseline"] = "diagnosed" if diagnosed else "no baseline"
    changes = run.changes
    if facts is not None:
        current = {m.metric: m.signature for m in suite.metrics}
        differ = signature_changes(facts.signatures, current)
        if differ:
            changes = changes.model_copy(update={"signatures": differ})
    diagnosis = SuiteDiagnosis(
        regressed=regressed,
        metric=metric,
        baseline_side=side,
        detectors={d.name: d.version for d in detectors},
        categories=counts,
        clusters=clusters,
        headline=headline(
            counts,
            regressed=regressed,
            explained=explained,
            clusters=clusters,
            baseline_side=side,
            n_examples=n,
            metric=metric,
        ),
        changes=changes,
    )
    checks = list(suite.checks)
    verdict: Verdict = suite.verdict
    rule = config.suites[suite.name].max_new if suite.name in config.suites else {}
    if rule:
        slices = config.suites[suite.name].max_new_slices
        checks += max_new_checks(
            suite.name,
            rule,
            names,
            fresh,
            table.ids,
            [table.tags_at(i) for i in range(n)] if slices else [],
            slices=slices,
            baseline_found=diagnosed,
        )
        verdict = verdict_of(checks)
    columns = DiagnosisColumns(names, masks.current, masks.baseline, masks.has_baseline)
    return suite.model_copy(
        update={
            "diagnosis": diagnosis,
            "checks": checks,
            "verdict": verdict,
            "examples": table.with_diagnosis(columns) if n else suite.examples,
        }
    )


def review_max_new(
    config: Config,
    run: RunDiagnosis,
    name: str,
    scored: ScoredSuite,
    previous: SuiteBaseline | None,
    review: SuiteResult,
) -> SuiteResult:
    """A bless's review of one suite with its ``max_new`` checks (its only use of the
    diagnosis: a bless refuses a system that newly falls into a gated category)."""
    suite = config.suites[name]
    if not suite.max_new or review.error is not None:
        return review
    records = scored.golden.records
    blessed = previous.blessed_outputs() if previous is not None else None
    texts = functools.partial(scored_texts, scored, blessed)
    masks = diagnose_sides(texts, len(records), run.detectors)
    ids = [record.id for record in records]
    checks = list(review.checks) + max_new_checks(
        name,
        suite.max_new,
        [d.name for d in run.detectors],
        newly(masks),
        ids,
        [record.tags for record in records] if suite.max_new_slices else [],
        slices=suite.max_new_slices,
        baseline_found=previous is not None,
    )
    return review.model_copy(update={"checks": checks, "verdict": verdict_of(checks)})


__all__ = [
    "BlessedFacts",
    "RunDiagnosis",
    "blessed_facts",
    "diagnose_suite",
    "prepare",
    "review_max_new",
]
