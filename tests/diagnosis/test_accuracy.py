"""The built-in detectors on the labelled set of synthetic regressions (``labelled``, built in
memory): per mode, precision at least 0.95 and recall at least 0.90.

The set has two parts: goldgate's own sentences in French, Spanish, Russian and Japanese
(always there) and the real outputs of the shared data (English, German, Chinese; only where
``../shared/data`` is). The floors hold on whatever is available and on the own part alone.
"""

from __future__ import annotations

from collections import Counter

import pytest

from goldgate.diagnosis.registry import builtin_detector_names
from tests.diagnosis.labelled import load, own, score, shared, shared_available

PRECISION = 0.95
RECALL = 0.90
#: Each language of the own sentences has at least this many rows.
OWN_ROWS = 25


def test_the_own_sentences_cover_every_mode_in_four_languages() -> None:
    rows = own()
    languages = Counter(str(row["lang"]) for row in rows)
    assert set(languages) == {"fr", "es", "ru", "ja"}
    assert min(languages.values()) >= OWN_ROWS, languages
    assert sum(1 for row in rows if not row["labels"]) >= 60  # unchanged controls
    positives = Counter(name for row in rows for name in row["labels"])  # type: ignore[attr-defined]
    for name in builtin_detector_names():
        assert positives[name] >= 16, name
    # Several modes in every language, controls included.
    for lang in languages:
        kinds = {str(row["kind"]) for row in rows if row["lang"] == lang}
        assert {"control", "empty", "truncated", "repetition", "refusal"} <= kinds, lang
        assert {"language_switch", "copied_input", "number_change", "format_break"} <= kinds


def test_the_labelled_set_is_built_the_same_every_time() -> None:
    from tests.diagnosis.own_labelled import build_own

    assert build_own() == own()


def test_the_full_set_covers_every_mode_in_seven_languages() -> None:
    if not shared_available():
        pytest.skip("no shared data beside the repository (../shared/data): own sentences only")
    rows = load()
    assert len(shared()) > 600
    regressions = [row for row in rows if row["labels"]]
    assert len(regressions) >= 300
    assert sum(1 for row in rows if not row["labels"]) >= 100  # unchanged controls
    languages = Counter(str(row["lang"]) for row in rows)
    assert {lang for lang, count in languages.items() if count >= OWN_ROWS} >= {
        "en",
        "de",
        "zh",
        "fr",
        "es",
        "ru",
        "ja",
    }
    positives = Counter(name for row in rows for name in row["labels"])  # type: ignore[attr-defined]
    for name in builtin_detector_names():
        assert positives[name] >= 40, name


@pytest.mark.parametrize("name", builtin_detector_names())
def test_precision_and_recall_floor(name: str) -> None:
    """On every row available here: with the shared data, both parts together."""
    result = score(load())[name]
    assert result.precision >= PRECISION, (name, result.false)
    assert result.recall >= RECALL, (name, result.missed)


@pytest.mark.parametrize("name", builtin_detector_names())
def test_precision_and_recall_floor_on_the_own_sentences(name: str) -> None:
    result = score(own())[name]
    assert result.precision >= PRECISION, (name, result.false)
    assert result.recall >= RECALL, (name, result.missed)
