"""``goldgate run``: the summary, exit codes, --json, --suite, --report-dir, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.model.result import RunResult


def _break_qa(root: Path, count: int) -> None:
    path = root / "predictions" / "qa.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows[:count]:
        row["output"] = "no idea"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_run_prints_a_summary_and_writes_the_result(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["run", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("goldgate: PASS")
    assert "suite qa: pass (30 examples)" in out
    assert "exact_match" in out and "hint: no baseline" in out
    result = RunResult.from_json_file(scaffold / "goldgate-report" / "result.json")
    assert result.verdict == "pass"


def test_run_json_and_exit_one_on_regression(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bless", "-q"]) == 0
    _break_qa(scaffold, 10)
    capsys.readouterr()
    assert main(["run", "--json", "--report-dir", "elsewhere", "--format", "json"]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["verdict"] == "regressed"
    saved = RunResult.from_json_file(scaffold / "elsewhere" / "result.json")
    assert saved == RunResult.model_validate(printed)
    failing = [c for s in printed["suites"] for c in s["checks"] if c["status"] == "fail"]
    assert {(c["suite"], c["metric"]) for c in failing} == {
        ("qa", "exact_match"),
        ("qa", "token_f1"),
    }


def test_run_one_suite(scaffold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["run", "--suite", "translate", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert "suite translate" in out and "suite qa" not in out
    assert main(["run", "--suite", "nope"]) == 2
    assert "no suite 'nope'" in capsys.readouterr().err


def test_run_reports_a_suite_error_on_stderr_with_exit_two(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (scaffold / "predictions" / "translate.jsonl").write_text('{"id": "tr-001", "output": "x"}\n')
    capsys.readouterr()
    assert main(["run", "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert "goldgate: ERROR" in captured.out
    assert "goldgate: error:" in captured.err and "tr-002" in captured.err


def test_run_without_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run"]) == 2
    assert "goldgate init" in capsys.readouterr().err
