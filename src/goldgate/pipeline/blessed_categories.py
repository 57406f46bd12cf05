"""The blessed side's failure modes, found once at bless time and kept with a large suite's
packed examples.

A run diagnoses both sides of every example; on a fresh checkout (a CI job) nothing is cached,
and at a million examples diagnosing the blessed outputs again would cost a run about a third
of its time. ``goldgate bless`` already holds those outputs: it finds their categories once
and stores them (one 8-byte mask an example, zlib-compressed: almost all zero) beside the
packed outputs. A run takes them when its detectors and golden set are the ones they were
found with, and diagnoses afresh otherwise: the same answers either way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from goldgate.diagnosis.chosen import chosen_detectors, detector_identity
from goldgate.diagnosis.detector import Detector
from goldgate.diagnosis.sides import Masks, diagnose_sides
from goldgate.model.baseline import PackedCategories, SuiteBaseline
from goldgate.model.config import Config
from goldgate.model.packed import pack_bytes
from goldgate.pipeline.score import ScoredSuite


def configured_detectors(config: Config) -> tuple[Detector, ...] | None:
    """The detectors the configuration runs; None with ``diagnose: off``."""
    settings = config.diagnose
    if settings is None:
        return None
    return chosen_detectors(
        disable=settings.disable,
        extra=settings.detectors,
        length_drift=settings.length_drift.model_dump(exclude_none=True),
    )


def scored_texts(
    scored: ScoredSuite, blessed: Callable[[str], Sequence[str] | None] | None
) -> Iterator[tuple[str, str | None, Any, Sequence[str]]]:
    """What the detectors read of a scored suite, in golden order: each example's output
    (its first sample), its blessed output (from ``blessed``: id → blessed outputs), its
    input and references."""
    for record in scored.golden.records:
        old = blessed(record.id) if blessed is not None else None
        yield scored.outputs[record.id][0], old[0] if old else None, record.input, record.references


def with_blessed_categories(
    config: Config, scored: ScoredSuite, suite: SuiteBaseline
) -> SuiteBaseline:
    """``suite`` (a fresh bless of ``scored``) with its outputs' categories, when it is
    packed and the configuration diagnoses."""
    packed = suite.packed
    if packed is None:
        return suite
    chosen = configured_detectors(config)
    if chosen is None:
        return suite
    # each output judged as the blessed side is: with no other side to compare with
    texts = functools.partial(scored_texts, scored, None)
    masks = diagnose_sides(texts, len(scored.golden.records), chosen).current
    sha256, data = pack_bytes(masks.astype("<u8").tobytes())
    categories = PackedCategories(
        sha256=sha256,
        data=data,
        detectors=[detector_identity(d) for d in chosen],
        golden_hash=suite.golden_hash,
    )
    return suite.model_copy(update={"packed": packed.model_copy(update={"categories": categories})})


def stored_masks(
    stored: PackedCategories | None, chosen: Sequence[Detector], golden_hash: str, n: int
) -> Masks | None:
    """The blessed side's masks stored at bless time (for ``n`` blessed examples), when
    they were found by ``chosen`` against today's golden set of ``n`` examples (whose ids
    are then the same, in the same order); None otherwise."""
    if stored is None:
        return None
    raw = stored.masks(n, [detector_identity(d) for d in chosen], golden_hash)
    if raw is None:
        return None
    masks: Masks = np.frombuffer(raw, dtype="<u8").astype(np.uint64)
    return masks


__all__ = ["configured_detectors", "scored_texts", "stored_masks", "with_blessed_categories"]
