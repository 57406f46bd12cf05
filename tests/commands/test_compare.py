"""``goldgate compare``: two results or baselines side by side."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from goldgate.cli.commands.compare import _Scores, _signed, compare
from goldgate.cli.main import main


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


def test_compare_reads_ter_as_lower_is_better(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 30, item 18: a TER rise printed as "+4.17" with nothing to say it is a worsening.
    config = scaffold / "goldgate.yaml"
    config.write_text(
        config.read_text().replace("      chrf: {}\n", "      chrf: {}\n      ter: {}\n")
    )
    assert main(["run", "-q", "--format", "json"]) == 0
    shutil.copy(scaffold / "goldgate-report" / "result.json", scaffold / "a.json")
    assert main(["bless", "-q"]) == 0
    path = scaffold / "predictions" / "translate.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["output"] = "entirely different words here now"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    main(["run", "-q", "--format", "json"])
    capsys.readouterr()

    for a in ("a.json", "goldgate.baseline.json"):  # a result records it; a baseline does not
        assert main(["compare", a, "goldgate-report/result.json", "--json"]) == 0
        metrics = json.loads(capsys.readouterr().out)["suites"]["translate"]["metrics"]
        assert metrics["ter"]["delta"] > 0
        assert metrics["ter"]["higher_is_better"] is False
        assert metrics["ter"]["change"] == "worse"
        assert metrics["bleu"]["delta"] < 0 and metrics["bleu"]["change"] == "worse"
        assert metrics["chrf"]["higher_is_better"] is True

        assert main(["compare", a, "goldgate-report/result.json"]) == 0
        out = capsys.readouterr().out
        line = next(line for line in out.splitlines() if line.strip().startswith("ter"))
        assert "ter (lower is better)" in line and "worse" in line


def test_compare_never_shows_a_change_as_plus_zero() -> None:
    # Issue 30, item 18: a change that rounds to 0.00 is shown with the decimals it needs, and
    # no change at all is "unchanged".
    a = _Scores({"s": ("h", {"m": (50.0, "sig"), "ter": (40.0, "sig")})}, {"ter": False})
    b = _Scores({"s": ("h", {"m": (50.0 + 1e-12, "sig"), "ter": (40.004, "sig")})})
    metrics = compare(a, b)["suites"]["s"]["metrics"]
    assert metrics["m"]["change"] == "unchanged"
    assert metrics["ter"]["change"] == "worse"
    assert _signed(metrics["m"]["delta"]) == "0.00"
    assert _signed(metrics["ter"]["delta"]) == "+0.004"
    assert _signed(-1.5) == "-1.50"
