"""The output layer: untrusted text never starts a workflow command nor drives a terminal."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldgate.cli.main import main
from goldgate.terminal import console

GOLDGATE = Path(sys.executable).parent / "goldgate"

# Every code point the layer must never let through raw (tab and newline excepted).
RAW_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
)
# goldgate's own workflow commands: a known name, escaped properties (no raw ':' or ','), data.
OWN_COMMAND = re.compile(
    r"::(error|warning|notice)( (file|line|title)=[^:,]*(,(file|line|title)=[^:,]*)*)?::.*"
)

HOSTILE_PIECES = [
    "::",
    "::error title=x::pwned",
    "::add-mask::a",
    "::stop-commands::tok",
    "##[error]pwn",
    "\n",
    "\r",
    "\r\n",
    "\x1b]0;title\x07",
    "\x1b[2J",
    "\x07",
    "\x00",
    "\x9b31m",
    "\x85",
    "\u202e",
    "\u2066",
    "\u2028",
    "  ",
    "\t",
    "%0A",
    ",",
    "a",
    "é",
]
hostile = st.lists(st.sampled_from(HOSTILE_PIECES), min_size=1, max_size=6).map("".join)


def assert_inert(text: str, *, own_commands: bool = False, token: str | None = None) -> None:
    """No raw control character, and no line the runner would read as a command but ours."""
    found = RAW_CONTROL.search(text)
    assert found is None, f"raw {found.group()!r} in {text!r}"
    # The runner splits lines on LF, CR and CRLF and trims leading whitespace.
    for line in re.split(r"\r\n|\r|\n", text):
        stripped = line.lstrip()
        assert "##[" not in line, line
        if not stripped.startswith("::"):
            continue
        if token is not None and stripped == f"::add-mask::{token}":
            continue
        assert own_commands and OWN_COMMAND.fullmatch(stripped), f"injected: {line!r}"


# -- the layer itself -------------------------------------------------------------------------


@given(hostile)
def test_clean_leaves_nothing_raw(text: str) -> None:
    assert_inert(console.clean(text))
    assert_inert(console.inline(text))
    assert "\n" not in console.inline(text)


@given(hostile, hostile)
def test_workflow_command_is_one_line_of_ours(message: str, title: str) -> None:
    line = console.workflow_command("error", message, [("file", title), ("title", title)])
    assert_inert(line, own_commands=True)
    assert "\n" not in line and "\r" not in line


def test_examples_of_escaping() -> None:
    assert console.clean("ok\n::error::x") == "ok\n\\x3a:error::x"
    assert console.clean("  ::warning::x") == "  \\x3a:warning::x"
    assert console.clean("\x1b]0;t\x07 \u202e") == "\\x1b]0;t\\x07 \\u202e"
    assert console.clean("a\rb") == "a\\x0db"
    assert console.clean("x ##[error]y") == "x ##\\x5berror]y"
    assert console.inline("a\nb") == "a\\x0ab"
    assert console.json_text(json.dumps({"k": "\x9b##[\u202e"}, ensure_ascii=False)) == (
        '{"k": "\\u009b##\\u005b\\u202e"}'
    )
    assert json.loads(console.json_text(json.dumps(["\x85\u2028##["], ensure_ascii=False))) == [
        "\x85\u2028##["
    ]


def test_command_refuses_what_is_not_one_command() -> None:
    with pytest.raises(ValueError):
        console.command("::error::a\n::add-mask::b", stream=io.StringIO())
    with pytest.raises(ValueError):
        console.workflow_command("error::x", "m")


# -- through the real command -----------------------------------------------------------------


def _project(root: Path, ids: list[str], tags: list[str], texts: list[str], stderr: str) -> None:
    """Suites fed with hostile ids, tags, references and outputs; one of each way to fail."""
    goldens = [
        {
            "id": f"{ident}-{i}",
            "input": {"output": text},
            "references": [text or "x"],
            "tags": [tag],
        }
        for i, (ident, tag, text) in enumerate(zip(ids, tags, texts, strict=True))
    ]
    (root / "goldens.jsonl").write_text(
        "".join(json.dumps(g) + "\n" for g in goldens), encoding="utf-8"
    )
    (root / "stderr.txt").write_text(stderr, encoding="utf-8")
    config = {
        "version": 1,
        "suites": {
            "echo": {
                "goldens": "goldens.jsonl",
                "system": {"predictions": "preds.jsonl"},
                "metrics": {"exact_match": {}},
                "gate": {"exact_match": {"max_drop": 0.0}},
                "slices": True,
            },
            "raises": {
                "goldens": "goldens.jsonl",
                "system": {"callable": "tests.hostile_systems:fail", "cache": "off"},
                "metrics": {"exact_match": {}},
            },
            "stderr": {
                "goldens": "goldens.jsonl",
                "system": {
                    "command": [
                        sys.executable,
                        "-c",
                        "import sys; sys.stderr.write(open('stderr.txt').read()); sys.exit(3)",
                    ]
                },
                "metrics": {"exact_match": {}},
            },
        },
        "significance": {"resamples": 20},
        "report": {"dir": "out", "formats": ["md"]},
    }
    (root / "goldgate.yaml").write_text(json.dumps(config), encoding="utf-8")
    (root / "preds.jsonl").write_text(
        "".join(json.dumps({"id": g["id"], "output": g["references"][0]}) + "\n" for g in goldens),
        encoding="utf-8",
    )


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for name in (
        "GITHUB_TOKEN",
        "GOLDGATE_GITHUB_TOKEN",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_OUTPUT",
        "GITHUB_EVENT_PATH",
    ):
        monkeypatch.delenv(name, raising=False)
    yield tmp_path


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ids=st.lists(hostile, min_size=2, max_size=2),
    tags=st.lists(hostile, min_size=2, max_size=2),
    texts=st.lists(hostile, min_size=2, max_size=2),
    stderr=hostile,
    extra_id=hostile,
)
def test_untrusted_text_through_run_and_run_github_stays_inert(
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
    ids: list[str],
    tags: list[str],
    texts: list[str],
    stderr: str,
    extra_id: str,
) -> None:
    _project(workdir, ids, tags, texts, stderr)
    main(["bless", "-q", "--suite", "echo"])
    # Today's outputs: one wrong (a regression naming the worst example), one unknown id.
    rows = [json.loads(line) for line in (workdir / "preds.jsonl").read_text().splitlines()]
    rows[0]["output"] = texts[1] + "wrong"
    (workdir / "preds.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    for argv in (["run"], ["run", "--github", "--no-comment"]):
        main(argv)
        captured = capsys.readouterr()
        assert_inert(captured.out, own_commands="--github" in argv)
        assert_inert(captured.err)
    (workdir / "preds.jsonl").write_text(
        json.dumps({"id": extra_id, "output": "x"}) + "\n", encoding="utf-8"
    )
    for argv in (["run", "--suite", "echo"], ["run", "--github", "--suite", "echo"]):
        main(argv)
        captured = capsys.readouterr()
        assert_inert(captured.out, own_commands="--github" in argv)
        assert_inert(captured.err)


def test_a_hostile_golden_id_cannot_inject_through_the_installed_command(tmp_path: Path) -> None:
    """The whole process, file descriptors included: the example of the issue."""
    evil = "x\n::error title=pwned::owned\x1b]0;t\x07\u202e"
    _project(tmp_path, [evil, "b"], [evil, "t"], ["a", "b"], "::add-mask::secret\n##[error]x\n")
    env = {"PATH": "/usr/bin:/bin", "CI": "true", "PYTHONPATH": str(Path(__file__).parents[1])}
    proc = subprocess.run(
        [str(GOLDGATE), "run", "--github", "--no-comment"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_inert(proc.stdout, own_commands=True)
    assert_inert(proc.stderr)
    assert "\\x3a:add-mask::secret" in proc.stderr  # the command's stderr, shown inert
    assert "\\x1b]0;t\\x07\\u202e" in proc.stderr + proc.stdout


def test_a_stream_that_cannot_encode_shows_escapes_instead_of_crashing() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    console.out("id caf\u00e9 \u2603", stream=stream)
    stream.flush()
    assert raw.getvalue() == b"id caf\\xe9 \\u2603\n"


def test_secrets_are_redacted_longest_first_and_from_four_characters(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 30, item 21: a short secret inside a long one must not be replaced first, leaving
    # the long one's other characters on show; a four-character key is still a key.
    monkeypatch.setattr(console, "_secrets", set())
    for secret in ("bcde", "xabcdefghx", "abcdefgh", "k3y!", "abc", ""):
        console.add_secret(secret)
    text = "a xabcdefghx b abcdefgh c bcde d k3y! e abc"
    assert console.redact(text) == "a *** b *** c *** d *** e abc"
    console.out(text)
    console.err(text)
    out, err = capsys.readouterr()
    assert out == err == "a *** b *** c *** d *** e abc\n"
    line = console.workflow_command("error", text, [("title", "abcdefgh")])
    assert line == "::error title=***::a *** b *** c *** d *** e abc"
    assert console.json_text('{"key": "xabcdefghx"}') == '{"key": "***"}'
