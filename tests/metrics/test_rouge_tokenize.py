"""ROUGE tokenizers: rouge-score's, the Unicode one, cached stemming that needs no NLTK."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rouge_score import tokenize as rs_tokenize
from rouge_score import tokenizers as rs_tokenizers

from goldgate.metrics.text import rouge_tokenize
from goldgate.metrics.text.porter import PorterStemmer
from goldgate.metrics.text.rouge_tokenize import (
    default_tokens,
    make_tokenizer,
    stem_tokens,
    unicode_tokens,
)
from tests.strategies import any_text, long_text

RS_STEMMED = rs_tokenizers.DefaultTokenizer(use_stemmer=True)


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_default_equals_rouge_score(text: str) -> None:
    assert default_tokens(text) == rs_tokenize.tokenize(text, None)


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_default_stemmed_equals_rouge_score(text: str) -> None:
    assert make_tokenizer("default", use_stemmer=True)(text) == RS_STEMMED.tokenize(text)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.large_base_example])
@given(long_text())
def test_long_line_equals_rouge_score(text: str) -> None:
    assert make_tokenizer("default", use_stemmer=True)(text) == RS_STEMMED.tokenize(text)


def test_default_drops_non_ascii() -> None:
    # The reference implementation's documented behaviour.
    assert default_tokens("Café naïve") == ["caf", "na", "ve"]
    assert default_tokens("我喜欢吃苹果。Привет") == []
    assert default_tokens("don't") == ["don", "t"]


def test_unicode_splits_cjk_per_character() -> None:
    assert unicode_tokens("我喜欢吃苹果。") == ["我", "喜", "欢", "吃", "苹", "果"]
    assert unicode_tokens("日本語とカタカナ") == ["日", "本", "語", "と", "カ", "タ", "カ", "ナ"]
    assert unicode_tokens("한국어 문장") == ["한", "국", "어", "문", "장"]
    # CJK Extension B is astral; it is a Han character all the same.
    assert unicode_tokens("𠀀𠮷") == ["𠀀", "𠮷"]
    # Latin words inside Chinese text stay whole.
    assert unicode_tokens("我用Python写代码") == ["我", "用", "python", "写", "代", "码"]


def test_unicode_keeps_words_of_spaced_scripts() -> None:
    assert unicode_tokens("Привет, МИР! Дома.") == ["привет", "мир", "дома"]
    assert unicode_tokens("ذهب الولد إلى المدرسة.") == ["ذهب", "الولد", "إلى", "المدرسة"]
    # Devanagari vowel signs are combining marks and stay inside their word.
    assert unicode_tokens("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert unicode_tokens("Ελληνικά") == ["ελληνικά"]


def test_unicode_normalises_and_separates() -> None:
    # NFKC: full-width letters, ligatures and decomposed accents match their plain forms.
    assert unicode_tokens("Ｗｏｒｄ ﬁne cafe\u0301") == ["word", "fine", "café"]
    # Punctuation, symbols, emoji and zero-width characters separate tokens.
    assert unicode_tokens("don't a-b 3.14 🙂x\u200by") == [
        "don",
        "t",
        "a",
        "b",
        "3",
        "14",
        "x",
        "y",
    ]
    assert unicode_tokens("") == []
    assert unicode_tokens(" \n\t\u3000") == []


def test_unicode_stems_ascii_tokens_only() -> None:
    tokenize = make_tokenizer("unicode", use_stemmer=True)
    assert tokenize("Running cats дома работают cafés") == [
        "run",
        "cat",
        "дома",
        "работают",
        "cafés",
    ]


def test_stem_cache_calls_the_stemmer_once_per_word(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    stemmer = PorterStemmer()

    class Counting:
        def stem(self, word: str) -> str:
            calls.append(word)
            return str(stemmer.stem(word))

    monkeypatch.setattr(rouge_tokenize, "_porter", Counting())
    monkeypatch.setattr(rouge_tokenize, "_stem_cache", {})
    assert stem_tokens(["walking", "walking", "the", "walking"]) == ["walk", "walk", "the", "walk"]
    assert stem_tokens(["walking"]) == ["walk"]
    # Words of three characters or fewer never reach the stemmer.
    assert calls == ["walking"]


def test_stemming_imports_no_nltk() -> None:
    # Importing nltk executes the whole package (tens of MB); the vendored stemmer needs none.
    code = (
        "import sys\n"
        "from goldgate.metrics.registry import create_metric\n"
        "from goldgate.metrics.engine import score_corpus\n"
        "specs = ('rouge1', 'rouge2', 'rougeL', 'rougeLsum', 'rougeW', 'rougeS')\n"
        "metrics = [(n, create_metric(n, {'use_stemmer': True})) for n in specs]\n"
        "metrics.append(('rouge1u', create_metric('rouge1', {'use_stemmer': True, "
        "'tokenizer': 'unicode'})))\n"
        "result = score_corpus(metrics, ['walking cats ran'], [['walked the cat', 'runs']])\n"
        "assert result[0].corpus_score().score > 0\n"
        "loaded = sorted(m for m in sys.modules if m == 'nltk' or m.startswith('nltk.'))\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=60))
def test_unicode_equals_default_on_ascii(text: str) -> None:
    # On ASCII the letters and digits are exactly [A-Za-z0-9], so both tokenizers agree.
    assert unicode_tokens(text) == default_tokens(text)
