"""The action's history-branch: runs on the default branch append a line; pull requests never."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.action_runner import ActionRun, python_shim, run_action
from tests.test_action_run import GOLDGATE, ROOT, git

BRANCH = "goldgate-data"


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    """A clone of a bare origin whose main holds a blessed goldgate example."""
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "checkout", "-q", "-b", "main")
    subprocess.run([str(GOLDGATE), "init"], cwd=work, check=True, capture_output=True)
    subprocess.run([str(GOLDGATE), "bless"], cwd=work, check=True, capture_output=True)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "goldgate with a blessed baseline")
    git(work, "push", "-q", "origin", "main")
    return origin, work


def _run(work: Path, scratch: Path, event: str, ref: str, **inputs: str) -> ActionRun:
    scratch.mkdir(parents=True, exist_ok=True)
    shims = python_shim(scratch / "shims", scratch / "pip-calls.txt")
    (scratch / "event.json").write_text(json.dumps({}), encoding="utf-8")
    environ = {
        "PATH": os.pathsep.join([str(shims), str(GOLDGATE.parent), "/usr/bin", "/bin"]),
        "HOME": str(scratch),
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(scratch / "event.json"),
        "GITHUB_REPOSITORY": "acme/app",
        "GITHUB_API_URL": "http://127.0.0.1:9",
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_STEP_SUMMARY": str(scratch / "summary.md"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    github = {
        "token": "",
        "action_path": str(ROOT),
        "event_name": event,
        "ref": ref,
        "sha": git(work, "rev-parse", "HEAD").strip(),
        "event": {"repository": {"default_branch": "main"}},
    }
    return run_action(
        ROOT,
        inputs={"comment": "false", **inputs},
        github=github,
        environ=environ,
        workspace=work,
        scratch=scratch,
    )


def _history(origin: Path) -> list[dict[str, object]]:
    done = subprocess.run(
        ["git", "show", f"refs/heads/{BRANCH}:goldgate-history.jsonl"],
        cwd=origin,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return []
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_default_branch_runs_append_and_pull_requests_do_not(
    repo: tuple[Path, Path], tmp_path: Path
) -> None:
    origin, work = repo
    step = "Append the run to the history branch"
    first = _run(work, tmp_path / "s1", "push", "refs/heads/main", **{"history-branch": BRANCH})
    assert not first.failed, [(s.name, s.stderr) for s in first.steps]
    assert "the run was appended" in first.step(step).stdout
    second = _run(work, tmp_path / "s2", "push", "refs/heads/main", **{"history-branch": BRANCH})
    assert not second.failed
    lines = _history(origin)
    assert len(lines) == 2
    head = git(work, "rev-parse", "HEAD").strip()
    assert all(line["commit"] == head and line["verdict"] == "pass" for line in lines)
    suites = {score["suite"] for score in lines[0]["scores"]}  # type: ignore[union-attr]
    assert suites == {"qa", "translate"}
    # the history branch holds the data file and the history site drawn from it
    files = git(origin, "ls-tree", "--name-only", f"refs/heads/{BRANCH}").split()
    assert files == [
        "goldgate-history.jsonl",
        "index.html",
        "suite-qa.html",
        "suite-translate.html",
    ]
    index = git(origin, "show", f"refs/heads/{BRANCH}:index.html")
    assert "2 recorded runs" in index and 'href="suite-qa.html"' in index

    # a pull request, another branch, or no history-branch: nothing is written
    pr = _run(
        work, tmp_path / "s3", "pull_request", "refs/pull/7/merge", **{"history-branch": BRANCH}
    )
    assert "never written from a pull request" in pr.step(step).stdout
    other = _run(work, tmp_path / "s4", "push", "refs/heads/feature", **{"history-branch": BRANCH})
    assert "default branch only" in other.step(step).stdout
    off = _run(work, tmp_path / "s5", "push", "refs/heads/main")
    assert off.step(step).stdout == ""
    assert len(_history(origin)) == 2
