"""Hostile input files through the real command: bombs, non-files, deep nesting, odd encodings.

Each is an error naming the file (exit 2), never a hang, a traceback or gigabytes of memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.io import inputs

GOLDGATE = Path(sys.executable).parent / "goldgate"

#: 411 bytes that PyYAML expands to 9**9 (387 million) strings
ALIAS_BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)
CONFIG = """version: 1
suites:
  qa:
    goldens: {goldens}
    system: {{predictions: preds.jsonl}}
    metrics: {{exact_match: {{}}}}
significance: off
report: {{dir: out, formats: [json]}}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    rows = [{"id": "a", "input": "q", "references": ["r"]}]
    (tmp_path / "goldens.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "preds.jsonl").write_text('{"id": "a", "output": "r"}\n')
    (tmp_path / "goldgate.yaml").write_text(CONFIG.format(goldens="goldens.jsonl"))
    return tmp_path


def fails(argv: list[str], capsys: pytest.CaptureFixture[str], *words: str) -> str:
    """``argv`` exits 2 with one goldgate error line holding ``words``; returns it."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("goldgate: error: ") and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err


def goldgate(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed command in a child, so that a hang fails the test instead of the suite."""
    return subprocess.run(
        [str(GOLDGATE), *argv], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


# -- 4. resource bombs ------------------------------------------------------------------------


def test_an_alias_bomb_in_the_configuration_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(ALIAS_BOMB) < 420
    (project / "bomb.yaml").write_text(ALIAS_BOMB)
    fails(["check", "-c", "bomb.yaml"], capsys, "bomb.yaml", "aliases expand to more than")


def test_an_alias_bomb_in_a_golden_set_s_meta_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    meta = "\n".join("    " + line for line in ALIAS_BOMB.splitlines())
    (project / "goldens.yaml").write_text(
        f"- id: a\n  input: q\n  references: [r]\n  meta:\n{meta}\n"
    )
    (project / "goldgate.yaml").write_text(CONFIG.format(goldens="goldens.yaml"))
    fails(["check"], capsys, "goldens.yaml", "aliases expand")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory"])
@pytest.mark.parametrize("which", ["goldens.jsonl", "preds.jsonl", "goldgate.baseline.json"])
def test_inputs_that_are_not_regular_files_are_refused_at_once(
    project: Path, kind: str, which: str
) -> None:
    path = project / which
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    proc = goldgate(["run"], project)
    assert proc.returncode == 2, proc.stderr
    assert which in proc.stderr and "Traceback" not in proc.stderr
    expected = {"fifo": "FIFO", "dev-zero": "character device", "directory": "directory"}[kind]
    assert expected in proc.stderr


def test_compare_and_report_refuse_a_fifo(project: Path) -> None:
    os.mkfifo(project / "pipe.json")
    for argv in (["compare", "pipe.json", "pipe.json"], ["report", "pipe.json"]):
        proc = goldgate(argv, project)
        assert proc.returncode == 2 and "FIFO" in proc.stderr, proc.stderr


def test_a_configuration_at_a_fifo_says_so(project: Path) -> None:
    os.mkfifo(project / "fifo.yaml")
    proc = goldgate(["check", "-c", "fifo.yaml"], project)
    assert proc.returncode == 2
    assert "fifo.yaml" in proc.stderr and "FIFO" in proc.stderr
    assert "no such" not in proc.stderr


def test_an_input_over_the_size_cap_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inputs, "MAX_INPUT_BYTES", 40)
    fails(["check"], capsys, "goldens.jsonl", "larger than 40 bytes")


DEEP_JSON = "[" * 100_000 + "]" * 100_000
DEEP_YAML = "[" * 500 + "]" * 500


@pytest.mark.parametrize(
    ("file", "text", "argv"),
    [
        ("goldens.jsonl", '{"id": "a", "input": X, "references": ["r"]}\n', ["check"]),
        ("goldens.yaml", "- id: a\n  input: q\n  references: [r]\n  meta: X\n", ["check"]),
        ("goldens.yaml", "- id: a\n  input: X\n  references: [r]\n", ["check"]),
        ("goldgate.yaml", "version: 1\nsuites: X\n", ["check"]),
        ("preds.jsonl", '{"id": "a", "output": X}\n', ["run"]),
        ("goldgate.baseline.json", "X", ["check"]),
        ("a.json", "X", ["compare", "a.json", "a.json"]),
        ("a.json", "X", ["report", "a.json"]),
    ],
)
def test_deep_nesting_is_an_error_not_a_recursion_error(
    project: Path, capsys: pytest.CaptureFixture[str], file: str, text: str, argv: list[str]
) -> None:
    deep = DEEP_YAML if file.endswith(".yaml") else DEEP_JSON
    (project / file).write_text(text.replace("X", deep))
    if file == "goldens.yaml":
        (project / "goldgate.yaml").write_text(CONFIG.format(goldens="goldens.yaml"))
    fails(argv, capsys, file, "nested")


# -- 12 and 11: messages that say what is wrong -----------------------------------------------


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"[tool.goldgate\nversion = 1\n", ("pyproject.toml", "malformed TOML")),
        (b"[tool.goldgate]\nname = '\xff'\n", ("pyproject.toml", "not valid UTF-8")),
        (b"tool = 5\n", ("pyproject.toml", "'tool' is not a table")),
        (b"[tool]\ngoldgate = 5\n", ("pyproject.toml", "must be a mapping")),
    ],
)
def test_a_broken_pyproject_is_reported_as_such(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    content: bytes,
    words: tuple[str, ...],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_bytes(content)
    err = fails(["check"], capsys, *words)
    assert "no goldgate.yaml here" not in err
    fails(["check", "-c", "pyproject.toml"], capsys, *words)


def test_a_merge_key_overridden_by_an_explicit_key_is_accepted(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "goldens.yaml").write_text(
        "- &base {id: a, input: q, references: [r], tags: [t]}\n- <<: *base\n  id: b\n  tags: [u]\n"
    )
    (project / "goldgate.yaml").write_text(CONFIG.format(goldens="goldens.yaml"))
    assert main(["check"]) == 0, capsys.readouterr().err
    assert "2 examples" in capsys.readouterr().out
    # Two explicit keys are still a mistake, merge or not.
    (project / "goldens.yaml").write_text(
        "- &base {id: a, input: q, references: [r]}\n- <<: *base\n  id: b\n  id: c\n"
    )
    fails(["check"], capsys, "goldens.yaml:4", "duplicate key")


def test_truncated_json_in_compare_is_called_truncated(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "a.json").write_text('{"schema_version": "1", "suites": {\n  "qa": ')
    fails(["compare", "a.json", "a.json"], capsys, "a.json", "truncated JSON at line 2 column")
    (project / "a.json").write_text('{"schema_version": "1",, }')
    fails(["compare", "a.json", "a.json"], capsys, "invalid JSON at line 1 column 24")


def test_a_repeated_id_key_on_a_jsonl_line_is_an_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "goldens.jsonl").write_text(
        '{"id": "a", "input": "q", "id": "b", "references": ["r"]}\n'
    )
    fails(["check"], capsys, "goldens.jsonl:1", "'id' appears twice")
    (project / "goldens.jsonl").write_text('{"id": "a", "input": "q", "references": ["r"]}\n')
    (project / "preds.jsonl").write_text('{"id": "a", "output": "r", "id": "b"}\n')
    fails(["run"], capsys, "preds.jsonl:1", "'id' appears twice")


