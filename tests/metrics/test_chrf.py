"""goldgate's chrF and chrF++ against sacrebleu 2.6: published values and differences."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
import sacrebleu
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import CHRF as SacreCHRF

from goldgate.errors import InputError, MetricError
from goldgate.metrics.base import Metric, Stats
from goldgate.metrics.engine import MetricResult, score_corpus
from goldgate.metrics.ngram import chrf as chrf_module
from goldgate.metrics.ngram.chrf import CHRF, CHRFPlusPlus, split_punctuation
from goldgate.metrics.registry import create_metric, metric_from_spec
from tests.shared_data import DATA
from tests.strategies import any_text, corpus, long_text

TOLERANCE = 1e-9
LARGE = [HealthCheck.large_base_example, HealthCheck.data_too_large, HealthCheck.too_slow]

Corpus = list[tuple[str, list[str]]]

README_HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
README_REFS = [
    ["The dog bit the man.", "The dog had bit the man."],
    ["It was not unexpected.", "No one was surprised."],
    ["The man bit him first.", "The man had bitten the dog."],
]


def run(name: str, options: dict[str, Any], examples: Corpus) -> MetricResult:
    metric = create_metric(name, options)
    candidates = [candidate for candidate, _ in examples]
    references = [refs for _, refs in examples]
    return score_corpus([(name, metric)], candidates, references)[0]


def streams(examples: Corpus) -> list[list[str | None]]:
    width = max(len(refs) for _, refs in examples)
    return [[refs[i] if i < len(refs) else None for _, refs in examples] for i in range(width)]


def peer(name: str, options: dict[str, Any]) -> SacreCHRF:
    defaults = {"word_order": 2} if name == "chrf++" else {}
    return SacreCHRF(**{**defaults, **options})


@st.composite
def chrf_options(draw: st.DrawFn) -> dict[str, Any]:
    """Every chrF option, each left at its default some of the time."""
    options: dict[str, Any] = {}
    if draw(st.booleans()):
        options["char_order"] = draw(st.integers(0, 8))
    if draw(st.booleans()):
        low = 1 if options.get("char_order") == 0 else 0
        options["word_order"] = draw(st.integers(low, 3))
    if draw(st.booleans()):
        options["beta"] = draw(st.integers(0, 4))
    for flag in ("lowercase", "whitespace", "eps_smoothing"):
        if draw(st.booleans()):
            options[flag] = draw(st.booleans())
    return options


names = st.sampled_from(["chrf", "chrf++"])


# -- published values -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"), [("chrf", 59.72751782684763), ("chrf++", 59.15310444399262)]
)
def test_readme_example(name: str, expected: float) -> None:
    result = run(name, {}, list(zip(README_HYPS, README_REFS, strict=True)))
    assert result.corpus_score().score == pytest.approx(expected, abs=TOLERANCE)


def test_word_punctuation_split_follows_sacrebleu() -> None:
    # One trailing, else one leading, punctuation character; '(hi)' keeps its '(' (issue #124).
    assert split_punctuation("(hi) don't. a , 'x") == ["(hi", ")", "don't", ".", "a", ",", "'", "x"]


# -- differential properties ----------------------------------------------------------------


def _valid(name: str, options: dict[str, Any]) -> bool:
    char_order = options.get("char_order", 6)
    word_order = options.get("word_order", 2 if name == "chrf++" else 0)
    return char_order + word_order > 0


@settings(max_examples=200, deadline=None)
@given(name=names, examples=corpus(), options=chrf_options())
def test_corpus_chrf_equals_sacrebleu(name: str, examples: Corpus, options: dict[str, Any]) -> None:
    if not _valid(name, options):
        return
    hyps = [candidate for candidate, _ in examples]
    expected = peer(name, options).corpus_score(hyps, streams(examples)).score
    assert abs(run(name, options, examples).corpus_score().score - expected) <= TOLERANCE


@settings(max_examples=150, deadline=None)
@given(name=names, examples=corpus(), options=chrf_options())
def test_per_example_equals_sacrebleu_sentence_chrf(
    name: str, examples: Corpus, options: dict[str, Any]
) -> None:
    if not _valid(name, options):
        return
    sacre = peer(name, options)
    expected = [sacre.sentence_score(hyp, refs).score for hyp, refs in examples]
    assert run(name, options, examples).per_example() == pytest.approx(expected, abs=TOLERANCE)


@settings(max_examples=150, deadline=None)
@given(name=names, examples=corpus(max_refs=4), options=chrf_options())
def test_statistics_come_from_sacrebleus_best_reference(
    name: str, examples: Corpus, options: dict[str, Any]
) -> None:
    if not _valid(name, options):
        return
    sacre = peer(name, options)
    hyps = [candidate for candidate, _ in examples]
    expected = sacre._extract_corpus_statistics(hyps, streams(examples))
    actual = run(name, options, examples).stats
    assert [list(row) for row in actual] == expected


@settings(max_examples=100, deadline=None)
@given(candidate=any_text, references=st.lists(any_text, min_size=1, max_size=4))
def test_module_level_functions_agree(candidate: str, references: list[str]) -> None:
    examples = [(candidate, references)]
    assert run("chrf", {}, examples).per_example() == [
        pytest.approx(sacrebleu.sentence_chrf(candidate, references).score, abs=TOLERANCE)
    ]
    assert run("chrf++", {}, examples).corpus_score().score == pytest.approx(
        sacrebleu.corpus_chrf([candidate], [[ref] for ref in references], word_order=2).score,
        abs=TOLERANCE,
    )


@settings(max_examples=10, deadline=None, suppress_health_check=LARGE)
@given(
    name=names,
    candidate=long_text(2000),
    references=st.lists(long_text(2000), min_size=1, max_size=3),
    options=chrf_options(),
)
def test_2000_token_lines(
    name: str, candidate: str, references: list[str], options: dict[str, Any]
) -> None:
    if not _valid(name, options):
        return
    examples = [(candidate, references)]
    expected = peer(name, options).corpus_score([candidate], streams(examples)).score
    assert abs(run(name, options, examples).corpus_score().score - expected) <= TOLERANCE


def test_identical_and_empty_texts() -> None:
    examples: Corpus = [("abc", ["abc"]), ("", ["abc"]), ("abc", [""]), ("", [""]), (" ", ["\t"])]
    sacre = SacreCHRF()
    expected = [sacre.sentence_score(hyp, refs).score for hyp, refs in examples]
    assert run("chrf", {}, examples).per_example() == expected
    assert expected[:2] == [100.0, 0.0]


def test_ties_between_references_keep_the_first() -> None:
    # Both references score 0 for this hypothesis; sacrebleu keeps the first one's statistics.
    result = run("chrf", {}, [("xyz", ["abcd", "ab"])])
    assert result.stats[0][1] == 4  # reference unigram count of 'abcd'


# -- signatures, options, sharing -----------------------------------------------------------


def _without_version(signature: str) -> str:
    return "|".join(f for f in str(signature).split("|") if not f.startswith("version:"))


@settings(max_examples=100, deadline=None)
@given(name=names, examples=corpus(max_size=3), options=chrf_options())
def test_signature_matches_sacrebleus(name: str, examples: Corpus, options: dict[str, Any]) -> None:
    if not _valid(name, options):
        return
    sacre = peer(name, options)
    sacre.corpus_score([candidate for candidate, _ in examples], streams(examples))
    expected = _without_version(str(sacre.get_signature()))
    beta = options.get("beta", 2)
    if beta != 2:
        expected += f"|beta:{beta}"
    assert _without_version(str(run(name, options, examples).signature)) == expected


def test_signature_and_components() -> None:
    result = run("chrf++", {"lowercase": True}, [("a", ["a"])])
    assert str(result.signature).startswith("nrefs:1|case:lc|eff:yes|nc:6|nw:2|space:no|version:")
    assert result.corpus_score().components == {"char_order": 6, "word_order": 2, "beta": 2}


@pytest.mark.parametrize(
    "options",
    [
        {"char_order": -1},
        {"char_order": 0, "word_order": 0},
        {"word_order": 1000},
        {"beta": -1},
        {"beta": 1.5},
        {"whitespace": "sometimes"},
        {"remove_whitespace": True},
    ],
)
@pytest.mark.parametrize("name", ["chrf", "chrf++"])
def test_invalid_options_are_metric_errors(name: str, options: dict[str, Any]) -> None:
    with pytest.raises(MetricError) as info:
        create_metric(name, options)
    assert name in str(info.value)


def test_options_from_a_command_line_spec() -> None:
    metric = metric_from_spec("chrf:char_order=4,word_order=1,beta=3,whitespace=true")
    assert isinstance(metric, CHRF)
    opts = metric.options
    assert (opts.char_order, opts.word_order, opts.beta, opts.whitespace) == (4, 1, 3, True)
    plus_plus = metric_from_spec("chrf++")
    assert isinstance(plus_plus, CHRFPlusPlus)
    assert plus_plus.options.word_order == 2


def test_preprocessing_is_shared_when_the_ngrams_are_the_same() -> None:
    def key(name: str, **options: Any) -> Any:
        metric: Metric[Any] = create_metric(name, options)
        return metric.preprocess_key()

    assert key("chrf") == key("chrf", beta=3) == key("chrf", eps_smoothing=True)
    assert key("chrf++") == key("chrf", word_order=2)
    assert key("chrf") != key("chrf++")
    assert key("chrf") != key("chrf", lowercase=True)
    assert key("chrf") != key("chrf", whitespace=True)


def test_stat_names() -> None:
    names = create_metric("chrf++", {"char_order": 2}).stat_names
    assert names[:3] == ("char1_hyp", "char1_ref", "char1_match")
    assert names[-1] == "word2_match"
    assert len(names) == 3 * 4


# -- real data ------------------------------------------------------------------------------


def _load(filename: str) -> Corpus:
    path = DATA / filename
    if not path.exists():
        pytest.skip(f"{path} is absent (real data lives beside the repository)")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [(row["candidate"], row["references"]) for row in rows]


@pytest.mark.parametrize(
    ("filename", "name", "options"),
    [
        ("mt_wmt21_newstest2021_de-en.Facebook-AI.jsonl", "chrf", {}),
        ("mt_wmt21_newstest2021_de-en.Online-B.jsonl", "chrf++", {}),
        ("mt_wmt21_newstest2021_en-zh.NiuTrans.jsonl", "chrf", {"eps_smoothing": True}),
        ("mt_wmt21_newstest2021_en-zh.Online-B.jsonl", "chrf++", {"lowercase": True}),
    ],
)
def test_real_wmt21_systems(filename: str, name: str, options: dict[str, Any]) -> None:
    examples = _load(filename)
    hyps = [candidate for candidate, _ in examples]
    sacre = peer(name, options)
    result = run(name, options, examples)
    expected = sacre.corpus_score(hyps, streams(examples)).score
    assert abs(result.corpus_score().score - expected) <= TOLERANCE
    per_example = [sacre.sentence_score(hyp, refs).score for hyp, refs in examples]
    assert result.per_example() == pytest.approx(per_example, abs=TOLERANCE)


# -- packed and dict counting ---------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(name=names, examples=corpus(), options=chrf_options())
def test_packed_dict_and_mixed_counting_agree(
    name: str, examples: Corpus, options: dict[str, Any]
) -> None:
    """Texts whose characters do not fit the int64 packing use dicts; every mix agrees."""
    if not _valid(name, options):
        return
    expected = run(name, options, examples).stats
    assert run_with_packing(name, options, examples, lambda text: False) == expected
    assert run_with_packing(name, options, examples, lambda text: len(text) % 2 == 0) == expected


def run_with_packing(
    name: str, options: dict[str, Any], examples: Corpus, allowed: Callable[[str], bool]
) -> tuple[Stats, ...]:
    real = chrf_module.character_ids

    def character_ids(text: str, max_order: int) -> Any:
        return real(text, max_order) if allowed(text) else None

    with mock.patch.object(chrf_module, "character_ids", character_ids):
        return run(name, options, examples).stats


@pytest.mark.parametrize("name", ["chrf", "chrf++"])
def test_empty_corpus_is_an_error_and_an_empty_slice_scores_zero(name: str) -> None:
    with pytest.raises(InputError, match="nothing to score: the corpus is empty"):
        score_corpus([(name, create_metric(name))], [], [])
    result = score_corpus([(name, create_metric(name))], ["a cat"], [["a cat"]])[0]
    assert result.corpus_score(indices=[]).score == 0.0
