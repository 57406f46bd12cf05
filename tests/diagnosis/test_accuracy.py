"""The built-in detectors on the labelled set of synthetic regressions of real outputs
(``labelled.jsonl``, built by ``make_labelled`` from the shared data): per mode, precision at
least 0.95 and recall at least 0.90."""

from __future__ import annotations

from collections import Counter

import pytest

from goldgate.diagnosis.registry import builtin_detector_names
from tests.diagnosis.labelled import load, score

PRECISION = 0.95
RECALL = 0.90


def test_the_labelled_set_covers_every_mode_in_four_languages() -> None:
    rows = load()
    regressions = [row for row in rows if row["labels"]]
    assert len(regressions) >= 300
    assert sum(1 for row in rows if not row["labels"]) >= 100  # unchanged controls
    assert len({row["lang"] for row in rows}) >= 4
    positives = Counter(name for row in rows for name in row["labels"])  # type: ignore[attr-defined]
    for name in builtin_detector_names():
        assert positives[name] >= 20, name


@pytest.mark.parametrize("name", builtin_detector_names())
def test_precision_and_recall_floor(name: str) -> None:
    result = score(load())[name]
    assert result.precision >= PRECISION, (name, result.false)
    assert result.recall >= RECALL, (name, result.missed)
