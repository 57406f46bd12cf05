"""The command line itself: dispatch, usage errors, a closed pipe."""

from __future__ import annotations

import os
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
    """``goldgate ... | head``: the reader is gone before goldgate writes."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [str(GOLDGATE), "schema"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 2
    assert proc.stderr == ""


@pytest.mark.parametrize("command", ["run", "bless"])
def test_the_jobs_help_quotes_the_engines_threshold(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The automatic pool starts at ``PARALLEL_MIN_EXAMPLES`` examples; help texts said 5,000
    where the code said 30,000. The configuration's description and the README quote it too."""
    from goldgate.config import EngineConfig
    from goldgate.metrics import PARALLEL_MIN_EXAMPLES
    from goldgate.metrics.parallel import resolve_jobs

    assert resolve_jobs(None, PARALLEL_MIN_EXAMPLES - 1) == 1
    quoted = f"{PARALLEL_MIN_EXAMPLES:,}"
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"every core for {quoted} examples" in help_text
    assert f"every core for {quoted} examples" in (
        EngineConfig.model_fields["jobs"].description or ""
    )
    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text("utf-8").split())
    assert f"once a suite has {quoted} examples or more" in readme
    assert f"on by default from {quoted} examples" in readme


def test_python_dash_m_goldgate_is_the_command(tmp_path: Path) -> None:
    """``python -m goldgate`` where the script is not on PATH: the same command, the same
    exit codes (2 for a usage error)."""
    version = subprocess.run(
        [sys.executable, "-m", "goldgate", "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0 and version.stdout.startswith("goldgate "), version.stderr
    usage = subprocess.run(
        [sys.executable, "-m", "goldgate", "no-such-command"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert usage.returncode == 2 and "invalid choice" in usage.stderr
