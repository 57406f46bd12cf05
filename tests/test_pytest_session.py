"""The plugin's session helpers: failure text, system settings, predictions, the handoff."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldgate.errors import GoldgateError
from goldgate.model.config import SystemConfig
from goldgate.model.example_table import ExampleResult
from goldgate.model.golden_records import GoldenRecord
from goldgate.model.goldens import GoldenSet
from goldgate.model.result import (
    CheckResult,
    CheckStatus,
    Interval,
    MetricSummary,
    RunResult,
    SuiteResult,
    Verdict,
)
from goldgate.pytest.outputs import system_settings, write_predictions
from goldgate.pytest.rendering import SHOWN_CHARS, metric_table, render_failure, worst_regressed
from goldgate.pytest.session import Outcome
from goldgate.systems.predictions import read_predictions


def example(
    n: int, now: float, then: float | None, output: str = "out", was: str | None = "old"
) -> ExampleResult:
    return ExampleResult(
        id=f"ex-{n}",
        line=n,
        input=f"input {n}",
        references=[f"reference {n}"],
        output=output,
        baseline_output=was if then is not None else None,
        scores={"em": now},
        baseline_scores={} if then is None else {"em": then},
    )


def suite(examples: list[ExampleResult], *, baseline: float | None = 80.0) -> SuiteResult:
    summary = MetricSummary(
        metric="em",
        signature="em|v1",
        current=60.0,
        baseline=baseline,
        delta=None if baseline is None else 60.0 - baseline,
        interval=None if baseline is None else Interval(low=-30.0, high=-10.0, level=0.95),
        p_value=None if baseline is None else 0.004,
    )
    return SuiteResult(
        name="qa",
        verdict=Verdict.REGRESSED,
        goldens="goldens/qa.jsonl",
        golden_hash="sha256:0",
        n_examples=len(examples),
        metrics=[summary],
        checks=[],
        examples=examples,
    )


def check(rule: str, status: CheckStatus = CheckStatus.FAIL) -> CheckResult:
    return CheckResult(
        suite="qa", metric="em", rule=rule, threshold=2.0, status=status, message=f"em {rule}"
    )


def test_worst_regressed_ranks_by_fall_then_golden_order_and_clips() -> None:
    long_output = "x" * (SHOWN_CHARS + 50)
    examples = [
        example(1, 100.0, 100.0),  # unchanged: not shown
        example(2, 50.0, 100.0, output="two\nlines"),
        example(3, 0.0, 100.0, output=long_output),
        example(4, 50.0, 100.0, was="out"),  # same output as before: no "was" line
        example(5, 90.0, 100.0),
    ]
    lines = worst_regressed(suite(examples), ["em"], limit=3)
    heads = [line for line in lines if line.startswith("  ex-") or line.startswith("  …")]
    assert heads == [
        "  ex-3 (goldens/qa.jsonl:3): em 100.00 → 0.00",
        "  ex-2 (goldens/qa.jsonl:2): em 100.00 → 50.00",
        "  ex-4 (goldens/qa.jsonl:4): em 100.00 → 50.00",
        "  … and 1 more",
    ]
    assert "    output:    two\\nlines" in lines
    clipped = next(line for line in lines if line.startswith("    output:    xx"))
    assert clipped.endswith("…") and len(clipped.split(": ", 1)[1].strip()) == SHOWN_CHARS
    block_4 = lines[lines.index(heads[2]) :]
    assert not any(line.startswith("    was:") for line in block_4)


def test_failure_text_without_a_baseline_shows_the_lowest_or_highest_examples() -> None:
    examples = [example(n, score, None) for n, score in enumerate([70.0, 10.0, 40.0], start=1)]
    text = render_failure(suite(examples, baseline=None), [check("min")])
    assert "lowest-scoring examples (em):" in text
    assert text.index("ex-2 (") < text.index("ex-3 (") < text.index("ex-1 (")
    assert "worst regressed" not in text
    high = render_failure(suite(examples, baseline=None), [check("max")])
    assert high.index("ex-1 (") < high.index("ex-3 (") < high.index("ex-2 (")


def test_metric_table_aligns_columns() -> None:
    lines = metric_table(suite([]))
    assert lines[0].split() == ["metric", "baseline", "current", "delta", "interval", "p"]
    assert lines[1].split() == ["em", "80.00", "60.00", "-20.00", "[-30.00,", "-10.00]", "0.004"]
    assert len({len(line) for line in lines}) == 1


def test_outcome_survives_the_handoff() -> None:
    result = RunResult(
        goldgate_version="0", created_at="now", verdict=Verdict.REGRESSED, suites=[suite([])]
    )
    back = Outcome.from_json(Outcome(result=result).to_json())
    assert back.result == result and back.error is None
    assert Outcome.from_json(Outcome(error="boom").to_json()) == Outcome(error="boom")


CONFIGURED = SystemConfig(callable="app:answer", concurrency=4)


def test_system_settings_for_a_python_callable() -> None:
    def answer(x: str) -> str:
        return x

    function, settings = system_settings(CONFIGURED, answer, {"samples": 2})
    assert function is answer
    assert settings.samples == 2 and settings.concurrency == 4
    assert settings.cache == "off"  # a Python object has no stable identity to cache under
    assert settings.callable is not None and settings.callable.endswith(":" + answer.__qualname__)


def test_system_settings_for_paths_and_mappings() -> None:
    assert system_settings(CONFIGURED, None, {}) == (None, CONFIGURED)
    function, settings = system_settings(CONFIGURED, "other:fn", {})
    assert function is None and settings.callable == "other:fn"
    _, predictions = system_settings(CONFIGURED, {"predictions": "out/{suite}.jsonl"}, {})
    assert predictions.kind == "predictions" and predictions.callable is None


def test_system_settings_errors() -> None:
    with pytest.raises(TypeError, match=r"'timeout' .*did you mean 'timeout_s'"):
        system_settings(CONFIGURED, None, {"timeout": 3})
    with pytest.raises(GoldgateError, match="invalid system settings"):
        system_settings(CONFIGURED, None, {"samples": 0})
    with pytest.raises(TypeError, match="system= must be"):
        system_settings(CONFIGURED, 42, {})  # type: ignore[arg-type]


@pytest.mark.parametrize("samples", [1, 3])
def test_predictions_round_trip(tmp_path: Path, samples: int) -> None:
    records = tuple(
        GoldenRecord(id=f"r{i}", input=i, references=("x",), tags=(), meta={}, line=i + 1)
        for i in range(4)
    )
    golden = GoldenSet(suite="s", path=tmp_path / "g.jsonl", records=records, content_hash="")
    outputs = {r.id: [f"{r.id} ünï\n{k}" for k in range(samples)] for r in records}
    system = write_predictions(tmp_path / "p.jsonl", outputs)
    assert system.samples == samples
    assert read_predictions(tmp_path / "p.jsonl", golden, samples=samples) == outputs
