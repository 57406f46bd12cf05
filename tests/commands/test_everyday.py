"""Smaller things users hit in their first week (issue 10, section 4)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.errors import InputError
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.registry import metric_from_spec


def test_baseline_ref_working_tree_reads_the_file_on_disk(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bless", "-q"]) == 0
    capsys.readouterr()
    assert main(["run", "-q", "--baseline-ref", "working-tree"]) == 0
    result = json.loads((scaffold / "goldgate-report" / "result.json").read_text())
    assert result["baseline_found"] is True
    assert result["baseline"] == "goldgate.baseline.json"


def test_the_configuration_is_found_in_a_parent_directory(
    scaffold: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    deeper = scaffold / "src" / "app"
    deeper.mkdir(parents=True)
    monkeypatch.chdir(deeper)
    capsys.readouterr()
    assert main(["check"]) == 0
    assert "ok: suite qa: 30 examples" in capsys.readouterr().out


def test_no_configuration_anywhere_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 2
    assert "no goldgate.yaml here or in a parent directory" in capsys.readouterr().err


def test_report_writes_every_format_asked_for(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "-q", "--format", "json"]) == 0
    saved = scaffold / "goldgate-report" / "result.json"
    before = saved.read_bytes()
    out = scaffold / "again"
    capsys.readouterr()
    code = main(["report", str(saved), "--format", "md", "--format", "html", "-o", str(out)])
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.md"]
    assert "goldgate" in (out / "report.md").read_text()
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    # Into the result's own directory by default, never rewriting the result itself.
    assert main(["report", str(saved), "-f", "md", "-f", "junit", "-f", "json"]) == 0
    assert (scaffold / "goldgate-report" / "junit.xml").is_file()
    assert saved.read_bytes() == before
    assert main(["report", str(saved), "-f", "md", "-f", "html", "-o", "-"]) == 2
    assert "-o DIR" in capsys.readouterr().err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _rows(path: Path, n: int) -> Path:
    path.write_text(
        "".join(
            json.dumps({"candidate": f"a{i % 7}", "references": ["a1"]}) + "\n" for i in range(n)
        )
    )
    return path


def test_score_shows_progress_on_a_terminal_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _rows(tmp_path / "big.jsonl", 6000)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["score", str(data), "--metric", "exact_match", "--json"]) == 0
    shown = terminal.getvalue()
    assert "score" in shown and "6000/6000" in shown.replace(",", "")
    monkeypatch.undo()
    capsys.readouterr()
    assert main(["score", str(data), "--metric", "exact_match", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # not a terminal: nothing but the result
    assert json.loads(captured.out)["metrics"]["exact_match"]["score"] == pytest.approx(
        100 * sum(i % 7 == 1 for i in range(6000)) / 6000
    )


def test_score_corpus_names_a_none_where_text_is_expected() -> None:
    metrics = [("bleu", metric_from_spec("bleu"))]
    with pytest.raises(InputError, match="example 2: the candidate is None, not a string"):
        score_corpus(metrics, ["a", None], [["a"], ["b"]])  # type: ignore[list-item]
    with pytest.raises(InputError, match="example 1: reference 2 is None, not a string"):
        score_corpus(metrics, ["a"], [["a", None]])  # type: ignore[list-item]
    with pytest.raises(InputError, match="example 1: the references are a str"):
        score_corpus(metrics, ["a"], ["a"])


def test_score_corpus_refuses_an_empty_corpus() -> None:
    with pytest.raises(InputError, match="nothing to score: the corpus is empty"):
        score_corpus([("bleu", metric_from_spec("bleu"))], [], [])
