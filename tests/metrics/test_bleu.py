"""goldgate's BLEU and sentence BLEU against sacrebleu 2.6: published values and differences."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
import sacrebleu
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU as SacreBLEU

from goldgate.errors import InputError, MetricError
from goldgate.metrics.base import Metric, Stats
from goldgate.metrics.engine import MetricResult, score_corpus
from goldgate.metrics.ngram import bleu as bleu_module
from goldgate.metrics.ngram.bleu import BLEU, SentenceBLEU
from goldgate.metrics.registry import create_metric, metric_from_spec
from tests.shared_data import DATA
from tests.strategies import any_text, corpus, long_text

TOLERANCE = 1e-9
LARGE = [HealthCheck.large_base_example, HealthCheck.data_too_large, HealthCheck.too_slow]

Corpus = list[tuple[str, list[str]]]

# sacrebleu's README example (also in its test_bleu.py): three hypotheses, two reference streams.
README_HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
README_REFS = [
    ["The dog bit the man.", "The dog had bit the man."],
    ["It was not unexpected.", "No one was surprised."],
    ["The man bit him first.", "The man had bitten the dog."],
]
# sacrebleu's test_sentence_bleu.py, from its issue #98.
RO_REF = "producţia de zahăr brut se exprimă în zahăr alb;"
RO_SYS = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"


def run(name: str, options: dict[str, Any], examples: Corpus) -> MetricResult:
    metric = create_metric(name, options)
    candidates = [candidate for candidate, _ in examples]
    references = [refs for _, refs in examples]
    return score_corpus([(name, metric)], candidates, references)[0]


def streams(examples: Corpus) -> list[list[str | None]]:
    """sacrebleu's reference streams; a missing reference is None (its `nrefs:var` input)."""
    width = max(len(refs) for _, refs in examples)
    return [[refs[i] if i < len(refs) else None for _, refs in examples] for i in range(width)]


def peer(options: dict[str, Any], **overrides: Any) -> SacreBLEU:
    return SacreBLEU(**{**options, **overrides})


@st.composite
def bleu_options(draw: st.DrawFn) -> dict[str, Any]:
    """Every BLEU option, each left at its default some of the time."""
    options: dict[str, Any] = {}
    if draw(st.booleans()):
        options["tokenize"] = draw(st.sampled_from(["13a", "intl", "zh", "char", "none"]))
    if draw(st.booleans()):
        options["lowercase"] = draw(st.booleans())
    if draw(st.booleans()):
        method = draw(st.sampled_from(["none", "floor", "add-k", "exp"]))
        options["smooth_method"] = method
        if method in ("floor", "add-k") and draw(st.booleans()):
            options["smooth_value"] = draw(
                st.sampled_from([0, 0.01, 0.1, 0.5, 1, 2]) | st.floats(0, 3, allow_nan=False)
            )
    if draw(st.booleans()):
        options["max_ngram_order"] = draw(st.integers(1, 6))
    if draw(st.booleans()):
        options["effective_order"] = draw(st.booleans())
    return options


# -- published values -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "expected", "tolerance"),
    [
        ({}, 48.530827, 1e-6),
        ({"tokenize": "none"}, 49.1919566, 1e-7),
        ({"tokenize": "13a"}, 48.530827, 1e-6),
        ({"tokenize": "intl"}, 43.91623493, 1e-8),
        ({"smooth_method": "none"}, 48.530827, 1e-6),
        ({"max_ngram_order": 1}, 77.65, 0.005),
        ({"max_ngram_order": 2}, 60.50, 0.005),
        ({"max_ngram_order": 3}, 53.93, 0.005),
        ({"max_ngram_order": 4}, 48.53, 0.005),
        ({"max_ngram_order": 5}, 46.14, 0.005),
        ({"max_ngram_order": 6}, 43.28, 0.005),
    ],
)
def test_readme_example(options: dict[str, Any], expected: float, tolerance: float) -> None:
    result = run("bleu", options, list(zip(README_HYPS, README_REFS, strict=True)))
    assert result.corpus_score().score == pytest.approx(expected, abs=tolerance)


