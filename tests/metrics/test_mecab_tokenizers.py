"""ja-mecab and ko-mecab: the tokens, BLEU scores and signatures of sacrebleu on the same MeCab.

Skipped where the extras (goldgate[ja], goldgate[ko]) are absent; the test extra installs them.
"""

from __future__ import annotations

import importlib
import struct
from pathlib import Path
from typing import Any

import pytest
from sacrebleu.metrics import BLEU as SacreBLEU

from goldgate.errors import MetricError
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.registry import create_metric
from goldgate.metrics.text import mecab_tokenizers

# Written for these tests: everyday sentences and the Unicode corners a tokenizer trips on.
JAPANESE = [
    "私は東京大学の学生です。",
    "今日はいい天気ですね！明日も晴れるといいな。",
    "ｶﾀｶﾅの半角とカタカナの全角、ＡＢＣ１２３と ABC123。",
    "𠮷野家で牛丼を食べた🍚😋。",
    "彼女は「はい」と言った…　そして、去った。",
    "ｷﾞｬﾙ が゛ か\u3099 (濁点の結合文字)",
    "改行の\nある文と\tタブ",
    "ＡＩが書いた文章は、人間の文章と区別できるか？",
    "2024年12月1日、気温は-3.5℃でした。",
    "",
    "   ",
    "\u200bゼロ幅\u200dスペース",
    "Pythonでプログラミングを学ぶ",
]
KOREAN = [
    "안녕하세요, 저는 학생입니다.",
    "오늘 날씨가 정말 좋네요! 내일도 맑았으면 좋겠어요.",
    "한국어와 English가 섞인 문장 123개.",
    "\u1112\u1161\u11ab\u1100\u1173\u11af 자모로 쓴 한글",  # decomposed (NFD) Hangul
    "서울특별시 강남구 테헤란로 152",
    "이모지도 있어요 😀👍🏽",
    "ㅋㅋㅋ ㅠㅠ 진짜?!",
    "",
    "  줄바꿈\n있는 문장  ",
    "전각 문자：ＡＢＣ，１２３。",
    "\u200b보이지 않는 공백",
]


def _skip_without(name: str) -> None:
    kind = mecab_tokenizers._KINDS[name]
    for module in (kind.tagger_module, kind.dictionary_module):
        pytest.importorskip(module, reason=f"goldgate[{kind.extra}] is not installed")


def _peer_tokenizer(name: str) -> Any:
    module = "tokenizer_ja_mecab" if name == "ja-mecab" else "tokenizer_ko_mecab"
    cls = "TokenizerJaMecab" if name == "ja-mecab" else "TokenizerKoMecab"
    return getattr(importlib.import_module(f"sacrebleu.tokenizers.{module}"), cls)()


CASES = [("ja-mecab", JAPANESE), ("ko-mecab", KOREAN)]


@pytest.mark.parametrize(("name", "texts"), CASES)
def test_tokens_equal_sacrebleu(name: str, texts: list[str]) -> None:
    _skip_without(name)
    ours = mecab_tokenizers.mecab_tokenizer(name)
    peer = _peer_tokenizer(name)
    for text in texts:
        assert ours(text) == peer(text).split(), text
    assert ours.signature == peer.signature()


@pytest.mark.parametrize(("name", "texts"), CASES)
@pytest.mark.parametrize("lowercase", [False, True])
def test_bleu_equals_sacrebleu(name: str, texts: list[str], lowercase: bool) -> None:
    _skip_without(name)
    # Each text against a rotated neighbour and itself with a few words dropped.
    candidates = texts
    first = texts[1:] + texts[:1]
    second = [" ".join(text.split()[:-1]) for text in texts]
    options = {"tokenize": name, "lowercase": lowercase}
    for spec in ("bleu", "sentence_bleu"):
        metric = create_metric(spec, options)
        result = score_corpus(
            [(spec, metric)], candidates, [list(p) for p in zip(first, second, strict=True)]
        )[0]
        if spec == "bleu":
            peer = SacreBLEU(**options)
            expected = peer.corpus_score(candidates, [first, second])
            assert abs(result.corpus_score().score - expected.score) <= 1e-9
            peer_signature = str(peer.get_signature())
            tok = next(f for f in peer_signature.split("|") if f.startswith("tok:"))
            assert f"|{tok}|" in str(result.signature)
        else:
            peer = SacreBLEU(**options, effective_order=True)
            expected_each = [
                peer.sentence_score(c, [a, b]).score
                for c, a, b in zip(candidates, first, second, strict=True)
            ]
            assert result.per_example() == pytest.approx(expected_each, abs=1e-9, rel=0)


@pytest.mark.parametrize(("name", "extra"), [("ja-mecab", "ja"), ("ko-mecab", "ko")])
def test_without_the_extra_the_error_names_it(
    name: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kind = mecab_tokenizers._KINDS[name]
    real = importlib.import_module

    def missing(module: str) -> Any:
        if module in (kind.tagger_module, kind.dictionary_module):
            raise ImportError(module)
        return real(module)

    monkeypatch.setattr(mecab_tokenizers.importlib, "import_module", missing)
    mecab_tokenizers.mecab_tokenizer.cache_clear()
    try:
        with pytest.raises(MetricError, match=rf"pip install 'goldgate\[{extra}\]'"):
            create_metric("bleu", {"tokenize": name})
    finally:
        mecab_tokenizers.mecab_tokenizer.cache_clear()


@pytest.mark.parametrize("name", ["ja-mecab", "ko-mecab"])
def test_a_user_dictionary_is_refused(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sacrebleu's tokens are those of the dictionary alone: a user dictionary (here MeCab's
    # -u, as a mecabrc's userdic would load one) changes them, so it is refused.
    _skip_without(name)
    dictionary = importlib.import_module(mecab_tokenizers._KINDS[name].dictionary_module)
    # A real user dictionary, without mecab-dict-index: the package's compiled dictionary of
    # unknown words, its header's type (at byte 8) changed to 1, MeCab's "user dictionary".
    data = bytearray((Path(dictionary.DICDIR) / "unk.dic").read_bytes())
    struct.pack_into("<I", data, 8, 1)
    user = tmp_path / "user.dic"
    user.write_bytes(bytes(data))
    monkeypatch.setattr(dictionary, "MECAB_ARGS", f'{dictionary.MECAB_ARGS} -u "{user}"')
    with pytest.raises(MetricError, match=r"no user dictionary.* and a user dictionary"):
        mecab_tokenizers.MecabTokenizer(name)
