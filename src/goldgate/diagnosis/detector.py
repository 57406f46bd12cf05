"""The detector contract: what a failure-mode detector receives and what it answers.

A detector is a small, pure, deterministic and offline function of one example (its output,
input and references, and the other side's output where it needs one) and of statistics over
all outputs of the same side (``SideContext``, for modes only visible across examples, such as
many outputs stopping at the same length). It answers with evidence when the mode is present and
``None`` when it is not. Its ``name`` is part of the JSON contract; its ``version`` is recorded in
the result like a metric's signature, and changes whenever its answers may change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Example:
    """One output to diagnose, with what it is judged against."""

    output: str
    source: str | None
    references: tuple[str, ...]
    # The same example's output on the other side, when known: for the current output, the
    # blessed one (None when the baseline kept no outputs); for the blessed output, None.
    blessed: str | None = None


@dataclass(frozen=True, slots=True)
class SideContext:
    """Statistics over every output of one side (current or blessed) of one suite."""

    # How many outputs have each whitespace-token count; a spike reveals a length cap.
    token_counts: Mapping[int, int] = field(default_factory=dict)
    size: int = 0
    # The token counts at which outputs pile up far above their neighbours: a length cap
    # (``detect.length_caps``); ``side_context`` fills it from ``token_counts``.
    length_caps: frozenset[int] = frozenset()


class Detector(Protocol):
    """One failure mode: present (with a short piece of evidence) or absent.

    Two optional attributes let ``detect.detect_sides`` skip work (a detector without them is
    simply called on every example): ``same_when_unchanged = True`` promises that an example
    whose current output equals its blessed one gets the same answer on both sides (so the
    blessed side's is reused), and ``reads_context = True`` limits that promise to sides
    whose ``SideContext`` is equal. A detector that reads the context may name, in
    ``presence_reads``, the ``SideContext`` fields whether it fires depends on (its evidence
    may read more): where only presence counts (the run's bit masks), equal values of those
    fields are enough.
    """

    name: str
    version: int

    def __call__(self, example: Example, context: SideContext) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Findings:
    """What the detectors found on one side of one suite, in the order of its examples."""

    # Per example, the names of the modes present (detector order), and their evidence.
    names: Sequence[tuple[str, ...]]
    evidence: Sequence[Mapping[str, str]]
