"""Confirmation by re-run (issue 34, section 3): a failing check of a nondeterministic system
is gated again on re-runs of the examples that decided it before the build goes red."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.model.result import RunResult

N = 12

CONFIG = """\
version: 1
system: {{callable: "{module}:answer", cache: resume}}
suites:
  qa:
    goldens: goldens.jsonl
    metrics: {{exact_match: {{}}}}
    gate: {{exact_match: {{max_flips: 0}}}}
confirm: {{reruns: 2}}
report: {{dir: out}}
history: off
"""

# The system answers right, but in "dip" mode its first answer to q03 is wrong (a one-off),
# and in "bad" mode it answers q03 and q04 wrong every time. Every call is logged.
SYSTEM = """\
from pathlib import Path

HERE = Path(__file__).parent


def answer(question):
    number = question.split()[-1]
    mode = (HERE / "mode.txt").read_text().strip()
    with open(HERE / "calls.log", "a") as log:
        log.write(question + "\\n")
    if mode == "dip" and number == "3" and not (HERE / "dipped").exists():
        (HERE / "dipped").write_text("")
        return "::warning ::a dip"
    if mode == "bad" and number in ("3", "4"):
        return "wrong"
    return "answer " + number
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    module = f"noisy_{uuid.uuid4().hex[:12]}"  # a fresh import in every test
    (tmp_path / f"{module}.py").write_text(SYSTEM, encoding="utf-8")
    (tmp_path / "goldgate.yaml").write_text(CONFIG.format(module=module), encoding="utf-8")
    rows = [
        {"id": f"q{i:02d}", "input": f"question {i}", "references": [f"answer {i}"]}
        for i in range(N)
    ]
    (tmp_path / "goldens.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "mode.txt").write_text("good")
    monkeypatch.chdir(tmp_path)
    assert main(["bless"]) == 0
    (tmp_path / "calls.log").unlink()
    return tmp_path


def _calls(root: Path) -> list[str]:
    return (root / "calls.log").read_text().splitlines()


def test_a_one_off_dip_is_not_confirmed(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "mode.txt").write_text("dip")
    capsys.readouterr()
    assert main(["run"]) == 0
    out = capsys.readouterr().out
    assert "FORGIVEN" in out
    assert "not confirmed: forgiven as noise (it passed on 2 of 2 re-runs)" in out
    assert "re-ran 1 example 2 times (2 calls" in out
    assert "\n::" not in out
    # the run's 12 calls, then q03 twice more: the cost is bounded to the decisive example
    calls = _calls(project)
    assert sorted(calls[:N]) == sorted(f"question {i}" for i in range(N))
    assert calls[N:] == ["question 3"] * 2
    result = RunResult.from_json_file(project / "out" / "result.json")
    (suite,) = result.suites
    assert suite.verdict.value == "pass"
    (check,) = suite.checks
    assert check.status.value == "forgiven" and check.rule == "max_flips"
    assert suite.confirmation is not None
    assert suite.confirmation.calls == 2
    assert [(e.id, e.outputs) for e in suite.confirmation.examples] == [
        ("q03", [["answer 3"], ["answer 3"]])
    ]
    assert suite.confirmation.checks[0].confirmed is False
    # the example table keeps the output the run scored; the re-runs never touched the cache
    (row,) = [e for e in suite.examples if e.id == "q03"]
    assert row.output == "::warning ::a dip"
    cached = [
        json.loads(line)
        for path in (project / ".goldgate" / "cache").glob("qa-*.last.jsonl")
        for line in path.read_text().splitlines()[1:]
    ]
    assert sorted(c["output"] for c in cached if c["id"] == "q03") == ["::warning ::a dip"]
    markdown = (project / "out" / "report.md").read_text()
    assert "not confirmed: forgiven as noise" in markdown
    html = (project / "out" / "report.html").read_text()
    assert "re-run outputs of q03" in html


def test_a_real_regression_is_confirmed(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "mode.txt").write_text("bad")
    capsys.readouterr()
    assert main(["run"]) == 1
    out = capsys.readouterr().out
    assert "confirmed on 2 re-runs" in out
    assert sorted(_calls(project)[N:]) == ["question 3"] * 2 + ["question 4"] * 2
    result = json.loads((project / "out" / "result.json").read_text())
    (suite,) = result["suites"]
    assert suite["verdict"] == "regressed"
    assert suite["checks"][0]["status"] == "fail"
    assert suite["checks"][0]["confirmation"] == "confirmed on 2 re-runs"
    assert suite["confirmation"]["calls"] == 4
    assert [e["id"] for e in suite["confirmation"]["examples"]] == ["q03", "q04"]


def test_max_examples_bounds_the_reruns(project: Path) -> None:
    (project / "mode.txt").write_text("bad")
    config = (project / "goldgate.yaml").read_text()
    (project / "goldgate.yaml").write_text(
        config.replace("{reruns: 2}", "{reruns: 3, max_examples: 1}")
    )
    assert main(["run"]) == 1
    assert _calls(project)[N:] == ["question 3"] * 3  # one example (q03 first by id), 3 times


def test_predictions_cannot_be_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    config = CONFIG.replace(
        '{{callable: "{module}:answer", cache: resume}}', "{{predictions: p.jsonl}}"
    )
    (tmp_path / "goldgate.yaml").write_text(config.format(), encoding="utf-8")
    rows = [{"id": f"q{i:02d}", "input": "x", "references": [f"a{i}"]} for i in range(N)]
    (tmp_path / "goldens.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def predictions(wrong: int) -> None:
        lines = [{"id": f"q{i:02d}", "output": "no" if i < wrong else f"a{i}"} for i in range(N)]
        (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))

    predictions(0)
    assert main(["check"]) == 0
    assert "a predictions file, which cannot be re-run" in capsys.readouterr().err
    assert main(["bless"]) == 0
    predictions(2)
    capsys.readouterr()
    assert main(["run"]) == 1
    assert "confirm: the system is a predictions file, which cannot be re-run" in (
        capsys.readouterr().out
    )


def test_a_must_pass_failure_is_never_rerun_away(project: Path) -> None:
    config = (project / "goldgate.yaml").read_text()
    rule = "    must_pass: {ids: [q03], metric: exact_match, min: 100}\n"
    (project / "goldgate.yaml").write_text(config.replace("confirm:", rule + "confirm:"))
    (project / "mode.txt").write_text("dip")
    assert main(["run"]) == 1  # the dip is forgiven for max_flips, not for the contract
    result = json.loads((project / "out" / "result.json").read_text())
    checks = {c["rule"]: c for c in result["suites"][0]["checks"]}
    assert checks["max_flips"]["status"] == "forgiven"
    assert checks["must_pass"]["status"] == "fail"
    assert "confirmation" not in checks["must_pass"]


def test_the_reruns_go_through_the_configured_backend(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldgate.execution import registry
    from tests.test_execution_backends import FakeBackend

    monkeypatch.setitem(registry.BACKENDS, "dask", "tests.test_execution_backends:FakeBackend")
    monkeypatch.setattr(FakeBackend, "asked", [])
    config = (project / "goldgate.yaml").read_text()
    engine = 'engine: {jobs: 1, dask: {address: "tcp://nowhere:1"}}\n'
    (project / "goldgate.yaml").write_text(config + engine)
    (project / "mode.txt").write_text("bad")
    assert main(["run"]) == 1
    assert FakeBackend.asked.count("run_calls") == 3  # the run's calls, then each re-run's
