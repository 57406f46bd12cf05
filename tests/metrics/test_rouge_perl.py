"""ROUGE-W, ROUGE-S, ROUGE-SU: values computed by hand and properties against oracles."""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from goldgate.errors import MetricError
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.ngram import rouge_perl
from goldgate.metrics.registry import create_metric
from goldgate.metrics.text.rouge_tokenize import default_tokens
from tests.strategies import any_text, plain_text


def stats(name: str, candidate: str, references: list[str], **options: Any) -> tuple[float, ...]:
    metric = create_metric(name, options)
    (result,) = score_corpus([(name, metric)], [candidate], [references])
    return tuple(result.stats[0])


# -- ROUGE-W -------------------------------------------------------------------------------
# One formula, f(k) = k^1.2, for a one-sentence reference of m tokens and a candidate of n:
#   R = (hits / m^1.2)^(1/1.2),  P = (hits / n^1.2)^(1/1.2),  hits = Σ f(run lengths).


def test_rouge_w_one_sentence_by_hand() -> None:
    # ref "a b c d" (m = 4), cand "a b x d" (n = 4): runs "a b" and "d".
    # hits = 2^1.2 + 1^1.2 = 2.2973967 + 1 = 3.2973967;  4^1.2 = 5.2780316
    # R = P = (3.2973967 / 5.2780316)^(1/1.2) = 0.6247403^0.8333333 = 0.6756929 = F
    p, r, f, _ = stats("rougeW", "a b x d", ["a b c d"])
    assert r == pytest.approx(0.6756929, abs=1e-7)
    assert p == pytest.approx(0.6756929, abs=1e-7)
    assert f == pytest.approx(0.6756929, abs=1e-7)


def test_rouge_w_different_lengths_by_hand() -> None:
    # ref "the cat sat on the mat" (m = 6), cand "the cat on the mat" (n = 5):
    # runs "the cat" (2) and "on the mat" (3): hits = 2^1.2 + 3^1.2 = 2.2973967 + 3.7371928
    # = 6.0345895;  6^1.2 = 8.5858145;  5^1.2 = 6.8986483
    # R = (6.0345895 / 8.5858145)^(1/1.2) = 0.7028557^0.8333333 = 0.7453985
    # P = (6.0345895 / 6.8986483)^(1/1.2) = 0.8747496^0.8333333 = 0.8944782
    # F = 2·0.7453985·0.8944782 / (0.7453985 + 0.8944782) = 1.3334854 / 1.6398767 = 0.8131620
    p, r, f, _ = stats("rougeW", "the cat on the mat", ["the cat sat on the mat"])
    assert r == pytest.approx(0.7453985, abs=1e-7)
    assert p == pytest.approx(0.8944782, abs=1e-7)
    assert f == pytest.approx(0.8131620, abs=1e-7)


def test_rouge_w_identical_one_sentence_is_perfect() -> None:
    # hits = 5^1.2 = base, so R = P = 1. (ROUGE-1.5.5's second weighting of the base would
    # give R = (5^1.2 / (5^1.2)^1.2)^(1/1.2) = 5^(1 - 1.2) = 0.7248.)
    assert stats("rougeW", "one two three four five", ["one two three four five"])[:3] == (
        pytest.approx(1.0),
        pytest.approx(1.0),
        pytest.approx(1.0),
    )


def test_rouge_w_multi_sentence_reference_by_hand() -> None:
    # ref "a b" / "c d" (base = 2^1.2 + 2^1.2 = 4.5947934), cand "a b c d" (n = 4):
    # each reference sentence matches a run of 2: hits = 2·2^1.2 = 4.5947934.
    # R = (4.5947934 / 4.5947934)^(1/1.2) = 1
    # P = (4.5947934 / 4^1.2)^(1/1.2) = (4.5947934 / 5.2780316)^0.8333333 = 0.8908987
    p, r, _, _ = stats("rougeW", "a b c d", ["a b\nc d"])
    assert r == pytest.approx(1.0)
    assert p == pytest.approx(0.8908987, abs=1e-7)


