"""A golden set that changed since the baseline: what changed, and the part both sides share.

A pull request that adds, edits or removes golden examples must still be gated. Only the
examples both sides share (same id, same content digest) are paired with the baseline, so
paired statistics, the bootstrap and flips are computed on that common subset, while
``min``/``max`` apply to the whole current set (the gate does that by itself: current scores
always cover every example). An edited example counts as removed and added: its old scores
are reported, its new one has no baseline.

Removing examples can hide a regression (drop the ones that got worse and the rest passes),
so removals are always reported, and ``max_removed`` turns too many into a failed check.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from goldgate.errors import BaselineError, first_of
from goldgate.metrics.base import Metric
from goldgate.model.baseline import SuiteBaseline, strip_nrefs
from goldgate.model.golden_hashing import RecordDigests
from goldgate.model.result import ChangedExample, CheckResult, CheckStatus, GoldenChange

#: the pseudo-metric under which golden-set checks (``max_removed``) are reported
GOLDENS_CHECK = "goldens"


def change_since(
    blessed: SuiteBaseline,
    *,
    digests: Mapping[str, str],
    metrics: Mapping[str, Metric[Any]],
    signatures: Mapping[str, str],
    suite: str,
    source: str,
) -> GoldenChange:
    """How the examples of ``digests`` (id → digest) differ from ``blessed``'s, with the
    blessed scores of those edited or removed: the gate pairs only the shared ones (same id,
    same digest; the edited ones are left unpaired).

    A metric whose signature differs beyond ``nrefs`` (which depends on the whole set) is
    still a ``BaselineError``: scores are only compared under the same settings.
    """
    _same_settings(blessed, signatures, suite=suite, source=source)
    split = _split(blessed, digests)
    return GoldenChange(
        baseline_hash=blessed.golden_hash,
        n_shared=len(split.shared),
        added=split.added,
        removed=_old_scores(blessed, split.removed, metrics, at=split.removed_at),
        edited=_old_scores(blessed, split.edited, metrics, at=split.edited_at),
    )


def describe_against(
    blessed: SuiteBaseline,
    *,
    digests: Mapping[str, str],
    signatures: Mapping[str, str],
    suite: str,
    source: str,
) -> str:
    """:func:`describe` of the change :func:`change_since` would find, without the old
    scores and outputs of the examples edited or removed (``check`` shows only counts; the
    outputs are one block, decoded whole: seconds at a million examples)."""
    _same_settings(blessed, signatures, suite=suite, source=source)
    split = _split(blessed, digests)
    return _described(len(split.added), len(split.edited), len(split.removed), len(split.shared))


def _same_settings(
    blessed: SuiteBaseline, signatures: Mapping[str, str], *, suite: str, source: str
) -> None:
    for spec, signature in signatures.items():
        kept = blessed.metrics.get(spec)
        if kept is not None and strip_nrefs(kept.signature) != strip_nrefs(signature):
            raise BaselineError(
                f"{source}: suite {suite!r}, metric {spec!r}: the signature differs from the"
                f" baseline's (baseline {kept.signature}, now {signature}); scores are only"
                " compared under the same settings; run `goldgate bless` to accept the new ones"
            )


@dataclass(frozen=True)
class _Split:
    """The current examples by their fate against the baseline (ids, in the current order;
    ``removed`` in the blessed order)."""

    added: list[str]
    edited: list[str]
    removed: list[str]
    shared: list[str]
    #: a packed suite's blessed positions of ``edited`` and ``removed`` (found without a
    #: table of a million positions)
    edited_at: npt.NDArray[np.intp] | None = None
    removed_at: npt.NDArray[np.intp] | None = None


def _split(blessed: SuiteBaseline, digests: Mapping[str, str]) -> _Split:
    raw = blessed.digest_bytes()
    if raw is not None and isinstance(digests, RecordDigests):
        return _split_packed(blessed, raw, digests)
    old = blessed.digests()
    current = dict(digests)
    added: list[str] = []
    edited: list[str] = []
    shared: list[str] = []
    for example_id, digest in current.items():
        blessed_digest = old.get(example_id)
        if blessed_digest is None:
            added.append(example_id)
        elif blessed_digest == digest:
            shared.append(example_id)
        else:
            edited.append(example_id)
    removed = [example_id for example_id in old if example_id not in current]
    return _Split(added, edited, removed, shared)


def _split_packed(blessed: SuiteBaseline, raw: bytes, digests: RecordDigests) -> _Split:
    """:func:`_split` of a packed suite, on the digests' raw bytes: no table of a million
    hex strings on either side (the blessed positions are the gate's own table)."""
    ids = digests.ids
    at = blessed.positions_of(ids)
    known = at >= 0
    now = np.frombuffer(digests.raw, dtype=np.uint64)
    then = np.frombuffer(raw, dtype=np.uint64)
    same = np.zeros(len(ids), dtype=bool)
    same[known] = now[known] == then[at[known]]
    present = np.zeros(len(then), dtype=bool)
    present[at[known]] = True
    blessed_ids = blessed.example_ids()

    def ids_at(mask: npt.NDArray[np.bool_], of: Sequence[str]) -> list[str]:
        return [of[index] for index in np.flatnonzero(mask).tolist()]

    edited = known & ~same
    return _Split(
        added=ids_at(~known, ids),
        edited=ids_at(edited, ids),
        removed=ids_at(~present, blessed_ids),
        shared=ids_at(same, ids),
        edited_at=at[edited],
        removed_at=np.flatnonzero(~present),
    )


def _old_scores(
    blessed: SuiteBaseline,
    ids: Sequence[str],
    metrics: Mapping[str, Metric[Any]],
    *,
    at: npt.NDArray[np.intp] | None,
) -> list[ChangedExample]:
    from goldgate.gate.rules import example_scores

    scores: dict[str, list[float]] = {
        spec: example_scores(metric, blessed.stats_array(spec, ids, at=at)).tolist()
        for spec, metric in metrics.items()
        if spec in blessed.metrics and ids
    }
    return [
        ChangedExample(
            id=example_id,
            baseline_scores={spec: values[index] for spec, values in scores.items()},
        )
        for index, example_id in enumerate(ids)
    ]


def with_blessed_outputs(
    change: GoldenChange, outputs_of: Callable[[str], Sequence[str] | None]
) -> GoldenChange:
    """``change`` with the blessed output of every example removed or edited, from the
    baseline's ``blessed_outputs()``. A packed suite's outputs are one block, decoded whole
    (170 MB and seconds at a million examples, which the reports decode then anyway): a run
    asks once the baseline's statistics are let go."""
    if not change.removed and not change.edited:
        return change

    def filled(examples: list[ChangedExample]) -> list[ChangedExample]:
        found = []
        for example in examples:
            outputs = outputs_of(example.id)
            output = outputs[0] if outputs else None
            found.append(example.model_copy(update={"baseline_output": output}))
        return found

    return change.model_copy(
        update={"removed": filled(change.removed), "edited": filled(change.edited)}
    )


def removed_check(suite: str, change: GoldenChange, max_removed: int | None) -> CheckResult | None:
    """The ``max_removed`` check: removed (and edited) examples beyond the cap fail the suite."""
    if max_removed is None:
        return None
    gone = len(change.removed) + len(change.edited)
    ok = gone <= max_removed
    gone_ids = [item.id for item in [*change.removed, *change.edited]]
    detail = f" ({first_of(gone_ids, 5)})" if gone else ""
    return CheckResult(
        suite=suite,
        metric=GOLDENS_CHECK,
        rule="max_removed",
        threshold=float(max_removed),
        status=CheckStatus.PASS if ok else CheckStatus.FAIL,
        message=(
            f"{suite}: {gone} golden example{'s' if gone != 1 else ''} removed or edited since"
            f" the baseline{detail}; "
            + ("at most" if ok else "more than the allowed")
            + f" {max_removed} (max_removed)"
        ),
    )


def describe(change: GoldenChange) -> str:
    """One line: how the golden set changed and on how many examples the verdict stands."""
    return _described(len(change.added), len(change.edited), len(change.removed), change.n_shared)


def _described(added: int, edited: int, removed: int, shared: int) -> str:
    changed = (
        f"golden set changed since the baseline ({added} added, {edited} edited, {removed} removed)"
    )
    if not shared:  # every id renamed or every record edited: no paired test, no flips
        return (
            f"{changed}: nothing to compare: 0 shared examples (only min and max are judged,"
            " on the whole set); bless to start afresh"
        )
    return f"{changed}: compared on {shared} shared example{'s' if shared != 1 else ''}"
