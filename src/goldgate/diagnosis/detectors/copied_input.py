"""``copied_input``: the output repeats the input (or most of it) instead of answering.

Present when the output covers at least ``COVER`` of the input's word pairs (character pairs
for text written without spaces) while no reference covers more than ``REFERENCE_COVER`` of
them: a task whose right answers restate the input (paraphrase, correction) is not flagged.
Inputs shorter than ``MIN_WORDS`` words are not compared.
"""

from __future__ import annotations

import itertools
import re

from goldgate.diagnosis.detector import Example, SideContext
from goldgate.diagnosis.detectors._text import bounded

#: The share of the input's word pairs the output must repeat.
COVER = 0.8
#: A reference repeating more than this share of them makes repeating right.
REFERENCE_COVER = 0.5
#: Inputs shorter than this many words (or characters, without spaces) are not compared.
MIN_WORDS = 4

_TOKEN = re.compile(r"\w+")
# Characters in each piece that the quick test looks for.
_PIECE = 4


def _pairs(text: str) -> set[tuple[str, str]]:
    tokens = _TOKEN.findall(text.lower())
    if len(tokens) <= 2 and len(text) > 12:
        tokens = [char for char in text.lower() if char.isalnum()]
    return set(itertools.pairwise(tokens))


def _sampled(source: str, output: str) -> bool:
    """A cheap test before the full one: most of four short pieces of the input, taken at
    even steps, are in the output (as they are when it repeats most of the input)."""
    step = len(source) // 5
    if step < _PIECE:
        return True
    pieces = (source[at : at + _PIECE] for at in range(step, 5 * step, step))
    return sum(piece in output for piece in pieces) >= 3


def _cover(pairs: set[tuple[str, str]], text: str) -> float:
    return len(pairs & _pairs(text)) / len(pairs)


class CopiedInput:
    name = "copied_input"
    version = 1
    same_when_unchanged = True

    def __call__(self, example: Example, context: SideContext) -> str | None:
        source = example.source
        output = example.output
        if not source or len(output) < COVER * 0.5 * len(source):
            return None
        if not _sampled(source.lower(), output.lower()):
            return None
        pairs = _pairs(source)
        if len(pairs) < MIN_WORDS - 1:
            return None
        cover = _cover(pairs, output)
        if cover < COVER:
            return None
        if any(_cover(pairs, reference) > REFERENCE_COVER for reference in example.references):
            return None
        return bounded(f"repeats {cover:.0%} of the input")


COPIED_INPUT = CopiedInput()
