"""The blessed timeline read from the baseline file's git history, and `goldgate history`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldgate.cli.commands.history import parse_since
from goldgate.cli.main import main
from goldgate.history.timeline import blessed_timeline
from goldgate.model.baseline_io import read_baseline
from goldgate.model.config_loading import load_config
from goldgate.runner import bless
from tests.history.project import GitProject


def test_twenty_blesses_reconstruct_the_blessed_timeline_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    project = GitProject(tmp_path, n=50)
    config = load_config(tmp_path)
    expected: list[tuple[str, float]] = []
    for step in range(20):
        # not monotonic, and sometimes the same score twice in a row
        project.set_right([30, 35, 35, 41, 28, 50, 44, 44, 12, 33][step % 10] - step % 3)
        bless(config)
        score = read_baseline(config.baseline).suites["qa"].metrics["exact_match"].score
        expected.append((project.commit(f"bless {step}: exact match {score}"), score))
        if step % 4 == 0:  # commits that do not touch the baseline are not blesses
            (tmp_path / "notes.txt").write_text(f"note {step}\n")
            project.commit(f"unrelated {step}")

    timeline = blessed_timeline(tmp_path, config.baseline)
    got = [(b.commit, b.scores[("qa", "exact_match")].score) for b in timeline]
    assert got == expected
    assert [b.subject for b in timeline][:2] == [
        f"bless 0: exact match {expected[0][1]}",
        f"bless 1: exact match {expected[1][1]}",
    ]

    assert main(["history", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    from_cli = [(b["commit"], b["scores"][0]["score"]) for b in document["blessed"]]
    assert from_cli == expected
    assert document["runs"] == []  # bless does not record runs: nothing ran through the gate

    assert main(["history"]) == 0
    text = capsys.readouterr().out
    assert "blessed timeline (20 blesses in git):" in text
    assert f"→ {expected[-1][1]:.2f}" in text


def test_history_lists_runs_with_filters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    project = GitProject(tmp_path, gate="{min: 10}")
    for right in (90, 80, 70):
        project.set_right(right)
        project.commit(f"answers {right}")
        assert main(["run", "-q"]) == 0
    project._git("checkout", "-q", "-b", "feature")
    project.set_right(60)
    assert main(["run", "-q"]) == 0  # dirty: uncommitted predictions
    capsys.readouterr()

    assert main(["history", "--json", "--last", "2"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [(r["score"], r["branch"], r["dirty"]) for r in runs] == [
        (70.0, "main", False),
        (60.0, "feature", True),
    ]
    assert runs[0]["message"] == "answers 70" and runs[0]["status"] == "pass"

    assert main(["history", "--json", "--branch", "main", "--last", "0"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["score"] for r in runs] == [90.0, 80.0, 70.0]

    assert main(["history", "--json", "--metric", "token_f1"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == []
    assert main(["history", "--json", "--since", "2999-01-01"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == []

    assert main(["history", "--branch", "feature"]) == 0
    table = capsys.readouterr().out
    assert "suite qa, metric exact_match: last 1 run\n" in table and "60.00" in table
    assert "+  feature" in table  # the dirty mark after the commit


def test_flaky_examples_are_the_ones_that_change_under_one_system_and_one_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A flaky example's score moves while nothing else does: the same system (settings and
    clean commit), the same golden record. Changes made on purpose across commits (a new
    model's answers, an edited reference) are not flakes."""
    monkeypatch.chdir(tmp_path)
    project = GitProject(tmp_path, n=10, gate="{min: 0}")
    # the predictions are a model's outputs made anew by each run, not committed
    with (tmp_path / ".gitignore").open("a") as ignore:
        ignore.write("preds/\n")
    project._git("rm", "-r", "-q", "--cached", "preds")
    project.commit("predictions are made by each run")
    for right in (10, 9, 10, 9):  # q009 flips three times at one commit
        project.set_right(right)
        assert main(["run", "-q"]) == 0
    project.set_right(7)  # a new model: q007 and q008 change, on purpose
    project.commit("a new model")
    assert main(["run", "-q"]) == 0
    goldens = tmp_path / "goldens" / "qa.jsonl"
    goldens.write_text(goldens.read_text().replace('"answer 6"', '"answer six"'))
    project.commit("q006's reference edited")  # q006 now fails: its record changed
    assert main(["run", "-q"]) == 0
    capsys.readouterr()
    assert main(["history", "--json"]) == 0
    flaky = json.loads(capsys.readouterr().out)["flaky"]
    assert [(f["id"], f["flips"], f["runs"]) for f in flaky] == [("q009", 3, 6)]


def test_since_accepts_dates_times_and_ages() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert parse_since("2026-11-30", now=now) == "2026-11-30T00:00:00+00:00"
    assert parse_since("7d", now=now) == "2026-11-24T12:00:00+00:00"
    assert parse_since("12h", now=now) == "2026-12-01T00:00:00+00:00"
    assert parse_since("2026-11-30T10:00+02:00", now=now) == "2026-11-30T08:00:00+00:00"
    assert main(["history", "--since", "last tuesday"]) == 2


def test_history_outside_git_warns_and_shows_the_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    GitProject(tmp_path, git=False, gate="{min: 0}")
    assert main(["history"]) == 0
    assert "no history recorded yet" in capsys.readouterr().out
    assert main(["run", "-q"]) == 0
    capsys.readouterr()
    assert main(["history"]) == 0
    out, err = capsys.readouterr()
    assert "100.00" in out and "no blessed timeline (git)" in err
