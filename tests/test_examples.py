"""The bundled example: golden files, example systems and the gate in ``goldgate.yaml``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from goldgate.examples import systems
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.registry import create_metric
from goldgate.model.config_loading import load_config
from goldgate.model.goldens import load_goldens
from goldgate.model.result import CheckStatus, Verdict
from goldgate.runner import bless, check, run

ROOT = Path(__file__).resolve().parents[1]
SUITES: dict[str, Callable[[Any], str]] = {
    "summarize": systems.summarize,
    "translate": systems.translate,
    "qa": systems.answer,
}
RECORD_KEYS = {"id", "input", "references", "tags", "meta"}

# What the example systems are meant to be: decent, not perfect. The bounds are deliberately
# loose; the exact figures are in goldgate.baseline.json once blessed.
CLAIMED_RANGES: dict[str, dict[str, tuple[float, float]]] = {
    "summarize": {
        "rouge1": (40.0, 60.0),
        "rouge2": (15.0, 35.0),
        "rougeL": (30.0, 60.0),
        "rougeLsum": (30.0, 60.0),
        "length_ratio": (100.0, 150.0),
    },
    "translate": {"bleu": (20.0, 60.0), "chrf": (60.0, 85.0)},
    "qa": {"exact_match": (40.0, 80.0), "token_f1": (50.0, 90.0)},
}


def _raw_records(suite: str) -> list[dict[str, Any]]:
    path = ROOT / "goldens" / f"{suite}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _scores(suite: str) -> dict[str, float]:
    config = load_config(ROOT / "goldgate.yaml")
    suite_config = config.suites[suite]
    golden = load_goldens(suite_config.goldens, suite)
    candidates = [SUITES[suite](record.input) for record in golden.records]
    references = [list(record.references) for record in golden.records]
    metrics = [
        (name, create_metric(name, options)) for name, options in suite_config.metrics.items()
    ]
    results = score_corpus(metrics, candidates, references)
    return {result.spec: result.corpus_score().score for result in results}


@pytest.mark.parametrize("suite", list(SUITES))
def test_golden_file_is_valid(suite: str) -> None:
    records = _raw_records(suite)
    assert len(records) >= 50
    ids = [record["id"] for record in records]
    assert len(set(ids)) == len(ids)
    for record in records:
        assert set(record) == RECORD_KEYS, record["id"]
        assert record["references"], record["id"]
        assert all(isinstance(r, str) and r.strip() for r in record["references"]), record["id"]
        assert record["tags"] and all(isinstance(t, str) for t in record["tags"]), record["id"]
        if suite == "qa":
            assert set(record["input"]) == {"question", "context"}, record["id"]
        else:
            assert isinstance(record["input"], str) and record["input"].strip(), record["id"]


@pytest.mark.parametrize("suite", list(SUITES))
def test_golden_file_loads_through_goldgate(suite: str) -> None:
    golden = load_goldens(ROOT / "goldens" / f"{suite}.jsonl", suite)
    raw = _raw_records(suite)
    assert [r.id for r in golden.records] == [r["id"] for r in raw]
    assert [list(r.references) for r in golden.records] == [r["references"] for r in raw]
    # Every tag is a slice in the report; a slice of one example says nothing.
    counts = {tag: sum(tag in r.tags for r in golden.records) for tag in golden.tags()}
    assert min(counts.values()) >= 3, counts


def test_qa_answers_occur_in_their_context() -> None:
    for record in _raw_records("qa"):
        context = record["input"]["context"]
        # SQuAD-style: at least one gold answer is a span of the context.
        assert any(answer in context for answer in record["references"]), record["id"]


def test_summaries_are_shorter_than_their_articles() -> None:
    for record in _raw_records("summarize"):
        for reference in record["references"]:
            assert len(reference) < len(record["input"]) / 2, record["id"]


@pytest.mark.parametrize("suite", list(SUITES))
def test_systems_are_deterministic_and_never_empty(suite: str) -> None:
    system = SUITES[suite]
    inputs = [record["input"] for record in _raw_records(suite)]
    first = [system(item) for item in inputs]
    # In reverse order too, so no hidden state carries over from one call to the next.
    second = [system(item) for item in reversed(inputs)][::-1]
    assert first == second
    for item, output in zip(inputs, first, strict=True):
        assert isinstance(output, str) and output.strip(), item


@pytest.mark.parametrize("suite", list(SUITES))
def test_config_points_each_suite_at_its_example_system(suite: str) -> None:
    config = load_config(ROOT / "goldgate.yaml")
    assert config.suites[suite].goldens == ROOT / "goldens" / f"{suite}.jsonl"
    target = config.system_for(suite).callable
    assert target is not None
    module, _, function = target.partition(":")
    assert module == systems.__name__
    assert getattr(systems, function) is SUITES[suite]
    assert config.report.dir == ROOT / "goldgate-report"


@pytest.mark.parametrize("suite", list(SUITES))
def test_scores_sit_in_the_claimed_ranges(suite: str) -> None:
    scores = _scores(suite)
    assert set(scores) == set(CLAIMED_RANGES[suite])
    for name, (low, high) in CLAIMED_RANGES[suite].items():
        assert low <= scores[name] <= high, (name, scores[name])


@pytest.mark.parametrize("suite", list(SUITES))
def test_gate_thresholds_sit_a_few_points_from_todays_scores(suite: str) -> None:
    config = load_config(ROOT / "goldgate.yaml")
    scores = _scores(suite)
    rules = config.suites[suite].gate
    assert rules
    for name, rule in rules.items():
        # The example must pass its own gate, with a margin small enough to catch a regression.
        if rule.min is not None:
            assert 1.0 <= scores[name] - rule.min <= 6.0, (name, scores[name], rule.min)
        if rule.max is not None:
            assert 1.0 <= rule.max - scores[name] <= 25.0, (name, scores[name], rule.max)


def test_the_committed_baseline_matches_todays_example(tmp_path: Path) -> None:
    # Editing a golden set, a metric option or an example system needs `goldgate bless`.
    config = load_config(ROOT / "goldgate.yaml")
    checks = check(config)
    assert [(c.suite, c.in_baseline, c.error) for c in checks] == [
        (suite, True, None) for suite in SUITES
    ]
    result = run(config.model_copy(update={"cache_dir": tmp_path}), write_reports=False)
    assert result.verdict == Verdict.PASS
    for suite in result.suites:
        for metric in suite.metrics:
            assert metric.delta == 0.0, (suite.name, metric.metric)


def test_the_bundled_gate_passes_today_and_catches_a_regression(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(ROOT / "goldgate.yaml")
    config = config.model_copy(
        update={"baseline": tmp_path / "baseline.json", "cache_dir": tmp_path / "cache"}
    )
    bless(config)
    assert run(config, write_reports=False).verdict == Verdict.PASS

    # Word-by-word translation, no phrases: the kind of slip a refactor could introduce.
    monkeypatch.setattr(systems, "_MAX_PHRASE", 1)
    result = run(config.model_copy(update={"cache_dir": tmp_path / "cache-2"}), write_reports=False)
    assert result.verdict == Verdict.REGRESSED
    failed = {
        (suite.name, check.metric, check.rule)
        for suite in result.suites
        for check in suite.checks
        if check.status == CheckStatus.FAIL
    }
    assert ("translate", "bleu", "max_drop") in failed
    assert {name for name, _, _ in failed} == {"translate"}


def test_summarize_keeps_the_lead_and_one_more_sentence() -> None:
    article = (
        "The lake froze early this year. Skaters arrived on Sunday. "
        "Ice on the lake was ten centimetres thick. A café sold tea."
    )
    lead, second = systems.summarize(article).split("\n")
    assert lead == "The lake froze early this year."
    assert second == "Ice on the lake was ten centimetres thick."
    assert systems.summarize("Only one sentence here.") == "Only one sentence here."


def test_translate_prefers_the_longest_phrase_and_passes_unknown_words() -> None:
    assert systems.translate("Wie viel kostet das?") == "How much costs the?"
    assert systems.translate("Der Zug nach Zürich.") == "The train to Zürich."
    # Mid-sentence "Sie" is the polite "you"; sentence-initial "Sie" stays "she".
    assert systems.translate("Können Sie kommen?") == "Can you kommen?"
    assert systems.translate("Sie arbeitet.") == "She works."


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who repaired the clock?", "Anna Berg"),
        ("When was the clock repaired?", "1998"),
        ("How many bells does the tower have?", "three"),
        ("How tall is the tower?", "42 metres"),
        ("Where does the clock stand?", "Elm Square"),
    ],
)
def test_answer_extracts_a_span_of_the_asked_kind(question: str, expected: str) -> None:
    context = (
        "The clock stands in Elm Square. "
        "The clock was repaired in 1998 by the clockmaker Anna Berg. "
        "The tower is 42 metres tall and has three bells."
    )
    assert systems.answer({"question": question, "context": context}) == expected


@pytest.mark.parametrize(
    ("system", "bad_input"),
    [
        (systems.summarize, {"text": "a dict, not a string"}),
        (systems.translate, None),
        (systems.answer, "a string, not a question object"),
        (systems.answer, {"question": "Who?", "context": 3}),
    ],
)
def test_systems_reject_inputs_of_the_wrong_shape(
    system: Callable[[Any], str], bad_input: Any
) -> None:
    with pytest.raises(TypeError):
        system(bad_input)
