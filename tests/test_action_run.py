"""The action's steps run locally under a simulated GitHub environment.

A pull request degrades the QA system; the action runs in a clone whose ``origin`` holds the
blessed baseline on ``main``, against a fake REST API on 127.0.0.1 that records every call.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.action_runner import ActionRun, python_shim, run_action
from tests.crashes import CRASH_TEXT, crash_env
from tests.fake_github import FakeGitHub, fake_github

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "ghs_the_token_must_never_show"
GOLDGATE = Path(sys.executable).parent / "goldgate"


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )
    return proc.stdout


@pytest.fixture(scope="module")
def pull_request(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone on a branch whose QA predictions got worse than main's blessed baseline."""
    base = tmp_path_factory.mktemp("action")
    origin, work = base / "origin.git", base / "work"
    git(base, "init", "-q", "--bare", "-b", "main", str(origin))
    git(base, "clone", "-q", str(origin), str(work))
    git(work, "checkout", "-q", "-b", "main")
    subprocess.run([str(GOLDGATE), "init"], cwd=work, check=True, capture_output=True)
    subprocess.run([str(GOLDGATE), "bless"], cwd=work, check=True, capture_output=True)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "goldgate with a blessed baseline")
    git(work, "push", "-q", "origin", "main")
    git(work, "checkout", "-q", "-b", "feature")
    predictions = work / "predictions" / "qa.jsonl"
    rows = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    for row in rows[:12]:
        row["output"] = "I do not know"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    # The PR also "blesses" its own worse baseline: it must still be compared with main's.
    subprocess.run(
        [str(GOLDGATE), "bless", "--allow-regression"], cwd=work, check=True, capture_output=True
    )
    git(work, "commit", "-q", "-am", "a worse reader, re-blessed")
    return work


@pytest.fixture
def api() -> Iterator[FakeGitHub]:
    with fake_github() as state:
        yield state


def run_in_github(
    work: Path,
    api: FakeGitHub,
    scratch: Path,
    extra_env: dict[str, str] | None = None,
    **inputs: str,
) -> tuple[ActionRun, dict[str, Any]]:
    scratch.mkdir(parents=True, exist_ok=True)
    event = scratch / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}), encoding="utf-8")
    shims = python_shim(scratch / "shims", scratch / "pip-calls.txt")
    files = {name: scratch / name for name in ("summary.md",)}
    environ = {
        "PATH": os.pathsep.join([str(shims), str(GOLDGATE.parent), "/usr/bin", "/bin"]),
        "HOME": str(scratch),
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "acme/app",
        "GITHUB_API_URL": api.url,
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_STEP_SUMMARY": str(files["summary.md"]),
        "GITHUB_BASE_REF": "main",
        **(extra_env or {}),
    }
    github = {"token": TOKEN, "action_path": str(ROOT), "base_ref": "main"}
    run = run_action(
        ROOT, inputs=inputs, github=github, environ=environ, workspace=work, scratch=scratch
    )
    info = {
        "summary": files["summary.md"].read_text(encoding="utf-8")
        if files["summary.md"].exists()
        else "",
        "pip": (scratch / "pip-calls.txt").read_text(encoding="utf-8"),
    }
    return run, info


def test_pull_request_run_creates_then_updates_one_comment(
    pull_request: Path, api: FakeGitHub, tmp_path: Path
) -> None:
    first, info = run_in_github(pull_request, api, tmp_path / "1")
    gate = first.step("Run the gate")
    assert gate.returncode == 1, gate.stderr
    assert first.outputs["verdict"] == "regressed"
    assert first.outputs["passed"] == "false"
    assert int(first.outputs["regressions"]) >= 1
    assert first.outputs["report-dir"] == "goldgate-report"
    # compared with main's baseline (the merge base), not the PR's own re-blessed one
    assert (
        first.step("Find the baseline revision").outputs["ref"]
        == git(pull_request, "merge-base", "HEAD", "origin/main").strip()
    )
    assert "::error file=goldens/qa.jsonl,line=" in gate.stdout
    assert "exact_match" in gate.stdout
    assert "regressed" in info["summary"].lower()
    assert "[stem]" in info["pip"] and str(ROOT) in info["pip"]
    assert info["pip"].count("install") == 1  # no install input: the project is not installed
    upload = first.step("Upload the HTML report")
    assert upload.kind == "uses" and upload.with_["path"].endswith("goldgate-report")
    assert (pull_request / "goldgate-report" / "report.html").exists()
    (ours,) = api.comments[7]
    assert "<!-- goldgate-report -->" in ours["body"]

    second, _ = run_in_github(pull_request, api, tmp_path / "2")
    assert second.step("Run the gate").returncode == 1
    assert len(api.comments[7]) == 1, "a second run must update, not add, the comment"
    assert [c.method for c in api.calls].count("POST") == 1
    assert [c.method for c in api.calls].count("PATCH") == 1
    # The token reaches the log once per run: in goldgate's first line, which the runner
    # consumes to mask it everywhere else.
    for run in (first, second):
        gate_out = run.step("Run the gate").stdout
        assert gate_out.startswith(f"::add-mask::{TOKEN}\n")
        assert gate_out.count(TOKEN) == 1
    everything = info["summary"] + "".join(
        s.stderr + (s.stdout if s.name != "Run the gate" else "")
        for s in first.steps + second.steps
    )
    assert TOKEN not in everything


