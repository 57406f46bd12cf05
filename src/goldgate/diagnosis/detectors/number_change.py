"""``number_change``: the output's numbers changed in a way its sources do not support.

Present when the output has numbers (amounts, dates, counts) found in neither the input, nor
the references, nor the blessed output; or when it drops numbers that both the references and
the blessed output have. Numbers compare by their digits, so ``1,000``, ``1.000`` and ``1000``
are one number, and so are ``05`` and ``5``; a small number written as a word in English,
German, French or Spanish ("two", "zwei", "deux", "dos") supports its digits. Needs the blessed
output: None on the blessed side, or when the baseline kept no outputs.
"""

from __future__ import annotations

import re

from goldgate.diagnosis.detector import Example, SideContext
from goldgate.diagnosis.detectors._text import DIGIT, bounded

_NUMBER = re.compile(r"\d+(?:[.,'\u00a0\u202f]\d{3})*(?:[.,]\d+)?")
_SEPARATORS = re.compile(r"[.,'\u00a0\u202f]")
#: At most this many numbers are named in the evidence.
SHOWN = 3

_WORDS = {
    1: "one eins ein eine un une uno una",
    2: "two zwei deux dos",
    3: "three drei trois tres",
    4: "four vier quatre cuatro",
    5: "five fünf cinq cinco",
    6: "six sechs seis",
    7: "seven sieben sept siete",
    8: "eight acht huit ocho",
    9: "nine neun neuf nueve",
    10: "ten zehn dix diez",
    11: "eleven elf onze once",
    12: "twelve zwölf douze doce",
}
_AS_WORDS = {str(number): frozenset(words.split()) for number, words in _WORDS.items()}
_WORD = re.compile(r"[^\W\d_]+")


def numbers(text: str) -> set[str]:
    """The numbers in ``text``, as digits without separators or leading zeros."""
    if not DIGIT.search(text):
        return set()
    found = set()
    for match in _NUMBER.findall(text):
        digits = _SEPARATORS.sub("", match).lstrip("0") or "0"
        try:
            found.add(str(int(digits)))  # Unicode digits (Arabic-Indic, full-width) as ASCII
        except ValueError:
            found.add(digits)
    return found


def _shown(found: set[str]) -> str:
    ordered = sorted(found, key=lambda number: (len(number), number))
    more = f" (+{len(ordered) - SHOWN})" if len(ordered) > SHOWN else ""
    return ", ".join(ordered[:SHOWN]) + more


class NumberChange:
    name = "number_change"
    version = 1
    same_when_unchanged = True

    def __call__(self, example: Example, context: SideContext) -> str | None:
        blessed = example.blessed
        output = example.output
        if blessed is None or output == blessed or not output.strip():
            return None
        if not DIGIT.search(output) and not DIGIT.search(blessed):
            return None
        current = numbers(output)
        before = numbers(blessed)
        if current == before:
            return None
        known = before.union(*map(numbers, example.references))
        if example.source:
            known |= numbers(example.source)
        new = current - known
        if new and any(number in _AS_WORDS for number in new):
            words = set(
                _WORD.findall(" ".join((*example.references, example.source or "")).lower())
            )
            new = {number for number in new if words.isdisjoint(_AS_WORDS.get(number, ()))}
        if new:
            return bounded(f"new numbers: {_shown(new)}")
        referenced = set().union(*map(numbers, example.references)) if example.references else set()
        dropped = (before & referenced) - current
        if dropped:
            return bounded(f"dropped numbers: {_shown(dropped)}")
        return None


NUMBER_CHANGE = NumberChange()
