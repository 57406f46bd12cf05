"""A blessed suite checked against today's golden set and metrics before the gate trusts it.

The golden hash and each metric's signature must be today's (else the message says which
examples were added, removed or changed, and whether ``bless --new-only`` would do), the
examples must be the golden set's, and each blessed score must follow from the blessed
statistics: a hand-edited baseline is refused, not believed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from goldgate.errors import BaselineError, first_of
from goldgate.gate.stats import sample_score
from goldgate.metrics.base import Metric
from goldgate.model.baseline import SuiteBaseline, strip_nrefs
from goldgate.model.golden_hashing import RecordDigests


def verify_suite(
    suite_baseline: SuiteBaseline,
    *,
    suite: str,
    golden_hash: str,
    signatures: Mapping[str, str],
    source: str,
    digests: Mapping[str, str] | None = None,
) -> None:
    """Refuse a suite baseline whose golden hash or a metric's signature differs from today's.

    ``digests`` (id → ``record_digest``) lets the message say which examples were added,
    removed or changed.
    """
    if suite_baseline.golden_hash != golden_hash:
        detail = ""
        only_added = False
        if digests is not None:
            detail, only_added = _golden_changes(suite_baseline, digests)
        advice = (
            "run `goldgate bless --new-only` to add the new examples (or `goldgate bless` to"
            " accept every score again)"
            if only_added
            else "run `goldgate bless` to accept every score again"
        )
        raise BaselineError(
            f"{source}: suite {suite!r}: the golden set changed since the baseline was blessed"
            f" (baseline {_short_hash(suite_baseline.golden_hash)}, now {_short_hash(golden_hash)})"
            f"{detail}; {advice}"
        )
    if digests is not None:
        _check_examples_match(suite_baseline, suite, digests, source)
    for spec, signature in signatures.items():
        blessed = suite_baseline.metrics.get(spec)
        if blessed is not None and blessed.signature != signature:
            raise BaselineError(
                f"{source}: suite {suite!r}, metric {spec!r}: the signature differs from the"
                f" baseline's (baseline {blessed.signature}, now {signature}); scores are only"
                " compared under the same settings; run `goldgate bless` to accept the new ones"
            )


def verify_scores(
    suite_baseline: SuiteBaseline,
    metrics: Mapping[str, Metric[Any]],
    *,
    signatures: Mapping[str, str],
    suite: str,
    source: str,
) -> None:
    """Recompute each blessed score that today's metric can (same signature, less ``nrefs``)
    from the blessed statistics; a stored score they do not give is a damaged baseline."""
    for spec, metric in metrics.items():
        blessed = suite_baseline.metrics.get(spec)
        if blessed is not None and strip_nrefs(blessed.signature) == strip_nrefs(
            signatures.get(spec, "")
        ):
            verify_score(suite_baseline, spec, metric, suite=suite, source=source)


#: How far a stored score may lie from the one its statistics give: float noise from adding
#: them up in another order (the file keeps examples sorted by id), nothing a person types.
SCORE_TOLERANCE = 1e-6


def verify_score(
    suite_baseline: SuiteBaseline, spec: str, metric: Metric[Any], *, suite: str, source: str
) -> None:
    """Refuse a blessed score that does not follow from the blessed per-example statistics.

    The gate compares today's statistics with the blessed ones example by example, and the
    reports show the blessed score: an edited score, or statistics zeroed to turn a drop into
    an "improvement", must not be believed.
    """
    blessed = suite_baseline.metrics[spec]
    ids = suite_baseline.example_ids()
    with np.errstate(over="ignore", invalid="ignore"):
        recomputed = sample_score(metric, suite_baseline.compact_stats(spec, ids)) if ids else None
    if recomputed is None:
        return
    if not math.isfinite(recomputed) or not math.isclose(
        blessed.score, recomputed, rel_tol=SCORE_TOLERANCE, abs_tol=SCORE_TOLERANCE
    ):
        raise BaselineError(
            f"{source}: damaged baseline: suite {suite!r}, metric {spec!r}: the stored score"
            f" {blessed.score!r} does not follow from the stored per-example statistics (they"
            f" give {recomputed!r}); restore the file from git or run `goldgate bless` again"
        )


def _check_examples_match(
    suite_baseline: SuiteBaseline, suite: str, digests: Mapping[str, str], source: str
) -> None:
    # Only a hand edit or a bad merge gets here: the hash says the goldens are the same, yet
    # the examples differ, and the gate would silently pair a subset of them.
    if isinstance(digests, RecordDigests) and suite_baseline.same_digests(digests):
        return
    blessed = suite_baseline.digests()
    if blessed == digests:
        return
    problems = [f"example {i} is missing" for i in digests if i not in blessed]
    problems += [f"example {i} is not in the golden set" for i in blessed if i not in digests]
    problems += [
        f"example {i} has another digest"
        for i, digest in digests.items()
        if i in blessed and blessed[i] != digest
    ]
    shown = first_of(problems, 3)
    raise BaselineError(
        f"{source}: damaged baseline: suite {suite!r}: its golden hash matches the golden set"
        f" but its examples do not ({shown}); restore it from git or run `goldgate bless` again"
    )


def _short_hash(value: str) -> str:
    return value[:19] + "…" if len(value) > 20 else value


def _golden_changes(suite_baseline: SuiteBaseline, digests: Mapping[str, str]) -> tuple[str, bool]:
    blessed = suite_baseline.digests()
    added = [i for i in digests if i not in blessed]
    removed = [i for i in blessed if i not in digests]
    changed = [i for i in digests if i in blessed and blessed[i] != digests[i]]
    parts = []
    for label, ids in (("added", added), ("removed", removed), ("changed", changed)):
        if ids:
            parts.append(f"{len(ids)} {label}: {first_of(ids, 5)}")
    detail = f": {'; '.join(parts)}" if parts else ""
    return detail, bool(added) and not changed
