"""Calibration on a seeded random system whose noise is known exactly."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import pytest

from goldgate.calibrate import calibrate, pair_rate, suggested_max_drop
from goldgate.cli import main
from goldgate.config import load_config
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
