"""``goldgate compare``: two results or baselines side by side."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from goldgate.cli import main


def test_compare_results_and_baselines(scaffold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "-q", "--format", "json"]) == 0
    shutil.copy(scaffold / "goldgate-report" / "result.json", scaffold / "a.json")
    assert main(["bless", "-q"]) == 0
    path = scaffold / "predictions" / "qa.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["output"] = "blue"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    main(["run", "-q", "--format", "json"])
    capsys.readouterr()

    assert main(["compare", "a.json", "goldgate-report/result.json", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    exact = found["suites"]["qa"]["metrics"]["exact_match"]
    assert exact["a"] == pytest.approx(80.0)
    assert exact["delta"] == pytest.approx(-100 / 30)
    assert exact["comparable"] and found["suites"]["qa"]["same_goldens"]

    assert main(["compare", "goldgate.baseline.json", "goldgate-report/result.json"]) == 0
    out = capsys.readouterr().out
    assert "suite qa" in out and "-3.33" in out


def test_compare_unreadable(scaffold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (scaffold / "x.json").write_text("[1]")
    assert main(["compare", "x.json", "goldgate.yaml"]) == 2
    assert "x.json" in capsys.readouterr().err
