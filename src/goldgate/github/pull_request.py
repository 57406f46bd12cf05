"""GitHub mode: the job summary, step outputs, annotations and one sticky pull-request comment.

A face, like the CLI: it reads the ``GITHUB_*`` environment it is given and talks to the REST
API with the standard library only. The token is sent in a header and never printed or logged.
"""

from __future__ import annotations

import json
import re
import secrets
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from goldgate.errors import InputError
from goldgate.forge.rest import ApiError, RestApi
from goldgate.forge.sticky import (
    NOT_WRITTEN,
    CommentOutcome,
    CommentResult,
    comment_marker,
    find_own_comment,
    repository_path,
)
from goldgate.forge.sticky import fit_comment as fit_comment_to
from goldgate.io.inputs import read_regular
from goldgate.model.example_table import ExampleResult, example_table
from goldgate.model.result import CheckStatus, RunResult, SuiteResult, gain
from goldgate.report.markdown import prose
from goldgate.report.ranking import gains
from goldgate.terminal import console

#: GitHub rejects comment bodies over 65,536 characters.
MAX_COMMENT_CHARS = 65_000
DEFAULT_API_URL = "https://api.github.com"
#: who comments with the workflow's ``GITHUB_TOKEN`` (which may not read ``GET /user``)
ACTIONS_BOT = "github-actions[bot]"
#: a pull-request number has at most this many digits (int() refuses over 4,300)
_MAX_NUMBER_DIGITS = 12


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
    #: tells two goldgate workflows' comments on one pull request apart (default: config path)
    comment_key: str = ""
    #: the login the token comments as, when neither ``GET /user`` nor the default can tell
    comment_author: str = ""

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
            pr_number_override=(
                int(override)
                if override.isascii() and override.isdigit() and len(override) <= _MAX_NUMBER_DIGITS
                else None
            ),
            comment_key=environ.get("GOLDGATE_COMMENT_KEY", "").strip(),
            comment_author=environ.get("GOLDGATE_COMMENT_AUTHOR", "").strip(),
        )

    def check_files(self) -> None:
        """``InputError`` when ``$GITHUB_STEP_SUMMARY`` or ``$GITHUB_OUTPUT`` cannot be appended to.

        Checked before the gate runs, so a misconfigured step fails at once and clearly.
        """
        for name, path in (
            ("GITHUB_STEP_SUMMARY", self.step_summary),
            ("GITHUB_OUTPUT", self.output),
        ):
            if path is None:
                continue
            if path.is_dir():
                raise InputError(
                    f"{name}={path}: is a directory, not a file goldgate can append to"
                )
            if not path.parent.is_dir():
                raise InputError(f"{name}={path}: directory {path.parent} does not exist")
            if path.exists() and not path.is_file():
                raise InputError(f"{name}={path}: not a regular file")

    def pull_request_number(self) -> int | None:
        """The pull request this run belongs to, from the event payload or the override."""
        if self.pr_number_override is not None:
            return self.pr_number_override
        if self.event_path is None:
            return None
        payload = self._event()
        where = f"GITHUB_EVENT_PATH={self.event_path}"
        pull_request = payload.get("pull_request")
        issue = payload.get("issue")
        number = pull_request.get("number") if isinstance(pull_request, dict) else None
        if number is None and isinstance(issue, dict) and "pull_request" in issue:
            number = issue.get("number")
        # bool is an int to Python; a pull request number is not.
        if number is None or (isinstance(number, int) and not isinstance(number, bool)):
            return number if number is None or number > 0 else None
        raise InputError(f"{where}: the pull request number is not an integer")

    def workflow_run_head_sha(self) -> str | None:
        """The head commit of the run a ``workflow_run`` event reports (None for other events).

        The pull request number of the ``workflow_run`` recipe comes from the untrusted run's
        artifact; the commit comes from GitHub, so it is what binds the number to the run.
        """
        if self.event_name != "workflow_run":
            return None
        run = self._event().get("workflow_run")
        sha = run.get("head_sha") if isinstance(run, dict) else None
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha):
            raise InputError(
                "a workflow_run event without its run's head_sha: cannot tell which pull"
                " request the result belongs to"
            )
        return sha

    def _event(self) -> dict[str, Any]:
        """The event payload (``GITHUB_EVENT_PATH``) as a JSON object."""
        if self.event_path is None:
            raise InputError(f"GITHUB_EVENT_PATH is not set for the {self.event_name} event")
        where = f"GITHUB_EVENT_PATH={self.event_path}"
        try:
            raw = read_regular(self.event_path, InputError, what="event payload")
        except FileNotFoundError:
            raise InputError(f"{where}: no such file") from None
        try:
            payload = json.loads(raw)
        except (ValueError, RecursionError):
            raise InputError(f"{where}: the event payload is not valid JSON") from None
        if not isinstance(payload, dict):
            raise InputError(f"{where}: the event payload is not a JSON object")
        return payload


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
    _append(path, "GITHUB_OUTPUT", "".join(lines))


