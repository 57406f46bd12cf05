"""Calibration on a seeded random system whose noise is known exactly."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import pytest

from goldgate.cli.main import main
from goldgate.gate.calibrate import calibrate, pair_rate, suggested_max_drop
from goldgate.model.config_loading import load_config
from tests.history import noisy

CONFIG = """\
version: 1
system: {{callable: "tests.history.noisy:answer", concurrency: 4}}
suites:
  qa:
    goldens: goldens/qa.jsonl
    metrics: {{exact_match: {{}}}}
    gate:
      exact_match: {{max_drop: {max_drop}}}  # the rule
significance: off
report: {{dir: out, formats: [json]}}
"""

#: The measured rate comes from K(K-1) correlated pairs of K = 30 runs. Simulating that
#: estimate 300 times for this system (numpy, independent seeds) gave a standard deviation of
#: 0.033 around the exact rate (largest error 0.102): the tolerance is 3 of those sd.
TOLERANCE = 0.10
RUNS = 30


def _project(root: Path, max_drop: float) -> None:
    (root / "goldgate.yaml").write_text(CONFIG.format(max_drop=max_drop))
    (root / "goldens").mkdir(exist_ok=True)
    rows = [
        {"id": f"q{k:03d}", "input": f"question {k}", "references": [f"answer {k}"]}
        for k in range(noisy.N)
    ]
    (root / "goldens" / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_measured_false_alarms_match_the_exact_rate_and_the_suggestion_holds(
    tmp_path: Path,
) -> None:
    max_drop = 4.0
    _project(tmp_path, max_drop)
    noisy.reset()
    result = calibrate(load_config(tmp_path), runs=RUNS, target=0.01)
    (suite,) = result.suites
    (metric,) = suite.metrics
    (rule,) = metric.rules
    assert (rule.rule, rule.threshold, rule.pairs) == ("max_drop", max_drop, RUNS * (RUNS - 1))

    # the replay through the gate equals brute force over the run scores...
    assert rule.rate == pair_rate(metric.scores, max_drop)
    assert metric.false_alarm_rate == suite.false_alarm_rate == rule.rate
    # ...and both are within the tolerance of the exact rate
    exact = noisy.exact_false_alarm_rate(max_drop)
    assert exact == pytest.approx(0.1266, abs=1e-4)
    assert abs(rule.rate - exact) <= TOLERANCE, (rule.rate, exact)

    # the spread is the known one within sampling error (sd of a run's score)
    known = 100 * float(np.sqrt(np.sum(noisy.P * (1 - noisy.P)))) / noisy.N
    assert metric.spread == pytest.approx(statistics.stdev(metric.scores))
    assert abs(metric.spread - known) / known < 0.3
    assert 200 < len(suite.changing) <= noisy.N

    # the suggested threshold keeps false alarms under the target, exactly and on fresh runs
    suggested = metric.suggested_max_drop
    assert suggested == suggested_max_drop(metric.spread, RUNS, 0.01)
    assert noisy.exact_false_alarm_rate(suggested) <= 0.01
    noisy.reset(epoch=1)
    fresh = [
        100 * sum(noisy.answer(f"question {k}") == f"answer {k}" for k in range(noisy.N)) / noisy.N
        for _ in range(120)
    ]
    assert pair_rate(fresh, suggested) <= 0.01 + 0.01
    # and it is not absurdly loose: the exact rate at half of it is well above the target
    assert noisy.exact_false_alarm_rate(suggested / 2) > 0.01


def test_calibrate_command_reports_and_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, 0.5)
    noisy.reset()
    assert main(["calibrate", "--runs", "6", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (metric,) = document["suites"][0]["metrics"]
    assert metric["false_alarm_rate"] > 0.2  # a max_drop of 0.5 on a noisy system
    suggested = metric["suggested_max_drop"]
    assert suggested > 3

    noisy.reset()  # the same draws: the same suggestion
    assert main(["calibrate", "--runs", "6", "--write"]) == 0
    out = capsys.readouterr().out
    assert "false alarms" in out and f"max_drop {suggested:.2f}" in out
    text = (tmp_path / "goldgate.yaml").read_text()
    assert f"exact_match: {{max_drop: {suggested:g}}}  # the rule" in text
    assert load_config(tmp_path).suites["qa"].gate["exact_match"].max_drop == suggested


def test_calibrate_refuses_too_few_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--runs", "1"]) == 2
    assert main(["calibrate", "--target", "0.7"]) == 2


def test_a_rule_that_meets_the_target_is_never_loosened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """3 runs once wrote max_drop: 95.56 over a rule that had 0.0 % false alarms."""
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, 12.0)
    before = (tmp_path / "goldgate.yaml").read_text()
    noisy.reset()
    assert main(["calibrate", "--runs", "3", "--write"]) == 0
    out, err = capsys.readouterr()
    assert "goldgate: warning: only 3 runs: " in err  # below 10 runs the bound is wide
    assert "exact_match: max_drop 12 kept false alarms at 0.0% (target 1.0%): not loosened" in out
    assert "wrote 0 max_drop values" in out
    assert (tmp_path / "goldgate.yaml").read_text() == before
    noisy.reset()  # the same draws: the model alone would have loosened it
    result = calibrate(load_config(tmp_path), runs=3, target=0.01)
    (metric,) = result.suites[0].metrics
    assert metric.rules[0].rate == 0.0
    assert metric.suggested_max_drop == 12.0
    assert suggested_max_drop(metric.spread, 3, 0.01) > 90


def test_no_suggestion_beyond_the_scores_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, 5.0)
    config = tmp_path / "goldgate.yaml"
    config.write_text(config.read_text().replace("noisy:answer", "noisy:all_or_nothing"))
    before = config.read_text()
    noisy.reset()
    assert main(["calibrate", "--runs", "3", "--write", "--json"]) == 0
    document = json.loads(capsys.readouterr().out.split("\nwrote ")[0])
    (metric,) = document["suites"][0]["metrics"]
    assert metric["scores"] == [100.0, 0.0, 100.0]
    assert metric["suggested_max_drop"] is None
    assert "beyond the score's 0-100 range" in metric["note"]
    assert document["warnings"] and "only 3 runs" in document["warnings"][0]
    assert config.read_text() == before  # nothing written


def test_a_predictions_system_cannot_be_calibrated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, 5.0)
    config = tmp_path / "goldgate.yaml"
    config.write_text(
        config.read_text().replace(
            '{callable: "tests.history.noisy:answer", concurrency: 4}',
            '{predictions: "predictions/{suite}.jsonl"}',
        )
    )
    assert main(["calibrate", "--runs", "3"]) == 2
    err = capsys.readouterr().err
    assert "suite 'qa': its system reads predictions from a file" in err
    assert "measures no noise" in err


@pytest.mark.parametrize("target", ["1e-300", "1e-7", "nan", "0"])
def test_a_target_too_small_for_a_quantile_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """--target 1e-300 passed the check (0 < t < 0.5), then the quantile of 1.0 crashed: 3."""
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, 5.0)
    assert main(["calibrate", "--runs", "2", "--target", target]) == 2
    assert "--target must be a rate from 1e-06 to 0.5" in capsys.readouterr().err
