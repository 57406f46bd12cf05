"""``repetition``: a span of the output loops where the references do not.

Present when the same n-gram (one to ``MAX_PERIOD`` words; characters for text written
without spaces, such as Chinese or Japanese) comes back to back at least three times (a single
word or character at least ``MIN_SINGLE`` times), or when a long output is made of very few
distinct words (the loop is not back to back). Not present when a reference repeats the same
span itself ("no, no, no").
"""

from __future__ import annotations

import re
from collections import Counter

from goldgate.diagnosis.detector import Example, SideContext
from goldgate.diagnosis.detectors._text import bounded, quote

#: The longest looping span looked for, in words (or characters).
MAX_PERIOD = 12
#: A span of two or more units must come this many times in a row.
MIN_REPEATS = 3
#: One word (or character) must come this many times in a row.
MIN_SINGLE = 4
#: Outputs of at least this many words whose distinct words are fewer than ``MIN_DISTINCT`` of
#: them are loops too, when the references are not.
LONG = 40
MIN_DISTINCT = 0.3

_PUNCT = ".,;:!?\"'()[]«»“”‘’„‚-–—。，、！？：；（）"


_UNIT = re.compile(
    r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af\u0e00-\u0e7f]|[^\s\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af\u0e00-\u0e7f]+"
)


def _units(text: str) -> list[str]:
    """Words, lowercased without surrounding punctuation; each character of a script written
    without spaces (Chinese, Japanese, Korean, Thai) on its own."""
    words = text.split() if text.isascii() else _UNIT.findall(text)
    return [word.strip(_PUNCT).lower() or word for word in words]


def _loop(units: list[str]) -> tuple[int, int, int] | None:
    """``(start, period, repeats)`` of the first loop, or None. Only words that come at
    least three times can start one, and only at a gap that comes twice in a row."""
    if len(units) < MIN_SINGLE:
        return None
    counts = Counter(units)
    best: tuple[int, int, int] | None = None
    for unit, count in counts.items():
        if count < MIN_REPEATS or not any(char.isalnum() for char in unit):
            continue
        positions = [index for index, other in enumerate(units) if other == unit]
        found = _from(units, positions)
        if found is not None and (best is None or found[0] < best[0]):
            best = found
    return best


def _from(units: list[str], positions: list[int]) -> tuple[int, int, int] | None:
    for k, start in enumerate(positions[:-2]):
        for later in positions[k + 1 :]:
            gap = later - start
            if gap > MAX_PERIOD:
                break
            span = units[start : start + gap]
            end = start + gap
            while units[end : end + gap] == span:
                end += gap
            repeats = (end - start) // gap
            if repeats >= (MIN_SINGLE if gap == 1 else MIN_REPEATS):
                return start, gap, repeats
    return None


def _sparse(units: list[str]) -> bool:
    return len(units) >= LONG and len(set(units)) < MIN_DISTINCT * len(units)


class Repetition:
    name = "repetition"
    version = 1

    def __call__(self, example: Example, context: SideContext) -> str | None:
        units = _units(example.output)
        found = _loop(units)
        if found is not None:
            start, period, repeats = found
            span = units[start : start + period]
            joiner = "" if all(len(unit) == 1 and not unit.isascii() for unit in span) else " "
            phrase = joiner.join(span)
            for reference in example.references:
                if phrase and (phrase + joiner) * 2 + phrase in joiner.join(_units(reference)):
                    return None
            return bounded(f"{quote(phrase, 30)} ×{repeats}")
        if _sparse(units) and not any(_sparse(_units(ref)) for ref in example.references):
            distinct = len(set(units))
            return bounded(f"{distinct} distinct words in {len(units)}")
        return None


REPETITION = Repetition()