def test_rouge_w_clips_repeated_matches() -> None:
    # ref "a b" / "a b", cand "a b": both reference sentences mark "a b", but the candidate
    # has one "a" and one "b", so only the first run counts: hits = 2^1.2.
    # base = 2·2^1.2: R = (1/2)^(1/1.2) = 0.5612310; P = (2^1.2 / 2^1.2)^(1/1.2) = 1.
    p, r, _, _ = stats("rougeW", "a b", ["a b\na b"])
    assert r == pytest.approx(0.5612310, abs=1e-7)
    assert p == pytest.approx(1.0)


def test_rouge_w_adds_the_reference_sentences_as_the_script_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reference's weighted length is added sentence by sentence, on every Python: a
    compensated ``sum`` (``math.fsum``, as 3.12's builtin) must not change the score."""
    reference = "\n".join(" ".join(["w"] * k) for k in (5, 19, 28, 26, 25, 3, 9, 4))
    lengths = [len(line.split()) ** 1.2 for line in reference.split("\n")]
    left_to_right = 0.0
    for value in lengths:
        left_to_right += value
    assert math.fsum(lengths) != left_to_right  # the two manners of adding differ here
    before = stats("rougeW", " ".join(["w"] * 16), [reference])
    monkeypatch.setattr(rouge_perl, "sum", math.fsum, raising=False)
    assert stats("rougeW", " ".join(["w"] * 16), [reference]) == before


def test_rouge_w_weight_option() -> None:
    # weight 2: ref "a b c d", cand "a b x d": hits = 2^2 + 1 = 5; R = (5 / 16)^(1/2) = 0.5590170
    _, r, _, _ = stats("rougeW", "a b x d", ["a b c d"], weight=2)
    assert r == pytest.approx(0.5590170, abs=1e-7)
    assert stats("rougeW", "", ["a"])[:3] == (0.0, 0.0, 0.0)
    assert stats("rougeW", "a", [""])[:3] == (0.0, 0.0, 0.0)


one_line = any_text.map(lambda text: text.replace("\n", " "))


@settings(max_examples=150, deadline=None)
@given(one_line, one_line, st.booleans())
def test_rouge_w_with_weight_one_is_rouge_l(candidate: str, reference: str, stem: bool) -> None:
    # f(k) = k: the hits are the LCS length and the bases the lengths, so one-line texts
    # score exactly rouge-score's ROUGE-L.
    ours = stats("rougeW", candidate, [reference], weight=1, use_stemmer=stem)
    theirs = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stem).score(reference, candidate)
    assert ours[:3] == pytest.approx(tuple(theirs["rougeL"]), abs=1e-12)


# -- ROUGE-S / ROUGE-SU ---------------------------------------------------------------------


def test_rouge_s_by_hand() -> None:
    # cand "a b x d": pairs ab ax ad bx bd xd (6); ref "a b c d": ab ac ad bc bd cd (6);
    # shared ab ad bd: P = R = F = 3/6.
    assert stats("rougeS", "a b x d", ["a b c d"])[:3] == (0.5, 0.5, 0.5)
    # max_skip 0 is plain bigrams: ab bx xd vs ab bc cd, one shared: 1/3.
    assert stats("rougeS", "a b x d", ["a b c d"], max_skip=0)[:3] == pytest.approx((1 / 3,) * 3)
    # SU adds the 4 unigrams of each side, 3 shared (a b d): (3 + 3) / (6 + 4) = 0.6.
    assert stats("rougeSU", "a b x d", ["a b c d"])[:3] == pytest.approx((0.6, 0.6, 0.6))


def test_rouge_s_skip_distance_by_hand() -> None:
    # cand "a b c d e f", ref "a f": the only reference pair is (a, f), 4 tokens apart in the
    # candidate. max_skip 4 allows it: hits 1, R = 1/1, P = 1/#cand pairs.
    # cand pairs with at most 4 between: all C(6, 2) = 15.  With max_skip 3: 15 - 1 = 14, and
    # (a, f) is not among them.
    p, r, _, _ = stats("rougeS", "a b c d e f", ["a f"])
    assert (p, r) == pytest.approx((1 / 15, 1.0))
    assert stats("rougeS", "a b c d e f", ["a f"], max_skip=3)[:2] == (0.0, 0.0)
    # Unlimited (negative) skip on 8 tokens: C(8, 2) = 28 pairs.
    p, r, _, _ = stats("rougeS", "a b c d e f g h", ["a h"], max_skip=-1)
    assert (p, r) == pytest.approx((1 / 28, 1.0))