def append_step_summary(path: Path, markdown: str) -> None:
    """Append Markdown to ``$GITHUB_STEP_SUMMARY``."""
    _append(path, "GITHUB_STEP_SUMMARY", markdown if markdown.endswith("\n") else markdown + "\n")


def _append(path: Path, name: str, text: str) -> None:
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise InputError(f"{name}={path}: cannot append: {exc.strerror or exc}") from None


def report_url(environ: Mapping[str, str]) -> str | None:
    """Where the HTML report will be published (``GOLDGATE_REPORT_URL``), if it is an
    http(s) URL: the Markdown's examples then link to their anchors in it."""
    value = (environ.get("GOLDGATE_REPORT_URL") or "").strip()
    if not re.fullmatch(r"https?://[^\s#\x00-\x1f\x7f]+", value):
        return None
    return value


# -- annotations ------------------------------------------------------------------------------


def _worst_example(suite: SuiteResult, metric: str, tag: str | None = None) -> ExampleResult | None:
    """The example (of the ``tag`` slice, if given) whose ``metric`` worsened most, if any.

    Read from the score columns; only the examples that worsened are looked at one by one.
    """
    higher = next((m.higher_is_better for m in suite.metrics if m.metric == metric), True)
    table = example_table(suite.examples)
    now, then = table.current(metric), table.baseline(metric)
    worsened = np.flatnonzero(gains(now, then, higher) < 0).tolist()
    worst, worst_delta = None, 0.0
    for position in worsened:
        if tag is not None and tag not in table.tags_at(position):
            continue
        change = gain(float(now[position]) - float(then[position]), higher)
        if change < worst_delta:
            worst, worst_delta = position, change
    return None if worst is None else table[worst]


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
        goldens = repository_path(suite.goldens, root, workspace)
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


def _api(base_url: str, token: str) -> RestApi:
    return RestApi(
        base_url,
        token,
        {
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        },
        name="GitHub",
        url_variable="GITHUB_API_URL",
    )


def fit_comment(markdown: str, key: str = "") -> str:
    """The markers plus the report, cut (never the verdict at its top) to GitHub's limit."""
    return fit_comment_to(markdown, key, MAX_COMMENT_CHARS, "the job summary and artifact")


def _identity(api: RestApi, env: GitHubEnvironment) -> str:
    """The login comments made with this token carry.

    A personal access token can read ``GET /user``; the workflow's ``GITHUB_TOKEN`` (an
    installation token) cannot, and comments as ``github-actions[bot]``.
    """
    if env.comment_author:
        return env.comment_author
    try:
        user, _ = api.request("GET", "/user")
    except ApiError as exc:
        if exc.status in (401, 403, 404):
            return ACTIONS_BOT
        raise
    login = user.get("login") if isinstance(user, dict) else None
    if not isinstance(login, str) or not login:
        raise ApiError(0, "GET /user: the API answered without a login")
    return login


def _author(comment: Mapping[str, Any]) -> str | None:
    user = comment.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else None


