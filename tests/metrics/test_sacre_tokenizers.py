"""goldgate's sacrebleu tokenizers give exactly sacrebleu's tokens."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_char import TokenizerChar
from sacrebleu.tokenizers.tokenizer_intl import TokenizerV14International
from sacrebleu.tokenizers.tokenizer_none import NoneTokenizer
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

from goldgate.metrics.text.sacre_tokenizers import (
    TOKENIZER_NAMES,
    _split_periods_and_commas,
    get_tokenizer,
    is_chinese_char,
    tokenize_13a,
    tokenize_intl,
    tokenize_zh,
)
from tests.shared_data import DATA
from tests.strategies import any_text, long_text, tokenizer_soup

PEERS = {
    "13a": Tokenizer13a(),
    "intl": TokenizerV14International(),
    "zh": TokenizerZh(),
    "char": TokenizerChar(),
    "none": NoneTokenizer(),
}


def peer_tokens(name: str, line: str) -> list[str]:
    result: str = PEERS[name](line)
    return result.split()


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
@settings(max_examples=150, deadline=None)
@given(line=any_text | tokenizer_soup)
def test_tokens_equal_sacrebleu(name: str, line: str) -> None:
    assert get_tokenizer(name)(line) == peer_tokens(name, line)


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
@settings(max_examples=5, deadline=None)
@given(line=long_text(2000))
def test_long_lines(name: str, line: str) -> None:
    assert get_tokenizer(name)(line) == peer_tokens(name, line)


def test_zh_character_set_is_sacrebleus_for_every_code_point() -> None:
    # Surrogates included: Python strings may hold them and sacrebleu compares them too.
    is_peer_chinese = TokenizerZh._is_chinese_char
    mismatches = [
        hex(cp) for cp in range(0x110000) if is_chinese_char(chr(cp)) != is_peer_chinese(chr(cp))
    ]
    assert mismatches == []


def _sacrebleu_periods_and_commas(line: str) -> str:
    """sacrebleu's two rules for periods and commas, as it writes them (tokenizer_re.py)."""
    line = re.sub(r"([^0-9])([\.,])", r"\1 \2 ", line)
    return re.sub(r"([\.,])([^0-9])", r" \1 \2", line)


@settings(max_examples=400, deadline=None)
@given(line=st.text(alphabet=".,.,09a -\n", max_size=30) | tokenizer_soup)
def test_period_comma_rules_equal_sacrebleus_regexes(line: str) -> None:
    # runs of periods and commas after and before digits, letters, spaces, the line's ends;
    # the same tokens, and the same characters (only spaces may differ in number)
    got, expected = _split_periods_and_commas(line), _sacrebleu_periods_and_commas(line)
    assert got.split() == expected.split()
    assert got.replace(" ", "") == expected.replace(" ", "")


@pytest.mark.parametrize(
    "line",
    ["...", "a...", "5...", "...5", ",a", "5,.,b", "a.5.", ". .", "x,,,,,", "9,,,,9", "3.14", "."],
)
def test_period_comma_rules_on_runs(line: str) -> None:
    assert _split_periods_and_commas(line).split() == _sacrebleu_periods_and_commas(line).split()


@pytest.mark.parametrize(
    ("line", "tokens"),
    [
        ("It's a-b, 2-3.", ["It's", "a-b", ",", "2", "-", "3", "."]),
        ("&quot;x&quot; &amp; y", ['"', "x", '"', "&", "y"]),
        ("3.14 1,000 end.", ["3.14", "1,000", "end", "."]),
        ("a<skipped>b", ["ab"]),
    ],
)
def test_13a_documented_behaviour(line: str, tokens: list[str]) -> None:
    assert tokenize_13a(line) == tokens


def test_intl_keeps_a_final_number_period_whole() -> None:
    assert tokenize_intl("In 1990.") == ["In", "1990."]
    assert tokenize_intl("a,b €5") == ["a", ",", "b", "€", "5"]


def test_zh_quirk_splits_curly_quotes_but_not_astral_cjk() -> None:
    assert tokenize_zh("我喜欢") == ["我", "喜", "欢"]
    assert tokenize_zh("\u201cab\u201d") == ["\u201c", "ab", "\u201d"]
    assert tokenize_zh("𠀀𠀁") == ["𠀀𠀁"]


def test_unknown_tokenizer_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="valid tokenizers: 13a, intl, zh, char, none"):
        get_tokenizer("13b")


def _lines(filename: str) -> list[str]:
    path = DATA / filename
    if not path.exists():
        pytest.skip(f"{path} is absent (real data lives beside the repository)")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [row["candidate"] for row in rows] + [ref for row in rows for ref in row["references"]]


@pytest.mark.parametrize(
    ("filename", "name"),
    [
        ("mt_wmt21_newstest2021_de-en.Online-B.jsonl", "13a"),
        ("mt_wmt21_newstest2021_de-en.Online-B.jsonl", "intl"),
        ("mt_wmt21_newstest2021_en-zh.NiuTrans.jsonl", "zh"),
        ("mt_wmt21_newstest2021_en-zh.NiuTrans.jsonl", "13a"),
    ],
)
def test_real_wmt21_lines(filename: str, name: str) -> None:
    tokenize = get_tokenizer(name)
    for line in _lines(filename):
        assert tokenize(line) == peer_tokens(name, line), line


@settings(max_examples=100, deadline=None)
@given(line=st.text(max_size=30))
def test_zh_on_arbitrary_unicode(line: str) -> None:
    assert tokenize_zh(line) == peer_tokens("zh", line)
