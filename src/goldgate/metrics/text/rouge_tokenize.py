"""Tokenizers for the ROUGE family: rouge-score's own, a Unicode one, cached Porter stemming.

``default`` is rouge-score 0.1.2's tokenizer, character for character: ``str.lower()``, every
run of characters outside ``[a-z0-9]`` becomes a separator, tokens are the remaining runs. All
non-ASCII letters are separators, so ``Café naïve`` gives ``caf na ve`` and Chinese, Russian or
Arabic text gives no token at all.

``unicode`` is goldgate's tokenizer for every script. The rule, in order:

1. NFKC normalisation (full-width ``Ｗｏｒｄ`` becomes ``Word``, the ligature ``ﬁ`` becomes
   ``fi``, a decomposed ``e`` + combining acute becomes ``é``), then ``str.lower()``.
2. Every Han ideograph (CJK Extension B and beyond included), Hiragana, Katakana and Hangul
   character is a token of its own: these scripts do not separate words with spaces (Korean
   does, but attaches particles to words), and one token per character is the usual
   convention for ROUGE on them.
3. Every other token is a maximal run of letters (``\\p{L}``), digits (``\\p{N}``) and combining
   marks (``\\p{M}``, so Devanagari or Arabic vowel signs stay inside their word) that starts
   with a letter or a digit. Everything else (punctuation, symbols, spaces, emoji, zero-width
   characters) separates tokens: ``don't`` gives ``don t`` as in rouge-score. Scripts written
   without spaces other than CJK (Thai, Lao, Khmer, Burmese) therefore give one token per
   space-delimited run.

Stemming (``use_stemmer``) is rouge-score's: NLTK's ``PorterStemmer`` (NLTK_EXTENSIONS mode) on
tokens longer than three characters. With the ``unicode`` tokenizer it applies to pure-ASCII
tokens only; ``café`` or ``дома`` are left as they are. The stemmer is a copy of NLTK 3.10.4's
(``goldgate.metrics.text.porter``), so stemming needs no NLTK: importing ``nltk`` executes the whole
package (some 50 MB and up to half a second), and the stems cannot change with the installed NLTK.
Stems are cached per word: the stemmer dominates rouge-score's running time and a corpus has
few distinct words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Literal

import regex

from goldgate.metrics.text.porter import PorterStemmer

TokenizerName = Literal["default", "unicode"]
Tokenizer = Callable[[str], list[str]]

# rouge-score: lower(); [^a-z0-9]+ -> " "; split; keep ^[a-z0-9]+$. The maximal runs of
# [a-z0-9] in the lowered text are exactly those tokens.
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")

_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}"
_UNICODE_TOKEN = regex.compile(
    rf"[{_CJK}]|[[\p{{L}}\p{{N}}]--[{_CJK}]][[\p{{L}}\p{{N}}\p{{M}}]--[{_CJK}]]*",
    regex.V1,
)

# Bounded so a long-running process fed endless new words cannot grow without limit.
_STEM_CACHE_LIMIT = 1 << 20
_stem_cache: dict[str, str] = {}
_porter = PorterStemmer()

#: The stemmer in ROUGE signatures: Porter as NLTK 3.10's NLTK_EXTENSIONS mode stems.
STEMMER_ID = "porter-nltk3.10"

#: What installs NLTK for rougeLsum's split_summaries (punkt); stemming does not need it.
STEM_INSTALL_HINT = "pip install 'goldgate[stem]'"


def default_tokens(text: str) -> list[str]:
    """rouge-score's tokens of ``text`` without stemming."""
    return _ASCII_TOKEN.findall(text.lower())


def unicode_tokens(text: str) -> list[str]:
    """goldgate's Unicode tokens of ``text`` (see the module docstring) without stemming."""
    return _UNICODE_TOKEN.findall(unicodedata.normalize("NFKC", text).lower())  # type: ignore[no-any-return]


def _stem_uncached(word: str) -> str:
    stem = word if len(word) <= 3 else _porter.stem(word)
    # rouge-score drops whatever does not look like a token after stemming.
    return stem if _VALID_TOKEN.match(stem) else ""


def stem_tokens(tokens: list[str]) -> list[str]:
    """Stem ASCII tokens as rouge-score does (length > 3 only), through a per-word cache."""
    cache = _stem_cache
    try:
        stems = [cache[t] for t in tokens]
    except KeyError:
        if len(cache) > _STEM_CACHE_LIMIT:
            cache.clear()
        stems = []
        for t in tokens:
            stem = cache.get(t)
            if stem is None:
                stem = cache[t] = _stem_uncached(t) if t.isascii() else t
            stems.append(stem)
    if "" in stems:
        return [s for s in stems if s]
    return stems


def make_tokenizer(name: TokenizerName, *, use_stemmer: bool) -> Tokenizer:
    """The tokenizer function for a ``tokenizer`` option value and ``use_stemmer``."""
    base = default_tokens if name == "default" else unicode_tokens
    if not use_stemmer:
        return base

    def stemmed(text: str) -> list[str]:
        return stem_tokens(base(text))

    return stemmed