def upsert_comment(env: GitHubEnvironment, markdown: str, *, key: str = "") -> CommentResult:
    """Create goldgate's comment on the pull request, or update it in place if it exists.

    Only a comment by the token's own identity carrying the marker for ``key`` is updated; if
    that update is refused, a new comment is created instead.
    """
    key = env.comment_key or key
    try:
        number = env.pull_request_number()
        run_head = None if number is None else env.workflow_run_head_sha()
    except InputError as exc:
        return CommentResult(CommentOutcome.FAILED, str(exc))
    if number is None or not env.repository:
        return CommentResult(
            CommentOutcome.NOT_A_PULL_REQUEST, "this run is not for a pull request"
        )
    if not env.token:
        return CommentResult(CommentOutcome.NO_TOKEN, "no token was given to the action")
    body = fit_comment(markdown, key)
    issue_path = f"/repos/{urllib.parse.quote(env.repository)}/issues/{number}/comments"
    try:
        api = _api(env.api_url, env.token)
    except ApiError as exc:
        return CommentResult(CommentOutcome.FAILED, str(exc))
    try:
        if run_head is not None:
            # The number came from the untrusted run's artifact: another pull request's
            # number there must not let a fork's result rewrite that pull request's comment.
            mismatch = _other_head(api, env.repository, number, run_head)
            if mismatch is not None:
                return CommentResult(CommentOutcome.FAILED, mismatch)
        ours = find_own_comment(
            api.pages(issue_path), _identity(api, env), comment_marker(key), _author
        )
        if ours is not None and isinstance(ours.get("id"), int):
            try:
                updated, _ = api.request(
                    "PATCH",
                    f"/repos/{urllib.parse.quote(env.repository)}/issues/comments/{ours['id']}",
                    {"body": body},
                )
                return CommentResult(CommentOutcome.UPDATED, url=_html_url(updated))
            except ApiError as exc:
                if exc.status not in (403, 404, 422):
                    raise
                # Not ours to edit after all (or gone): a new comment still carries the report.
        created, _ = api.request("POST", issue_path, {"body": body})
        return CommentResult(CommentOutcome.CREATED, url=_html_url(created))
    except ApiError as exc:
        if exc.status in (401, 403, 404):
            return CommentResult(CommentOutcome.NO_PERMISSION, str(exc))
        return CommentResult(CommentOutcome.FAILED, str(exc))


def _other_head(api: RestApi, repository: str, number: int, run_head: str) -> str | None:
    """Why pull request ``number`` is not the one whose head the run built, or None if it is."""
    pull, _ = api.request("GET", f"/repos/{urllib.parse.quote(repository)}/pulls/{number}")
    head = pull.get("head") if isinstance(pull, dict) else None
    sha = head.get("sha") if isinstance(head, dict) else None
    if sha == run_head:
        return None
    shown = console.inline(sha[:12]) if isinstance(sha, str) else "unknown"
    return (
        f"pull request #{number}'s head is {shown}, not {run_head[:12]}, the commit the"
        " workflow run built: the result is not that pull request's; no comment"
    )


def _html_url(comment: Any) -> str | None:
    url = comment.get("html_url") if isinstance(comment, dict) else None
    return url if isinstance(url, str) else None


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

    ``root`` is the project root the result's golden paths are relative to. The comment's key
    is ``GOLDGATE_COMMENT_KEY`` or else the configuration's path in the repository.
    """
    env.check_files()
    key = repository_path(result.config, root, env.workspace) if result.config else ""
    comment_result = upsert_comment(env, markdown, key=key) if comment else None
    if env.step_summary is not None:
        summary = markdown
        if comment_result is not None and comment_result.outcome in NOT_WRITTEN:
            summary += (
                "\n\n> [!NOTE]\n> goldgate could not comment on this pull request "
                f"({prose(comment_result.detail)}). A pull request from a fork gets a read-only "
                "token; see the `workflow_run` recipe in goldgate's README to comment from a "
                "trusted workflow. The report above is complete.\n"
            )
        append_step_summary(env.step_summary, console.redact(summary))
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
