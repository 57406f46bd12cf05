"""goldgate's TER against sacrebleu 2.6's: its published vectors, generated text, real data."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import TER as SacreTER
from sacrebleu.metrics.lib_ter import translation_edit_rate
from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer as SacreTercom
from sacrebleu.utils import sum_of_lists

from goldgate.metrics import base as base_module
from goldgate.metrics.base import sum_stats
from goldgate.metrics.edit.ter_edits import edit_count
from goldgate.metrics.edit.ter_tokenize import TercomTokenizer
from goldgate.metrics.engine import MetricResult, score_corpus
from goldgate.metrics.registry import create_metric, metric_from_spec
from tests.shared_data import DATA
from tests.strategies import any_text, corpus, tokenizer_soup

TOLERANCE = 1e-9
LARGE = [HealthCheck.large_base_example, HealthCheck.data_too_large, HealthCheck.too_slow]
OPTION_NAMES = ("normalized", "no_punct", "asian_support", "case_sensitive")
Corpus = list[tuple[str, list[str]]]

options_strategy = st.fixed_dictionaries({name: st.booleans() for name in OPTION_NAMES})


def run(options: dict[str, Any], examples: Corpus) -> MetricResult:
    metric = create_metric("ter", options)
    return score_corpus(
        [("ter", metric)], [c for c, _ in examples], [refs for _, refs in examples]
    )[0]


def streams(examples: Corpus) -> list[list[str | None]]:
    width = max(len(refs) for _, refs in examples)
    return [[refs[i] if i < len(refs) else None for _, refs in examples] for i in range(width)]


def assert_equal_to_sacrebleu(options: dict[str, Any], examples: Corpus) -> None:
    """Corpus score, statistics and every sentence score equal sacrebleu's to 1e-9."""
    result = run(options, examples)
    peer = SacreTER(**options)
    # The peer's segment statistics, computed once: its corpus_score sums them and its
    # sentence_score is the same computation on one segment (checked publicly below).
    rows = peer._extract_corpus_statistics([c for c, _ in examples], streams(examples))
    expected = peer._aggregate_and_compute(rows)
    assert abs(result.corpus_score().score - expected.score) <= TOLERANCE
    components = result.corpus_score().components
    assert components["num_edits"] == expected.num_edits
    assert abs(components["ref_length"] - expected.ref_length) <= TOLERANCE
    sentences = [peer._compute_score_from_stats(row).score for row in rows]
    assert result.per_example() == pytest.approx(sentences, abs=TOLERANCE, rel=0)
    candidate, refs = examples[0]
    assert abs(result.per_example()[0] - peer.sentence_score(candidate, refs).score) <= TOLERANCE


# -- sacrebleu's own test vectors (test/test_ter.py and test/test_tokenizer_ter.py) ----------

PUBLISHED = [
    (["aaaa bbbb cccc dddd"], ["aaaa bbbb cccc dddd"], 0),
    (["dddd eeee ffff"], ["aaaa bbbb cccc"], 1),
    ([""], ["a"], 1),
    (["d e f g h a b c"], ["a b c d e f g h"], 1 / 8),
    (
        [
            'wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen '
            "oder zu entfernen , damit das Bild ungefähr dieselbe Größe aufweist wie die andere "
            "Größe .",
            "wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im "
            'Menü des Aufgabenbedienfelds die Option " Alle Aufgaben aktualisieren . "',
            'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " '
            'Benutzerdefiniert " und geben Sie Werte für " Fehlerkorrektur-Level " und " Y / '
            'X-Verhältnis " ein .',
            "Sie können beispielsweise ein Dokument erstellen , das ein Auto über die Bühne "
            "enthält .",
            'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " '
            'Neu . "',
        ],
        [
            'wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen '
            "oder zu entfernen , damit die Darstellung des Bildes in einer anderen Größe "
            "beibehalten wird .",
            "wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im "
            'Menü des Aufgabenbedienfelds die Option " Alle Aufgaben aktualisieren . "',
            'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " '
            'Benutzerdefiniert " und geben Sie für " Fehlerkorrektur-Level " und " Y / '
            'X-Verhältnis " niedrigere Werte ein .',
            "Sie können beispielsweise ein Dokument erstellen , das ein Auto enthalt , das sich "
            "über die Bühne bewegt .",
            'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " '
            'Neu . "',
        ],
        0.136,
    ),
]


@pytest.mark.parametrize(("hypotheses", "references", "expected"), PUBLISHED)
def test_sacrebleu_published_scores(
    hypotheses: list[str], references: list[str], expected: float
) -> None:
    examples = [(h, [r]) for h, r in zip(hypotheses, references, strict=True)]
    result = run({}, examples)
    assert abs(result.corpus_score().score - 100 * expected) < 1e-3  # sacrebleu's EPSILON
    assert_equal_to_sacrebleu({}, examples)