def test_readme_example_with_empty_hypotheses_scores_zero() -> None:
    result = run("bleu", {}, [("", refs) for refs in README_REFS])
    assert result.corpus_score().score == 0.0


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"smooth_method": "exp"}, 8.493),
        ({"smooth_method": "none"}, 0.0),
        ({"smooth_method": "floor"}, 4.51688),
        ({"smooth_method": "floor", "smooth_value": 0.1}, 4.51688),
        ({"smooth_method": "floor", "smooth_value": 0.5}, 10.10),
        ({"smooth_method": "add-k"}, 14.882),
        ({"smooth_method": "add-k", "smooth_value": 1}, 14.882),
        ({"smooth_method": "add-k", "smooth_value": 2}, 21.389),
        ({"tokenize": "none"}, 7.347),
        ({"tokenize": "intl"}, 8.493),
        ({"tokenize": "char"}, 40.8759),
        ({"tokenize": "char", "lowercase": True}, 42.0267),
    ],
)
def test_sacrebleu_sentence_values(options: dict[str, Any], expected: float) -> None:
    # sacrebleu's own tolerance for these (test_sentence_bleu.py) is 1e-3.
    sentence = run("sentence_bleu", options, [(RO_SYS, [RO_REF])])
    assert sentence.corpus_score().score == pytest.approx(expected, abs=1e-3)
    corpus_bleu = run("bleu", options, [(RO_SYS, [RO_REF])])
    assert corpus_bleu.per_example() == [pytest.approx(expected, abs=1e-3)]


def test_zh_quirk_example() -> None:
    example = [("我喜欢吃苹果。", ["我喜欢吃香蕉。"])]
    assert run("sentence_bleu", {"tokenize": "zh"}, example).per_example() == [
        pytest.approx(43.47208719449914, abs=TOLERANCE)
    ]
    assert run("sentence_bleu", {}, example).per_example() == [0.0]


def test_seed_example() -> None:
    example = [
        (
            "the cat sat on the mat by the window",
            ["the cat sat quietly on the warm mat by the window"],
        )
    ]
    assert round(run("bleu", {}, example).corpus_score().score, 2) == 38.52


def test_effective_order_only_skips_orders_without_hypothesis_ngrams() -> None:
    example = [("a b c", ["a b d"])]
    assert run("bleu", {}, example).corpus_score().score == 0.0
    assert round(run("bleu", {"effective_order": True}, example).corpus_score().score, 2) == 55.03


def test_identical_sentence_keeps_sacrebleus_float_noise() -> None:
    example = [("The cat sat on the mat.", ["The cat sat on the mat."])]
    expected = sacrebleu.sentence_bleu(*example[0]).score
    assert expected != 100.0  # the quirk this test is about
    assert run("sentence_bleu", {}, example).per_example() == [expected]


# -- differential properties ----------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(examples=corpus(), options=bleu_options())
def test_corpus_bleu_equals_sacrebleu(examples: Corpus, options: dict[str, Any]) -> None:
    result = run("bleu", options, examples)
    hyps = [candidate for candidate, _ in examples]
    expected = peer(options).corpus_score(hyps, streams(examples))
    score = result.corpus_score()
    assert abs(score.score - expected.score) <= TOLERANCE
    components = score.components
    assert components["precisions"] == pytest.approx(expected.precisions, abs=TOLERANCE)
    assert components["bp"] == pytest.approx(expected.bp, abs=TOLERANCE)
    assert (components["sys_len"], components["ref_len"]) == (expected.sys_len, expected.ref_len)
    assert components["ratio"] == pytest.approx(expected.ratio, abs=TOLERANCE)


@settings(max_examples=150, deadline=None)
@given(examples=corpus(), options=bleu_options())
def test_per_example_equals_sacrebleu_sentence_bleu(
    examples: Corpus, options: dict[str, Any]
) -> None:
    sentence_peer = peer(options, effective_order=True)
    expected = [sentence_peer.sentence_score(hyp, refs).score for hyp, refs in examples]
    actual = run("bleu", options, examples).per_example()
    assert actual == pytest.approx(expected, abs=TOLERANCE)


@settings(max_examples=150, deadline=None)
@given(examples=corpus(), options=bleu_options())
def test_sentence_bleu_metric_equals_sacrebleu(examples: Corpus, options: dict[str, Any]) -> None:
    sentence_peer = peer({"effective_order": True, **options})
    expected = [sentence_peer.sentence_score(hyp, refs).score for hyp, refs in examples]
    result = run("sentence_bleu", options, examples)
    assert result.per_example() == pytest.approx(expected, abs=TOLERANCE)
    assert result.corpus_score().score == pytest.approx(statistics.fmean(expected), abs=TOLERANCE)


@settings(max_examples=100, deadline=None)
@given(candidate=any_text, references=st.lists(any_text, min_size=1, max_size=4))
def test_module_level_functions_agree(candidate: str, references: list[str]) -> None:
    """sacrebleu.sentence_bleu / corpus_bleu, the functions most users call."""
    examples = [(candidate, references)]
    assert run("sentence_bleu", {}, examples).per_example() == [
        pytest.approx(sacrebleu.sentence_bleu(candidate, references).score, abs=TOLERANCE)
    ]
    assert run("bleu", {}, examples).corpus_score().score == pytest.approx(
        sacrebleu.corpus_bleu([candidate], [[ref] for ref in references]).score, abs=TOLERANCE
    )


