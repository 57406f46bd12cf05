"""GitHub mode against a fake REST API on 127.0.0.1: comment, outputs, annotations."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from goldgate.github.pull_request import (
    MAX_COMMENT_CHARS,
    CommentOutcome,
    GitHubEnvironment,
    annotation_lines,
    comment_marker,
    fit_comment,
    publish,
    step_outputs,
    upsert_comment,
    write_step_outputs,
)
from goldgate.model.example_table import ExampleResult
from goldgate.model.result import (
    CheckResult,
    CheckStatus,
    MetricSummary,
    RunResult,
    SuiteResult,
    Verdict,
)
from goldgate.report.markdown import MARKER as COMMENT_MARKER
from tests.fake_github import FakeGitHub, fake_github

TOKEN = "ghs_secret_token_value_123"


def regressed_result() -> RunResult:
    examples = [
        ExampleResult(
            id="qa-1",
            line=1,
            references=["Paris"],
            output="Paris",
            baseline_output="Paris",
            scores={"exact_match": 100.0},
            baseline_scores={"exact_match": 100.0},
        ),
        ExampleResult(
            id="qa-2",
            line=2,
            references=["1990"],
            output="in, 1991",
            baseline_output="1990",
            scores={"exact_match": 0.0},
            baseline_scores={"exact_match": 100.0},
            flipped_to_wrong=["exact_match"],
        ),
    ]
    checks = [
        CheckResult(
            suite="qa",
            metric="exact_match",
            rule="max_drop",
            threshold=1.0,
            status=CheckStatus.FAIL,
            message="exact_match fell 50.00 points: more than 1.00",
            current=50.0,
            baseline=100.0,
            delta=-50.0,
        ),
        CheckResult(
            suite="qa",
            metric="exact_match",
            rule="min",
            threshold=10.0,
            status=CheckStatus.PASS,
            message="50.00 ≥ 10.00",
            current=50.0,
        ),
    ]
    suite = SuiteResult(
        name="qa",
        verdict=Verdict.REGRESSED,
        goldens="goldens/qa,v1.jsonl",
        golden_hash="sha256:x",
        n_examples=2,
        metrics=[MetricSummary(metric="exact_match", signature="s", current=50.0, baseline=100.0)],
        checks=checks,
        examples=examples,
    )
    return RunResult(
        goldgate_version="0",
        created_at="2026-01-01T00:00:00Z",
        verdict=Verdict.REGRESSED,
        suites=[suite],
    )


def event_file(tmp_path: Path, number: int = 7) -> Path:
    path = tmp_path / "event.json"
    path.write_text(json.dumps({"pull_request": {"number": number}}), encoding="utf-8")
    return path


def env_for(url: str, tmp_path: Path, token: str | None = TOKEN) -> GitHubEnvironment:
    return GitHubEnvironment.from_environ(
        {
            "GITHUB_API_URL": url,
            "GITHUB_REPOSITORY": "acme/app",
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event_file(tmp_path)),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
            **({"GITHUB_TOKEN": token} if token else {}),
        }
    )


def test_first_run_creates_and_second_updates_one_comment(tmp_path: Path) -> None:
    with fake_github() as api:
        api.comments[7] = [{"id": 1, "body": "unrelated"}, {"id": 2, "body": "also unrelated"}]
        env = env_for(api.url, tmp_path)
        first = upsert_comment(env, "## goldgate: regressed\n")
        second = upsert_comment(env, "## goldgate: pass\n")
    assert first.outcome is CommentOutcome.CREATED
    assert second.outcome is CommentOutcome.UPDATED
    bodies = api.comment_bodies(7)
    ours = [b for b in bodies if COMMENT_MARKER in b]
    assert len(ours) == 1 and "pass" in ours[0]
    assert len(bodies) == 3
    # the page size of 2 forces pagination: the marker was found on page 2
    assert any("page=2" in call.path for call in api.calls)
    assert all(call.authorization == f"Bearer {TOKEN}" for call in api.calls)


def test_read_only_token_falls_back_to_the_job_summary(tmp_path: Path) -> None:
    with fake_github(write_status=403) as api:
        env = env_for(api.url, tmp_path)
        outcome = publish(regressed_result(), "# report\n", env, report_dir="goldgate-report")
    assert outcome.comment is not None
    assert outcome.comment.outcome is CommentOutcome.NO_PERMISSION
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# report")
    assert "could not comment" in summary and "workflow_run" in summary
    assert TOKEN not in summary


def test_outputs_and_annotations_are_written(tmp_path: Path) -> None:
    with fake_github() as api:
        env = env_for(api.url, tmp_path)
        outcome = publish(regressed_result(), "# report\n", env, report_dir="out/rep")
    outputs = (tmp_path / "output.txt").read_text(encoding="utf-8")
    assert "verdict=regressed\n" in outputs
    assert "passed=false\n" in outputs
    assert "report-dir=out/rep\n" in outputs
    assert "regressions=1\n" in outputs
    (error,) = [line for line in outcome.annotations if line.startswith("::error")]
    # the file name's comma is escaped; the line is the worst example's
    assert error.startswith("::error file=goldens/qa%2Cv1.jsonl,line=2,title=goldgate%3A qa")
    assert "worst example: qa-2" in error


def test_annotation_data_cannot_inject_workflow_commands() -> None:
    result = regressed_result()
    result.suites[0].checks[0].message = "bad\n::set-output name=x::y %"
    lines = annotation_lines(result)
    assert all("\n" not in line for line in lines)
    assert "%0A::set-output" in lines[0] and lines[0].endswith("%25 (worst example: qa-2)")


def test_not_a_pull_request_and_no_token(tmp_path: Path) -> None:
    env = GitHubEnvironment.from_environ({"GITHUB_REPOSITORY": "acme/app"})
    assert upsert_comment(env, "x").outcome is CommentOutcome.NOT_A_PULL_REQUEST
    with fake_github() as api:
        no_token = env_for(api.url, tmp_path, token=None)
        assert upsert_comment(no_token, "x").outcome is CommentOutcome.NO_TOKEN
    assert api.calls == []


def test_workflow_run_override_names_the_pull_request(tmp_path: Path) -> None:
    with fake_github() as api:
        env = GitHubEnvironment.from_environ(
            {
                "GITHUB_API_URL": api.url,
                "GITHUB_REPOSITORY": "acme/app",
                "GITHUB_TOKEN": TOKEN,
                "GOLDGATE_PR_NUMBER": "42",
            }
        )
        assert upsert_comment(env, "x").outcome is CommentOutcome.CREATED
    assert 42 in api.comments


_RUN_HEAD = "a" * 40


def _workflow_run_env(api: FakeGitHub, tmp_path: Path, pr_number: str) -> GitHubEnvironment:
    """The trusted half of the README's workflow_run recipe: the number from the artifact."""
    event = tmp_path / "workflow_run.json"
    event.write_text(json.dumps({"workflow_run": {"head_sha": _RUN_HEAD, "event": "pull_request"}}))
    return GitHubEnvironment.from_environ(
        {
            "GITHUB_API_URL": api.url,
            "GITHUB_REPOSITORY": "acme/app",
            "GITHUB_EVENT_NAME": "workflow_run",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_TOKEN": TOKEN,
            "GOLDGATE_PR_NUMBER": pr_number,
        }
    )


