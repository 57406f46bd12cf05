"""``repetition``: a span of the output loops where the references do not.

Present when the same n-gram (one to ``MAX_PERIOD`` words; characters for text written
without spaces, such as Chinese or Japanese) comes back to back at least three times (a single
word or character at least ``MIN_SINGLE`` times), or when a long output is made of very few
distinct words (the loop is not back to back). Not present when a reference repeats the same
span itself ("no, no, no").
"""

from __future__ import annotations

import itertools
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

# Scripts written without spaces: Hiragana, Katakana, CJK ideographs, Hangul syllables, Thai.
_NO_SPACES = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af\u0e00-\u0e7f"
_UNIT = re.compile(rf"[{_NO_SPACES}]|[^\W_{_NO_SPACES}]+")
_ASCII_UNIT = re.compile(r"[a-z0-9]+")


def _units(text: str) -> list[str]:
    """Lowercased words (runs of letters and digits; punctuation is no unit), each character
    of a script written without spaces (Chinese, Japanese, Korean, Thai) on its own."""
    lowered = text.lower()
    return (_ASCII_UNIT if lowered.isascii() else _UNIT).findall(lowered)


def _loop(units: list[str]) -> tuple[int, int, int] | None:
    """``(start, period, repeats)`` of the first loop, or None. Only words that come at
    least three times can start one, and only at a gap that comes twice in a row."""
    if len(units) - len(set(units)) < MIN_REPEATS - 1:
        return None  # a loop repeats at least two units
    counts = Counter(units)
    if max(counts.values()) < MIN_REPEATS:
        return None
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
    same_when_unchanged = True

    def __call__(self, example: Example, context: SideContext) -> str | None:
        output = example.output
        if output.isascii():
            # Quick test on plain words (punctuation attached): a loop repeats words at least
            # twice over and some word pair; a sparse output has few distinct words (half, so).
            words = output.lower().split()
            distinct = len(set(words))
            may_loop = len(words) - distinct >= MIN_REPEATS - 1 and len(words) - 1 > len(
                set(itertools.pairwise(words))
            )
            if not may_loop and (len(words) < LONG or distinct >= 0.5 * len(words)):
                return None
        units = _units(output)
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