def test_a_long_csv_cell_is_read_and_an_endless_one_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from goldgate.model.golden_formats import MAX_CSV_CELL_CHARS

    long_cell = "w " * 100_000  # 200 KB, over Python's csv default of 128 KiB
    (project / "goldens.csv").write_text(f"id,input,reference\na,{long_cell},r\n")
    (project / "goldgate.yaml").write_text(CONFIG.format(goldens="goldens.csv"))
    assert main(["check"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    huge = "w" * (MAX_CSV_CELL_CHARS + 1)
    (project / "goldens.csv").write_text(f"id,input,reference\na,{huge},r\n")
    fails(["check"], capsys, "goldens.csv:2", f"longer than {MAX_CSV_CELL_CHARS:,} characters")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("goldens.jsonl", '{"id": 1' + "0" * 5000 + ', "input": "q", "references": ["r"]}\n'),
        ("goldens.yaml", "- id: 1" + "0" * 5000 + "\n  input: q\n  references: [r]\n"),
    ],
)
def test_a_five_thousand_digit_id_is_an_error(
    project: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    (project / name).write_text(text)
    (project / "goldgate.yaml").write_text(CONFIG.format(goldens=name))
    fails(["check"], capsys, name, "digits")


def test_tool_5_under_pytest_is_a_usage_error(tmp_path: Path) -> None:
    """pytest reads the rootdir's pyproject.toml itself; goldgate's may live elsewhere."""
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "pyproject.toml").write_text("tool = 5\n")
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    # Named in the ini file: a path on the command line would make pytest read it too.
    (tmp_path / "pytest.ini").write_text("[pytest]\ngoldgate_config = cfg/pyproject.toml\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--goldgate",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "'tool' is not a table" in proc.stderr and "INTERNALERROR" not in proc.stderr