@settings(max_examples=10, deadline=None, suppress_health_check=LARGE)
@given(
    candidate=long_text(2000),
    references=st.lists(long_text(2000), min_size=1, max_size=3),
    options=bleu_options(),
)
def test_2000_token_lines(candidate: str, references: list[str], options: dict[str, Any]) -> None:
    examples = [(candidate, references)]
    expected = peer(options).corpus_score([candidate], streams(examples)).score
    result = run("bleu", options, examples)
    assert abs(result.corpus_score().score - expected) <= TOLERANCE
    sentence = peer(options, effective_order=True).sentence_score(candidate, references).score
    assert result.per_example() == [pytest.approx(sentence, abs=TOLERANCE)]


def test_empty_reference_is_a_real_reference() -> None:
    examples: Corpus = [("a b c", ["", "x y z w v u"]), ("", [""]), ("", ["a b"])]
    hyps = [candidate for candidate, _ in examples]
    expected = SacreBLEU().corpus_score(hyps, streams(examples))
    score = run("bleu", {}, examples).corpus_score()
    assert score.score == expected.score
    assert (score.components["sys_len"], score.components["ref_len"]) == (3, 2)


def test_closest_reference_length_ties_go_to_the_shorter() -> None:
    # hyp length 4, references of length 3 and 5: both 1 away; sacrebleu picks 3.
    score = run("bleu", {}, [("a b c d", ["a b c", "a b c d e"])]).corpus_score()
    assert score.components["ref_len"] == 3


@settings(max_examples=100, deadline=None)
@given(examples=corpus(), options=bleu_options())
def test_packed_dict_and_mixed_counting_agree(examples: Corpus, options: dict[str, Any]) -> None:
    """Texts whose token ids do not fit the int64 packing use dicts; every mix agrees."""
    expected = run("bleu", options, examples).stats
    assert run_with_packing(options, examples, lambda tokens: False) == expected
    assert run_with_packing(options, examples, lambda tokens: len(tokens) % 2 == 0) == expected


def run_with_packing(
    options: dict[str, Any], examples: Corpus, allowed: Callable[[list[str]], bool]
) -> tuple[Stats, ...]:
    real = bleu_module.token_ids

    def token_ids(tokens: list[str], max_order: int) -> Any:
        return real(tokens, max_order) if allowed(tokens) else None

    with mock.patch.object(bleu_module, "token_ids", token_ids):
        return run("bleu", options, examples).stats


# -- signatures, options, sharing -----------------------------------------------------------


def _without_version(signature: str) -> str:
    return "|".join(f for f in str(signature).split("|") if not f.startswith("version:"))


@settings(max_examples=100, deadline=None)
@given(examples=corpus(max_size=3), options=bleu_options())
def test_signature_matches_sacrebleus(examples: Corpus, options: dict[str, Any]) -> None:
    sacre = peer(options)
    sacre.corpus_score([candidate for candidate, _ in examples], streams(examples))
    expected = _without_version(str(sacre.get_signature()))
    order = options.get("max_ngram_order", 4)
    if order != 4:
        expected += f"|order:{order}"
    result = run("bleu", options, examples)
    assert _without_version(str(result.signature)) == expected
    assert str(result.signature).split("|")[-1].startswith("version:")


def test_signature_examples() -> None:
    examples: Corpus = [("a", ["a", "b"]), ("b", ["b"])]
    assert str(run("bleu", {}, examples).signature).startswith(
        "nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:"
    )
    floor = run("bleu", {"smooth_method": "floor", "lowercase": True}, examples)
    assert "|case:lc|eff:no|tok:13a|smooth:floor[0.10]|" in str(floor.signature)
    add_k = run("sentence_bleu", {"smooth_method": "add-k", "smooth_value": 2}, examples)
    assert "|eff:yes|tok:13a|smooth:add-k[2.00]|" in str(add_k.signature)


@pytest.mark.parametrize(
    "options",
    [
        {"tokenize": "13b"},
        {"tokenize": "ja-jumanpp"},
        {"smooth_method": "laplace"},
        {"smooth_method": "exp", "smooth_value": 0.1},
        {"smooth_method": "none", "smooth_value": 1},
        {"smooth_method": "floor", "smooth_value": -0.1},
        {"smooth_method": "add-k", "smooth_value": float("nan")},
        {"max_ngram_order": 0},
        {"max_ngram_order": 1000},
        {"max_ngram_order": 2.5},
        {"lowercase": "maybe"},
        {"tokenizer": "13a"},
    ],
)
@pytest.mark.parametrize("name", ["bleu", "sentence_bleu"])
def test_invalid_options_are_metric_errors(name: str, options: dict[str, Any]) -> None:
    with pytest.raises(MetricError) as info:
        create_metric(name, options)
    assert name in str(info.value)


