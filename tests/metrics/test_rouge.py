"""ROUGE-N/L/Lsum: published values, and score-for-score parity with rouge-score 0.1.2."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import nltk
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from goldgate.errors import MetricError
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.ngram import rouge
from goldgate.metrics.registry import create_metric
from tests.shared_data import DATA
from tests.strategies import any_text, long_text, plain_text, word

TOLERANCE = 1e-9  # points, after multiplying rouge-score's 0–1 values by 100


@cache
def scorer(rouge_type: str, stem: bool) -> rouge_scorer.RougeScorer:
    return rouge_scorer.RougeScorer([rouge_type], use_stemmer=stem)


def goldgate_stats(
    rouge_type: str, candidates: list[str], references: list[list[str]], **options: Any
) -> list[tuple[float, ...]]:
    metric = create_metric(rouge_type, options)
    (result,) = score_corpus([(rouge_type, metric)], candidates, references)
    return [tuple(row) for row in result.stats]


def assert_parity(rouge_type: str, candidate: str, references: list[str], stem: bool) -> None:
    (stats,) = goldgate_stats(rouge_type, [candidate], [references], use_stemmer=stem)
    expected = scorer(rouge_type, stem).score_multi(references, candidate)[rouge_type]
    for ours, theirs in zip(stats[:3], expected, strict=True):
        assert abs(100 * ours - 100 * theirs) <= TOLERANCE, (stats, expected)
    assert stats[3] == 1.0


# -- published expectations ----------------------------------------------------------------


def test_rouge_score_published_rouge1() -> None:
    # rouge_scorer_test.py: score("testing one two", "testing") -> P 1, R 1/3, F 1/2.
    metric = create_metric("rouge1")
    (result,) = score_corpus([("rouge1", metric)], ["testing"], [["testing one two"]])
    precision, recall, fmeasure, count = result.stats[0]
    assert count == 1.0
    assert precision == pytest.approx(1.0)
    assert recall == pytest.approx(1 / 3)
    assert fmeasure == pytest.approx(1 / 2)
    assert result.per_example() == [pytest.approx(50.0)]


def test_rouge_score_published_rouge_lsum() -> None:
    # rouge_scorer_test.py: target "w1 w2 w3 w4 w5", prediction on two lines -> R 0.8, P 0.4.
    (stats,) = goldgate_stats("rougeLsum", ["w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5"], [["w1 w2 w3 w4 w5"]])
    assert stats[1] == pytest.approx(0.8)
    assert stats[0] == pytest.approx(0.4)
    # On one line it is plain ROUGE-L: the LCS of "w1 w2 w6 w7 w8 w1 w3 w8 w9 w5" and
    # "w1 w2 w3 w4 w5" is "w1 w2 w3 w5" (4 tokens): R 4/5, P 4/10.
    (flat,) = goldgate_stats("rougeLsum", ["w1 w2 w6 w7 w8 w1 w3 w8 w9 w5"], [["w1 w2 w3 w4 w5"]])
    assert flat[1] == pytest.approx(4 / 5)
    assert flat[0] == pytest.approx(4 / 10)


def test_seed_example_rouge2() -> None:
    # /work/shared/seeds/000: 6 matched bigrams of 10 in the reference and 8 in the candidate:
    # R 60.0, P 75.0, F 2·0.6·0.75/1.35 = 66.67.
    metric = create_metric("rouge2")
    (result,) = score_corpus(
        [("rouge2", metric)],
        ["the cat sat on the mat by the window"],
        [["the cat sat quietly on the warm mat by the window"]],
    )
    score = result.corpus_score()
    assert score.components["recall"] == pytest.approx(60.0)
    assert score.components["precision"] == pytest.approx(75.0)
    assert score.score == pytest.approx(66.6667, abs=1e-4)
    assert score.components["fmeasure"] == score.score


# -- differential properties against rouge-score ---------------------------------------------

multi_sentence = st.lists(any_text | plain_text(), min_size=1, max_size=5).map("\n".join)
text = any_text | multi_sentence
references = st.lists(text, min_size=1, max_size=4)
ngram_types = st.sampled_from(["rouge1", "rouge2", "rouge3", "rouge4", "rouge6", "rouge9"])


@settings(max_examples=200, deadline=None)
@given(ngram_types, text, references, st.booleans())
def test_rouge_n_equals_rouge_score(
    rouge_type: str, candidate: str, refs: list[str], stem: bool
) -> None:
    assert_parity(rouge_type, candidate, refs, stem)


@settings(max_examples=200, deadline=None)
@given(text, references, st.booleans())
def test_rouge_l_equals_rouge_score(candidate: str, refs: list[str], stem: bool) -> None:
    assert_parity("rougeL", candidate, refs, stem)


@settings(max_examples=200, deadline=None)
@given(text, references, st.booleans())
def test_rouge_lsum_equals_rouge_score(candidate: str, refs: list[str], stem: bool) -> None:
    assert_parity("rougeLsum", candidate, refs, stem)


# Few distinct words, many short lines: union LCSs overlap and the unigram clipping bites.
dense_summary = st.lists(
    st.lists(st.sampled_from(["a", "b", "c", "the", "cats", "cat"]), max_size=8).map(" ".join),
    min_size=1,
    max_size=6,
).map("\n".join)


@settings(max_examples=200, deadline=None)
@given(dense_summary, st.lists(dense_summary, min_size=1, max_size=4), st.booleans())
def test_rouge_lsum_clipping_equals_rouge_score(
    candidate: str, refs: list[str], stem: bool
) -> None:
    assert_parity("rougeLsum", candidate, refs, stem)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.large_base_example])
@given(long_text(), long_text(), st.sampled_from(["rouge2", "rougeL", "rougeLsum"]))
def test_two_thousand_token_lines(candidate: str, reference: str, rouge_type: str) -> None:
    assert_parity(rouge_type, candidate, [reference], stem=True)


@settings(max_examples=5, deadline=None)
@given(st.lists(word, min_size=400, max_size=400).map(" ".join), st.integers(5, 40))
def test_long_multi_sentence_summaries(body: str, every: int) -> None:
    words = body.split()
    lines = [" ".join(words[i : i + every]) for i in range(0, len(words), every)]
    candidate = "\n".join(lines[::2] + lines[1::2])
    assert_parity("rougeLsum", candidate, ["\n".join(lines)], stem=False)


@pytest.mark.parametrize("rouge_type", ["rouge1", "rouge2", "rougeL", "rougeLsum"])
@pytest.mark.parametrize(
    ("candidate", "refs"),
    [
        ("", [""]),
        ("", ["testing one two"]),
        ("testing one two", [""]),
        ("\n\n", ["a\n\nb"]),
        ("the the the the", ["the", "the the the the the"]),
        ("a b", ["b a", "a b"]),  # ties on F: the first best reference wins
        ("Café naïve 中文", ["cafe naive", "caf na ve"]),
    ],
)
def test_edge_cases_equal_rouge_score(rouge_type: str, candidate: str, refs: list[str]) -> None:
    assert_parity(rouge_type, candidate, refs, stem=False)
    assert_parity(rouge_type, candidate, refs, stem=True)


# -- corpus score, components, signature, options ---------------------------------------------


def test_corpus_score_is_mean_f_on_100_scale() -> None:
    candidates = ["the cat sat", "a dog", ""]
    refs = [["the cat sat down"], ["a dog ran", "the dog"], ["nothing"]]
    metric = create_metric("rouge1")
    (result,) = score_corpus([("rouge1", metric)], candidates, refs)
    expected = [
        scorer("rouge1", False).score_multi(r, c)["rouge1"]
        for c, r in zip(candidates, refs, strict=True)
    ]
    score = result.corpus_score()
    assert score.score == pytest.approx(100 * sum(s.fmeasure for s in expected) / 3)
    assert score.components["precision"] == pytest.approx(
        100 * sum(s.precision for s in expected) / 3
    )
    assert score.components["recall"] == pytest.approx(100 * sum(s.recall for s in expected) / 3)
    assert result.per_example() == pytest.approx([100 * s.fmeasure for s in expected])
    # A slice of the corpus is the mean over its examples.
    assert result.corpus_score([1]).score == pytest.approx(100 * expected[1].fmeasure)


def test_empty_corpus_scores_zero() -> None:
    metric = create_metric("rougeL")
    assert metric.score_stats([0.0, 0.0, 0.0, 0.0]) == 0.0
    assert metric.components([0.0, 0.0, 0.0, 0.0])["fmeasure"] == 0.0


def test_signatures() -> None:
    assert (
        str(create_metric("rouge2").signature([1, 1]))
        == "nrefs:1|tok:default|stem:no|version:0.1.0"
    )
    assert (
        str(
            create_metric("rougeL", {"use_stemmer": "true", "tokenizer": "unicode"}).signature(
                [2, 3]
            )
        )
        == "nrefs:var|tok:unicode|stem:porter-nltk3.10|version:0.1.0"
    )
    assert str(create_metric("rougeLsum").signature([4])) == (
        "nrefs:4|tok:default|stem:no|split:newline|version:0.1.0"
    )


def test_one_preprocess_for_the_family(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    original = rouge.RougeText.__init__

    def counting(self: rouge.RougeText, text: str, tokenize: Any) -> None:
        built.append(text)
        original(self, text, tokenize)

    monkeypatch.setattr(rouge.RougeText, "__init__", counting)
    names = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    metrics = [(name, create_metric(name, {"use_stemmer": True})) for name in names]
    assert len({metric.preprocess_key() for _, metric in metrics}) == 1
    score_corpus(metrics, ["a b c", "b c"], [["a b", "c"], ["a b"]])
    assert sorted(built) == ["a b", "a b c", "b c", "c"]
    # Different tokenizer or stemmer options do not share.
    keys = {
        create_metric("rouge1").preprocess_key(),
        create_metric("rouge1", {"use_stemmer": True}).preprocess_key(),
        create_metric("rouge1", {"tokenizer": "unicode"}).preprocess_key(),
    }
    assert len(keys) == 3


def test_bad_options_are_metric_errors() -> None:
    with pytest.raises(MetricError, match="tokenizer"):
        create_metric("rouge1", {"tokenizer": "13a"})
    with pytest.raises(MetricError, match="did you mean 'use_stemmer'"):
        create_metric("rougeL", {"use_stemer": True})
    with pytest.raises(MetricError, match="split_summaries"):
        create_metric("rougeL", {"split_summaries": True})


def test_unicode_tokenizer_scores_chinese() -> None:
    # 我喜欢吃苹果 / 我喜欢吃香蕉: six characters each, four shared (我 喜 欢 吃):
    # P = R = F = 4/6 = 66.67; rouge-score's own tokenizer sees no token at all (0).
    candidates, refs = ["我喜欢吃苹果。"], [["我喜欢吃香蕉。"]]
    (stats,) = goldgate_stats("rouge1", candidates, refs, tokenizer="unicode")
    assert stats[:3] == pytest.approx((4 / 6, 4 / 6, 4 / 6))
    (default,) = goldgate_stats("rouge1", candidates, refs)
    assert default[:3] == (0.0, 0.0, 0.0)
    # ROUGE-2: bigrams 我喜 喜欢 欢吃 吃苹 苹果 vs 我喜 喜欢 欢吃 吃香 香蕉: 3 of 5.
    (bigrams,) = goldgate_stats("rouge2", candidates, refs, tokenizer="unicode")
    assert bigrams[:3] == pytest.approx((3 / 5, 3 / 5, 3 / 5))


def test_unicode_tokenizer_scores_russian_and_arabic() -> None:
    # Two of three words shared, in order: ROUGE-L P = R = 2/3.
    (ru,) = goldgate_stats(
        "rougeL", ["Кошка сидит дома"], [["кошка спит дома"]], tokenizer="unicode"
    )
    assert ru[:2] == pytest.approx((2 / 3, 2 / 3))
    (ar,) = goldgate_stats(
        "rougeL", ["ذهب الولد إلى المدرسة"], [["ذهب الولد إلى البيت"]], tokenizer="unicode"
    )
    assert ar[:2] == pytest.approx((3 / 4, 3 / 4))


# -- split_summaries (NLTK punkt) ---------------------------------------------------------


def _punkt_installed() -> bool:
    try:
        nltk.sent_tokenize("One. Two.")
    except LookupError:
        return False
    return True


@pytest.mark.skipif(_punkt_installed(), reason="punkt data is installed here")
def test_split_summaries_without_punkt_is_refused() -> None:
    with pytest.raises(MetricError, match="punkt"):
        create_metric("rougeLsum", {"split_summaries": True})


def test_split_summaries_uses_nltk_like_rouge_score(monkeypatch: pytest.MonkeyPatch) -> None:
    # punkt's data cannot be downloaded here, so both sides get the same stand-in splitter
    # through the very attribute rouge-score calls (nltk.sent_tokenize).
    def fake_sent_tokenize(text: str) -> list[str]:
        return [piece for piece in text.replace("? ", "?|").replace(". ", ".|").split("|")]

    monkeypatch.setattr(nltk, "sent_tokenize", fake_sent_tokenize)
    candidate = "The cat sat. It was on the mat? Then the dog came."
    refs = ["A cat sat on the mat. The dog came. It sat.", "Cats sat? Dogs came."]
    metric = create_metric("rougeLsum", {"split_summaries": True})
    assert "split:punkt" in str(metric.signature([2]))
    (result,) = score_corpus([("rougeLsum", metric)], [candidate], [refs])
    peer = rouge_scorer.RougeScorer(["rougeLsum"], split_summaries=True)
    expected = peer.score_multi(refs, candidate)["rougeLsum"]
    assert result.stats[0][:3] == pytest.approx(tuple(expected), abs=1e-12)
    # Newline splitting would have scored the same texts as ROUGE-L.
    flat = create_metric("rougeLsum")
    (plain,) = score_corpus([("rougeLsum", flat)], [candidate], [refs])
    assert plain.stats[0] != result.stats[0]


# -- real data ---------------------------------------------------------------------------------


def _rows(name: str, limit: int) -> list[dict[str, Any]]:
    path = DATA / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (the shared data sits beside the repository)")
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for _, line in zip(range(limit), handle, strict=False)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "limit", "split"),
    [
        ("summ_summeval_cnndm.jsonl", 48, False),
        ("summ_summeval_cnndm.jsonl", 48, True),
        ("summ_xsum_maynez2020.jsonl", 300, False),
    ],
)
def test_real_data_equals_rouge_score(name: str, limit: int, split: bool) -> None:
    rows = _rows(name, limit)

    def prepare(text: str) -> str:
        # SummEval is PTB-tokenised without newlines: " . " ends a sentence.
        return text.replace(" . ", " .\n") if split else text

    candidates = [prepare(row["candidate"]) for row in rows]
    references = [[prepare(ref) for ref in row["references"]] for row in rows]
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    metrics = [(t, create_metric(t, {"use_stemmer": True})) for t in types]
    results = score_corpus(metrics, candidates, references)
    peer = rouge_scorer.RougeScorer(types, use_stemmer=True)
    for index, (candidate, refs) in enumerate(zip(candidates, references, strict=True)):
        expected = peer.score_multi(refs, candidate)
        for rouge_type, result in zip(types, results, strict=True):
            ours = result.stats[index][:3]
            theirs = expected[rouge_type]
            assert all(
                abs(100 * a - 100 * b) <= TOLERANCE for a, b in zip(ours, theirs, strict=True)
            ), (
                rouge_type,
                index,
            )
