"""Score the built-in detectors on ``labelled.jsonl`` (built by ``make_labelled``)."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from goldgate.diagnosis.detect import detect_side
from goldgate.diagnosis.detector import Example
from goldgate.diagnosis.registry import builtin_detector_names, detectors

LABELLED = Path(__file__).resolve().parent / "labelled.jsonl"


@dataclass
class Score:
    positives: int = 0
    true: int = 0
    false: list[str] = field(default_factory=list)  # ids that fired without the mode
    missed: list[str] = field(default_factory=list)  # ids with the mode that did not fire

    @property
    def precision(self) -> float:
        fired = self.true + len(self.false)
        return self.true / fired if fired else 1.0

    @property
    def recall(self) -> float:
        return self.true / self.positives if self.positives else 1.0


def load() -> list[dict[str, object]]:
    with LABELLED.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def score(rows: list[dict[str, object]]) -> dict[str, Score]:
    """Per built-in mode: its positives, hits, false alarms and misses on the current side."""
    suites: dict[str, list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        suites[str(row["suite"])].append(row)
    chosen = detectors()
    scores = {name: Score() for name in builtin_detector_names()}
    for members in suites.values():
        examples = [
            Example(
                output=str(row["output"]),
                source=row["source"] if isinstance(row["source"], str) else None,
                references=tuple(row["references"]),  # type: ignore[arg-type]
                blessed=row["blessed"] if isinstance(row["blessed"], str) else None,
            )
            for row in members
        ]
        findings = detect_side(examples, chosen)
        for row, names in zip(members, findings.names, strict=True):
            labels = set(row["labels"])  # type: ignore[call-overload]
            allowed = set(row["allowed"])  # type: ignore[call-overload]
            for name, result in scores.items():
                if name in labels:
                    result.positives += 1
                    if name in names:
                        result.true += 1
                    else:
                        result.missed.append(str(row["id"]))
                elif name in names and name not in allowed:
                    result.false.append(str(row["id"]))
    return scores
