"""GitHub mode: the job summary, step outputs, annotations and one sticky pull-request comment.

A face, like the CLI: it reads the ``GITHUB_*`` environment it is given and talks to the REST
API with the standard library only. The token is sent in a header and never printed or logged.
"""

from __future__ import annotations

import json
import secrets
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from goldgate import console
from goldgate.report.markdown import MARKER as COMMENT_MARKER
from goldgate.result import CheckStatus, ExampleResult, RunResult, SuiteResult, gain

#: GitHub rejects comment bodies over 65,536 characters.
MAX_COMMENT_CHARS = 65_000
DEFAULT_API_URL = "https://api.github.com"
_TIMEOUT_S = 30


@dataclass(frozen=True)
class GitHubEnvironment:
    """What GitHub Actions tells a step through its environment."""

    step_summary: Path | None = None
    output: Path | None = None
    event_name: str = ""
    event_path: Path | None = None
    repository: str = ""
    api_url: str = DEFAULT_API_URL
    token: str | None = field(default=None, repr=False)
    workspace: Path | None = None
    #: set by a trusted ``workflow_run`` workflow that comments for a fork's pull request
    pr_number_override: int | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> GitHubEnvironment:
        """Read the variables GitHub sets for every step (and goldgate's own overrides)."""

        def path(name: str) -> Path | None:
            value = environ.get(name, "")
            return Path(value) if value else None

        override = environ.get("GOLDGATE_PR_NUMBER", "").strip()
        return cls(
            step_summary=path("GITHUB_STEP_SUMMARY"),
            output=path("GITHUB_OUTPUT"),
            event_name=environ.get("GITHUB_EVENT_NAME", ""),
            event_path=path("GITHUB_EVENT_PATH"),
            repository=environ.get("GITHUB_REPOSITORY", ""),
            api_url=(environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            token=environ.get("GOLDGATE_GITHUB_TOKEN") or environ.get("GITHUB_TOKEN") or None,
            workspace=path("GITHUB_WORKSPACE"),
            pr_number_override=int(override) if override.isdigit() else None,
        )

    def pull_request_number(self) -> int | None:
        """The pull request this run belongs to, from the event payload or the override."""
        if self.pr_number_override is not None:
            return self.pr_number_override
        if self.event_path is None:
            return None
        try:
            payload = json.loads(self.event_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        number = (payload.get("pull_request") or {}).get("number")
        if number is None and "pull_request" in (payload.get("issue") or {}):
            number = payload["issue"].get("number")
        return number if isinstance(number, int) else None


# -- step outputs ------------------------------------------------------------------------------


def step_outputs(result: RunResult, report_dir: Path | str) -> dict[str, str]:
    """The action's outputs: verdict, passed, report-dir, report-path and failed checks.

    ``report-dir`` is shown relative to the working directory when it lies inside it;
    ``report-path`` is absolute, for the artifact upload, which must not join an absolute
    directory to the working directory.
    """
    directory = Path(report_dir)
    try:
        shown = directory.relative_to(Path.cwd()) if directory.is_absolute() else directory
    except ValueError:
        shown = directory
    failed = sum(1 for check in result.checks() if check.status is CheckStatus.FAIL)
    return {
        "verdict": result.verdict.value,
        "passed": "true" if result.exit_code == 0 else "false",
        "report-dir": str(shown),
        "report-path": str(directory.resolve()),
        "regressions": str(failed),
    }


def write_step_outputs(path: Path, outputs: Mapping[str, str]) -> None:
    """Append outputs to ``$GITHUB_OUTPUT``, multi-line values in heredoc form."""
    lines = []
    for name, value in outputs.items():
        if "\n" in value or "\r" in value:
            delimiter = f"goldgate_{secrets.token_hex(8)}"
            lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
        else:
            lines.append(f"{name}={value}\n")
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(lines))


def append_step_summary(path: Path, markdown: str) -> None:
    """Append Markdown to ``$GITHUB_STEP_SUMMARY``."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(markdown if markdown.endswith("\n") else markdown + "\n")


# -- annotations ------------------------------------------------------------------------------


def _worst_example(suite: SuiteResult, metric: str, tag: str | None = None) -> ExampleResult | None:
    """The example (of the ``tag`` slice, if given) whose ``metric`` worsened most, if any."""
    higher = next((m.higher_is_better for m in suite.metrics if m.metric == metric), True)
    worst, worst_delta = None, 0.0
    for example in suite.examples:
        if tag is not None and tag not in example.tags:
            continue
        before = example.baseline_scores.get(metric)
        now = example.scores.get(metric)
        if before is None or now is None:
            continue
        change = gain(now - before, higher)
        if change < worst_delta:
            worst, worst_delta = example, change
    return worst


def _repository_path(goldens: str, root: Path | None, workspace: Path | None) -> str:
    """The golden file's path from the repository root, where GitHub looks for it.

    ``goldens`` is relative to the project root, which is not the repository's when the
    project lives in a subdirectory (the action's ``working-directory``).
    """
    if root is None or workspace is None:
        return goldens
    try:
        return (root / goldens).resolve().relative_to(workspace.resolve()).as_posix()
    except (ValueError, OSError):
        return goldens


def annotation_lines(
    result: RunResult, *, root: Path | None = None, workspace: Path | None = None
) -> list[str]:
    """Workflow commands: an error per failed check, a warning per drop forgiven as noise.

    Each points at the golden file and the line of the example that fell the most. With the
    project ``root`` and the repository ``workspace`` known, file paths are made relative to
    the repository, as GitHub expects.
    """
    lines = []
    for suite in result.suites:
        goldens = _repository_path(suite.goldens, root, workspace)
        if suite.error:
            lines.append(
                console.workflow_command(
                    "error",
                    suite.error,
                    [("file", goldens), ("title", f"goldgate: {suite.name}")],
                )
            )
        for check in suite.checks:
            if check.status is CheckStatus.FAIL:
                level = "error"
            elif check.status is CheckStatus.FORGIVEN:
                level = "warning"
            else:
                continue
            properties = [("file", goldens)]
            worst = _worst_example(suite, check.metric, check.slice)
            if worst is not None and worst.line is not None:
                properties.append(("line", str(worst.line)))
            where = f"{suite.name}[{check.slice}]" if check.slice else suite.name
            properties.append(("title", f"goldgate: {where} {check.metric} {check.rule}"))
            message = check.message
            if worst is not None:
                message += f" (worst example: {worst.id})"
            lines.append(console.workflow_command(level, message, properties))
    for error in result.errors:
        lines.append(console.workflow_command("error", error, [("title", "goldgate")]))
    return lines


# -- the sticky comment -----------------------------------------------------------------------


class CommentOutcome(StrEnum):
    """What happened to the pull-request comment."""

    CREATED = "created"
    UPDATED = "updated"
    NOT_A_PULL_REQUEST = "not-a-pull-request"
    NO_TOKEN = "no-token"
    NO_PERMISSION = "no-permission"
    FAILED = "failed"


@dataclass(frozen=True)
class CommentResult:
    """The outcome and, when it did not work, why (never containing the token)."""

    outcome: CommentOutcome
    detail: str = ""
    url: str | None = None


class _ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class _Api:
    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url
        self._token = token
        self._host = urllib.parse.urlsplit(base_url).netloc

    def request(
        self, method: str, url: str, body: Mapping[str, Any] | None = None
    ) -> tuple[Any, dict[str, str]]:
        if not url.startswith("http"):
            url = self.base_url + url
        # Never send the token to a host other than the API's (a crafted Link header).
        if urllib.parse.urlsplit(url).netloc != self._host:
            raise _ApiError(0, "refusing to follow a link to another host")
        data = json.dumps(body).encode("utf-8") if body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self._token}")
        request.add_header("Accept", "application/vnd.github+json")
        request.add_header("X-GitHub-Api-Version", "2022-11-28")
        request.add_header("User-Agent", "goldgate")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response:
                payload = response.read()
                headers = {k.lower(): v for k, v in response.headers.items()}
        except urllib.error.HTTPError as exc:
            raise _ApiError(exc.code, _api_message(exc)) from None
        except (urllib.error.URLError, OSError) as exc:
            raise _ApiError(0, f"cannot reach the GitHub API: {exc}") from None
        return (json.loads(payload) if payload else None), headers


def _api_message(exc: urllib.error.HTTPError) -> str:
    try:
        message = json.loads(exc.read()).get("message", "")
    except (ValueError, AttributeError, OSError):
        message = ""
    return str(message or exc.reason)[:200]


def _next_link(headers: Mapping[str, str]) -> str | None:
    for part in headers.get("link", "").split(","):
        url, _, rel = part.partition(";")
        if 'rel="next"' in rel:
            return url.strip().strip("<>")
    return None


def _existing_comments(api: _Api, path: str) -> Iterable[dict[str, Any]]:
    url: str | None = f"{path}?per_page=100"
    while url:
        page, headers = api.request("GET", url)
        yield from page or []
        url = _next_link(headers)


def fit_comment(markdown: str) -> str:
    """The marker plus the report, cut (never the verdict at its top) to GitHub's limit."""
    body = markdown if COMMENT_MARKER in markdown else f"{COMMENT_MARKER}\n{markdown}"
    if len(body) <= MAX_COMMENT_CHARS:
        return body
    note = (
        "\n\n_… the report was cut to fit a comment; the job summary and artifact have it all._\n"
    )
    return body[: MAX_COMMENT_CHARS - len(note)] + note


def upsert_comment(env: GitHubEnvironment, markdown: str) -> CommentResult:
    """Create goldgate's comment on the pull request, or update it in place if it exists."""
    number = env.pull_request_number()
    if number is None or not env.repository:
        return CommentResult(
            CommentOutcome.NOT_A_PULL_REQUEST, "this run is not for a pull request"
        )
    if not env.token:
        return CommentResult(CommentOutcome.NO_TOKEN, "no token was given to the action")
    api = _Api(env.api_url, env.token)
    body = fit_comment(markdown)
    issue_path = f"/repos/{env.repository}/issues/{number}/comments"
    try:
        for comment in _existing_comments(api, issue_path):
            if COMMENT_MARKER in (comment.get("body") or ""):
                updated, _ = api.request(
                    "PATCH",
                    f"/repos/{env.repository}/issues/comments/{comment['id']}",
                    {"body": body},
                )
                return CommentResult(CommentOutcome.UPDATED, url=(updated or {}).get("html_url"))
        created, _ = api.request("POST", issue_path, {"body": body})
        return CommentResult(CommentOutcome.CREATED, url=(created or {}).get("html_url"))
    except _ApiError as exc:
        if exc.status in (401, 403, 404):
            return CommentResult(CommentOutcome.NO_PERMISSION, str(exc))
        return CommentResult(CommentOutcome.FAILED, str(exc))


# -- everything GitHub mode does after a run ---------------------------------------------------


@dataclass(frozen=True)
class PublishOutcome:
    """What GitHub mode did: the annotation lines to print and the comment's fate."""

    annotations: list[str]
    comment: CommentResult | None


def publish(
    result: RunResult,
    markdown: str,
    env: GitHubEnvironment,
    *,
    report_dir: Path | str,
    comment: bool = True,
    root: Path | None = None,
) -> PublishOutcome:
    """Write the job summary and step outputs, and post or update the sticky comment.

    ``root`` is the project root the result's golden paths are relative to.
    """
    comment_result = upsert_comment(env, markdown) if comment else None
    if env.step_summary is not None:
        summary = markdown
        if comment_result is not None and comment_result.outcome in (
            CommentOutcome.NO_PERMISSION,
            CommentOutcome.NO_TOKEN,
            CommentOutcome.FAILED,
        ):
            summary += (
                "\n\n> [!NOTE]\n> goldgate could not comment on this pull request "
                f"({comment_result.detail}). A pull request from a fork gets a read-only "
                "token; see the `workflow_run` recipe in goldgate's README to comment from a "
                "trusted workflow. The report above is complete.\n"
            )
        append_step_summary(env.step_summary, summary)
    if env.output is not None:
        write_step_outputs(env.output, step_outputs(result, report_dir))
    lines = annotation_lines(result, root=root, workspace=env.workspace)
    if comment_result is not None and comment_result.outcome is CommentOutcome.FAILED:
        lines.append(
            console.workflow_command(
                "warning", f"could not comment: {comment_result.detail}", [("title", "goldgate")]
            )
        )
    return PublishOutcome(lines, comment_result)
