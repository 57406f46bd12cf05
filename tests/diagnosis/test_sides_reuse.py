"""An unchanged output takes the blessed side's answers (``same_when_unchanged``) and the
run's masks are exactly what calling every detector on every output gives."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from goldgate.diagnosis.detector import Detector, Example, SideContext
from goldgate.diagnosis.registry import detectors
from goldgate.diagnosis.sides import diagnose_sides


class _Plain:
    """A detector without the promises: called on every output."""

    def __init__(self, inner: Detector) -> None:
        self.name = inner.name
        self.version = inner.version
        self._inner = inner

    def __call__(self, example: Example, context: SideContext) -> str | None:
        return self._inner(example, context)


class _Counting(_Plain):
    def __init__(self, inner: Detector) -> None:
        super().__init__(inner)
        self.calls = 0
        for attribute in ("same_when_unchanged", "reads_context", "presence_reads"):
            if hasattr(inner, attribute):
                setattr(self, attribute, getattr(inner, attribute))

    def __call__(self, example: Example, context: SideContext) -> str | None:
        self.calls += 1
        return self._inner(example, context)


def _rows(seed: int, n: int, capped: bool) -> list[tuple[str, str | None, Any, Sequence[str]]]:
    rng = random.Random(seed)
    words: tuple[str, ...] = ("the", "train", "leaves", "at", "eight", "from", "platform", "two")
    words += ("and", "arrives", "in", "Berlin", "at", "ten")
    rows: list[tuple[str, str | None, Any, Sequence[str]]] = []
    for i in range(n):
        reference = " ".join(rng.choice(words) for _ in range(rng.randint(3, 14))) + "."
        blessed = reference if rng.random() < 0.7 else reference.upper()
        roll = rng.random()
        if roll < 0.6:
            output = blessed  # unchanged
        elif roll < 0.7:
            output = ""
        elif roll < 0.8:
            output = " ".join(reference.split()[: max(1, len(reference.split()) - 3)])
        elif roll < 0.9:
            output = "I'm sorry, but I can't help with that request."
        else:
            output = f"{reference} {reference} {reference} {i * 7}"
        if capped and i % 4 == 0:  # many outputs cut at one length on the current side
            output = " ".join((reference + " and then some more words here").split()[:8])
        rows.append((output, blessed if i % 10 else None, f"Quelle {i}", (reference,)))
    return rows


@pytest.mark.parametrize(("seed", "capped"), [(1, False), (2, True), (3, False)])
def test_reused_answers_equal_calling_every_detector(seed: int, capped: bool) -> None:
    chosen = detectors()
    rows = _rows(seed, 600, capped)
    counting = [_Counting(d) for d in chosen]
    fast = diagnose_sides(lambda: iter(rows), len(rows), counting)
    # a promising detector is called once a blessed output and once a changed current one
    changed = sum(output != blessed for output, blessed, _, _ in rows)
    blessed_sides = sum(blessed is not None for _, blessed, _, _ in rows)
    assert next(d for d in counting if d.name == "empty").calls == blessed_sides + changed
    slow = diagnose_sides(lambda: iter(rows), len(rows), [_Plain(d) for d in chosen])
    assert np.array_equal(fast.current, slow.current), seed
    assert np.array_equal(fast.baseline, slow.baseline), seed
    # the cached blessed masks give the same answers too
    cached = diagnose_sides(
        lambda: iter(rows), len(rows), counting, blessed_masks=fast.baseline.copy()
    )
    assert np.array_equal(cached.current, slow.current), seed
    # and reading again only the examples whose output changed (texts_at) gives them too
    read: list[int] = []

    def texts_at(at: Sequence[int]) -> list[tuple[str, str | None, Any, Sequence[str]]]:
        read.extend(at)
        return [rows[i] for i in at]

    known = diagnose_sides(
        lambda: iter(rows), len(rows), chosen, blessed_masks=fast.baseline.copy(), texts_at=texts_at
    )
    assert np.array_equal(known.current, slow.current), seed
    assert np.array_equal(known.baseline, slow.baseline), seed
    if not capped:  # (with a length cap on one side only, truncated is asked again)
        assert read == [i for i, (out, old, _, _) in enumerate(rows) if out != old]
