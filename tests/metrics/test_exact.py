"""Exact match and token F1 equal the SQuAD evaluation scripts, example for example."""

from __future__ import annotations

import collections
import json
import re
import string
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldgate.errors import MetricError
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.exact import STEPS, ExactMatch, TokenF1, resolve_normalizer
from goldgate.metrics.registry import create_metric, metric_from_spec
from tests.shared_data import DATA
from tests.strategies import any_text, corpus, example


# --- SQuAD v1.1 evaluate-v1.1.py, its functions copied verbatim -------------------------------
def normalize_answer(s):
    """Lower text and remove punctuation, articles and extra whitespace."""

    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def f1_score(prediction, ground_truth):
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1


def exact_match_score(prediction, ground_truth):
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def metric_max_over_ground_truths(metric_fn, prediction, ground_truths):
    scores_for_ground_truths = []
    for ground_truth in ground_truths:
        score = metric_fn(prediction, ground_truth)
        scores_for_ground_truths.append(score)
    return max(scores_for_ground_truths)


# --- SQuAD v2.0 evaluate-v2.0.py, its functions copied verbatim -------------------------------
def normalize_answer_v2(s):
    """Lower text and remove punctuation, articles and extra whitespace."""

    def remove_articles(text):
        regex = re.compile(r"\b(a|an|the)\b", re.UNICODE)
        return re.sub(regex, " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def get_tokens(s):
    if not s:
        return []
    return normalize_answer_v2(s).split()


def compute_exact(a_gold, a_pred):
    return int(normalize_answer_v2(a_gold) == normalize_answer_v2(a_pred))


def compute_f1(a_gold, a_pred):
    gold_toks = get_tokens(a_gold)
    pred_toks = get_tokens(a_pred)
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        # If either is no-answer, then F1 is 1 if they agree, 0 otherwise
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1


def v2_golds(answers: Sequence[str]) -> list[str]:
    """get_raw_scores' gold list: answers that normalise to nothing are dropped."""
    gold_answers = [a for a in answers if normalize_answer_v2(a)]
    if not gold_answers:
        # For unanswerable questions, only correct answer is empty string
        gold_answers = [""]
    return gold_answers


# --- helpers ----------------------------------------------------------------------------------
def per_example(spec: str, rows: Sequence[tuple[str, Sequence[str]]]) -> list[float]:
    """goldgate's sentence-level scores through the engine, EM and F1 sharing preprocessing."""
    metric = metric_from_spec(spec)
    (result,) = score_corpus([(spec, metric)], [c for c, _ in rows], [r for _, r in rows])
    return result.per_example()


def corpus_scores(rows: Sequence[tuple[str, Sequence[str]]], normalizer: str) -> dict[str, float]:
    specs = [f"exact_match:normalizer={normalizer}", f"token_f1:normalizer={normalizer}"]
    results = score_corpus(
        [(spec, metric_from_spec(spec)) for spec in specs],
        [c for c, _ in rows],
        [r for _, r in rows],
    )
    em, f1 = (result.corpus_score().score for result in results)
    return {"exact_match": em, "f1": f1}


def squad_v1_corpus(rows: Sequence[tuple[str, Sequence[str]]]) -> dict[str, float]:
    """evaluate-v1.1.py's evaluate() over (prediction, gold answers) pairs."""
    f1 = exact_match = total = 0
    for prediction, ground_truths in rows:
        total += 1
        exact_match += metric_max_over_ground_truths(exact_match_score, prediction, ground_truths)
        f1 += metric_max_over_ground_truths(f1_score, prediction, ground_truths)
    return {"exact_match": 100.0 * exact_match / total, "f1": 100.0 * f1 / total}


# --- published and worked examples ------------------------------------------------------------
def test_worked_example_treaty_of_versailles() -> None:
    """The seed's QA example: articles decide EM; without article removal F1 is 6/7."""
    rows = [("Treaty of Versailles", ["the Treaty of Versailles"])]
    assert per_example("exact_match", rows) == [100.0]
    assert per_example("token_f1", rows) == [100.0]
    no_articles = "lower+strip_punct+white_space_fix"
    assert per_example(f"exact_match:normalizer={no_articles}", rows) == [0.0]
    # Three of the four reference tokens: P = 1, R = 3/4, F1 = 6/7 ("about 0.86").
    (f1,) = per_example(f"token_f1:normalizer={no_articles}", rows)
    assert f1 == pytest.approx(100 * 6 / 7, abs=1e-12)
    # The seed says F1 is "about 0.86 either way": not under squad, which drops "the" first.


def test_worked_example_dropped_modifiers() -> None:
    """The seed's summary example: EM 0; SQuAD F1 is 6 of 6 candidate, 6 of 8 reference words."""
    rows = [
        (
            "the cat sat on the mat by the window",
            ["the cat sat quietly on the warm mat by the window"],
        )
    ]
    assert per_example("exact_match", rows) == [0.0]
    (f1,) = per_example("token_f1", rows)
    assert f1 == pytest.approx(100 * 2 * 1 * 0.75 / 1.75, abs=1e-12)


@pytest.mark.parametrize(
    ("candidate", "reference", "em", "f1"),
    [
        ("a-b", "ab", 100.0, 100.0),  # punctuation deleted, not replaced
        ("a - b", "ab", 0.0, 0.0),  # "a" is an article: "b" against "ab"
        ("", "", 100.0, 0.0),  # v1.1: F1 is 0 without overlap, even when both are empty
        ("The.", "", 100.0, 0.0),
        ("Paris", "paris!", 100.0, 100.0),
        ("new york city", "york", 0.0, 50.0),
    ],
)
def test_squad_rules(candidate: str, reference: str, em: float, f1: float) -> None:
    rows = [(candidate, [reference])]
    assert per_example("exact_match", rows) == [em]
    assert per_example("token_f1", rows) == [pytest.approx(f1, abs=1e-12)]


@pytest.mark.parametrize(
    ("candidate", "references", "em", "f1"),
    [
        ("", ["the"], 100.0, 100.0),  # every gold normalises away → [""]; empty matches empty
        ("", ["Paris"], 0.0, 0.0),
        ("Paris", ["the", "Paris"], 100.0, 100.0),
        ("London", ["an"], 0.0, 0.0),
    ],
)
def test_squad_v2_empty_answers(
    candidate: str, references: list[str], em: float, f1: float
) -> None:
    rows = [(candidate, references)]
    assert per_example("exact_match:normalizer=squad_v2", rows) == [em]
    assert per_example("token_f1:normalizer=squad_v2", rows) == [f1]


# --- differential against the verbatim scripts -------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(row=example(max_refs=4))
def test_v1_per_example_equals_script(row: tuple[str, list[str]]) -> None:
    candidate, refs = row
    em = metric_max_over_ground_truths(exact_match_score, candidate, refs)
    f1 = metric_max_over_ground_truths(f1_score, candidate, refs)
    assert per_example("exact_match", [row]) == [100.0 * em]
    assert per_example("token_f1", [row]) == [100.0 * f1]


@settings(max_examples=300, deadline=None)
@given(row=example(max_refs=4) | st.tuples(any_text, st.lists(st.sampled_from(["", "the", " a "]))))
def test_v2_per_example_equals_script(row: tuple[str, list[str]]) -> None:
    candidate, refs = row
    if not refs:
        refs = [""]
    golds = v2_golds(refs)
    em = max(compute_exact(a, candidate) for a in golds)
    f1 = max(compute_f1(a, candidate) for a in golds)
    assert per_example("exact_match:normalizer=squad_v2", [(candidate, refs)]) == [100.0 * em]
    assert per_example("token_f1:normalizer=squad_v2", [(candidate, refs)]) == [100.0 * f1]


@settings(max_examples=200, deadline=None)
@given(rows=corpus(max_size=8))
def test_v1_corpus_equals_script(rows: list[tuple[str, list[str]]]) -> None:
    expected = squad_v1_corpus(rows)
    got = corpus_scores(rows, "squad")
    assert got["exact_match"] == pytest.approx(expected["exact_match"], abs=1e-9)
    assert got["f1"] == pytest.approx(expected["f1"], abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(text=any_text)
def test_squad_normaliser_equals_normalize_answer(text: str) -> None:
    assert resolve_normalizer("squad").function()(text) == normalize_answer(text)
    # The same steps spelled as a list take the general path and must agree too.
    generic = resolve_normalizer("squad")
    steps = [STEPS[step] for step in generic.steps]
    value = text
    for step in steps:
        value = step(value)
    assert value == normalize_answer(text)


def _load_rows(path: Path) -> list[tuple[str, list[str]]]:
    with path.open(encoding="utf-8") as handle:
        return [(row["candidate"], row["references"]) for row in map(json.loads, handle)]


@pytest.mark.parametrize(
    ("system", "published"),
    [("bert-ensemble", (86.21, 92.20)), ("logreg-baseline", (40.14, 50.98))],
)
def test_real_squad_dev_equals_script_and_published(
    system: str, published: tuple[float, float]
) -> None:
    path = DATA / f"qa_squad_v1.1_dev.{system}.jsonl"
    if not path.exists():
        pytest.skip(f"{path} not present (shared data is optional)")
    rows = _load_rows(path)
    expected = squad_v1_corpus(rows)
    got = corpus_scores(rows, "squad")
    assert got["exact_match"] == pytest.approx(expected["exact_match"], abs=1e-9)
    assert got["f1"] == pytest.approx(expected["f1"], abs=1e-9)
    assert (round(got["exact_match"], 2), round(got["f1"], 2)) == published


# --- normalisers and signatures ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "label"),
    [
        ("squad", "squad.v1"),
        ("squad_v2", "squad_v2.v1"),
        ("strict", "strict.v1"),
        ("lower", "lower.v1"),
        ("lower+nfkc", "custom.v1[lower+nfkc]"),
        (["lower", "nfkc"], "custom.v1[lower+nfkc]"),
        ("nfkc", "custom.v1[nfkc]"),
        # A list equal to a named normaliser's steps is that normaliser.
        (["lower", "strip_punct", "remove_articles", "white_space_fix"], "squad.v1"),
        ("lower+white_space_fix", "lower.v1"),
    ],
)
def test_normaliser_signature(value: str | list[str], label: str) -> None:
    for name in ("exact_match", "token_f1"):
        metric = create_metric(name, {"normalizer": value})
        assert str(metric.signature([1, 2])) == f"nrefs:var|norm:{label}|version:0.1.0"


def test_default_is_squad() -> None:
    assert str(create_metric("exact_match").signature([1])) == "nrefs:1|norm:squad.v1|version:0.1.0"


@pytest.mark.parametrize(
    ("step", "text", "expected"),
    [
        ("lower", "ÀB", "àb"),
        ("casefold", "Straße", "strasse"),
        ("strip", "  a b \n", "a b"),
        ("white_space_fix", " a \t\u00a0 b\n", "a b"),
        ("strip_punct", "a-b, «c»!", "ab «c»"),
        ("strip_unicode_punct", "a-b, «c»!「引号」", "ab c引号"),
        ("remove_articles", "the cat a theme", "  cat   theme"),
        ("nfc", "e\u0301", "é"),
        ("nfkc", "ﬁ ½", "fi 1⁄2"),
    ],
)
def test_steps(step: str, text: str, expected: str) -> None:
    assert resolve_normalizer([step]).function()(text) == expected


def test_strict_and_lower() -> None:
    rows = [(" Paris\n", ["Paris"]), ("paris", ["Paris"]), ("New  York", ["new york"])]
    assert per_example("exact_match:normalizer=strict", rows) == [100.0, 0.0, 0.0]
    assert per_example("exact_match:normalizer=lower", rows) == [100.0, 100.0, 100.0]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"normalizer": "sqaud"}, "unknown normalizer 'sqaud' (did you mean 'squad'?)"),
        ({"normalizer": "lower+nfkk"}, "unknown normalizer step 'nfkk' (did you mean 'nfkc'?)"),
        ({"normalizer": ["lower", "strip_puncts"]}, "did you mean 'strip_punct'?"),
        ({"normalizer": []}, "at least one step"),
        ({"normalizer": [1]}, "must be names"),
        ({"normaliser": "squad"}, "unknown option 'normaliser'"),
    ],
)
def test_bad_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(MetricError, match=re.escape(message)):
        create_metric("exact_match", options)


