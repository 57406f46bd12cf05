"""The GitLab CI template (ci/gitlab/goldgate.gitlab-ci.yml): valid against GitLab's CI JSON
Schema, and its job scripts do what it says when run as a runner runs them.

The schema is the one check-jsonschema ships (``vendor.gitlab-ci``, from GitLab's repository).
The scripts run under ``sh`` (dash) and ``bash -eo pipefail`` against a bare origin on disk
and a fake GitLab API on 127.0.0.1: a merge-request pipeline compares with the merge base
of its target branch and writes one note; a default-branch pipeline appends to the history
branch; the ``pages`` job draws the history site from it.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fake_gitlab import fake_gitlab
from tests.test_action_run import GOLDGATE, ROOT, git

TEMPLATE = ROOT / "ci" / "gitlab" / "goldgate.gitlab-ci.yml"
TOKEN = "glpat-template_token_0123456789"


def gitlab_schema() -> dict[str, Any]:
    vendor = resources.files("check_jsonschema") / "builtin_schemas" / "vendor"
    return json.loads((vendor / "gitlab-ci.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def schema_errors(document: object) -> list[str]:
    jsonschema = pytest.importorskip("jsonschema")
    schema = gitlab_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [error.message for error in validator.iter_errors(document)]


def template() -> dict[str, Any]:
    return yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_template_is_valid_gitlab_ci() -> None:
    assert schema_errors(template()) == []


def test_the_schema_check_can_fail() -> None:
    """The same check finds a mistake planted in the template."""
    broken = copy.deepcopy(template())
    broken["goldgate"]["artifacts"]["reports"]["junit"] = {"path": "junit.xml"}
    broken["goldgate"]["rules"] = [{"iff": "$CI"}]
    assert len(schema_errors(broken)) >= 2


def test_the_template_writes_the_report_artifacts_gitlab_reads() -> None:
    job = template()["goldgate"]
    reports = job["artifacts"]["reports"]
    assert reports == {
        "junit": "$GOLDGATE_REPORT_DIR/junit.xml",
        "metrics": "$GOLDGATE_REPORT_DIR/metrics.txt",
    }
    assert job["artifacts"]["when"] == "always"
    assert template()["pages"]["artifacts"]["paths"] == ["public"]


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    """A bare origin (the GitLab project) and a clone whose main holds a blessed project."""
    server = tmp_path / "server"
    origin = server / "acme" / "app.git"
    origin.parent.mkdir(parents=True)
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "checkout", "-q", "-b", "main")
    for command in (["init"], ["bless"]):
        subprocess.run([str(GOLDGATE), *command], cwd=work, check=True, capture_output=True)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "goldgate with a blessed baseline")
    git(work, "push", "-q", "origin", "main")
    return server, work


def run_job(
    job: str, work: Path, environ: dict[str, str], shell: list[str]
) -> subprocess.CompletedProcess[str]:
    """The job's script as a runner runs it: the template's variables, then the job's own."""
    document = template()
    variables = {**document["variables"], **document[".goldgate"]["variables"]}
    env = {
        "PATH": os.pathsep.join([str(GOLDGATE.parent), "/usr/bin", "/bin"]),
        "HOME": str(work.parent),
        "CI": "true",
        "GITLAB_CI": "true",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "dev",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "dev",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
        "CI_DEFAULT_BRANCH": "main",
        "CI_PROJECT_DIR": str(work),
        **variables,
        **environ,
    }
    script = "\n".join(document[job]["script"])
    return subprocess.run(
        [*shell, script], cwd=work, env=env, capture_output=True, text=True, check=False
    )


SHELLS = [
    pytest.param(["sh", "-e", "-c"], id="sh"),
    pytest.param(["bash", "-eo", "pipefail", "-c"], id="bash"),
]


@pytest.mark.parametrize("shell", SHELLS)
def test_a_merge_request_pipeline_compares_with_the_merge_base_and_writes_one_note(
    repo: tuple[Path, Path], shell: list[str]
) -> None:
    server, work = repo
    # a branch with a worse model ...
    git(work, "checkout", "-q", "-b", "feature")
    predictions = work / "predictions" / "qa.jsonl"
    rows = [json.loads(line) for line in predictions.read_text().splitlines() if line.strip()]
    for row in rows[:12]:
        row["output"] = "wrong"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # ... and the branch blesses it: only a comparison with the merge base's baseline sees it
    bless = [str(GOLDGATE), "bless", "--allow-regression"]
    subprocess.run(bless, cwd=work, check=True, capture_output=True)
    git(work, "commit", "-q", "-am", "a worse model, blessed")
    with fake_gitlab(users={TOKEN: (41, "bot")}) as api:
        environ = {
            "CI_PIPELINE_SOURCE": "merge_request_event",
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
            "CI_MERGE_REQUEST_IID": "3",
            "CI_PROJECT_ID": "7",
            "CI_API_V4_URL": f"{api.url}/api/v4",
            "GOLDGATE_GITLAB_TOKEN": TOKEN,
        }
        done = run_job("goldgate", work, environ, shell)
    assert done.returncode == 1, done.stdout + done.stderr  # the regression fails the job
    base = git(work, "merge-base", "HEAD", "refs/remotes/origin/main").strip()
    assert base
    assert "goldgate: REGRESSED" in done.stdout
    assert "merge-request note created" in done.stdout
    assert len(api.notes[3]) == 1 and TOKEN not in done.stdout + done.stderr
    assert (work / "goldgate-report" / "metrics.txt").is_file()
    # nothing went to the history branch from a merge request
    assert "refs/heads/goldgate-data" not in git(server / "acme" / "app.git", "show-ref")


@pytest.mark.parametrize("shell", SHELLS)
def test_default_branch_pipelines_append_history_and_pages_draws_the_site(
    repo: tuple[Path, Path], shell: list[str]
) -> None:
    server, work = repo
    origin = server / "acme" / "app.git"
    environ = {
        "CI_PIPELINE_SOURCE": "push",
        "CI_COMMIT_BRANCH": "main",
        "CI_COMMIT_SHA": git(work, "rev-parse", "HEAD").strip(),
        "CI_SERVER_URL": server.as_uri(),
        "CI_PROJECT_PATH": "acme/app",
        "GOLDGATE_GITLAB_TOKEN": TOKEN,
    }
    for _ in range(2):
        done = run_job("goldgate", work, environ, shell)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "appended to goldgate-history.jsonl" in done.stdout
    lines = git(origin, "show", "refs/heads/goldgate-data:goldgate-history.jsonl").splitlines()
    assert len(lines) == 2 and all(json.loads(x)["verdict"] == "pass" for x in lines)
    pages = run_job("pages", work, environ, shell)
    assert pages.returncode == 0, pages.stdout + pages.stderr
    site = sorted(p.name for p in (work / "public").iterdir())
    assert site == ["index.html", "suite-qa.html", "suite-translate.html"]
    assert "2 recorded runs" in (work / "public" / "index.html").read_text(encoding="utf-8")
    assert TOKEN not in done.stdout + done.stderr + pages.stdout + pages.stderr
