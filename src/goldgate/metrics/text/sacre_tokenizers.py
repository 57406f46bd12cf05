"""sacrebleu 2.6's BLEU tokenizers (``13a``, ``intl``, ``zh``, ``char``, ``none``), token for token.

``ja-mecab`` and ``ko-mecab`` are sacrebleu's too, but run MeCab (extras ``goldgate[ja]`` and
``goldgate[ko]``): see ``mecab_tokenizers``.

Each tokenizer returns the token list that sacrebleu's BLEU sees, i.e.
``sacrebleu_tokenizer(line).split()``. The regexes are sacrebleu's own; the speed-ups below
only skip passes that cannot match or replace a regex by an equivalent ``str`` operation, and
the differential tests in ``tests/metrics/test_sacre_tokenizers.py`` hold them to that.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any, Final, Literal

TokenizerName = Literal["13a", "intl", "zh", "char", "none", "ja-mecab", "ko-mecab"]
#: The tokenizers implemented here (the MeCab ones are in ``mecab_tokenizers``).
TOKENIZER_NAMES: Final[tuple[TokenizerName, ...]] = ("13a", "intl", "zh", "char", "none")
Tokenizer = Callable[[str], list[str]]

# mteval-v13a's first rule, `([\{-\~\[-\` -\&\(-\+\:-\@\/])` -> ` \1 `, pads single characters.
# The space itself is in that class; it is left alone here because padding a space with spaces
# changes neither the tokens nor what the later rules (which only look at a character's
# immediate neighbours) see next to a character. A regex with a replacement function is ~5x
# faster than str.translate with a table of 3-character strings (which leaves CPython's fast
# 1-to-1 path) and than a "\1" template.
_13A_SYMBOLS: Final = '!"#$%&()*+/:;<=>?@[\\]^_`{|}~'
_PAD_SYMBOLS: Final = re.compile("([" + re.escape(_13A_SYMBOLS) + "])")
# Period and comma unless preceded by a digit, then unless followed by a digit; dash after a digit.
# The first two are sacrebleu's `([^0-9])([\.,])` -> `\1 \2 ` and `([\.,])([^0-9])` -> ` \1 \2`,
# both applied from the runs of periods and commas (see _split_periods_and_commas).
_PERIOD_COMMA_RUN: Final = re.compile(r"[.,]+")
_PERIOD_COMMA_AFTER: Final = re.compile(r"([^0-9])([\.,])")
_PERIOD_COMMA_BEFORE: Final = re.compile(r"([\.,])([^0-9])")
_DASH_AFTER_DIGIT: Final = re.compile(r"([0-9])(-)")


def _pad(match: re.Match[str]) -> str:
    return f" {match[1]} "


def _split_after(match: re.Match[str]) -> str:
    return f"{match[1]} {match[2]} "


def _split_before(match: re.Match[str]) -> str:
    return f" {match[1]} {match[2]}"


_DIGITS: Final = "0123456789"


def _run_split(match: re.Match[str]) -> str:
    """One run of periods and commas after both of sacrebleu's rules, up to spacing."""
    run = match[0]
    at, end = match.span()
    line = match.string
    before = line[at - 1] if at else ""
    after = line[end] if end < len(line) else ""
    if len(run) == 1:  # nearly always: the rules only part it from its neighbours, or not
        if (before and before not in _DIGITS) or (after and after not in _DIGITS):
            return f" {run} "
        return run  # a decimal point or a thousands separator: 3.14, 1,000
    # The rules, on the run and its neighbours alone: neither neighbour is a period or a
    # comma, so no match of either rule reaches across them into the rest of the line.
    window = _PERIOD_COMMA_AFTER.sub(_split_after, before + run)[len(before) :]
    window = _PERIOD_COMMA_BEFORE.sub(_split_before, window + after)
    return window[: len(window) - len(after)]


def _split_periods_and_commas(line: str) -> str:
    r"""``line`` after sacrebleu's ``([^0-9])([\.,])`` -> ``\1 \2 ``, then its
    ``([\.,])([^0-9])`` -> `` \1 \2``, up to how many spaces stand where: the same tokens for
    what follows (the dash rule, which reads no space, and the split), ~1.7x faster on WMT21
    text. The first
    pattern starts with a class that matches nearly every character, so the regex is tried at
    every position; this is tried only at the runs of periods and commas."""
    return _PERIOD_COMMA_RUN.sub(_run_split, line)


