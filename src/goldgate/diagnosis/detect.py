"""Run detectors over every output of one side (current or blessed) of a suite."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from goldgate.diagnosis.detector import Detector, Example, Findings, SideContext

#: A token count is a length cap when at least this many outputs have it...
CAP_MIN_OUTPUTS = 5
#: ...at least this share of the side's outputs...
CAP_MIN_SHARE = 0.02
#: ...at least this many times the mean count of its four neighbours (n-2 .. n+2)...
CAP_SPIKE = 4.0
#: ...and it is at least this long (short answers share lengths by nature).
CAP_MIN_TOKENS = 6


def length_caps(token_counts: Mapping[int, int], size: int) -> frozenset[int]:
    """The token counts at which outputs pile up: many more outputs stop at exactly ``n``
    tokens than at its neighbours, as when a generation limit cuts every long answer."""
    floor = max(CAP_MIN_OUTPUTS, CAP_MIN_SHARE * size)
    caps = set()
    for length, count in token_counts.items():
        if length < CAP_MIN_TOKENS or count < floor:
            continue
        around = sum(token_counts.get(length + step, 0) for step in (-2, -1, 1, 2)) / 4
        if count >= CAP_SPIKE * (around + 1):
            caps.add(length)
    return frozenset(caps)


def side_context(outputs: Sequence[str]) -> SideContext:
    """The statistics over all outputs of one side that detectors read."""
    counts = Counter(len(output.split()) for output in outputs)
    return SideContext(
        token_counts=dict(counts),
        size=len(outputs),
        length_caps=length_caps(counts, len(outputs)),
    )


def detect_side(examples: Sequence[Example], chosen: Sequence[Detector]) -> Findings:
    """Each example's present modes (in detector order) and their evidence."""
    context = side_context([example.output for example in examples])
    # Most examples have no finding: their slot stays None (no dict each, at a million).
    found: list[dict[str, str] | None] = [None] * len(examples)
    # One detector at a time over every example: its patterns and tables stay hot.
    for detector in chosen:
        name = detector.name
        for index, example in enumerate(examples):
            said = detector(example, context)
            if said is not None:
                slot = found[index]
                if slot is None:
                    slot = found[index] = {}
                slot[name] = said
    return _findings(found)


def detect_sides(
    current: Sequence[Example], blessed: Sequence[Example], chosen: Sequence[Detector]
) -> tuple[Findings, Findings]:
    """``detect_side`` on the current side and on the blessed side (the same examples, in
    the same order, each with its blessed output), with the same answers, at less cost: a
    current output equal to its blessed one (same input and references) takes the blessed
    side's answer from each detector that declares ``same_when_unchanged`` (and, if it
    ``reads_context``, only when both sides' contexts are equal)."""
    if len(current) != len(blessed):
        raise ValueError(f"{len(current)} current examples but {len(blessed)} blessed ones")
    before = detect_side(blessed, chosen)
    context = side_context([example.output for example in current])
    same_context = context == side_context([example.output for example in blessed])
    unchanged = [
        now.output == then.output
        and now.source == then.source
        and now.references == then.references
        for now, then in zip(current, blessed, strict=True)
    ]
    found: list[dict[str, str] | None] = [None] * len(current)
    for detector in chosen:
        name = detector.name
        reuse = getattr(detector, "same_when_unchanged", False) is True and (
            same_context or getattr(detector, "reads_context", False) is not True
        )
        for index, example in enumerate(current):
            if reuse and unchanged[index]:
                said = before.evidence[index].get(name)
            else:
                said = detector(example, context)
            if said is not None:
                slot = found[index]
                if slot is None:
                    slot = found[index] = {}
                slot[name] = said
    return _findings(found), before


# The evidence of every example without a finding: one shared, read-only empty mapping.
_NOTHING: Mapping[str, str] = MappingProxyType({})


def _findings(found: list[dict[str, str] | None]) -> Findings:
    return Findings(
        names=[tuple(slot) if slot else () for slot in found],
        evidence=[slot if slot else _NOTHING for slot in found],
    )