def test_rouge_su_counts_the_last_token() -> None:
    # A one-word text has no skip-bigram; SU still counts its unigram (ROUGE-1.5.5 skips the
    # last token there and would score 0).
    assert stats("rougeSU", "cat", ["cat"])[:3] == (1.0, 1.0, 1.0)
    assert stats("rougeS", "cat", ["cat"])[:3] == (0.0, 0.0, 0.0)


def oracle_prf(cand: list[str], ref: list[str], max_skip: int, su: bool) -> tuple[float, float]:
    """Skip-bigram P and R from every pair of positions, filtered by distance."""

    def grams(tokens: list[str]) -> Counter[Any]:
        pairs = Counter(
            (tokens[i], tokens[j])
            for i, j in combinations(range(len(tokens)), 2)
            if max_skip < 0 or j - i - 1 <= max_skip
        )
        return pairs + Counter(tokens) if su else pairs

    c, r = grams(cand), grams(ref)
    hits = sum((c & r).values())
    total_c, total_r = sum(c.values()), sum(r.values())
    return (hits / total_c if total_c else 0.0, hits / total_r if total_r else 0.0)


@settings(max_examples=150, deadline=None)
@given(
    plain_text(max_words=25) | any_text,
    plain_text(max_words=25) | any_text,
    st.sampled_from([-1, 0, 1, 2, 4, 9]),
    st.booleans(),
)
def test_rouge_s_equals_pair_oracle(
    candidate: str, reference: str, max_skip: int, su: bool
) -> None:
    name = "rougeSU" if su else "rougeS"
    p, r, _, _ = stats(name, candidate, [reference], max_skip=max_skip)
    expected = oracle_prf(default_tokens(candidate), default_tokens(reference), max_skip, su)
    assert (p, r) == pytest.approx(expected, abs=1e-12)


def test_tokenizer_and_stemmer_options_apply() -> None:
    assert stats("rougeS", "Cats running", ["cat run"])[:3] == (0.0, 0.0, 0.0)
    assert stats("rougeS", "Cats running", ["cat run"], use_stemmer=True)[:3] == (1.0, 1.0, 1.0)
    assert stats("rougeSU", "我喜欢", ["我喜欢"])[:3] == (0.0, 0.0, 0.0)
    assert stats("rougeSU", "我喜欢", ["我喜欢"], tokenizer="unicode")[:3] == (1.0, 1.0, 1.0)
    assert stats("rougeW", "я дома", ["я дома"], tokenizer="unicode")[:3] == pytest.approx(
        (1, 1, 1)
    )


def test_best_reference_by_f() -> None:
    # The second reference matches exactly and wins; the first is ignored.
    assert stats("rougeS", "a b c", ["x y", "a b c"])[:3] == (1.0, 1.0, 1.0)


def test_signatures_and_options() -> None:
    assert str(create_metric("rougeW").signature([1])) == (
        "nrefs:1|tok:default|stem:no|weight:1.2|version:0.1.0"
    )
    assert str(create_metric("rougeS", {"max_skip": "-1"}).signature([1])) == (
        "nrefs:1|tok:default|stem:no|skip:inf|version:0.1.0"
    )
    assert "skip:4" in str(create_metric("rougeSU").signature([1]))
    with pytest.raises(MetricError, match="weight"):
        create_metric("rougeW", {"weight": 0.5})
    with pytest.raises(MetricError, match="max_skip"):
        create_metric("rougeS", {"max_skip": "four"})
    with pytest.raises(MetricError, match="unknown option 'weight'"):
        create_metric("rougeS", {"weight": 1.2})
    # The whole family shares one tokenisation per text.
    keys = {create_metric(n).preprocess_key() for n in ("rouge1", "rougeW", "rougeS", "rougeSU")}
    assert len(keys) == 1