def _regexp_tokens(line: str) -> list[str]:
    """sacrebleu's ``TokenizerRegexp`` (the language-dependent half of 13a), split."""
    line = _PAD_SYMBOLS.sub(_pad, line)
    if "." in line or "," in line:
        line = _split_periods_and_commas(line)
    if "-" in line:
        line = _DASH_AFTER_DIGIT.sub(_split_after, line)
    return line.split()


def tokenize_13a(line: str) -> list[str]:
    """mteval-v13a as sacrebleu implements it (the WMT default)."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = (
            line.replace("&quot;", '"')
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
        )
    return _regexp_tokens(f" {line} ")


# The characters sacrebleu's zh tokenizer treats as Chinese, as its `_is_chinese_char` really
# decides them: two of its range bounds are 2-character strings ('\u20000', '\u2f800'), so
# single characters compare as U+2001..U+2A6D (general punctuation, currency, arrows, ...) and
# astral CJK Extension B is not matched. The test suite checks every code point against it.
_ZH_RANGES: Final = (
    (0x2001, 0x2A6D),
    (0x2E80, 0x2FDF),
    (0x2FF0, 0x303F),
    (0x3100, 0x312F),
    (0x31A0, 0x31EF),
    (0x3200, 0x4DB5),
    (0x4E00, 0x9FBB),
    (0xF900, 0xFA2D),
    (0xFA30, 0xFA6A),
    (0xFA70, 0xFAD9),
    (0xFE10, 0xFE1F),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFFEF),
)
_ZH_CHAR: Final = re.compile(
    "([" + "".join(f"{chr(start)}-{chr(end)}" for start, end in _ZH_RANGES) + "])"
)


def is_chinese_char(char: str) -> bool:
    """Whether sacrebleu's zh tokenizer puts spaces around this character."""
    return _ZH_CHAR.fullmatch(char) is not None


def tokenize_zh(line: str) -> list[str]:
    """sacrebleu's zh tokenizer: every "Chinese" character a token, then the 13a rules."""
    return _regexp_tokens(_ZH_CHAR.sub(r" \1 ", line.strip()))


@cache
def _intl_rules() -> tuple[tuple[Any, str], ...]:
    # Imported on first use: the `regex` module costs import time that 13a users never need.
    import regex

    return (
        (regex.compile(r"(\P{N})(\p{P})"), r"\1 \2 "),
        (regex.compile(r"(\p{P})(\P{N})"), r" \1 \2"),
        (regex.compile(r"(\p{S})"), r" \1 "),
    )


def tokenize_intl(line: str) -> list[str]:
    """sacrebleu's intl tokenizer (mteval-v14 international, Unicode punctuation and symbols)."""
    for pattern, replacement in _intl_rules():
        line = pattern.sub(replacement, line)
    return line.split()


def tokenize_char(line: str) -> list[str]:
    """Every non-whitespace character a token (sacrebleu's ``" ".join(line)`` then split)."""
    return list("".join(line.split()))


def tokenize_none(line: str) -> list[str]:
    """No tokenization: split on whitespace."""
    return line.split()


_TOKENIZERS: Final[dict[str, Tokenizer]] = {
    "13a": tokenize_13a,
    "intl": tokenize_intl,
    "zh": tokenize_zh,
    "char": tokenize_char,
    "none": tokenize_none,
}


def get_tokenizer(name: str) -> Tokenizer:
    """The tokenizer called ``name``; MeCab's raise ``MetricError`` naming their extra when it
    is not installed."""
    if name in ("ja-mecab", "ko-mecab"):
        from goldgate.metrics.text.mecab_tokenizers import mecab_tokenizer

        return mecab_tokenizer(name)
    try:
        return _TOKENIZERS[name]
    except KeyError:
        valid = ", ".join([*TOKENIZER_NAMES, "ja-mecab", "ko-mecab"])
        raise ValueError(f"unknown tokenizer {name!r}; valid tokenizers: {valid}") from None


def tokenizer_signature(name: str) -> str:
    """sacrebleu's ``tok:`` value: the name, with MeCab's version for ``ja-mecab``/``ko-mecab``
    (``ja-mecab-0.996-IPA``)."""
    if name in ("ja-mecab", "ko-mecab"):
        from goldgate.metrics.text.mecab_tokenizers import mecab_tokenizer

        return mecab_tokenizer(name).signature
    return name
