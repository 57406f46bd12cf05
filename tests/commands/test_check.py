"""``goldgate check``: fast validation without running the system."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldgate.cli import main


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
