"""Run detectors over every output of one side (current or blessed) of a suite."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from goldgate.diagnosis.detector import Detector, Example, Findings, SideContext


def side_context(outputs: Sequence[str]) -> SideContext:
    """The statistics over all outputs of one side that detectors read."""
    counts = Counter(len(output.split()) for output in outputs)
    return SideContext(token_counts=dict(counts), size=len(outputs))


def detect_side(examples: Sequence[Example], chosen: Sequence[Detector]) -> Findings:
    """Each example's present modes (in detector order) and their evidence."""
    context = side_context([example.output for example in examples])
    names: list[tuple[str, ...]] = []
    evidence: list[dict[str, str]] = []
    for example in examples:
        found = {}
        for detector in chosen:
            said = detector(example, context)
            if said is not None:
                found[detector.name] = said
        names.append(tuple(found))
        evidence.append(found)
    return Findings(names=names, evidence=evidence)
