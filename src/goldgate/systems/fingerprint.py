"""The fingerprint of the code a system runs, so the cache never serves another code's outputs.

In a git work tree it is HEAD plus a hash of every uncommitted change, tracked and untracked
(``git status`` respects ``.gitignore``), leaving out goldgate's own files (configuration,
golden sets, baseline, reports, cache), whose edits do not change the system. Outside git it
is the modification times and sizes of the command's own files: the arguments that name a
file, and the module behind ``-m``. The changed paths are kept (capped), so a changed
fingerprint can say what changed. A changed file is hashed in blocks; one that is not a regular
file (a link to ``/dev/zero`` or a FIFO) is never read, only marked by its kind.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from goldgate.errors import GoldgateError, first_of
from goldgate.io.inputs import open_regular

#: changed paths remembered per fingerprint, to name them when it changes
MAX_PATHS = 20
_GIT_TIMEOUT_S = 60
#: how much of a changed file is held at once while it is hashed
_BLOCK_BYTES = 1 << 20


def code_fingerprint(
    root: Path, *, argv: Sequence[str] = (), exclude: Iterable[Path] = ()
) -> dict[str, Any]:
    """The fingerprint of the code under ``root`` (a directory in or out of a git work tree)."""
    in_git = _git_fingerprint(root, [p.resolve() for p in exclude])
    if in_git is not None:
        return in_git
    return _file_fingerprint(root, argv)


def fingerprint_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """Why two fingerprints differ, in words (empty when they do not)."""
    if old == new:
        return ""
    if "git_head" in old and "git_head" in new:
        if old["git_head"] != new["git_head"]:
            return f"git HEAD moved from {old['git_head'][:12]} to {new['git_head'][:12]}"
        changed = sorted(set(old.get("paths", [])) ^ set(new.get("paths", [])))
        if not changed:  # the same files changed, with other contents
            changed = sorted(set(new.get("paths", [])))
        return "uncommitted changes differ" + _naming(changed)
    if "files" in old and "files" in new:
        before, after = old["files"], new["files"]
        changed = sorted(k for k in {*before, *after} if before.get(k) != after.get(k))
        return "the command's files changed" + _naming(changed)
    return "the code moved in or out of a git work tree"


def _naming(paths: Sequence[str]) -> str:
    if not paths:
        return ""
    return f" ({first_of(paths, 5)})"


def _git(root: Path, *args: str) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, check=False, timeout=_GIT_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _git_fingerprint(root: Path, exclude: Sequence[Path]) -> dict[str, Any] | None:
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    toplevel = Path(top.decode("utf-8", "surrogateescape").strip())
    head_out = _git(root, "rev-parse", "--verify", "--quiet", "HEAD")
    head = head_out.decode("ascii", "replace").strip() if head_out else "(no commit)"
    status = _git(
        toplevel, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"
    )
    if status is None:
        return None
    digest = hashlib.sha256()
    paths: list[str] = []
    for entry in status.split(b"\0"):
        if len(entry) < 4:
            continue
        relative = entry[3:].decode("utf-8", "surrogateescape")
        path = toplevel / relative
        if _excluded(path.resolve(), exclude):
            continue
        paths.append(relative)
        digest.update(entry[3:] + b"\0")
        digest.update(_content_digest(path))
    paths.sort()
    return {"git_head": head, "worktree": digest.hexdigest()[:32], "paths": paths[:MAX_PATHS]}


class _NotRegular(GoldgateError):
    """A changed path that is not a regular file: hashed by what it is, never read."""


def _content_digest(path: Path) -> bytes:
    """The sha256 of a changed file's bytes, read in blocks (an untracked file may be a
    model's gigabytes). What is not a regular file is never read: a submodule (a directory),
    a link to ``/dev/zero`` (endless) or to a FIFO (blocks) is marked by its kind."""
    try:
        with open_regular(path, _NotRegular, what="file", limit=sys.maxsize) as handle:
            digest = hashlib.sha256()
            while block := handle.read(_BLOCK_BYTES):
                digest.update(block)
            return digest.digest()
    except FileNotFoundError:  # deleted, or a link to nowhere
        return b"deleted"
    except _NotRegular as exc:  # its kind: "a directory", "a character device", ...
        return str(exc).encode("utf-8", "surrogateescape")
    except OSError as exc:  # a read that failed half-way (EIO): no content to hash
        return f"unreadable: {exc.strerror}".encode("utf-8", "surrogateescape")


def _excluded(path: Path, exclude: Sequence[Path]) -> bool:
    return any(path == item or item in path.parents for item in exclude)


def _file_fingerprint(root: Path, argv: Sequence[str]) -> dict[str, Any]:
    files: dict[str, str] = {}
    for path in _command_files(root, argv):
        try:
            stat = path.stat()
        except OSError:
            continue
        files[path.as_posix()] = f"{stat.st_mtime_ns}:{stat.st_size}"
    return {"files": files}


def _command_files(root: Path, argv: Sequence[str]) -> list[Path]:
    found: list[Path] = []
    if argv:
        program = shutil.which(argv[0], path=None)
        if program is not None:
            found.append(Path(program))
    for index, token in enumerate(argv[1:], start=1):
        if argv[index - 1] == "-m":
            base = root.joinpath(*token.split("."))
            module = base.with_suffix(".py")
            if module.is_file():
                found.append(module)
            elif base.is_dir():
                found += sorted(base.rglob("*.py"))
            continue
        candidate = Path(token) if Path(token).is_absolute() else root / token
        if candidate.is_file():
            found.append(candidate)
    return found