def test_read_only_token_falls_back_to_the_summary(pull_request: Path, tmp_path: Path) -> None:
    with fake_github(write_status=403) as api:
        run, info = run_in_github(pull_request, api, tmp_path)
    assert run.step("Run the gate").returncode == 1  # the regression fails, not the comment
    assert api.comments == {}
    assert "could not comment" in info["summary"]
    assert "workflow_run" in info["summary"]
    assert run.outputs["verdict"] == "regressed"


def test_fail_on_regression_false_and_no_comment(
    pull_request: Path, api: FakeGitHub, tmp_path: Path
) -> None:
    run, _ = run_in_github(
        pull_request, api, tmp_path, **{"fail-on-regression": "false", "comment": "false"}
    )
    assert not run.failed
    assert run.outputs["verdict"] == "regressed"
    assert api.calls == []


@pytest.mark.parametrize("name", ["args", "config", "baseline-ref", "working-directory"])
def test_hostile_input_changes_nothing_outside_the_gate(
    pull_request: Path, api: FakeGitHub, tmp_path: Path, name: str
) -> None:
    marker = tmp_path / "pwned"
    hostile = f'x"; touch {marker}; echo "'
    if name == "working-directory":
        hostile = f"$(touch {marker})"
    before = git(pull_request, "status", "--porcelain")
    # a working directory that does not exist stops the step before it starts
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        run_in_github(pull_request, api, tmp_path / "scratch", **{name: hostile})
    assert not marker.exists()
    assert git(pull_request, "status", "--porcelain") == before


def test_action_installs_from_its_own_checkout() -> None:
    assert shutil.which("bash")
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert '"${GOLDGATE_ACTION_PATH}[${GOLDGATE_EXTRAS}]"' in text
    assert "GOLDGATE_EXTRAS: ${{ inputs.extras }}" in text


def test_artifact_path_is_the_report_directory_wherever_it_is(
    pull_request: Path, api: FakeGitHub, tmp_path: Path
) -> None:
    """A report.dir outside the working directory (here absolute) is uploaded from there."""
    elsewhere = tmp_path / "reports"
    run, _ = run_in_github(
        pull_request, api, tmp_path / "scratch", args=f"--report-dir {elsewhere}", comment="false"
    )
    assert run.outputs["verdict"] == "regressed"
    upload = run.step("Upload the HTML report")
    assert Path(upload.with_["path"]) == elsewhere
    assert (elsewhere / "report.html").exists()


def test_a_configuration_error_still_sets_the_outputs(
    pull_request: Path, api: FakeGitHub, tmp_path: Path
) -> None:
    """goldgate stops before it has a result; `verdict` still says error, not nothing."""
    (pull_request / "broken.yaml").write_text("version: 1\nsuites: {qa: {goldenz: x}}\n")
    try:
        run, info = run_in_github(pull_request, api, tmp_path, config="broken.yaml")
    finally:
        (pull_request / "broken.yaml").unlink()
    gate = run.step("Run the gate")
    assert gate.returncode == 2
    assert "broken.yaml" in gate.stderr
    assert run.outputs["verdict"] == "error"
    assert run.outputs["passed"] == "false"
    assert "goldgate: error" in info["summary"]
    assert run.step("Upload the HTML report").kind == "uses"  # runner ignores `if:` here
    assert api.calls == []


