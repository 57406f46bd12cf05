"""``goldgate check``: fast validation without running the system."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldgate.cli.main import main


def test_check_ok_then_problems(scaffold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["check"]) == 0
    assert "ok: suite qa: 30 examples, not in the baseline yet" in capsys.readouterr().out
    assert main(["bless", "-q"]) == 0
    capsys.readouterr()
    assert main(["check"]) == 0
    assert "matches the baseline" in capsys.readouterr().out

    golden = scaffold / "goldens" / "translate.jsonl"
    golden.write_text(golden.read_text().replace("The bread is still warm.", "Warm bread."))
    assert main(["check"]) == 0
    assert "suite translate: 16 examples, golden set changed" in capsys.readouterr().out
    config = scaffold / "goldgate.yaml"
    config.write_text(config.read_text() + "on_golden_change: refuse\n")
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    assert "suite 'translate'" in err and "1 changed: tr-016" in err


def test_check_damaged_baseline_and_bad_config(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (scaffold / "goldgate.baseline.json").write_text("{")
    capsys.readouterr()
    assert main(["check"]) == 2
    assert "damaged baseline" in capsys.readouterr().err
    (scaffold / "goldgate.yaml").write_text("version: 1\nsuites: {}\nsytem: {}\n")
    assert main(["check"]) == 2
    assert "goldgate.yaml" in capsys.readouterr().err


def test_check_names_metrics_not_blessed_yet(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bless", "-q"]) == 0
    config = scaffold / "goldgate.yaml"
    config.write_text(
        config.read_text().replace("      chrf: {}\n", "      chrf: {}\n      rougeL: {}\n")
    )
    capsys.readouterr()
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    # was: "matches the baseline", while rougeL has no blessed score to be compared with
    assert (
        "ok: suite translate: 16 examples, matches the baseline; not blessed yet: rougeL"
        " (run `goldgate bless --new-only` to add them)" in out
    )
    assert "ok: suite qa: 30 examples, matches the baseline\n" in out
    assert main(["bless", "--new-only", "-q"]) == 0
    capsys.readouterr()
    assert main(["check"]) == 0
    assert "not blessed yet" not in capsys.readouterr().out