TOKENIZER_CASES = [
    ({}, "a b c d", "a b c d"),
    ({}, "", ""),
    ({}, "a b c d.", "a b c d."),
    ({}, "A B C D.", "a b c d."),
    ({"no_punct": True}, "a b c d.", "a b c d"),
    ({"no_punct": True}, "A ; B ) C : D.", "a b c d"),
    ({"normalized": True}, "a b (c) d.", "a b ( c ) d ."),
    ({"normalized": True}, "Jim's car.", "jim 's car ."),
    ({"normalized": True}, "4.2", "4.2"),
    ({"normalized": True, "asian_support": True}, "美众院公布对特", "美 众 院 公 布 对 特"),
    ({"normalized": True, "asian_support": True}, "りの拳銃を持", "りの 拳 銃 を 持"),
]


@pytest.mark.parametrize(("options", "text", "expected"), TOKENIZER_CASES)
def test_sacrebleu_published_tokenizer_cases(
    options: dict[str, bool], text: str, expected: str
) -> None:
    assert TercomTokenizer(**options)(text) == expected


@settings(max_examples=300, deadline=None)
@given(options=options_strategy, text=any_text | tokenizer_soup)
def test_tokenizer_equals_sacrebleu(options: dict[str, bool], text: str) -> None:
    assert TercomTokenizer(**options)(text) == SacreTercom(**options)(text)


# -- generated text --------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=LARGE)
@given(options=options_strategy, examples=corpus())
def test_equals_sacrebleu_on_generated_corpora(options: dict[str, Any], examples: Corpus) -> None:
    assert_equal_to_sacrebleu(options, examples)


few_words = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=40)


@settings(max_examples=400, deadline=None)
@given(hyp=few_words, ref=few_words)
def test_edit_count_equals_sacrebleu_on_repetitive_words(hyp: list[str], ref: list[str]) -> None:
    # Five words: many matching blocks, many shifts, ties everywhere.
    assert edit_count(hyp, ref) == translation_edit_rate(hyp, ref)[0]


@pytest.mark.parametrize("seed", range(3))
def test_edit_count_equals_sacrebleu_where_the_beam_and_limits_bite(seed: int) -> None:
    # Long, lopsided and repetitive pairs: paths leave the beam, blocks hit the shift limits and
    # the search hits its 1,000-candidate limit.
    rng = random.Random(seed)
    for _ in range(2):
        vocabulary = [str(k) for k in range(rng.choice([2, 3, 8, 40]))]
        m = rng.choice([rng.randint(1, 12), rng.randint(50, 110)])
        n = rng.choice([rng.randint(0, 12), rng.randint(50, 110)])
        ref = [rng.choice(vocabulary) for _ in range(m)]
        hyp = [rng.choice(vocabulary) for _ in range(n)]
        if rng.random() < 0.5:  # a shuffled, lightly edited reference
            hyp = list(ref)
            for _ in range(rng.randint(1, 8)):
                i, j, size = rng.randrange(m), rng.randrange(m), rng.randint(1, 12)
                block = hyp[i : i + size]
                del hyp[i : i + size]
                hyp[j:j] = block
        assert edit_count(hyp, ref) == translation_edit_rate(hyp, ref)[0], (hyp, ref)


# -- the metric ------------------------------------------------------------------------------


def test_lower_is_better_signature_and_components() -> None:
    metric = metric_from_spec("ter:normalized=true,case_sensitive=true")
    assert metric.higher_is_better is False
    assert (
        str(metric.signature([2, 2]))
        == "nrefs:2|case:mixed|tok:tercom|norm:yes|punct:yes|asian:no|version:0.1.0"
    )
    assert str(create_metric("ter", {"no_punct": True, "asian_support": True}).signature([1])) == (
        "nrefs:1|case:lc|tok:tercom|norm:no|punct:no|asian:yes|version:0.1.0"
    )
    result = run({}, [("a b c", ["a b d", "x"]), ("", ["a b"])])
    assert result.corpus_score().components == {"num_edits": 3, "ref_length": 4.0}
    assert result.corpus_score().score == pytest.approx(75.0)


def test_slices_and_resamples_are_sums_of_example_statistics() -> None:
    examples: Corpus = [
        ("the cat sat on the mat", ["the cat is on the mat", "a cat sat"]),
        ("on the mat sat the cat", ["the cat sat on the mat"]),
        ("", ["nothing here"]),
        ("extra words", [""]),
    ]
    result = run({}, examples)
    for indices in ([0, 1], [1, 3], [0, 0, 2], [3]):
        subset = [examples[i] for i in indices]
        expected = SacreTER().corpus_score([c for c, _ in subset], streams(subset)).score
        assert abs(result.corpus_score(indices).score - expected) <= TOLERANCE