@pytest.mark.parametrize(
    ("fail_on_regression", "kind"), [("true", "error"), ("false", "error"), ("false", "panic")]
)
def test_a_crash_fails_the_step_and_says_error_even_when_regressions_may_pass(
    pull_request: Path, api: FakeGitHub, tmp_path: Path, fail_on_regression: str, kind: str
) -> None:
    """A crash is not a regression: fail-on-regression: false must not let it pass.

    Nor a Rust tokenizer's PanicException (a BaseException), which exited 1 and passed.
    """
    run, info = run_in_github(
        pull_request,
        api,
        tmp_path,
        extra_env=crash_env(tmp_path, "goldgate.report:write_reports", kind),
        **{"fail-on-regression": fail_on_regression, "comment": "false"},
    )
    gate = run.step("Run the gate")
    assert gate.returncode == 3, gate.stderr
    assert f"goldgate: internal error: {CRASH_TEXT[kind]}" in gate.stderr
    assert "Traceback" not in gate.stdout + gate.stderr
    assert run.failed
    assert run.outputs["verdict"] == "error"
    assert run.outputs["passed"] == "false"
    assert "crashed" in info["summary"]
    saved = Path(gate.stderr.strip().rsplit(" ", 1)[-1])
    assert "injected by the test" in saved.read_text(encoding="utf-8")
    saved.unlink()  # the clone is shared by this module's tests


def test_the_install_input_installs_the_users_project_first(
    pull_request: Path, api: FakeGitHub, tmp_path: Path
) -> None:
    run, info = run_in_github(
        pull_request, api, tmp_path / "1", install="-e . -r requirements*.txt $(touch pwned)"
    )
    assert run.step("Install your project").returncode == 0
    calls = info["pip"].splitlines()
    assert len(calls) == 2 and "[stem]" in calls[0]
    # Split on whitespace, never globbed or evaluated by a shell.
    assert calls[1].endswith(
        "install --quiet --disable-pip-version-check -e . -r requirements*.txt $(touch pwned)"
    )
    assert not (pull_request / "pwned").exists()


def test_embedding_similarity_through_the_action_with_the_embed_extra(
    api: FakeGitHub, tmp_path: Path
) -> None:
    """`extras: stem,embed` installs the encoder's extra, and the gate scores a model2vec
    model committed to the repository (built here): a PR whose answers lose their meaning
    regresses on embedding_similarity."""
    pytest.importorskip("model2vec")
    from tests.metrics.test_embedding import build_model

    origin, work = tmp_path / "origin.git", tmp_path / "work"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "checkout", "-q", "-b", "main")
    build_model(work / "models" / "tiny")
    ids = [f"g{i}" for i in range(12)]
    (work / "goldens.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "input": "what sat?", "references": ["the cat sat on the mat"]})
            + "\n"
            for i in ids
        ),
        encoding="utf-8",
    )
    (work / "goldgate.yaml").write_text(
        "version: 1\n"
        'system: {predictions: "predictions/{suite}.jsonl"}\n'
        "suites:\n"
        "  sem:\n"
        "    goldens: goldens.jsonl\n"
        "    metrics: {embedding_similarity: {model: models/tiny}}\n"
        "    gate: {embedding_similarity: {max_drop: 2.0}}\n",
        encoding="utf-8",
    )

    def predict(bad: int) -> None:
        (work / "predictions").mkdir(exist_ok=True)
        (work / "predictions" / "sem.jsonl").write_text(
            "".join(
                json.dumps({"id": i, "output": "a red car" if n < bad else "the cat sat on a mat"})
                + "\n"
                for n, i in enumerate(ids)
            ),
            encoding="utf-8",
        )

    predict(bad=0)
    subprocess.run([str(GOLDGATE), "bless"], cwd=work, check=True, capture_output=True)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "a blessed embedding baseline")
    git(work, "push", "-q", "origin", "main")
    git(work, "checkout", "-q", "-b", "feature")
    predict(bad=6)
    git(work, "commit", "-q", "-am", "answers that lost their meaning")

    run, info = run_in_github(work, api, tmp_path / "scratch", extras="stem,embed", comment="false")
    assert "[stem,embed]" in info["pip"].splitlines()[0]
    gate = run.step("Run the gate")
    assert gate.returncode == 1, gate.stderr
    assert run.outputs["verdict"] == "regressed"
    result = json.loads((work / "goldgate-report" / "result.json").read_text(encoding="utf-8"))
    (metric,) = result["suites"][0]["metrics"]
    assert metric["metric"] == "embedding_similarity"
    assert "enc:model2vec|model:models/tiny|hash:" in metric["signature"]
    assert metric["baseline"] > metric["current"] + 2.0
    (check,) = result["suites"][0]["checks"]
    assert check["status"] == "fail" and check["metric"] == "embedding_similarity"
