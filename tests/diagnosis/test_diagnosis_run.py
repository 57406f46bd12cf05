"""The regression diagnosis through a whole run: a QA suite whose system now returns empty
outputs for a third of its examples fails with a first line that says so, a Markdown "Why"
with the categories and labelled examples, the JSON contract of issue 32, and ``max_new``
failing the gate on its own; a project's own detector, turning detectors off, the terminal,
JUnit and history faces."""

from __future__ import annotations

import gzip
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from goldgate.cli.main import main

GOLDENS = Path(__file__).resolve().parents[2] / "goldens" / "qa.jsonl"


def _rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in GOLDENS.read_text().splitlines() if line.strip()]


def _project(tmp_path: Path, extra: str = "", gate: str = "{max_drop: 2.0}") -> Path:
    (tmp_path / "goldens").mkdir()
    (tmp_path / "goldens" / "qa.jsonl").write_text(GOLDENS.read_text())
    (tmp_path / "goldgate.yaml").write_text(
        "version: 1\n"
        "system: {predictions: preds.jsonl}\n"
        "significance: off\n"
        "history: off\n"
        "suites:\n"
        "  qa:\n"
        "    goldens: goldens/qa.jsonl\n"
        "    metrics:\n"
        "      exact_match: {normalizer: squad}\n"
        f"    gate:\n      exact_match: {gate}\n" + extra
    )
    return tmp_path


def _predict(root: Path, output: Any) -> None:
    with (root / "preds.jsonl").open("w") as out:
        for index, row in enumerate(_rows()):
            out.write(json.dumps({"id": row["id"], "output": output(index, row)}) + "\n")


def _good(index: int, row: dict[str, Any]) -> str:
    return str(row["references"][0])


def _third_empty(index: int, row: dict[str, Any]) -> str:
    return "" if index % 3 == 0 else _good(index, row)


def _goldgate(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.chdir(root)
    return main(list(args))


def _result(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "goldgate-report" / "result.json").read_text())
    return data


def _examples(root: Path) -> list[dict[str, Any]]:
    with gzip.open(root / "goldgate-report" / "examples.jsonl.gz", "rt") as stream:
        return [json.loads(line) for line in stream]


def test_a_third_empty_fails_saying_so_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path, "    max_new: {empty: 0}\n")
    _predict(root, _good)
    assert _goldgate(root, monkeypatch, "bless") == 0
    _predict(root, _third_empty)
    capsys.readouterr()
    assert _goldgate(root, monkeypatch, "run") == 1
    out = capsys.readouterr().out
    n = len(_rows())
    empty = len(range(0, n, 3))
    first = out.splitlines()[0]
    assert first.startswith("goldgate: REGRESSED")
    assert f"why: {empty} of {empty} regressed examples are now empty (0 before)" in first
    assert f"empty: 0 blessed → {empty} now, {empty} new, {empty} of the regressed" in out

    # the JSON contract (issue 32, section 5)
    suite = _result(root)["suites"][0]
    diagnosis = suite["diagnosis"]
    assert diagnosis["version"] == 1
    assert diagnosis["regressed"] == empty
    assert diagnosis["categories"]["empty"] == {
        "baseline": 0,
        "current": empty,
        "new": empty,
        "regressed": empty,
    }
    assert diagnosis["clusters"] == []
    assert (
        diagnosis["headline"] == f"{empty} of {empty} regressed examples are now empty (0 before)"
    )
    assert set(diagnosis["changes"]) >= {"commits", "files", "config", "signatures", "versions"}
    assert diagnosis["changes"]["versions"]["goldgate"]
    assert diagnosis["detectors"]["empty"] == 1
    rows = _examples(root)
    assert len(rows) == n
    assert rows[0]["diagnosis"] == {"current": ["empty"], "baseline": []}
    assert rows[1]["diagnosis"] == {"current": [], "baseline": []}
    max_new = [c for c in suite["checks"] if c["rule"] == "max_new"]
    assert [(c["metric"], c["status"], c["current"]) for c in max_new] == [
        ("empty", "fail", float(empty))
    ]

    # Markdown: the why first, a Why section with the table, the examples labelled
    markdown = (root / "goldgate-report" / "report.md").read_text()
    lines = [line for line in markdown.splitlines() if line.strip()]
    assert lines[1].startswith("## ") and "regressed" in lines[1]
    assert lines[2].startswith("**Why: ") and "are now empty (0 before)" in lines[2]
    why = markdown.index("**Why (qa)**")
    assert markdown.index("### Worst regressed examples") > why
    assert f"| empty | 0 | {empty} | {empty} | {empty} |" in markdown
    assert "now: <b>empty</b> (new)" in markdown
    assert f"`qa::empty::max_new`: {empty} examples newly empty since the baseline" in markdown

    # JUnit: the categories as properties
    tree = ET.parse(root / "goldgate-report" / "junit.xml")
    props = {p.get("name"): p.get("value") for p in tree.iter("property")}
    assert props["category.empty"] == (
        f"blessed 0, current {empty}, new {empty}, regressed {empty}"
    )
    assert props["why"] == diagnosis["headline"]


