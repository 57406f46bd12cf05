"""Git, read-only: the state of the work tree and the history of one file.

Every call runs ``git`` as a subprocess (argument lists, never a shell). Problems are
:class:`GitFailed`; callers decide whether a missing git is an error or merely unknown.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


class GitFailed(Exception):
    """git is missing, timed out or refused (the message says which)."""


def git(cwd: Path, *args: str) -> str:
    """The standard output of ``git ARGS`` run in ``cwd``; ``GitFailed`` otherwise."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False, timeout=60)
    except FileNotFoundError:
        raise GitFailed("git is not installed") from None
    except NotADirectoryError:
        raise GitFailed(f"{cwd} is not a directory") from None
    except subprocess.TimeoutExpired:
        raise GitFailed(f"git {args[0]} timed out") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        message = detail[-1] if detail else f"git {args[0]} exited with {done.returncode}"
        if args[:2] == ("rev-parse", "--verify"):
            message = f"unknown git revision {args[-1].removesuffix('^{commit}')!r}"
        raise GitFailed(message)
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GitFailed(f"output of git {args[0]} is not UTF-8 (byte {exc.start})") from None


@dataclass(frozen=True)
class WorkTree:
    """Where the code stands: commit, branch, uncommitted changes, the commit's subject."""

    commit: str | None = None
    branch: str | None = None
    dirty: bool = False
    message: str | None = None


def work_tree(root: Path) -> WorkTree:
    """The git state of ``root``; every field unknown (None) outside a git work tree."""
    try:
        commit = git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
    except GitFailed:
        return WorkTree()
    try:
        branch: str | None = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    except GitFailed:
        branch = None
    if branch == "HEAD":  # detached, as in CI: the branch CI checked out, when it says so
        branch = None
    try:
        dirty = bool(git(root, "status", "--porcelain", "--untracked-files=no").strip())
    except GitFailed:
        dirty = False
    try:
        message = git(root, "log", "-1", "--format=%s", commit).strip()
    except GitFailed:
        message = None
    return WorkTree(commit=commit, branch=branch, dirty=dirty, message=message)


@dataclass(frozen=True)
class FileCommit:
    """One commit that changed a file."""

    commit: str
    #: committer date, ISO 8601 strict
    date: str
    subject: str


def file_log(
    root: Path, path: Path, *, ref: str = "HEAD", limit: int | None = None
) -> list[FileCommit]:
    """The commits reachable from ``ref`` that changed ``path``, oldest first.

    ``limit`` keeps only the newest N. ``--follow`` is not used: a baseline that moved is a
    new timeline (its config changed).
    """
    relative = repo_path(root, path)
    count = [f"--max-count={limit}"] if limit is not None else []
    out = git(root, "log", *count, "--format=%H%x00%cI%x00%s%x1e", ref, "--", relative)
    commits = []
    for entry in out.split("\x1e"):
        entry = entry.strip("\n")
        if not entry:
            continue
        commit, date, subject = entry.split("\x00", 2)
        commits.append(FileCommit(commit, date, subject))
    commits.reverse()
    return commits


def repo_path(root: Path, path: Path) -> str:
    """``path`` relative to the top of the work tree holding ``root`` (for ``REV:PATH``)."""
    toplevel = Path(git(root, "rev-parse", "--show-toplevel").strip())
    full = path if path.is_absolute() else root / path
    try:
        return full.resolve().relative_to(toplevel.resolve()).as_posix()
    except ValueError:
        raise GitFailed(f"{full} is outside the git work tree {toplevel}") from None


def show(root: Path, commit: str, relative: str) -> str:
    """The text of ``relative`` (a repository path) at ``commit``."""
    return git(root, "show", f"{commit}:{relative}")
