"""The one report comment per change and configuration: its hidden marker, size and lookup.

A pull request (GitHub) or a merge request (GitLab) keeps one goldgate comment per
configuration, updated in place. The comment's first line is a hidden marker carrying the
key (the configuration's path, or ``GOLDGATE_COMMENT_KEY``); only a comment written by the
token's own user counts, since anyone can paste the marker into a comment of theirs.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from goldgate.report.markdown import MARKER as REPORT_MARKER

_CUT_NOTE = "\n\n_… the report was cut to fit a comment; {where} have it all._\n"


class CommentOutcome(StrEnum):
    """What happened to the report comment."""

    CREATED = "created"
    UPDATED = "updated"
    NOT_A_PULL_REQUEST = "not-a-pull-request"
    NO_TOKEN = "no-token"
    NO_PERMISSION = "no-permission"
    FAILED = "failed"


#: the outcomes after which the report lives only in the job's log, summary and artifacts
NOT_WRITTEN = (CommentOutcome.NO_PERMISSION, CommentOutcome.NO_TOKEN, CommentOutcome.FAILED)


@dataclass(frozen=True)
class CommentResult:
    """The outcome and, when it did not work, why (never containing the token)."""

    outcome: CommentOutcome
    detail: str = ""
    url: str | None = None


def comment_marker(key: str) -> str:
    """The hidden line that tells goldgate's comment for ``key`` apart from any other."""
    # Quoted so that the key can neither close the HTML comment nor span lines.
    quoted = urllib.parse.quote(key, safe="/.@_+=:").replace("-", "%2D")
    return f"<!-- goldgate-comment key={quoted} -->"


def fit_comment(markdown: str, key: str, limit: int, where: str) -> str:
    """The markers plus the report, cut (never the verdict at its top) to ``limit`` characters.

    ``where`` names what has the whole report when it is cut (``the job summary and artifact``).
    """
    body = markdown if REPORT_MARKER in markdown else f"{REPORT_MARKER}\n{markdown}"
    body = f"{comment_marker(key)}\n{body}"
    if len(body) <= limit:
        return body
    note = _CUT_NOTE.format(where=where)
    return body[: limit - len(note)] + note


def find_own_comment(
    comments: Iterable[Mapping[str, Any]],
    me: str,
    marker: str,
    author: Callable[[Mapping[str, Any]], str | None],
) -> Mapping[str, Any] | None:
    """Our comment for this key; else our comment from before keys existed; else None.

    Only a comment whose ``author`` is ``me`` counts.
    """
    legacy = None
    for comment in comments:
        body = comment.get("body")
        if author(comment) != me or not isinstance(body, str):
            continue
        first_line = body.split("\n", 1)[0]
        if first_line == marker:
            return comment
        if legacy is None and REPORT_MARKER in body and "<!-- goldgate-comment key=" not in body:
            legacy = comment
    return legacy


def repository_path(goldens: str, root: Path | None, workspace: Path | None) -> str:
    """The golden file's path from the repository root, where the code host looks for it.

    ``goldens`` is relative to the project root, which is not the repository's when the
    project lives in a subdirectory (the Action's ``working-directory``, a GitLab job's ``cd``).
    """
    if root is None or workspace is None:
        return goldens
    try:
        return (root / goldens).resolve().relative_to(workspace.resolve()).as_posix()
    except (ValueError, OSError):
        return goldens
