"""The whole flow through the installed ``goldgate`` command, in a fresh directory.

init → run (no baseline: only min gates, a hint to bless) → bless → a degraded system →
run exits 1 naming the metric and suite → restore → exit 0; an improved system → improved
with a hint to bless; bad input (changed golden set or signature, damaged baseline) → exit 2.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from goldgate.model.result import RunResult


def _command() -> list[str]:
    script = Path(sys.executable).parent / "goldgate"
    if script.exists():
        return [str(script)]
    found = shutil.which("goldgate")
    return [found] if found else [sys.executable, "-m", "goldgate.cli.main"]


GOLDGATE = _command()


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root

    def goldgate(self, *args: str) -> subprocess.CompletedProcess[str]:
        # Not in GitHub mode even when the tests themselves run inside GitHub Actions.
        env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
        env["CI"] = "true"
        return subprocess.run(
            [*GOLDGATE, *args],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def rows(self, name: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (self.root / name).read_text().splitlines()]

    def write_rows(self, name: str, rows: list[dict[str, Any]]) -> None:
        (self.root / name).write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        )

    def result(self) -> dict[str, Any]:
        # result.json with its examples read back from examples.jsonl.gz beside it.
        saved = RunResult.from_json_file(self.root / "goldgate-report" / "result.json")
        data: dict[str, Any] = saved.model_dump(mode="json")
        return data


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    done = project.goldgate("init")
    assert done.returncode == 0, done.stderr
    return project


def _answers_right(project: Project, which: slice | None = None) -> None:
    """Answer (some) questions with their first reference."""
    golden = {row["id"]: row for row in project.rows("goldens/qa.jsonl")}
    rows = project.rows("predictions/qa.jsonl")
    for row in rows[which or slice(None)]:
        row["output"] = golden[row["id"]]["references"][0]
    project.write_rows("predictions/qa.jsonl", rows)


def test_the_whole_flow(project: Project) -> None:
    first = project.goldgate("run")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "hint: no baseline" in first.stdout and "goldgate bless" in first.stdout
    statuses = {c["status"] for s in project.result()["suites"] for c in s["checks"]}
    assert statuses == {"pass", "skipped"}  # only min gates were applied
    assert not project.result()["baseline_found"]

    blessed = project.goldgate("bless")
    assert blessed.returncode == 0, blessed.stderr
    assert (project.root / "goldgate.baseline.json").is_file()
    clean = project.goldgate("run")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert project.result()["verdict"] == "pass"

    original = (project.root / "predictions" / "qa.jsonl").read_text()
    rows = project.rows("predictions/qa.jsonl")
    for row in rows[:10]:
        row["output"] = "I cannot answer that"
    project.write_rows("predictions/qa.jsonl", rows)
    degraded = project.goldgate("run")
    assert degraded.returncode == 1, degraded.stdout + degraded.stderr
    assert "REGRESSED" in degraded.stdout
    assert "FAIL: qa: exact_match dropped beyond max_drop" in degraded.stdout
    failing = [c for s in project.result()["suites"] for c in s["checks"] if c["status"] == "fail"]
    assert ("qa", "exact_match") in {(c["suite"], c["metric"]) for c in failing}
    assert project.result()["verdict"] == "regressed"

    (project.root / "predictions" / "qa.jsonl").write_text(original)
    restored = project.goldgate("run")
    assert restored.returncode == 0, restored.stdout

    _answers_right(project)
    improved = project.goldgate("run")
    assert improved.returncode == 0, improved.stdout + improved.stderr
    assert project.result()["verdict"] == "improved"
    assert "hint: suite 'qa' improved" in improved.stdout
    assert "goldgate bless" in improved.stdout


def test_a_degraded_translation_names_bleu(project: Project) -> None:
    assert project.goldgate("bless").returncode == 0
    rows = project.rows("predictions/translate.jsonl")
    for row in rows:
        row["output"] = " ".join(reversed(row["output"].split()))
    project.write_rows("predictions/translate.jsonl", rows)
    done = project.goldgate("run")
    assert done.returncode == 1
    assert "FAIL: translate: bleu dropped beyond max_drop 1.00" in done.stdout


def test_a_one_answer_wobble_is_forgiven_as_noise(project: Project) -> None:
    assert project.goldgate("bless").returncode == 0
    rows = project.rows("predictions/qa.jsonl")
    rows[0]["output"] = "purple"  # was right
    project.write_rows("predictions/qa.jsonl", rows)
    done = project.goldgate("run")
    assert done.returncode == 0, done.stdout
    assert "FORGIVEN: qa: exact_match dropped beyond max_drop 2.00" in done.stdout
    assert "forgiven as noise" in done.stdout


def test_same_inputs_same_json(project: Project) -> None:
    assert project.goldgate("bless").returncode == 0
    _answers_right(project, slice(0, 3))
    project.goldgate("run")
    first = project.result()
    project.goldgate("run")
    second = project.result()
    assert first.pop("created_at") and second.pop("created_at")
    assert first == second
    a = (project.root / "goldgate.baseline.json").read_bytes()
    project.goldgate("bless")
    project.goldgate("bless")
    assert (project.root / "goldgate.baseline.json").read_bytes() != a  # outputs changed
    b = (project.root / "goldgate.baseline.json").read_bytes()
    project.goldgate("bless")
    assert (project.root / "goldgate.baseline.json").read_bytes() == b


def test_changed_golden_set_is_an_error_under_refuse(project: Project) -> None:
    config = project.root / "goldgate.yaml"
    config.write_text(config.read_text() + "on_golden_change: refuse\n")
    assert project.goldgate("bless").returncode == 0
    rows = project.rows("goldens/qa.jsonl")
    rows[4]["references"].append("the rye bread")
    project.write_rows("goldens/qa.jsonl", rows)
    done = project.goldgate("run")
    assert done.returncode == 2
    assert "suite 'qa': the golden set changed" in done.stderr
    assert "1 changed: qa-005" in done.stderr


def test_changed_signature_is_an_error(project: Project) -> None:
    assert project.goldgate("bless").returncode == 0
    config = project.root / "goldgate.yaml"
    config.write_text(config.read_text().replace("tokenize: 13a", "tokenize: intl"))
    done = project.goldgate("run")
    assert done.returncode == 2
    assert "suite 'translate', metric 'bleu': the signature differs" in done.stderr
    assert "tok:intl" in done.stderr


def test_damaged_baseline_is_an_error(project: Project) -> None:
    assert project.goldgate("bless").returncode == 0
    path = project.root / "goldgate.baseline.json"
    path.write_text(path.read_text()[:-40])
    done = project.goldgate("run")
    assert done.returncode == 2
    assert "goldgate.baseline.json: damaged baseline" in done.stderr
    assert "Traceback" not in done.stderr