# --- the metric contract ----------------------------------------------------------------------
def test_contract() -> None:
    em = create_metric("exact_match")
    f1 = create_metric("token_f1")
    assert isinstance(em, ExactMatch) and isinstance(f1, TokenF1)
    assert em.binary and not f1.binary
    assert em.stat_names == ("correct", "count")
    assert f1.stat_names == ("f1_sum", "count")
    # One normaliser, one preprocessing: the engine shares it between the two metrics.
    assert em.preprocess_key() == f1.preprocess_key()
    other = create_metric("token_f1", {"normalizer": "lower"})
    assert other.preprocess_key() != f1.preprocess_key()
    assert hash(create_metric("exact_match", {"normalizer": ["lower", "nfkc"]}).options)


def test_stats_and_components() -> None:
    rows = [("Paris", ["paris"]), ("London", ["Paris", "London town"]), ("x", ["y"])]
    specs = ["exact_match", "token_f1"]
    em, f1 = score_corpus(
        [(spec, metric_from_spec(spec)) for spec in specs],
        [c for c, _ in rows],
        [r for _, r in rows],
    )
    assert em.stats == ((1.0, 1.0), (0.0, 1.0), (0.0, 1.0))
    assert em.corpus_score().components == {"correct": 1, "count": 3}
    assert em.corpus_score().score == pytest.approx(100 / 3)
    assert f1.per_example() == [100.0, pytest.approx(100 * 2 / 3), 0.0]
    assert f1.corpus_score().score == pytest.approx((100 + 200 / 3) / 3)


def test_empty_corpus_scores_zero() -> None:
    for name in ("exact_match", "token_f1"):
        metric = create_metric(name)
        assert metric.score_stats([0.0, 0.0]) == 0.0


def test_f1_never_exceeds_one_on_near_misses() -> None:
    """The early exit on an identical reference relies on F1 ≤ 1 after rounding."""
    for n in range(1, 60):
        for m in range(1, n + 1):
            candidate = " ".join(f"w{i}" for i in range(n))
            reference = " ".join(f"w{i}" for i in range(m))
            assert f1_score(candidate, reference) <= 1.0
