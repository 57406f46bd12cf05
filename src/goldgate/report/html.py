"""The HTML report: one self-contained file with inline SVG charts and an example table.

The page loads nothing: CSS and JavaScript are inlined through Jinja2 includes and a Content
Security Policy allows only those two blocks (by hash), so even a text that escaped escaping
could neither run nor fetch. Jinja2 autoescapes every value; the examples travel as JSON in a
``<script type="application/json">`` with ``< > &`` escaped, and the script writes them with
``textContent`` only.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
from markupsafe import Markup, escape

from goldgate.model.example_table import example_table
from goldgate.model.result import RunResult, SuiteResult
from goldgate.report.diagnosis_view import change_lines
from goldgate.report.example_view import DIFF_CHARS, example_rows
from goldgate.report.formatting import fmt_delta, round_points
from goldgate.report.ranking import gains
from goldgate.report.selection import (
    EXAMPLES_FILE,
    MAX_REFERENCES,
    TEXT_CHARS,
    Selection,
    select_examples,
)
from goldgate.report.view import MetricRow, ReportView, build_view, slice_rule
from goldgate.terminal.console import escape_controls
from goldgate.wording import plural

TEMPLATES = Path(__file__).with_name("templates")

_JSON_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}
_DIFF_CODES = {"equal": "=", "insert": "+", "delete": "-"}
_NICE_STEPS = (0.5, 1, 2, 5, 10, 20, 25, 50, 100)
HIST_BINS = 10  # per side of zero
# Plain symbols rather than emoji: they render with any font, in print too.
HTML_ICONS = {"pass": "\u2713", "regressed": "\u2717", "improved": "\u2191", "error": "!"}


@cache
def environment() -> jinja2.Environment:
    """The Jinja2 environment of the report templates (autoescaping, strict undefined)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["delta"] = fmt_delta
    # Every value a template writes has its control characters shown escaped, as on the
    # terminal: autoescaping leaves a bidi override (U+202E) raw, and it would reorder the page.
    env.finalize = _shown
    env.filters["inline_code"] = inline_code
    env.globals["plural"] = plural
    return env


def _shown(value: Any) -> Any:
    """A value a template writes, its control characters escaped (``\\u202e``), as on the
    terminal. Markup stays Markup: an escaped control character adds only ``\\`` and letters."""
    if isinstance(value, Markup):
        return Markup(escape_controls(str(value)))
    if isinstance(value, str):
        return escape_controls(value.replace("\r\n", "\n").replace("\r", "\n"))
    return value


def _shown_data(value: Any) -> Any:
    """JSON-ready data with every text (keys too) as :func:`_shown` writes it."""
    if isinstance(value, list):
        return [_shown_data(item) for item in value]
    if isinstance(value, dict):
        return {_shown(key): _shown_data(item) for key, item in value.items()}
    return _shown(value)


def inline_code(text: str) -> Markup:
    """Text whose backtick-quoted parts (``run `goldgate bless` ``) are shown as code.

    Every part is escaped; only the ``<code>`` elements are added.
    """
    parts = re.split(r"`([^`\n]+)`", text)
    out = [
        f"<code>{escape(part)}</code>" if i % 2 else str(escape(part))
        for i, part in enumerate(parts)
    ]
    return Markup("".join(out))


def script_json(value: Any) -> Markup:
    """JSON safe inside a ``<script>`` element: ``< > &`` are written as ``\\u`` escapes."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Markup(text.translate(_JSON_ESCAPES))


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


@dataclass(frozen=True)
class ForestRow:
    """One metric in the delta chart: positions in pixels."""

    metric: str
    label: str
    y: float
    x: float | None
    x_low: float | None
    x_high: float | None
    css: str


@dataclass(frozen=True)
class ForestChart:
    """Every metric's delta with its interval, on one symmetric axis."""

    width: int
    height: int
    left: int
    right: int
    zero: float
    ticks: tuple[tuple[float, str], ...]
    rows: tuple[ForestRow, ...]


@dataclass(frozen=True)
class HistBar:
    """One bin of the per-example delta histogram."""

    x: float
    y: float
    width: float
    height: float
    css: str
    title: str


@dataclass(frozen=True)
class Histogram:
    """The distribution of one metric's per-example changes, baseline against current."""

    metric: str
    width: int
    height: int
    bars: tuple[HistBar, ...]
    span: str
    worse: int
    same: int
    better: int
    max_count: int


def _tick(value: float) -> str:
    """An axis label: ``−5``, ``0``, ``+2.5``."""
    if value == 0:
        return "0"
    return f"{value:+g}".replace("-", "\u2212")


