"""The command line itself: dispatch, usage errors, a closed pipe."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from goldgate.cli.main import main

GOLDGATE = Path(sys.executable).parent / "goldgate"


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().err


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def _closed_pipe_run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``goldgate ARGV | true``: the reader is gone before goldgate writes."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [str(GOLDGATE), *argv],
            cwd=cwd,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write_end)


def test_a_closed_pipe_is_not_a_traceback_and_keeps_the_exit_code() -> None:
    proc = _closed_pipe_run(["schema"])
    assert proc.returncode == 0  # the schema was made; that nobody read it is no error
    assert proc.stderr == ""


@pytest.fixture(scope="module")
def blessed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``goldgate init`` and ``bless``: the project of the quick start."""
    root = tmp_path_factory.mktemp("piped")
    for command in ("init", "bless"):
        subprocess.run([str(GOLDGATE), command], cwd=root, check=True, capture_output=True)
    return root


@pytest.mark.parametrize("regressed", [False, True])
@pytest.mark.parametrize("json_output", [False, True])
def test_a_reader_closing_the_pipe_never_changes_the_verdicts_exit_code(
    blessed: Path, tmp_path: Path, regressed: bool, json_output: bool
) -> None:
    """``goldgate run | head -1`` exited 2 whatever the verdict: a pass read as an error."""
    root = tmp_path / "project"
    shutil.copytree(blessed, root)
    if regressed:
        predictions = root / "predictions" / "qa.jsonl"
        rows = [json.loads(line) for line in predictions.read_text().splitlines()]
        for row in rows[:15]:
            row["output"] = "I do not know"
        predictions.write_text("".join(json.dumps(row) + "\n" for row in rows))
    proc = _closed_pipe_run(["run", *(["--json"] if json_output else [])], cwd=root)
    assert proc.returncode == (1 if regressed else 0), proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_a_stop_signal_ignored_at_start_stays_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """``nohup goldgate run``: SIGHUP is ignored on purpose; the handler must not undo that."""
    seen: dict[str, object] = {}

    def run(args: object) -> int:
        seen["hup"] = signal.getsignal(signal.SIGHUP)
        seen["quit"] = signal.getsignal(signal.SIGQUIT)
        return 0

    monkeypatch.setattr("goldgate.cli.commands.schema.run", run)
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert main(["schema"]) == 0
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert seen["hup"] == signal.SIG_IGN
    assert callable(seen["quit"])  # not ignored: it unwinds like SIGTERM


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_report_to_a_link_like_dev_stdout_writes_to_stdout_and_keeps_the_link(
    blessed: Path, tmp_path: Path
) -> None:
    """``report -o /dev/stdout`` renamed a file over the link (and, as root, over /dev/full)."""
    root = tmp_path / "project"
    shutil.copytree(blessed, root)
    subprocess.run([str(GOLDGATE), "run", "-q"], cwd=root, check=True, capture_output=True)
    link = root / "stdout"
    link.symlink_to("/proc/self/fd/1")
    proc = subprocess.run(
        [str(GOLDGATE), "report", "goldgate-report/result.json", "-o", str(link)],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "goldgate: passed" in proc.stdout
    assert link.is_symlink()


@pytest.mark.parametrize("command", ["run", "bless"])
def test_the_jobs_help_quotes_the_engines_threshold(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The automatic pool starts at ``PARALLEL_MIN_EXAMPLES`` examples; help texts said 5,000
    where the code said 30,000. The configuration's description quotes it too, and so does the
    docs site, from the constant (``tests/test_docs.py::test_the_docs_quote_the_code_s_numbers``
    checks the built pages that carried this check when it was the README)."""
    from goldgate.execution.pool import resolve_jobs
    from goldgate.metrics import PARALLEL_MIN_EXAMPLES
    from goldgate.model.config import EngineConfig

    assert resolve_jobs(None, PARALLEL_MIN_EXAMPLES - 1) == 1
    quoted = f"{PARALLEL_MIN_EXAMPLES:,}"
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"every core for {quoted} examples" in help_text
    assert f"every core for {quoted} examples" in (
        EngineConfig.model_fields["jobs"].description or ""
    )


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
