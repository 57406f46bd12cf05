"""The vendored Porter stemmer against NLTK's own ``PorterStemmer()`` (what rouge-score calls)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.stem.porter import PorterStemmer as NltkPorterStemmer

from goldgate.metrics.text.porter import PorterStemmer
from tests.shared_data import DATA

NLTK = NltkPorterStemmer()
OURS = PorterStemmer()

IRREGULAR = [
    "sky",
    "skies",
    "dying",
    "lying",
    "tying",
    "news",
    "innings",
    "inning",
    "outings",
    "outing",
    "cannings",
    "canning",
    "howe",
    "proceed",
    "exceed",
    "succeed",
]
# Suffixes every step of the algorithm looks for, so random stems reach every rule.
SUFFIXES = [
    "s",
    "es",
    "sses",
    "ies",
    "ied",
    "ss",
    "e",
    "y",
    "ly",
    "eed",
    "ed",
    "ing",
    "at",
    "bl",
    "iz",
    "ational",
    "tional",
    "enci",
    "anci",
    "izer",
    "bli",
    "abli",
    "alli",
    "entli",
    "eli",
    "ousli",
    "ization",
    "ation",
    "ator",
    "alism",
    "iveness",
    "fulness",
    "ousness",
    "aliti",
    "iviti",
    "biliti",
    "fulli",
    "logi",
    "icate",
    "ative",
    "alize",
    "iciti",
    "ical",
    "ful",
    "ness",
    "al",
    "ance",
    "ence",
    "er",
    "ic",
    "able",
    "ible",
    "ant",
    "ement",
    "ment",
    "ent",
    "sion",
    "tion",
    "ion",
    "ou",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
    "ll",
    "yy",
]

letters = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", max_size=12)
# Vowel-poor and y-heavy alphabets exercise the consonant/measure rules ("syzygy", "yyyy").
skewed = st.text(alphabet="aeiouy", max_size=6) | st.text(alphabet="bcdlrsty", max_size=8)
words = st.one_of(
    letters,
    st.sampled_from(IRREGULAR),
    st.builds(lambda a, b, c: a + b + c, letters, skewed, st.sampled_from(SUFFIXES)),
    st.builds(lambda a, b: a + b, st.sampled_from(IRREGULAR), st.sampled_from(SUFFIXES)),
)


@settings(max_examples=300, deadline=None)
@given(words)
def test_equals_nltk_on_random_words(word: str) -> None:
    assert OURS.stem(word) == NLTK.stem(word)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", max_size=15))
def test_equals_nltk_with_and_without_lowercasing(word: str) -> None:
    assert OURS.stem(word) == NLTK.stem(word)
    assert OURS.stem(word, to_lowercase=False) == NLTK.stem(word, to_lowercase=False)


@pytest.mark.parametrize("word", IRREGULAR)
def test_irregular_forms_equal_nltk(word: str) -> None:
    assert OURS.stem(word) == NLTK.stem(word)


def test_every_token_of_real_data_equals_nltk() -> None:
    names = ["summ_xsum_maynez2020.jsonl", "summ_summeval_cnndm.jsonl"]
    paths = [DATA / name for name in names if (DATA / name).exists()]
    if not paths:
        pytest.skip(f"{DATA} not present (shared data is optional)")
    vocabulary: set[str] = set()
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle):
                if number >= 2000:
                    break
                record = json.loads(line)
                for text in [record["candidate"], *record["references"]]:
                    vocabulary.update(re.findall(r"[a-z0-9]+", text.lower()))
    assert len(vocabulary) > 1000
    differences = {w: (OURS.stem(w), NLTK.stem(w)) for w in vocabulary}
    differences = {w: pair for w, pair in differences.items() if pair[0] != pair[1]}
    assert differences == {}
