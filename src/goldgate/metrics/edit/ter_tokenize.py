"""sacrebleu 2.6's ``TercomTokenizer``: Tercom's normaliser, rule for rule.

The regular expressions are sacrebleu's, run with the standard ``re`` module as sacrebleu runs
them (some look odd, such as ``^`` inside a group in the kana rules; they are kept as they are,
because changing them would change the numbers).
"""

from __future__ import annotations

import re
from typing import Final

_ASIAN_PUNCT: Final = r"([\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb])"
_FULL_WIDTH_PUNCT: Final = r"([\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09])"

_Rule = tuple["re.Pattern[str]", str]


def _rules(*pairs: tuple[str, str]) -> tuple[_Rule, ...]:
    return tuple((re.compile(pattern), replacement) for pattern, replacement in pairs)


_GENERAL_BEFORE: Final = _rules(
    (r"\n-", ""),  # strip end-of-line hyphenation and join lines
    (r"\n", " "),
    (r"&quot;", '"'),
    (r"&amp;", "&"),
    (r"&lt;", "<"),
    (r"&gt;", ">"),
)
_WESTERN: Final = _rules(
    (r"([{-~[-` -&(-+:-@/])", r" \1 "),  # punctuation
    (r"'s ", r" 's "),  # possessives
    (r"'s$", r" 's"),
    (r"([^0-9])([\.,])", r"\1 \2 "),  # period and comma unless preceded by a digit
    (r"([\.,])([^0-9])", r" \1 \2"),  # ... unless followed by a digit
    (r"([0-9])(-)", r"\1 \2 "),  # dash after a digit
)
_ASIAN: Final = _rules(
    (r"([\u4e00-\u9fff\u3400-\u4dbf])", r" \1 "),
    (r"([\u31c0-\u31ef\u2e80-\u2eff])", r" \1 "),
    (r"([\u3300-\u33ff\uf900-\ufaff\ufe30-\ufe4f])", r" \1 "),
    (r"([\u3200-\u3f22])", r" \1 "),
    (r"(^|^[\u3040-\u309f])([\u3040-\u309f]+)(?=$|^[\u3040-\u309f])", r"\1 \2 "),
    (r"(^|^[\u30a0-\u30ff])([\u30a0-\u30ff]+)(?=$|^[\u30a0-\u30ff])", r"\1 \2 "),
    (r"(^|^[\u31f0-\u31ff])([\u31f0-\u31ff]+)(?=$|^[\u31f0-\u31ff])", r"\1 \2 "),
    (_ASIAN_PUNCT, r" \1 "),
    (_FULL_WIDTH_PUNCT, r" \1 "),
)
_PUNCT: Final = _rules((r"[\.,\?:;!\"\(\)]", ""))
_ASIAN_PUNCT_REMOVAL: Final = _rules((_ASIAN_PUNCT, ""), (_FULL_WIDTH_PUNCT, ""))


def _apply(text: str, rules: tuple[_Rule, ...]) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


class TercomTokenizer:
    """``TercomTokenizer(normalized, no_punct, asian_support, case_sensitive)(text)``."""

    __slots__ = ("asian_support", "case_sensitive", "no_punct", "normalized")

    def __init__(
        self,
        *,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
    ) -> None:
        self.normalized = normalized
        self.no_punct = no_punct
        self.asian_support = asian_support
        self.case_sensitive = case_sensitive

    def __call__(self, text: str) -> str:
        """The normalised text, tokens joined by single spaces."""
        if not text:
            return ""
        if not self.case_sensitive:
            text = text.lower()
        if self.normalized:
            text = _apply(text, _GENERAL_BEFORE)
            text = _apply(f" {text} ", _WESTERN)
            if self.asian_support:
                text = _apply(text, _ASIAN)
        if self.no_punct:
            text = _apply(text, _PUNCT)
            if self.asian_support:
                text = _apply(text, _ASIAN_PUNCT_REMOVAL)
        return " ".join(text.split())
