"""Exit 1 is a regression and nothing else: a crash exits 3 with one line naming a saved
traceback, on every command, under the pytest plugin and in the Action."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.crash import EXIT_INTERNAL, save_traceback
from goldgate.errors import describe_exception
from tests.crashes import CRASH_TEXT, crash_env

GOLDGATE = Path(sys.executable).parent / "goldgate"
SAVED = re.compile(r"the traceback is in (\S+)$")


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


def _saved_path(stderr: str) -> Path:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr  # one line, no traceback
    assert lines[0].startswith("goldgate: internal error: ")
    found = SAVED.search(lines[0])
    assert found, lines[0]
    return Path(found.group(1))


@pytest.mark.parametrize("kind", ["error", "panic"])
@pytest.mark.parametrize(
    ("argv", "target"),
    [
        (["run", "-q"], "goldgate.runner:score_suite"),
        (["bless", "-q"], "goldgate.runner:score_suite"),
        (["check"], "goldgate.runner:check"),
        (["schema"], "goldgate.model.config_schema:config_json_schema"),
    ],
)
def test_a_crash_in_any_command_exits_3_with_the_traceback_in_a_file(
    tmp_path: Path, argv: list[str], target: str, kind: str
) -> None:
    """An Exception, or a BaseException that is no exit (a Rust PanicException): exit 3."""
    subprocess.run([str(GOLDGATE), "init"], cwd=tmp_path, check=True, capture_output=True)
    proc = subprocess.run(
        [str(GOLDGATE), *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, **crash_env(tmp_path, target, kind)},
        check=False,
    )
    assert proc.returncode == EXIT_INTERNAL, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    saved = _saved_path(proc.stderr)
    assert saved.parent == tmp_path / ".goldgate"
    text = saved.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text
    assert CRASH_TEXT[kind] in text
    assert CRASH_TEXT[kind] in proc.stderr


def test_the_traceback_goes_to_the_temp_dir_when_dot_goldgate_is_not_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".goldgate").write_text("a file where the folder should be")
    elsewhere = tmp_path / "tmp"
    elsewhere.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(elsewhere))

    def boom(args: object) -> int:
        raise _Unprintable()

    monkeypatch.setattr("goldgate.cli.commands.schema.run", boom)
    assert main(["schema"]) == EXIT_INTERNAL
    saved = _saved_path(capsys.readouterr().err)
    assert saved.parent == elsewhere
    assert "_Unprintable" in saved.read_text(encoding="utf-8")


def test_an_exception_whose_str_fails_is_still_described() -> None:
    assert describe_exception(_Unprintable()) == (
        "_Unprintable (its message could not be read: RuntimeError)"
    )
    assert describe_exception(ValueError("two\nlines\x1b[2J")) == (
        "ValueError: 'two\\nlines\\x1b[2J'"
    )
    saved = save_traceback(_Unprintable(), directory=None)
    assert saved is not None and "_Unprintable" in saved.read_text(encoding="utf-8")
    saved.unlink()


def test_sigint_is_130_and_never_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr("goldgate.cli.commands.schema.run", interrupted)
    assert main(["schema"]) == 130
    assert capsys.readouterr().err == "goldgate: interrupted\n"
    assert not (tmp_path / ".goldgate").exists()
