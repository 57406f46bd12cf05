"""The run reports show each gated metric's blessed trend, read from git."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.report.formatting import sparkline, trend_text
from tests.history.project import GitProject


def test_reports_show_the_blessed_trend_of_gated_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    project = GitProject(tmp_path, n=40, gate="{min: 10}")
    config = tmp_path / "goldgate.yaml"
    config.write_text(config.read_text().replace("formats: [json]", "formats: [md, html, json]"))
    for right in (36, 38, 37):
        project.set_right(right)
        assert main(["bless", "-q"]) == 0
        project.commit(f"bless {right}")
    (tmp_path / "notes.txt").write_text("not a bless\n")
    project.commit("unrelated")
    project.set_right(30)
    assert main(["run", "-q"]) == 0
    capsys.readouterr()
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    (metric,) = result["suites"][0]["metrics"]
    assert metric["trend"] == [90.0, 95.0, 92.5]
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "<sub>blessed: 90.00 → 95.00 → 92.50</sub>" in markdown
    html = (tmp_path / "out" / "report.html").read_text()
    assert '<svg class="spark"' in html and "blessed: 90.00 → 95.00 → 92.50" in html


def test_no_trend_outside_git_or_for_ungated_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    GitProject(tmp_path, git=False, gate="{min: 10}")
    assert main(["bless", "-q"]) == 0
    assert main(["run", "-q"]) == 0
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["suites"][0]["metrics"][0]["trend"] == []


def test_trend_text_and_sparkline() -> None:
    assert trend_text([74.2, 74.9, 75.1]) == "74.20 → 74.90 → 75.10"
    assert sparkline([1.0]) == ""
    points = [tuple(map(float, p.split(","))) for p in sparkline([1.0, 3.0, 2.0]).split()]
    assert [x for x, _ in points] == [0.0, 30.0, 60.0]
    assert points[1][1] < points[2][1] < points[0][1]  # higher scores are drawn higher
