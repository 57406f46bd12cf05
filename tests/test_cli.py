"""The command line itself: dispatch, usage errors, a closed pipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from goldgate.cli import main

GOLDGATE = Path(sys.executable).parent / "goldgate"


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().err


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_a_closed_pipe_is_not_a_traceback(tmp_path: Path) -> None:
    subprocess.run([str(GOLDGATE), "init"], cwd=tmp_path, check=True, capture_output=True)
    proc = subprocess.run(
        f"'{GOLDGATE}' schema | head -c 10 >/dev/null; exit ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Traceback" not in proc.stderr
    assert "BrokenPipeError" not in proc.stderr
