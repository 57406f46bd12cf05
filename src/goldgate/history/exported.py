"""Runs exported as JSON lines (``history --export-last``), read back as history rows.

The Action's and the GitLab template's history branch keeps one line per run on the default
branch (``goldgate-history.jsonl``); ``goldgate history --from FILE`` reads it in place of
the local store, to draw the history site where no store outlives a job. A line that is not
what goldgate writes is set aside with its reason, as the store's rows are.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from goldgate.errors import InputError
from goldgate.history.store import MAX_ROWS, HistoryRow, checked_row
from goldgate.io.inputs import read_regular

_RUN_FIELDS = ("created_at", "commit", "branch", "dirty", "message", "source", "verdict")
_SCORE_FIELDS = ("suite", "metric", "signature", "score", "low", "high", "baseline", "status")


def _line_rows(number: int, document: object) -> list[HistoryRow] | str:
    if not isinstance(document, dict) or not isinstance(document.get("scores"), list):
        return "not a run goldgate exported"
    run = [document.get(name) for name in _RUN_FIELDS]
    if isinstance(run[3], bool):
        run[3] = int(run[3])
    rows = []
    for score in document["scores"]:
        if not isinstance(score, dict):
            return "a score that is not an object"
        checked = checked_row([number, *run, *(score.get(name) for name in _SCORE_FIELDS)])
        if isinstance(checked, str):
            return checked
        rows.append(checked)
    return rows


def read_exported(
    path: Path,
    *,
    suites: Sequence[str] = (),
    metrics: Sequence[str] = (),
    since: str | None = None,
    branch: str | None = None,
    last: int | None = None,
) -> tuple[list[HistoryRow], list[str]]:
    """The rows of an exported history file, oldest first, filtered as the store's are;
    and a warning per line set aside. A missing or unreadable file is an ``InputError``."""
    try:
        text = read_regular(path, InputError, what="exported history").decode("utf-8", "replace")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    rows: list[HistoryRow] = []
    warnings: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            document = json.loads(line)
        except (ValueError, RecursionError):
            found: list[HistoryRow] | str = "not JSON"
        else:
            found = _line_rows(number, document)
        if isinstance(found, str):
            warnings.append(f"{path.name} line {number} set aside: {found}")
            continue
        rows += found
    rows = [
        row
        for row in rows
        if (not suites or row.suite in suites)
        and (not metrics or row.metric in metrics)
        and (since is None or row.created_at >= since)
        and (branch is None or row.branch == branch)
    ]
    if last is not None:
        kept: dict[tuple[str, str], int] = {}
        newest_first = []
        for row in reversed(rows):
            key = (row.suite, row.metric)
            kept[key] = kept.get(key, 0) + 1
            if kept[key] <= last:
                newest_first.append(row)
        rows = newest_first[::-1]
    if len(rows) > MAX_ROWS:
        warnings.append(f"more than {MAX_ROWS:,} rows: only the newest {MAX_ROWS:,} are read")
        rows = rows[-MAX_ROWS:]
    return rows, warnings
