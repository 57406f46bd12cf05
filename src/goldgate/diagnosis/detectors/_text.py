"""Small text helpers the built-in detectors share: bounded evidence, sentence ends, words."""

from __future__ import annotations

import re

#: Evidence text is shown in terminals and reports: never longer than this many characters.
EVIDENCE_MAX = 80

# A sentence ends with one of these, possibly followed by closing quotes or brackets.
_TERMINALS = frozenset(".!?。！？…‼⁉؟।")
_CLOSERS = "\"'”’»)]}）】」』`"

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
WORD = re.compile(r"[^\W\d_]+")
DIGIT = re.compile(r"\d")


def quote(text: str, limit: int = 24) -> str:
    """``text`` made safe and short for evidence: control and bidi characters become spaces,
    runs of space collapse, and a long text keeps its ends around an ellipsis."""
    text = " ".join(_UNPRINTABLE.sub(" ", text).split())
    if len(text) > limit:
        half = (limit - 1) // 2
        text = text[:half] + "…" + text[len(text) - half :]
    return f"'{text}'"


def bounded(evidence: str) -> str:
    """Evidence cut to ``EVIDENCE_MAX`` characters."""
    evidence = _UNPRINTABLE.sub(" ", evidence)
    if len(evidence) <= EVIDENCE_MAX:
        return evidence
    return evidence[: EVIDENCE_MAX - 1] + "…"


def ends_sentence(text: str) -> bool:
    """Whether ``text`` (right-stripped) ends with sentence-final punctuation, possibly inside
    closing quotes or brackets."""
    if text and text[-1] in _TERMINALS:
        return True
    text = text.rstrip().rstrip(_CLOSERS).rstrip()
    return bool(text) and text[-1] in _TERMINALS
