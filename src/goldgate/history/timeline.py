"""The blessed timeline: every version of the baseline file in its git history.

Every bless is a commit of the baseline file, so the scores the team accepted, and when, need
no store: ``git log`` lists the commits that changed the file and one ``git cat-file
--batch`` process reads every version. Only each suite's metric entries are read (not the
per-example statistics, which a long history would make slow to validate).
"""

from __future__ import annotations

import json
import math
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from goldgate.io.git import FileCommit, GitFailed, file_log, repo_path


@dataclass(frozen=True)
class BlessedScore:
    """One metric of one suite as blessed."""

    score: float
    signature: str


@dataclass(frozen=True)
class Bless:
    """One commit of the baseline file and the scores it holds."""

    commit: str
    date: str
    subject: str
    #: (suite, metric) -> score
    scores: dict[tuple[str, str], BlessedScore] = field(default_factory=dict)


def blessed_timeline(
    root: Path, baseline: Path, *, ref: str = "HEAD", limit: int | None = None
) -> list[Bless]:
    """Every committed version of ``baseline`` reachable from ``ref``, oldest first.

    ``limit`` reads only the newest N versions. Raises :class:`GitFailed` outside a git work
    tree. A version that is not a readable
    baseline (a damaged commit) is kept with no scores, so the timeline still lines up with
    ``git log``.
    """
    commits = file_log(root, baseline, ref=ref, limit=limit)
    if not commits:
        return []
    relative = repo_path(root, baseline)
    texts = _read_versions(root, [f"{c.commit}:{relative}" for c in commits])
    return [_bless(commit, text) for commit, text in zip(commits, texts, strict=True)]


def _bless(commit: FileCommit, text: str | None) -> Bless:
    bless = Bless(commit.commit, commit.date, commit.subject)
    if text is None:
        return bless
    try:
        document = json.loads(text)
        suites = document["suites"]
        for suite, entry in suites.items():
            for metric, blessed in entry["metrics"].items():
                score = float(blessed["score"])
                if not math.isfinite(score):  # no bless writes one: a damaged version
                    raise ValueError(f"score {score}")
                bless.scores[(suite, metric)] = BlessedScore(score, str(blessed["signature"]))
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        bless.scores.clear()
    return bless


def _read_versions(root: Path, objects: list[str]) -> list[str | None]:
    """The text of each ``REV:PATH`` (None where it is missing), from one git process."""
    try:
        done = subprocess.run(
            ["git", "cat-file", "--batch"],
            cwd=root,
            input="".join(f"{name}\n" for name in objects).encode("utf-8"),
            capture_output=True,
            check=False,
            timeout=300,
        )
    except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
        raise GitFailed(f"git cat-file failed: {exc}") from None
    if done.returncode != 0:
        raise GitFailed(done.stderr.decode("utf-8", "replace").strip() or "git cat-file failed")
    out = done.stdout
    texts: list[str | None] = []
    position = 0
    for _ in objects:
        end = out.index(b"\n", position)
        header = out[position:end].decode("utf-8", "replace").split()
        position = end + 1
        if len(header) < 3 or header[-1] == "missing":
            texts.append(None)
            continue
        size = int(header[2])
        body = out[position : position + size]
        position += size + 1  # the content is followed by a newline
        try:
            texts.append(body.decode("utf-8"))
        except UnicodeDecodeError:
            texts.append(None)
    return texts