def test_workflow_run_comments_on_the_pull_request_whose_head_the_run_built(
    tmp_path: Path,
) -> None:
    with fake_github(heads={42: _RUN_HEAD}) as api:
        result = upsert_comment(_workflow_run_env(api, tmp_path, "42"), "x")
    assert result.outcome is CommentOutcome.CREATED
    assert 42 in api.comments


def test_a_forks_artifact_naming_another_pull_request_cannot_rewrite_its_comment(
    tmp_path: Path,
) -> None:
    """The number comes from the untrusted run's artifact: pull request #7 (someone else's,
    head b…) must not get the fork's result, neither as a new comment nor as an edit."""
    with fake_github(heads={7: "b" * 40}) as api:
        api.comments[7] = [
            {
                "id": 5,
                "body": comment_marker("") + "\nreal",
                "user": {"login": "github-actions[bot]"},
            }
        ]
        result = upsert_comment(_workflow_run_env(api, tmp_path, "7"), "forged")
    assert result.outcome is CommentOutcome.FAILED
    assert "#7's head is bbbbbbbbbbbb, not aaaaaaaaaaaa" in result.detail
    assert api.comment_bodies(7) == [comment_marker("") + "\nreal"]
    assert [call.method for call in api.calls] == ["GET"]


def test_a_workflow_run_event_without_a_head_sha_comments_nowhere(tmp_path: Path) -> None:
    with fake_github(heads={42: _RUN_HEAD}) as api:
        env = _workflow_run_env(api, tmp_path, "42")
        assert env.event_path is not None
        env.event_path.write_text(json.dumps({"workflow_run": {"head_sha": "HEAD"}}))
        result = upsert_comment(env, "x")
    assert result.outcome is CommentOutcome.FAILED and "head_sha" in result.detail
    assert api.calls == []


def test_token_is_never_in_repr(tmp_path: Path) -> None:
    env = env_for("http://127.0.0.1:1", tmp_path)
    assert TOKEN not in repr(env)


def test_unreachable_api_does_not_fail_the_run(tmp_path: Path) -> None:
    env = env_for("http://127.0.0.1:9", tmp_path)  # discard port: connection refused
    outcome = publish(regressed_result(), "# r\n", env, report_dir="r")
    assert outcome.comment is not None
    assert outcome.comment.outcome is CommentOutcome.FAILED
    assert any(line.startswith("::warning") for line in outcome.annotations)
    assert TOKEN not in "".join(outcome.annotations)


