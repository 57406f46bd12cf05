"""GitLab mode: one sticky merge-request note, and the JUnit and metrics report artifacts.

A face, like the CLI and GitHub mode: it reads GitLab's predefined ``CI_*`` variables and
talks to the REST API (v4) with the standard library only. The token
(``GOLDGATE_GITLAB_TOKEN``: a project, group or personal access token with the ``api``
scope) goes in a header to ``CI_API_V4_URL``'s own host and nowhere else, and is never
printed. ``CI_JOB_TOKEN`` cannot write notes, so it is never used.

The note is found as on GitHub: its first line is the hidden marker of the configuration's
key, and only a note written by the token's own user (``GET /user``) is updated; when that
user cannot be told, or the update is refused, a new note is written. A note that cannot be
written is a warning: the verdict and the exit code stay the gate's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldgate.forge.rest import ApiError, RestApi
from goldgate.forge.sticky import (
    CommentOutcome,
    CommentResult,
    comment_marker,
    find_own_comment,
    fit_comment,
    repository_path,
)
from goldgate.model.result import RunResult

#: GitLab refuses notes over 1,000,000 characters
MAX_NOTE_CHARS = 999_000
#: the report artifacts GitLab mode always writes (report/__init__.py's formats)
ARTIFACT_FORMATS = ("junit", "metrics")
_MAX_ID_DIGITS = 12
_TOKEN_HELP = (
    "set GOLDGATE_GITLAB_TOKEN to a project access token with the api scope (a masked CI/CD"
    " variable; CI_JOB_TOKEN cannot write merge-request notes)"
)


def _number(value: str) -> int | None:
    value = value.strip()
    if value.isascii() and value.isdigit() and len(value) <= _MAX_ID_DIGITS and int(value) > 0:
        return int(value)
    return None


@dataclass(frozen=True)
class GitLabEnvironment:
    """What a GitLab CI job tells goldgate through its environment."""

    api_url: str = ""
    project_id: int | None = None
    merge_request_iid: int | None = None
    #: the project the merge request's source branch lives in (a fork's, for a fork's MR)
    source_project_id: int | None = None
    merge_request_url: str = ""
    job_url: str = ""
    project_dir: Path | None = None
    token: str | None = field(default=None, repr=False)
    has_job_token: bool = False
    comment_key: str = ""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> GitLabEnvironment:
        """Read GitLab's predefined variables (and goldgate's own)."""
        project = environ.get("CI_MERGE_REQUEST_PROJECT_ID") or environ.get("CI_PROJECT_ID", "")
        project_url = environ.get("CI_MERGE_REQUEST_PROJECT_URL", "").rstrip("/")
        iid = _number(environ.get("CI_MERGE_REQUEST_IID", ""))
        return cls(
            api_url=environ.get("CI_API_V4_URL", "").strip().rstrip("/"),
            project_id=_number(project),
            merge_request_iid=iid,
            source_project_id=_number(environ.get("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", "")),
            merge_request_url=(
                f"{project_url}/-/merge_requests/{iid}"
                if iid is not None and re.fullmatch(r"https?://[^\s\x00-\x1f\x7f]+", project_url)
                else ""
            ),
            job_url=environ.get("CI_JOB_URL", ""),
            project_dir=Path(environ["CI_PROJECT_DIR"]) if environ.get("CI_PROJECT_DIR") else None,
            token=environ.get("GOLDGATE_GITLAB_TOKEN") or None,
            has_job_token=bool(environ.get("CI_JOB_TOKEN")),
            comment_key=environ.get("GOLDGATE_COMMENT_KEY", "").strip(),
        )

    @property
    def from_fork(self) -> bool:
        """Whether the merge request comes from another project (a fork)."""
        return (
            self.source_project_id is not None
            and self.project_id is not None
            and self.source_project_id != self.project_id
        )


def _api(env: GitLabEnvironment, token: str) -> RestApi:
    return RestApi(
        env.api_url, token, {"PRIVATE-TOKEN": token}, name="GitLab", url_variable="CI_API_V4_URL"
    )


def _identity(api: RestApi) -> str | None:
    """The id of the user the token writes as, or None when the API will not say."""
    try:
        user, _ = api.request("GET", "/user")
    except ApiError as exc:
        if exc.status in (403, 404):
            return None
        raise
    ident = user.get("id") if isinstance(user, dict) else None
    if isinstance(ident, int) and not isinstance(ident, bool):
        return str(ident)
    raise ApiError(0, "GET /user: the API answered without a user id")


def _author(note: Mapping[str, Any]) -> str | None:
    if note.get("system") is True:
        return None
    author = note.get("author")
    ident = author.get("id") if isinstance(author, dict) else None
    return str(ident) if isinstance(ident, int) and not isinstance(ident, bool) else None


def _note_url(env: GitLabEnvironment, note: Any) -> str | None:
    ident = note.get("id") if isinstance(note, dict) else None
    if not env.merge_request_url or not isinstance(ident, int):
        return None
    return f"{env.merge_request_url}#note_{ident}"


def upsert_note(env: GitLabEnvironment, markdown: str, *, key: str = "") -> CommentResult:
    """Write goldgate's note on the merge request, or update it in place if it is ours."""
    key = env.comment_key or key
    if env.merge_request_iid is None or env.project_id is None:
        return CommentResult(
            CommentOutcome.NOT_A_PULL_REQUEST, "this pipeline is not for a merge request"
        )
    if not env.token:
        why = "no GOLDGATE_GITLAB_TOKEN"
        if env.from_fork:
            why += " (a fork's merge-request pipeline gets none of the project's variables)"
        elif env.has_job_token:
            why += " (CI_JOB_TOKEN cannot write merge-request notes)"
        return CommentResult(CommentOutcome.NO_TOKEN, f"{why}; {_TOKEN_HELP}")
    if not env.api_url:
        return CommentResult(CommentOutcome.FAILED, "CI_API_V4_URL is not set")
    try:
        api = _api(env, env.token)
    except ApiError as exc:
        return CommentResult(CommentOutcome.FAILED, str(exc))
    body = fit_comment(markdown, key, MAX_NOTE_CHARS, "the job log and artifacts")
    notes = f"/projects/{env.project_id}/merge_requests/{env.merge_request_iid}/notes"
    try:
        me = _identity(api)
        ours = None
        if me is not None:
            ours = find_own_comment(
                api.pages(f"{notes}?sort=asc&order_by=created_at"),
                me,
                comment_marker(key),
                _author,
            )
        if ours is not None and isinstance(ours.get("id"), int):
            try:
                updated, _ = api.request("PUT", f"{notes}/{ours['id']}", {"body": body})
                return CommentResult(CommentOutcome.UPDATED, url=_note_url(env, updated))
            except ApiError as exc:
                if exc.status not in (403, 404):
                    raise
                # Gone, or not ours to edit after all: a new note still carries the report.
        created, _ = api.request("POST", notes, {"body": body})
        return CommentResult(CommentOutcome.CREATED, url=_note_url(env, created))
    except ApiError as exc:
        if exc.status in (401, 403, 404):
            return CommentResult(CommentOutcome.NO_PERMISSION, f"{exc}; {_TOKEN_HELP}")
        return CommentResult(CommentOutcome.FAILED, str(exc))


def note_key(result: RunResult, env: GitLabEnvironment, root: Path | None) -> str:
    """The note's key: the configuration's path in the repository (as on GitHub)."""
    return repository_path(result.config, root, env.project_dir) if result.config else ""


@dataclass(frozen=True)
class PublishOutcome:
    """What GitLab mode did: the artifacts it wrote and the note's fate."""

    artifacts: list[Path]
    note: CommentResult | None


def publish(
    result: RunResult,
    markdown: str,
    env: GitLabEnvironment,
    *,
    report_dir: Path,
    note: bool = True,
    root: Path | None = None,
) -> PublishOutcome:
    """Write the JUnit and metrics artifacts into ``report_dir``, then the merge-request note.

    The artifacts come first: a note that cannot be written leaves them complete.
    """
    from goldgate.report import write_reports

    artifacts = write_reports(result, report_dir, ARTIFACT_FORMATS)
    outcome = upsert_note(env, markdown, key=note_key(result, env, root)) if note else None
    return PublishOutcome(artifacts, outcome)