#: The widest axis drawn; beyond it a chart can only say "far off" (and float(int) overflows).
_HUGE = 1e300


def _nice(value: float) -> float:
    for step in _NICE_STEPS:
        if value <= step:
            return step
    if not value < _HUGE:  # a custom metric's 1e308 (or an infinite delta): no nicer axis
        return _HUGE
    return float(math.ceil(value / 100) * 100)


def forest_chart(rows: tuple[MetricRow, ...]) -> ForestChart | None:
    """Lay out the delta chart of a suite's metrics; None when nothing has a baseline."""
    rows = tuple(r for r in rows if r.delta_value is not None)
    if not rows:
        return None
    extent = max(abs(v) for r in rows for v in (r.delta_value, r.low, r.high) if v is not None)
    span = _nice(max(extent * 1.1, 0.5))
    width, left, right, row_h, top = 560, 120, 80, 30, 26
    plot = width - left - right
    height = top + row_h * len(rows) + 8

    def x_of(v: float) -> float:
        return round(left + (v + span) / (2 * span) * plot, 2)

    out = []
    for i, r in enumerate(rows):
        css = f"{r.direction} {r.status.value if r.status else 'ungated'}"
        out.append(
            ForestRow(
                metric=r.metric,
                label=r.delta,
                y=top + row_h * i + row_h / 2,
                x=None if r.delta_value is None else x_of(r.delta_value),
                x_low=None if r.low is None else x_of(r.low),
                x_high=None if r.high is None else x_of(r.high),
                css=css,
            )
        )
    ticks = tuple((x_of(v), _tick(v)) for v in (-span, -span / 2, 0.0, span / 2, span))
    return ForestChart(width, height, left, right, x_of(0.0), ticks, tuple(out))


def histograms(suite: SuiteResult) -> tuple[Histogram, ...]:
    """One histogram of per-example deltas per metric of the suite."""
    out = []
    table = example_table(suite.examples)
    for summary in suite.metrics:
        # from the score columns, without a row per example: NaN where a score is absent
        now, then = table.current(summary.metric), table.baseline(summary.metric)
        paired = ~np.isnan(now) & ~np.isnan(then)
        deltas = [round_points(d) for d in gains(now[paired], then[paired], True).tolist()]
        if deltas:
            out.append(_histogram(summary.metric, deltas, summary.higher_is_better))
    return tuple(out)


def _histogram(metric: str, deltas: list[float], higher_is_better: bool = True) -> Histogram:
    """Bars on the delta's own axis; colours and the worse/better counts follow the direction."""
    span = _nice(max(abs(d) for d in deltas) or 1.0)
    step = span / HIST_BINS
    neg = [0] * HIST_BINS
    pos = [0] * HIST_BINS
    same = 0
    for d in deltas:
        if d == 0:
            same += 1
            continue
        k = int(min(HIST_BINS - 1, abs(d) / step))  # min first: abs(d) may be infinite
        (neg if d < 0 else pos)[k] += 1
    width, height, base, gap = 300, 110, 92, 2
    n_cols = 2 * HIST_BINS + 1
    col = width / n_cols
    # The negative side is worse for BLEU, better for TER.
    below, above = ("down", "up") if higher_is_better else ("up", "down")
    counts = [*reversed(neg), same, *pos]
    peak = max(counts) or 1
    bars = []
    for i, count in enumerate(counts):
        if not count:
            continue
        h = max(1.5, round((base - 8) * math.sqrt(count / peak), 2))
        if i < HIST_BINS:
            k = HIST_BINS - 1 - i
            lo, hi = -(k + 1) * step, -k * step
            css, title = (
                below,
                f"{plural(count, 'example')} changed by {fmt_delta(lo)} to {fmt_delta(hi)}",
            )
        elif i == HIST_BINS:
            css, title = "flat", f"{plural(count, 'example')} unchanged"
        else:
            k = i - HIST_BINS - 1
            lo, hi = k * step, (k + 1) * step
            css, title = (
                above,
                f"{plural(count, 'example')} changed by {fmt_delta(lo)} to {fmt_delta(hi)}",
            )
        bars.append(
            HistBar(
                x=round(i * col + gap / 2, 2),
                y=round(base - h, 2),
                width=round(col - gap, 2),
                height=h,
                css=css,
                title=title,
            )
        )
    return Histogram(
        metric=metric,
        width=width,
        height=height,
        bars=tuple(bars),
        span=_tick(span),
        worse=sum(neg) if higher_is_better else sum(pos),
        same=same,
        better=sum(pos) if higher_is_better else sum(neg),
        max_count=peak,
    )


