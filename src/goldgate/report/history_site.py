"""The history site: a static directory of pages, one per suite and an index, to publish.

``goldgate history --site DIR`` writes ``index.html`` (every suite, with its runs, blesses,
regressions and flaky examples counted) and one ``suite-NAME.html`` per suite: the history
page's trend charts for that suite's metrics, its blesses, the runs it regressed in, and its
flaky examples. Pages link to each other by relative names, hold their style inline and no
script (the Content Security Policy allows none), and load nothing: the directory works
from ``file://``, GitHub Pages, GitLab Pages or any static host. Each file is replaced
atomically; a suite's page is named from a hash when its name is not plain ASCII, so no
name can reach outside the directory.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path

from goldgate._version import __version__
from goldgate.history.query import HistoryView
from goldgate.history.timeline import Bless
from goldgate.io.atomic import write_text_atomic
from goldgate.report.history_page import page_style_and_csp, render_history_page
from goldgate.report.html import environment

INDEX = "index.html"
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,80}")


def page_name(suite: str) -> str:
    """The file name of a suite's page: readable when the name is plain, else hashed."""
    digest = hashlib.sha256(suite.encode("utf-8")).hexdigest()[:12]
    if _PLAIN.fullmatch(suite) and not suite.lower().startswith("index"):
        return f"suite-{suite}.html"
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", suite).strip("-")[:40]
    return f"suite-{slug + '-' if slug else ''}{digest}.html"


@dataclass(frozen=True)
class SuiteLink:
    name: str
    href: str
    current: bool


@dataclass(frozen=True)
class SiteContext:
    """What a suite's page adds to the history page: navigation, blesses, regressions."""

    index: str
    suites: tuple[SuiteLink, ...]
    blesses: tuple[dict[str, str], ...]
    regressions: tuple[dict[str, str], ...]


def suites_of(view: HistoryView) -> list[str]:
    """Every suite in the runs, the blesses or the flaky examples, in the order first seen."""
    names = [row.suite for row in view.rows]
    names += [suite for bless in view.blessed for suite, _ in bless.scores]
    names += [item.suite for item in view.flaky]
    return list(dict.fromkeys(names))


def suite_view(view: HistoryView, suite: str) -> HistoryView:
    """The part of ``view`` that concerns one suite."""
    blessed = [
        replace(bless, scores={k: v for k, v in bless.scores.items() if k[0] == suite})
        for bless in view.blessed
    ]
    return HistoryView(
        rows=[row for row in view.rows if row.suite == suite],
        blessed=[bless for bless in blessed if bless.scores],
        flaky=[item for item in view.flaky if item.suite == suite],
        warnings=list(view.warnings),
        title=f"goldgate history: {suite}",
    )


def _bless_rows(blessed: list[Bless]) -> tuple[dict[str, str], ...]:
    """A bless per row, newest first, with the scores that changed at it."""
    rows = []
    before: dict[tuple[str, str], float] = {}
    for bless in blessed:
        changed = {k: v.score for k, v in bless.scores.items() if before.get(k) != v.score}
        before.update({k: v.score for k, v in bless.scores.items()})
        if not changed:
            continue
        rows.append(
            {
                "date": bless.date[:19],
                "commit": bless.commit[:10],
                "subject": bless.subject,
                "scores": ", ".join(
                    f"{metric} {score:.2f}" for (_, metric), score in changed.items()
                ),
            }
        )
    return tuple(reversed(rows))


def _regression_rows(view: HistoryView) -> tuple[dict[str, str], ...]:
    rows = [
        {
            "when": row.created_at,
            "commit": (row.commit or "-")[:10] + ("+" if row.dirty else ""),
            "branch": row.branch or "-",
            "metric": row.metric,
            "score": f"{row.score:.2f}",
            "baseline": "-" if row.baseline is None else f"{row.baseline:.2f}",
            "message": row.message or "",
        }
        for row in view.rows
        if row.status == "fail"
    ]
    return tuple(reversed(rows))


def render_site(view: HistoryView) -> dict[str, str]:
    """File name -> HTML of every page of the site."""
    suites = suites_of(view)
    names = {suite: page_name(suite) for suite in suites}
    pages: dict[str, str] = {}
    index_rows = []
    for suite in suites:
        part = suite_view(view, suite)
        context = SiteContext(
            index=INDEX,
            suites=tuple(SuiteLink(s, names[s], s == suite) for s in suites),
            blesses=_bless_rows(part.blessed),
            regressions=_regression_rows(part),
        )
        pages[names[suite]] = render_history_page(part, site=context)
        runs = sorted({row.run_id for row in part.rows})
        index_rows.append(
            {
                "name": suite,
                "href": names[suite],
                "metrics": ", ".join(dict.fromkeys(row.metric for row in part.rows))
                or ", ".join(dict.fromkeys(m for b in part.blessed for _, m in b.scores)),
                "runs": str(len(runs)),
                "blesses": str(len(context.blesses)),
                "regressions": str(len({r["when"] for r in context.regressions})),
                "flaky": str(len(part.flaky)),
                "latest": _latest(part),
            }
        )
    style, csp = page_style_and_csp()
    pages[INDEX] = (
        environment()
        .get_template("history_index.html.j2")
        .render(
            title=view.title,
            style=style,
            csp=csp,
            suites=index_rows,
            n_runs=len({row.run_id for row in view.rows}),
            n_blesses=len(view.blessed),
            warnings=view.warnings,
            version=__version__,
        )
    )
    return pages


def _latest(view: HistoryView) -> str:
    if not view.rows:
        return "-"
    last = max(view.rows, key=lambda row: (row.created_at, row.run_id))
    verdicts = {row.verdict for row in view.rows if row.run_id == last.run_id}
    return f"{last.created_at} ({', '.join(sorted(verdicts))})"


def write_history_site(view: HistoryView, directory: Path) -> list[Path]:
    """Write every page into ``directory`` (created if need be), each atomically; returns them.

    Everything is rendered before anything is written, so a rendering error leaves the
    directory as it was.
    """
    pages = render_site(view)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, html in pages.items():
        path = directory / name
        write_text_atomic(path, html)
        paths.append(path)
    return paths
