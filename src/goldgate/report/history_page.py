"""The history page: one self-contained HTML file of trends, blesses, regressions and flakes.

Per suite and metric an inline SVG plots every recorded run and every bless in time order
(one step per event, so a busy day does not squash the chart): the score as a line, its
confidence band as a shaded area, each bless as a diamond on a dashed step line of blessed
scores, each run the gate failed as a red ring. Hovering a point shows its commit, message,
score and status (an SVG ``<title>``: no script at all, so the page's Content Security Policy
allows none). Below the charts, the examples whose score changed between runs of the same
system while their golden record did not (flaky examples). A band is cut to the series' range.

Every text from the history (commit messages, branch names, example ids) is autoescaped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from goldgate._version import __version__
from goldgate.history.query import FlakyExample, HistoryView, score_range, within
from goldgate.io.atomic import write_text_atomic
from goldgate.report.html import _csp_hash, environment

WIDTH = 880
HEIGHT = 230
LEFT = 56
RIGHT = 16
TOP = 14
BOTTOM = 34


@dataclass(frozen=True)
class Point:
    """One plotted event: a recorded run or a bless."""

    x: float
    y: float
    kind: str  # "run" | "bless"
    css: str
    title: str


@dataclass(frozen=True)
class Chart:
    """One suite and metric: geometry ready for the template."""

    suite: str
    metric: str
    runs: int
    blesses: int
    points: tuple[Point, ...]
    line: str  # polyline points of the runs
    blessed_line: str  # step polyline of the blessed score
    bands: tuple[str, ...]  # polygons of the confidence band, one per unbroken stretch
    y_ticks: tuple[tuple[float, str], ...]
    x_labels: tuple[tuple[float, str, str], ...]
    last: str
    regressions: int


@dataclass(frozen=True)
class _Event:
    when: str
    kind: str
    score: float
    low: float | None
    high: float | None
    commit: str | None
    message: str | None
    status: str | None
    branch: str | None


def build_charts(view: HistoryView) -> list[Chart]:
    """One chart per suite and metric found in the runs or the blessed timeline."""
    runs = view.series()
    blessed = view.blessed_trends()
    keys = list(dict.fromkeys([*runs, *blessed]))
    # each suite's metrics first, then the failure-mode counts the diagnosis recorded
    suites = list(dict.fromkeys(suite for suite, _ in keys))
    keys.sort(key=lambda key: (suites.index(key[0]), key[1].startswith("category:")))
    charts = []
    for suite, metric in keys:
        events = [
            _Event(
                row.created_at,
                "run",
                row.score,
                row.low,
                row.high,
                row.commit,
                row.message,
                row.status or row.verdict,
                row.branch,
            )
            for row in runs.get((suite, metric), [])
        ]
        events += [
            _Event(_utc(p.date), "bless", p.score, None, None, p.commit, p.subject, "blessed", None)
            for p in blessed.get((suite, metric), [])
        ]
        events.sort(key=lambda e: (e.when, e.kind != "bless"))
        if metric.startswith("category:") and not any(e.score for e in events):
            continue  # a failure mode no recorded run ever had: no chart of zeros
        charts.append(_chart(suite, metric, events))
    return charts


def _utc(date: str) -> str:
    from datetime import UTC, datetime

    return datetime.fromisoformat(date).astimezone(UTC).isoformat(timespec="seconds")


def _chart(suite: str, metric: str, events: list[_Event]) -> Chart:
    bounds = score_range(e.score for e in events)
    # the band, baseline + the difference's interval, can pass the metric's range (above
    # 100): it is cut there, in the drawing and in the hover text alike
    events = [replace(e, low=within(e.low, bounds), high=within(e.high, bounds)) for e in events]
    values = [e.score for e in events]
    values += [v for e in events for v in (e.low, e.high) if v is not None]
    low, high = min(values), max(values)
    pad = max((high - low) * 0.08, 0.5)
    low, high = low - pad, high + pad
    step = _nice_step((high - low) / 4)
    low = math.floor(low / step) * step
    high = math.ceil(high / step) * step
    low, high = max(low, bounds[0]), min(high, bounds[1])  # no axis beyond the range
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM

    def x_of(index: int) -> float:
        if len(events) == 1:
            return LEFT + plot_w / 2
        return round(LEFT + plot_w * index / (len(events) - 1), 1)

    def y_of(value: float) -> float:
        value = min(max(value, low), high)  # a band past the axis is cut at its end
        return round(TOP + plot_h * (high - value) / (high - low), 1)

    points = []
    line = []
    bands: list[str] = []
    stretch: list[tuple[float, float, float]] = []
    blessed_steps: list[str] = []
    for index, event in enumerate(events):
        x, y = x_of(index), y_of(event.score)
        if event.kind == "run":
            line.append(f"{x},{y}")
            if event.low is not None and event.high is not None:
                stretch.append((x, y_of(event.low), y_of(event.high)))
            else:
                bands += _band(stretch)
                stretch = []
            css = "fail" if event.status == "fail" else "run"
        else:
            if blessed_steps:
                previous_y = blessed_steps[-1].split(",")[1]
                blessed_steps.append(f"{x},{previous_y}")
            blessed_steps.append(f"{x},{y}")
            css = "bless"
        points.append(Point(x, y, event.kind, css, _title(event)))
    bands += _band(stretch)
    if blessed_steps:  # the blessed score holds until the end of the chart
        blessed_steps.append(f"{x_of(len(events) - 1)},{blessed_steps[-1].split(',')[1]}")
    ticks = []
    value = math.ceil(low / step) * step
    while value <= high + 1e-9:
        ticks.append((y_of(value), f"{value:g}"))
        value += step
    labels = _x_labels(events, x_of)
    last = events[-1]
    return Chart(
        suite=suite,
        metric=metric,
        runs=sum(e.kind == "run" for e in events),
        blesses=sum(e.kind == "bless" for e in events),
        points=tuple(points),
        line=" ".join(line),
        blessed_line=" ".join(blessed_steps),
        bands=tuple(bands),
        y_ticks=tuple(ticks),
        x_labels=labels,
        last=f"{last.score:.2f}",
        regressions=sum(e.status == "fail" for e in events),
    )


def _band(stretch: list[tuple[float, float, float]]) -> list[str]:
    if not stretch:
        return []
    if len(stretch) == 1:  # a lone interval: a narrow box around the point
        x, lo, hi = stretch[0]
        stretch = [(x - 3, lo, hi), (x + 3, lo, hi)]
    upper = [f"{x},{hi}" for x, _, hi in stretch]
    lower = [f"{x},{lo}" for x, lo, _ in reversed(stretch)]
    return [" ".join(upper + lower)]


def _x_labels(events: list[_Event], x_of: object) -> tuple[tuple[float, str, str], ...]:
    """Up to six labels along the time axis: dates, or times when every event is on one day."""
    assert callable(x_of)
    count = len(events)
    wanted = min(count, 6)
    indices = sorted({round(i * (count - 1) / max(wanted - 1, 1)) for i in range(wanted)})
    one_day = len({e.when[:10] for e in events}) == 1
    labels = []
    for position, i in enumerate(indices):
        text = events[i].when[11:16] if one_day else events[i].when[:10]
        anchor = "start" if position == 0 else "end" if position == len(indices) - 1 else "middle"
        labels.append((x_of(i), text, anchor if count > 1 else "middle"))
    return tuple(labels)


def _title(event: _Event) -> str:
    what = "bless" if event.kind == "bless" else "run"
    parts = [f"{what} {event.when}"]
    if event.commit:
        parts.append(f"commit {event.commit[:10]}")
    if event.branch:
        parts.append(f"branch {event.branch}")
    score = f"score {event.score:.2f}"
    if event.low is not None and event.high is not None:
        score += f" [{event.low:.2f}, {event.high:.2f}]"
    parts.append(score)
    if event.status and event.kind == "run":
        parts.append(f"gate: {event.status}")
    if event.message:
        parts.append(event.message)
    return "\n".join(parts)


def _nice_step(raw: float) -> float:
    if raw <= 0:
        return 1.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude  # pragma: no cover - the loop ends at 10


def flaky_rows(flaky: list[FlakyExample]) -> list[dict[str, object]]:
    """Display rows of the flaky examples."""
    return [
        {
            "suite": f.suite,
            "metric": f.metric,
            "id": f.id,
            "flips": f.flips,
            "runs": f.runs,
            "scores": " ".join(f"{s:g}" for s in f.scores[-12:]),
        }
        for f in flaky
    ]


def page_style_and_csp() -> tuple[str, str]:
    """The history pages' stylesheet and the Content Security Policy that allows it alone."""
    env = environment()
    style = env.get_template("style.css.j2").render() + env.get_template("history.css.j2").render()
    csp = (
        "default-src 'none'; script-src 'none'; "
        f"style-src {_csp_hash(style)}; img-src data:; base-uri 'none'; form-action 'none'"
    )
    return style, csp


def render_history_page(view: HistoryView, **site: object) -> str:
    """The page's HTML; ``site`` adds the history site's navigation and sections."""
    env = environment()
    style, csp = page_style_and_csp()
    charts = build_charts(view)
    return env.get_template("history.html.j2").render(
        **site,
        title=view.title,
        style=style,
        csp=csp,
        charts=charts,
        flaky=flaky_rows(view.flaky),
        n_runs=len({row.run_id for row in view.rows}),
        n_blesses=len(view.blessed),
        warnings=view.warnings,
        version=__version__,
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        right=WIDTH - RIGHT,
        bottom=HEIGHT - BOTTOM,
        top=TOP,
    )


def write_history_page(view: HistoryView, path: Path) -> Path:
    """Write the page atomically; returns its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, render_history_page(view))
    return path