def test_options_from_a_command_line_spec() -> None:
    metric = metric_from_spec(
        "bleu:tokenize=intl,lowercase=true,smooth_method=floor,smooth_value=0.2,max_ngram_order=3"
    )
    assert isinstance(metric, BLEU)
    opts = metric.options
    assert (opts.tokenize, opts.lowercase, opts.smooth_method) == ("intl", True, "floor")
    assert (opts.smooth_value, opts.max_ngram_order, opts.effective_order) == (0.2, 3, False)
    sentence = metric_from_spec("sentence_bleu")
    assert isinstance(sentence, SentenceBLEU)
    assert sentence.options.effective_order is True


def test_bleu_and_sentence_bleu_share_preprocessing() -> None:
    def key(name: str, **options: Any) -> Any:
        metric: Metric[Any] = create_metric(name, options)
        return metric.preprocess_key()

    assert key("bleu") == key("sentence_bleu") == key("bleu", smooth_method="floor")
    assert key("bleu", effective_order=True) == key("bleu")
    assert key("bleu") != key("bleu", tokenize="intl")
    assert key("bleu") != key("bleu", lowercase=True)
    assert key("bleu") != key("bleu", max_ngram_order=3)


def test_stat_names_follow_the_order() -> None:
    assert create_metric("bleu").stat_names == (
        "hyp_len",
        "ref_len",
        *(f"correct_{n}" for n in range(1, 5)),
        *(f"total_{n}" for n in range(1, 5)),
    )
    result = run("bleu", {"max_ngram_order": 2}, [("a b", ["a b"])])
    assert len(result.metric.stat_names) == len(result.stats[0]) == 6


def test_slices_sum_statistics() -> None:
    examples = list(zip(README_HYPS, README_REFS, strict=True))
    result = run("bleu", {}, examples)
    first_two = SacreBLEU().corpus_score(README_HYPS[:2], streams(examples[:2])).score
    assert result.corpus_score([0, 1]).score == first_two
    sentence = run("sentence_bleu", {}, examples)
    assert sentence.corpus_score([2]).score == sentence.per_example()[2]


# -- real data ------------------------------------------------------------------------------


def _load(filename: str) -> Corpus:
    path = DATA / filename
    if not path.exists():
        pytest.skip(f"{path} is absent (real data lives beside the repository)")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [(row["candidate"], row["references"]) for row in rows]


@pytest.mark.parametrize(
    ("filename", "options"),
    [
        ("mt_wmt21_newstest2021_de-en.Facebook-AI.jsonl", {}),
        ("mt_wmt21_newstest2021_de-en.UEdin.jsonl", {"tokenize": "intl", "lowercase": True}),
        ("mt_wmt21_newstest2021_en-zh.NiuTrans.jsonl", {"tokenize": "zh"}),
        ("mt_wmt21_newstest2021_en-zh.Online-B.jsonl", {"tokenize": "zh", "max_ngram_order": 6}),
    ],
)
def test_real_wmt21_systems(filename: str, options: dict[str, Any]) -> None:
    examples = _load(filename)
    hyps = [candidate for candidate, _ in examples]
    result = run("bleu", options, examples)
    expected = peer(options).corpus_score(hyps, streams(examples))
    assert abs(result.corpus_score().score - expected.score) <= TOLERANCE
    sentence_peer = peer(options, effective_order=True)
    per_example = [sentence_peer.sentence_score(hyp, refs).score for hyp, refs in examples]
    assert result.per_example() == pytest.approx(per_example, abs=TOLERANCE)


def test_known_figure_for_facebook_ai_de_en() -> None:
    examples = _load("mt_wmt21_newstest2021_de-en.Facebook-AI.jsonl")
    assert round(run("bleu", {}, examples).corpus_score().score, 2) == 53.34


@pytest.mark.parametrize("name", ["bleu", "sentence_bleu"])
def test_empty_corpus_is_an_error_and_an_empty_slice_scores_zero(name: str) -> None:
    with pytest.raises(InputError, match="nothing to score: the corpus is empty"):
        score_corpus([(name, create_metric(name))], [], [])
    result = score_corpus([(name, create_metric(name))], ["a cat"], [["a cat"]])[0]
    assert result.corpus_score(indices=[]).score == 0.0
