"""The labelled set of synthetic regressions, built in memory, and the built-in detectors'
scores on it.

Two parts: rows from goldgate's own sentences (``own_labelled``: English→French, Spanish,
Russian, Japanese; always there) and rows from the real outputs of the shared data
(``make_labelled``: WMT21, SummEval, SQuAD; only where ``../shared/data`` is, since its texts
may not be copied into the repository). Each part is built once per process, in well under a
second; nothing is written to disk. To read the rows, dump them to a file of your choosing
outside the repository:

    python -m tests.diagnosis.labelled --out /tmp/labelled.jsonl
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from goldgate.diagnosis.detect import detect_side
from goldgate.diagnosis.detector import Example
from goldgate.diagnosis.registry import builtin_detector_names, detectors
from tests.diagnosis import make_labelled
from tests.diagnosis.own_labelled import build_own

Row = dict[str, object]
ROOT = Path(__file__).resolve().parents[2]


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


def shared_available() -> bool:
    """Whether the shared data sits beside the repository (it does not on a user's clone)."""
    return make_labelled.DATA.is_dir()


@functools.cache
def _own() -> tuple[Row, ...]:
    return tuple(build_own())


@functools.cache
def _shared() -> tuple[Row, ...]:
    return tuple(make_labelled.build_shared())


def own() -> list[Row]:
    """The rows of goldgate's own sentences (copies: callers may change them)."""
    return [dict(row) for row in _own()]


def shared() -> list[Row]:
    """The rows of the shared data; empty when it is absent."""
    return [dict(row) for row in _shared()] if shared_available() else []


def load() -> list[Row]:
    """Every row available here: the own sentences' and, with the shared data, its rows."""
    return own() + shared()


def detected(rows: list[Row]) -> list[tuple[str, ...]]:
    """The built-in modes found on each row's current output, suite by suite (a suite's
    outputs share a ``SideContext``), in the order of ``rows``."""
    suites: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        suites[str(row["suite"])].append(index)
    chosen = detectors()
    found: list[tuple[str, ...]] = [()] * len(rows)
    for members in suites.values():
        examples = [
            Example(
                output=str(rows[i]["output"]),
                source=rows[i]["source"] if isinstance(rows[i]["source"], str) else None,
                references=tuple(rows[i]["references"]),  # type: ignore[call-overload]
                blessed=rows[i]["blessed"] if isinstance(rows[i]["blessed"], str) else None,
            )
            for i in members
        ]
        findings = detect_side(examples, chosen)
        for i, names in zip(members, findings.names, strict=True):
            found[i] = tuple(names)
    return found


def score(rows: list[Row], found: list[tuple[str, ...]] | None = None) -> dict[str, Score]:
    """Per built-in mode: its positives, hits, false alarms and misses on the current side."""
    if found is None:
        found = detected(rows)
    scores = {name: Score() for name in builtin_detector_names()}
    for row, names in zip(rows, found, strict=True):
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


def score_by_language(rows: list[Row]) -> dict[str, dict[str, Score]]:
    """``score`` for the rows of each language (of the expected output), detected together."""
    found = detected(rows)
    languages: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        languages[str(row["lang"])].append(index)
    return {
        lang: score([rows[i] for i in members], [found[i] for i in members])
        for lang, members in sorted(languages.items())
    }


def main(argv: list[str] | None = None) -> int:
    """Dump the labelled rows available here (own sentences, and the shared data's when it is
    there) as JSON lines to ``--out``, for inspection; never into the repository."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--out", type=Path, required=True, help="a JSONL file outside the repo")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    if out.is_relative_to(ROOT):
        print(f"{out} is inside the repository: the shared texts may not be copied into it")
        return 2
    rows = load()
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    where = "with" if shared_available() else f"without (no {make_labelled.DATA})"
    print(f"{len(rows)} rows {where} the shared data, {out.stat().st_size:,} bytes -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