def test_max_new_fails_the_gate_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A gate so loose the metric passes: only max_new can fail the run.
    root = _project(tmp_path, "    max_new: {empty: 0}\n", gate="{max_drop: 90.0}")
    _predict(root, _good)
    assert _goldgate(root, monkeypatch, "bless") == 0
    _predict(root, _third_empty)
    capsys.readouterr()
    assert _goldgate(root, monkeypatch, "run") == 1
    checks = {(c["rule"], c["status"]) for c in _result(root)["suites"][0]["checks"]}
    assert ("max_drop", "pass") in checks and ("max_new", "fail") in checks
    assert _result(root)["verdict"] == "regressed"
    # the pytest plugin's failure message says why too
    from goldgate.model.result import RunResult
    from goldgate.pytest.rendering import render_failure

    result = RunResult.from_json_file(root / "goldgate-report" / "result.json")
    suite = result.suites[0]
    message = render_failure(suite, [c for c in suite.checks if c.status.value == "fail"], result)
    assert "why: 22 of 22 regressed examples are now empty (0 before)" in message
    assert "empty: 0 blessed → 22 now, 22 new" in message
    # a bless refuses it as it refuses any failed check, and accepts it when told to
    blessed = (root / "goldgate.baseline.json").read_bytes()
    assert _goldgate(root, monkeypatch, "bless") == 1
    assert (root / "goldgate.baseline.json").read_bytes() == blessed
    # Without the rule the same run passes: the report still shows the categories.
    text = (root / "goldgate.yaml").read_text().replace("    max_new: {empty: 0}\n", "")
    (root / "goldgate.yaml").write_text(text)
    assert _goldgate(root, monkeypatch, "run") == 0
    assert _result(root)["suites"][0]["diagnosis"]["categories"]["empty"]["new"] == 22


def test_max_new_per_slice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(
        tmp_path, "    max_new: {empty: 100}\n    max_new_slices: true\n", gate="{max_drop: 100.0}"
    )
    _predict(root, _good)
    assert _goldgate(root, monkeypatch, "bless") == 0
    _predict(root, _third_empty)
    assert _goldgate(root, monkeypatch, "run") == 0
    checks = [c for c in _result(root)["suites"][0]["checks"] if c["rule"] == "max_new"]
    tags = sorted({t for row in _rows() for t in row["tags"]})
    assert [c["slice"] for c in checks] == [None, *tags]
    by_tag: dict[str, int] = {}
    for index, row in enumerate(_rows()):
        if index % 3 == 0:
            for tag in row["tags"]:
                by_tag[tag] = by_tag.get(tag, 0) + 1
    assert {c["slice"]: c["current"] for c in checks[1:]} == {
        t: float(by_tag.get(t, 0)) for t in tags
    }


def test_no_regression_and_no_baseline_read_sensibly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path)
    _predict(root, _third_empty)
    assert _goldgate(root, monkeypatch, "run") == 0  # no baseline: min/max only
    diagnosis = _result(root)["suites"][0]["diagnosis"]
    assert diagnosis["baseline_side"] == "no baseline"
    assert diagnosis["categories"]["empty"] == {
        "baseline": None,
        "current": 22,
        "new": None,
        "regressed": None,
    }
    assert diagnosis["headline"] == "no baseline to compare with; of the 66 outputs today: 22 empty"
    _predict(root, _good)
    assert _goldgate(root, monkeypatch, "bless") == 0
    assert _goldgate(root, monkeypatch, "run") == 0
    diagnosis = _result(root)["suites"][0]["diagnosis"]
    assert diagnosis["headline"] == (
        "no example regressed on exact_match, and no failure mode is new since the baseline"
    )
    assert all(r["diagnosis"] == {"current": [], "baseline": []} for r in _examples(root))


CHECKS = """
class Sure:
    name = "sure_opening"
    version = 3

    def __call__(self, example, context):
        return "opens with Sure" if example.output.startswith("Sure") else None


SURE = Sure()
NOT_A_DETECTOR = object()
"""


