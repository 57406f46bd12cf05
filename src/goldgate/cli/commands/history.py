"""``goldgate history``: recorded runs per suite and metric, and the blessed timeline."""

from __future__ import annotations

import argparse
import io
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

from goldgate.cli.commands._common import add_config_argument, load, number, table
from goldgate.errors import UsageError
from goldgate.terminal import console
from goldgate.wording import plural

HELP = "Show recorded runs per suite and metric and the blessed timeline (table, JSON, HTML)."

_RELATIVE = re.compile(r"^(\d{1,9})([dhw])$")
#: ``--last`` at most: more runs per suite and metric than any store keeps, and sqlite's
#: integers end at 2**63
MAX_LAST = 1_000_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``goldgate history``."""
    add_config_argument(parser)
    parser.add_argument(
        "--suite", dest="suites", action="append", metavar="NAME", help="only this suite (repeat)"
    )
    parser.add_argument(
        "--metric", dest="metrics", action="append", metavar="NAME", help="only this metric"
    )
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help="only runs since WHEN: a date (2026-11-30), a UTC time (2026-11-30T12:00) or an age"
        " (7d, 12h, 2w)",
    )
    parser.add_argument("--branch", metavar="NAME", help="only runs on this branch")
    parser.add_argument(
        "--last",
        type=int,
        default=10,
        metavar="N",
        help="the last N runs per suite and metric (default 10; 0 for all)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--export-last",
        action="store_true",
        help="print the newest recorded run as one JSON line (what the Action appends to its"
        " history branch)",
    )
    parser.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="write a self-contained HTML page: trends with intervals, blesses, regressions,"
        " flaky examples",
    )
    parser.add_argument(
        "--from",
        dest="exported",
        type=Path,
        metavar="FILE",
        help="read the runs from FILE, lines that --export-last printed (a history branch's"
        " goldgate-history.jsonl), instead of the local store",
    )
    parser.add_argument(
        "--site",
        type=Path,
        metavar="DIR",
        help="write a static site to publish (GitHub or GitLab Pages, any static host):"
        " index.html and one page per suite",
    )


def parse_since(text: str, *, now: datetime | None = None) -> str:
    """A ``--since`` value → the ISO 8601 UTC prefix recorded times are compared with."""
    now = datetime.now(UTC) if now is None else now
    match = _RELATIVE.match(text.strip())
    try:
        if match:
            amount, unit = int(match.group(1)), match.group(2)
            delta = {"d": timedelta(days=amount), "h": timedelta(hours=amount)}.get(
                unit, timedelta(weeks=amount)
            )
            return (now - delta).isoformat(timespec="seconds")
        moment = datetime.fromisoformat(text.strip())
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat(timespec="seconds")
    except OverflowError:
        # an age before the year 1 (999999999d), or a time zone that moves a date past the
        # year 1 or 9999: datetime cannot say the moment
        raise UsageError(f"--since {text!r}: outside the years 1 to 9999") from None
    except ValueError:
        raise UsageError(
            f"--since {text!r}: expected a date (2026-11-30), a time (2026-11-30T12:00) or an"
            " age (7d, 12h, 2w)"
        ) from None


def run(args: argparse.Namespace) -> int:
    """Print (or write) the history; 0, or 2 on a usage or input error."""
    from goldgate.history.query import load_history

    if not 0 <= args.last <= MAX_LAST:
        raise UsageError(f"--last {args.last}: expected 0 (all) to {MAX_LAST:,}")
    since = parse_since(args.since) if args.since else None
    config = load(args)
    if args.export_last:
        from goldgate.history.query import last_run_line

        line, warnings = last_run_line(config)
        for warning in warnings:
            console.err(f"goldgate: {console.inline(warning)}")
        if line is not None:
            console.out(console.json_text(line))
        return 0
    view = load_history(
        config,
        suites=args.suites or (),
        metrics=args.metrics or (),
        since=since,
        branch=args.branch,
        last=args.last or None,
        exported=args.exported,
    )
    for warning in view.warnings:
        console.err(f"goldgate: {console.inline(warning)}")
    if args.site is not None:
        from goldgate.report.history_site import INDEX, write_history_site

        directory = args.site if args.site.is_absolute() else Path.cwd() / args.site
        if directory.exists() and not directory.is_dir():
            raise UsageError(f"{directory}: --site names a directory")
        try:
            paths = write_history_site(view, directory)
        except OSError as exc:
            raise UsageError(f"{directory}: cannot write the site: {exc.strerror or exc}") from None
        pages = plural(len(paths), "page")
        console.out(f"history site: {console.inline(str(directory / INDEX))} ({pages})")
        if args.html is None:
            return 0
    if args.html is not None:
        from goldgate.report.history_page import write_history_page

        path = args.html if args.html.is_absolute() else Path.cwd() / args.html
        try:
            write_history_page(view, path)
        except OSError as exc:
            raise UsageError(f"{path}: cannot write the page: {exc.strerror or exc}") from None
        console.out(f"history page: {console.inline(str(path))}")
        return 0
    if args.json:
        buffer = io.StringIO()
        write_json(view, buffer)
        console.out(console.json_text(buffer.getvalue()), end="")
        return 0
    console.out(render_table(view))
    return 0


def write_json(view: object, out: TextIO) -> None:
    """``{"runs": [...], "blessed": [...], "flaky": [...]}``, one item a line.

    Each item is encoded on its own line by json's C encoder: an indented document goes
    through the pure-Python encoder, which takes seconds over 60,000 rows.
    """
    from goldgate.history.query import HistoryView, finite_or_none

    assert isinstance(view, HistoryView)
    blessed = [
        {
            "commit": bless.commit,
            "date": bless.date,
            "subject": bless.subject,
            "scores": [
                {"suite": s, "metric": m, "score": v.score, "signature": v.signature}
                for (s, m), v in bless.scores.items()
            ],
        }
        for bless in view.blessed
    ]
    sections = {
        "runs": [row.__dict__ for row in view.rows],
        "blessed": blessed,
        "flaky": [{**item.__dict__, "scores": finite_or_none(item.scores)} for item in view.flaky],
    }
    out.write("{")
    for position, (name, items) in enumerate(sections.items()):
        out.write(",\n" if position else "\n")
        out.write(f'"{name}": [')
        # the rows read are finite (the store sets others aside), the flaky scores' NaN are
        # null: allow_nan=False keeps ``NaN`` and ``Infinity``, which JSON lacks, out for good
        body = ",\n  ".join(json.dumps(item, ensure_ascii=False, allow_nan=False) for item in items)
        out.write(f"\n  {body}\n]" if items else "]")
    out.write("\n}\n")


def render_table(view: object) -> str:
    """The plain-text tables: per suite and metric, recorded runs, then the blessed trend."""
    from goldgate.history.query import HistoryView, score_range, within

    assert isinstance(view, HistoryView)
    lines: list[str] = []
    if not view.rows and not view.blessed:
        return "no history recorded yet: every `goldgate run` adds to it"
    for (suite, metric), rows in view.series().items():
        lines.append(f"suite {suite}, metric {metric}: last {plural(len(rows), 'run')}")
        header = ["when", "commit", "branch", "score", "interval", "baseline", "status"]
        bounds = score_range(row.score for row in rows)  # the band cut to it, as on the page
        body = [
            [
                row.created_at,
                (row.commit or "-")[:8] + ("+" if row.dirty else ""),
                console.inline(row.branch or "-"),
                number(row.score),
                _interval(within(row.low, bounds), within(row.high, bounds)),
                number(row.baseline),
                row.status or row.verdict,
            ]
            for row in rows
        ]
        lines.append(table(header, body))
        lines.append("")
    trends = view.blessed_trends()
    if trends:
        lines.append(f"blessed timeline ({plural(len(view.blessed), 'bless')} in git):")
        for (suite, metric), points in trends.items():
            shown = " → ".join(f"{p.score:.2f}" for p in points[-8:])
            more = "… → " if len(points) > 8 else ""
            lines.append(f"  {suite} {metric}: {more}{shown}")
    return "\n".join(lines).rstrip()


def _interval(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"[{low:.2f}, {high:.2f}]"
