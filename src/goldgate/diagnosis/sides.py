"""Run the detectors over both sides of a suite into bit masks: one integer an example and
side (bit i: detector i present), not a list of names or a dict of evidence an example.

The current side is every example's output (its first sample); the blessed side is the
blessed output of each example that has one, judged against the same record. Each side's
:class:`~goldgate.diagnosis.detector.SideContext` is computed over that side's outputs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from goldgate.diagnosis.detect import side_context
from goldgate.diagnosis.detector import Detector, Example, SideContext
from goldgate.errors import ConfigError

#: a mask holds one bit per detector
MAX_DETECTORS = 64

Masks = npt.NDArray[np.uint64]


@dataclass(frozen=True)
class SideMasks:
    """Both sides' masks of one suite, aligned with its examples."""

    current: Masks
    baseline: Masks
    #: whether the example has a blessed output (diagnosed on the blessed side)
    has_baseline: npt.NDArray[np.bool_]


def source_text(value: Any) -> str | None:
    """A golden input as the text a detector reads (a structured input as canonical JSON)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


#: examples turned into ``Example`` objects at a time (a million at once would cost ~300 MB)
_CHUNK = 4096

Texts = Iterable[tuple[str, str | None, Any, Sequence[str]]]


def _apply(
    examples: Sequence[Example],
    chosen: Sequence[Detector],
    context: SideContext,
    *,
    reused: int = 0,
    unchanged: npt.NDArray[np.bool_] | None = None,
    before: Masks | None = None,
) -> Masks:
    """The examples' masks. For each detector whose bit is in ``reused``, an ``unchanged``
    example (its output equal to its blessed one) takes that bit from ``before`` (the blessed
    side's masks of the same examples) instead of calling the detector again."""
    masks = np.zeros(len(examples), dtype=np.uint64)
    changed: list[int] | None = None
    if unchanged is not None and before is not None and reused:
        changed = np.flatnonzero(~unchanged).tolist()
        masks |= np.where(unchanged, before & np.uint64(reused), np.uint64(0)).astype(np.uint64)
    for bit, detector in enumerate(chosen):
        if changed is not None and reused >> bit & 1:
            hits = [i for i in changed if detector(examples[i], context) is not None]
        else:
            hits = [i for i, ex in enumerate(examples) if detector(ex, context) is not None]
        if hits:
            masks[np.asarray(hits, dtype=np.intp)] |= np.uint64(1 << bit)
    return masks


def _reusable(chosen: Sequence[Detector], current: SideContext, blessed: SideContext) -> int:
    """The bits of the detectors whose blessed answer holds for an unchanged output: those
    that promise ``same_when_unchanged``, and of those that read the side's context, only
    when what they read of it (``presence_reads``, else all of it) is equal on both sides."""
    bits = 0
    for bit, detector in enumerate(chosen):
        if getattr(detector, "same_when_unchanged", False) is not True:
            continue
        if getattr(detector, "reads_context", False) is True:
            fields = getattr(detector, "presence_reads", None)
            if fields is None:
                if current != blessed:
                    continue
            elif any(getattr(current, f) != getattr(blessed, f) for f in fields):
                continue
        bits |= 1 << bit
    return bits


def diagnose_sides(
    texts: Callable[[], Texts],
    n: int,
    chosen: Sequence[Detector],
    *,
    blessed_masks: Masks | None = None,
    outputs_only: Callable[[], Iterable[tuple[str, str | None]]] | None = None,
    texts_at: Callable[[Sequence[int]], Texts] | None = None,
) -> SideMasks:
    """Both sides' masks; ``texts()`` gives each example's (output, blessed output, input,
    references), in order, afresh each time it is called (it is read twice: once for each
    side's context, once to diagnose a chunk of examples at a time).

    ``blessed_masks`` (the blessed side diagnosed before, aligned with the examples) is used
    instead of diagnosing the blessed outputs again. ``outputs_only()`` (when given) gives
    each example's (output, blessed output) alone, for the first reading. ``texts_at(at)``
    (when given) gives the texts of the examples at the positions ``at`` alone, in order:
    with ``blessed_masks`` and every answer of an unchanged output reusable, only the
    examples whose output changed are read again.
    """
    if len(chosen) > MAX_DETECTORS:
        raise ConfigError(f"at most {MAX_DETECTORS} detectors may run, got {len(chosen)}")
    outputs: list[str] = []
    blessed_outputs: list[str] = []
    has = np.zeros(n, dtype=bool)
    unchanged = np.zeros(n, dtype=bool)
    pairs = outputs_only() if outputs_only is not None else ((t[0], t[1]) for t in texts())
    for index, (output, old) in enumerate(pairs):
        outputs.append(output)
        if old is not None:
            has[index] = True
            unchanged[index] = old == output
            blessed_outputs.append(old)
    if len(outputs) != n:
        raise ValueError(f"expected {n} examples, got {len(outputs)}")
    current_context = side_context(outputs)
    del outputs
    diagnose_blessed = blessed_masks is None and bool(blessed_outputs)
    # the blessed side's context: to diagnose it, and (cached or not) to know which of its
    # answers an unchanged output may take
    blessed_context = side_context(blessed_outputs) if blessed_outputs else SideContext()
    del blessed_outputs
    # An output equal to its blessed one (most of them, run after run) takes the blessed
    # side's answers: from this run's blessed masks or from the cached ones.
    known = diagnose_blessed or blessed_masks is not None
    reused = _reusable(chosen, current_context, blessed_context) if known else 0
    if blessed_masks is not None and texts_at is not None and reused == (1 << len(chosen)) - 1:
        return _changed_only(texts_at, chosen, current_context, blessed_masks, has, unchanged)
    current = np.zeros(n, dtype=np.uint64)
    baseline = np.zeros(n, dtype=np.uint64)
    chunk: list[Example] = []
    old_chunk: list[Example] = []
    old_at: list[int] = []
    start = 0

    def flush() -> None:
        nonlocal start
        end = start + len(chunk)
        if old_chunk:
            baseline[np.asarray(old_at, dtype=np.intp)] = _apply(old_chunk, chosen, blessed_context)
        before = baseline if blessed_masks is None else blessed_masks
        current[start:end] = _apply(
            chunk,
            chosen,
            current_context,
            reused=reused,
            unchanged=unchanged[start:end],
            before=before[start:end],
        )
        start = end
        chunk.clear()
        old_chunk.clear()
        old_at.clear()

    for index, (output, old, raw_input, references) in enumerate(texts()):
        source = source_text(raw_input)
        refs = tuple(references)
        chunk.append(Example(output, source, refs, old))
        if old is not None and diagnose_blessed:
            old_chunk.append(Example(old, source, refs, None))
            old_at.append(index)
        if len(chunk) == _CHUNK:
            flush()
    if chunk:
        flush()
    if blessed_masks is not None:
        baseline = np.where(has, blessed_masks, np.uint64(0)).astype(np.uint64)
    return SideMasks(current, baseline, has)


def _changed_only(
    texts_at: Callable[[Sequence[int]], Texts],
    chosen: Sequence[Detector],
    context: SideContext,
    blessed_masks: Masks,
    has: npt.NDArray[np.bool_],
    unchanged: npt.NDArray[np.bool_],
) -> SideMasks:
    """Both sides when the blessed side is known and every detector's answer holds for an
    unchanged output: the unchanged take the blessed masks, the others are diagnosed."""
    baseline = np.where(has, blessed_masks, np.uint64(0)).astype(np.uint64)
    current = np.where(unchanged, baseline, np.uint64(0)).astype(np.uint64)
    changed = np.flatnonzero(~unchanged)
    for start in range(0, len(changed), _CHUNK):
        at = changed[start : start + _CHUNK]
        chunk = [
            Example(output, source_text(raw_input), tuple(references), old)
            for output, old, raw_input, references in texts_at(at.tolist())
        ]
        if len(chunk) != len(at):
            raise ValueError(f"expected {len(at)} examples, got {len(chunk)}")
        current[at] = _apply(chunk, chosen, context)
    return SideMasks(current, baseline, has)