def test_a_project_detector_runs_and_gates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(
        tmp_path,
        "    max_new: {sure_opening: 0}\n",
        gate="{max_drop: 100.0}",
    )
    module = f"gg_checks_{tmp_path.name.replace('-', '_')}"
    (root / f"{module}.py").write_text(CHECKS)
    text = (root / "goldgate.yaml").read_text() + f"diagnose: {{detectors: ['{module}:SURE']}}\n"
    (root / "goldgate.yaml").write_text(text)
    _predict(root, _good)
    assert _goldgate(root, monkeypatch, "bless") == 0
    _predict(
        root, lambda i, row: f"Sure! Here is {row['references'][0]}" if i < 12 else _good(i, row)
    )
    assert _goldgate(root, monkeypatch, "run") == 1
    diagnosis = _result(root)["suites"][0]["diagnosis"]
    assert diagnosis["detectors"]["sure_opening"] == 3 and diagnosis["detectors"]["empty"] == 1
    assert diagnosis["categories"]["sure_opening"]["new"] == 12
    assert diagnosis["headline"].startswith("12 of 12 regressed examples now show sure_opening")
    assert _examples(root)[0]["diagnosis"] == {"current": ["sure_opening"], "baseline": []}
    # a name that is not a detector is a usage error (exit 2), before any scoring
    (root / "goldgate.yaml").write_text(text.replace(":SURE", ":NOT_A_DETECTOR"))
    assert _goldgate(root, monkeypatch, "run") == 2


def _word(i: int) -> str:
    """A made-up word of its own for each ``i``: no number, nothing shared."""
    return "".join(chr(97 + (i * 7 + k * 3) % 26) for k in range(5))


def test_unexplained_regressions_are_clustered_and_said_plainly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # length_drift off: a sentence in front of a short QA answer is a real drift in length,
    # and the point here is what no detector explains (the references kept whole: numbers,
    # the sentence's end)
    root = _project(tmp_path, gate="{max_drop: 1.0}")
    config = root / "goldgate.yaml"
    config.write_text(config.read_text() + "diagnose: {disable: [length_drift]}\n")
    _predict(root, _good)
    assert _goldgate(root, monkeypatch, "bless") == 0
    _predict(
        root,
        lambda i, row: f"Sure! Here is the answer: {_good(i, row)}" if i < 12 else _good(i, row),
    )
    assert _goldgate(root, monkeypatch, "run") == 1
    diagnosis = _result(root)["suites"][0]["diagnosis"]
    assert diagnosis["clusters"][0]["pattern"] == "Sure! Here is the answer:"
    assert diagnosis["clusters"][0]["kind"] == "opening"
    assert diagnosis["clusters"][0]["count"] == 12
    assert diagnosis["headline"] == (
        "nothing detected explains the 12 regressed examples: no failure mode is new among"
        " them, but 12 now begin with 'Sure! Here is the answer:'"
    )
    # different wrong answers that share nothing: said plainly
    _predict(root, lambda i, row: f"{_word(i)} {_good(i, row)}" if i < 12 else _good(i, row))
    assert _goldgate(root, monkeypatch, "run") == 1
    headline = _result(root)["suites"][0]["diagnosis"]["headline"]
    assert headline == (
        "nothing detected explains the 12 regressed examples: no failure mode is new among"
        " them, and they share no new opening or phrase"
    )


def test_diagnose_off_and_disabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path)
    text = (root / "goldgate.yaml").read_text()
    (root / "goldgate.yaml").write_text(text + "diagnose: off\n")
    _predict(root, _third_empty)
    assert _goldgate(root, monkeypatch, "run") == 0
    assert _result(root)["suites"][0]["diagnosis"] is None
    assert "diagnosis" not in _examples(root)[0]
    (root / "goldgate.yaml").write_text(text + "diagnose: {disable: [empty]}\n")
    assert _goldgate(root, monkeypatch, "run") == 0
    assert "empty" not in _result(root)["suites"][0]["diagnosis"]["categories"]
    # max_new naming a detector turned off, or none at all: a configuration error
    (root / "goldgate.yaml").write_text(
        text + "    max_new: {empty: 0}\ndiagnose: {disable: [empty]}\n"
    )
    assert _goldgate(root, monkeypatch, "run") == 2
    (root / "goldgate.yaml").write_text(text + "    max_new: {emtpy: 0}\n")
    assert _goldgate(root, monkeypatch, "run") == 2