def test_empty_reference_and_hypothesis_cases() -> None:
    assert_equal_to_sacrebleu({}, [("", [""]), ("a", [""]), ("", ["a b"])])
    assert run({}, [("", [""])]).corpus_score().score == 0.0
    assert run({}, [("a", [""])]).corpus_score().score == 100.0


# -- real data: a sample here, the whole files in benchmarks/bench_ter_meteor.py --------------


def _load(filename: str, size: int, seed: int = 12, max_refs: int = 3) -> Corpus:
    path = DATA / filename
    if not path.exists():
        pytest.skip(f"{path} is absent (real data lives beside the repository)")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    sample = random.Random(seed).sample(rows, size)
    return [(row["candidate"], row["references"][:max_refs]) for row in sample]


@pytest.mark.parametrize(
    ("filename", "size", "options"),
    [
        ("mt_wmt21_newstest2021_de-en.Facebook-AI.jsonl", 80, {}),
        ("mt_wmt21_newstest2021_de-en.Online-B.jsonl", 40, {"normalized": True}),
        ("mt_wmt21_newstest2021_de-en.UEdin.jsonl", 40, {"no_punct": True, "case_sensitive": True}),
        (
            "mt_wmt21_newstest2021_en-zh.NiuTrans.jsonl",
            6,
            {"normalized": True, "asian_support": True},
        ),
        (
            "mt_wmt21_newstest2021_en-zh.Online-B.jsonl",
            40,
            {"no_punct": True, "asian_support": True},
        ),
        ("summ_summeval_cnndm.jsonl", 2, {}),
    ],
)
def test_real_data_samples(filename: str, size: int, options: dict[str, Any]) -> None:
    assert_equal_to_sacrebleu(options, _load(filename, size))


@pytest.mark.parametrize(("between", "edits"), [(49, 1), (50, 1), (51, 4)])
def test_a_shift_reaches_exactly_fifty_words(between: int, edits: int) -> None:
    # Issue 30, item 21: `A B` moved past 50 words is one edit (one shift), as in sacrebleu;
    # past 51 it is out of reach (two deletions and two insertions).
    words = [f"w{k}" for k in range(between)]
    hyp, ref = ["A", "B", *words], [*words, "A", "B"]
    assert edit_count(hyp, ref) == translation_edit_rate(hyp, ref)[0] == edits
    result = run({}, [(" ".join(hyp), [" ".join(ref)])])
    expected = SacreTER().corpus_score([" ".join(hyp)], [[" ".join(ref)]])
    assert result.corpus_score().components == {"num_edits": edits, "ref_length": between + 2.0}
    assert result.corpus_score().score == pytest.approx(expected.score, abs=1e-12)
    assert result.corpus_score().score == pytest.approx(100 * edits / (between + 2))


def _thirds_corpus() -> Corpus:
    """Three references of different lengths a segment: mean lengths in thirds, which no
    float holds exactly, so the order and manner of adding them shows in the last bits."""
    words = ["the", "cat", "sat", "on", "a", "mat", "while", "dogs", "ran", "far", "away"]
    return [
        (
            " ".join(words[: i % 9 + 1]),
            [" ".join(words[: i % k + 1]) for k in (5, 7, 11)],
        )
        for i in range(300)
    ]


def test_corpus_statistics_add_as_sacrebleu_adds_them_bit_for_bit() -> None:
    examples = _thirds_corpus()
    expected = SacreTER().corpus_score([c for c, _ in examples], streams(examples))
    score = run({}, examples).corpus_score()
    assert score.components["ref_length"] == expected.ref_length
    assert score.score == expected.score


def test_corpus_statistics_add_left_to_right_whatever_the_interpreters_sum(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """sacrebleu adds its segment statistics in a loop (``sum_of_lists``), so Python 3.12's
    compensated ``sum`` of floats does not change its totals: goldgate's must not change
    either. A compensated ``sum`` (``math.fsum``) stands in for 3.12's, so this fails on
    3.11 too when the totals come from the interpreter's ``sum``."""
    examples = _thirds_corpus()
    rows = SacreTER()._extract_corpus_statistics([c for c, _ in examples], streams(examples))
    assert math.fsum(row[1] for row in rows) != sum_of_lists(rows)[1]  # the manners differ
    monkeypatch.setattr(base_module, "sum", math.fsum, raising=False)
    assert sum_stats(rows) == sum_of_lists(rows)
