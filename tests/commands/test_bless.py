"""``goldgate bless``: writes the baseline, --new-only, --suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.model.baseline_io import read_baseline


def test_bless_prints_what_it_wrote(scaffold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["bless", "-q"]) == 0
    out = capsys.readouterr().out
    assert "blessed qa, translate into" in out
    assert "exact_match         -    80.00" in out  # the review table: no baseline yet
    baseline = read_baseline(scaffold / "goldgate.baseline.json")
    assert set(baseline.suites) == {"qa", "translate"}
    assert baseline.suites["qa"].metrics["exact_match"].score == pytest.approx(80.0)


def test_bless_new_only_and_suite(scaffold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bless", "-q"]) == 0
    with (scaffold / "goldens" / "qa.jsonl").open("a") as stream:
        stream.write(json.dumps({"id": "qa-new", "input": "q", "references": ["a"]}) + "\n")
    with (scaffold / "predictions" / "qa.jsonl").open("a") as stream:
        stream.write(json.dumps({"id": "qa-new", "output": "a"}) + "\n")
    capsys.readouterr()
    assert main(["run", "--format", "json"]) == 0
    assert "--new-only" in capsys.readouterr().out
    assert main(["bless", "-q", "--new-only", "--suite", "qa"]) == 0
    assert "blessed qa into" in capsys.readouterr().out
    assert "qa-new" in read_baseline(scaffold / "goldgate.baseline.json").suites["qa"].examples
    assert main(["run", "--format", "json"]) == 0


def test_bless_reports_system_errors(scaffold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (scaffold / "predictions" / "qa.jsonl").unlink()
    capsys.readouterr()
    assert main(["bless", "-q"]) == 2
    assert "qa.jsonl" in capsys.readouterr().err
    assert not (scaffold / "goldgate.baseline.json").exists()