def _text(text: str) -> str | list[Any]:
    """A text for the page: as is, or ``[first TEXT_CHARS characters, full length]``."""
    if len(text) <= TEXT_CHARS:
        return text
    return [text[:TEXT_CHARS], len(text)]


def example_data(result: RunResult, selection: Selection | None = None) -> dict[str, Any]:
    """The examples (those ``selection`` keeps) as compact JSON-ready data for the script."""
    selection = selection or select_examples(result)
    suites = [s.name for s in result.suites]
    suite_index = {name: i for i, name in enumerate(suites)}
    metrics: list[str] = []
    metric_index: dict[str, int] = {}
    tags: list[str] = sorted({t for _, kept in selection.suites for ex in kept for t in ex.tags})
    tag_index = {t: i for i, t in enumerate(tags)}
    categories: list[str] = []
    category_index: dict[str, int] = {}
    rows = []
    for row in example_rows(result, selection.suites):
        cells = []
        for cell in row.scores:
            if cell.metric not in metric_index:
                metric_index[cell.metric] = len(metrics)
                metrics.append(cell.metric)
            cells.append([metric_index[cell.metric], cell.baseline, cell.current, cell.flip])
        ops: list[list[str]] = []
        for op in row.diff:
            item = [_DIFF_CODES[op.kind], op.text]
            if op.old is not None:
                item.append(op.old)
            ops.append(item)
        flags = (1 if row.regressed else 0) | (2 if row.improved else 0) | (4 if row.new else 0)
        if row.baseline_output is None:
            flags |= 8
        entry: dict[str, Any] = {
            "s": suite_index[row.suite],
            "i": row.id,
            "a": row.anchor,
            "l": row.line,
            "t": [tag_index[t] for t in row.tags],
            "r": [_text(ref) for ref in row.references[:MAX_REFERENCES]],
            "d": ops,
            "m": cells,
            "w": -1 if row.worst is None else metric_index[row.worst.metric],
            "f": flags,
        }
        if len(row.references) > MAX_REFERENCES:
            entry["R"] = len(row.references)
        if row.input is not None:
            entry["n"] = _text(row.input)
        # Full lengths of outputs the diff was cut from: [current, baseline].
        lengths = [len(row.output), len(row.baseline_output or "")]
        if max(lengths) > DIFF_CHARS:
            entry["o"] = lengths
        if row.notes:  # a judge's rationale per metric (the judge keeps it short)
            entry["j"] = [list(note) for note in row.notes]
        if row.categories:  # the failure modes of its current output; "C": the new ones
            for name in row.categories:
                if name not in category_index:
                    category_index[name] = len(categories)
                    categories.append(name)
            entry["c"] = [category_index[name] for name in row.categories]
            if row.new_categories:
                entry["C"] = [category_index[name] for name in row.new_categories]
        rows.append(entry)
    lower = {m.metric for s in result.suites for m in s.metrics if not m.higher_is_better}
    data: dict[str, Any] = {
        "suites": suites,
        "metrics": metrics,
        "tags": tags,
        "categories": categories,
        "rows": rows,
    }
    # Metrics where lower is better (TER): the script colours, filters and sorts by worsening.
    data["lower"] = [i for i, name in enumerate(metrics) if name in lower]
    data["total"] = selection.total
    data["file"] = EXAMPLES_FILE
    # The script writes texts with textContent, which leaves a bidi override raw.
    return dict(_shown_data(data))


def render_html(result: RunResult) -> str:
    """Render the self-contained HTML report."""
    env = environment()
    view: ReportView = build_view(result)
    selection = select_examples(result)
    script = env.get_template("script.js.j2").render()
    style = env.get_template("style.css.j2").render()
    charts = {}
    for suite, sv in zip(result.suites, view.suites, strict=True):
        hists = histograms(suite)
        # A metric whose every example scored as at the baseline needs no chart, only a word.
        moved = tuple(h for h in hists if h.worse or h.better)
        still = tuple(h.metric for h in hists if not (h.worse or h.better))
        charts[suite.name] = (forest_chart(sv.metrics), moved, still)
    csp = (
        "default-src 'none'; "
        f"script-src {_csp_hash(script)}; style-src {_csp_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return env.get_template("report.html.j2").render(
        view=view,
        charts=charts,
        data=script_json(example_data(result, selection)),
        selection=selection,
        csp=csp,
        icons=HTML_ICONS,
        slice_rule=slice_rule(),
        # what changed, versions included (the Markdown leaves them to result.json)
        why_changes={
            suite.name: change_lines(suite.diagnosis.changes) if suite.diagnosis else ()
            for suite in result.suites
        },
    )
