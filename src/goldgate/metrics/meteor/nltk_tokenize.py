"""NLTK 3.10's ``word_tokenize(text, preserve_line=True)``: its ``NLTKWordTokenizer`` (the
improved Penn Treebank rules), without NLTK.

The rules are NLTK's, in NLTK's order and with NLTK's engines: NLTK 3.10 runs most of them
through the third-party ``regex`` module (its ``nltk.redos``) and the contraction rules through
the standard ``re``; so does this copy, since the two engines can differ on Unicode.
``preserve_line=True`` means no Punkt sentence splitting (which needs NLTK's downloadable
models): a period inside a line stays on its word, as in NLTK with ``preserve_line=True``.

NLTK is Apache-2.0 (see THIRD_PARTY_NOTICES.md).
"""

from __future__ import annotations

import re
from typing import Final

import regex

_Rule = tuple["regex.Pattern[str]", str]

_STARTING_QUOTES: Final[list[_Rule]] = [
    (regex.compile("([«“‘„]|[`]+)", re.U), r" \1 "),
    (regex.compile(r"^\""), r"``"),
    (regex.compile(r"(``)"), r" \1 "),
    (regex.compile(r"([ \(\[{<])(\"|\'{2})"), r"\1 `` "),
    (regex.compile(r"(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)", re.U), r"\1 "),
]
_ENDING_QUOTES: Final[list[_Rule]] = [
    (regex.compile("([»”’])", re.U), r" \1 "),
    (regex.compile(r"''"), " '' "),
    (regex.compile(r'"'), " '' "),
    (regex.compile(r"\s+"), " "),
    (regex.compile(r"([^' ])('[sS]|'[mM]|'[dD]|') "), r"\1 \2 "),
    (regex.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 "),
]
_PUNCTUATION: Final[list[_Rule]] = [
    (regex.compile(r'([^\.])(\.)([\]\)}>"\'' "»”’ " r"]*+)\s*$", re.U), r"\1 \2 \3 "),
    (regex.compile(r"([:,])([^\d])"), r" \1 \2"),
    (regex.compile(r"([:,])$"), r" \1 "),
    (regex.compile(r"\.{2,}", re.U), r" \g<0> "),
    (regex.compile(r"[;@#$%&]"), r" \g<0> "),
    (regex.compile(r"[\u2012-\u2015]", re.UNICODE), r" \g<0> "),
    (regex.compile(r'([^\.])(\.)([\]\)}>"\']*)\s*$'), r"\1 \2\3 "),
    (regex.compile(r"[?!]"), r" \g<0> "),
    (regex.compile(r"([^'])' "), r"\1 ' "),
    (regex.compile(r"[*]", re.U), r" \g<0> "),
]
_PARENS_BRACKETS: Final[_Rule] = (regex.compile(r"[\]\[\(\)\{\}\<\>]"), r" \g<0> ")
_DOUBLE_DASHES: Final[_Rule] = (regex.compile(r"--"), r" -- ")
# MacIntyre's contractions (NLTK compiles these two lists with the standard ``re``).
_CONTRACTIONS2: Final = [
    re.compile(pattern)
    for pattern in (
        r"(?i)\b(can)(?#X)(not)\b",
        r"(?i)\b(d)(?#X)('ye)\b",
        r"(?i)\b(gim)(?#X)(me)\b",
        r"(?i)\b(gon)(?#X)(na)\b",
        r"(?i)\b(got)(?#X)(ta)\b",
        r"(?i)\b(lem)(?#X)(me)\b",
        r"(?i)\b(more)(?#X)('n)\b",
        r"(?i)\b(wan)(?#X)(na)(?=\s)",
    )
]
_CONTRACTIONS3: Final = [
    re.compile(pattern) for pattern in (r"(?i) ('t)(?#X)(is)\b", r"(?i) ('t)(?#X)(was)\b")
]


def nltk_word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize(text, preserve_line=True)``."""
    for pattern, substitution in _STARTING_QUOTES:
        text = pattern.sub(substitution, text)
    for pattern, substitution in _PUNCTUATION:
        text = pattern.sub(substitution, text)
    pattern, substitution = _PARENS_BRACKETS
    text = pattern.sub(substitution, text)
    pattern, substitution = _DOUBLE_DASHES
    text = pattern.sub(substitution, text)
    text = " " + text + " "
    for pattern, substitution in _ENDING_QUOTES:
        text = pattern.sub(substitution, text)
    for contraction in _CONTRACTIONS2:
        text = contraction.sub(r" \1 \2 ", text)
    for contraction in _CONTRACTIONS3:
        text = contraction.sub(r" \1 \2 ", text)
    return text.split()