def test_long_report_is_cut_to_fit_a_comment() -> None:
    body = fit_comment("# verdict: regressed\n" + "x" * 200_000)
    assert len(body) <= MAX_COMMENT_CHARS
    assert body.startswith(comment_marker("") + "\n" + COMMENT_MARKER)
    assert "# verdict: regressed" in body


def test_multiline_outputs_use_a_heredoc(tmp_path: Path) -> None:
    path = tmp_path / "out"
    write_step_outputs(path, {"a": "1", "b": "two\nlines"})
    text = path.read_text(encoding="utf-8")
    assert text.startswith("a=1\nb<<goldgate_")
    assert "\ntwo\nlines\ngoldgate_" in text


@pytest.mark.parametrize("verdict", list(Verdict))
def test_passed_output_follows_exit_code(verdict: Verdict) -> None:
    result = regressed_result().model_copy(update={"verdict": verdict})
    assert step_outputs(result, "r")["passed"] == ("true" if verdict.exit_code == 0 else "false")


def test_annotations_point_at_the_golden_file_from_the_repository_root(tmp_path: Path) -> None:
    result = regressed_result()
    lines = annotation_lines(result, root=tmp_path / "services" / "qa", workspace=tmp_path)
    assert lines[0].startswith("::error file=services/qa/goldens/qa%2Cv1.jsonl,line=2,")
    # a project outside the workspace keeps the path the result records
    (outside,) = annotation_lines(result, root=Path("/elsewhere"), workspace=tmp_path)
    assert outside.startswith("::error file=goldens/qa%2Cv1.jsonl,")


def test_run_in_a_subdirectory_annotates_repository_relative_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The action's ``working-directory``: GitHub resolves ``file=`` from the repository root."""
    from goldgate.cli.main import main

    project = tmp_path / "services" / "qa"
    project.mkdir(parents=True)
    monkeypatch.chdir(project)
    for name in list(os.environ):
        if name.startswith(("GITHUB_", "GOLDGATE_")):
            monkeypatch.delenv(name)
    assert main(["init"]) == 0
    assert main(["bless"]) == 0
    predictions = project / "predictions" / "qa.jsonl"
    rows = [json.loads(line) for line in predictions.read_text(encoding="utf-8").splitlines()]
    for row in rows[:12]:
        row["output"] = "I do not know"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    capsys.readouterr()
    assert main(["run", "--github", "--no-comment", "--quiet"]) == 1
    errors = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::error")]
    assert errors
    assert all(line.startswith("::error file=services/qa/goldens/qa.jsonl,") for line in errors)


def test_a_slice_check_points_at_the_worst_example_of_its_slice() -> None:
    result = regressed_result()
    qa = result.suites[0]
    legal = ExampleResult(
        id="qa-3",
        line=3,
        references=["42"],
        output="41",
        baseline_output="42",
        scores={"exact_match": 50.0},
        baseline_scores={"exact_match": 100.0},
        tags=["legal"],
    )
    qa.examples.append(legal)
    qa.checks.append(
        qa.checks[0].model_copy(update={"slice": "legal", "message": "qa[legal] fell"})
    )
    suite_error, slice_error = [line for line in annotation_lines(result) if "::error" in line]
    # the whole suite's worst example is qa-2 (-100); the legal slice's is qa-3 (-50)
    assert ",line=2," in suite_error and "worst example: qa-2" in suite_error
    assert ",line=3," in slice_error and "worst example: qa-3" in slice_error
    assert "title=goldgate%3A qa[legal] exact_match max_drop::" in slice_error


def test_report_url_is_taken_only_when_it_is_an_http_url() -> None:
    from goldgate.github.pull_request import report_url

    url = "https://example.github.io/pr-7/report.html"
    assert report_url({"GOLDGATE_REPORT_URL": f" {url} "}) == url
    for bad in ("", "javascript:alert(1)", "https://x/a b", "file:///etc/passwd", "https://x/#a"):
        assert report_url({"GOLDGATE_REPORT_URL": bad}) is None
    assert report_url({}) is None


def test_the_job_summary_links_examples_to_the_published_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldgate.cli.main import main
    from goldgate.report import write_reports
    from tests.report.fixtures import make_result

    write_reports(make_result("regressed"), tmp_path, ["json"])
    summary_file = tmp_path / "summary.md"
    summary_file.write_text("", encoding="utf-8")
    url = "https://example.github.io/pr-7/report.html"
    for name in ("GITHUB_OUTPUT", "GITHUB_EVENT_PATH", "GITHUB_TOKEN", "GOLDGATE_GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    monkeypatch.setenv("GOLDGATE_REPORT_URL", url)
    assert (
        main(
            [
                "report",
                str(tmp_path / "result.json"),
                "--github",
                "--no-comment",
                "-o",
                str(tmp_path / "again.md"),
            ]
        )
        == 0
    )
    summary = summary_file.read_text(encoding="utf-8")
    assert f'<a href="{url}#qa-007"><code>qa-007</code></a>' in summary
